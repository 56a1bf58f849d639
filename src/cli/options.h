/* options.h — the command line's options: one table per command, from which both the
 * parsing and the options part of the command's --help come.
 *
 * A command keeps what its options say in a struct of its own (TranslateArgs, ...).
 * Each row of its table names one option, says what kind of value it takes and where
 * in that struct the value goes (OPTION_AT), and carries the option's help lines:
 *
 *     typedef struct { int beam; const char *out; } ExampleArgs;
 *     static const Option example_rows[] = {
 *         {"--beam", OPT_INT, OPTION_AT(ExampleArgs, beam), .lo = 1, .hi = 100, .metavar = "K",
 *          .help = "beam search with K beams (default 1: greedy search)"},
 *         {"--output", OPT_STRING, OPTION_AT(ExampleArgs, out), .alias = "-o", .metavar = "FILE",
 *          .help = "write there instead of standard output"},
 *     };
 *
 * options_parse reads a command's arguments into the struct (the rest, the operands, in
 * order into Parsed); options_help writes the command's --help text: its usage text, a
 * row's term ("-o, --output FILE") and help lines for each documented row, and its
 * epilogue. main.c's cli_commands() (commands.h) reaches every table, so that the man
 * page can be generated from, or checked against, the same rows.
 *
 * A usage error (an unknown option, a value out of range, a missing value) is one line
 * on stderr, "nmt: COMMAND: what is wrong; see 'nmt COMMAND --help'" (usage_error),
 * and exit status 2.
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "base/util.h" /* defines: Error */

typedef enum {
    OPT_FLAG,     /* no value: the int field becomes 1 */
    OPT_INT,      /* an integer from lo to hi, into an int or a long field */
    OPT_FLOAT,    /* a number from lo to hi, or the word `word` (read as word_value), into a float */
    OPT_STRING,   /* the next argument as it is, into a const char * (the last one given counts) */
    OPT_STRINGS,  /* repeatable: each one's value appended to a StringList */
    OPT_LIST,     /* the arguments up to the next option, appended to a StringList (at least lo
                     of them in all) */
    OPT_CHOICE,   /* one of the words choices[] into an int field, as choice_values[k]; with
                     bare non-zero the word may be left out, and the field becomes bare */
} OptionKind;

/* An OPT_STRINGS or OPT_LIST field: the values in the order given (v malloc'd, freed by
 * options_free). */
typedef struct {
    char **v;
    int n;
} StringList;

typedef struct {
    const char *name;        /* "--beam" */
    OptionKind kind;
    size_t at, size;         /* where the value goes in the command's struct: OPTION_AT */
    const char *alias;       /* another spelling ("-o" for "--output"), or NULL */
    long lo, hi;             /* OPT_INT's, OPT_FLOAT's range; OPT_LIST's least count */
    const char *word;        /* OPT_FLOAT: a word it also takes ("avg") ... */
    float word_value;        /* ... and the value that word stands for */
    const char *const *choices;  /* OPT_CHOICE: the words, NULL-terminated */
    const int *choice_values;    /* their values (NULL: their indices) */
    int bare;                /* OPT_CHOICE: the value when no word follows (0: a word must) */
    /* More checks of an OPT_STRING or OPT_STRINGS value: 0, or -1 with what is wrong in
     * why[why_len] (a whole clause: "unknown tokeniser intl (13a, zh, char or none)").
     * next is the argument after the value, or NULL, for a hint. */
    int (*check)(const char *value, const char *next, char *why, size_t why_len);
    const char *needs;       /* what a missing or bad value is told it needs ("a FILE"); NULL:
                                "a number from LO to HI" for numbers, "a METAVAR" otherwise */
    unsigned actions;        /* the command's actions (OptionTable.actions) it belongs to, as
                                bits 1 << index; 0: all */
    unsigned group;          /* bits OR-ed into Parsed.groups when it is given */
    /* Help. */
    const char *metavar;     /* the value's name in the help: "K", "FILE" */
    const char *term;        /* the help's left column, when not "ALIAS, NAME METAVAR" */
    const char *help;        /* the description, lines separated by '\n'; NULL: not listed
                                (another row's term or the usage text covers it) */
    int gap;                 /* a term too long for the column: 0, the description starts on
                                the next line; n, after n spaces on the term's line */
} Option;

/* The offset and size of field in the command's struct T. */
#define OPTION_AT(T, field) offsetof(T, field), sizeof(((T *)0)->field)

/* A help row of its own that belongs to the option before it (classify's "--probs all"):
 * never parsed, only listed. */
#define OPTION_MORE(term_, help_) {.name = NULL, .term = term_, .help = help_}

/* A table's rows: OPTION_ROWS(example_rows) in its OptionTable. */
#define OPTION_ROWS(rows_) .rows = rows_, .n_rows = (int)(sizeof rows_ / sizeof rows_[0])

/* A command's options and help. */
typedef struct {
    const char *name;          /* "translate", as in "nmt translate" */
    const char *usage;         /* the help before the options: usage lines and description */
    const Option *rows;
    int n_rows;
    int column;                /* where the options' descriptions start */
    const char *epilogue;      /* the help after the options ("" when none) */
    size_t args_size;          /* the command's struct ... */
    const void *defaults;      /* ... and its values before parsing (NULL: all zero) */
    /* Commands whose first argument is an action (nmt bpe learn|apply|join): the
     * actions' names, NULL-terminated; NULL for other commands. */
    const char *const *actions;
} OptionTable;

typedef struct {
    char **operands;    /* the arguments that are not options, in order (malloc'd) */
    int n_operands;
    unsigned groups;    /* the OR of the .group of every option given */
    int action;         /* the index of the action in OptionTable.actions, or -1 */
    int argc;           /* the command's arguments, as main passed them (for MPI_Init) */
    char **argv;
} Parsed;

/* Reads argv[0..argc) (the arguments after the command's name) into args (a struct of
 * t->args_size bytes: t->defaults, then what the options say) and p. An option's value
 * is the next argument (--beam 5) or follows '=' (--beam=5); "--" ends the options,
 * every argument after it is an operand (a file named -x); "-" is an operand
 * (standard input). Returns 0, or -1 with what is wrong in err ("translate: --beam
 * needs a number from 1 to 100", a usage error). Either way options_free releases
 * what it allocated. */
int options_parse(const OptionTable *t, int argc, char **argv, void *args, Parsed *p, Error *err);
void options_free(const OptionTable *t, void *args, Parsed *p);

/* Whether the arguments ask for the command's help (--help or -h before any "--"). */
int options_want_help(int argc, char **argv);
/* t's whole --help text: usage, each listed row, epilogue. */
void options_help(const OptionTable *t, FILE *out);

/* t's options as man page entries (troff: .TP, the term, the help lines), between the
 * lines `.\" BEGIN OPTIONS NAME` and `.\" END OPTIONS NAME`, which scripts/docs/man.sh
 * splices into docs/nmt.1. Returns 0, or -1 with err when an option is listed nowhere
 * (no help of its own, and no listed row's term names it). */
int options_man(const OptionTable *t, FILE *out, Error *err);

/* A usage error of command t, one line on stderr: "nmt: ", the message, and "; see
 * 'nmt NAME --help'". Returns 2, the exit status of a usage error. */
int usage_error(const OptionTable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
