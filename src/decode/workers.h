/* workers.h — decoding workers: models read once and shared, N workers each with its own
 * decoding state, and the threads that run them (CTranslate2's inter_threads, its
 * replica pool). `nmt translate`, `eval` and `classify --workers N` decode N batches at
 * once with them, training validates with them, and a server's request handlers can
 * borrow one per request.
 *
 * What is shared, read-only while any worker decodes: the ModelFiles (weights,
 * vocabularies, segmenter, text options), read once by the caller, and whatever the
 * call's options point to (an --unk-dict). Nothing may change a model while a worker
 * decodes with it (training validates between steps, never during one).
 *
 * What each worker has of its own: a RunState per model (models/model.h), the
 * activations a search writes: the recurrent Decoder computes in it, the Transformer's
 * Decoder reads the model as const and keeps its key/value caches in a TDecoder it makes
 * per batch; a classifier's pooling. It grows to the largest batch the worker has seen.
 *
 * What a call on a worker does (the calls are in the headers of what they compute):
 *   translate.h  worker_translate(k, lines, n, &opt, out, count, bad): a batch of lines,
 *                with per-call TranslateOptions (beam, nbest, length penalty, attention,
 *                which model or the ensemble: opt.model, opt.ensemble), into structured
 *                Translations (text, score, log-probability, tokens, attention
 *                matrix, per-head maps, scores); worker_translate_ordered: in an
 *                order (by length), with target prefixes and the lines' place in the
 *                input (sampling's streams); worker_translate_lines: the text only.
 *   classify.h   worker_classify(k, model, lines, n, ...): labels and probabilities.
 * It writes nothing anywhere: the results are the caller's to print or serve.
 *
 * Thread safety: a worker is used by one thread at a time: borrow it (workers_borrow,
 * which waits for a free one), call, return it. Any number of workers decode at once.
 * The results do not depend on the worker or the thread: a batch translates to the same
 * bits on any worker, so N workers write exactly what one writes (tested with cmp).
 * OpenBLAS runs one thread per worker when there are several (workers_new sets it):
 * OpenBLAS 0.3.21's pthread build serves concurrent single-threaded callers, each with
 * a buffer of its own from a table of NUM_BUFFERS slots under a lock (driver/others/
 * memory.c); Debian builds it with MAX_THREADS=64, so 128 slots, of which its own
 * threads hold at most 63. More buffers in use at once than that would abort OpenBLAS
 * ("too many memory regions"; OpenBLAS issue #5958), hence WORKERS_MAX.
 *
 *   ModelFile *models[1] = {&mf};
 *   Error err;
 *   Workers *w = workers_new(models, 1, 4, &err);        // NULL: err says why
 *   Worker *k = workers_borrow(w);
 *   worker_translate(k, lines, n, &opt, out, count, bad); // translate.h
 *   workers_return(w, k);
 *   ... or for a stream: translate_stream(w, in, out, ...), which keeps 2N batches in
 *   flight on workers_threads(w) and writes them in input order ...
 *   workers_free(w);
 */
#ifndef WORKERS_H
#define WORKERS_H

#include "base/threadpool.h" /* defines: ThreadPool */
#include "base/util.h"       /* defines: Error */
#include "files/modelfile.h" /* defines: ModelFile */
#include "models/model.h"    /* defines: RunState */

/* The most workers: what OpenBLAS's buffer table leaves to concurrent callers (above). */
#define WORKERS_MAX 64

typedef struct Workers Workers;
typedef struct Worker Worker;

/* n_workers workers (1 .. WORKERS_MAX; 0: one per core, threadpool_cores) over n_models
 * models (the caller's; they must outlive the workers). With more than one worker, also
 * a pool of that many threads (workers_threads) and OpenBLAS set to one thread. Returns
 * NULL with err when the memory limit leaves no room for the workers' OpenBLAS buffers
 * (blas.h: OpenBLAS would wait forever). */
Workers *workers_new(ModelFile *const *models, int n_models, int n_workers, Error *err);
/* Frees the workers' states and joins the threads (none may be borrowed). NULL: no-op. */
void workers_free(Workers *w);

int workers_count(const Workers *w);
int workers_models(const Workers *w);
ModelFile *workers_model(const Workers *w, int i);
/* The threads (one per worker), for threadpool_for and ordered queues over work that
 * borrows workers; NULL with one worker: the caller's thread does the work. */
ThreadPool *workers_threads(Workers *w);

/* A free worker, waiting until one is returned if all are borrowed. */
Worker *workers_borrow(Workers *w);
void workers_return(Workers *w, Worker *k);

/* A worker's model i (0 .. workers_models - 1) and its own RunState for it. */
ModelFile *worker_model(const Worker *k, int i);
RunState *worker_state(Worker *k, int i);
int worker_models(const Worker *k);
#endif
