/* test_gradcheck.c — the whole model's backward pass against central finite differences
 * of its forward pass: L = model_forward(want_grad = 0) / n_tokens, the token-mean loss
 * that model_backward differentiates.
 *
 * A tiny model (Vs 9, Vt 10, E 4, H 5) on a batch of three pairs whose source and target
 * lengths all differ, so the source mask, the target padding, the encoder's carried
 * state and the <pad> embedding rows are all exercised. Every parameter tensor is
 * checked at up to 30 random coordinates (all of them for the smaller ones). This is
 * independent of the PyTorch fixture in test_model.c: it needs no reference, only the
 * forward pass. The same check then runs for every member of the model family: each
 * attention kind (with input feeding and scaling), LSTM cells, bidirectional and
 * 2-layer stacks, tied embeddings, label smoothing, dropout (with the mask drawn from the
 * same seed at every evaluation, so the function being differentiated is fixed) and
 * scheduled sampling (differentiated for the words the sampled pass chose).
 *
 * Where the check is made: at PyTorch's initialisation (weights within +-1/sqrt(H)) the
 * attention is nearly uniform and its parameters' gradients are ~1e-5, no larger than the
 * finite-difference noise of a float forward pass (below). So every parameter but the
 * embeddings is scaled by 3 after model_init_weights: attention then has something to
 * say, and every tensor's largest gradient is >= 1e-3. A gradient check holds at any
 * point, so this loses nothing.
 *
 * Tolerance: the loss, computed in float, jitters by up to ~1e-7 (rms ~3e-8) under
 * perturbations too small to change it; the test measures this (loss_jitter) and checks
 * it stays below JITTER. A central difference then carries up to 2 * JITTER / (2 eps)
 * = 3e-5 of noise, which is atol; rtol = 1e-2 as for the layers (see gradcheck.h).
 * For the smallest tensor scale (att_b_query, ~1.6e-3) that is still a 2% test.
 */
#include <stdlib.h>
#include <string.h>

#include "data/batch.h"     /* defines: Example, Batch, batch_fill */
#include "check.h"     /* defines: CHECK, check_close_scaled, check_report */
#include "gradcheck.h" /* defines: check_grad */
#include "models/model.h"     /* defines: Model, RunState, model_*, params_* */
#include "base/util.h"      /* defines: Rng, xmalloc */

#define WEIGHT_SCALE 3.0f
#define EPS 1e-2f
#define JITTER 3e-7 /* bound on the loss's rounding jitter, checked below */

typedef struct {
    Model *m;
    RunState *rs;
    Batch *batch;
} Ctx;

/* With want_grad so that dropout (when on) applies; the mask seed is reset each time. */
static double objective(void *p)
{
    Ctx *c = p;
    rng_seed(&c->rs->rng, 7);
    return model_forward(c->m, c->rs, c->batch, 1) / c->batch->n_tokens;
}

/* The rounding jitter of the objective around x[0]: the largest residual of a straight-
 * line fit to L(x + k * 1e-5), k = -10..10, where the true change is linear to ~1e-9. */
static double loss_jitter(Ctx *c, float *x)
{
    enum { K = 21 };
    double dx[K], L[K], mx = 0, mL = 0, sxy = 0, sxx = 0, worst = 0;
    float orig = x[0];
    for (int k = 0; k < K; k++) {
        x[0] = orig + (k - K / 2) * 1e-5f;
        dx[k] = (double)x[0] - orig;
        L[k] = objective(c);
        mx += dx[k] / K;
        mL += L[k] / K;
    }
    x[0] = orig;
    for (int k = 0; k < K; k++) {
        sxy += (dx[k] - mx) * (L[k] - mL);
        sxx += (dx[k] - mx) * (dx[k] - mx);
    }
    for (int k = 0; k < K; k++) {
        double r = fabs(L[k] - mL - sxy / sxx * (dx[k] - mx));
        if (!isfinite(r)) return INFINITY;   /* a non-finite loss must fail the bound, not vanish from the max */
        if (r > worst) worst = r;
    }
    return worst;
}

/* The backward pass of one family member against finite differences; the base model
 * also measures the loss's rounding jitter that atol rests on. */
static void check_member(const char *label, const ModelDims *d, float dropout, float sample, float smoothing,
                         const Batch *cbatch)
{
    Batch *batch = (Batch *)cbatch;
    Model m;
    model_alloc(&m, d);
    model_init_weights(&m, 42);
    TensorShape shapes[MAX_TENSORS];
    float *params[MAX_TENSORS], *grads[MAX_TENSORS];
    int n_t = params_shapes(&m.dims, shapes);
    params_tensors(&m.params, &m.dims, params);
    params_tensors(&m.grads, &m.dims, grads);
    for (int i = 0; i < n_t; i++)
        if (params[i] != m.params.src_emb && params[i] != m.params.tgt_emb)
            for (long k = 0; k < shapes[i].rows * shapes[i].cols; k++)
                params[i][k] *= WEIGHT_SCALE;
    RunState rs;
    runstate_alloc(&rs, &m.dims, RUN_TRAIN, batch->B, batch->S, batch->T);
    rs.dropout = dropout;
    rs.sample_prob = sample;
    rs.label_smoothing = smoothing;
    Ctx c = {&m, &rs, batch};

    model_zero_grad(&m);
    double loss = objective(&c);
    model_backward(&m, &rs, batch);
    char what[160];
    snprintf(what, sizeof what, "%s: finite positive loss", label);
    CHECK(isfinite(loss) && loss > 0, what);
    snprintf(what, sizeof what, "%s: repeated forward passes agree", label);
    CHECK(objective(&c) == loss, what);
    if (dropout == 0.0f && sample == 0.0f && smoothing == 0.0f) {
        snprintf(what, sizeof what, "%s: forward with and without gradients agree", label);
        CHECK(model_forward(&m, &rs, batch, 0) / batch->n_tokens == loss, what);
    } else {
        snprintf(what, sizeof what, "%s: dropout, sampling or smoothing changes the training loss, not the held-out one", label);
        double plain = model_forward(&m, &rs, batch, 0) / batch->n_tokens;
        CHECK(plain != loss && isfinite(plain), what);
    }

    /* Sampled inputs are a discrete choice: the loss is differentiable for fixed choices,
     * so the finite differences run teacher-forced on the words the sampled pass fed. */
    Batch fed = *batch;
    if (sample > 0.0f) {
        long TB = batch_step_at(batch, batch->T);  /* T*B, or the real tokens when packed */
        fed.tgt_in = xmalloc(sizeof(int) * TB);
        memcpy(fed.tgt_in, rs.fed, sizeof(int) * TB);
        int own = 0, pad_kept = 1;
        for (long i = 0; i < TB; i++) {
            own += fed.tgt_in[i] != batch->tgt_in[i];
            pad_kept &= (batch->tgt_in[i] == 0) == (fed.tgt_in[i] == 0);
        }
        snprintf(what, sizeof what, "%s: some inputs were the model's own words (%d of %ld)", label, own, TB);
        CHECK(own > 0, what);
        snprintf(what, sizeof what, "%s: padding stays padding", label);
        CHECK(pad_kept, what);
        rs.sample_prob = 0.0f;
        c.batch = &fed;
        double forced = objective(&c);
        snprintf(what, sizeof what, "%s: teacher forcing on the fed words gives the same loss", label);
        CHECK(fabs(forced - loss) <= 1e-6 * fabs(loss), what);
    }

    if (!strcmp(label, "base")) {
        double jitter = 0;
        for (int i = 0; i < n_t; i += 3) {
            double j = loss_jitter(&c, params[i]);
            if (j > jitter) jitter = j;
        }
        printf("  loss %.6f, rounding jitter %.3g (bound %.1g)\n", loss, jitter, JITTER);
        CHECK(jitter <= JITTER, "the loss's rounding jitter is within the bound atol assumes");
    }

    Rng rng;
    rng_seed(&rng, 1);
    GradCheckOpts o = {.eps = EPS, .rtol = 1e-2, .atol = 2 * JITTER / (2 * EPS), .n_sample = 30, .rng = &rng};
    for (int i = 0; i < n_t; i++) {
        /* Flattened: a coordinate is a coordinate; the tensor is contiguous. */
        long n = shapes[i].rows * shapes[i].cols;
        snprintf(what, sizeof what, "%.60s %.47s", label, shapes[i].name);
        check_grad(what, objective, &c, params[i], n, grads[i], n, 1, n, &o);
    }

    /* The <pad> rows feed only masked encoder steps and decoder steps with a pad target:
     * their gradient must be exactly zero, not merely small (tied: the output layer's
     * <pad> row does get a gradient, from the softmax). */
    int pad_zero = 1;
    for (int e = 0; e < d->embed; e++)
        pad_zero &= m.grads.src_emb[e] == 0.0f && (d->tie_embeddings || m.grads.tgt_emb[e] == 0.0f);
    snprintf(what, sizeof what, "%s: the <pad> embedding rows get exactly zero gradient", label);
    CHECK(pad_zero, what);

    /* model_backward accumulates: a second pass on the same batch doubles every gradient
     * (up to the rounding of the accumulating products). */
    float *once = xmalloc(sizeof(float) * m.n_params);
    for (long k = 0; k < m.n_params; k++)
        once[k] = 2 * m.grad_mem[k];
    objective(&c);
    model_backward(&m, &rs, c.batch);
    snprintf(what, sizeof what, "%s: second backward adds", label);
    check_close_scaled(m.grad_mem, once, m.n_params, 1e-6, what);
    free(once);
    if (sample > 0.0f) free(fed.tgt_in);

    runstate_free(&rs);
    model_free(&m);
}

int main(void)
{
    /* Word ids start at 4 (0..3 are <pad> <unk> <sos> <eos>); <unk> may occur. */
    int s0[] = {4, 5, 6, 7, 8}, t0[] = {4, 5, 6};
    int s1[] = {8, 4}, t1[] = {9, 7, 5, 4, 6};
    int s2[] = {5, 5, 1, 7}, t2[] = {6};
    Example ex[3] = {{s0, t0, 5, 3}, {s1, t1, 2, 5}, {s2, t2, 4, 1}};
    int idx[3] = {0, 1, 2};
    Batch batch = {0};
    batch_fill(&batch, ex, idx, 3);
    CHECK(batch.B == 3 && batch.S == 5 && batch.T == 6 && batch.n_tokens == 12, "batch shape");

    ModelDims base = {.src_vocab = 9, .tgt_vocab = 10, .embed = 4, .hidden = 5};
    check_member("base", &base, 0.0f, 0.0f, 0.0f, &batch);

    /* The family, at an even hidden size (bidirectional halves it). */
    ModelDims f = {.src_vocab = 9, .tgt_vocab = 10, .embed = 4, .hidden = 6, .layers = 1, .window = 2};
    struct {
        const char *label;
        int cell, layers, bi, attention, feed, scaled, tie;
        float dropout, sample, smoothing;
    } members[] = {
        {"luong_dot", CELL_GRU, 1, 0, ATT_LUONG_DOT, 0, 0, 0, 0, 0, 0},
        {"luong_dot scaled feed", CELL_GRU, 1, 0, ATT_LUONG_DOT, 1, 1, 0, 0, 0, 0},
        {"luong_general feed", CELL_GRU, 1, 0, ATT_LUONG_GENERAL, 1, 0, 0, 0, 0, 0},
        {"luong_concat", CELL_GRU, 1, 0, ATT_LUONG_CONCAT, 0, 0, 0, 0, 0, 0},
        {"local_monotonic feed", CELL_GRU, 1, 0, ATT_LOCAL_MONOTONIC, 1, 0, 0, 0, 0, 0},
        {"local_predictive", CELL_GRU, 1, 0, ATT_LOCAL_PREDICTIVE, 0, 1, 0, 0, 0, 0},
        {"lstm", CELL_LSTM, 1, 0, ATT_BAHDANAU, 0, 0, 0, 0, 0, 0},
        {"lstm luong_general feed", CELL_LSTM, 1, 0, ATT_LUONG_GENERAL, 1, 0, 0, 0, 0, 0},
        {"bidirectional", CELL_GRU, 1, 1, ATT_BAHDANAU, 0, 0, 0, 0, 0, 0},
        {"bidirectional lstm", CELL_LSTM, 1, 1, ATT_LUONG_DOT, 0, 0, 0, 0, 0, 0},
        {"2 layers", CELL_GRU, 2, 0, ATT_BAHDANAU, 0, 0, 0, 0, 0, 0},
        {"2 layers lstm bidirectional concat feed", CELL_LSTM, 2, 1, ATT_LUONG_CONCAT, 1, 0, 0, 0, 0, 0},
        {"tied", CELL_GRU, 1, 0, ATT_BAHDANAU, 0, 0, 1, 0, 0, 0},
        {"dropout 2 layers", CELL_GRU, 2, 0, ATT_BAHDANAU, 0, 0, 0, 0.3f, 0, 0},
        {"dropout lstm luong feed", CELL_LSTM, 2, 1, ATT_LUONG_GENERAL, 1, 0, 0, 0.3f, 0, 0},
        /* Half the decoder inputs are the model's own best words. */
        {"scheduled sampling", CELL_GRU, 1, 0, ATT_BAHDANAU, 0, 0, 0, 0, 0.5f, 0},
        {"scheduled sampling luong feed", CELL_LSTM, 1, 0, ATT_LUONG_GENERAL, 1, 0, 0, 0, 0.5f, 0},
        {"label smoothing", CELL_GRU, 1, 0, ATT_BAHDANAU, 0, 0, 0, 0, 0, 0.1f},
        {"label smoothing tied luong", CELL_GRU, 1, 0, ATT_LUONG_DOT, 1, 0, 1, 0, 0, 0.2f},
    };
    /* Each member on the same sentences as a plain batch, then packed (batch.h: rows
     * by target length, nothing computed past a sentence's end). */
    Batch packed = {0};
    batch_fill_packed(&packed, ex, idx, 3);
    CHECK(packed.n_tokens == 12 && batch_step_at(&packed, packed.T) == 12 && batch_step_rows(&packed, 1) == 3 &&
              batch_step_rows(&packed, 2) == 2 && batch_step_rows(&packed, 5) == 1,
          "packed batch: 12 tokens, 3 rows at step 1, 2 at step 2, 1 at step 5");
    for (size_t i = 0; i < 2 * (sizeof members / sizeof members[0]); i++) {
        size_t k = i % (sizeof members / sizeof members[0]);
        const Batch *which = i == k ? &batch : &packed;
        char label[160];
        snprintf(label, sizeof label, "%s%s", which == &packed ? "packed " : "", members[k].label);
        ModelDims d = f;
        d.cell = members[k].cell;
        d.layers = members[k].layers;
        d.bidirectional = members[k].bi;
        d.attention = members[k].attention;
        d.input_feed = members[k].feed;
        d.scaled = members[k].scaled;
        d.tie_embeddings = members[k].tie;
        if (d.tie_embeddings) d.embed = d.hidden;
        CHECK(dims_problem(&d) == NULL, label);
        check_member(label, &d, members[k].dropout, members[k].sample, members[k].smoothing, which);
    }
    batch_free(&batch);
    batch_free(&packed);
    return check_report("test_gradcheck");
}
