/* options.c — parsing a command's arguments by its option table, and its --help; see
 * options.h. */
#include "cli/options.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h" /* defines: xrealloc */

/* ---------------------------------------------------------------- help */

/* The row's left column: its own term, or "ALIAS, NAME METAVAR". */
static void row_term(const Option *o, char *term, size_t len)
{
    if (o->term) {
        snprintf(term, len, "%s", o->term);
        return;
    }
    snprintf(term, len, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
             o->metavar ? " " : "", o->metavar ? o->metavar : "");
}

/* "  TERM" then the description from t->column on, each further line of it indented
 * to the column. */
static void row_help(const OptionTable *t, const Option *o, FILE *out)
{
    char term[200];
    row_term(o, term, sizeof term);
    int used = fprintf(out, "  %s", term);
    if (used < t->column) fprintf(out, "%*s", t->column - used, "");
    else if (o->gap) fprintf(out, "%*s", o->gap, "");
    else fprintf(out, "\n%*s", t->column, "");
    for (const char *line = o->help; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        fprintf(out, "%.*s\n", (int)n, line);
        if (!end) break;
        line = end + 1;
        fprintf(out, "%*s", t->column, "");
    }
}

void options_help(const OptionTable *t, FILE *out)
{
    fputs(t->usage, out);
    for (int i = 0; i < t->n_rows; i++)
        if (t->rows[i].help) row_help(t, &t->rows[i], out);
    fputs(t->epilogue, out);
}

int options_want_help(int argc, char **argv)
{
    for (int i = 0; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

int usage_error(const OptionTable *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "nmt: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; see 'nmt %s --help'\n", t->name);
    return 2;
}

/* ---------------------------------------------------------------- the man page */

/* s[0..n) as troff text: '-' as \-, '\' as \e. */
static void man_escape(FILE *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '-') fputs("\\-", out);
        else if (s[i] == '\\') fputs("\\e", out);
        else fputc(s[i], out);
    }
}

/* A term as troff: the option names bold, their values italic ("-o, --output FILE"). */
static void man_term(FILE *out, const char *term)
{
    for (const char *w = term; *w;) {
        size_t n = strcspn(w, " ");
        size_t comma = n > 0 && w[n - 1] == ',';
        fputs(w[0] == '-' ? "\\fB" : "\\fI", out);
        man_escape(out, w, n - comma);
        fputs(comma ? "\\fR," : "\\fR", out);
        w += n;
        if (*w == ' ') fputc(*w++, out);
    }
    fputc('\n', out);
}

/* Whether a listed row's term names the option (the word name, alone or before a
 * comma, in it). */
static int named_in_a_term(const OptionTable *t, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < t->n_rows; i++) {
        const char *term = t->rows[i].term, *at = term;
        while (term && t->rows[i].help && (at = strstr(at, name))) {
            int starts = at == term || at[-1] == ' ';
            int ends = at[n] == '\0' || at[n] == ' ' || at[n] == ',';
            if (starts && ends) return 1;
            at += n;
        }
    }
    return 0;
}

int options_man(const OptionTable *t, FILE *out, Error *err)
{
    for (int i = 0; i < t->n_rows; i++)
        if (t->rows[i].name && !t->rows[i].help && !named_in_a_term(t, t->rows[i].name))
            return error_set(err, "nmt %s's option %s is in no help line (give it one, or name it in "
                                  "another's term)", t->name, t->rows[i].name);
    fprintf(out, ".\\\" BEGIN OPTIONS %s\n", t->name);
    for (int i = 0; i < t->n_rows; i++) {
        const Option *o = &t->rows[i];
        if (!o->help) continue;
        char term[200];
        row_term(o, term, sizeof term);
        fputs(".TP\n", out);
        man_term(out, term);
        for (const char *line = o->help; *line;) {
            size_t n = strcspn(line, "\n");
            if (line[0] == '.' || line[0] == '\'') fputs("\\&", out);
            man_escape(out, line, n);
            fputc('\n', out);
            line += n + (line[n] == '\n');
        }
    }
    fprintf(out, ".\\\" END OPTIONS %s\n", t->name);
    return 0;
}

/* ---------------------------------------------------------------- parsing */

static void list_append(StringList *l, char *s)
{
    l->v = xrealloc(l->v, sizeof(char *) * (size_t)(l->n + 1));
    l->v[l->n++] = s;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* The row of t whose name or alias is name[0..len) (in action `action`), or NULL. */
static const Option *find_row(const OptionTable *t, const char *name, size_t len, int action)
{
    for (int i = 0; i < t->n_rows; i++) {
        const Option *o = &t->rows[i];
        if (!o->name) continue;
        int named = (strlen(o->name) == len && !strncmp(name, o->name, len)) ||
                    (o->alias && strlen(o->alias) == len && !strncmp(name, o->alias, len));
        if (!named || (o->actions && action >= 0 && !(o->actions & (1u << action)))) continue;
        return o;
    }
    return NULL;
}

/* "a, b or c" */
static void words_or(const char *const *words, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    for (int k = 0; words[k] && used < len; k++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", k == 0 ? "" : words[k + 1] ? ", " : " or ", words[k]);
}

/* What the value of o needs, for the message about a missing or bad one. */
static void value_needs(const Option *o, char *needs, size_t len)
{
    char words[200];
    if (o->needs) snprintf(needs, len, "%s", o->needs);
    else if (o->kind == OPT_INT || o->kind == OPT_FLOAT) snprintf(needs, len, "a number from %ld to %ld", o->lo, o->hi);
    else if (o->kind == OPT_CHOICE) {
        words_or(o->choices, words, sizeof words);
        snprintf(needs, len, "%s%s", o->bare ? "nothing or " : "", words);
    } else snprintf(needs, len, "a %s", o->metavar ? o->metavar : "value");
}

/* The value of o (written as `written`: its name or its alias), given as `value` (NULL:
 * none was), stored into args. Returns 0, or -1 with what is wrong in why. next: the
 * argument after the value, or NULL. */
static int store_value(const Option *o, const char *written, const char *value, const char *next, void *args, char *why,
                       size_t why_len)
{
    char *field = (char *)args + o->at;
    char needs[160];
    value_needs(o, needs, sizeof needs);
    if (!value || !*value) goto bad_value;
    switch (o->kind) {
    case OPT_INT: {
        long v;
        if (parse_long(value, o->lo, o->hi, &v)) goto bad_value;
        if (o->size == sizeof(int)) *(int *)field = (int)v;
        else *(long *)field = v;
        return 0;
    }
    case OPT_FLOAT: {
        char *end;
        if (o->word && !strcmp(value, o->word)) {
            *(float *)field = o->word_value;
            return 0;
        }
        double v = strtod(value, &end);
        if (end == value || *end || !(v >= o->lo && v <= o->hi)) goto bad_value;
        *(float *)field = (float)v;
        return 0;
    }
    case OPT_CHOICE:
        for (int k = 0; o->choices[k]; k++)
            if (!strcmp(value, o->choices[k])) {
                *(int *)field = o->choice_values ? o->choice_values[k] : k;
                return 0;
            }
        goto bad_value;
    case OPT_STRING:
    case OPT_STRINGS:
        if (o->check && o->check(value, next, why, why_len)) return -1;
        if (o->kind == OPT_STRING) *(const char **)field = value;
        else list_append((StringList *)field, (char *)value);
        return 0;
    default:
        return 0;
    }
bad_value:
    snprintf(why, why_len, "%s needs %s", written, needs);
    return -1;
}

/* A row whose field is not of its kind's type is a mistake in the table: said at once,
 * whatever the arguments, rather than writing past the field. */
static void check_rows(const OptionTable *t)
{
    for (int i = 0; i < t->n_rows; i++) {
        const Option *o = &t->rows[i];
        size_t want = o->kind == OPT_FLOAT ? sizeof(float)
                    : o->kind == OPT_STRING ? sizeof(char *)
                    : o->kind == OPT_STRINGS || o->kind == OPT_LIST ? sizeof(StringList)
                    : o->kind == OPT_INT && o->size == sizeof(long) ? sizeof(long)
                                                                   : sizeof(int);
        if (o->name && (o->size != want || o->at + o->size > t->args_size)) {
            fprintf(stderr, "nmt: internal error: nmt %s's option %s has a field of %zu bytes\n", t->name, o->name,
                    o->size);
            abort();
        }
    }
}

int options_parse(const OptionTable *t, int argc, char **argv, void *args, Parsed *p, Error *err)
{
    check_rows(t);
    if (t->defaults) memcpy(args, t->defaults, t->args_size);
    else memset(args, 0, t->args_size);
    *p = (Parsed){.operands = xrealloc(NULL, sizeof(char *) * (size_t)(argc + 1)), .action = -1, .argc = argc,
                  .argv = argv};
    int i = 0;
    if (t->actions) {
        char names[200];
        words_or(t->actions, names, sizeof names);
        if (argc < 1) return error_set(err, "%s: missing %s", t->name, names);
        for (int k = 0; t->actions[k]; k++)
            if (!strcmp(argv[0], t->actions[k])) p->action = k;
        if (p->action < 0) return error_set(err, "%s: unknown action '%s' (%s)", t->name, argv[0], names);
        i = 1;
    }
    int options_ended = 0;   /* after "--" every argument is an operand */
    for (; i < argc; i++) {
        char *a = argv[i];
        if (!options_ended && !strcmp(a, "--")) {
            options_ended = 1;
            continue;
        }
        if (options_ended || a[0] != '-' || !a[1]) {
            p->operands[p->n_operands++] = a;
            continue;
        }
        /* --name=value, or --name and the value in the next argument. */
        const char *eq = strchr(a, '=');
        size_t name_len = eq ? (size_t)(eq - a) : strlen(a);
        const Option *o = find_row(t, a, name_len, p->action);
        if (!o) return error_set(err, "%s: unknown option %.*s", t->name, (int)name_len, a);
        char written[64];   /* the option as the command line spells it: -o or --output */
        snprintf(written, sizeof written, "%.*s", (int)name_len, a);
        const char *value = eq ? eq + 1 : NULL;
        p->groups |= o->group;
        char *field = (char *)args + o->at;
        char why[400];
        if (o->kind == OPT_FLAG) {
            if (value) return error_set(err, "%s: %s takes no value (%s)", t->name, written, a);
            *(int *)field = 1;
            continue;
        }
        if (o->kind == OPT_LIST) {
            /* The value after '=', and the arguments up to the next option: at least one,
             * and lo in all. */
            StringList *l = (StringList *)field;
            int before = l->n;
            if (value && *value) list_append(l, (char *)value);
            while (i + 1 < argc && argv[i + 1][0] != '-')
                list_append(l, argv[++i]);
            if (l->n == before || l->n < o->lo) {
                char needs[160];
                value_needs(o, needs, sizeof needs);
                return error_set(err, "%s: %s needs %s", t->name, written, needs);
            }
            continue;
        }
        if (o->kind == OPT_CHOICE && o->bare && !value) {
            /* The word may be left out: the next argument is taken only if it is one. */
            *(int *)field = o->bare;
            for (int k = 0; i + 1 < argc && o->choices[k]; k++)
                if (!strcmp(argv[i + 1], o->choices[k])) {
                    store_value(o, written, argv[++i], NULL, args, why, sizeof why);
                    break;
                }
            continue;
        }
        if (!value && i + 1 < argc) value = argv[++i];
        if (store_value(o, written, value, i + 1 < argc ? argv[i + 1] : NULL, args, why, sizeof why))
            return error_set(err, "%s: %s", t->name, why);
    }
    p->operands[p->n_operands] = NULL;
    return 0;
}

void options_free(const OptionTable *t, void *args, Parsed *p)
{
    for (int i = 0; i < t->n_rows; i++) {
        const Option *o = &t->rows[i];
        if (o->name && (o->kind == OPT_STRINGS || o->kind == OPT_LIST)) {
            StringList *l = (StringList *)((char *)args + o->at);
            free(l->v);
            *l = (StringList){0};
        }
    }
    free(p->operands);
    p->operands = NULL;
}
