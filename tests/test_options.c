/* test_options.c — the option parser and the help and man text every command's table
 * makes (src/cli/options.c), on a table of its own with a row of every kind.
 *
 * Each option takes its value as the next argument or after '=', "--" ends the
 * options, "-" is an operand; every malformed argument is an error naming the option
 * as written and what it needs; the help lines and man entries come from the rows.
 * nmt's own tables are checked through the binary (tests/test_options.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli/options.h" // defines: Option, OptionTable, Parsed, options_parse, options_free, options_help, options_man

typedef struct {
    int flag, count, choice, probs;
    long bytes;
    float ratio;
    const char *out;
    StringList sets, models;
} ExampleArgs;

static int check_no_x(const char *value, const char *next, char *why, size_t why_len)
{
    if (!strchr(value, 'x')) return 0;
    snprintf(why, why_len, "--out %s: no x, please (next: %s)", value, next ? next : "none");
    return -1;
}

static const char *const colours[] = {"red", "green", NULL};
static const int colour_values[] = {10, 20};
static const char *const alls[] = {"all", NULL};
static const int all_values[] = {2};

static const Option example_rows[] = {
    {"--flag", OPT_FLAG, OPTION_AT(ExampleArgs, flag), .help = "a flag"},
    {"--count", OPT_INT, OPTION_AT(ExampleArgs, count), .lo = 1, .hi = 9, .metavar = "N", .help = "a count"},
    {"--bytes", OPT_INT, OPTION_AT(ExampleArgs, bytes), .lo = 0, .hi = 5000000000L, .metavar = "N",
     .help = "a long\nover two lines"},
    {"--ratio", OPT_FLOAT, OPTION_AT(ExampleArgs, ratio), .lo = 0, .hi = 2, .word = "avg", .word_value = -1,
     .metavar = "A", .needs = "a number from 0 to 2 or avg", .help = "a ratio"},
    {"--output", OPT_STRING, OPTION_AT(ExampleArgs, out), .alias = "-o", .metavar = "FILE", .check = check_no_x,
     .help = "where"},
    {"--set", OPT_STRINGS, OPTION_AT(ExampleArgs, sets), .metavar = "K=V", .help = "repeatable", .group = 4},
    {"--models", OPT_LIST, OPTION_AT(ExampleArgs, models), .lo = 2, .metavar = "M M ...", .needs = "two or more",
     .help = ".a line starting with a dot"},
    {"--colour", OPT_CHOICE, OPTION_AT(ExampleArgs, choice), .choices = colours, .choice_values = colour_values,
     .metavar = "red|green", .term = "--colour red|green, --probs [all]", .help = "a choice"},
    {"--probs", OPT_CHOICE, OPTION_AT(ExampleArgs, probs), .choices = alls, .choice_values = all_values, .bare = 1},
    OPTION_MORE("--probs all", "a second row"),
};

static const ExampleArgs example_defaults = {.count = 3};

static const OptionTable example = {
    .name = "example",
    .usage = "usage: nmt example [options] FILE ...\n\n",
    OPTION_ROWS(example_rows),
    .column = 12,
    .epilogue = "\nThe end.\n",
    .args_size = sizeof(ExampleArgs),
    .defaults = &example_defaults,
};

/* Parses the words of line (split at spaces) into *a and *p; returns options_parse's
 * status, with its message in err. The caller frees with done(). */
static char words_buf[512];
static char *words[32];
static int parse(const char *line, ExampleArgs *a, Parsed *p, Error *err)
{
    snprintf(words_buf, sizeof words_buf, "%s", line);
    int n = 0;
    for (char *w = strtok(words_buf, " "); w && n < 31; w = strtok(NULL, " "))
        words[n++] = w;
    err->msg[0] = '\0';
    return options_parse(&example, n, words, a, p, err);
}
static void done(ExampleArgs *a, Parsed *p) { options_free(&example, a, p); }

static void test_values(void)
{
    ExampleArgs a;
    Parsed p;
    Error err;
    CHECK(parse("in1 --count 5 --bytes=4000000000 --ratio=0.5 -o out.dat in2", &a, &p, &err) == 0 && a.count == 5 &&
              a.bytes == 4000000000L && a.ratio == 0.5f && !strcmp(a.out, "out.dat") && p.n_operands == 2 &&
              !strcmp(p.operands[0], "in1") && !strcmp(p.operands[1], "in2") && p.operands[2] == NULL,
          "--opt value and --opt=value; an int into a long field; an alias; operands in order");
    done(&a, &p);
    CHECK(parse("--ratio avg --output=o --flag", &a, &p, &err) == 0 && a.ratio == -1 && !strcmp(a.out, "o") &&
              a.flag == 1 && a.count == 3,
          "a float's word; the long name with '='; a flag; a default kept");
    done(&a, &p);
    CHECK(parse("--set a=1 --set=b=2=3 x", &a, &p, &err) == 0 && a.sets.n == 2 && !strcmp(a.sets.v[0], "a=1") &&
              !strcmp(a.sets.v[1], "b=2=3") && p.groups == 4 && p.n_operands == 1,
          "a repeated option, in order; '=' splits at the first; its group given");
    done(&a, &p);
    CHECK(parse("in --models m1 m2 --flag --models=m3 m4", &a, &p, &err) == 0 && a.models.n == 4 &&
              !strcmp(a.models.v[2], "m3") && !strcmp(a.models.v[3], "m4") && p.n_operands == 1 && a.flag,
          "a list: the arguments up to the next option (or the end), and after '='");
    done(&a, &p);
    CHECK(parse("--colour green --probs --probs all", &a, &p, &err) == 0 && a.choice == 20 && a.probs == 2,
          "a choice's value; an optional word taken when it is one");
    done(&a, &p);
    CHECK(parse("--probs in --probs=all", &a, &p, &err) == 0 && a.probs == 2 && p.n_operands == 1,
          "an optional word: not taken when it is none (an operand), taken after '='");
    done(&a, &p);
}

static void test_operands(void)
{
    ExampleArgs a;
    Parsed p;
    Error err;
    CHECK(parse("- --flag -- -x --count=2 --help", &a, &p, &err) == 0 && p.n_operands == 4 &&
              !strcmp(p.operands[0], "-") && !strcmp(p.operands[1], "-x") && !strcmp(p.operands[2], "--count=2") &&
              a.count == 3 && a.flag,
          "'-' is an operand; after '--' every argument is one");
    done(&a, &p);
    char *help[] = {"--flag", "-h"}, *after_end[] = {"--", "--help"};
    CHECK(options_want_help(2, help) && !options_want_help(2, after_end), "--help / -h, but not after --");
}

/* Each malformed command line and the whole message it must give. */
static void test_errors(void)
{
    static const struct {
        const char *line, *msg;
    } cases[] = {
        {"--frob", "example: unknown option --frob"},
        {"--frob=3", "example: unknown option --frob"},
        {"--count", "example: --count needs a number from 1 to 9"},
        {"--count 0", "example: --count needs a number from 1 to 9"},
        {"--count=10", "example: --count needs a number from 1 to 9"},
        {"--count 2x", "example: --count needs a number from 1 to 9"},
        {"--count=", "example: --count needs a number from 1 to 9"},
        {"--ratio 3", "example: --ratio needs a number from 0 to 2 or avg"},
        {"--ratio nan", "example: --ratio needs a number from 0 to 2 or avg"},
        {"-o", "example: -o needs a FILE"},
        {"--output=", "example: --output needs a FILE"},
        {"-o box next", "example: --out box: no x, please (next: next)"},
        {"--flag=1", "example: --flag takes no value (--flag=1)"},
        {"--models m1", "example: --models needs two or more"},
        {"--models m1 m2 --models", "example: --models needs two or more"},
        {"--colour blue", "example: --colour needs red or green"},
        {"--probs=none", "example: --probs needs nothing or all"},
        {"--set", "example: --set needs a K=V"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ExampleArgs a;
        Parsed p;
        Error err;
        int rc = parse(cases[i].line, &a, &p, &err);
        char label[300];
        snprintf(label, sizeof label, "'%s': -1, \"%s\"", cases[i].line, cases[i].msg);
        CHECK(rc == -1 && !strcmp(err.msg, cases[i].msg), label);
        if (rc != -1 || strcmp(err.msg, cases[i].msg)) fprintf(stderr, "  rc %d: %s\n", rc, err.msg);
        done(&a, &p);
    }
}

/* Commands with actions (nmt bpe learn|apply|join): the first argument names one, and
 * a row of another action's is an unknown option. */
static void test_actions(void)
{
    static const char *const actions[] = {"learn", "apply", NULL};
    static const Option rows[] = {
        {"--merges", OPT_INT, OPTION_AT(ExampleArgs, count), .lo = 1, .hi = 9, .actions = 1, .help = "learn's"},
        {"--flag", OPT_FLAG, OPTION_AT(ExampleArgs, flag), .help = "both"},
    };
    OptionTable t = {.name = "tool", .usage = "", OPTION_ROWS(rows), .epilogue = "", .args_size = sizeof(ExampleArgs),
                     .actions = actions};
    ExampleArgs a;
    Parsed p;
    Error err;
    char *learn[] = {"learn", "--merges", "4", "--flag"}, *apply[] = {"apply", "--merges", "4"}, *none[] = {"x"};
    CHECK(options_parse(&t, 4, learn, &a, &p, &err) == 0 && p.action == 0 && a.count == 4 && a.flag,
          "an action's own option");
    options_free(&t, &a, &p);
    CHECK(options_parse(&t, 3, apply, &a, &p, &err) == -1 && !strcmp(err.msg, "tool: unknown option --merges"),
          "another action's option: unknown");
    options_free(&t, &a, &p);
    CHECK(options_parse(&t, 1, none, &a, &p, &err) == -1 && !strcmp(err.msg, "tool: unknown action 'x' (learn or apply)"),
          "an unknown action, naming the actions");
    options_free(&t, &a, &p);
    CHECK(options_parse(&t, 0, none, &a, &p, &err) == -1 && !strcmp(err.msg, "tool: missing learn or apply"),
          "no action");
    options_free(&t, &a, &p);
}

/* The text f received, as a malloc'd string. */
static char *written(FILE *f)
{
    long n = ftell(f);
    char *s = calloc((size_t)n + 1, 1);
    rewind(f);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = '\0';
    fclose(f);
    return s;
}

static void test_help_and_man(void)
{
    FILE *f = tmpfile();
    options_help(&example, f);
    char *help = written(f);
    const char *want =
        "usage: nmt example [options] FILE ...\n\n"
        "  --flag    a flag\n"
        "  --count N a count\n"
        "  --bytes N a long\n"
        "            over two lines\n"
        "  --ratio A a ratio\n"
        "  -o, --output FILE\n"
        "            where\n"
        "  --set K=V repeatable\n"
        "  --models M M ...\n"
        "            .a line starting with a dot\n"
        "  --colour red|green, --probs [all]\n"
        "            a choice\n"
        "  --probs all\n"
        "            a second row\n"
        "\nThe end.\n";
    CHECK(!strcmp(help, want), "help: usage, a row per listed option (the term, the column, own lines), epilogue");
    if (strcmp(help, want)) fprintf(stderr, "%s", help);
    free(help);

    f = tmpfile();
    Error err;
    CHECK(options_man(&example, f, &err) == 0, "man: every option listed (--probs in another row's term)");
    char *man = written(f);
    CHECK(strstr(man, ".\\\" BEGIN OPTIONS example\n.TP\n\\fB\\-\\-flag\\fR\na flag\n") == man,
          "man: the block's first line names the command; .TP, the term bold, the help");
    CHECK(strstr(man, "\\fB\\-o\\fR, \\fB\\-\\-output\\fR \\fIFILE\\fR\n") != NULL,
          "man: names bold, a comma kept outside, the value italic, '-' escaped");
    CHECK(strstr(man, "\\&.a line starting with a dot\n") != NULL, "man: a help line starting with '.' escaped");
    CHECK(strstr(man, "a long\nover two lines\n") != NULL, "man: the help's lines as they are");
    const char *end = strstr(man, ".\\\" END OPTIONS example\n");
    CHECK(end && end[strlen(".\\\" END OPTIONS example\n")] == '\0', "man: the block's last line");
    free(man);

    /* A row with no help that no other row's term names is an error, naming it. */
    static const Option silent[] = {{"--quiet", OPT_FLAG, OPTION_AT(ExampleArgs, flag), .help = NULL}};
    OptionTable t = {.name = "hush", .usage = "", OPTION_ROWS(silent), .epilogue = "", .args_size = sizeof(ExampleArgs)};
    f = tmpfile();
    CHECK(options_man(&t, f, &err) == -1 && strstr(err.msg, "nmt hush's option --quiet is in no help line"),
          "man: an option in no help line is an error naming it");
    fclose(f);
}

int main(void)
{
    test_values();
    test_operands();
    test_errors();
    test_actions();
    test_help_and_man();
    return check_report("test_options");
}
