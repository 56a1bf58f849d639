/* request.c — a request's JSON body into lines and options (request.h). */
#include "serve/request.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "decode/decode.h" /* defines: LENGTH_AVERAGE */

/* nmt translate's default --length-penalty (cli/cmd_translate.c's translate_defaults):
 * a request that leaves it out is translated as the command line translates. */
#define DEFAULT_LENGTH_PENALTY 0.6f

/* ---------------------------------------------------------------- the keys */

typedef enum {
    KEY_INT,     /* an integer from lo to hi, into an int */
    KEY_NUMBER,  /* a number from lo to hi, or the word `word` (read as word_value), into a float */
    KEY_FLAG,    /* true or false, into an int */
} KeyKind;

/* One option key of a request: where its value goes (an offset into TranslateOptions
 * for /translate, into Request for /classify) and what it may be. */
typedef struct {
    const char *key;
    KeyKind kind;
    size_t at;
    double lo, hi;
    const char *word;
    float word_value;
} RequestKey;

/* /translate's options: nmt translate's of the same name and range. */
static const RequestKey translate_keys[] = {
    {"beam", KEY_INT, offsetof(TranslateOptions, beam), .lo = 1, .hi = 100},
    {"nbest", KEY_INT, offsetof(TranslateOptions, nbest), .lo = 1, .hi = 100},
    {"length_penalty", KEY_NUMBER, offsetof(TranslateOptions, length_penalty), .lo = 0, .hi = 5, .word = "avg",
     .word_value = LENGTH_AVERAGE},
    {"max_len", KEY_INT, offsetof(TranslateOptions, max_len), .lo = 1, .hi = 10000},
    {"batch", KEY_INT, offsetof(TranslateOptions, batch), .lo = 1, .hi = 4096},
    {"attention", KEY_FLAG, offsetof(TranslateOptions, attention), .lo = 0, .hi = 1},
    {"heads", KEY_FLAG, offsetof(TranslateOptions, attention_heads), .lo = 0, .hi = 1},
    {"layer", KEY_INT, offsetof(TranslateOptions, align_layer), .lo = 1, .hi = MAX_LAYERS},
    {"replace_unk", KEY_FLAG, offsetof(TranslateOptions, replace_unk), .lo = 0, .hi = 1},
    {"ensemble", KEY_FLAG, offsetof(TranslateOptions, ensemble), .lo = 0, .hi = 1},
};

/* /classify's: nmt classify's --batch, and the attention pooling's weights. */
static const RequestKey classify_keys[] = {
    {"batch", KEY_INT, offsetof(Request, batch), .lo = 1, .hi = 4096},
    {"attention", KEY_FLAG, offsetof(Request, attention), .lo = 0, .hi = 1},
};

static int refuse(int status, char *msg, size_t len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(int status, char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, len, fmt, ap);
    va_end(ap);
    return status;
}

/* Reads value v of key k into base + k->at. REQUEST_OK or REQUEST_BAD with msg. */
static int read_key(const RequestKey *k, const cJSON *v, void *base, char *msg, size_t len)
{
    char *at = (char *)base + k->at;
    if (k->kind == KEY_FLAG) {
        if (!cJSON_IsBool(v)) return refuse(REQUEST_BAD, msg, len, "\"%s\" must be true or false", k->key);
        *(int *)at = cJSON_IsTrue(v);
        return REQUEST_OK;
    }
    if (k->word && cJSON_IsString(v) && !strcmp(v->valuestring, k->word)) {
        *(float *)at = k->word_value;
        return REQUEST_OK;
    }
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    int integral = k->kind == KEY_INT;
    if (!(x >= k->lo && x <= k->hi) || (integral && x != floor(x)))
        return refuse(REQUEST_BAD, msg, len, "\"%s\" must be %s from %g to %g%s%s", k->key,
                      integral ? "an integer" : "a number", k->lo, k->hi, k->word ? " or " : "", k->word ? k->word : "");
    if (integral) *(int *)at = (int)x;
    else *(float *)at = (float)x;
    return REQUEST_OK;
}

/* ---------------------------------------------------------------- the lines */

/* 1 if s[0..len) is UTF-8 without line breaks, else 0 with msg naming line i. */
static int good_line(const char *s, size_t len, int i, char *msg, size_t msg_len)
{
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(len - at), &cp);
        if (step < 0) return refuse(0, msg, msg_len, "text[%d] is not valid UTF-8 (byte %zu)", i, at), 0;
        if (cp == '\n' || cp == '\r')
            return refuse(0, msg, msg_len, "text[%d] holds a line break: send each line as a string of its own", i), 0;
        at += (size_t)step;
    }
    return 1;
}

/* "text": one string or an array of strings, into r->lines. */
static int read_lines(const cJSON *text, const RequestLimits *limits, Request *r, char *msg, size_t len)
{
    if (!text) return refuse(REQUEST_BAD, msg, len, "missing \"text\": a string or an array of strings");
    int n = cJSON_IsString(text) ? 1 : cJSON_IsArray(text) ? cJSON_GetArraySize(text) : -1;
    if (n < 0) return refuse(REQUEST_BAD, msg, len, "\"text\" must be a string or an array of strings");
    if (n > limits->max_lines)
        return refuse(REQUEST_TOO_LARGE, msg, len, "%d lines in one request; at most %d (nmt serve --max-lines)", n,
                      limits->max_lines);
    r->lines = xcalloc(n ? n : 1, sizeof(char *));
    const cJSON *item = cJSON_IsString(text) ? text : text->child;
    for (int i = 0; i < n; i++, item = item->next) {
        if (!cJSON_IsString(item)) return refuse(REQUEST_BAD, msg, len, "text[%d] must be a string", i);
        if (!good_line(item->valuestring, strlen(item->valuestring), i, msg, len)) return REQUEST_BAD;
        r->lines[r->n++] = xstrdup(item->valuestring);
    }
    return REQUEST_OK;
}

/* ---------------------------------------------------------------- the model */

/* The first model that classifies (or translates, classify 0), or -1. */
static int first_model(const Engine *e, int classify)
{
    for (int i = 0; i < engine_models(e); i++)
        if (model_classifies(&engine_model_file(e, i)->model.dims) == classify) return i;
    return -1;
}

static int read_model(const cJSON *name, int classify, const Engine *e, Request *r, char *msg, size_t len)
{
    const char *task = classify ? "classifier" : "translation model";
    if (!name) {
        r->model = first_model(e, classify);
        if (r->model < 0)
            return refuse(REQUEST_BAD, msg, len, "no %s is served (GET /models lists the models)", task);
        return REQUEST_OK;
    }
    if (!cJSON_IsString(name)) return refuse(REQUEST_BAD, msg, len, "\"model\" must be a model's name (GET /models)");
    r->model = engine_find(e, name->valuestring);
    if (r->model < 0)
        return refuse(REQUEST_BAD, msg, len, "unknown model \"%.200s\" (GET /models lists the models)",
                      name->valuestring);
    if (model_classifies(&engine_model_file(e, r->model)->model.dims) != classify)
        return refuse(REQUEST_BAD, msg, len, "\"%.200s\" is not a %s: POST /%s", name->valuestring, task,
                      classify ? "translate" : "classify");
    return REQUEST_OK;
}

/* What the options ask of the model, as nmt translate checks it. */
static int check_translate(const Engine *e, Request *r, int model_given, char *msg, size_t len)
{
    TranslateOptions *o = &r->opt;
    const ModelDims *d = &engine_model_file(e, r->model)->model.dims;
    if (o->ensemble && model_given)
        return refuse(REQUEST_BAD, msg, len, "\"ensemble\" decodes with every model: leave \"model\" out");
    if (o->ensemble && (engine_models(e) < 2 || !engine_can_ensemble(e)))
        return refuse(REQUEST_BAD, msg, len, "\"ensemble\": the served models cannot decode together (it takes two "
                                             "or more translation models sharing their vocabularies and text options)");
    if ((o->attention_heads || o->align_layer) && !model_family(d)->attention_heads)
        return refuse(REQUEST_BAD, msg, len, "\"%s\" applies only to a Transformer; a recurrent model has one attention",
                      o->attention_heads ? "heads" : "layer");
    if (o->attention_heads && o->ensemble)
        return refuse(REQUEST_BAD, msg, len, "\"heads\" draws one model's heads; it does not combine with \"ensemble\"");
    if (o->align_layer > d->dec_layers)
        return refuse(REQUEST_BAD, msg, len, "\"layer\": %d: the model has %d decoder layer%s", o->align_layer,
                      d->dec_layers, d->dec_layers > 1 ? "s" : "");
    if (o->attention_heads) o->attention = 1;  /* the heads' maps come with the tokens */
    if (o->ensemble) o->model = 0;
    else o->model = r->model;
    return REQUEST_OK;
}

int request_parse(const char *body, size_t len, int classify, const Engine *e, const RequestLimits *limits,
                  Request *r, char *msg, size_t msg_len)
{
    *r = (Request){.opt = {.length_penalty = DEFAULT_LENGTH_PENALTY, .batch = limits->batch}, .batch = limits->batch};
    /* (Not cJSON_GetErrorPtr: a global, shared by the requests parsed at once.) */
    const char *end = body;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    int status = REQUEST_OK, model_given = 0;
    const cJSON *text = NULL;
    if (!root) status = refuse(REQUEST_BAD, msg, msg_len, "the body is not JSON (byte %ld)", (long)(end - body));
    else if (!cJSON_IsObject(root)) status = refuse(REQUEST_BAD, msg, msg_len, "the body must be a JSON object");
    while (root && end < body + len && strchr(" \t\r\n", *end) && *end)
        end++;
    if (status == REQUEST_OK && end < body + len)
        status = refuse(REQUEST_BAD, msg, msg_len, "the body goes on after its JSON object (byte %ld)", (long)(end - body));
    const RequestKey *keys = classify ? classify_keys : translate_keys;
    int n_keys = classify ? (int)(sizeof classify_keys / sizeof *classify_keys)
                          : (int)(sizeof translate_keys / sizeof *translate_keys);
    void *base = classify ? (void *)r : (void *)&r->opt;
    const cJSON *model = NULL;
    for (const cJSON *v = status ? NULL : root->child; v && status == REQUEST_OK; v = v->next) {
        if (!strcmp(v->string, "text")) {
            text = v;
            continue;
        }
        if (!strcmp(v->string, "model")) {
            model = v;
            model_given = 1;
            continue;
        }
        int k = 0;
        while (k < n_keys && strcmp(keys[k].key, v->string))
            k++;
        if (k == n_keys) status = refuse(REQUEST_BAD, msg, msg_len, "unknown key \"%.100s\"", v->string);
        else status = read_key(&keys[k], v, base, msg, msg_len);
    }
    if (status == REQUEST_OK) status = read_model(model, classify, e, r, msg, msg_len);
    if (status == REQUEST_OK && !classify) status = check_translate(e, r, model_given, msg, msg_len);
    if (status == REQUEST_OK) status = read_lines(text, limits, r, msg, msg_len);
    cJSON_Delete(root);
    if (status != REQUEST_OK) request_free(r);
    return status;
}

void request_free(Request *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->lines[i]);
    free(r->lines);
    r->lines = NULL;
    r->n = 0;
}
