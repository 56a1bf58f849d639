#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h" /* defines: LR_SCHEDULE_NAMES */
#include "segment.h"  /* defines: TOKENIZER_NAMES */

/* One row per key: where it lives in Config, its type and its allowed range.
 * Loading, validation, error messages and config_to_json all read this table. */
typedef enum { KEY_INT, KEY_LONG, KEY_DOUBLE, KEY_BOOL, KEY_STRING } KeyType;
typedef struct {
    const char *section, *name;
    KeyType type;
    size_t offset;
    double min, max;
    const char *choices;  /* for strings: allowed values separated by '|', or NULL */
    int open_min, open_max; /* doubles: the bound itself is refused */
} KeySpec;

#define K(sec, name, type, field, lo, hi, choices) {sec, name, type, offsetof(Config, field), lo, hi, choices, 0, 0}
/* A number whose range excludes an end: label smoothing of 1 or a decay factor of 0 or 1
 * would make training meaningless. */
#define K_OPEN(sec, name, field, lo, lo_open, hi, hi_open) \
    {sec, name, KEY_DOUBLE, offsetof(Config, field), lo, hi, NULL, lo_open, hi_open}
static const KeySpec keys[] = {
    K("data", "train", KEY_STRING, train, 0, 0, NULL),
    K("data", "valid", KEY_STRING, valid, 0, 0, NULL),
    K("data", "valid_fraction", KEY_DOUBLE, valid_fraction, 0, 0.5, NULL),
    K("data", "max_len", KEY_INT, max_len, 1, 1000, NULL),
    K("data", "min_count", KEY_INT, min_count, 1, 1e9, NULL),
    K("data", "max_vocab", KEY_INT, max_vocab, 0, 1e7, NULL),
    K("data", "lowercase", KEY_BOOL, lowercase, 0, 1, NULL),
    K("data", "normalization", KEY_STRING, normalization, 0, 0, "nfc|nfkc"),
    K("data", "tokenizer", KEY_STRING, tokenizer, 0, 0, TOKENIZER_NAMES),
    K("data", "bpe_merges", KEY_INT, bpe_merges, 0, 1e6, NULL),
    K("data", "joint_vocab", KEY_BOOL, joint_vocab, 0, 1, NULL),
    K("model", "embed", KEY_INT, embed, 1, 8192, NULL),
    K("model", "hidden", KEY_INT, hidden, 1, 8192, NULL),
    K("model", "attention", KEY_STRING, attention, 0, 0,
      "bahdanau|luong_dot|luong_general|luong_concat|local_monotonic|local_predictive"),
    K("model", "cell", KEY_STRING, cell, 0, 0, "gru|lstm"),
    K("model", "layers", KEY_INT, layers, 1, 8, NULL),
    K("model", "bidirectional", KEY_BOOL, bidirectional, 0, 1, NULL),
    K("model", "input_feed", KEY_BOOL, input_feed, 0, 1, NULL),
    K("model", "window", KEY_INT, window, 1, 1000, NULL),
    K("model", "scaled", KEY_BOOL, scaled, 0, 1, NULL),
    K_OPEN("model", "dropout", dropout, 0, 0, 1, 1),
    K("model", "tie_embeddings", KEY_BOOL, tie_embeddings, 0, 1, NULL),
    K("train", "batch_size", KEY_INT, batch_size, 1, 65536, NULL),
    K("train", "epochs", KEY_INT, epochs, 1, 1e6, NULL),
    K("train", "max_steps", KEY_LONG, max_steps, 0, 1e15, NULL),
    K("train", "learning_rate", KEY_DOUBLE, learning_rate, 1e-9, 10, NULL),
    K("train", "clip_norm", KEY_DOUBLE, clip_norm, 0, 1e9, NULL),
    K("train", "seed", KEY_LONG, seed, 0, 9007199254740991.0, NULL),
    K("train", "threads", KEY_INT, threads, 0, 1024, NULL),
    K("train", "log_every", KEY_INT, log_every, 1, 1e9, NULL),
    K("train", "checkpoint_every", KEY_INT, checkpoint_every, 0, 1e9, NULL),
    K("train", "keep_checkpoints", KEY_INT, keep_checkpoints, 0, 1e6, NULL),
    K("train", "deterministic", KEY_BOOL, deterministic, 0, 1, NULL),
    K("train", "max_nonfinite", KEY_INT, max_nonfinite, 1, 1e9, NULL),
    K_OPEN("train", "label_smoothing", label_smoothing, 0, 0, 1, 1),
    K("train", "lr_schedule", KEY_STRING, lr_schedule, 0, 0, LR_SCHEDULE_NAMES),
    K("train", "warmup_steps", KEY_INT, warmup_steps, 0, 1e9, NULL),
    K_OPEN("train", "lr_decay", lr_decay, 0, 1, 1, 1),
    K("train", "patience", KEY_INT, patience, 1, 1e6, NULL),
    K("train", "validate_every", KEY_INT, validate_every, 0, 1e9, NULL),
    K("train", "valid_bleu_max", KEY_INT, valid_bleu_max, 0, 1e9, NULL),
    K("train", "best_metric", KEY_STRING, best_metric, 0, 0, "loss|bleu"),
    K("train", "early_stop", KEY_INT, early_stop, 0, 1e6, NULL),
    K("train", "bucket", KEY_BOOL, bucket, 0, 1, NULL),
    K("train", "teacher_forcing", KEY_DOUBLE, teacher_forcing, 0, 1, NULL),
    K("train", "teacher_forcing_decay", KEY_STRING, teacher_forcing_decay, 0, 0, "none|linear"),
    K("train", "teacher_forcing_final", KEY_DOUBLE, teacher_forcing_final, 0, 1, NULL),
    K("output", "dir", KEY_STRING, dir, 0, 0, NULL),
};
#undef K
#define N_KEYS (int)(sizeof keys / sizeof keys[0])
static const char *sections[] = {"data", "model", "train", "output"};

void config_defaults(Config *c)
{
    memset(c, 0, sizeof *c);
    c->valid_fraction = 0.1;
    c->max_len = 20;
    c->min_count = 1;
    c->max_vocab = 0;
    c->lowercase = 1;
    c->normalization = xstrdup("nfc");
    c->tokenizer = xstrdup("word");
    c->bpe_merges = 8000;
    c->embed = 256;
    c->hidden = 512;
    c->attention = xstrdup("bahdanau");
    c->cell = xstrdup("gru");
    c->layers = 1;
    c->window = 10;
    c->batch_size = 64;
    c->epochs = 10;
    c->max_steps = 0;
    c->learning_rate = 0.001;
    c->clip_norm = 5.0;
    c->seed = 1;
    c->threads = 2;
    c->log_every = 100;
    c->checkpoint_every = 1000;
    c->keep_checkpoints = 3;
    c->deterministic = 1;
    c->max_nonfinite = 10;
    c->label_smoothing = 0;
    c->teacher_forcing = 1.0;
    c->teacher_forcing_decay = xstrdup("none");
    c->teacher_forcing_final = 0.5;
    c->lr_schedule = xstrdup("constant");
    c->warmup_steps = 0;
    c->lr_decay = 0.5;
    c->patience = 1;
    c->validate_every = 0;
    c->valid_bleu_max = 1000;
    c->best_metric = xstrdup("loss");
    c->early_stop = 0;
    c->bucket = 1;
    c->dir = xstrdup("runs/default");
}

/* Edit distance, for "did you mean" suggestions. Short strings only. */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63 || lb > 63) return 99;
    int d[64][64];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* " (did you mean data.train?)" or "" */
static void suggest(char *buf, size_t len, const char *section, const char *name)
{
    char full[160], cand[160], best[160] = "";
    int best_d = 4;
    snprintf(full, sizeof full, "%s.%s", section ? section : "", name);
    for (int i = 0; i < N_KEYS; i++) {
        snprintf(cand, sizeof cand, "%s.%s", keys[i].section, keys[i].name);
        int d = section ? edit_distance(full, cand) : edit_distance(name, keys[i].section);
        if (!section) snprintf(cand, sizeof cand, "%s", keys[i].section);
        if (d < best_d) {
            best_d = d;
            snprintf(best, sizeof best, "%s", cand);
        }
    }
    if (best[0]) snprintf(buf, len, " (did you mean %s?)", best);
    else buf[0] = 0;
}

static int set_key(Config *c, const KeySpec *k, const cJSON *item, const char *source, Error *err)
{
    char *field = (char *)c + k->offset;
    const char *sec = k->section, *name = k->name;
    switch (k->type) {
    case KEY_INT:
    case KEY_LONG: {
        double v = item->valuedouble;
        if (!cJSON_IsNumber(item) || v != floor(v) || v < k->min || v > k->max)
            return error_set(err, "%s: %s.%s must be an integer from %.0f to %.0f", source, sec, name, k->min, k->max);
        if (k->type == KEY_INT) *(int *)field = (int)v;
        else *(long *)field = (long)v;
        return 0;
    }
    case KEY_DOUBLE: {
        double v = item->valuedouble;
        int above = k->open_min ? v > k->min : v >= k->min, below = k->open_max ? v < k->max : v <= k->max;
        if (!cJSON_IsNumber(item) || !(above && below)) {
            if (k->open_min || k->open_max)
                return error_set(err, "%s: %s.%s must be a number %s %g and %s %g", source, sec, name,
                                 k->open_min ? ">" : ">=", k->min, k->open_max ? "<" : "<=", k->max);
            return error_set(err, "%s: %s.%s must be a number from %g to %g", source, sec, name, k->min, k->max);
        }
        *(double *)field = v;
        return 0;
    }
    case KEY_BOOL:
        if (!cJSON_IsBool(item))
            return error_set(err, "%s: %s.%s must be true or false", source, sec, name);
        *(int *)field = cJSON_IsTrue(item);
        return 0;
    case KEY_STRING: {
        if (!cJSON_IsString(item) || !item->valuestring[0])
            return error_set(err, "%s: %s.%s must be a non-empty string", source, sec, name);
        const char *v = item->valuestring;
        if (k->choices) {
            int ok = 0;
            size_t n = strlen(v);
            for (const char *p = k->choices; p && *p;) {
                const char *bar = strchr(p, '|');
                size_t len = bar ? (size_t)(bar - p) : strlen(p);
                if (len == n && !strncmp(p, v, n)) ok = 1;
                p = bar ? bar + 1 : NULL;
            }
            if (!ok)
                return error_set(err, "%s: %s.%s must be one of %s, not \"%s\"", source, sec, name, k->choices, v);
        }
        char **s = (char **)field;
        free(*s);
        *s = xstrdup(v);
        return 0;
    }
    }
    return 0;
}

/* Line and column of a byte offset, for JSON syntax errors. */
static void position(const char *text, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *p = text; p < at && *p; p++) {
        if (*p == '\n') { (*line)++; *col = 1; }
        else (*col)++;
    }
}

/* The model keys that only make sense together. */
static int check_model(const Config *c, const char *source, Error *err)
{
    int bahdanau = !strcmp(c->attention, "bahdanau");
    if (c->bidirectional && c->hidden % 2)
        return error_set(err, "%s: model.hidden must be even for a bidirectional encoder (H/2 units per direction), "
                              "not %d", source, c->hidden);
    if (c->input_feed && bahdanau)
        return error_set(err, "%s: model.input_feed needs a Luong attention kind; model.attention is \"bahdanau\", "
                              "which already feeds the context to the decoder", source);
    if (c->scaled && (bahdanau || !strcmp(c->attention, "luong_concat")))
        return error_set(err, "%s: model.scaled applies to dot-product scores; model.attention \"%s\" is additive",
                         source, c->attention);
    if (c->tie_embeddings && c->embed != c->hidden)
        return error_set(err, "%s: model.tie_embeddings needs model.embed equal to model.hidden (%d vs %d)", source,
                         c->embed, c->hidden);
    return 0;
}

static int parse_keys(Config *c, const char *text, const char *source, Error *err)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line, col;
        position(text, end ? end : cJSON_GetErrorPtr(), &line, &col);
        return error_set(err, "%s:%d:%d: not valid JSON", source, line, col);
    }
    int status = -1;
    char hint[200];
    if (!cJSON_IsObject(root)) {
        error_set(err, "%s: the config must be a JSON object with sections data, model, train, output", source);
        goto done;
    }
    for (const cJSON *sec = root->child; sec; sec = sec->next) {
        int known = 0;
        for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
            known |= !strcmp(sec->string, sections[i]);
        if (!known) {
            suggest(hint, sizeof hint, NULL, sec->string);
            error_set(err, "%s: unknown section \"%s\"%s", source, sec->string, hint);
            goto done;
        }
        if (!cJSON_IsObject(sec)) {
            error_set(err, "%s: section %s must be an object", source, sec->string);
            goto done;
        }
        for (const cJSON *item = sec->child; item; item = item->next) {
            const KeySpec *k = NULL;
            for (int i = 0; i < N_KEYS; i++)
                if (!strcmp(keys[i].section, sec->string) && !strcmp(keys[i].name, item->string))
                    k = &keys[i];
            if (!k) {
                suggest(hint, sizeof hint, sec->string, item->string);
                error_set(err, "%s: unknown key %s.%s%s", source, sec->string, item->string, hint);
                goto done;
            }
            if (set_key(c, k, item, source, err)) goto done;
        }
    }
    status = 0;
done:
    cJSON_Delete(root);
    return status;
}

int config_check(const Config *c, const char *source, Error *err)
{
    if (!c->train) {
        error_set(err, "%s: data.train is required (a TSV file of sentence pairs)", source);
        return -1;
    }
    if (check_model(c, source, err)) return -1;
    if (!strcmp(c->teacher_forcing_decay, "linear") && c->teacher_forcing_final > c->teacher_forcing) {
        error_set(err, "%s: train.teacher_forcing_final (%g) must not exceed train.teacher_forcing (%g): the "
                       "linear decay lowers it", source, c->teacher_forcing_final, c->teacher_forcing);
        return -1;
    }
    if (!strcmp(c->best_metric, "bleu") && c->valid_bleu_max == 0) {
        error_set(err, "%s: train.best_metric \"bleu\" needs validation BLEU, which train.valid_bleu_max 0 "
                       "turns off", source);
        return -1;
    }
    return 0;
}

int config_parse(Config *c, const char *text, const char *source, Error *err)
{
    return parse_keys(c, text, source, err) || config_check(c, source, err) ? -1 : 0;
}

/* The file's text (malloc'd), or NULL with err set. */
static char *read_config_text(const char *path, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *text = xmalloc(cap);
    size_t got;
    while ((got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            if (cap > (64u << 20)) {
                fclose(f);
                free(text);
                error_set(err, "%s: too large for a config file", path);
                return NULL;
            }
            text = xrealloc(text, cap *= 2);
        }
    }
    int failed = ferror(f);
    fclose(f);
    text[len] = 0;
    if (failed) {
        free(text);
        error_set(err, "%s: read error", path);
        return NULL;
    }
    if (memchr(text, 0, len)) {
        free(text);
        error_set(err, "%s: contains a NUL byte; not a JSON config", path);
        return NULL;
    }
    return text;
}

int config_load(Config *c, const char *path, Error *err)
{
    char *text = read_config_text(path, err);
    if (!text) return -1;
    int status = config_parse(c, text, path, err);
    free(text);
    return status;
}

int config_load_keys(Config *c, const char *path, Error *err)
{
    char *text = read_config_text(path, err);
    if (!text) return -1;
    int status = parse_keys(c, text, path, err);
    free(text);
    return status;
}

int config_set(Config *c, const char *assignment, Error *err)
{
    const char *eq = strchr(assignment, '='), *dot = strchr(assignment, '.');
    if (!eq || !dot || dot > eq)
        return error_set(err, "--set %s: expected SECTION.KEY=VALUE, such as train.batch_size=32", assignment);
    char section[64], name[64];
    size_t ls = (size_t)(dot - assignment), ln = (size_t)(eq - dot - 1);
    if (ls >= sizeof section || ln >= sizeof name) return error_set(err, "--set %s: no such key", assignment);
    memcpy(section, assignment, ls);
    section[ls] = 0;
    memcpy(name, dot + 1, ln);
    name[ln] = 0;
    const KeySpec *k = NULL;
    for (int i = 0; i < N_KEYS; i++)
        if (!strcmp(keys[i].section, section) && !strcmp(keys[i].name, name)) k = &keys[i];
    if (!k) {
        char hint[200];
        suggest(hint, sizeof hint, section, name);
        return error_set(err, "--set: unknown key %s.%s%s", section, name, hint);
    }
    /* The value as JSON when it is JSON (32, 0.5, true, "x"), else as a string. */
    const char *value = eq + 1;
    cJSON *item = cJSON_Parse(value);
    if (!item || cJSON_IsObject(item) || cJSON_IsArray(item) || cJSON_IsNull(item)) {
        cJSON_Delete(item);
        item = cJSON_CreateString(value);
    }
    int status = set_key(c, k, item, "--set", err);
    cJSON_Delete(item);
    return status;
}

/* cJSON prints numbers with 15 significant digits and accepts that as exact when it is
 * merely close, so a seed of 2^53-1 would come back as ...990. Integers are written
 * exactly, doubles with the fewest digits that read back to the same value. */
static void add_exact_number(cJSON *obj, const char *name, double v, int is_integer)
{
    char buf[40];
    if (is_integer) snprintf(buf, sizeof buf, "%.0f", v);
    else
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(buf, sizeof buf, "%.*g", digits, v);
            if (strtod(buf, NULL) == v) break;
        }
    cJSON_AddRawToObject(obj, name, buf);
}

char *config_to_json(const Config *c)
{
    cJSON *root = cJSON_CreateObject();
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        cJSON *sec = cJSON_AddObjectToObject(root, sections[s]);
        for (int i = 0; i < N_KEYS; i++) {
            const KeySpec *k = &keys[i];
            if (strcmp(k->section, sections[s])) continue;
            const char *field = (const char *)c + k->offset;
            switch (k->type) {
            case KEY_INT: add_exact_number(sec, k->name, *(const int *)field, 1); break;
            case KEY_LONG: add_exact_number(sec, k->name, (double)*(const long *)field, 1); break;
            case KEY_DOUBLE: add_exact_number(sec, k->name, *(const double *)field, 0); break;
            case KEY_BOOL: cJSON_AddBoolToObject(sec, k->name, *(const int *)field); break;
            case KEY_STRING: {
                /* An unset path (data.valid) is left out rather than written as null,
                 * which config_parse would refuse: the output must load back. */
                const char *v = *(char *const *)field;
                if (v) cJSON_AddStringToObject(sec, k->name, v);
                break;
            }
            }
        }
    }
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    return out;
}

/* A key's value as text for messages: as config_to_json writes it, strings unquoted. */
static void value_text(const Config *c, const KeySpec *k, char *out, size_t len)
{
    const char *field = (const char *)c + k->offset;
    switch (k->type) {
    case KEY_INT: snprintf(out, len, "%d", *(const int *)field); break;
    case KEY_LONG: snprintf(out, len, "%ld", *(const long *)field); break;
    case KEY_DOUBLE: {
        double v = *(const double *)field;
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(out, len, "%.*g", digits, v);
            if (strtod(out, NULL) == v) break;
        }
        break;
    }
    case KEY_BOOL: snprintf(out, len, "%s", *(const int *)field ? "true" : "false"); break;
    case KEY_STRING: {
        const char *v = *(char *const *)field;
        snprintf(out, len, "%s", v ? v : "(none)");
        break;
    }
    }
}

int config_difference(const Config *a, const Config *b, const char *const *skip, char *key, char *a_value,
                      char *b_value, size_t len)
{
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++)
        for (int i = 0; i < N_KEYS; i++) {
            const KeySpec *k = &keys[i];
            if (strcmp(k->section, sections[s])) continue;
            char name[160];
            snprintf(name, sizeof name, "%s.%s", k->section, k->name);
            int skipped = 0;
            for (int j = 0; skip && skip[j]; j++)
                skipped |= !strcmp(skip[j], name);
            if (skipped) continue;
            /* Compared as text: exact for every type (doubles are written to round-trip). */
            value_text(a, k, a_value, len);
            value_text(b, k, b_value, len);
            if (strcmp(a_value, b_value)) {
                snprintf(key, len, "%s", name);
                return 1;
            }
        }
    return 0;
}

void config_free(Config *c)
{
    for (int i = 0; i < N_KEYS; i++)
        if (keys[i].type == KEY_STRING) {
            char **s = (char **)((char *)c + keys[i].offset);
            free(*s);
            *s = NULL;
        }
}
