/* workers.c — the decoding workers (workers.h): their states, borrowing, their threads. */
#include "decode/workers.h"

#include <pthread.h>
#include <stdlib.h>

#include "kernels/blas.h" /* defines: blas_check_memory_limit, blas_set_threads */

struct Worker {
    Workers *owner;
    RunState *rs;          /* (n_models) */
    struct Worker *next_free;
};

struct Workers {
    ModelFile **models;    /* (n_models) the caller's */
    int n_models, n;
    Worker *workers;       /* (n) */
    Worker *free_list;
    pthread_mutex_t lock;
    pthread_cond_t returned;
    ThreadPool *threads;   /* n threads, or NULL for one worker */
};

Workers *workers_new(ModelFile *const *models, int n_models, int n_workers, Error *err)
{
    if (n_workers <= 0) n_workers = threadpool_cores();
    if (n_workers > WORKERS_MAX) n_workers = WORKERS_MAX;
    /* Each worker computes its products in its own thread, with a buffer of its own. */
    if (n_workers > 1 && blas_check_memory_limit(n_workers, err)) return NULL;
    Workers *w = xcalloc(1, sizeof *w);
    w->models = xmalloc(sizeof(ModelFile *) * n_models);
    for (int i = 0; i < n_models; i++)
        w->models[i] = models[i];
    w->n_models = n_models;
    w->n = n_workers;
    w->workers = xcalloc(n_workers, sizeof(Worker));
    for (int i = n_workers - 1; i >= 0; i--) {
        Worker *k = &w->workers[i];
        k->owner = w;
        k->rs = xcalloc(n_models, sizeof(RunState));
        k->next_free = w->free_list;
        w->free_list = k;
    }
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->returned, NULL);
    if (n_workers > 1) {
        /* Several products at once, each on one thread: OpenBLAS's own threads would
         * only contend for the same cores. */
        blas_set_threads(1);
        w->threads = threadpool_new(n_workers);
    }
    return w;
}

void workers_free(Workers *w)
{
    if (!w) return;
    threadpool_free(w->threads);
    for (int i = 0; i < w->n; i++) {
        for (int m = 0; m < w->n_models; m++)
            runstate_free(&w->workers[i].rs[m]);
        free(w->workers[i].rs);
    }
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->returned);
    free(w->workers);
    free(w->models);
    free(w);
}

int workers_count(const Workers *w) { return w->n; }
int workers_models(const Workers *w) { return w->n_models; }
ModelFile *workers_model(const Workers *w, int i) { return w->models[i]; }
ThreadPool *workers_threads(Workers *w) { return w->threads; }

Worker *workers_borrow(Workers *w)
{
    pthread_mutex_lock(&w->lock);
    while (!w->free_list)
        pthread_cond_wait(&w->returned, &w->lock);
    Worker *k = w->free_list;
    w->free_list = k->next_free;
    pthread_mutex_unlock(&w->lock);
    return k;
}

void workers_return(Workers *w, Worker *k)
{
    pthread_mutex_lock(&w->lock);
    k->next_free = w->free_list;
    w->free_list = k;
    pthread_cond_signal(&w->returned);
    pthread_mutex_unlock(&w->lock);
}

ModelFile *worker_model(const Worker *k, int i) { return k->owner->models[i]; }
RunState *worker_state(Worker *k, int i) { return &k->rs[i]; }
int worker_models(const Worker *k) { return k->owner->n_models; }
