/* rnn_encoder.c — the recurrent encoder, forward and backward: the stacked (optionally
 * bidirectional) GRU or LSTM layers over the source embeddings, and the bridge to the
 * decoder's initial state (rnn.h).
 *
 * Why a file of its own: the recurrent translation family and the classifier
 * (classifier.c) share it, the classifier without the bridge. */
#include "models/rnn.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "kernels/linalg.h"   /* defines: matmul_bias, linear_grads */
#include "layers/embedding.h" /* defines: embedding_forward/_backward */
#include "layers/gru.h"       /* defines: GruWeights, gru_sequence_*, gru_packed_* */
#include "layers/lstm.h"      /* defines: LstmWeights, lstm_sequence_*, lstm_packed_* */

/* ---------------------------------------------------------------- pieces */

void rows_dropout(float *x, int ld, float *keep, long n, int w, float p, Rng *rng)
{
    float scale = 1.0f / (1.0f - p);
    for (long i = 0; i < n; i++)
        for (int k = 0; k < w; k++) {
            float kk = rng_uniform(rng) < p ? 0.0f : scale;
            keep[i * w + k] = kk;
            x[i * ld + k] *= kk;
        }
}

void rows_multiply(float *x, int ld, const float *keep, long n, int w)
{
    for (long i = 0; i < n; i++)
        for (int k = 0; k < w; k++)
            x[i * ld + k] *= keep[i * w + k];
}

void tanh_inplace(float *x, long n)
{
    for (long i = 0; i < n; i++)
        x[i] = tanhf(x[i]);
}

/* A layer's weights (or gradients) as the layer functions take them; hh: w_hh packed
 * for the forward pass's steps, cols: its columns for the backward pass's, or NULL. */
static GruWeights gru_weights(const RnnParams *p, int in, int units, const PackedMatrix *hh, const PackedMatrix *cols)
{
    return (GruWeights){p->w_ih, p->w_hh, p->b_ih, p->b_hh, in, units, hh, cols, NULL, NULL};
}

static LstmWeights lstm_weights(const RnnParams *p, int in, int units, const PackedMatrix *hh,
                                const PackedMatrix *cols)
{
    return (LstmWeights){p->w_ih, p->w_hh, p->b_ih, p->b_hh, in, units, hh, cols, NULL, NULL};
}

/* ---------------------------------------------------------------- prepared for int8 decoding */

void rnn_encoder_prepare(const Model *m, RnnEncoderPrepared *pe, ComputeType type, int with_decoder)
{
    const ModelDims *d = &m->dims;
    int H = d->hidden, U = rnn_units(d), GU = rnn_gates(d) * U;
    if (type != COMPUTE_INT8) return;
    for (int l = 0; l < rnn_layers(d); l++) {
        for (int r = 0; r < rnn_dirs(d); r++) {
            int in = l ? H : d->embed;
            const RnnParams *p = &m->params.enc[l][r];
            model_prepare_weight(m, &pe->ih[l][r], p->w_ih, in, GU, in, type);
            model_prepare_weight(m, &pe->hh[l][r], p->w_hh, U, GU, U, type);
        }
        if (with_decoder && d->bidirectional)
            model_prepare_weight(m, &pe->bridge[l], m->params.bridge_w[l], H, H, H, type);
    }
}

void rnn_encoder_prepared_free(RnnEncoderPrepared *pe)
{
    for (int l = 0; l < MAX_LAYERS; l++) {   /* unused ones are zero: a no-op */
        for (int r = 0; r < 2; r++)
            prepared_weight_free(&pe->ih[l][r]), prepared_weight_free(&pe->hh[l][r]);
        prepared_weight_free(&pe->bridge[l]);
    }
}

int rnn_encoder_int8_only(Model *m, float **slot[MAX_TENSORS], long n[MAX_TENSORS], int c, int with_decoder)
{
    const ModelDims *d = &m->dims;
    long H = d->hidden, U = rnn_units(d), GU = rnn_gates(d) * U;
    for (int l = 0; l < rnn_layers(d); l++) {
        for (int r = 0; r < rnn_dirs(d); r++) {
            RnnParams *p = &m->params.enc[l][r];
            slot[c] = &p->w_ih, n[c++] = GU * (l ? H : d->embed);
            slot[c] = &p->w_hh, n[c++] = GU * U;
        }
        if (with_decoder && d->bidirectional) slot[c] = &m->params.bridge_w[l], n[c++] = H * H;
    }
    return c;
}

/* The encoder's int8 weights when rs decodes with a model prepared for int8, or NULL. */
static const RnnEncoderPrepared *encoder_int8(const Model *m, const RunState *rs)
{
    return rs->mode == RUN_DECODE && m->prepared && m->compute_type == COMPUTE_INT8 ? m->prepared : NULL;
}

/* ---------------------------------------------------------------- forward */

/* The recurrent layers on a padded batch (translation), and the decoder's initial
 * state from their final states. */
static void encode_padded(Model *m, RunState *rs, const Batch *batch, int with_decoder)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = rnn_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM, keep = rs->mode != RUN_DECODE; /* decoding has no backward pass */
    long SB = (long)S * B;
    const RnnEncoderPrepared *q8 = encoder_int8(m, rs);
    model_embed(m, rs->enc_x[0], E, p->src_emb, batch->src, S * B, E);
    if (rs->dropping) rows_dropout(rs->enc_x[0], E, rs->enc_drop[0], SB, E, rs->dropout, &rs->rng);
    for (int l = 0; l < L; l++) {
        int in = l ? H : E;
        if (l) {
            memcpy(rs->enc_x[l], rs->enc_out[l - 1], sizeof(float) * SB * H);
            if (rs->dropping) rows_dropout(rs->enc_x[l], H, rs->enc_drop[l], SB, H, rs->dropout, &rs->rng);
        }
        for (int r = 0; r < rnn_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            const PackedMatrix *hh = rnn_step_pack_encoder(rs, l, r, p->enc[l][r].w_hh, rnn_gates(d) * U, U, B);
            const PreparedWeight *ih8 = q8 ? &q8->ih[l][r] : NULL, *hh8 = q8 ? &q8->hh[l][r] : NULL;
            long init = r ? SB * U : 0;
            memset(run->h + init, 0, sizeof(float) * B * U);
            if (lstm) {
                memset(run->c + init, 0, sizeof(float) * B * U);
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U, hh, NULL);
                w.w_ih_int8 = ih8, w.w_hh_int8 = hh8;
                lstm_sequence_forward(&w, rs->enc_x[l], batch->mask, run->h, run->c, run->gi, run->gh, run->cache,
                                      S, B, r, keep);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U, hh, NULL);
                w.w_ih_int8 = ih8, w.w_hh_int8 = hh8;
                gru_sequence_forward(&w, rs->enc_x[l], batch->mask, run->h, run->gi, run->gh, run->cache, S, B, r,
                                     keep);
            }
        }
        if (!d->bidirectional) {
            /* One direction: the outputs are the states themselves (this batch's B). */
            rs->enc_out[l] = rs->enc[l][0].h + (long)B * U;
        } else {
            const float *fwd = rs->enc[l][0].h + (long)B * U, *rev = rs->enc[l][1].h;
            for (long i = 0; i < SB; i++) {
                memcpy(rs->enc_out[l] + i * H, fwd + i * U, sizeof(float) * U);
                memcpy(rs->enc_out[l] + i * H + U, rev + i * U, sizeof(float) * U);
            }
        }
    }
    rs->memory = rs->enc_out[L - 1];
    if (!with_decoder) return;  /* no decoder to start (a classifier) */
    /* The decoder's initial state, layer by layer: forward, the final state is h[S]
     * (carried through the padding); reverse, h[0]. */
    for (int l = 0; l < L; l++) {
        RnnRun *dec = &rs->dec[l];
        const RnnRun *fw = &rs->enc[l][0], *rv = &rs->enc[l][1];
        if (!d->bidirectional) {
            memcpy(dec->h, fw->h + SB * H, sizeof(float) * B * H);
            if (lstm) memcpy(dec->c, fw->c + SB * H, sizeof(float) * B * H);
            continue;
        }
        float *in = rs->bridge_in + (long)l * B * H;
        for (int b = 0; b < B; b++) {
            memcpy(in + (long)b * H, fw->h + (SB + b) * U, sizeof(float) * U);
            memcpy(in + (long)b * H + U, rv->h + (long)b * U, sizeof(float) * U);
            if (lstm) {
                memcpy(dec->c + (long)b * H, fw->c + (SB + b) * U, sizeof(float) * U);
                memcpy(dec->c + (long)b * H + U, rv->c + (long)b * U, sizeof(float) * U);
            }
        }
        const PreparedWeight *bridge8 = q8 ? &q8->bridge[l] : NULL;
        prepared_matmul_bias(dec->h, H, in, H, p->bridge_w[l], H, bridge8, p->bridge_b[l], B, H, H);
        tanh_inplace(dec->h, (long)B * H);
    }
}

/* The source length of encoder row i of a packed batch: the positions it is live at. */
static int packed_len(const int *off, int S, int i)
{
    int len = 0;
    while (len < S && off[len + 1] - off[len] > i)
        len++;
    return len;
}

/* The recurrent layers on a packed batch (training, scoring: packseq.h), the memory
 * unpacked into batch order, and the decoder's initial state from each row's final
 * states: forward at its last position, reverse at position 0. */
static void encode_packed(Model *m, RunState *rs, const Batch *batch, int with_decoder)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = rnn_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM, bi = d->bidirectional;
    const int *off = batch->src_off, *row = batch->enc_row;
    long N = off[S];
    const RnnEncoderPrepared *q8 = encoder_int8(m, rs);
    model_embed(m, rs->enc_x[0], E, p->src_emb, batch->enc_src, (int)N, E);
    if (rs->dropping) rows_dropout(rs->enc_x[0], E, rs->enc_drop[0], N, E, rs->dropout, &rs->rng);
    for (int l = 0; l < L; l++) {
        int in = l ? H : E;
        if (l) {
            memcpy(rs->enc_x[l], rs->enc_out[l - 1], sizeof(float) * N * H);
            if (rs->dropping) rows_dropout(rs->enc_x[l], H, rs->enc_drop[l], N, H, rs->dropout, &rs->rng);
        }
        for (int r = 0; r < rnn_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            const PackedMatrix *hh = rnn_step_pack_encoder(rs, l, r, p->enc[l][r].w_hh, rnn_gates(d) * U, U, B);
            memset(run->h, 0, sizeof(float) * B * U);
            if (lstm) {
                memset(run->c, 0, sizeof(float) * B * U);
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U, hh, NULL);
                w.w_ih_int8 = q8 ? &q8->ih[l][r] : NULL, w.w_hh_int8 = q8 ? &q8->hh[l][r] : NULL;
                lstm_packed_forward(&w, rs->enc_x[l], run->h, run->c, run->gi, run->gh, run->cache, off, S, B, r,
                                    rs->enc_work);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U, hh, NULL);
                w.w_ih_int8 = q8 ? &q8->ih[l][r] : NULL, w.w_hh_int8 = q8 ? &q8->hh[l][r] : NULL;
                gru_packed_forward(&w, rs->enc_x[l], run->h, run->gi, run->gh, run->cache, off, S, B, r, rs->enc_work);
            }
        }
        if (!bi) {
            rs->enc_out[l] = rs->enc[l][0].h + (long)B * U;
        } else {
            const float *fwd = rs->enc[l][0].h + (long)B * U, *rev = rs->enc[l][1].h + (long)B * U;
            for (long i = 0; i < N; i++) {
                memcpy(rs->enc_out[l] + i * H, fwd + i * U, sizeof(float) * U);
                memcpy(rs->enc_out[l] + i * H + U, rev + i * U, sizeof(float) * U);
            }
        }
    }
    /* The memory in batch order, zero on the padding (which the attention masks). */
    const float *top = rs->enc_out[L - 1];
    memset(rs->mem_batch, 0, sizeof(float) * S * B * H);
    for (int t = 0; t < S; t++)
        for (int i = 0; i < off[t + 1] - off[t]; i++)
            memcpy(rs->mem_batch + ((long)t * B + row[i]) * H, top + ((long)off[t] + i) * H, sizeof(float) * H);
    rs->memory = rs->mem_batch;
    if (!with_decoder) return;  /* no decoder to start (a classifier) */
    for (int l = 0; l < L; l++) {
        RnnRun *dec = &rs->dec[l];
        const RnnRun *fw = &rs->enc[l][0], *rv = &rs->enc[l][1];
        float *in = bi ? rs->bridge_in + (long)l * B * H : dec->h;
        for (int i = 0; i < B; i++) {
            long b = row[i], last = B + off[packed_len(off, S, i) - 1] + i, first = B + i;
            memcpy(in + b * H, fw->h + last * U, sizeof(float) * U);
            if (lstm) memcpy(dec->c + b * H, fw->c + last * U, sizeof(float) * U);
            if (!bi) continue;
            memcpy(in + b * H + U, rv->h + first * U, sizeof(float) * U);
            if (lstm) memcpy(dec->c + b * H + U, rv->c + first * U, sizeof(float) * U);
        }
        if (!bi) continue;
        matmul_bias(dec->h, H, in, H, p->bridge_w[l], H, p->bridge_b[l], B, H, H);
        tanh_inplace(dec->h, (long)B * H);
    }
}

void rnn_encode(Model *m, RunState *rs, const Batch *batch, int with_decoder)
{
    int B = batch->B, S = batch->S;
    for (int b = 0; b < B; b++) {
        int len = 0;
        for (int t = 0; t < S; t++)
            len += batch->mask[t * B + b] != 0.0f;
        rs->src_len[b] = len;
    }
    /* (Decoding's run state holds one position's gate rows: the padded encoder's. A
     * classifier's holds every row's, packed, whatever its mode: classify_lines runs a
     * classifier prepared for int8 in RUN_DECODE.) */
    if (batch->src_off && (rs->mode != RUN_DECODE || !with_decoder)) encode_packed(m, rs, batch, with_decoder);
    else encode_padded(m, rs, batch, with_decoder);
}

/* ---------------------------------------------------------------- backward */

/* A bidirectional layer's output gradient d (n, H) = [forward; reverse] split into its
 * directions' (n, U) each. */
static void split_directions(const float *d, long n, int H, int U, float *fwd, float *rev)
{
    for (long i = 0; i < n; i++) {
        memcpy(fwd + i * U, d + i * H, sizeof(float) * U);
        memcpy(rev + i * U, d + i * H + U, sizeof(float) * U);
    }
}

/* The encoder of a padded batch, top layer first; d_enc holds dLoss/d(top layer
 * output) on entry. */
static void encoder_backward_padded(Model *m, RunState *rs, const Batch *batch, int with_decoder)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = rnn_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM, bi = d->bidirectional;
    long SB = (long)S * B;
    for (int l = L - 1; l >= 0; l--) {
        int in = l ? H : E;
        float *dh[2] = {rs->d_enc, NULL}, *dcf[2] = {lstm ? rs->d_c[l] : NULL, NULL};
        if (!with_decoder) {
            /* No decoder starts from the final states: their gradient is the outputs'. */
            if (lstm && !bi) memset(rs->d_c[l], 0, sizeof(float) * B * H);  /* dcf[0] */
            if (bi) {
                dh[0] = rs->d_dir[0];
                dh[1] = rs->d_dir[1];
                split_directions(rs->d_enc, SB, H, U, dh[0], dh[1]);
                if (lstm) {
                    memset(rs->d_cfin, 0, sizeof(float) * 2 * B * U);
                    dcf[0] = rs->d_cfin;
                    dcf[1] = rs->d_cfin + (long)B * U;
                }
            }
        } else if (!bi) {
            /* s_0 of decoder layer l is this layer's final state, the carried h[S]. */
            float *last = rs->d_enc + (SB - B) * H;
            for (long i = 0; i < (long)B * H; i++)
                last[i] += rs->d_s[l][i];
        } else {
            /* s_0 = tanh(W_bridge [h_fwd; h_rev] + b) */
            const float *s0 = rs->dec[l].h;
            for (long i = 0; i < (long)B * H; i++)
                rs->d_step[i] = rs->d_s[l][i] * (1.0f - s0[i] * s0[i]);
            linear_grads(g->bridge_w[l], g->bridge_b[l], rs->d_step, H, rs->bridge_in + (long)l * B * H, H, B, H, H);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, H, 1.0f, rs->d_step, H, p->bridge_w[l], H,
                        0.0f, rs->d_h0, H);
            dh[0] = rs->d_dir[0];
            dh[1] = rs->d_dir[1];
            split_directions(rs->d_enc, SB, H, U, dh[0], dh[1]);
            /* The forward final state is at position S-1 (carried), the reverse one at 0. */
            for (int b = 0; b < B; b++)
                for (int k = 0; k < U; k++) {
                    dh[0][(SB - B + b) * U + k] += rs->d_h0[(long)b * H + k];
                    dh[1][(long)b * U + k] += rs->d_h0[(long)b * H + U + k];
                    if (lstm) {
                        rs->d_cfin[(long)b * U + k] = rs->d_c[l][(long)b * H + k];
                        rs->d_cfin[(long)(B + b) * U + k] = rs->d_c[l][(long)b * H + U + k];
                    }
                }
            if (lstm) {
                dcf[0] = rs->d_cfin;
                dcf[1] = rs->d_cfin + (long)B * U;
            }
        }
        for (int r = 0; r < rnn_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            float *dx = r ? rs->d_x2 : rs->d_x;
            const PackedMatrix *cols = rnn_step_pack_encoder_columns(rs, l, r, p->enc[l][r].w_hh, U, rnn_gates(d) * U, B);
            if (lstm) {
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U, NULL, cols), gw = lstm_weights(&g->enc[l][r], in, U, NULL, NULL);
                lstm_sequence_backward(&w, &gw, rs->enc_x[l], batch->mask, run->h, run->c, run->cache, dh[r], dcf[r],
                                       dx, rs->d_h0, rs->d_c0, rs->d_enc_gi, S, B, r);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U, NULL, cols), gw = gru_weights(&g->enc[l][r], in, U, NULL, NULL);
                gru_sequence_backward(&w, &gw, rs->enc_x[l], batch->mask, run->h, run->gh, run->cache, dh[r], dx,
                                      rs->d_h0, rs->d_enc_gi, rs->d_enc_gh, S, B, r);
            }
        }
        if (bi)
            for (long i = 0; i < SB * in; i++)
                rs->d_x[i] += rs->d_x2[i];
        if (rs->dropping) rows_multiply(rs->d_x, in, rs->enc_drop[l], SB, in);
        if (l) memcpy(rs->d_enc, rs->d_x, sizeof(float) * SB * H);
    }
    embedding_backward(g->src_emb, rs->d_x, E, batch->src, SB, E);
}

/* The encoder of a packed batch, top layer first; d_enc holds dLoss/d(memory) in
 * batch order on entry. */
static void encoder_backward_packed(Model *m, RunState *rs, const Batch *batch, int with_decoder)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = rnn_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM, bi = d->bidirectional;
    const int *off = batch->src_off, *row = batch->enc_row;
    long N = off[S];
    for (int t = 0; t < S; t++)
        for (int i = 0; i < off[t + 1] - off[t]; i++)
            memcpy(rs->d_encp + ((long)off[t] + i) * H, rs->d_enc + ((long)t * B + row[i]) * H, sizeof(float) * H);
    for (int l = L - 1; l >= 0; l--) {
        int in = l ? H : E;
        float *dh[2] = {rs->d_encp, NULL};
        /* The final states' gradients in the encoder's row order, per direction: from
         * the decoder's initial state directly (one direction) or through the bridge. */
        const float *dfin = rs->d_s[l];  /* a classifier's: zero (no decoder starts from them) */
        if (bi && with_decoder) {
            /* s_0 = tanh(W_bridge [h_fwd; h_rev] + b) */
            const float *s0 = rs->dec[l].h;
            for (long i = 0; i < (long)B * H; i++)
                rs->d_step[i] = rs->d_s[l][i] * (1.0f - s0[i] * s0[i]);
            linear_grads(g->bridge_w[l], g->bridge_b[l], rs->d_step, H, rs->bridge_in + (long)l * B * H, H, B, H, H);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, H, 1.0f, rs->d_step, H, p->bridge_w[l], H,
                        0.0f, rs->d_h0, H);
            dfin = rs->d_h0;
        }
        if (bi) {
            dh[0] = rs->d_dir[0];
            dh[1] = rs->d_dir[1];
            split_directions(rs->d_encp, N, H, U, dh[0], dh[1]);
        }
        for (int r = 0; r < rnn_dirs(d); r++)
            for (int i = 0; i < B; i++) {
                memcpy(rs->d_hfin + ((long)r * B + i) * U, dfin + (long)row[i] * H + r * U, sizeof(float) * U);
                if (lstm)
                    memcpy(rs->d_cfin + ((long)r * B + i) * U, rs->d_c[l] + (long)row[i] * H + r * U,
                           sizeof(float) * U);
            }
        for (int r = 0; r < rnn_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            float *dx = r ? rs->d_x2 : rs->d_x, *hfin = rs->d_hfin + (long)r * B * U;
            const PackedMatrix *cols = rnn_step_pack_encoder_columns(rs, l, r, p->enc[l][r].w_hh, U, rnn_gates(d) * U, B);
            if (lstm) {
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U, NULL, cols), gw = lstm_weights(&g->enc[l][r], in, U, NULL, NULL);
                lstm_packed_backward(&w, &gw, rs->enc_x[l], run->h, run->c, run->cache, dh[r], hfin,
                                     rs->d_cfin + (long)r * B * U, dx, rs->d_h0, rs->d_c0, rs->d_enc_gi, off, S, B, r,
                                     rs->enc_work);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U, NULL, cols), gw = gru_weights(&g->enc[l][r], in, U, NULL, NULL);
                gru_packed_backward(&w, &gw, rs->enc_x[l], run->h, run->gh, run->cache, dh[r], hfin, dx, rs->d_h0,
                                    rs->d_enc_gi, rs->d_enc_gh, off, S, B, r, rs->enc_work);
            }
        }
        if (bi)
            for (long i = 0; i < N * in; i++)
                rs->d_x[i] += rs->d_x2[i];
        if (rs->dropping) rows_multiply(rs->d_x, in, rs->enc_drop[l], N, in);
        if (l) memcpy(rs->d_encp, rs->d_x, sizeof(float) * N * H);
    }
    embedding_backward(g->src_emb, rs->d_x, E, batch->enc_src, N, E);
}

void rnn_encoder_backward(Model *m, RunState *rs, const Batch *batch, int with_decoder)
{
    if (batch->src_off) encoder_backward_packed(m, rs, batch, with_decoder);
    else encoder_backward_padded(m, rs, batch, with_decoder);
}

