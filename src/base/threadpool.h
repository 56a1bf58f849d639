/* threadpool.h — a fixed set of threads that run nmt's parallel work: the training
 * step's workers and sums (train/workers.h), the translation workers (decode/workers.h).
 *
 * Three ways to use it:
 *
 *   threadpool_for(pool, n, fn, ctx)        fn(ctx, i) for i = 0 .. n-1, spread over the
 *                                           pool's threads and the caller's; returns when
 *                                           all n are done. What i computes must not
 *                                           depend on the thread that runs it: index the
 *                                           state by i (a worker's gradient buffer, a
 *                                           slice of a vector), and the result is the same
 *                                           for any timing.
 *   threadpool_submit(pool, &task)          task.run(&task) on one of the pool's threads,
 *                                           soon; the caller goes on (it owns the task,
 *                                           and waits for it its own way).
 *   OrderedQueue                            jobs submitted in order, run concurrently on
 *                                           the pool's threads, finished (their output
 *                                           written) one at a time in submission order,
 *                                           as soon as each and all before it have run:
 *                                           a pipeline that keeps the input's order
 *                                           (`nmt translate --workers N`).
 *
 * A pool of 0 threads is valid: threadpool_for then runs everything on the caller's
 * thread, in order (a one-worker run has no thread at all). Nothing here allocates after
 * threadpool_new / ordered_new, so that a training step in steady state makes no malloc
 * call. One threadpool_for at a time per pool (the training loop is one thread); tasks
 * and ordered jobs may be submitted meanwhile from any thread.
 *
 * Thread creation failing (a process limit) is not an input error: like running out of
 * memory, it ends nmt with a message (util.h's xmalloc does the same).
 */
#ifndef THREADPOOL_H
#define THREADPOOL_H

#include "base/util.h" /* defines: Error */

typedef struct ThreadPool ThreadPool;

/* A pool of `threads` threads (0 or more), started at once and idle until given work. */
ThreadPool *threadpool_new(int threads);
/* Waits for the submitted tasks to end, then stops and joins the threads. NULL is a no-op. */
void threadpool_free(ThreadPool *p);
/* The pool's threads (not counting a caller). */
int threadpool_threads(const ThreadPool *p);

/* fn(ctx, i) once for every i in [0, n), in no particular order, on the pool's threads
 * and the caller's (p may be NULL: the caller alone, i in order). Returns when every
 * call has returned. */
void threadpool_for(ThreadPool *p, int n, void (*fn)(void *ctx, int i), void *ctx);

/* A unit of work for threadpool_submit: embed it in your job (first member) and set run. */
typedef struct PoolTask {
    void (*run)(struct PoolTask *t);
    struct PoolTask *next; /* the pool's */
} PoolTask;
/* Queues t; one of p's threads calls t->run(t) (FIFO order of starting). p must have at
 * least one thread. t stays the caller's and must live until run has returned. */
void threadpool_submit(ThreadPool *p, PoolTask *t);

/* ---------------------------------------------------------------- ordered jobs */

/* run(job) computes a job on a pool thread (any number at once, each its own job);
 * finish(ctx, job, failed) then consumes it in submission order, one at a time (on
 * whichever thread completed the job that let it go: the caller's own finish runs
 * while its reader may be blocked on input, so output keeps flowing line by line).
 * finish returns 0, or -1 with err to say the output failed: the later jobs are still
 * run and finished with failed = 1 (free them, write nothing), and ordered_submit /
 * ordered_drain return -1 with that err. */
typedef struct OrderedQueue OrderedQueue;
typedef struct {
    void (*run)(void *job);
    int (*finish)(void *ctx, void *job, int failed, Error *err);
    void *ctx;
} OrderedJobs;

/* A queue over p (at least one thread) holding at most depth jobs not yet finished:
 * what bounds the memory a read-ahead takes. */
OrderedQueue *ordered_new(ThreadPool *p, int depth, const OrderedJobs *jobs);
/* Queues job, first waiting while depth jobs are unfinished. Returns 0, or -1 with err
 * once a finish has failed (job is then not run, and finished with failed = 1 in its
 * turn, after the jobs before it: perhaps on another thread, after this returns). */
int ordered_submit(OrderedQueue *q, void *job, Error *err);
/* Waits until every submitted job is finished. 0, or -1 with the failed finish's err. */
int ordered_drain(OrderedQueue *q, Error *err);
/* Drains q (ignoring its status) and frees it. NULL is a no-op. */
void ordered_free(OrderedQueue *q);
/* The end of a stream that fed q: drains and frees q (NULL: nothing to do) and returns
 * status, or, when status is 0 and a finish failed, -1 with that finish's err. */
int ordered_close(OrderedQueue *q, int status, Error *err);

/* The processors this process may run on (sched_getaffinity; at least 1): what a worker
 * count of 0 ("one per core") means. */
int threadpool_cores(void);
#endif
