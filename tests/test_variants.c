/* test_variants.c — every member of the model family against the PyTorch reference
 * (scripts/reference/reference_variants.py, fixtures tests/fixtures/variant_*.bin): encoder
 * states, attention weights, logits, the loss and the gradient of every tensor.
 *
 * The fixture names its architecture in an "arch" record; the parameters are loaded by
 * name, so a tensor missing from either side, or in another order, fails the test.
 * Encoder states are compared at real source positions (padding holds carried values on
 * both sides, but nothing reads them). Gradients are compared relative to each tensor's
 * largest entry, as in test_model.c. */
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "models/model.h"
#include "text/vocab.h" /* defines: VOCAB_PAD, VOCAB_EOS */

static void check_variant(const char *name)
{
    char path[160], what[160];
    snprintf(path, sizeof path, "tests/fixtures/variant_%s.bin", name);
    Fixture f = fixture_load(path);
    int *dims = fixture_get(&f, "dims")->data, *arch = fixture_get(&f, "arch")->data;
    int B = dims[0], S = dims[1], T = dims[2];
    ModelDims d = {.embed = dims[3], .hidden = dims[4], .src_vocab = dims[5], .tgt_vocab = dims[6],
                   .cell = arch[0], .layers = arch[1], .bidirectional = arch[2], .attention = arch[3],
                   .input_feed = arch[4], .window = arch[5], .scaled = arch[6], .tie_embeddings = arch[7]};
    int H = d.hidden;
    snprintf(what, sizeof what, "%s: a valid architecture", name);
    CHECK(dims_problem(&d) == NULL, what);

    Model m;
    model_alloc(&m, &d);
    TensorShape shapes[MAX_TENSORS];
    float *params[MAX_TENSORS], *grads[MAX_TENSORS];
    int n_t = params_shapes(&m.dims, shapes);
    params_tensors(&m.params, &m.dims, params);
    params_tensors(&m.grads, &m.dims, grads);
    /* The fixture's parameter records are the ones between tgt_out and enc_states. */
    int first = 0, n_fix = 0;
    for (int i = 0; i < f.n; i++) {
        if (!strcmp(f.t[i].name, "tgt_out")) first = i + 1;
        if (!strcmp(f.t[i].name, "enc_states")) n_fix = i - first;
    }
    snprintf(what, sizeof what, "%s: %d tensors, as many as the reference has", name, n_t);
    CHECK(n_fix == n_t, what);
    for (int i = 0; i < n_t && i < n_fix; i++) {
        FixtureTensor *t = &f.t[first + i];
        snprintf(what, sizeof what, "%s: tensor %d is %.47s (%ld x %ld)", name, i, shapes[i].name, shapes[i].rows,
                 shapes[i].cols);
        int same = !strcmp(t->name, shapes[i].name) && t->n == shapes[i].rows * shapes[i].cols;
        CHECK(same, what);
        if (same) memcpy(params[i], t->data, sizeof(float) * t->n);
    }

    Batch batch = {0};
    batch.B = B;
    batch.S = S;
    batch.T = T;
    batch.src = fixture_get(&f, "src")->data;
    batch.tgt_in = fixture_get(&f, "tgt_in")->data;
    batch.tgt_out = fixture_get(&f, "tgt_out")->data;
    float mask[256];
    for (int i = 0; i < S * B; i++)
        mask[i] = batch.src[i] != 0;
    batch.mask = mask;
    for (int i = 0; i < T * B; i++)
        batch.n_tokens += batch.tgt_out[i] != 0;

    RunState rs = {0};
    runstate_alloc(&rs, &m.dims, RUN_TRAIN, B, S, T);
    double loss = model_forward(&m, &rs, &batch, 0) / batch.n_tokens;
    /* Encoder states at real positions only. */
    const float *enc = model_memory(&m, &rs), *want = fixture_get(&f, "enc_states")->data;
    float got_real[4096], want_real[4096];
    long n_real = 0;
    for (int i = 0; i < S * B && n_real + H <= 4096; i++)
        if (mask[i] != 0.0f) {
            memcpy(got_real + n_real, enc + (long)i * H, sizeof(float) * H);
            memcpy(want_real + n_real, want + (long)i * H, sizeof(float) * H);
            n_real += H;
        }
    snprintf(what, sizeof what, "%s: encoder states", name);
    check_close(got_real, want_real, n_real, 1e-5, what);
    snprintf(what, sizeof what, "%s: attention weights", name);
    check_close(rs.attn, fixture_get(&f, "attn")->data, (long)T * B * S, 1e-5, what);
    snprintf(what, sizeof what, "%s: logits", name);
    check_close(rs.logits, fixture_get(&f, "logits")->data, (long)T * B * d.tgt_vocab, 1e-5, what);
    float lossf = (float)loss;
    snprintf(what, sizeof what, "%s: loss", name);
    check_close(&lossf, fixture_get(&f, "loss")->data, 1, 1e-6, what);

    model_zero_grad(&m);
    model_forward(&m, &rs, &batch, 1);
    model_backward(&m, &rs, &batch);
    for (int i = 0; i < n_t && i < n_fix; i++) {
        snprintf(what, sizeof what, "grad.%.47s", shapes[i].name);
        FixtureTensor *t = fixture_get(&f, what);
        snprintf(what, sizeof what, "%s: grad.%.47s", name, shapes[i].name);
        check_close_scaled(grads[i], t->data, shapes[i].rows * shapes[i].cols, 2e-5, what);
    }

    /* The same sentences as a packed batch (rows sorted by target length, no target
     * padding: batch.h): the loss and every gradient must be the reference's still. */
    Example ex[64];
    int idx[64], rows_at_last = 0;
    for (int b = 0; b < B && b < 64; b++) {
        ex[b].src = xmalloc(sizeof(int) * S);
        ex[b].tgt = xmalloc(sizeof(int) * T);
        ex[b].src_len = ex[b].tgt_len = 0;
        for (int t = 0; t < S && batch.src[t * B + b] != VOCAB_PAD; t++)
            ex[b].src[ex[b].src_len++] = batch.src[t * B + b];
        for (int t = 0; t < T && batch.tgt_out[t * B + b] != VOCAB_EOS; t++)
            ex[b].tgt[ex[b].tgt_len++] = batch.tgt_out[t * B + b];
        idx[b] = b;
    }
    Batch packed = {0};
    batch_fill_packed(&packed, ex, idx, B);
    rows_at_last = batch_step_rows(&packed, packed.T - 1);
    snprintf(what, sizeof what, "%s: the packed batch has %d real tokens and %d row%s at its last step", name,
             packed.n_tokens, rows_at_last, rows_at_last == 1 ? "" : "s");
    CHECK(packed.n_tokens == batch.n_tokens && batch_step_at(&packed, packed.T) == packed.n_tokens &&
              rows_at_last < B, what);
    /* Its source side packed too, in an order of its own: fewer entries than S x B, and
     * some encoder row not at its batch row (the fixtures' sentences sort differently by
     * source and by target length), so the test runs the unpacking both ways. */
    int src_reordered = 0;
    for (int i = 0; i < B; i++)
        src_reordered |= packed.enc_row[i] != i;
    snprintf(what, sizeof what, "%s: the packed source side has %d of %d entries, in its own row order", name,
             packed.src_off[packed.S], packed.S * B);
    CHECK(packed.src_off[packed.S] < packed.S * B && src_reordered, what);
    model_zero_grad(&m);
    lossf = (float)(model_forward(&m, &rs, &packed, 1) / packed.n_tokens);
    model_backward(&m, &rs, &packed);
    snprintf(what, sizeof what, "%s: packed loss", name);
    check_close(&lossf, fixture_get(&f, "loss")->data, 1, 1e-6, what);
    for (int i = 0; i < n_t && i < n_fix; i++) {
        snprintf(what, sizeof what, "grad.%.47s", shapes[i].name);
        FixtureTensor *t = fixture_get(&f, what);
        snprintf(what, sizeof what, "%s: packed grad.%.47s", name, shapes[i].name);
        check_close_scaled(grads[i], t->data, shapes[i].rows * shapes[i].cols, 2e-5, what);
    }
    for (int b = 0; b < B && b < 64; b++) {
        free(ex[b].src);
        free(ex[b].tgt);
    }
    batch_free(&packed);
    runstate_free(&rs);
    model_free(&m);
    fixture_free(&f);
}

int main(void)
{
    const char *variants[] = {
        "luong_general_feed", "bidirectional", "layers2", "lstm", "lstm_bi2_concat",
        "luong_dot_scaled", "local_monotonic", "local_predictive",
    };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        check_variant(variants[i]);
    return check_report("test_variants");
}
