/* test_rnn_packs.c — the recurrent family's training passes with their per-step weights
 * packed once per pass (rnn.h's rnn_pack_steps and rnn_pack_steps_backward: the weights'
 * rows for the forward steps' x · W^T, their columns for the backward steps' dgates · W)
 * give the very bits of the same passes with every product plain (matmul_bias,
 * cblas_sgemm): a few training steps (forward, backward, Adam) of GRU and LSTM models,
 * with and without the packs, end with the same weights and losses bit for bit. Also
 * the layers' forward passes with w_hh_packed against the same passes without it.
 *
 * Where packed_matches_blas() is 0 (an OpenBLAS kernel that sums otherwise) nothing is
 * packed and the products are plain in both runs: the comparisons still hold, and the
 * checks that packing happened are skipped, saying so. OpenBLAS runs one thread here, as
 * it does under training's workers: on more, nothing is packed (linalg.h). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "examples.h"         /* defines: random_examples */
#include "data/corpus.h"     /* defines: Example, examples_free */
#include "kernels/blas.h"    /* defines: blas_select_kernel */
#include "kernels/linalg.h"  /* defines: packed_matches_blas, matmul_pack_for_rows */
#include "layers/adam.h"     /* defines: Adam, adam_* */
#include "layers/gru.h"      /* defines: GruWeights, gru_packed_forward */
#include "layers/lstm.h"     /* defines: LstmWeights, lstm_packed_forward */
#include "models/rnn.h"      /* defines: rnn_steps_packed */

#define N_EX 24
#define STEPS 3

/* STEPS training steps of a model with dims d over batches of B examples; packs 0
 * takes the run state's packs away (RunState.own: every product plain). Leaves the
 * weights in params (n floats), the losses in loss, and the weights the first pass
 * packed in *packed. */
static void train_steps(const ModelDims *d, const Example *ex, int B, float sample_prob, int packs, float *params,
                        double *loss, int *packed)
{
    Model m;
    model_alloc(&m, d);
    model_init_weights(&m, 7);
    Adam opt;
    adam_init(&opt, m.n_params, 0.01f);
    RunState rs = {0};
    Batch batch = {0};
    *packed = 0;
    for (int s = 0; s < STEPS; s++) {
        int idx[N_EX];
        for (int i = 0; i < B; i++)
            idx[i] = (s * B + i) % N_EX;
        model_fill_batch(&m, &batch, ex, idx, B);
        runstate_ensure(&rs, &m.dims, RUN_TRAIN, B, batch.S, batch.T);
        if (!packs && rs.own) {
            rs.own_free(rs.own);
            rs.own = NULL, rs.own_free = NULL;
        }
        rs.dropout = 0.1f;
        rs.sample_prob = sample_prob;
        model_zero_grad(&m);
        loss[s] = model_forward(&m, &rs, &batch, 1);
        model_backward(&m, &rs, &batch);
        if (s == 0) *packed = rnn_steps_packed(&rs);
        adam_update(&opt, m.param_mem, m.grad_mem, 1.0f);
    }
    memcpy(params, m.param_mem, sizeof(float) * m.n_params);
    runstate_free(&rs);
    batch_free(&batch);
    adam_free(&opt);
    model_free(&m);
}

static void test_training(const char *what, const ModelDims *d, int B, float sample_prob)
{
    Example *ex = random_examples(N_EX, d->tgt_vocab, 9, 11);
    Model shape;
    model_alloc(&shape, d);
    long n = shape.n_params;
    model_free(&shape);
    float *with = xmalloc(sizeof(float) * n), *without = xmalloc(sizeof(float) * n);
    double loss_with[STEPS], loss_without[STEPS];
    int packed, none;
    train_steps(d, ex, B, sample_prob, 1, with, loss_with, &packed);
    train_steps(d, ex, B, sample_prob, 0, without, loss_without, &none);
    char msg[160];
    snprintf(msg, sizeof msg, "%s: %d steps with the step weights packed, the weights of the plain run to the bit",
             what, STEPS);
    CHECK(!memcmp(with, without, sizeof(float) * n), msg);
    snprintf(msg, sizeof msg, "%s: the losses of the plain run to the bit (%.9g)", what, loss_with[STEPS - 1]);
    CHECK(!memcmp(loss_with, loss_without, sizeof loss_with), msg);
    snprintf(msg, sizeof msg, "%s: the plain run packed nothing", what);
    CHECK(none == 0, msg);
    /* Packs only where the packed products give OpenBLAS's bits (its SkylakeX kernel);
     * elsewhere (its Zen or Haswell kernel) the packed run must pack nothing. */
    if (packed_matches_blas()) {
        snprintf(msg, sizeof msg, "%s: the packed run packed its step weights", what);
        printf("  (%s: %d weights packed per step, forward and backward)\n", what, packed);
        CHECK(packed > 0, msg);
    } else {
        snprintf(msg, sizeof msg, "%s: the packed run packed nothing (packed_matches_blas() is 0 here)", what);
        CHECK(packed == 0, msg);
    }
    free(with);
    free(without);
    examples_free(ex, N_EX);
}

/* ---------------------------------------------------------------- the layers */

static float *random_floats(long n, Rng *rng, float scale)
{
    float *x = xmalloc(sizeof(float) * (n + 1));
    for (long i = 0; i < n; i++)
        x[i] = (rng_uniform(rng) * 2 - 1) * scale;
    return x;
}

/* A packed batch of B rows, longest first, over S positions, and the layer's forward
 * pass with w_hh packed and plain, in both directions. */
static void test_layers(int lstm, int B, int S, int IN, int H)
{
    int G = (lstm ? 4 : 3) * H, off[64];
    off[0] = 0;
    for (int t = 0; t < S; t++)
        off[t + 1] = off[t] + B - (t * B) / (S + 1);  /* fewer rows as sentences end */
    long N = off[S];
    Rng rng;
    rng_seed(&rng, 5);
    float *w_ih = random_floats((long)G * IN, &rng, 0.2f), *w_hh = random_floats((long)G * H, &rng, 0.2f);
    float *b_ih = random_floats(G, &rng, 0.1f), *b_hh = random_floats(G, &rng, 0.1f);
    float *x = random_floats(N * IN, &rng, 1.0f);
    PackedMatrix pw = {0};
    const PackedMatrix *hh = matmul_pack_for_rows(&pw, w_hh, H, G, H, B);
    for (int reverse = 0; reverse < 2; reverse++) {
        float *out[2][5];
        for (int v = 0; v < 2; v++) {
            float **o = out[v];
            o[0] = xcalloc((B + N) * H, sizeof(float));  /* h */
            o[1] = xcalloc((B + N) * H, sizeof(float));  /* c */
            o[2] = xcalloc(N * G + 1, sizeof(float));    /* gi */
            o[3] = xcalloc(N * G + 1, sizeof(float));    /* gh */
            o[4] = xcalloc(N * G + 1, sizeof(float));    /* gate cache */
            float *stage = xcalloc(4 * (long)B * H, sizeof(float));
            const PackedMatrix *p = v ? hh : NULL;
            if (lstm) {
                LstmWeights w = {w_ih, w_hh, b_ih, b_hh, IN, H, p, NULL};
                lstm_packed_forward(&w, x, o[0], o[1], o[2], o[3], o[4], off, S, B, reverse, stage);
            } else {
                GruWeights w = {w_ih, w_hh, b_ih, b_hh, IN, H, p, NULL};
                gru_packed_forward(&w, x, o[0], o[2], o[3], o[4], off, S, B, reverse, stage);
            }
            free(stage);
        }
        char msg[160];
        snprintf(msg, sizeof msg, "%s %s, %d rows, in %d, hidden %d: states with w_hh packed", lstm ? "LSTM" : "GRU",
                 reverse ? "reverse" : "forward", B, IN, H);
        check_identical(out[1][0], out[0][0], (B + N) * H, msg);
        snprintf(msg, sizeof msg, "%s %s, %d rows: the recurrent pre-activations with w_hh packed",
                 lstm ? "LSTM" : "GRU", reverse ? "reverse" : "forward", B);
        check_identical(out[1][3], out[0][3], N * G, msg);
        for (int v = 0; v < 2; v++)
            for (int i = 0; i < 5; i++)
                free(out[v][i]);
    }
    char msg[128];
    if (packed_matches_blas()) {
        snprintf(msg, sizeof msg, "%s, %d rows, hidden %d: w_hh packed for the steps", lstm ? "LSTM" : "GRU", B, H);
        CHECK(hh != NULL, msg);
    } else {
        snprintf(msg, sizeof msg, "%s, %d rows, hidden %d: w_hh not packed (packed_matches_blas() is 0 here)",
                 lstm ? "LSTM" : "GRU", B, H);
        CHECK(hh == NULL, msg);
    }
    packed_matrix_free(&pw);
    free(w_ih), free(w_hh), free(b_ih), free(b_hh), free(x);
}

int main(int argc, char **argv)
{
    (void)argc;
    blas_select_kernel(argv);   /* as nmt does: OpenBLAS's SkylakeX kernel where the CPU has AVX-512 */
    blas_set_threads(2);
    PackedMatrix none = {0};
    float w2[64 * 64] = {0};
    CHECK(!matmul_pack_for_rows(&none, w2, 64, 64, 64, 32) && !matmul_pack_columns_for_rows(&none, w2, 64, 64, 64, 32),
          "OpenBLAS on 2 threads: nothing packed (its sums may differ from the packed products')");
    blas_set_threads(1);
    test_layers(0, 12, 7, 40, 64);
    test_layers(1, 12, 7, 40, 64);
    test_layers(0, 64, 5, 24, 96);
    test_layers(1, 33, 6, 600, 80);   /* K 600: two blocks of sums in the input product */

    ModelDims gru = {.src_vocab = 41, .tgt_vocab = 37, .embed = 24, .hidden = 160};
    test_training("GRU, Bahdanau", &gru, 16, 0.0f);
    ModelDims gru2 = gru;
    gru2.layers = 2, gru2.bidirectional = 1, gru2.attention = ATT_LUONG_CONCAT, gru2.input_feed = 1;
    test_training("GRU, 2 layers, bidirectional, luong_concat, input feeding", &gru2, 16, 0.0f);
    ModelDims lstm = gru;
    lstm.cell = CELL_LSTM;
    test_training("LSTM, Bahdanau, scheduled sampling", &lstm, 16, 0.5f);
    ModelDims lstm2 = lstm;
    lstm2.layers = 2, lstm2.attention = ATT_LOCAL_PREDICTIVE, lstm2.window = 2, lstm2.input_feed = 1;
    test_training("LSTM, 2 layers, local_predictive, input feeding", &lstm2, 8, 0.0f);
    return check_report("test_rnn_packs");
}
