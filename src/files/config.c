#include "files/config.h"

#include "layers/pooling.h" /* defines: pooling_kind */

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/lines.h"    /* defines: LINES_MAX_BYTES, LINES_MAX_BYTES_MIN, LINES_MAX_BYTES_MAX */
#include "layers/pooling.h"  /* defines: pooling_kind */
#include "layers/schedule.h" /* defines: LR_SCHEDULE_NAMES */
#include "text/segment.h"  /* defines: TOKENIZER_NAMES */
#include "text/text.h"     /* defines: user_symbol_problem, USER_SYMBOLS_MAX */

/* One row per key: where it lives in Config, its type and its allowed range.
 * Loading, validation, error messages and config_to_json all read this table. */
typedef enum { KEY_INT, KEY_LONG, KEY_DOUBLE, KEY_BOOL, KEY_STRING, KEY_STRINGS } KeyType;
typedef struct {
    const char *section, *name;
    KeyType type;
    size_t offset;
    double min, max;
    const char *choices;  /* for strings: allowed values separated by '|', or NULL */
    int open_min, open_max; /* doubles: the bound itself is refused */
    int falls_back;       /* a double left unset (negative) takes the value of the double at */
    size_t fallback;      /* this offset: as the person expects it, in messages and config.json */
} KeySpec;

#define K(sec, name, type, field, lo, hi, choices) {sec, name, type, offsetof(Config, field), lo, hi, choices, 0, 0, 0, 0}
/* A number whose range excludes an end: label smoothing of 1 or a decay factor of 0 or 1
 * would make training meaningless. */
#define K_OPEN(sec, name, field, lo, lo_open, hi, hi_open) \
    {sec, name, KEY_DOUBLE, offsetof(Config, field), lo, hi, NULL, lo_open, hi_open, 0, 0}
/* A probability in [0, 1) that is another key's unless given (model.attention_dropout is
 * model.dropout's): unset, the field holds -1. */
#define K_FALLBACK(sec, name, field, other) \
    {sec, name, KEY_DOUBLE, offsetof(Config, field), 0, 1, NULL, 0, 1, 1, offsetof(Config, other)}
static const KeySpec keys[] = {
    K("data", "train", KEY_STRING, train, 0, 0, NULL),
    K("data", "valid", KEY_STRING, valid, 0, 0, NULL),
    K("data", "valid_fraction", KEY_DOUBLE, valid_fraction, 0, 0.5, NULL),
    K("data", "max_len", KEY_INT, max_len, 1, 1000, NULL),
    K("data", "max_line_bytes", KEY_INT, max_line_bytes, LINES_MAX_BYTES_MIN, LINES_MAX_BYTES_MAX, NULL),
    K("data", "min_count", KEY_INT, min_count, 1, 1e9, NULL),
    K("data", "max_vocab", KEY_INT, max_vocab, 0, 1e7, NULL),
    K("data", "lowercase", KEY_BOOL, lowercase, 0, 1, NULL),
    K("data", "normalization", KEY_STRING, normalization, 0, 0, "nfc|nfkc"),
    K("data", "tokenizer", KEY_STRING, tokenizer, 0, 0, TOKENIZER_NAMES),
    K("data", "subword_format", KEY_STRING, subword_format, 0, 0, SUBWORD_FORMAT_NAMES),
    K("data", "bpe_merges", KEY_INT, bpe_merges, 0, 1e6, NULL),
    K("data", "spm_type", KEY_STRING, spm_type, 0, 0, "unigram|bpe"),
    K("data", "spm_vocab_size", KEY_INT, spm_vocab_size, 1, 1e6, NULL),
    K("data", "spm_model", KEY_STRING, spm_model, 0, 0, NULL),
    K("data", "joint_vocab", KEY_BOOL, joint_vocab, 0, 1, NULL),
    K("data", "text_column", KEY_INT, text_column, 1, 1000, NULL),
    K("data", "label_column", KEY_INT, label_column, 0, 1000, NULL),
    K("data", "user_symbols", KEY_STRINGS, user_symbols, 0, USER_SYMBOLS_MAX, NULL),
    K("model", "embed", KEY_INT, embed, 1, MODEL_MAX_WIDTH, NULL),
    K("model", "hidden", KEY_INT, hidden, 1, MODEL_MAX_WIDTH, NULL),
    K("model", "attention", KEY_STRING, attention, 0, 0,
      "bahdanau|luong_dot|luong_general|luong_concat|local_monotonic|local_predictive"),
    K("model", "cell", KEY_STRING, cell, 0, 0, "gru|lstm"),
    K("model", "layers", KEY_INT, layers, 1, MAX_LAYERS, NULL),
    K("model", "bidirectional", KEY_BOOL, bidirectional, 0, 1, NULL),
    K("model", "input_feed", KEY_BOOL, input_feed, 0, 1, NULL),
    K("model", "window", KEY_INT, window, 1, MODEL_MAX_WINDOW, NULL),
    K("model", "scaled", KEY_BOOL, scaled, 0, 1, NULL),
    K_OPEN("model", "dropout", dropout, 0, 0, 1, 1),
    K_FALLBACK("model", "attention_dropout", attention_dropout, dropout),
    K_FALLBACK("model", "activation_dropout", activation_dropout, dropout),
    K("model", "tie_embeddings", KEY_BOOL, tie_embeddings, 0, 1, NULL),
    K("model", "type", KEY_STRING, type, 0, 0, MODEL_TYPE_NAMES),
    K("model", "pooling", KEY_STRING, pooling, 0, 0, "attention|last|mean|max"),
    K("model", "bag_of_words", KEY_BOOL, bag_of_words, 0, 1, NULL),
    K("model", "heads", KEY_INT, heads, 1, MODEL_MAX_WIDTH, NULL),
    K("model", "ff", KEY_INT, ff, 1, 4 * MODEL_MAX_WIDTH, NULL),
    K("model", "activation", KEY_STRING, activation, 0, 0, "relu|gelu"),
    K("model", "norm", KEY_STRING, norm, 0, 0, "pre|post"),
    K("model", "encoder_layers", KEY_INT, encoder_layers, 0, MAX_LAYERS, NULL),
    K("model", "decoder_layers", KEY_INT, decoder_layers, 0, MAX_LAYERS, NULL),
    K("train", "batch_size", KEY_INT, batch_size, 1, 65536, NULL),
    K("train", "epochs", KEY_INT, epochs, 1, CONFIG_MAX_EPOCHS, NULL),
    K("train", "batch_tokens", KEY_INT, batch_tokens, 0, CONFIG_MAX_BATCH_TOKENS, NULL),
    K("train", "accumulate", KEY_INT, accumulate, 1, 1024, NULL),
    K("train", "max_steps", KEY_LONG, max_steps, 0, CONFIG_MAX_STEPS, NULL),
    K("train", "max_minutes", KEY_DOUBLE, max_minutes, 0, CONFIG_MAX_MINUTES, NULL),
    K("train", "learning_rate", KEY_DOUBLE, learning_rate, 1e-9, 10, NULL),
    K_OPEN("train", "adam_beta1", adam_beta1, 0, 0, 1, 1),
    K_OPEN("train", "adam_beta2", adam_beta2, 0, 0, 1, 1),
    K_OPEN("train", "adam_eps", adam_eps, 0, 1, 1, 0),
    K("train", "clip_norm", KEY_DOUBLE, clip_norm, 0, 1e9, NULL),
    K("train", "seed", KEY_LONG, seed, 0, 9007199254740991.0, NULL),
    K("train", "threads", KEY_INT, threads, 0, 1024, NULL),
    K("train", "workers", KEY_INT, workers, 0, CONFIG_MAX_WORKERS, NULL),
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
    K("train", "best_metric", KEY_STRING, best_metric, 0, 0, "loss|bleu|accuracy"),
    K("train", "class_weights", KEY_STRING, class_weights, 0, 0, "none|balanced"),
    K("train", "early_stop", KEY_INT, early_stop, 0, 1e6, NULL),
    K("train", "bucket", KEY_BOOL, bucket, 0, 1, NULL),
    K("train", "teacher_forcing", KEY_DOUBLE, teacher_forcing, 0, 1, NULL),
    K("train", "teacher_forcing_decay", KEY_STRING, teacher_forcing_decay, 0, 0, "none|linear"),
    K("train", "teacher_forcing_final", KEY_DOUBLE, teacher_forcing_final, 0, 1, NULL),
    K("train", "init_from", KEY_STRING, init_from, 0, 0, NULL),
    K("train", "extend_vocab", KEY_BOOL, extend_vocab, 0, 1, NULL),
    K("output", "dir", KEY_STRING, dir, 0, 0, NULL),
};
#undef K
#define N_KEYS (int)(sizeof keys / sizeof keys[0])
_Static_assert(sizeof keys / sizeof keys[0] <= CONFIG_MAX_KEYS, "Config.given has a byte per key");
static const char *sections[] = {"data", "model", "train", "output"};

/* The row of "section.name", or -1. */
static int key_index(const char *full)
{
    const char *dot = strchr(full, '.');
    if (!dot) return -1;
    size_t ls = (size_t)(dot - full);
    for (int i = 0; i < N_KEYS; i++)
        if (strlen(keys[i].section) == ls && !strncmp(keys[i].section, full, ls) && !strcmp(keys[i].name, dot + 1))
            return i;
    return -1;
}

void config_defaults(Config *c)
{
    memset(c, 0, sizeof *c);
    c->valid_fraction = 0.1;
    c->max_len = 20;
    c->max_line_bytes = LINES_MAX_BYTES;
    c->min_count = 1;
    c->max_vocab = 0;
    c->lowercase = 0;
    c->normalization = xstrdup("nfc");
    c->tokenizer = xstrdup("word");
    c->subword_format = xstrdup("none");
    c->bpe_merges = 8000;
    c->spm_type = xstrdup("unigram");
    c->spm_vocab_size = 8000;
    c->embed = 256;
    c->hidden = 512;
    c->attention = xstrdup("bahdanau");
    c->cell = xstrdup("gru");
    c->layers = 1;
    c->type = xstrdup("rnn");
    c->heads = 4;
    c->ff = 1024;
    c->activation = xstrdup("relu");
    c->norm = xstrdup("pre");
    c->pooling = xstrdup("attention");
    c->text_column = 1;
    c->class_weights = xstrdup("none");
    c->window = 10;
    c->attention_dropout = c->activation_dropout = -1;  /* model.dropout's */
    c->batch_size = 64;
    c->epochs = 10;
    c->max_steps = 0;
    c->max_minutes = 0;
    c->batch_tokens = 0;
    c->accumulate = 1;
    c->learning_rate = 0.001;
    c->adam_beta1 = 0.9;   /* torch.optim.Adam's: as float, exactly the values nmt used before the keys */
    c->adam_beta2 = 0.999;
    c->adam_eps = 1e-8;
    c->clip_norm = 5.0;
    c->seed = 1;
    c->threads = 2;
    c->workers = 1;
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
    c->bucket = 0;
    c->dir = xstrdup("runs/default");
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

static void strings_free(ConfigStrings *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static int strings_equal(const ConfigStrings *a, const ConfigStrings *b)
{
    if (a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i])) return 0;
    return 1;
}

static void strings_copy(ConfigStrings *to, const ConfigStrings *from)
{
    strings_free(to);
    to->v = xmalloc(sizeof(char *) * (from->n ? from->n : 1));
    for (int i = 0; i < from->n; i++)
        to->v[i] = xstrdup(from->v[i]);
    to->n = from->n;
}

/* A KEY_STRINGS value: an array of distinct strings, each a protected symbol
 * (user_symbol_problem), at most k->max of them. */
static int set_strings(ConfigStrings *l, const KeySpec *k, const cJSON *item, const char *source, Error *err)
{
    const char *sec = k->section, *name = k->name;
    if (!cJSON_IsArray(item))
        return error_set(err, "%s: %s.%s must be an array of strings, such as [\"<2da>\", \"{name}\"]", source, sec,
                         name);
    int n = cJSON_GetArraySize(item);
    if (n > k->max) return error_set(err, "%s: %s.%s holds %d strings, at most %.0f", source, sec, name, n, k->max);
    ConfigStrings got = {xmalloc(sizeof(char *) * (n ? n : 1)), 0};
    const cJSON *e;
    cJSON_ArrayForEach(e, item) {
        char why[ERROR_LEN / 2];
        int status = 0;
        if (!cJSON_IsString(e)) status = error_set(err, "%s: %s.%s[%d] must be a string", source, sec, name, got.n);
        else if (user_symbol_problem(e->valuestring, why, sizeof why))
            status = error_set(err, "%s: %s.%s[%d]: %s", source, sec, name, got.n, why);
        for (int j = 0; status == 0 && j < got.n; j++)
            if (!strcmp(got.v[j], e->valuestring))
                status = error_set(err, "%s: %s.%s[%d]: \"%s\" is given twice", source, sec, name, got.n,
                                   e->valuestring);
        if (status) {
            strings_free(&got);
            return -1;
        }
        got.v[got.n++] = xstrdup(e->valuestring);
    }
    strings_free(l);
    *l = got;
    return 0;
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
    case KEY_STRINGS:
        return set_strings((ConfigStrings *)field, k, item, source, err);
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

/* Reads text's keys over c; a person's (CONFIG_WRITTEN) are marked as given. */
static int parse_keys(Config *c, const char *text, const char *source, ConfigOrigin origin, Error *err)
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
            int i = 0;
            while (i < N_KEYS && (strcmp(keys[i].section, sec->string) || strcmp(keys[i].name, item->string)))
                i++;
            if (i == N_KEYS) {
                suggest(hint, sizeof hint, sec->string, item->string);
                error_set(err, "%s: unknown key %s.%s%s", source, sec->string, item->string, hint);
                goto done;
            }
            if (set_key(c, &keys[i], item, source, err)) goto done;
            if (origin == CONFIG_WRITTEN) c->given[i] = CONFIG_GIVEN_FILE;
        }
    }
    status = 0;
done:
    cJSON_Delete(root);
    return status;
}

/* ---------------------------------------------------------------- the rules */

/* A double key's value: its own, or for an unset one that falls back, the other key's. */
static double key_double(const Config *c, const KeySpec *k)
{
    double v = *(const double *)((const char *)c + k->offset);
    return k->falls_back && v < 0 ? *(const double *)((const char *)c + k->fallback) : v;
}

/* A key's value as text for messages: as config_to_json writes it, strings unquoted. */
static void value_text(const Config *c, const KeySpec *k, char *out, size_t len)
{
    const char *field = (const char *)c + k->offset;
    switch (k->type) {
    case KEY_INT: snprintf(out, len, "%d", *(const int *)field); break;
    case KEY_LONG: snprintf(out, len, "%ld", *(const long *)field); break;
    case KEY_DOUBLE: {
        double v = key_double(c, k);
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
    case KEY_STRINGS: {  /* as JSON: ["<2da>", "<b>"] */
        const ConfigStrings *l = (const ConfigStrings *)field;
        size_t used = (size_t)snprintf(out, len, "[");
        for (int i = 0; i < l->n && used < len; i++)
            used += (size_t)snprintf(out + used, len - used, "%s\"%s\"", i ? ", " : "", l->v[i]);
        if (used < len) snprintf(out + used, len - used, "]");
        break;
    }
    }
}

/* "model.attention is "bahdanau"" for a rule's message: strings quoted, an unset path
 * "unset". */
static void key_is(const Config *c, const char *full, char *out, size_t len)
{
    const KeySpec *k = &keys[key_index(full)];
    char v[128];
    value_text(c, k, v, sizeof v);
    if (k->type == KEY_STRING && !*(char *const *)((const char *)c + k->offset)) snprintf(out, len, "%s is unset", full);
    else if (k->type == KEY_STRING) snprintf(out, len, "%s is \"%s\"", full, v);
    else snprintf(out, len, "%s is %s", full, v);
}

void config_model_dims(const Config *c, ModelDims *d)
{
    const ModelFamily *f = model_family_named(c->type);  /* config_check has checked the name */
    *d = (ModelDims){.embed = c->embed, .hidden = c->hidden, .cell = strcmp(c->cell, "lstm") ? CELL_GRU : CELL_LSTM,
                     .layers = c->layers, .bidirectional = c->bidirectional,
                     .attention = attention_kind(c->attention), .input_feed = c->input_feed, .window = c->window,
                     .scaled = c->scaled, .tie_embeddings = c->tie_embeddings, .type = f ? (int)f->type : -1,
                     .heads = c->heads, .ff = c->ff, .activation = strcmp(c->activation, "gelu") ? ACT_RELU : ACT_GELU,
                     .norm = strcmp(c->norm, "post") ? NORM_PRE : NORM_POST, .enc_layers = c->encoder_layers,
                     .dec_layers = c->decoder_layers, .share_src_emb = c->tie_embeddings && c->joint_vocab,
                     .pooling = pooling_kind(c->pooling), .bag_of_words = c->bag_of_words};
    if (f) f->settle_dims(d);  /* what the family reads of them */
}

/* The rules about the keys outside the model section, as model.h describes the model's
 * (ModelRule), over a Config. */
typedef struct {
    RuleKind kind;
    const char *key;
    const char *depends[2];
    int (*holds)(const Config *c);
    const char *text, *remedy;
} ConfigRule;

/* Validation pairs come from data.valid or data.valid_fraction of the training file.
 * (A fraction of a small file can still round to no pairs; only what the config alone
 * decides counts here.) */
static int has_validation(const Config *c) { return c->valid || c->valid_fraction > 0; }
static int without_valid(const Config *c) { return !c->valid; }
static int bpe(const Config *c) { return !strcmp(c->tokenizer, "bpe"); }
static int presegmented(const Config *c) { return !strcmp(c->tokenizer, "none"); }
static int sentencepiece(const Config *c) { return !strcmp(c->tokenizer, "spm"); }
static int spm_trained(const Config *c) { return !c->spm_model; }
static int plateau(const Config *c) { return !strcmp(c->lr_schedule, "plateau"); }
static int shuffled(const Config *c) { return !c->bucket; }
static int linear_decay(const Config *c) { return !strcmp(c->teacher_forcing_decay, "linear"); }
static int decays_down(const Config *c) { return !linear_decay(c) || c->teacher_forcing_final <= c->teacher_forcing; }
static int from_model(const Config *c) { return c->init_from != NULL; }
static int bleu_measured(const Config *c) { return strcmp(c->best_metric, "bleu") || c->valid_bleu_max > 0; }
static int classifying(const Config *c)
{
    const ModelFamily *f = model_family_named(c->type);
    return f && f->task == MODEL_CLASSIFIES;
}
/* data.max_vocab counts the four specials: 1 to 4 leaves room for no word. */
static int room_for_words(const Config *c) { return c->max_vocab == 0 || c->max_vocab > 4; }
static int translating(const Config *c) { return !classifying(c); }
/* The Transformer's dropout keys apply to the family that reads the Transformer's keys. */
static int transformer_model(const Config *c)
{
    const ModelFamily *f = model_family_named(c->type);
    return f && (f->keys & MODEL_KEYS_TRANSFORMER);
}
/* Scheduled sampling feeds the recurrent decoder its own words; the Transformer's
 * decoder reads the gold previous words only (all positions at once). */
static int recurrent_or_classifier(const Config *c) { return strcmp(c->type, "transformer") != 0; }
/* (A label column of 0, the last, is checked line by line: tsv_read_labelled.) */
static int label_not_text(const Config *c) { return !classifying(c) || c->label_column != c->text_column; }
/* best_metric accuracy is a classifier's, bleu a translator's. */
static int metric_fits(const Config *c)
{
    return classifying(c) ? strcmp(c->best_metric, "bleu") != 0 : strcmp(c->best_metric, "accuracy") != 0;
}

#define VALIDATION {"data.valid", "data.valid_fraction"}, has_validation
#define GIVE_VALIDATION "give data.valid or a data.valid_fraction above 0"
#define CLASSIFIER_ONLY(key) \
    {RULE_APPLIES, key, {"model.type"}, classifying, key " applies only to classifiers", \
     "set model.type to \"classifier\""}
#define TRANSLATION_ONLY(key) \
    {RULE_APPLIES, key, {"model.type"}, translating, key " applies only to translation models", \
     "set model.type to \"rnn\" or \"transformer\""}
#define TRANSFORMER_ONLY(key) \
    {RULE_APPLIES, key, {"model.type"}, transformer_model, key " applies only to the Transformer", \
     "set model.type to \"transformer\""}
static const ConfigRule config_rules[] = {
    TRANSFORMER_ONLY("model.attention_dropout"),
    TRANSFORMER_ONLY("model.activation_dropout"),
    CLASSIFIER_ONLY("data.text_column"),
    CLASSIFIER_ONLY("data.label_column"),
    CLASSIFIER_ONLY("train.class_weights"),
    {RULE_VALUE, "data.label_column", {"data.text_column"}, label_not_text,
     "data.label_column must not be data.text_column: a classifier would learn each label from itself", NULL},
    TRANSLATION_ONLY("data.max_len"),
    TRANSLATION_ONLY("data.joint_vocab"),
    TRANSLATION_ONLY("data.subword_format"),
    TRANSLATION_ONLY("train.valid_bleu_max"),
    TRANSLATION_ONLY("train.teacher_forcing"),
    TRANSLATION_ONLY("train.teacher_forcing_decay"),
    TRANSLATION_ONLY("train.teacher_forcing_final"),
#define RECURRENT_ONLY(key) \
    {RULE_APPLIES, key, {"model.type"}, recurrent_or_classifier, \
     key " applies only to recurrent translation models (the Transformer's decoder reads the gold previous words)", \
     "set model.type to \"rnn\""}
    RECURRENT_ONLY("train.teacher_forcing"),
    RECURRENT_ONLY("train.teacher_forcing_decay"),
    RECURRENT_ONLY("train.teacher_forcing_final"),
#undef RECURRENT_ONLY
    {RULE_VALUE, "train.best_metric", {"model.type"}, metric_fits,
     "train.best_metric must be loss or accuracy for a classifier, loss or bleu for a translation model", NULL},
    {RULE_VALUE, "data.max_vocab", {NULL}, room_for_words,
     "data.max_vocab counts the 4 special tokens (<pad>, <unk>, <sos>, <eos>): at most 4 makes vocabularies of "
     "4 entries, the specials alone, a model that can say nothing; give 5 or more, or 0 for no limit", NULL},
    {RULE_APPLIES, "data.valid_fraction", {"data.valid"}, without_valid,
     "data.valid_fraction applies only without data.valid", "remove data.valid"},
    {RULE_APPLIES, "data.bpe_merges", {"data.tokenizer"}, bpe, "data.bpe_merges applies only to the bpe tokenizer",
     "set data.tokenizer to \"bpe\""},
    {RULE_APPLIES, "data.subword_format", {"data.tokenizer"}, presegmented,
     "data.subword_format applies only to the none tokenizer (text segmented elsewhere)",
     "set data.tokenizer to \"none\""},
    {RULE_APPLIES, "data.spm_type", {"data.tokenizer"}, sentencepiece, "data.spm_type applies only to the spm tokenizer",
     "set data.tokenizer to \"spm\""},
    {RULE_APPLIES, "data.spm_type", {"data.spm_model"}, spm_trained,
     "data.spm_type applies only to a SentencePiece model nmt trains (without data.spm_model)",
     "remove data.spm_model"},
    {RULE_APPLIES, "data.spm_vocab_size", {"data.tokenizer"}, sentencepiece,
     "data.spm_vocab_size applies only to the spm tokenizer", "set data.tokenizer to \"spm\""},
    {RULE_APPLIES, "data.spm_vocab_size", {"data.spm_model"}, spm_trained,
     "data.spm_vocab_size applies only to a SentencePiece model nmt trains (without data.spm_model)",
     "remove data.spm_model"},
    {RULE_APPLIES, "data.spm_model", {"data.tokenizer"}, sentencepiece, "data.spm_model applies only to the spm tokenizer",
     "set data.tokenizer to \"spm\""},
    {RULE_APPLIES, "train.batch_tokens", {"train.bucket"}, shuffled,
     "train.batch_tokens applies only to shuffled batches", "set train.bucket to false"},
    {RULE_APPLIES, "train.lr_decay", {"train.lr_schedule"}, plateau,
     "train.lr_decay applies only to the plateau schedule", "set train.lr_schedule to \"plateau\""},
    {RULE_APPLIES, "train.patience", {"train.lr_schedule"}, plateau,
     "train.patience applies only to the plateau schedule", "set train.lr_schedule to \"plateau\""},
    {RULE_APPLIES, "train.validate_every", VALIDATION, "train.validate_every applies only with validation pairs",
     GIVE_VALIDATION},
    {RULE_APPLIES, "train.valid_bleu_max", VALIDATION, "train.valid_bleu_max applies only with validation pairs",
     GIVE_VALIDATION},
    {RULE_APPLIES, "train.best_metric", VALIDATION, "train.best_metric applies only with validation pairs",
     GIVE_VALIDATION},
    {RULE_VALUE, "train.best_metric", {"train.valid_bleu_max"}, bleu_measured,
     "train.best_metric \"bleu\" needs validation BLEU, which train.valid_bleu_max 0 turns off", NULL},
    {RULE_APPLIES, "train.early_stop", VALIDATION, "train.early_stop applies only with validation pairs",
     GIVE_VALIDATION},
    {RULE_APPLIES, "train.extend_vocab", {"train.init_from"}, from_model,
     "train.extend_vocab applies only with train.init_from (a model to fine-tune)",
     "give train.init_from (nmt train --init-from MODEL.bin)"},
    {RULE_APPLIES, "train.teacher_forcing_final", {"train.teacher_forcing_decay"}, linear_decay,
     "train.teacher_forcing_final applies only to the linear teacher-forcing decay",
     "set train.teacher_forcing_decay to \"linear\""},
    {RULE_VALUE, "train.teacher_forcing_final", {"train.teacher_forcing"}, decays_down,
     "train.teacher_forcing_final must not exceed train.teacher_forcing: the linear decay lowers it", NULL},
};
#undef VALIDATION
#undef GIVE_VALIDATION
#undef CLASSIFIER_ONLY
#undef TRANSLATION_ONLY
#undef TRANSFORMER_ONLY
#define N_CONFIG_RULES (int)(sizeof config_rules / sizeof config_rules[0])

/* One rule of either table evaluated on a config: config_check, config_applies and
 * config_to_json walk both tables through it, the model's first. */
typedef struct {
    RuleKind kind;
    const char *key;
    const char *const *depends;
    int holds, in_use;
    const char *text, *remedy;
} Rule;

static int n_rules(void)
{
    int n;
    model_rules(&n);
    return n + N_CONFIG_RULES;
}

static Rule rule_at(int i, const Config *c)
{
    int n_model;
    const ModelRule *mr = model_rules(&n_model);
    if (i < n_model) {
        const ModelRule *r = &mr[i];
        ModelDims d;
        config_model_dims(c, &d);
        int holds = r->holds(&d);
        return (Rule){r->kind, r->key, r->depends, holds, !holds && r->in_use && r->in_use(&d), r->text, r->remedy};
    }
    const ConfigRule *r = &config_rules[i - n_model];
    return (Rule){r->kind, r->key, r->depends, r->holds(c), 0, r->text, r->remedy};
}

int config_given(const Config *c, const char *key)
{
    int i = key_index(key);
    return i < 0 ? -1 : c->given[i] != 0;
}

int config_given_by(const Config *c, const char *key)
{
    int i = key_index(key);
    return i < 0 ? 0 : c->given[i];
}

int config_applies(const Config *c, const char *key)
{
    for (int i = 0; i < n_rules(); i++) {
        Rule r = rule_at(i, c);
        if (r.kind == RULE_APPLIES && !r.holds && !strcmp(r.key, key)) return 0;
    }
    return 1;
}

int config_applies_only(int i, const char **key, const char **text)
{
    int n_model;
    const ModelRule *mr = model_rules(&n_model);
    for (int j = 0; j < n_model; j++)
        if (mr[j].kind == RULE_APPLIES && i-- == 0) {
            *key = mr[j].key;
            *text = mr[j].text;
            return 1;
        }
    for (int j = 0; j < N_CONFIG_RULES; j++)
        if (config_rules[j].kind == RULE_APPLIES && i-- == 0) {
            *key = config_rules[j].key;
            *text = config_rules[j].text;
            return 1;
        }
    return 0;
}

/* The message of a broken rule: its text, the values that break it, and for a key that
 * does not apply, what to do. */
static int rule_error(const Config *c, const Rule *r, const char *source, Error *err)
{
    char values[400] = "", one[256];
    size_t used = 0;
    const char *shown[3] = {r->kind == RULE_VALUE ? r->key : r->depends[0],
                            r->kind == RULE_VALUE ? r->depends[0] : r->depends[1],
                            r->kind == RULE_VALUE ? r->depends[1] : NULL};
    for (int i = 0; i < 3 && shown[i]; i++) {
        key_is(c, shown[i], one, sizeof one);
        used += (size_t)snprintf(values + used, sizeof values - used, "%s%s", i ? ", " : "", one);
        if (used >= sizeof values) break;
    }
    if (r->kind == RULE_VALUE) return error_set(err, "%s: %s (%s)", source, r->text, values);
    return error_set(err, "%s: %s (%s): remove it, or %s", source, r->text, values, r->remedy);
}

/* Whether --set gave key (NULL: no). */
static int set_gave(const Config *c, const char *key)
{
    return key && config_given(c, key) > 0 && c->given[key_index(key)] == CONFIG_GIVEN_SET;
}

int config_check(const Config *c, const char *source, Error *err)
{
    if (!c->train) return error_set(err, "%s: data.train is required (a TSV file of sentence pairs)", source);
    for (int i = 0; i < n_rules(); i++) {
        Rule r = rule_at(i, c);
        if (r.holds) continue;
        int given = config_given(c, r.key) > 0 ? c->given[key_index(r.key)] : 0;
        /* A value rule --set had a part in (its key or one it depends on), or a key --set
         * gave where it does not apply: the message names --set, and it is a usage error. */
        int by_set = r.kind == RULE_VALUE ? set_gave(c, r.key) || set_gave(c, r.depends[0]) ||
                                                (r.depends[0] && set_gave(c, r.depends[1]))
                                          : given == CONFIG_GIVEN_SET;
        if (by_set) {
            rule_error(c, &r, "--set", err);
            return -2;
        }
        if (r.kind == RULE_VALUE) return rule_error(c, &r, source, err);
        if (given) return rule_error(c, &r, source, err);
        /* Not given, but switched on: a recorded config describing no valid model. */
        if (r.in_use) return rule_error(c, &r, source, err);
    }
    return 0;
}

int config_parse_keys(Config *c, const char *text, const char *source, ConfigOrigin origin, Error *err)
{
    return parse_keys(c, text, source, origin, err);
}

int config_parse(Config *c, const char *text, const char *source, Error *err)
{
    return parse_keys(c, text, source, CONFIG_RECORDED, err) || config_check(c, source, err) ? -1 : 0;
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
    int failed = ferror(f), why = errno ? errno : EIO;
    fclose(f);
    text[len] = 0;
    if (failed) {
        free(text);
        error_set(err, "%s: read error: %s", path, strerror(why));
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
    return config_load_keys(c, path, CONFIG_WRITTEN, err) || config_check(c, path, err) ? -1 : 0;
}

int config_load_keys(Config *c, const char *path, ConfigOrigin origin, Error *err)
{
    char *text = read_config_text(path, err);
    if (!text) return -1;
    int status = parse_keys(c, text, path, origin, err);
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
    int i = 0;
    while (i < N_KEYS && (strcmp(keys[i].section, section) || strcmp(keys[i].name, name)))
        i++;
    if (i == N_KEYS) {
        char hint[200];
        suggest(hint, sizeof hint, section, name);
        return error_set(err, "--set: unknown key %s.%s%s", section, name, hint);
    }
    /* The value as JSON when it is JSON (32, 0.5, true, "x"; an array for a list), else
     * as a string. */
    const char *value = eq + 1;
    cJSON *item = cJSON_Parse(value);
    if (!item || cJSON_IsObject(item) || (cJSON_IsArray(item) && keys[i].type != KEY_STRINGS) || cJSON_IsNull(item)) {
        cJSON_Delete(item);
        item = cJSON_CreateString(value);
    }
    int status = set_key(c, &keys[i], item, "--set", err);
    cJSON_Delete(item);
    if (status == 0) c->given[i] = CONFIG_GIVEN_SET;
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

/* "section.name" of a row. */
static void full_name(const KeySpec *k, char *out, size_t len) { snprintf(out, len, "%s.%s", k->section, k->name); }

char *config_to_json(const Config *c)
{
    cJSON *root = cJSON_CreateObject();
    char name[160];
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
        cJSON *sec = cJSON_AddObjectToObject(root, sections[s]);
        for (int i = 0; i < N_KEYS; i++) {
            const KeySpec *k = &keys[i];
            if (strcmp(k->section, sections[s])) continue;
            /* A key that does not apply is left out: given back to nmt train, it would be
             * refused. */
            full_name(k, name, sizeof name);
            if (!config_applies(c, name)) continue;
            const char *field = (const char *)c + k->offset;
            switch (k->type) {
            case KEY_INT: add_exact_number(sec, k->name, *(const int *)field, 1); break;
            case KEY_LONG: add_exact_number(sec, k->name, (double)*(const long *)field, 1); break;
            case KEY_DOUBLE: add_exact_number(sec, k->name, key_double(c, k), 0); break;
            case KEY_BOOL: cJSON_AddBoolToObject(sec, k->name, *(const int *)field); break;
            case KEY_STRING: {
                /* An unset path (data.valid) is left out rather than written as null,
                 * which config_parse would refuse: the output must load back. */
                const char *v = *(char *const *)field;
                if (v) cJSON_AddStringToObject(sec, k->name, v);
                break;
            }
            case KEY_STRINGS: {  /* an empty list is left out: configs without one read as before */
                const ConfigStrings *l = (const ConfigStrings *)field;
                if (l->n) cJSON_AddItemToObject(sec, k->name, cJSON_CreateStringArray((const char *const *)l->v, l->n));
                break;
            }
            }
        }
    }
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    return out;
}

int config_difference(const Config *a, const Config *b, const char *const *skip, char *key, char *a_value,
                      char *b_value, size_t len)
{
    for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++)
        for (int i = 0; i < N_KEYS; i++) {
            const KeySpec *k = &keys[i];
            if (strcmp(k->section, sections[s])) continue;
            char name[160];
            full_name(k, name, sizeof name);
            int skipped = 0;
            for (int j = 0; skip && skip[j]; j++)
                skipped |= !strcmp(skip[j], name);
            /* A key that applies to neither does nothing in either: a config recorded with
             * every key (before config_to_json left them out) agrees with one without it. */
            if (skipped || (!config_applies(a, name) && !config_applies(b, name))) continue;
            /* Compared as text: exact for every type (doubles are written to round-trip);
             * lists element by element (their text may not fit). */
            value_text(a, k, a_value, len);
            value_text(b, k, b_value, len);
            int differ = k->type == KEY_STRINGS ? !strings_equal((const ConfigStrings *)((const char *)a + k->offset),
                                                                 (const ConfigStrings *)((const char *)b + k->offset))
                                                : strcmp(a_value, b_value) != 0;
            if (differ) {
                snprintf(key, len, "%s", name);
                return 1;
            }
        }
    return 0;
}

/* The data keys that choose the data rather than describe how a model reads it: a run
 * from train.init_from takes them from its own config. (data.min_count and
 * data.max_vocab build a vocabulary, which such a run takes from the model: moot,
 * unless train.extend_vocab grows it.) */
static const char *const data_choice_keys[] = {"data.train", "data.valid", "data.valid_fraction", "data.max_len",
                                               "data.max_line_bytes", "data.min_count", "data.max_vocab", NULL};
static const char *const vocabulary_keys[] = {"data.min_count", "data.max_vocab", NULL};

static int is_model_key(const KeySpec *k, const char *name)
{
    if (!strcmp(k->section, "model")) return 1;
    if (strcmp(k->section, "data")) return 0;
    for (int j = 0; data_choice_keys[j]; j++)
        if (!strcmp(data_choice_keys[j], name)) return 0;
    return 1;
}

int config_adopt_model(Config *c, const Config *model, const char *source, const char *model_path, Error *err)
{
    Config defaults;
    config_defaults(&defaults);
    /* With train.extend_vocab they choose the units added to the model's vocabularies. */
    for (int i = 0; !c->extend_vocab && vocabulary_keys[i]; i++) {
        const KeySpec *k = &keys[key_index(vocabulary_keys[i])];
        char given[128], otherwise[128];
        value_text(c, k, given, sizeof given);
        value_text(&defaults, k, otherwise, sizeof otherwise);
        int by = config_given_by(c, vocabulary_keys[i]);
        if (!by || !strcmp(given, otherwise)) continue;
        error_set(err, "%s: %s %s builds a vocabulary, and a run from train.init_from keeps the model's (%s): remove "
                       "it (or grow the model's with train.extend_vocab)", by == CONFIG_GIVEN_SET ? "--set" : source, vocabulary_keys[i], given, model_path);
        config_free(&defaults);
        return by == CONFIG_GIVEN_SET ? -2 : -1;
    }
    config_free(&defaults);
    for (int i = 0; i < N_KEYS; i++) {
        const KeySpec *k = &keys[i];
        char name[160], was[128], now[128];
        full_name(k, name, sizeof name);
        if (!is_model_key(k, name)) continue;
        value_text(model, k, was, sizeof was);
        value_text(c, k, now, sizeof now);
        if (c->given[i] && k->type != KEY_STRINGS && config_applies(model, name) && strcmp(was, now)) {
            int by_set = c->given[i] == CONFIG_GIVEN_SET;
            error_set(err, "%s: %s: the model %s has %s, %s says %s (train.init_from keeps the model's architecture "
                           "and text options: leave the key out or give the model's value)",
                      by_set ? "--set" : source, name, model_path, was, by_set ? "--set" : "the config", now);
            return by_set ? -2 : -1;
        }
        char *to = (char *)c + k->offset;
        const char *from = (const char *)model + k->offset;
        if (k->type == KEY_STRINGS && c->given[i] && config_applies(model, name) &&
            !strings_equal((const ConfigStrings *)to, (const ConfigStrings *)from)) {
            int by_set = c->given[i] == CONFIG_GIVEN_SET;
            error_set(err, "%s: %s: the model %s has other symbols than %s (train.init_from keeps the model's text "
                           "options: leave the key out or give the model's list)",
                      by_set ? "--set" : source, name, model_path, by_set ? "--set" : "the config");
            return by_set ? -2 : -1;
        }
        switch (k->type) {
        case KEY_INT: case KEY_BOOL: *(int *)to = *(const int *)from; break;
        case KEY_LONG: *(long *)to = *(const long *)from; break;
        case KEY_DOUBLE: *(double *)to = *(const double *)from; break;
        case KEY_STRING: {
            char **s = (char **)to;
            const char *v = *(char *const *)from;
            free(*s);
            *s = v ? xstrdup(v) : NULL;
            break;
        }
        case KEY_STRINGS: strings_copy((ConfigStrings *)to, (const ConfigStrings *)from); break;
        }
    }
    return config_check(c, source, err);
}

void config_free(Config *c)
{
    for (int i = 0; i < N_KEYS; i++)
        if (keys[i].type == KEY_STRING) {
            char **s = (char **)((char *)c + keys[i].offset);
            free(*s);
            *s = NULL;
        } else if (keys[i].type == KEY_STRINGS) {
            strings_free((ConfigStrings *)((char *)c + keys[i].offset));
        }
}
