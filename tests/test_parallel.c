/* test_parallel.c — src/train/parallel.h, the promises that make training on workers
 * deterministic: the gradient norm and the Adam update computed by the workers are
 * adam.h's to the bit, whatever the worker count; a step's gradient on W workers is the
 * sum, worker 0 first, of the gradients of the W shards computed one by one (the output
 * layer's weight gradient by slices of TRAIN_OUTPUT_ROWS rows, as the step computes
 * it); the loss is the sum of the shards' losses; and held-out scoring sums the same
 * way.
 *
 * Where the Transformer's workers read its weights packed (train/parallel.c), their
 * gradients must still be the shards' to the bit, also after the weights change.
 *
 * Small random models and batches, made here; no timing anywhere. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "examples.h"         /* defines: random_examples */
#include "kernels/blas.h"    /* defines: blas_select_kernel, blas_set_threads */
#include "kernels/linalg.h"  /* defines: linear_grads */
#include "data/corpus.h"     /* defines: examples_free */
#include "layers/adam.h"     /* defines: grad_norm, adam_update */
#include "train/parallel.h"  /* defines: TrainWorkers, train_workers_* */
#include "train/ranks.h"     /* defines: Ranks, ranks_shard */

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

/* ---------------------------------------------------------------- a step */

#define N_EX 11

/* The W shards of ex[idx[0..N_EX)] one by one, each into a view of its own, their
 * gradients added up worker 0 first into want (n_params, written) and their losses
 * into *loss. The output layer's weight gradient (unless tied to the target
 * embedding), as the step computes it: its rows' product slice by slice. */
static void shards_one_by_one(Model *m, const Example *ex, const int *idx, int W, long tokens, float *want,
                              double *loss)
{
    Ranks one = {.rank = 0, .size = 1};
    long n = m->n_params;
    memset(want, 0, sizeof(float) * n);
    *loss = 0;
    for (int w = 0; w < W; w++) {
        Model view;
        model_view(&view, m);
        RunState rs = {0};
        Batch batch = {0};
        int lo, hi;
        ranks_shard(&one, W, w, N_EX, &lo, &hi);
        model_fill_batch(&view, &batch, ex, idx + lo, hi - lo);
        runstate_ensure(&rs, &m->dims, RUN_TRAIN, hi - lo, batch.S, batch.T);
        rs.loss_tokens = tokens;
        *loss += model_forward(&view, &rs, &batch, 1);
        rs.defer_output = view.grads.out_w != view.grads.tgt_emb;
        model_backward(&view, &rs, &batch);
        const DeferredGrads *d = &rs.output;
        for (int r0 = 0; rs.defer_output && r0 < d->n; r0 += TRAIN_OUTPUT_ROWS) {
            int rows = d->n - r0 < TRAIN_OUTPUT_ROWS ? d->n - r0 : TRAIN_OUTPUT_ROWS;
            linear_grads(view.grads.out_w + (long)r0 * d->k, NULL, d->dy + r0, d->n, d->x, d->k, d->rows, rows, d->k);
        }
        for (long i = 0; i < n; i++)
            want[i] += view.grad_mem[i];
        runstate_free(&rs);
        batch_free(&batch);
        model_free_view(&view);
    }
}

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
        if (model_classifies(dims)) {  /* a sentence and its label: one target each */
            ex[i].tgt_len = 0;
            ex[i].label = i % model_classes(dims);
        }
        tokens += ex[i].tgt_len + 1;
    }
    Ranks one = {.rank = 0, .size = 1};
    int W = 3;
    long n = m.n_params;
    float *want = xcalloc(n, sizeof(float));
    double want_loss;
    shards_one_by_one(&m, ex, idx, W, tokens, want, &want_loss);
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
    /* New weights (as after an update): the workers' products read them, not what
     * they read before (the Transformer's packed weights are packed again). */
    fill_random(m.param_mem, n, 11);
    shards_one_by_one(&m, ex, idx, W, tokens, want, &want_loss);
    model_zero_grad(&m);
    loss = train_workers_gradients(t, &m, &rs, &batch, ex, idx, N_EX, &one, 1, 0);
    snprintf(what, sizeof what, "%s, a step after the weights changed: the new weights' gradient, to the bit", family);
    CHECK(!memcmp(m.grad_mem, want, sizeof(float) * n) && memcmp(&loss, &want_loss, sizeof loss) == 0, what);
    CHECK(rs.packs == NULL, "the caller's run state holds no packed weights after a step");
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

int main(int argc, char **argv)
{
    (void)argc;
    blas_select_kernel(argv);  /* as nmt does: OpenBLAS's SkylakeX kernel where the CPU has AVX-512 */
    /* One OpenBLAS thread, as each worker runs: where the packed products give its bits
     * (linalg.h), the Transformer's workers read the weights packed (train/parallel.c),
     * and their gradients must still be the shards' to the bit. */
    blas_set_threads(1);
    test_norm_and_adam();
    ModelDims rnn = {.src_vocab = 23, .tgt_vocab = 19, .embed = 6, .hidden = 8};
    ModelDims tr = {.type = MODEL_TRANSFORMER, .src_vocab = 23, .tgt_vocab = 19, .embed = 8, .hidden = 8, .heads = 2,
                    .ff = 12, .layers = 1, .enc_layers = 1, .dec_layers = 2};
    /* Wide enough that some products are not OpenBLAS's small-matrix ones (and that the
     * feed-forward blocks' backward products read the packed columns); the examples' words
     * (random_examples) are below both vocabularies' sizes. */
    ModelDims wide = {.type = MODEL_TRANSFORMER, .src_vocab = 41, .tgt_vocab = 37, .embed = 64, .hidden = 64,
                      .heads = 4, .ff = 2048, .layers = 1, .enc_layers = 1, .dec_layers = 1};
    ModelDims tied = {.src_vocab = 23, .tgt_vocab = 19, .embed = 8, .hidden = 8, .tie_embeddings = 1};
    test_step(&rnn, "recurrent");
    test_step(&tied, "recurrent, tied target embeddings");
    test_step(&tr, "Transformer");
    test_step(&wide, "Transformer (d 64)");
    ModelDims big = {.src_vocab = 23, .tgt_vocab = 300, .embed = 6, .hidden = 40};
    test_step(&big, "recurrent, 300 target words");
    ModelDims classifier = {.type = MODEL_CLASSIFIER, .src_vocab = 23, .tgt_vocab = 3 + VOCAB_SPECIALS, .embed = 6,
                            .hidden = 8};
    test_step(&classifier, "classifier");
    return check_report("test_parallel");
}
