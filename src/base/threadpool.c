/* threadpool.c — the pool's threads, threadpool_for, the task queue and the ordered
 * queue; see threadpool.h. One mutex per pool guards its queue and the state of the
 * threadpool_for in progress; an ordered queue has its own. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "base/threadpool.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One helper's share of a threadpool_for: a task that takes indices until none is left. */
typedef struct {
    PoolTask task;
    ThreadPool *pool;
} ForTask;

struct ThreadPool {
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* a task was queued, or the pool stops */
    pthread_cond_t idle;       /* the queue is empty and no task runs */
    pthread_cond_t for_done;   /* the threadpool_for in progress made progress */
    pthread_t *threads;
    int n, stop, running;
    PoolTask *head, *tail;
    /* The threadpool_for in progress. */
    void (*for_fn)(void *ctx, int i);
    void *for_ctx;
    int for_n, for_next, for_done_count, for_helpers;
    ForTask *for_tasks;        /* (n) one per thread */
};

static void die(const char *what, int code)
{
    fprintf(stderr, "nmt: %s: %s\n", what, strerror(code));
    abort();
}

static void *thread_main(void *arg)
{
    ThreadPool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->head && !p->stop)
            pthread_cond_wait(&p->wake, &p->lock);
        if (!p->head) break;  /* stopping, nothing left */
        PoolTask *t = p->head;
        p->head = t->next;
        if (!p->head) p->tail = NULL;
        p->running++;
        pthread_mutex_unlock(&p->lock);
        t->run(t);  /* t may be gone once run returns: not touched again */
        pthread_mutex_lock(&p->lock);
        p->running--;
        if (!p->head && p->running == 0) pthread_cond_broadcast(&p->idle);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

ThreadPool *threadpool_new(int threads)
{
    ThreadPool *p = xcalloc(1, sizeof *p);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->idle, NULL);
    pthread_cond_init(&p->for_done, NULL);
    p->threads = xcalloc(threads > 0 ? threads : 1, sizeof(pthread_t));
    p->for_tasks = xcalloc(threads > 0 ? threads : 1, sizeof(ForTask));
    for (int i = 0; i < threads; i++) {
        int rc = pthread_create(&p->threads[i], NULL, thread_main, p);
        if (rc) die("cannot start a worker thread", rc);
        p->n++;
    }
    return p;
}

void threadpool_free(ThreadPool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    while (p->head || p->running)
        pthread_cond_wait(&p->idle, &p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n; i++)
        pthread_join(p->threads[i], NULL);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->idle);
    pthread_cond_destroy(&p->for_done);
    free(p->threads);
    free(p->for_tasks);
    free(p);
}

int threadpool_threads(const ThreadPool *p) { return p ? p->n : 0; }

/* Queues t; the caller holds p->lock. */
static void enqueue(ThreadPool *p, PoolTask *t)
{
    t->next = NULL;
    if (p->tail) p->tail->next = t;
    else p->head = t;
    p->tail = t;
}

void threadpool_submit(ThreadPool *p, PoolTask *t)
{
    pthread_mutex_lock(&p->lock);
    enqueue(p, t);
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------- threadpool_for */

/* Takes indices of the threadpool_for in progress until none is left. */
static void for_indices(ThreadPool *p)
{
    pthread_mutex_lock(&p->lock);
    while (p->for_next < p->for_n) {
        int i = p->for_next++;
        pthread_mutex_unlock(&p->lock);
        p->for_fn(p->for_ctx, i);
        pthread_mutex_lock(&p->lock);
        if (++p->for_done_count == p->for_n) pthread_cond_broadcast(&p->for_done);
    }
    pthread_mutex_unlock(&p->lock);
}

static void for_helper(PoolTask *t)
{
    ThreadPool *p = ((ForTask *)t)->pool;
    for_indices(p);
    pthread_mutex_lock(&p->lock);
    p->for_helpers--;
    pthread_cond_broadcast(&p->for_done);
    pthread_mutex_unlock(&p->lock);
}

void threadpool_for(ThreadPool *p, int n, void (*fn)(void *ctx, int i), void *ctx)
{
    if (!p || p->n == 0 || n <= 1) {
        for (int i = 0; i < n; i++)
            fn(ctx, i);
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->for_fn = fn;
    p->for_ctx = ctx;
    p->for_n = n;
    p->for_next = p->for_done_count = 0;
    /* One helper per thread, at most one per index beyond the caller's. */
    p->for_helpers = p->n < n - 1 ? p->n : n - 1;
    for (int k = 0; k < p->for_helpers; k++) {
        p->for_tasks[k] = (ForTask){.task.run = for_helper, .pool = p};
        enqueue(p, &p->for_tasks[k].task);
    }
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for_indices(p);
    /* Every index done, and every helper out of for_indices (they read p's for_ state). */
    pthread_mutex_lock(&p->lock);
    while (p->for_done_count < p->for_n || p->for_helpers > 0)
        pthread_cond_wait(&p->for_done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------- ordered jobs */

typedef struct {
    PoolTask task;
    OrderedQueue *q;
    void *job;
    int ran;
} Slot;

struct OrderedQueue {
    ThreadPool *pool;
    OrderedJobs jobs;
    pthread_mutex_t lock;
    pthread_cond_t progress;   /* a job was finished */
    Slot *slots;               /* (depth) job k in slot k % depth */
    int depth, finishing, failed;
    long submitted, finished;
    Error err;                 /* the first failed finish's */
};

/* Finishes, in order, every job from the oldest unfinished on that has run; the caller
 * holds q->lock, and finish itself runs without it. One thread at a time does this. */
static void finish_ready(OrderedQueue *q)
{
    if (q->finishing) return;  /* that thread will see this job too: it checks under the lock */
    q->finishing = 1;
    while (q->finished < q->submitted && q->slots[q->finished % q->depth].ran) {
        Slot *s = &q->slots[q->finished % q->depth];
        int failed = q->failed;
        pthread_mutex_unlock(&q->lock);
        Error e;
        int status = q->jobs.finish(q->jobs.ctx, s->job, failed, &e);
        pthread_mutex_lock(&q->lock);
        if (status && !q->failed) {
            q->failed = 1;
            q->err = e;
        }
        s->ran = 0;
        q->finished++;
        pthread_cond_broadcast(&q->progress);
    }
    q->finishing = 0;
    pthread_cond_broadcast(&q->progress);  /* ordered_free waits for this too */
}

static void slot_run(PoolTask *t)
{
    Slot *s = (Slot *)t;
    OrderedQueue *q = s->q;
    q->jobs.run(s->job);
    pthread_mutex_lock(&q->lock);
    s->ran = 1;
    finish_ready(q);
    pthread_mutex_unlock(&q->lock);
}

OrderedQueue *ordered_new(ThreadPool *p, int depth, const OrderedJobs *jobs)
{
    OrderedQueue *q = xcalloc(1, sizeof *q);
    q->pool = p;
    q->jobs = *jobs;
    q->depth = depth > 0 ? depth : 1;
    q->slots = xcalloc(q->depth, sizeof(Slot));
    for (int i = 0; i < q->depth; i++)
        q->slots[i] = (Slot){.task.run = slot_run, .q = q};
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->progress, NULL);
    return q;
}

int ordered_submit(OrderedQueue *q, void *job, Error *err)
{
    pthread_mutex_lock(&q->lock);
    while (q->submitted - q->finished >= q->depth)
        pthread_cond_wait(&q->progress, &q->lock);
    Slot *s = &q->slots[q->submitted % q->depth];
    s->job = job;
    s->ran = 0;
    q->submitted++;
    if (q->failed) {
        /* Not run, but finished (as failed) in its turn like any other: by whichever
         * thread is finishing, one at a time, after the jobs before it. Finishing it
         * here and now could overlap the finish of a job still running before it. */
        *err = q->err;
        s->ran = 1;
        finish_ready(q);
        pthread_mutex_unlock(&q->lock);
        return -1;
    }
    pthread_mutex_unlock(&q->lock);
    threadpool_submit(q->pool, &s->task);
    return 0;
}

int ordered_drain(OrderedQueue *q, Error *err)
{
    pthread_mutex_lock(&q->lock);
    while (q->finished < q->submitted)
        pthread_cond_wait(&q->progress, &q->lock);
    int failed = q->failed;
    if (failed && err) *err = q->err;
    pthread_mutex_unlock(&q->lock);
    return failed ? -1 : 0;
}

void ordered_free(OrderedQueue *q)
{
    if (!q) return;
    ordered_drain(q, NULL);
    /* The thread that finished the last job may still be leaving finish_ready. */
    pthread_mutex_lock(&q->lock);
    while (q->finishing)
        pthread_cond_wait(&q->progress, &q->lock);
    pthread_mutex_unlock(&q->lock);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->progress);
    free(q->slots);
    free(q);
}

int ordered_close(OrderedQueue *q, int status, Error *err)
{
    if (!q) return status;
    Error drained;
    if (ordered_drain(q, &drained) && status == 0) {
        *err = drained;
        status = -1;
    }
    ordered_free(q);
    return status;
}

int threadpool_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
