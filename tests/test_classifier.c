/* test_classifier.c — the sentence classifier (model.type classifier): the whole model
 * against the PyTorch reference (scripts/reference/reference_classifier.py, fixtures
 * tests/fixtures/classifier_*.bin: encoder states, pooling weights, pooled vectors,
 * logits, the weighted loss and every gradient), on packed batches (training) and
 * padded ones; then each pooling layer and the whole classifier (with dropout, label
 * smoothing and class weights) against finite differences.
 *
 * Parameters are loaded by name, so a tensor missing from either side, or in another
 * order, fails. Encoder states are compared at real positions; gradients relative to
 * each tensor's largest entry, as in test_variants.c. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "gradcheck.h"
#include "layers/bagofwords.h"
#include "models/model.h"
#include "layers/pooling.h"
#include "text/vocab.h" /* defines: VOCAB_PAD, VOCAB_SPECIALS */

/* The examples of a fixture's (S, B) source columns, with their labels. */
static Example *fixture_examples(const int *src, const int *labels, int S, int B)
{
    Example *ex = xcalloc(B, sizeof(Example));
    for (int b = 0; b < B; b++) {
        ex[b].src = xmalloc(sizeof(int) * S);
        for (int t = 0; t < S && src[t * B + b] != VOCAB_PAD; t++)
            ex[b].src[ex[b].src_len++] = src[t * B + b];
        ex[b].label = labels[b];
    }
    return ex;
}

/* One pass over batch with the fixture's expectations: activations and loss, then
 * every gradient. */
static void compare(const char *name, const char *how, Model *m, Fixture *f, const Batch *batch, const float *weights)
{
    char what[200];
    const ModelDims *d = &m->dims;
    int B = batch->B, S = batch->S, H = d->hidden, C = model_classes(d);
    RunState rs = {0};
    runstate_alloc(&rs, d, RUN_TRAIN, B, S, 1);
    rs.class_weight = weights;
    model_zero_grad(m);
    float loss = (float)(model_forward(m, &rs, batch, 1) / B);

    const float *enc = model_memory(m, &rs), *want = fixture_get(f, "enc_states")->data;
    float got_real[4096], want_real[4096];
    long n_real = 0;
    for (int i = 0; i < S * B && n_real + H <= 4096; i++)
        if (batch->mask[i] != 0.0f) {
            memcpy(got_real + n_real, enc + (long)i * H, sizeof(float) * H);
            memcpy(want_real + n_real, want + (long)i * H, sizeof(float) * H);
            n_real += H;
        }
    snprintf(what, sizeof what, "%s, %s: encoder states", name, how);
    check_close(got_real, want_real, n_real, 1e-5, what);
    if (d->pooling == POOL_ATTENTION) {
        snprintf(what, sizeof what, "%s, %s: attention weights", name, how);
        check_close(rs.pool_attn, fixture_get(f, "attn")->data, (long)B * S, 1e-5, what);
    }
    snprintf(what, sizeof what, "%s, %s: pooled", name, how);
    check_close(rs.pooled, fixture_get(f, "pooled")->data, (long)B * H, 1e-5, what);
    snprintf(what, sizeof what, "%s, %s: loss", name, how);
    check_close(&loss, fixture_get(f, "loss")->data, 1, 1e-6, what);

    /* The logits were replaced by their gradient: again without one. */
    model_forward(m, &rs, batch, 0);
    snprintf(what, sizeof what, "%s, %s: logits", name, how);
    check_close(rs.logits, fixture_get(f, "logits")->data, (long)B * C, 1e-5, what);
    model_zero_grad(m);
    model_forward(m, &rs, batch, 1);
    model_backward(m, &rs, batch);
    TensorShape shapes[MAX_TENSORS];
    float *grads[MAX_TENSORS];
    int n_t = params_shapes(d, shapes);
    params_tensors(&m->grads, d, grads);
    for (int i = 0; i < n_t; i++) {
        snprintf(what, sizeof what, "grad.%.47s", shapes[i].name);
        FixtureTensor *t = fixture_get(f, what);
        snprintf(what, sizeof what, "%s, %s: grad.%.47s", name, how, shapes[i].name);
        check_close_scaled(grads[i], t->data, shapes[i].rows * shapes[i].cols, 2e-5, what);
    }
    runstate_free(&rs);
}

static void check_fixture(const char *name)
{
    char path[160], what[200];
    snprintf(path, sizeof path, "tests/fixtures/classifier_%s.bin", name);
    Fixture f = fixture_load(path);
    int *dims = fixture_get(&f, "dims")->data, *arch = fixture_get(&f, "arch")->data;
    int B = dims[0], S = dims[1];
    ModelDims d = {.type = MODEL_CLASSIFIER, .embed = dims[2], .hidden = dims[3], .src_vocab = dims[4],
                   .tgt_vocab = dims[5] + VOCAB_SPECIALS, .cell = arch[0], .layers = arch[1],
                   .bidirectional = arch[2], .pooling = arch[3], .bag_of_words = arch[4]};
    snprintf(what, sizeof what, "%s: a valid classifier", name);
    CHECK(dims_problem(&d) == NULL, what);
    Model m;
    model_alloc(&m, &d);
    TensorShape shapes[MAX_TENSORS];
    float *params[MAX_TENSORS];
    int n_t = params_shapes(&m.dims, shapes);
    params_tensors(&m.params, &m.dims, params);
    int first = 0, n_fix = 0;   /* the parameter records: after class_weights, before enc_states */
    for (int i = 0; i < f.n; i++) {
        if (!strcmp(f.t[i].name, "class_weights")) first = i + 1;
        if (!strcmp(f.t[i].name, "enc_states")) n_fix = i - first;
    }
    snprintf(what, sizeof what, "%s: %d tensors, as many as the reference has (%d)", name, n_t, n_fix);
    CHECK(n_fix == n_t, what);
    for (int i = 0; i < n_t && i < n_fix; i++) {
        FixtureTensor *t = &f.t[first + i];
        snprintf(what, sizeof what, "%s: tensor %d is %.47s (%ld x %ld)", name, i, shapes[i].name, shapes[i].rows,
                 shapes[i].cols);
        int same = !strcmp(t->name, shapes[i].name) && t->n == shapes[i].rows * shapes[i].cols;
        CHECK(same, what);
        if (same) memcpy(params[i], t->data, sizeof(float) * t->n);
    }
    Example *ex = fixture_examples(fixture_get(&f, "src")->data, fixture_get(&f, "labels")->data, S, B);
    int idx[64];
    for (int b = 0; b < B; b++)
        idx[b] = b;
    const float *weights = fixture_get(&f, "class_weights")->data;
    Batch batch = {0};
    model_fill_batch(&m, &batch, ex, idx, B);
    snprintf(what, sizeof what, "%s: a packed batch of %d rows in batch order, one target each", name, B);
    int in_order = batch.src_off != NULL && batch.n_tokens == B;
    for (int b = 0; b < B; b++)
        in_order &= batch.label[b] == ex[b].label;
    CHECK(in_order, what);
    compare(name, "packed", &m, &f, &batch, weights);
    batch_fill(&batch, ex, idx, B);
    compare(name, "padded", &m, &f, &batch, weights);
    for (int b = 0; b < B; b++)
        free(ex[b].src);
    free(ex);
    batch_free(&batch);
    model_free(&m);
    fixture_free(&f);
}

/* ---------------------------------------------------------------- finite differences */

enum { GB = 3, GS = 6, GH = 4 };
static const int lens[GB] = {4, 6, 1};

typedef struct {
    int kind;
    float h[GS * GB * GH], w[GH], b[1], g[GB * GH];  /* g: the loss's weights on the output */
    float out[GB * GH], attn[GB * GS], score[GB * GS];
    int arg[GB * GH];
} PoolCase;

static void pool_forward(PoolCase *c)
{
    switch (c->kind) {
    case POOL_ATTENTION: pooling_attention_forward(c->out, c->attn, c->score, c->h, lens, GS, GB, GH, c->w, c->b); break;
    case POOL_LAST: pooling_last_forward(c->out, c->h, lens, GS, GB, GH, 1); break;
    case POOL_MEAN: pooling_mean_forward(c->out, c->h, lens, GS, GB, GH); break;
    default: pooling_max_forward(c->out, c->arg, c->h, lens, GS, GB, GH); break;
    }
}

static double pool_objective(void *ctx)
{
    PoolCase *c = ctx;
    pool_forward(c);
    double sum = 0;
    for (int i = 0; i < GB * GH; i++)
        sum += (double)c->g[i] * c->out[i];
    return sum;
}

static void check_pooling(int kind)
{
    Rng rng;
    rng_seed(&rng, 77 + kind);
    PoolCase c = {.kind = kind};
    fill_uniform(c.h, GS * GB * GH, 1.0f, &rng);
    fill_uniform(c.w, GH, 1.0f, &rng);
    fill_uniform(c.b, 1, 1.0f, &rng);
    fill_uniform(c.g, GB * GH, 1.0f, &rng);
    pool_forward(&c);
    float dh[GS * GB * GH] = {0}, dw[GH] = {0}, db[1] = {0};
    switch (kind) {
    case POOL_ATTENTION:
        pooling_attention_backward(dh, dw, db, c.g, c.h, c.attn, c.score, lens, GS, GB, GH, c.w);
        break;
    case POOL_LAST: pooling_last_backward(dh, c.g, lens, GS, GB, GH, 1); break;
    case POOL_MEAN: pooling_mean_backward(dh, c.g, lens, GS, GB, GH); break;
    default: pooling_max_backward(dh, c.g, c.arg, GB, GH); break;
    }
    GradCheckOpts o = {.eps = 1e-3f, .rtol = 1e-2};
    char what[64];
    snprintf(what, sizeof what, "%s pooling dh", pooling_name(kind));
    check_grad(what, pool_objective, &c, c.h, GH, dh, GH, GS * GB, GH, &o);
    /* Nothing reaches the padding. */
    int clean = 1;
    for (int t = 0; t < GS; t++)
        for (int b = 0; b < GB; b++)
            for (int k = 0; k < GH; k++)
                if (t >= lens[b]) clean &= dh[(t * GB + b) * GH + k] == 0.0f;
    snprintf(what, sizeof what, "%s pooling: no gradient on the padding", pooling_name(kind));
    CHECK(clean, what);
    if (kind == POOL_ATTENTION) {
        check_grad("attention pooling dw", pool_objective, &c, c.w, GH, dw, GH, 1, GH, &o);
        check_grad("attention pooling db", pool_objective, &c, c.b, 1, db, 1, 1, 1, &o);
        float sum1 = 0;
        for (int t = 0; t < lens[0]; t++)
            sum1 += c.attn[t];
        CHECK(fabsf(sum1 - 1.0f) < 1e-6f && c.attn[GS - 1] == 0.0f, "attention weights sum to 1, 0 on padding");
    }
}

/* The bag-of-words layer on its own: finite differences of dw, a repeated id counted
 * once, the padding never read. */
enum { WS = 5, WB = 3, WC = 2, WV = 9 };
typedef struct {
    float w[WV * WC], g[WB * WC], logits[WB * WC];
} BagCase;
static const int bag_src[WS * WB] = {4, 5, 6, /* t 0 */ 4, 7, 0, /* t 1 */ 8, 5, 0, /* t 2 */
                                     4, 0, 0, /* t 3 */ 3, 0, 0 /* t 4 */};
static const int bag_len[WB] = {5, 3, 1};

static double bag_objective(void *ctx)
{
    BagCase *c = ctx;
    memset(c->logits, 0, sizeof c->logits);
    bag_of_words_forward(c->logits, c->w, bag_src, bag_len, WS, WB, WC);
    double sum = 0;
    for (int i = 0; i < WB * WC; i++)
        sum += (double)c->g[i] * c->logits[i];
    return sum;
}

static void check_bag_of_words(void)
{
    Rng rng;
    rng_seed(&rng, 41);
    BagCase c;
    fill_uniform(c.w, WV * WC, 1.0f, &rng);
    fill_uniform(c.g, WB * WC, 1.0f, &rng);
    bag_objective(&c);
    /* Sentence 0 is {4, 8, 3} (4 three times), sentence 1 {5, 7} (5 twice), 2 {6}. */
    int exact = 1;
    for (int k = 0; k < WC; k++) {
        exact &= c.logits[k] == c.w[4 * WC + k] + c.w[8 * WC + k] + c.w[3 * WC + k];
        exact &= c.logits[WC + k] == c.w[5 * WC + k] + c.w[7 * WC + k];
        exact &= c.logits[2 * WC + k] == c.w[6 * WC + k];
    }
    CHECK(exact, "bag of words: each distinct id once, in order of first occurrence");
    float dw[WV * WC] = {0};
    bag_of_words_backward(dw, c.g, bag_src, bag_len, WS, WB, WC);
    GradCheckOpts o = {.eps = 1e-3f, .rtol = 1e-3};
    check_grad("bag of words dw", bag_objective, &c, c.w, WC, dw, WC, WV, WC, &o);
    CHECK(dw[0] == 0.0f && dw[1] == 0.0f, "bag of words: no gradient to the padding id");
}

/* The whole classifier: loss of a fixed batch with the same dropout masks each time. */
typedef struct {
    Model *m;
    RunState *rs;
    Batch *batch;
    Rng start;
} WholeCase;

static double whole_objective(void *ctx)
{
    WholeCase *c = ctx;
    c->rs->rng = c->start;
    return model_forward(c->m, c->rs, c->batch, 1) / c->batch->B;  /* the mean the gradient is of */
}

static void check_whole(const char *name, int cell, int layers, int bidirectional, int pooling, int bag_of_words)
{
    ModelDims d = {.type = MODEL_CLASSIFIER, .embed = 5, .hidden = 6, .src_vocab = 11, .tgt_vocab = 3 + VOCAB_SPECIALS,
                   .cell = cell, .layers = layers, .bidirectional = bidirectional, .pooling = pooling,
                   .bag_of_words = bag_of_words};
    Model m;
    model_alloc(&m, &d);
    model_init_weights(&m, 5);
    if (bag_of_words) { /* starts at zeros: give it values, so that the logits depend on it */
        Rng w;
        rng_seed(&w, 6);
        fill_uniform(m.params.bow_w, (long)d.src_vocab * model_classes(&d), 0.5f, &w);
    }
    Rng rng;
    rng_seed(&rng, 9);
    int len[5] = {3, 7, 1, 5, 2};
    Example ex[5];
    int idx[5];
    for (int b = 0; b < 5; b++) {
        ex[b] = (Example){.src = xmalloc(sizeof(int) * 7), .src_len = len[b], .label = b % 3};
        for (int t = 0; t < len[b]; t++)
            ex[b].src[t] = VOCAB_SPECIALS + (int)rng_below(&rng, 7);
        idx[b] = b;
    }
    Batch batch = {0};
    model_fill_batch(&m, &batch, ex, idx, 5);
    RunState rs = {0};
    runstate_alloc(&rs, &d, RUN_TRAIN, 5, 7, 1);
    float weights[3] = {0.7f, 1.6f, 1.1f};
    rs.class_weight = weights;
    rs.dropout = 0.25f;
    rs.label_smoothing = 0.1f;
    rng_seed(&rs.rng, 3);
    WholeCase c = {&m, &rs, &batch, rs.rng};
    model_zero_grad(&m);
    whole_objective(&c);
    model_backward(&m, &rs, &batch);
    TensorShape shapes[MAX_TENSORS];
    float *params[MAX_TENSORS], *grads[MAX_TENSORS];
    int n_t = params_shapes(&d, shapes);
    params_tensors(&m.params, &d, params);
    params_tensors(&m.grads, &d, grads);
    GradCheckOpts o = {.eps = 2e-3f, .rtol = 3e-2, .atol = 1e-4, .n_sample = 12, .rng = &rng};
    char what[96];
    for (int i = 0; i < n_t; i++) {
        snprintf(what, sizeof what, "%s %.40s", name, shapes[i].name);
        check_grad(what, whole_objective, &c, params[i], shapes[i].cols, grads[i], shapes[i].cols, shapes[i].rows,
                   shapes[i].cols, &o);
    }
    for (int b = 0; b < 5; b++)
        free(ex[b].src);
    batch_free(&batch);
    runstate_free(&rs);
    model_free(&m);
}

int main(void)
{
    const char *fixtures[] = {"gru_attention", "lstm_bi2_attention", "lstm_last", "gru_bi_last",
                              "gru_mean", "lstm_max", "weighted", "bag_of_words"};
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        check_fixture(fixtures[i]);
    for (int k = 0; k < POOL_KINDS; k++)
        check_pooling(k);
    check_whole("gru attention", CELL_GRU, 1, 0, POOL_ATTENTION, 0);
    check_whole("lstm bi2 attention", CELL_LSTM, 2, 1, POOL_ATTENTION, 0);
    check_whole("lstm bi last", CELL_LSTM, 1, 1, POOL_LAST, 0);
    check_whole("gru mean", CELL_GRU, 1, 1, POOL_MEAN, 0);
    check_whole("gru max", CELL_GRU, 2, 0, POOL_MAX, 0);
    check_whole("gru bi mean bag of words", CELL_GRU, 1, 1, POOL_MEAN, 1);
    check_bag_of_words();

    /* A classifier's rules: no decoder keys, a known pooling. */
    ModelDims bad = {.type = MODEL_CLASSIFIER, .embed = 4, .hidden = 4, .src_vocab = 8, .tgt_vocab = 6,
                     .tie_embeddings = 1};
    const char *p = dims_problem(&bad);
    CHECK(p && strstr(p, "model.tie_embeddings applies only to translation models"), "tie_embeddings refused");
    bad.tie_embeddings = 0;
    bad.pooling = POOL_KINDS;
    p = dims_problem(&bad);
    CHECK(p && strstr(p, "model.pooling must be"), "an unknown pooling refused");
    return check_report("test_classifier");
}
