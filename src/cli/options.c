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
    for (int i = 0; i < argc; i++)
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
    fputc('\n', stderr);
    options_help(t, stderr);
    return 2;
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

/* The row of t that argument a names (in action `action`), or NULL. */
static const Option *find_row(const OptionTable *t, const char *a, int action)
{
    for (int i = 0; i < t->n_rows; i++) {
        const Option *o = &t->rows[i];
        if (!o->name || (strcmp(a, o->name) && (!o->alias || strcmp(a, o->alias)))) continue;
        if (o->actions && action >= 0 && !(o->actions & (1u << action))) continue;
        return o;
    }
    return NULL;
}

/* What the value of o needs, for the message about a missing or bad one. */
static void value_needs(const Option *o, char *needs, size_t len)
{
    if (o->needs) snprintf(needs, len, "%s", o->needs);
    else if (o->kind == OPT_INT || o->kind == OPT_FLOAT) snprintf(needs, len, "a number from %ld to %ld", o->lo, o->hi);
    else snprintf(needs, len, "a %s", o->metavar ? o->metavar : "value");
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
    if (!value) goto bad_value;
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

/* "a, b or c" */
static void words_or(const char *const *words, char *out, size_t len)
{
    size_t used = 0;
    out[0] = 0;
    for (int k = 0; words[k] && used < len; k++)
        used += (size_t)snprintf(out + used, len - used, "%s%s", k == 0 ? "" : words[k + 1] ? ", " : " or ", words[k]);
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

int options_parse(const OptionTable *t, int argc, char **argv, void *args, Parsed *p)
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
        if (argc < 1) return usage_error(t, "%s: missing %s", t->name, names);
        for (int k = 0; t->actions[k]; k++)
            if (!strcmp(argv[0], t->actions[k])) p->action = k;
        if (p->action < 0) return usage_error(t, "%s: unknown action '%s' (%s)", t->name, argv[0], names);
        i = 1;
    }
    char why[400];
    for (; i < argc; i++) {
        char *a = argv[i];
        if (a[0] != '-' || !a[1]) {
            p->operands[p->n_operands++] = a;
            continue;
        }
        const Option *o = find_row(t, a, p->action);
        if (!o) return usage_error(t, "%s: unknown option %s", t->name, a);
        p->groups |= o->group;
        char *field = (char *)args + o->at;
        if (o->kind == OPT_FLAG) {
            *(int *)field = 1;
            continue;
        }
        if (o->kind == OPT_LIST) {
            StringList *l = (StringList *)field;
            while (i + 1 < argc && argv[i + 1][0] != '-')
                list_append(l, argv[++i]);
            if (l->n < o->lo) {
                char needs[160];
                value_needs(o, needs, sizeof needs);
                return usage_error(t, "%s: %s needs %s", t->name, o->name, needs);
            }
            continue;
        }
        if (o->kind == OPT_CHOICE && o->bare) {
            /* The word is optional: taken only if it is one of the choices. */
            *(int *)field = o->bare;
            for (int k = 0; i + 1 < argc && o->choices[k]; k++)
                if (!strcmp(argv[i + 1], o->choices[k])) {
                    store_value(o, a, argv[++i], NULL, args, why, sizeof why);
                    break;
                }
            continue;
        }
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        const char *next = i + 2 < argc ? argv[i + 2] : NULL;
        if (store_value(o, a, value, next, args, why, sizeof why)) return usage_error(t, "%s: %s", t->name, why);
        i++;
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
