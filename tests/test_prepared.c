/* test_prepared.c — decoding with prepared weights (kernels/prepared.h,
 * model_prepare_decoding): float32 gives the very logits of the unprepared model; int8
 * stays close to them, and gives a sentence the same logits whatever batch it is in.
 *
 * The models are random Transformers and recurrent models (random_model) decoded step
 * by step through their Decoder with the same fed words, so that every step's logits
 * can be compared, for 1 row per sentence (greedy) and 5 (a beam's rows), and through
 * the searches themselves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data/batch.h"
#include "decode/decode.h"
#include "kernels/blas.h"
#include "kernels/linalg.h"
#include "layers/pooling.h"
#include "models/model.h"
#include "text/vocab.h"
#include "base/util.h"

enum { N_SRC = 9, STEPS = 6, MAX_S = 12 };

/* The models: 0 a pre-norm relu Transformer, 1 a post-norm gelu one with tied
 * embeddings, 2 a GRU with Bahdanau attention, 3 a 2-layer LSTM, bidirectional encoder
 * (and so bridges), with Luong's general attention and input feeding (every product the
 * recurrent decoder has but the local kinds' and concat's). */
enum { N_MODELS = 4, N_TRANSFORMERS = 2 };
static void random_model(Model *m, int variant)
{
    ModelDims d = {.type = MODEL_TRANSFORMER, .embed = 64, .hidden = 64, .heads = 4, .ff = 160, .src_vocab = 50,
                   .tgt_vocab = 301, .enc_layers = 2, .dec_layers = 2};
    if (variant == 1) d.norm = NORM_POST, d.activation = ACT_GELU, d.tie_embeddings = 1, d.dec_layers = 1;
    if (variant >= 2)
        d = (ModelDims){.type = MODEL_RNN, .embed = 40, .hidden = 48, .src_vocab = 50, .tgt_vocab = 301,
                        .layers = variant == 3 ? 2 : 1, .cell = variant == 3 ? CELL_LSTM : CELL_GRU,
                        .attention = variant == 3 ? ATT_LUONG_GENERAL : ATT_BAHDANAU, .input_feed = variant == 3,
                        .bidirectional = variant == 3};
    model_alloc(m, &d);
    model_init_weights(m, 7 + variant);
}

/* Source sentence n: lengths 1 to 12, ids from 4 (the specials excluded). */
static int source(int n, int *ids)
{
    int len = 1 + (n * 5) % MAX_S;
    for (int j = 0; j < len; j++)
        ids[j] = 4 + (n * 13 + j * 7) % 46;
    return len;
}

/* Sentences [first, first + count) decoded with K rows each, fed fixed words (with
 * alike, the same words to a sentence's K rows), STEPS steps: logits (STEPS, count * K,
 * V) into out. */
static void step_logits_fed(Model *m, int first, int count, int K, int alike, float *out)
{
    int buf[N_SRC][MAX_S], lens[N_SRC], *rows[N_SRC];
    for (int n = 0; n < count; n++)
        lens[n] = source(first + n, buf[n]), rows[n] = buf[n];
    Batch batch = {0};
    batch_fill_source(&batch, rows, lens, count);
    RunState rs = {0};
    Decoder dec = model_family(&m->dims)->decoder(m, &rs);
    int R = count * K, V = m->dims.tgt_vocab, prev[N_SRC * 5];
    dec.start(dec.ctx, &batch, K, STEPS, 0);
    for (int t = 0; t < STEPS; t++) {
        for (int r = 0; r < R; r++)
            prev[r] = t == 0 ? VOCAB_SOS : 4 + ((first + r / K) * 31 + (alike ? 0 : r % K) * 3 + t * 17) % (V - 4);
        const float *attn = NULL;
        const float *logits = dec.step(dec.ctx, t, prev, &attn);
        memcpy(out + (long)t * R * V, logits, sizeof(float) * R * V);
    }
    decoder_close(&dec);
    runstate_free(&rs);
    batch_free(&batch);
}
static void step_logits(Model *m, int first, int count, int K, float *out)
{
    step_logits_fed(m, first, count, K, 0, out);
}

/* int8 decoding of a recurrent model encodes each sentence once and spreads it to its K
 * rows (rnn_repeat_encoding): fed the same words, each of a sentence's K rows has, at
 * every step, the logits of the sentence decoded with one row, bit for bit. */
static void test_int8_spread(int variant)
{
    Model m;
    random_model(&m, variant);
    model_prepare_decoding(&m, COMPUTE_INT8);
    int V = m.dims.tgt_vocab, K = 5;
    float *one = xmalloc(sizeof(float) * STEPS * N_SRC * V), *beam = xmalloc(sizeof(float) * STEPS * N_SRC * K * V);
    step_logits_fed(&m, 0, N_SRC, 1, 1, one);
    step_logits_fed(&m, 0, N_SRC, K, 1, beam);
    int same = 1;
    for (int t = 0; t < STEPS; t++)
        for (int r = 0; r < N_SRC * K; r++)
            same &= memcmp(beam + ((long)t * N_SRC * K + r) * V, one + ((long)t * N_SRC + r / K) * V,
                           sizeof(float) * V) == 0;
    char label[120];
    snprintf(label, sizeof label, "model %d: int8, %d rows per sentence = one row, bit for bit, %d steps", variant, K,
             STEPS);
    CHECK(same, label);
    free(one);
    free(beam);
    model_free(&m);
}

/* float32 prepared: every logit of every step identical to the unprepared model's. */
static void test_float32_identical(int variant)
{
    Model m;
    random_model(&m, variant);
    int V = m.dims.tgt_vocab;
    for (int K = 1; K <= 5; K += 4) {
        long n = (long)STEPS * N_SRC * K * V;
        float *plain = xmalloc(sizeof(float) * n), *prepared = xmalloc(sizeof(float) * n);
        model_prepare_decoding(&m, COMPUTE_INT8);
        model_prepare_decoding(&m, COMPUTE_FLOAT32);   /* replaces the int8 weights */
        step_logits(&m, 0, N_SRC, K, prepared);
        model_unprepare_decoding(&m);
        step_logits(&m, 0, N_SRC, K, plain);
        char label[120];
        snprintf(label, sizeof label, "model %d, %d rows per sentence: float32 prepared = unprepared (%s)", variant,
                 K, packed_matches_blas() ? "packed products" : "OpenBLAS is not SkylakeX: nothing packed");
        check_identical(prepared, plain, n, label);
        free(plain);
        free(prepared);
    }
    model_free(&m);
}

/* int8: within a few percent of the float logits, the same best word in most rows,
 * and each sentence's logits the same, bit for bit, decoded alone or in the batch. */
static void test_int8(int variant)
{
    Model m;
    random_model(&m, variant);
    int V = m.dims.tgt_vocab, K = 5;
    long n = (long)STEPS * N_SRC * K * V, per = (long)K * V;
    float *f32 = xmalloc(sizeof(float) * n), *i8 = xmalloc(sizeof(float) * n), *alone = xmalloc(sizeof(float) * n);
    step_logits(&m, 0, N_SRC, K, f32);
    model_prepare_decoding(&m, COMPUTE_INT8);
    CHECK(m.compute_type == COMPUTE_INT8 && m.prepared, "int8 prepared");
    step_logits(&m, 0, N_SRC, K, i8);
    char label[120];
    snprintf(label, sizeof label, "model %d: int8 logits near float32", variant);
    check_close_scaled(i8, f32, n, 0.05, label);
    long rows = (long)STEPS * N_SRC * K, same = 0;
    for (long r = 0; r < rows; r++)
        same += best_word(i8 + r * V, V) == best_word(f32 + r * V, V);
    snprintf(label, sizeof label, "model %d: int8's best word is float32's in %ld of %ld rows", variant, same, rows);
    CHECK(same * 10 >= rows * 9, label);
    /* Each sentence alone: (STEPS, K, V) against its rows of the batch's steps (every
     * product of int8 decoding, the recurrent encoder's and bridges' too, is per row). */
    for (int s = 0; s < N_SRC; s++) {
        step_logits(&m, s, 1, K, alone);
        int same_bits = 1;
        for (int t = 0; t < STEPS; t++)
            same_bits &= memcmp(alone + (long)t * per, i8 + ((long)t * N_SRC + s) * per, sizeof(float) * per) == 0;
        snprintf(label, sizeof label, "model %d: int8, sentence %d (length %d) alone = in a batch of %d, bit for bit",
                 variant, s, 1 + (s * 5) % MAX_S, N_SRC);
        CHECK(same_bits, label);
    }
    free(f32);
    free(i8);
    free(alone);
    model_free(&m);
}

/* The searches over a prepared float32 model (a Transformer, a GRU) give the unprepared model's hypotheses:
 * the same words and the same log-probabilities, bit for bit. */
static void test_searches(int variant)
{
    Model m;
    random_model(&m, variant);
    int buf[N_SRC][MAX_S], lens[N_SRC], *rows[N_SRC], limit[N_SRC];
    for (int n = 0; n < N_SRC; n++)
        lens[n] = source(n, buf[n]), rows[n] = buf[n], limit[n] = 8;
    enum { K = 5 };
    static Hypothesis h[2][N_SRC * K];
    int count[2][N_SRC];
    for (int pass = 0; pass < 2; pass++) {
        RunState rs = {0};
        Model *mp = &m;
        RunState *rp = &rs;
        if (pass) model_prepare_decoding(&m, COMPUTE_FLOAT32);
        decode_beam(&mp, &rp, 1, rows, lens, N_SRC, K, K, limit, 0.6f, 0, h[pass], count[pass]);
        runstate_free(&rs);
    }
    int same = 1, checked = 0;
    for (int n = 0; n < N_SRC; n++) {
        same &= count[0][n] == count[1][n];
        for (int k = 0; k < count[0][n] && same; k++, checked++) {
            Hypothesis *a = &h[0][n * K + k], *b = &h[1][n * K + k];
            same &= a->len == b->len && a->finished == b->finished &&
                    memcmp(&a->logprob, &b->logprob, sizeof a->logprob) == 0 &&
                    memcmp(a->words, b->words, sizeof(int) * a->len) == 0;
        }
        for (int k = 0; k < count[0][n]; k++)
            hypothesis_free(&h[0][n * K + k]), hypothesis_free(&h[1][n * K + k]);
    }
    char label[120];
    snprintf(label, sizeof label, "model %d, beam 5 n-best over 9 sentences: float32 prepared = unprepared (%d "
             "hypotheses)", variant, checked);
    CHECK(same && checked >= N_SRC, label);
    model_free(&m);
}

/* model_drop_prepared_floats: after it, an int8 model decodes as before, bit for bit,
 * with the float weights it gave back gone (their pointers NULL: a read would fault,
 * under the sanitizers too). Models 0 to 3, and two recurrent ones with the attention
 * kinds random_model leaves out: Luong's concat over 2 GRU layers, and local
 * predictive attention with input feeding over an LSTM. */
static void test_drop_floats(int variant)
{
    Model m;
    if (variant < N_MODELS)
        random_model(&m, variant);
    else {
        ModelDims d = {.type = MODEL_RNN, .embed = 40, .hidden = 48, .src_vocab = 50, .tgt_vocab = 301,
                       .layers = 2, .cell = CELL_GRU, .attention = ATT_LUONG_CONCAT};
        if (variant == N_MODELS + 1)
            d.layers = 1, d.cell = CELL_LSTM, d.attention = ATT_LOCAL_PREDICTIVE, d.window = 3, d.input_feed = 1;
        model_alloc(&m, &d);
        model_init_weights(&m, 11 + variant);
    }
    int V = m.dims.tgt_vocab, K = 5;
    long n = (long)STEPS * N_SRC * K * V;
    float *kept = xmalloc(sizeof(float) * n), *dropped = xmalloc(sizeof(float) * n);
    model_prepare_decoding(&m, COMPUTE_INT8);
    step_logits(&m, 0, N_SRC, K, kept);
    Params before = m.params;
    model_drop_prepared_floats(&m);
    float *now[MAX_TENSORS], *was[MAX_TENSORS];
    int tensors = params_tensors(&m.params, &m.dims, now), gone = 0;
    params_tensors(&before, &m.dims, was);
    for (int i = 0; i < tensors; i++)
        gone += was[i] && !now[i];
    char label[160];
    snprintf(label, sizeof label, "model %d: int8, float weights given back: %d of %d tensors", variant, gone, tensors);
    CHECK(m.floats_dropped && gone > 0 && gone < tensors, label);
    /* The embeddings stay (read row by row), and so does a tied output layer. */
    CHECK(m.params.src_emb && m.params.tgt_emb && (m.params.out_w || !m.dims.tie_embeddings),
          "the embeddings and a tied output layer stay");
    if (m.dims.type == MODEL_RNN) {   /* the encoder multiplies int8 weights only */
        int enc_gone = 1;
        for (int l = 0; l < m.dims.layers; l++)
            for (int r = 0; r < (m.dims.bidirectional ? 2 : 1); r++)
                enc_gone &= !m.params.enc[l][r].w_ih && !m.params.enc[l][r].w_hh &&
                            (!m.dims.bidirectional || !m.params.bridge_w[l]);
        snprintf(label, sizeof label, "model %d: the encoder's float weights given back too", variant);
        CHECK(enc_gone, label);
    }
    step_logits(&m, 0, N_SRC, K, dropped);
    snprintf(label, sizeof label, "model %d: int8 decoding after the floats are given back = before, bit for bit",
             variant);
    check_identical(dropped, kept, n, label);
    free(kept);
    free(dropped);
    model_free(&m);
}

/* A classifier's logits for sentences [first, first + count) (label-less Examples, as
 * nmt classify makes them), in run mode `mode`: (count, C) into out. */
static void classifier_logits(Model *m, int first, int count, RunMode mode, float *out)
{
    int buf[N_SRC][MAX_S], idx[N_SRC];
    Example ex[N_SRC];
    for (int n = 0; n < count; n++) {
        int len = source(first + n, buf[n]);
        ex[n] = (Example){.src = buf[n], .src_len = len, .label = -1};
        idx[n] = n;
    }
    Batch batch = {0};
    RunState rs = {0};
    model_fill_batch(m, &batch, ex, idx, count);
    runstate_ensure(&rs, &m->dims, mode, count, batch.S, 1);
    model_forward(m, &rs, &batch, 0);
    memcpy(out, rs.logits, sizeof(float) * count * model_classes(&m->dims));
    runstate_free(&rs);
    batch_free(&batch);
}

/* A classifier prepared for int8 (its encoder's products; nmt classify's RUN_DECODE):
 * float32 prepares nothing and scores as before; int8's logits near the float ones,
 * each sentence's the same bits alone or in the batch, and after the encoder's float
 * weights are given back. Variant 0: a bidirectional GRU with attention pooling and a
 * bag of words; 1: a 2-layer LSTM with mean pooling. */
static void test_classifier(int variant)
{
    ModelDims d = {.type = MODEL_CLASSIFIER, .embed = 24, .hidden = 32, .src_vocab = 50, .tgt_vocab = 7,
                   .layers = 1, .cell = CELL_GRU, .bidirectional = 1, .pooling = POOL_ATTENTION, .bag_of_words = 1};
    if (variant == 1) d.layers = 2, d.cell = CELL_LSTM, d.bidirectional = 0, d.pooling = POOL_MEAN, d.bag_of_words = 0;
    Model m;
    model_alloc(&m, &d);
    model_init_weights(&m, 21 + variant);
    if (d.bag_of_words)   /* its rows start at zero: give them some weight */
        for (long i = 0; i < (long)d.src_vocab * model_classes(&m.dims); i++)
            m.params.bow_w[i] = 0.01f * (float)((i * 37) % 21 - 10);
    int C = model_classes(&m.dims);
    float f32[N_SRC * 8], again[N_SRC * 8], i8[N_SRC * 8], alone[8], after[N_SRC * 8];
    char label[160];
    classifier_logits(&m, 0, N_SRC, RUN_SCORE, f32);
    model_prepare_decoding(&m, COMPUTE_FLOAT32);
    classifier_logits(&m, 0, N_SRC, RUN_SCORE, again);
    snprintf(label, sizeof label, "classifier %d: float32 prepared = unprepared", variant);
    check_identical(again, f32, (long)N_SRC * C, label);
    model_prepare_decoding(&m, COMPUTE_INT8);
    CHECK(m.prepared && m.compute_type == COMPUTE_INT8, "classifier: int8 prepared");
    classifier_logits(&m, 0, N_SRC, RUN_DECODE, i8);
    snprintf(label, sizeof label, "classifier %d: int8 logits near float32", variant);
    check_close_scaled(i8, f32, (long)N_SRC * C, 0.05, label);
    int same = 1;
    for (int s = 0; s < N_SRC; s++) {
        classifier_logits(&m, s, 1, RUN_DECODE, alone);
        same &= memcmp(alone, i8 + (long)s * C, sizeof(float) * C) == 0;
    }
    snprintf(label, sizeof label, "classifier %d: int8, each of %d sentences alone = in the batch, bit for bit",
             variant, N_SRC);
    CHECK(same, label);
    model_drop_prepared_floats(&m);
    CHECK(m.floats_dropped && !m.params.enc[0][0].w_ih && !m.params.enc[0][0].w_hh,
          "classifier: the encoder's float weights given back");
    classifier_logits(&m, 0, N_SRC, RUN_DECODE, after);
    snprintf(label, sizeof label, "classifier %d: int8 after the floats are given back = before", variant);
    check_identical(after, i8, (long)N_SRC * C, label);
    model_free(&m);
}

int main(int argc, char **argv)
{
    (void)argc;
    blas_select_kernel(argv);   /* as nmt does: OpenBLAS's SkylakeX kernel where the CPU has AVX-512 */
    for (int v = 0; v < N_MODELS; v++) {
        test_float32_identical(v);
        test_int8(v);
    }
    test_searches(0);
    test_searches(2);
    for (int v = N_TRANSFORMERS; v < N_MODELS; v++)
        test_int8_spread(v);
    for (int v = 0; v < N_MODELS + 2; v++)
        test_drop_floats(v);
    test_classifier(0);
    test_classifier(1);
    /* Float32 prepared: nothing is given back. */
    Model m;
    random_model(&m, 0);
    model_prepare_decoding(&m, COMPUTE_FLOAT32);
    model_drop_prepared_floats(&m);
    float *now[MAX_TENSORS];
    int tensors = params_tensors(&m.params, &m.dims, now), all = 1;
    for (int i = 0; i < tensors; i++)
        all &= now[i] != NULL;
    CHECK(!m.floats_dropped && all, "float32 prepared: model_drop_prepared_floats gives nothing back");
    model_free(&m);
    return check_report("test_prepared");
}
