/* test_shortlist.c — decoding with a vocabulary shortlist (models/shortlist.h) and the
 * int8 rows it gathers (int8_matrix_gather).
 *
 * - shortlist_init: targets grouped by source, repeats once, <unk> and <eos> always kept;
 * - a Transformer and a GRU, step by step through their Decoders, fed the same words:
 *   with a shortlist that keeps every word, the logits of the unrestricted model (int8:
 *   bit for bit; float32: to rounding); with a small one, -infinity at every word it
 *   does not keep and, at the words it keeps, the unrestricted logits (int8: bit for
 *   bit), both for the words kept by the batch's sources and those kept always;
 * - greedy and beam search over a small shortlist choose only its words. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "data/batch.h"
#include "decode/decode.h"
#include "kernels/blas.h"
#include "models/model.h"
#include "models/shortlist.h"
#include "text/vocab.h"
#include "base/util.h"

enum { N_SRC = 6, STEPS = 5, MAX_S = 9, SRC_V = 40, TGT_V = 203 };

static void random_model(Model *m, int transformer)
{
    ModelDims d = {.type = MODEL_TRANSFORMER, .embed = 32, .hidden = 32, .heads = 4, .ff = 64, .src_vocab = SRC_V,
                   .tgt_vocab = TGT_V, .enc_layers = 1, .dec_layers = 2};
    if (!transformer)
        d = (ModelDims){.type = MODEL_RNN, .embed = 24, .hidden = 32, .src_vocab = SRC_V, .tgt_vocab = TGT_V,
                        .layers = 1, .cell = CELL_GRU, .attention = ATT_BAHDANAU};
    model_alloc(m, &d);
    model_init_weights(m, 3 + transformer);
}

static int source(int n, int *ids)
{
    int len = 1 + (n * 4) % MAX_S;
    for (int j = 0; j < len; j++)
        ids[j] = VOCAB_SPECIALS + (n * 11 + j * 5) % (SRC_V - VOCAB_SPECIALS);
    return len;
}

/* Every step's logits (STEPS, N_SRC * K, V) for fixed fed words. */
static void step_logits(Model *m, int K, float *out)
{
    int buf[N_SRC][MAX_S], lens[N_SRC], *rows[N_SRC];
    for (int n = 0; n < N_SRC; n++)
        lens[n] = source(n, buf[n]), rows[n] = buf[n];
    Batch batch = {0};
    batch_fill_source(&batch, rows, lens, N_SRC);
    RunState rs = {0};
    Decoder dec = model_family(&m->dims)->decoder(m, &rs);
    int R = N_SRC * K, prev[N_SRC * 5];
    dec.start(dec.ctx, &batch, K, STEPS, 0);
    for (int t = 0; t < STEPS; t++) {
        for (int r = 0; r < R; r++)
            prev[r] = t == 0 ? VOCAB_SOS : VOCAB_SPECIALS + (r * 7 + t * 13) % (TGT_V - VOCAB_SPECIALS);
        const float *attn = NULL;
        memcpy(out + (long)t * R * TGT_V, dec.step(dec.ctx, t, prev, &attn), sizeof(float) * R * TGT_V);
    }
    decoder_close(&dec);
    runstate_free(&rs);
    batch_free(&batch);
}

/* A shortlist: source s keeps targets 4 + (s * 3 + j) % 150 for j < per, and 180..183
 * always; `all`: every source keeps every word. */
static void make_shortlist(Shortlist *sl, int per, int all)
{
    long n = all ? (long)SRC_V * TGT_V : (long)SRC_V * per;
    int *src = malloc(sizeof(int) * (size_t)n), *tgt = malloc(sizeof(int) * (size_t)n), always[4] = {180, 181, 182, 183};
    long k = 0;
    for (int s = 0; s < SRC_V; s++)
        for (int j = 0; j < (all ? TGT_V : per); j++)
            src[k] = s, tgt[k] = all ? j : VOCAB_SPECIALS + (s * 3 + j) % 150, k++;
    shortlist_init(sl, SRC_V, TGT_V, src, tgt, n, always, all ? 0 : 4);
    free(src);
    free(tgt);
}

/* Whether sentence n's rows may score word w under make_shortlist(per): kept by one of
 * the batch's sources, or always. */
static int kept_in_batch(int w, int per)
{
    if (w == VOCAB_UNK || w == VOCAB_EOS || (w >= 180 && w <= 183)) return 1;
    int ids[MAX_S];
    for (int n = 0; n < N_SRC; n++) {
        int len = source(n, ids);
        for (int j = 0; j < len; j++)
            for (int k = 0; k < per; k++)
                if (VOCAB_SPECIALS + (ids[j] * 3 + k) % 150 == w) return 1;
    }
    return 0;
}

static void test_init(void)
{
    int src[] = {3, 1, 3, 1, 3}, tgt[] = {9, 7, 5, 7, 9}, always[] = {11};
    Shortlist sl;
    shortlist_init(&sl, 5, 20, src, tgt, 5, always, 1);
    CHECK(sl.start[1] == 0 && sl.start[2] == 1 && sl.ids[0] == 7, "source 1 keeps 7, once");
    CHECK(sl.start[3] == 1 && sl.start[4] == 3 && sl.ids[1] == 5 && sl.ids[2] == 9, "source 3 keeps 5 and 9, once each");
    CHECK(sl.start[5] == 3, "sources 4 keeps nothing");
    CHECK(sl.n_always == 3 && sl.always[0] == VOCAB_UNK && sl.always[1] == VOCAB_EOS && sl.always[2] == 11,
          "always: <unk>, <eos>, then the given");
    shortlist_free(&sl);
}

static void test_logits(int transformer, ComputeType type)
{
    Model m;
    random_model(&m, transformer);
    model_prepare_decoding(&m, type);
    int K = 2;
    long n = (long)STEPS * N_SRC * K * TGT_V;
    float *full = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * n);
    step_logits(&m, K, full);
    char label[160];
    const char *what = transformer ? "Transformer" : "GRU";
    const char *ct = compute_type_name(type);
    Shortlist all, small;
    make_shortlist(&all, 0, 1);
    m.shortlist = &all;
    step_logits(&m, K, got);
    snprintf(label, sizeof label, "%s, %s: a shortlist of every word gives the unrestricted logits", what, ct);
    if (type == COMPUTE_INT8) check_identical(got, full, n, label);
    else check_close(got, full, n, 1e-5, label);
    int per = 6;
    make_shortlist(&small, per, 0);
    m.shortlist = &small;
    step_logits(&m, K, got);
    long kept = 0, bad_out = 0, bad_in = 0;
    for (long i = 0; i < n; i++) {
        int w = (int)(i % TGT_V);
        if (!kept_in_batch(w, per)) {
            bad_out += got[i] != -INFINITY;
            continue;
        }
        kept++;
        bad_in += type == COMPUTE_INT8 ? memcmp(&got[i], &full[i], sizeof(float)) != 0
                                       : !(fabsf(got[i] - full[i]) <= 1e-5f * fmaxf(1.0f, fabsf(full[i])));
    }
    snprintf(label, sizeof label, "%s, %s, a small shortlist: -infinity at every word it does not keep (%ld wrong)",
             what, ct, bad_out);
    CHECK(bad_out == 0, label);
    snprintf(label, sizeof label, "%s, %s: at the %ld kept logits, the unrestricted ones (%s; %ld differ)", what, ct,
             kept / ((long)STEPS * N_SRC * K), type == COMPUTE_INT8 ? "bit for bit" : "to rounding", bad_in);
    CHECK(bad_in == 0 && kept > 0, label);
    snprintf(label, sizeof label, "%s, %s: the small shortlist keeps %ld of %ld logits", what, ct, kept, n);
    CHECK(kept < n * 3 / 4, label);
    /* The searches choose only kept words. */
    int buf[N_SRC][MAX_S], lens[N_SRC], *rows[N_SRC], limit[N_SRC];
    for (int s = 0; s < N_SRC; s++)
        lens[s] = source(s, buf[s]), rows[s] = buf[s], limit[s] = 8;
    static Hypothesis h[N_SRC * 3];
    int count[N_SRC];
    RunState rs = {0};
    Model *mp = &m;
    RunState *rp = &rs;
    decode_beam(&mp, &rp, 1, rows, lens, N_SRC, 3, 3, limit, 0.6f, 0, h, count);
    int only_kept = 1, words = 0;
    for (int s = 0; s < N_SRC; s++)
        for (int k = 0; k < count[s]; k++) {
            for (int j = 0; j < h[s * 3 + k].len; j++, words++)
                only_kept &= kept_in_batch(h[s * 3 + k].words[j], per);
            hypothesis_free(&h[s * 3 + k]);
        }
    snprintf(label, sizeof label, "%s, %s: beam 3's n-best lists hold only kept words (%d words)", what, ct, words);
    CHECK(only_kept && words > 0, label);
    runstate_free(&rs);
    m.shortlist = NULL;
    shortlist_free(&all);
    shortlist_free(&small);
    free(full);
    free(got);
    model_free(&m);
}

int main(int argc, char **argv)
{
    (void)argc;
    blas_select_kernel(argv);
    test_init();
    for (int transformer = 0; transformer < 2; transformer++) {
        test_logits(transformer, COMPUTE_INT8);
        test_logits(transformer, COMPUTE_FLOAT32);
    }
    return check_report("test_shortlist");
}
