/* engine.c — nmt serve's adapter over the decoding workers (engine.h). */
#include "serve/engine.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/testhook.h"   /* defines: testhook_serve_gate */
#include "decode/classify.h" /* defines: worker_classify, CLASSIFY_BATCH */
#include "text/vocab.h"      /* defines: vocab_class_label */

struct Engine {
    Workers *workers;
    char *const *names;     /* (n_models) the caller's */
    int n_models, can_ensemble;
    /* The gate in front of workers_borrow, which waits without limit: free counts the
     * workers not lent, waiting the requests queued for one. */
    pthread_mutex_t lock;
    pthread_cond_t returned;   /* on CLOCK_MONOTONIC, as now_seconds */
    int free, waiting, max_waiting;
};

Engine *engine_new(Workers *w, char *const *names, int max_waiting)
{
    Engine *e = xcalloc(1, sizeof *e);
    e->workers = w;
    e->names = names;
    e->n_models = workers_models(w);
    e->free = workers_count(w);
    e->max_waiting = max_waiting;
    e->can_ensemble = 1;
    for (int i = 0; i < e->n_models; i++) {
        char why[ERROR_LEN];
        const ModelFile *mf = workers_model(w, i);
        if (model_classifies(&mf->model.dims) ||
            (i > 0 && modelfile_compatible(workers_model(w, 0), mf, 0, why, sizeof why)))
            e->can_ensemble = 0;
    }
    pthread_mutex_init(&e->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&e->returned, &attr);
    pthread_condattr_destroy(&attr);
    return e;
}

void engine_free(Engine *e)
{
    if (!e) return;
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->returned);
    free(e);
}

int engine_models(const Engine *e) { return e->n_models; }
const char *engine_model_name(const Engine *e, int i) { return e->names[i]; }
const ModelFile *engine_model_file(const Engine *e, int i) { return workers_model(e->workers, i); }
int engine_can_ensemble(const Engine *e) { return e->can_ensemble; }

int engine_find(const Engine *e, const char *name)
{
    for (int i = 0; i < e->n_models; i++)
        if (!strcmp(e->names[i], name)) return i;
    return -1;
}

void engine_load(Engine *e, int *workers, int *busy, int *waiting)
{
    pthread_mutex_lock(&e->lock);
    *workers = workers_count(e->workers);
    *busy = *workers - e->free;
    *waiting = e->waiting;
    pthread_mutex_unlock(&e->lock);
}

/* ---------------------------------------------------------------- borrowing with limits */

/* A worker, once one is free, unless max_waiting requests already wait (ENGINE_BUSY)
 * or none comes free by deadline (ENGINE_WAITED). */
static EngineStatus borrow(Engine *e, double deadline, Worker **k)
{
    pthread_mutex_lock(&e->lock);
    if (e->free == 0 && e->waiting >= e->max_waiting) {
        pthread_mutex_unlock(&e->lock);
        return ENGINE_BUSY;
    }
    e->waiting++;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    double wait = deadline - now_seconds();
    if (wait < 0) wait = 0;
    until.tv_sec += (time_t)wait;
    until.tv_nsec += (long)((wait - floor(wait)) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    int timed_out = 0;
    while (e->free == 0 && !timed_out)
        timed_out = pthread_cond_timedwait(&e->returned, &e->lock, &until) == ETIMEDOUT;
    e->waiting--;
    if (e->free == 0) {
        pthread_mutex_unlock(&e->lock);
        return ENGINE_WAITED;
    }
    e->free--;
    pthread_mutex_unlock(&e->lock);
    /* One of the workers is ours now: workers_borrow does not wait. */
    *k = workers_borrow(e->workers);
    testhook_serve_gate();  /* NMT_SERVE_GATE: the tests' hold on a borrowed worker */
    return ENGINE_DONE;
}

static void give_back(Engine *e, Worker *k)
{
    workers_return(e->workers, k);
    pthread_mutex_lock(&e->lock);
    e->free++;
    pthread_cond_signal(&e->returned);
    pthread_mutex_unlock(&e->lock);
}

/* ---------------------------------------------------------------- results as JSON */

/* A float as a JSON number, or null where it is not finite (JSON has no infinity):
 * with digits > 0, that many significant digits; with 0, exactly (cJSON writes the
 * double the float widens to with as many digits as it takes to be read back the same,
 * so that a client printing it with %.6f gets nmt translate's digits). */
static cJSON *json_number(float x, int digits)
{
    if (!isfinite(x)) return cJSON_CreateNull();
    if (digits == 0) return cJSON_CreateNumber((double)x);
    char buf[40];
    snprintf(buf, sizeof buf, "%.*g", digits, (double)x);
    return cJSON_CreateRaw(buf);
}

static cJSON *json_strings(char *const *s, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
    return a;
}

/* A (rows, cols) matrix as rows of weights, six significant digits as --attention-json. */
static cJSON *json_matrix(const float *m, int rows, int cols)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < rows; i++) {
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; j < cols; j++)
            cJSON_AddItemToArray(row, json_number(m[(long)i * cols + j], 6));
        cJSON_AddItemToArray(a, row);
    }
    return a;
}

static void add_scores(cJSON *o, const Translation *t)
{
    cJSON_AddStringToObject(o, "text", t->text);
    cJSON_AddItemToObject(o, "score", json_number(t->score, 0));
    cJSON_AddItemToObject(o, "logprob", json_number(t->logprob, 0));
}

/* One line's object (engine.h): its hypotheses t[0 .. count) and what bad says. */
static cJSON *translation_json(const Translation *t, int count, int bad, const TranslateOptions *opt)
{
    cJSON *o = cJSON_CreateObject();
    add_scores(o, &t[0]);
    if (opt->nbest >= 1) {
        cJSON *list = cJSON_AddArrayToObject(o, "nbest");
        for (int j = 0; j < count; j++) {
            cJSON *h = cJSON_CreateObject();
            add_scores(h, &t[j]);
            cJSON_AddItemToArray(list, h);
        }
    }
    if (opt->attention) {
        cJSON *a = cJSON_AddObjectToObject(o, "attention");
        cJSON_AddItemToObject(a, "source", json_strings(t->src_tokens, t->n_src));
        cJSON_AddItemToObject(a, "output", json_strings(t->out_tokens, t->n_out));
        cJSON_AddItemToObject(a, "weights", json_matrix(t->attn, t->n_src ? t->n_out : 0, t->n_src));
        cJSON_AddNumberToObject(a, "layer", opt->align_layer);
        if (t->heads > 0) {
            cJSON *heads = cJSON_AddArrayToObject(a, "heads");
            for (int h = 0; h < t->heads; h++)
                cJSON_AddItemToArray(heads, json_matrix(t->head_attn + (long)h * t->n_out * t->n_src, t->n_out,
                                                        t->n_src));
        }
    }
    if (bad & TRANSLATE_CUT) {
        char w[96];
        snprintf(w, sizeof w, "longer than %d tokens: only the first %d translated", TRANSLATE_MAX_SOURCE,
                 TRANSLATE_MAX_SOURCE);
        cJSON_AddStringToObject(o, "warning", w);
    }
    return o;
}

/* ---------------------------------------------------------------- the requests */

EngineStatus engine_translate(Engine *e, char *const *lines, int n, const TranslateOptions *opt, double deadline,
                              cJSON *out)
{
    Worker *k;
    EngineStatus s = borrow(e, deadline, &k);
    if (s != ENGINE_DONE) return s;
    /* As translate_stream reads a file of these lines: windows of them sorted by
     * length into batches (translate_sorts), or batches as read. */
    int per_line = opt->nbest > 1 ? opt->nbest : 1, batch = opt->batch > 0 ? opt->batch : 1;
    int chunk = translate_window(opt);
    int m = n < chunk ? n : chunk;
    Translation *t = xmalloc(sizeof(Translation) * (m ? m : 1) * per_line);
    int *count = xmalloc(sizeof(int) * (m ? m : 1)), *bad = xmalloc(sizeof(int) * (m ? m : 1));
    int *order = xmalloc(sizeof(int) * (m ? m : 1));
    for (int start = 0; start < n; start += chunk) {
        int len = n - start < chunk ? n - start : chunk;
        translate_order(opt, lines + start, len, order);
        worker_translate_ordered(k, lines + start, NULL, start, order, len, batch, opt, t, count, bad);
        for (int i = 0; i < len; i++) {
            Translation *best = &t[(long)i * per_line];
            cJSON_AddItemToArray(out, translation_json(best, count[i], bad[i], opt));
            for (int j = 0; j < count[i]; j++)
                translation_free(&best[j]);
        }
    }
    free(order);
    give_back(e, k);
    free(t);
    free(count);
    free(bad);
    return ENGINE_DONE;
}

EngineStatus engine_classify(Engine *e, int model, char *const *lines, int n, int batch, int attention,
                             double deadline, cJSON *out)
{
    const ModelFile *mf = workers_model(e->workers, model);
    int C = model_classes(&mf->model.dims);
    if (batch <= 0) batch = CLASSIFY_BATCH;
    int m = n < batch ? n : batch;
    if (m < 1) m = 1;
    int *classes = xmalloc(sizeof(int) * m), *cut = xmalloc(sizeof(int) * m);
    float *probs = xmalloc(sizeof(float) * m * C), **attn = attention ? xcalloc(m, sizeof(float *)) : NULL;
    TokenList *units = attention ? xcalloc(m, sizeof(TokenList)) : NULL;
    Worker *k;
    EngineStatus s = borrow(e, deadline, &k);
    for (int start = 0; s == ENGINE_DONE && start < n; start += batch) {
        int len = n - start < batch ? n - start : batch;
        worker_classify(k, model, lines + start, len, classes, probs, attn, units, cut);
        for (int i = 0; i < len; i++) {
            cJSON *o = cJSON_CreateObject();
            if (classes[i] < 0) {
                cJSON_AddNullToObject(o, "label");
            } else {
                cJSON_AddStringToObject(o, "label", vocab_class_label(&mf->tgt_vocab, classes[i]));
                cJSON *p = cJSON_AddObjectToObject(o, "probabilities");
                for (int c = 0; c < C; c++)
                    cJSON_AddItemToObject(p, vocab_class_label(&mf->tgt_vocab, c), json_number(probs[(long)i * C + c], 0));
            }
            if (attn && attn[i]) {
                cJSON *a = cJSON_AddObjectToObject(o, "attention");
                cJSON_AddItemToObject(a, "tokens", json_strings(units[i].tokens, units[i].n));
                cJSON *w = cJSON_AddArrayToObject(a, "weights");
                for (int j = 0; j < units[i].n; j++)
                    cJSON_AddItemToArray(w, json_number(attn[i][j], 6));
            }
            if (cut[i]) {
                char w[120];
                snprintf(w, sizeof w, "%d units, more than the %d a line is classified by: only the first %d classified",
                         cut[i], CLASSIFY_MAX_UNITS, CLASSIFY_MAX_UNITS);
                cJSON_AddStringToObject(o, "warning", w);
            }
            cJSON_AddItemToArray(out, o);
            if (attn) {
                free(attn[i]);
                attn[i] = NULL;
                token_list_free(&units[i]);
            }
        }
    }
    if (s == ENGINE_DONE) give_back(e, k);
    free(classes);
    free(cut);
    free(probs);
    free(attn);
    free(units);
    return s;
}
