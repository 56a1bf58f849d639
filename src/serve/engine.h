/* engine.h — what `nmt serve` computes with: the served models, the decoding workers
 * (decode/workers.h) lent to one request at a time, and a request's results as JSON.
 *
 * This file and engine.c are the server's one adapter over decode/'s worker API
 * (workers_borrow / workers_return, worker_translate(_ordered), worker_classify, Translation):
 * the HTTP side (http.c, api.c) never calls it, so a change of that API is a change
 * here. request.c fills the per-call TranslateOptions from a request's JSON.
 *
 * Borrowing is bounded: at most max_waiting requests wait for a worker at once (one
 * more is told ENGINE_BUSY at once: HTTP 503), and a request that has waited until its
 * deadline is told ENGINE_WAITED (also 503). A worker is borrowed only once the whole
 * request has been read, and returned before the answer is written, so a slow or
 * vanishing client never holds one.
 *
 *   Engine *e = engine_new(workers, names, max_waiting);
 *   cJSON *out = cJSON_CreateArray();
 *   EngineStatus s = engine_translate(e, lines, n, &opt, now_seconds() + 30, out);
 *   ... ENGINE_DONE: out holds one object per line (engine.c's translation_json) ...
 *   engine_free(e);
 */
#ifndef ENGINE_H
#define ENGINE_H

#include <cjson/cJSON.h>

#include "decode/translate.h" /* defines: TranslateOptions, Workers */

typedef struct Engine Engine;

typedef enum {
    ENGINE_DONE,     /* out holds the results */
    ENGINE_BUSY,     /* max_waiting requests already wait for a worker: try again later */
    ENGINE_WAITED,   /* no worker came free before the deadline */
} EngineStatus;

/* An engine over w (whose models the caller read and keeps; names[i] names model i in
 * requests and in GET /models: the path as given). max_waiting >= 0. */
Engine *engine_new(Workers *w, char *const *names, int max_waiting);
/* Frees the engine (not the workers). No request may be running. NULL: no-op. */
void engine_free(Engine *e);

int engine_models(const Engine *e);
const char *engine_model_name(const Engine *e, int i);
const ModelFile *engine_model_file(const Engine *e, int i);
/* Model i's index by name, or -1. */
int engine_find(const Engine *e, const char *name);
/* Whether all models are translation models that can decode together as an ensemble
 * (one target vocabulary, one way of reading text: modelfile_compatible); 1 with one. */
int engine_can_ensemble(const Engine *e);

/* The workers and how many are borrowed and how many requests wait, now. */
void engine_load(Engine *e, int *workers, int *busy, int *waiting);

/* Translates n lines (valid UTF-8, no line breaks) with opt (request.c) on one
 * worker, in batches of opt->batch lines, sorted by length within windows of
 * TRANSLATE_WINDOW lines as translate_stream sorts them (as `nmt translate --batch N`
 * reads a file of the same lines, under TRANSLATE_WINDOW_BYTES: the same bytes), appending to out one object per line:
 *   {"text": best translation, "score": S, "logprob": L,
 *    "nbest": [{"text", "score", "logprob"}, ...]           (opt->nbest >= 1)
 *    "attention": {"source": [tokens], "output": [tokens],  (opt->attention)
 *                  "weights": [[n_src] x n_out], "layer": N (a Transformer's; 0: last),
 *                  "heads": [[[n_src] x n_out] x heads]},   (opt->attention_heads)
 *    "warning": "..."}                                      (a line cut to its first
 *                                                            TRANSLATE_MAX_SOURCE tokens)
 * deadline: now_seconds() by which a worker must be free. */
EngineStatus engine_translate(Engine *e, char *const *lines, int n, const TranslateOptions *opt, double deadline,
                              cJSON *out);

/* Classifies n lines with classifier model `model`, appending one object per line:
 *   {"label": L, "probabilities": {label: p, ...},           (label null: no text)
 *    "attention": {"tokens": [...], "weights": [...]}}       (attention, with a model
 *                                                             that pools by attention)
 *  in batches of `batch` lines (0: nmt classify's 64), as nmt classify --batch N does. */
EngineStatus engine_classify(Engine *e, int model, char *const *lines, int n, int batch, int attention,
                             double deadline, cJSON *out);
#endif
