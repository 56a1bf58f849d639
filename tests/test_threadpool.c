/* test_threadpool.c — base/threadpool.h: threadpool_for runs every index once, with and
 * without threads; submitted tasks all run before threadpool_free returns; an ordered
 * queue finishes its jobs in submission order even when they complete in reverse, and
 * carries a failed finish to the submitter and to ordered_drain.
 *
 * No check depends on timing: the jobs that must complete out of order wait on
 * conditions set by the others, never on a clock. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/threadpool.h" /* defines: ThreadPool, threadpool_*, OrderedQueue, ordered_* */

/* ---------------------------------------------------------------- threadpool_for */

typedef struct {
    long *out;
    int *calls;
} Squares;

static void square(void *ctx, int i)
{
    Squares *s = ctx;
    s->out[i] = (long)i * i;
    __atomic_add_fetch(&s->calls[i], 1, __ATOMIC_RELAXED);
}

static void test_for(int threads, int n)
{
    ThreadPool *p = threads >= 0 ? threadpool_new(threads) : NULL;
    Squares s = {xcalloc(n ? n : 1, sizeof(long)), xcalloc(n ? n : 1, sizeof(int))};
    int good = 1;
    /* Twice on the same pool: its for-state is reset between calls. */
    for (int round = 0; round < 2; round++) {
        memset(s.calls, 0, sizeof(int) * (n ? n : 1));
        threadpool_for(p, n, square, &s);
        for (int i = 0; i < n; i++)
            good &= s.out[i] == (long)i * i && s.calls[i] == 1;
    }
    char what[96];
    snprintf(what, sizeof what, "threadpool_for over %d indices, %d threads: each index once, twice over", n, threads);
    CHECK(good, what);
    free(s.out);
    free(s.calls);
    threadpool_free(p);
}

/* ---------------------------------------------------------------- submitted tasks */

typedef struct {
    PoolTask task;
    int *done;
} Counted;

static void count_run(PoolTask *t)
{
    __atomic_add_fetch(((Counted *)t)->done, 1, __ATOMIC_RELAXED);
}

static void test_submit(void)
{
    ThreadPool *p = threadpool_new(3);
    int done = 0;
    Counted tasks[100];
    for (int i = 0; i < 100; i++) {
        tasks[i] = (Counted){.task.run = count_run, .done = &done};
        threadpool_submit(p, &tasks[i].task);
    }
    threadpool_free(p);  /* waits for the queue */
    CHECK(done == 100, "threadpool_free: all 100 submitted tasks ran before it returned");
}

/* ---------------------------------------------------------------- ordered jobs */

/* Jobs 0..N-1 where job k (k < N-1) may not complete before job k+1 has: they complete
 * in reverse order, and all N must run at once (N threads, depth N). */
#define N 4
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int ran[N];
    int finished[N + 8], n_finished, failed_from, fail_at;
    int reverse;     /* job k waits for job k + 1 */
} Chain;

typedef struct {
    Chain *c;
    int k;
} ChainJob;

static void chain_run(void *job)
{
    ChainJob *j = job;
    Chain *c = j->c;
    pthread_mutex_lock(&c->lock);
    while (c->reverse && j->k + 1 < N && !c->ran[j->k + 1])
        pthread_cond_wait(&c->cond, &c->lock);
    c->ran[j->k] = 1;
    pthread_cond_broadcast(&c->cond);
    pthread_mutex_unlock(&c->lock);
}

static int chain_finish(void *ctx, void *job, int failed, Error *err)
{
    Chain *c = ctx;
    ChainJob *j = job;
    /* Only one finish at a time: no lock needed for these, but the ran check reads it. */
    pthread_mutex_lock(&c->lock);
    int k = j->k, ran = k < N ? c->ran[k] : 0;
    pthread_mutex_unlock(&c->lock);
    c->finished[c->n_finished++] = failed ? -1 - k : ran ? k : 100 + k;
    free(j);
    if (!failed && k == c->fail_at) return error_set(err, "job %d could not be written", k);
    return 0;
}

static ChainJob *chain_job(Chain *c, int k)
{
    ChainJob *j = xmalloc(sizeof *j);
    j->c = c;
    j->k = k;
    return j;
}

static void chain_init(Chain *c, int reverse, int fail_at)
{
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
    c->reverse = reverse;
    c->fail_at = fail_at;
}

static void test_ordered(void)
{
    ThreadPool *p = threadpool_new(N);
    Chain c;
    chain_init(&c, 1, -1);
    OrderedJobs jobs = {.run = chain_run, .finish = chain_finish, .ctx = &c};
    OrderedQueue *q = ordered_new(p, N, &jobs);
    Error err;
    int status = 0;
    for (int k = 0; k < N; k++)
        status |= ordered_submit(q, chain_job(&c, k), &err);
    status |= ordered_drain(q, &err);
    int in_order = c.n_finished == N;
    for (int k = 0; k < N; k++)
        in_order &= c.finished[k] == k;
    CHECK(status == 0 && in_order, "ordered queue: jobs completing in reverse (3, 2, 1, 0) are finished 0, 1, 2, 3");
    ordered_free(q);

    /* A failed finish: the later jobs are finished as failed, the error comes back. */
    chain_init(&c, 0, 1);
    q = ordered_new(p, 2, &jobs);
    int first_error = -1;
    for (int k = 0; k < N; k++)
        if (ordered_submit(q, chain_job(&c, k), &err) && first_error < 0) first_error = k;
    status = ordered_drain(q, &err);
    ordered_free(q);
    /* Jobs 2 and 3 were either queued before the failure was known (then run and finished
     * as failed) or refused by ordered_submit (finished as failed at once). */
    int rest_failed = c.n_finished == N && c.finished[0] == 0 && c.finished[1] == 1;
    for (int k = 2; k < N; k++)
        rest_failed &= c.finished[k] == -1 - k;
    CHECK(status == -1 && strstr(err.msg, "job 1 could not be written") != NULL,
          "ordered queue: a failed finish comes back from ordered_drain with its message");
    CHECK(rest_failed && (first_error < 0 || first_error >= 2),
          "ordered queue: every job finished once, in order; those after the failure as failed");
    threadpool_free(p);
}

int main(void)
{
    test_for(-1, 10);    /* no pool: the caller alone */
    test_for(0, 10);     /* a pool without threads */
    test_for(3, 1);
    test_for(3, 0);
    test_for(1, 1000);
    test_for(3, 1000);
    test_submit();
    test_ordered();
    CHECK(threadpool_cores() >= 1, "threadpool_cores: at least one");
    return check_report("test_threadpool");
}
