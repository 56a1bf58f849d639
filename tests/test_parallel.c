/* test_parallel.c — src/train/parallel.h, the promises that make training on workers
 * deterministic: the gradient norm and the Adam update computed by the workers are
 * adam.h's to the bit, whatever the worker count; a batch's shards are balanced by
 * their work, hold every example once and no more than their room; a step's gradient
 * on W workers is the sum, worker 0 first, of the gradients of the W shards computed
 * one by one; the loss is the sum of the shards' losses; and held-out scoring sums the
 * same way.
 *
 * A small random recurrent model and batch, made here; no timing anywhere. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "examples.h"         /* defines: random_examples */
#include "data/corpus.h"     /* defines: examples_free */
#include "layers/adam.h"     /* defines: grad_norm, adam_update */
#include "train/parallel.h"  /* defines: TrainWorkers, train_workers_*, Shards, shards_assign */
#include "train/ranks.h"     /* defines: Ranks */

static void fill_random(float *x, long n, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    for (long i = 0; i < n; i++)
        x[i] = rng_normal(&rng) * (i % 97 == 0 ? 10.0f : 0.1f);
}

/* The norm and Adam on workers against adam.h's own, bit for bit. */
static void test_norm_and_adam(void)
{
    ModelDims d = {.src_vocab = 301, .tgt_vocab = 257, .embed = 16, .hidden = 24};
    Model m;
    model_alloc(&m, &d);  /* n_params is not a multiple of any block: the last slices are short */
    long n = m.n_params;
    float *g = xmalloc(sizeof(float) * n), *p0 = xmalloc(sizeof(float) * n), *g0 = xmalloc(sizeof(float) * n);
    fill_random(g, n, 1);
    fill_random(m.param_mem, n, 2);
    memcpy(p0, m.param_mem, sizeof(float) * n);
    double want = grad_norm(g, n);
    Adam ref;
    adam_init(&ref, n, 0.01f);
    memcpy(g0, g, sizeof(float) * n);
    for (int k = 0; k < 3; k++) {  /* three updates: the moments and the step count matter */
        adam_update(&ref, p0, g0, 0.5f);
        memcpy(g0, g, sizeof(float) * n);
    }
    for (int W = 1; W <= 4; W++) {
        Error err;
        TrainWorkers *t = train_workers_new(W, &m, 4, 5, 5, &err);
        double got = train_workers_grad_norm(t, g, n);
        char what[96];
        snprintf(what, sizeof what, "gradient norm on %d workers: grad_norm's bits (%.9g)", W, got);
        CHECK(memcmp(&got, &want, sizeof got) == 0, what);
        Adam opt;
        adam_init(&opt, n, 0.01f);
        float *p = xmalloc(sizeof(float) * n), *gw = xmalloc(sizeof(float) * n);
        memcpy(p, m.param_mem, sizeof(float) * n);
        int zeroed = 1;
        for (int k = 0; k < 3; k++) {
            memcpy(gw, g, sizeof(float) * n);
            train_workers_adam(t, &opt, p, gw, 0.5f);
            for (long i = 0; i < n; i++)
                zeroed &= gw[i] == 0.0f;
        }
        snprintf(what, sizeof what, "Adam on %d workers, 3 updates: adam_update's bits, moments included", W);
        CHECK(!memcmp(p, p0, sizeof(float) * n) && !memcmp(opt.m, ref.m, sizeof(float) * n) &&
                  !memcmp(opt.v, ref.v, sizeof(float) * n) && opt.step == 3,
              what);
        snprintf(what, sizeof what, "Adam on %d workers: the gradients left zeroed", W);
        CHECK(zeroed, what);
        adam_free(&opt);
        free(p);
        free(gw);
        train_workers_free(t);
    }
    adam_free(&ref);
    free(g);
    free(p0);
    free(g0);
    model_free(&m);
}

/* ---------------------------------------------------------------- the shards */

/* Examples with these source lengths and no target (work = src_len + 2). */
static void lengths(Example *ex, const int *src_len, int n)
{
    memset(ex, 0, sizeof(Example) * n);
    for (int i = 0; i < n; i++)
        ex[i].src_len = src_len[i];
}

static int same_ints(const int *a, const int *b, int n) { return !memcmp(a, b, sizeof(int) * n); }

static void test_shards(void)
{
    Shards s = {0};
    Example ex[64];
    int idx[64];
    for (int i = 0; i < 64; i++)
        idx[i] = i;
    /* Two long, then two short: contiguous halves would be 22 against 6. */
    lengths(ex, (int[]){9, 9, 1, 1}, 4);
    shards_assign(&s, 2, ex, idx, 4);
    CHECK(same_ints(s.order, (int[]){0, 2, 1, 3}, 4) && same_ints(s.start, (int[]){0, 2, 4}, 3),
          "shards: a long and a short example each (work 14 and 14), batch order within a shard");
    /* One long example: without a cap the other shard would take all three short ones. */
    lengths(ex, (int[]){20, 1, 1, 1}, 4);
    shards_assign(&s, 2, ex, idx, 4);
    CHECK(same_ints(s.order, (int[]){0, 3, 1, 2}, 4) && same_ints(s.start, (int[]){0, 2, 4}, 3),
          "shards: no shard holds more than ceil(n / G) examples");
    /* Fewer examples than shards: one each for the first, nothing for the rest. */
    shards_assign(&s, 4, ex, (int[]){3, 1}, 2);
    CHECK(same_ints(s.order, (int[]){3, 1}, 2) && same_ints(s.start, (int[]){0, 1, 2, 2, 2}, 5),
          "shards: a batch smaller than the shards leaves the last ones empty");
    /* Random lengths: one shard is idx itself; G shards hold every example once, at most
     * ceil(n / G) each, in batch order within each, and the slowest is within the
     * greatest example's work of the mean. */
    Rng rng;
    rng_seed(&rng, 7);
    int ok_one = 1, ok_all = 1, ok_balanced = 1;
    for (int round = 0; round < 200; round++) {
        int n = 1 + (int)(rng_next(&rng) % 64), G = 1 + (int)(rng_next(&rng) % 16);
        for (int i = 0; i < 64; i++) {
            ex[i].src_len = (int)(rng_next(&rng) % 21);
            ex[i].tgt_len = (int)(rng_next(&rng) % 21);
        }
        for (int i = 0; i < n; i++)  /* a batch in no particular order */
            idx[i] = (int)((i * 37 + round) % 64);
        shards_assign(&s, 1, ex, idx, n);
        ok_one &= same_ints(s.order, idx, n) && s.start[0] == 0 && s.start[1] == n;
        shards_assign(&s, G, ex, idx, n);
        int seen[64] = {0}, cap = (n + G - 1) / G;
        long total = 0, most = 0, biggest = 0;
        for (int i = 0; i < n; i++) {
            long w = ex[idx[i]].src_len + 2L * (ex[idx[i]].tgt_len + 1);
            total += w;
            biggest = w > biggest ? w : biggest;
        }
        ok_all &= s.start[0] == 0 && s.start[G] == n;
        for (int g = 0; g < G; g++) {
            long load = 0;
            int last = -1;
            ok_all &= s.start[g + 1] - s.start[g] <= cap;
            for (int k = s.start[g]; k < s.start[g + 1]; k++) {
                int pos = -1;
                for (int i = 0; i < n; i++)
                    if (idx[i] == s.order[k]) pos = i;
                ok_all &= pos > last && !seen[pos];
                if (pos >= 0) seen[pos] = 1, last = pos;
                load += ex[s.order[k]].src_len + 2L * (ex[s.order[k]].tgt_len + 1);
            }
            most = load > most ? load : most;
        }
        for (int i = 0; i < n; i++)
            ok_all &= seen[i];
        /* Greedy's bound without the cap (mean + the greatest), which held in 200,000
         * random batches with it. */
        ok_balanced &= most * G <= total + (long)G * biggest;
    }
    CHECK(ok_one, "shards: one shard is the batch itself, in its order (200 random batches)");
    CHECK(ok_all, "shards: every example once, at most ceil(n / G) a shard, batch order within (200 random batches)");
    CHECK(ok_balanced, "shards: the slowest shard within the greatest example's work of the mean");
    shards_free(&s);
}

/* ---------------------------------------------------------------- a step */

#define N_EX 11

static void test_step(const ModelDims *dims, const char *family)
{
    Model m;
    model_alloc(&m, dims);
    model_init_weights(&m, 5);
    Example *ex = random_examples(N_EX, dims->tgt_vocab, 6, 3);
    int idx[N_EX];
    long tokens = 0;
    for (int i = 0; i < N_EX; i++) {
        idx[i] = (i * 7) % N_EX;  /* not in order: the shards follow idx */
        tokens += ex[i].tgt_len + 1;
    }
    Ranks one = {.rank = 0, .size = 1};
    int W = 3;
    long n = m.n_params;
    /* The shards one by one, each into a view of its own, then added up worker 0 first. */
    float *want = xcalloc(n, sizeof(float));
    double want_loss = 0;
    for (int w = 0; w < W; w++) {
        Model view;
        model_view(&view, &m);
        RunState rs = {0};
        Batch batch = {0};
        Shards s = {0};
        shards_assign(&s, W, ex, idx, N_EX);
        int lo = s.start[w], hi = s.start[w + 1];
        model_fill_batch(&view, &batch, ex, s.order + lo, hi - lo);
        runstate_ensure(&rs, &m.dims, RUN_TRAIN, hi - lo, batch.S, batch.T);
        rs.loss_tokens = tokens;
        want_loss += model_forward(&view, &rs, &batch, 1);
        model_backward(&view, &rs, &batch);
        for (long i = 0; i < n; i++)
            want[i] += view.grad_mem[i];
        runstate_free(&rs);
        batch_free(&batch);
        model_free_view(&view);
        shards_free(&s);
    }
    /* The same on workers. */
    Error err;
    TrainWorkers *t = train_workers_new(W, &m, 4, 6, 7, &err);
    RunState rs = {0};
    Batch batch = {0};
    runstate_ensure(&rs, &m.dims, RUN_TRAIN, 4, 6, 7);
    rs.loss_tokens = tokens;
    model_zero_grad(&m);
    double loss = train_workers_gradients(t, &m, &rs, &batch, ex, idx, N_EX, &one, 1, 0);
    char what[128];
    snprintf(what, sizeof what, "%s, a step on 3 workers: the shards' gradients added worker 0 first, to the bit",
             family);
    CHECK(!memcmp(m.grad_mem, want, sizeof(float) * n), what);
    snprintf(what, sizeof what, "%s, a step on 3 workers: the loss is the shards' losses added in order", family);
    CHECK(memcmp(&loss, &want_loss, sizeof loss) == 0, what);
    /* Again: the workers' buffers were zeroed by the sum, so the same gradient again. */
    model_zero_grad(&m);
    train_workers_gradients(t, &m, &rs, &batch, ex, idx, N_EX, &one, 1, 0);
    snprintf(what, sizeof what, "%s, a second step: the same gradient (each worker's buffer zeroed by the sum)",
             family);
    CHECK(!memcmp(m.grad_mem, want, sizeof(float) * n), what);
    /* Held-out scoring: the loss of the whole batch, split the same way. */
    long scored_tokens, right;
    double scored = train_workers_score(t, &m, &rs, &batch, ex, idx, N_EX, &scored_tokens, &right);
    snprintf(what, sizeof what, "%s, scoring on 3 workers: every target token counted, the loss within 1e-6", family);
    CHECK(scored_tokens == tokens && fabs(scored - want_loss) <= 1e-6 * fabs(want_loss), what);
    train_workers_free(t);
    runstate_free(&rs);
    batch_free(&batch);
    examples_free(ex, N_EX);
    free(want);
    model_free(&m);
}

int main(void)
{
    test_norm_and_adam();
    test_shards();
    ModelDims rnn = {.src_vocab = 23, .tgt_vocab = 19, .embed = 6, .hidden = 8};
    ModelDims tr = {.type = MODEL_TRANSFORMER, .src_vocab = 23, .tgt_vocab = 19, .embed = 8, .hidden = 8, .heads = 2,
                    .ff = 12, .layers = 1, .enc_layers = 1, .dec_layers = 2};
    test_step(&rnn, "recurrent");
    test_step(&tr, "Transformer");
    return check_report("test_parallel");
}
