/* rnn_decoder.c — the recurrent family's attention decoder, forward and backward
 * (rnn.h): step by step, the attention over the encoder's memory and the stacked
 * recurrent layers; teacher-forced training runs the same steps over a whole batch.
 *
 * Why a file of its own: the decoder is most of the recurrent family (six attention
 * kinds, input feeding, the fused Bahdanau query), and its forward and backward passes
 * read best side by side. */
#include "models/rnn.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"        /* defines: xcalloc */
#include "kernels/linalg.h"   /* defines: matmul_bias, matmul_nn_prepacked, linear_grads */
#include "kernels/prepared.h" /* defines: PreparedWeight, prepared_matmul_bias, prepared_matmul_add */
#include "layers/attention.h" /* defines: attention_bahdanau_*, attention_dot_*, DotAttention */
#include "layers/embedding.h" /* defines: embedding_forward/_backward */
#include "layers/gru.h"       /* defines: gru_gates_forward/_backward */
#include "layers/lstm.h"      /* defines: lstm_gates_forward/_backward */

/* ---------------------------------------------------------------- prepared for decoding */

/* Model.prepared of a recurrent model: the weights of the products the decoder makes
 * per step (and the attention keys' once per batch), prepared once
 * (kernels/prepared.h); for int8, the encoder's too (rnn_encoder_prepare: float32
 * leaves the encoder's products, whole sentences at once, as they are). Layer 0's
 * input weight is two column blocks: the embedding's (GH, E) and the context's or fed
 * output's (GH, H). */
typedef struct {
    RnnEncoderPrepared enc;              /* first: the shared encoder's (rnn.h) */
    PreparedWeight emb_in, ctx_in;       /* dec[0].w_ih's columns [0, E) and [E, E + H) */
    PreparedWeight ih[MAX_LAYERS];       /* dec[l].w_ih, l > 0 */
    PreparedWeight hh[MAX_LAYERS];       /* dec[l].w_hh; the top layer's with att_w_query
                                            below it when the query is fused (GH + H rows) */
    PreparedWeight keys, query, pos, att_out, out;
} RnnPrepared;

/* The weights of the products the decoder makes, with their shapes, in one place: an
 * entry per weight, for prepare and free alike. */
static int rnn_prepared_list(const Model *m, RnnPrepared *pr, PreparedWeight **pw, const float **w, int *ld, int *n,
                             int *k)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int E = d->embed, H = d->hidden, GH = rnn_gates(d) * H, X = rnn_dec_in0(d), L = d->layers, c = 0;
#define ENTRY(slot, wt, ldw, rows, cols) (pw[c] = (slot), w[c] = (wt), ld[c] = (ldw), n[c] = (rows), k[c] = (cols), c++)
    ENTRY(&pr->emb_in, p->dec[0].w_ih, X, GH, E);
    if (X > E) ENTRY(&pr->ctx_in, p->dec[0].w_ih + E, X, GH, H);
    for (int l = 0; l < L; l++) {
        if (l) ENTRY(&pr->ih[l], p->dec[l].w_ih, H, GH, H);
        ENTRY(&pr->hh[l], p->dec[l].w_hh, H, GH + (rnn_fused_query(d, l) ? H : 0), H);
    }
    if (rnn_is_additive(d->attention)) ENTRY(&pr->keys, p->att_w_key, H, H, H);
    else if (rnn_has_att_w(d->attention)) ENTRY(&pr->keys, p->att_w, H, H, H);
    if (d->attention == ATT_LUONG_CONCAT) ENTRY(&pr->query, p->att_w_query, H, H, H);
    if (d->attention == ATT_LOCAL_PREDICTIVE) ENTRY(&pr->pos, p->att_w_pos, H, H, H);
    if (attention_is_luong(d->attention)) ENTRY(&pr->att_out, p->att_w_out, 2 * H, H, 2 * H);
    ENTRY(&pr->out, p->out_w, H, d->tgt_vocab, H);
#undef ENTRY
    return c;
}

enum { RNN_MAX_PREPARED = 2 + 2 * MAX_LAYERS + 5 };

/* ModelFamily.int8_only: what the decoder reads only through rnn_prepared_list's
 * products, and the encoder's (rnn_encoder_int8_only). Not layer 0's
 * input weight (its context block is addressed from its start: the pointer must stay),
 * nor a tied output layer (the target embedding). */
int rnn_int8_only(Model *m, float **slot[MAX_TENSORS], long n[MAX_TENSORS])
{
    const ModelDims *d = &m->dims;
    Params *p = &m->params;
    long H = d->hidden, GH = (long)rnn_gates(d) * H;
    int c = 0;
    for (int l = 0; l < rnn_layers(d); l++) {
        if (l) slot[c] = &p->dec[l].w_ih, n[c++] = GH * H;
        slot[c] = &p->dec[l].w_hh, n[c++] = GH * H;
    }
    /* An additive score's key weight and its query's: the query's own product
     * (Luong's concat) or the rows below the top layer's w_hh (rnn_fused_query). */
    if (rnn_is_additive(d->attention)) {
        slot[c] = &p->att_w_key, n[c++] = H * H;
        slot[c] = &p->att_w_query, n[c++] = H * H;
    } else if (rnn_has_att_w(d->attention))
        slot[c] = &p->att_w, n[c++] = H * H;
    if (d->attention == ATT_LOCAL_PREDICTIVE) slot[c] = &p->att_w_pos, n[c++] = H * H;
    if (attention_is_luong(d->attention)) slot[c] = &p->att_w_out, n[c++] = H * 2 * H;
    if (!d->tie_embeddings) slot[c] = &p->out_w, n[c++] = (long)d->tgt_vocab * H;
    return rnn_encoder_int8_only(m, slot, n, c, 1);
}

/* (H and E are at most MODEL_MAX_WIDTH, within INT8_MAX_K: this cannot fail.) */
void *rnn_prepare(const Model *m, ComputeType type)
{
    RnnPrepared *pr = xcalloc(1, sizeof *pr);
    PreparedWeight *pw[RNN_MAX_PREPARED];
    const float *w[RNN_MAX_PREPARED];
    int ld[RNN_MAX_PREPARED], n[RNN_MAX_PREPARED], k[RNN_MAX_PREPARED];
    int count = rnn_prepared_list(m, pr, pw, w, ld, n, k);
    for (int i = 0; i < count; i++)
        model_prepare_weight(m, pw[i], w[i], ld[i], n[i], k[i], type);
    rnn_encoder_prepare(m, &pr->enc, type, 1);
    return pr;
}

const PreparedWeight *rnn_prepared_out(const Model *m)
{
    return m->prepared ? &((const RnnPrepared *)m->prepared)->out : NULL;
}

void rnn_prepared_free(void *prepared)
{
    RnnPrepared *pr = prepared;
    rnn_encoder_prepared_free(&pr->enc);
    PreparedWeight *all[] = {&pr->emb_in, &pr->ctx_in, &pr->keys, &pr->query, &pr->pos, &pr->att_out, &pr->out};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        prepared_weight_free(all[i]);   /* an unused one is zero: a no-op */
    for (int l = 0; l < MAX_LAYERS; l++)
        prepared_weight_free(&pr->ih[l]), prepared_weight_free(&pr->hh[l]);
    free(pr);
}

/* ---------------------------------------------------------------- packed for a training pass */

/* RunState.own of a recurrent run state for training and scoring, where
 * packed_matches_blas(): the weights that a pass multiplies once per time step (the
 * encoder layers' w_hh, the decoder's recurrent, attention and input-feeding weights),
 * packed once per pass, so that OpenBLAS does not repack them at every step. The
 * products give the same bits either way (linalg.h's matmul_*_prepacked). A worker's
 * run state has its own: packed from the shared weights, read by its pass alone.
 * Buffers are allocated by the first pass and reused (the shapes are the model's). */
typedef struct {
    PackedMatrix enc_hh[MAX_LAYERS][2], enc_cols[MAX_LAYERS][2];
    PackedMatrix dec_store[RNN_MAX_PREPARED];   /* rnn_prepared_list's order */
    PackedMatrix col_store[RNN_MAX_PREPARED];   /* the same weights' columns (backward) */
    RnnPrepared dec;   /* views of dec_store: the weights this pass packed, zero for the
                          others (a zero PreparedWeight is the plain product) */
    RnnPrepared cols;  /* views of col_store, the same way */
    int live;          /* dec holds the weights as they are now: within rnn_pack_steps ..
                          rnn_unpack_steps (a forward pass) */
    int live_cols;     /* cols does: within rnn_pack_steps_backward .. rnn_unpack_steps */
    int packed;        /* weights packed since rnn_pack_steps (rnn_steps_packed) */
} RnnStepPacks;

static void step_packs_free(void *own)
{
    RnnStepPacks *k = own;
    for (int l = 0; l < MAX_LAYERS; l++)
        for (int r = 0; r < 2; r++)
            packed_matrix_free(&k->enc_hh[l][r]), packed_matrix_free(&k->enc_cols[l][r]);
    for (int i = 0; i < RNN_MAX_PREPARED; i++)
        packed_matrix_free(&k->dec_store[i]), packed_matrix_free(&k->col_store[i]);
    free(k);
}

void rnn_step_packs_attach(RunState *rs, RunMode mode)
{
    if (mode == RUN_DECODE || !packed_matches_blas()) return;
    rs->own = xcalloc(1, sizeof(RnnStepPacks));
    rs->own_free = step_packs_free;
}

const PackedMatrix *rnn_step_pack_encoder(RunState *rs, int l, int r, const float *w_hh, int N, int K, int B)
{
    RnnStepPacks *k = rs->own;
    const PackedMatrix *packed = k ? matmul_pack_for_rows(&k->enc_hh[l][r], w_hh, K, N, K, B) : NULL;
    if (packed) k->packed++;
    return packed;
}

const PackedMatrix *rnn_step_pack_encoder_columns(RunState *rs, int l, int r, const float *w_hh, int N, int K,
                                                  int B)
{
    RnnStepPacks *k = rs->own;
    const PackedMatrix *packed = k ? matmul_pack_columns_for_rows(&k->enc_cols[l][r], w_hh, N, N, K, B) : NULL;
    if (packed) k->packed++;
    return packed;
}

/* The decoder's step weights packed into k's views: rows (x · W^T, forward) or columns
 * (dy · W, backward). */
static void pack_decoder(const Model *m, RnnStepPacks *k, int B, int columns)
{
    RnnPrepared *pr = columns ? &k->cols : &k->dec;
    PackedMatrix *store = columns ? k->col_store : k->dec_store;
    PreparedWeight *pw[RNN_MAX_PREPARED];
    const float *w[RNN_MAX_PREPARED];
    int ld[RNN_MAX_PREPARED], n[RNN_MAX_PREPARED], kk[RNN_MAX_PREPARED];
    int count = rnn_prepared_list(m, pr, pw, w, ld, n, kk);
    memset(pr, 0, sizeof *pr);
    for (int i = 0; i < count; i++) {
        /* The products of all the decoder's rows at once (the embeddings' projection,
         * the keys, the output layer) are too tall to use a packed weight. */
        if (pw[i] == &pr->emb_in || pw[i] == &pr->keys || pw[i] == &pr->out) continue;
        const PackedMatrix *packed = columns ? matmul_pack_columns_for_rows(&store[i], w[i], ld[i], kk[i], n[i], B)
                                             : matmul_pack_for_rows(&store[i], w[i], ld[i], n[i], kk[i], B);
        if (!packed) continue;
        *pw[i] = (PreparedWeight){.n = packed->n, .k = packed->k, .type = COMPUTE_FLOAT32, .packed = *packed};
        k->packed++;
    }
}

void rnn_pack_steps(const Model *m, RunState *rs, int B)
{
    RnnStepPacks *k = rs->own;
    if (!k) return;
    k->packed = 0;
    pack_decoder(m, k, B, 0);
    k->live = 1;
}

void rnn_pack_steps_backward(const Model *m, RunState *rs, int B)
{
    RnnStepPacks *k = rs->own;
    if (!k) return;
    pack_decoder(m, k, B, 1);
    k->live_cols = 1;
}

void rnn_unpack_steps(RunState *rs)
{
    RnnStepPacks *k = rs->own;
    if (k) k->live = 0, k->live_cols = 0;
}

int rnn_steps_packed(const RunState *rs)
{
    const RnnStepPacks *k = rs->mode == RUN_DECODE ? NULL : rs->own;
    return k ? k->packed : 0;
}

static const RnnPrepared *live_packs(const RunState *rs)
{
    const RnnStepPacks *k = rs->mode == RUN_DECODE ? NULL : rs->own;
    return k && k->live ? &k->dec : NULL;
}

/* The packed columns of weight `field` for a backward product (matmul_nn_prepacked),
 * or NULL: within a backward pass, the run state's (above). */
static const PackedMatrix *packed_columns(const PreparedWeight *pw)
{
    return pw->packed.panels ? &pw->packed : NULL;
}
#define COLUMNS(rs, field) \
    ((rs)->mode != RUN_DECODE && (rs)->own && ((const RnnStepPacks *)(rs)->own)->live_cols \
         ? packed_columns(&((const RnnStepPacks *)(rs)->own)->cols.field) : NULL)

/* The prepared weight `field` for a product: decoding (RUN_DECODE), m's prepared one
 * when m has prepared weights; training and scoring (nmt eval's loss), within a forward
 * pass, the run state's packed one (above), whatever m has prepared. NULL: the plain
 * product. */
#define PREPARED(m, rs, field) \
    ((rs)->mode == RUN_DECODE ? ((m)->prepared ? &((const RnnPrepared *)(m)->prepared)->field : NULL) \
                              : live_packs(rs) ? &live_packs(rs)->field : NULL)

/* ---------------------------------------------------------------- forward */

/* The keys k_j the scores read: W h_j, or h_j itself for the plain dot product. */
static const float *score_keys(const Model *m, const RunState *rs)
{
    return m->dims.attention == ATT_LUONG_DOT ? model_memory(m, rs) : rs->keys;
}

static DotAttention dot_config(const ModelDims *d)
{
    return (DotAttention){d->scaled ? 1.0f / sqrtf((float)d->hidden) : 1.0f, rnn_is_local(d->attention) ? d->window : 0};
}

/* x holds S blocks of N rows of w floats; afterwards S blocks of N * K rows, row n's
 * values in rows n*K .. n*K + K-1. In place, from the end: every row written lies at or
 * after the row it copies, and after every row still to be read. */
static void spread_rows(float *x, int S, int N, int K, int w)
{
    for (long t = S - 1; t >= 0; t--)
        for (long n = N - 1; n >= 0; n--)
            for (long k = K - 1; k >= 0; k--)
                memmove(x + ((t * N + n) * K + k) * w, x + (t * N + n) * w, sizeof(float) * w);
}

void rnn_repeat_encoding(Model *m, RunState *rs, int N, int S, int K)
{
    const ModelDims *d = &m->dims;
    int H = d->hidden;
    spread_rows(rs->memory, S, N, K, H);
    if (m->dims.attention != ATT_LUONG_DOT) spread_rows(rs->keys, S, N, K, H);
    for (int l = 0; l < rnn_layers(d); l++) {
        spread_rows(rs->dec[l].h, 1, N, K, H);
        if (d->cell == CELL_LSTM) spread_rows(rs->dec[l].c, 1, N, K, H);
    }
    for (int r = N * K - 1; r >= 0; r--)
        rs->src_len[r] = rs->src_len[r / K];
}

/* The encoder (rnn_encoder.c), then the attention's keys W h_j, once per batch. */
void model_encode(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, H = d->hidden;
    rnn_encode(m, rs, batch, 1);
    const float *mem = model_memory(m, rs);
    if (rnn_is_additive(d->attention))
        prepared_matmul_bias(rs->keys, H, mem, H, p->att_w_key, H, PREPARED(m, rs, keys), NULL, S * B, H, H);
    else if (rnn_has_att_w(d->attention))
        prepared_matmul_bias(rs->keys, H, mem, H, p->att_w, H, PREPARED(m, rs, keys), NULL, S * B, H, H);
}

/* Where the decoder's rows are (batch.h): step t's inputs, gates and outputs at row
 * batch_step_at(t), batch_step_rows(t) of them; a state array holds the initial
 * states in its first B rows and the states after step t at B + batch_step_at(t). A
 * packed batch has only the sentences still going at each step, the first rows.
 * Decoding (rs->step_ring) keeps two steps: step t's rows at slot t % 2, the states
 * before and after it at slots t % 2 and (t + 1) % 2 (the initial states at slot 0). */
long rnn_step_row(const RunState *rs, const Batch *b, int t)
{
    return rs->step_ring ? (long)(t % rs->step_ring) * b->B : batch_step_at(b, t);
}
static long every_state_before(const Batch *b, int t) { return t ? b->B + batch_step_at(b, t - 1) : 0; }
static long state_before(const RunState *rs, const Batch *b, int t)
{
    return rs->step_ring ? (long)(t % rs->step_ring) * b->B : every_state_before(b, t);
}
static long state_after(const RunState *rs, const Batch *b, int t)
{
    if (rs->step_ring) return (long)((t + 1) % rs->step_ring) * b->B;
    return b->B + batch_step_at(b, t);
}

/* An unpacked batch of B rows, for the decoding functions that are given B only. */
static Batch rows_of(int B) { return (Batch){.B = B}; }

void model_decoder_input(Model *m, RunState *rs, int t, const int *ids, int B)
{
    const ModelDims *d = &m->dims;
    int E = d->embed, GH = rnn_gates(d) * d->hidden, X = rnn_dec_in0(d);
    Batch rows = rows_of(B);
    long row = rnn_step_row(rs, &rows, t);
    float *x = rs->dec_x[0] + row * X;
    model_embed(m, x, X, m->params.tgt_emb, ids, B, E);
    prepared_matmul_bias(rs->dec[0].gi + row * GH, GH, x, X, m->params.dec[0].w_ih, X, PREPARED(m, rs, emb_in),
                         m->params.dec[0].b_ih, B, GH, E);
}

/* Weights a[j] and context for step t with the new state s_t (Luong kinds); the
 * context goes into cat[t][:, :H], s_t into cat[t][:, H:], and o_t = tanh(W_out cat). */
static void luong_attend(Model *m, RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, Bt = batch_step_rows(batch, t), S = batch->S, H = d->hidden, A = d->attention;
    long row = rnn_step_row(rs, batch, t);
    const float *s = rs->dec[d->layers - 1].h + state_after(rs, batch, t) * H, *mem = model_memory(m, rs);
    float *cat = rs->cat + row * 2 * H, *attn = rs->attn + row * S;
    if (A == ATT_LUONG_CONCAT) {
        float *q = rs->query + row * H;
        prepared_matmul_bias(q, H, s, H, p->att_w_query, H, PREPARED(m, rs, query), p->att_b_query, Bt, H, H);
        attention_bahdanau_forward(rs->keys, mem, batch->mask, q, H, p->att_v, attn, cat, 2 * H, S, B, Bt, H, H);
    } else {
        float *pos = rnn_is_local(A) ? rs->pos + row : NULL;
        if (A == ATT_LOCAL_MONOTONIC)
            for (int b = 0; b < Bt; b++)
                pos[b] = (float)(t < rs->src_len[b] - 1 ? t : rs->src_len[b] - 1);
        if (A == ATT_LOCAL_PREDICTIVE) {
            float *ph = rs->pos_hidden + row * H;
            prepared_matmul_bias(ph, H, s, H, p->att_w_pos, H, PREPARED(m, rs, pos), NULL, Bt, H, H);
            tanh_inplace(ph, (long)Bt * H);
            for (int b = 0; b < Bt; b++) {
                float u = 0.0f;
                for (int k = 0; k < H; k++)
                    u += p->att_v_pos[k] * ph[(long)b * H + k];
                pos[b] = (float)rs->src_len[b] / (1.0f + expf(-u));
            }
        }
        DotAttention cfg = dot_config(d);
        attention_dot_forward(&cfg, score_keys(m, rs), mem, rs->src_len, s, H, pos, attn, cat, 2 * H, S, B, Bt, H);
    }
    for (int b = 0; b < Bt; b++)
        memcpy(cat + (long)b * 2 * H + H, s + (long)b * H, sizeof(float) * H);
    float *o = rs->out + row * H;
    prepared_matmul_bias(o, H, cat, 2 * H, p->att_w_out, 2 * H, PREPARED(m, rs, att_out), NULL, Bt, H, 2 * H);
    tanh_inplace(o, (long)Bt * H);
}

void model_decoder_step(Model *m, RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, Bt = batch_step_rows(batch, t), S = batch->S, E = d->embed, H = d->hidden, L = d->layers;
    int X = rnn_dec_in0(d), GH = rnn_gates(d) * H, lstm = d->cell == CELL_LSTM;
    long row = rnn_step_row(rs, batch, t), before = state_before(rs, batch, t), after = state_after(rs, batch, t);
    float *x0 = rs->dec_x[0] + row * X, *gi0 = rs->dec[0].gi + row * GH;
    if (d->attention == ATT_BAHDANAU) {
        /* [W_hh; W_query] s_{t-1} + [b_hh; b_query] of the top layer: one product (the
         * tensors are adjacent); then attention, whose context joins layer 0's input. */
        RnnRun *top = &rs->dec[L - 1];
        int ghw = GH + H;
        float *gh = top->gh + row * ghw;
        prepared_matmul_bias(gh, ghw, top->h + before * H, H, p->dec[L - 1].w_hh, H, PREPARED(m, rs, hh[L - 1]),
                             p->dec[L - 1].b_hh, Bt, ghw, H);
        attention_bahdanau_forward(rs->keys, model_memory(m, rs), batch->mask, gh + GH, ghw, p->att_v,
                                   rs->attn + row * S, x0 + E, X, S, B, Bt, H, H);
        prepared_matmul_add(gi0, GH, x0 + E, X, p->dec[0].w_ih + E, X, PREPARED(m, rs, ctx_in), Bt, GH, H);
    } else if (d->input_feed) {
        long prev = t ? rnn_step_row(rs, batch, t - 1) : 0;
        for (int b = 0; b < Bt; b++) {
            float *dst = x0 + (long)b * X + E;
            if (t == 0) memset(dst, 0, sizeof(float) * H);
            else memcpy(dst, rs->out + (prev + b) * H, sizeof(float) * H);
        }
        prepared_matmul_add(gi0, GH, x0 + E, X, p->dec[0].w_ih + E, X, PREPARED(m, rs, ctx_in), Bt, GH, H);
    }
    for (int l = 0; l < L; l++) {
        RnnRun *run = &rs->dec[l];
        const RnnParams *w = &p->dec[l];
        int ghw = GH + (rnn_fused_query(d, l) ? H : 0);
        const float *s_prev = run->h + before * H;
        float *gi = run->gi + row * GH, *gh = run->gh + row * ghw;
        if (l) {
            float *x = rs->dec_x[l] + row * H;
            memcpy(x, rs->dec[l - 1].h + after * H, sizeof(float) * Bt * H);
            if (rs->dropping) rows_dropout(x, H, rs->dec_drop[l] + row * H, Bt, H, rs->dropout, &rs->rng);
            prepared_matmul_bias(gi, GH, x, H, w->w_ih, H, PREPARED(m, rs, ih[l]), w->b_ih, Bt, GH, H);
        }
        if (!rnn_fused_query(d, l))
            prepared_matmul_bias(gh, ghw, s_prev, H, w->w_hh, H, PREPARED(m, rs, hh[l]), w->b_hh, Bt, GH, H);
        if (lstm)
            lstm_gates_forward(gi, GH, gh, ghw, run->c + before * H, run->h + after * H, run->c + after * H,
                               run->cache + row * GH, Bt, H);
        else
            gru_gates_forward(gi, GH, gh, ghw, s_prev, run->h + after * H, run->cache + row * GH, Bt, H);
    }
    if (attention_is_luong(d->attention)) luong_attend(m, rs, batch, t);
}

const float *model_step_output(const Model *m, const RunState *rs, int t, int B)
{
    Batch rows = rows_of(B);
    return rnn_step_output(m, rs, &rows, t);
}

void model_step_logits(Model *m, RunState *rs, int t, int B, float *logits)
{
    int H = m->dims.hidden, V = m->dims.tgt_vocab;
    prepared_matmul_bias(logits, V, model_step_output(m, rs, t, B), H, m->params.out_w, H, PREPARED(m, rs, out),
                         m->params.out_b, B, V, H);
}

static void gather_rows(float *x, int w, const int *from, int B, float *scratch)
{
    for (int b = 0; b < B; b++)
        memcpy(scratch + (long)b * w, x + (long)from[b] * w, sizeof(float) * w);
    memcpy(x, scratch, sizeof(float) * B * w);
}

void model_reorder_state(Model *m, RunState *rs, int t, const int *from, int B)
{
    const ModelDims *d = &m->dims;
    int H = d->hidden;
    Batch rows = rows_of(B);
    long at = state_after(rs, &rows, t) * H;
    for (int l = 0; l < d->layers; l++) {
        gather_rows(rs->dec[l].h + at, H, from, B, rs->d_step);
        if (d->cell == CELL_LSTM) gather_rows(rs->dec[l].c + at, H, from, B, rs->d_step);
    }
    if (d->input_feed) gather_rows(rs->out + rnn_step_row(rs, &rows, t) * H, H, from, B, rs->d_step);
}

/* The output o_t of step t's rows (o_t = s_t for Bahdanau): the output layer's input. */
const float *rnn_step_output(const Model *m, const RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    if (attention_is_luong(d->attention)) return rs->out + rnn_step_row(rs, batch, t) * d->hidden;
    return rs->dec[d->layers - 1].h + state_after(rs, batch, t) * d->hidden;
}

/* ---------------------------------------------------------------- backward */

/* dLoss/ds_t of the top layer from the attention on s_t and the attentional state
 * o_t = tanh(W_out [c_t; s_t]) (Luong kinds), added into rs->d_s[top]. */
static void luong_attend_backward(Model *m, RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, Bt = batch_step_rows(batch, t), S = batch->S, H = d->hidden, A = d->attention;
    long row = batch_step_at(batch, t), BtH = (long)Bt * H;
    float *ds = rs->d_s[d->layers - 1];
    const float *s = rs->dec[d->layers - 1].h + state_after(rs, batch, t) * H, *mem = model_memory(m, rs);
    const float *o = rs->out + row * H, *attn = rs->attn + row * S;
    float *dpre = rs->d_pre + row * H, *dout = rs->d_out + row * H;
    for (long i = 0; i < BtH; i++)
        dpre[i] = (dout[i] + (d->input_feed ? rs->d_feed[i] : 0.0f)) * (1.0f - o[i] * o[i]);
    /* d[c; s] = dpre · W_out */
    matmul_nn_prepacked(rs->d_cat, 2 * H, dpre, H, p->att_w_out, 2 * H, COLUMNS(rs, att_out), 0, Bt, 2 * H, H);
    for (int b = 0; b < Bt; b++)
        for (int k = 0; k < H; k++)
            ds[(long)b * H + k] += rs->d_cat[(long)b * 2 * H + H + k];
    if (A == ATT_LUONG_CONCAT) {
        float *dq = rs->d_query + row * H;
        attention_bahdanau_backward(rs->d_cat, 2 * H, rs->keys, mem, batch->mask, rs->query + row * H, H, p->att_v,
                                    attn, g->att_v, rs->d_keys, rs->d_enc, dq, H, rs->work, S, B, Bt, H, H);
        matmul_nn_prepacked(ds, H, dq, H, p->att_w_query, H, COLUMNS(rs, query), 1, Bt, H, H);
        return;
    }
    DotAttention cfg = dot_config(d);
    float *dpos = A == ATT_LOCAL_PREDICTIVE ? rs->work + 2 * S + H : NULL;
    float *dkeys = A == ATT_LUONG_DOT ? rs->d_enc : rs->d_keys;
    attention_dot_backward(&cfg, rs->d_cat, 2 * H, score_keys(m, rs), mem, rs->src_len, s, H,
                           rnn_is_local(A) ? rs->pos + row : NULL, attn, dkeys, rs->d_enc, rs->d_step, H, dpos, rs->work,
                           S, B, Bt, H);
    for (long i = 0; i < BtH; i++)
        ds[i] += rs->d_step[i];
    if (A == ATT_LOCAL_PREDICTIVE) {
        /* p = len * sigmoid(u), u = v_p . tanh(W_p s) */
        const float *ph = rs->pos_hidden + row * H;
        float *dph = rs->d_pos + row * H;
        for (int b = 0; b < Bt; b++) {
            float len = (float)rs->src_len[b], sg = rs->pos[row + b] / len;
            float du = dpos[b] * len * sg * (1.0f - sg);
            for (int k = 0; k < H; k++) {
                float h = ph[(long)b * H + k];
                g->att_v_pos[k] += du * h;
                dph[(long)b * H + k] = du * p->att_v_pos[k] * (1.0f - h * h);
            }
        }
        matmul_nn_prepacked(ds, H, dph, H, p->att_w_pos, H, COLUMNS(rs, pos), 1, Bt, H, H);
    }
}

/* The states each step started from, s_{t-1} of layer l, laid out like the step's own
 * rows (a packed batch keeps the previous step's first rows), so that the recurrent
 * weights' gradient over all steps is one product. Unpacked, they already are: h. */
static const float *states_before(const RnnRun *run, const Batch *batch, int H, float *scratch)
{
    if (!batch->tgt_off) return run->h;
    for (int t = 0; t < batch->T; t++)
        memcpy(scratch + batch_step_at(batch, t) * H, run->h + every_state_before(batch, t) * H,
               sizeof(float) * batch_step_rows(batch, t) * H);
    return scratch;
}

/* The decoder, steps in reverse; leaves dLoss/ds_0 (and dc_0) in rs->d_s, rs->d_c. A
 * sentence's rows take part from its last step down (the carries of the others stay
 * 0 until then). */
void rnn_decoder_backward(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, T = batch->T, E = d->embed, H = d->hidden, L = d->layers, X = rnn_dec_in0(d);
    int GH = rnn_gates(d) * H, lstm = d->cell == CELL_LSTM, luong = attention_is_luong(d->attention);
    long BH = (long)B * H, N = batch_step_at(batch, T);
    for (int l = 0; l < L; l++) {
        memset(rs->d_s[l], 0, sizeof(float) * BH);
        if (lstm) memset(rs->d_c[l], 0, sizeof(float) * BH);
    }
    memset(rs->d_feed, 0, sizeof(float) * BH);
    for (int t = T - 1; t >= 0; t--) {
        long row = batch_step_at(batch, t), before = state_before(rs, batch, t), after = state_after(rs, batch, t);
        int Bt = batch_step_rows(batch, t);
        long BtH = (long)Bt * H;
        if (luong) {
            luong_attend_backward(m, rs, batch, t);
        } else {
            const float *dout = rs->d_out + row * H;
            for (long i = 0; i < BtH; i++)
                rs->d_s[L - 1][i] += dout[i];
        }
        for (int l = L - 1; l >= 0; l--) {
            RnnRun *run = &rs->dec[l];
            int ghw = GH + (rnn_fused_query(d, l) ? H : 0);
            float *dh = rs->d_s[l], *dgi = rs->d_dgi[l] + row * GH, *dgh = rs->d_dgh[l] + row * ghw;
            if (lstm) {
                lstm_gates_backward(dh, rs->d_c[l], run->cache + row * GH, run->c + before * H, run->c + after * H,
                                    dgi, GH, rs->d_c[l], Bt, H);
                for (int b = 0; b < Bt; b++)
                    memcpy(dgh + (long)b * ghw, dgi + (long)b * GH, sizeof(float) * GH);
                memset(dh, 0, sizeof(float) * BtH);
            } else {
                /* dh becomes the part of dLoss/ds_{t-1} that bypasses W_hh. */
                gru_gates_backward(dh, run->cache + row * GH, run->gh + row * ghw, ghw, run->h + before * H, dgi, GH,
                                   dgh, ghw, dh, Bt, H);
            }
            if (l) {
                /* The layer's input was the layer below's s_t (after dropout). */
                matmul_nn_prepacked(rs->d_step, H, dgi, GH, p->dec[l].w_ih, H, COLUMNS(rs, ih[l]), 0, Bt, H, GH);
                if (rs->dropping) rows_multiply(rs->d_step, H, rs->dec_drop[l] + row * H, Bt, H);
                for (long i = 0; i < BtH; i++)
                    rs->d_s[l - 1][i] += rs->d_step[i];
            } else if (X > E) {
                /* Layer 0's second input: the context (bahdanau) or o_{t-1} (input feeding). */
                float *dx = d->attention == ATT_BAHDANAU ? rs->d_ctx : rs->d_feed;
                matmul_nn_prepacked(dx, H, dgi, GH, p->dec[0].w_ih + E, X, COLUMNS(rs, ctx_in), 0, Bt, H, GH);
                if (d->attention == ATT_BAHDANAU) {
                    RnnRun *top = &rs->dec[L - 1];
                    int tw = GH + H;
                    attention_bahdanau_backward(rs->d_ctx, H, rs->keys, model_memory(m, rs), batch->mask,
                                                top->gh + row * tw + GH, tw, p->att_v, rs->attn + row * S, g->att_v,
                                                rs->d_keys, rs->d_enc, rs->d_dgh[L - 1] + row * tw + GH, tw, rs->work,
                                                S, B, Bt, H, H);
                }
            }
        }
        /* ds_{t-1} += dgh · W_hh (with the query's rows for the fused top layer). */
        for (int l = 0; l < L; l++) {
            int ghw = GH + (rnn_fused_query(d, l) ? H : 0);
            matmul_nn_prepacked(rs->d_s[l], H, rs->d_dgh[l] + row * ghw, ghw, p->dec[l].w_hh, H, COLUMNS(rs, hh[l]), 1,
                                Bt, H, ghw);
        }
    }
    /* Weight gradients over all steps at once (d_out, consumed above, holds the states
     * each step started from when the batch is packed). */
    for (int l = 0; l < L; l++) {
        int ghw = GH + (rnn_fused_query(d, l) ? H : 0), in = l ? H : X;
        linear_grads(g->dec[l].w_hh, g->dec[l].b_hh, rs->d_dgh[l], ghw, states_before(&rs->dec[l], batch, H, rs->d_out),
                     H, N, ghw, H);
        linear_grads(g->dec[l].w_ih, g->dec[l].b_ih, rs->d_dgi[l], GH, rs->dec_x[l], in, N, GH, in);
    }
    /* Target embeddings: d_emb = dgi · W_ih[:, :E] */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, E, GH, 1.0f, rs->d_dgi[0], GH, p->dec[0].w_ih, X, 0.0f,
                rs->d_x, E);
    if (rs->dropping) rows_multiply(rs->d_x, E, rs->dec_drop[0], N, E);
    embedding_backward(g->tgt_emb, rs->d_x, E, rs->sampling ? rs->fed : batch->tgt_in, N, E);
    if (!luong) return;
    linear_grads(g->att_w_out, NULL, rs->d_pre, H, rs->cat, 2 * H, N, H, 2 * H);
    const float *s_all = rs->dec[L - 1].h + (long)B * H;
    if (d->attention == ATT_LUONG_CONCAT) {
        linear_grads(g->att_w_query, g->att_b_query, rs->d_query, H, s_all, H, N, H, H);
    }
    if (d->attention == ATT_LOCAL_PREDICTIVE)
        linear_grads(g->att_w_pos, NULL, rs->d_pos, H, s_all, H, N, H, H);
}

