#include "model.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h" /* defines: attention_bahdanau_forward/_backward */
#include "embedding.h" /* defines: embedding_forward/_backward */
#include "gru.h"       /* defines: GruWeights, gru_sequence_*, gru_gates_* */
#include "linalg.h"    /* defines: matmul_bias, matmul_add, column_sums_add */
#include "loss.h"      /* defines: softmax_xent */
#include "util.h"      /* defines: xmalloc, Rng */

/* ---------------------------------------------------------------- parameters */

void params_shapes(const ModelDims *d, TensorShape out[PARAM_TENSORS])
{
    long E = d->embed, H = d->hidden, Vs = d->src_vocab, Vt = d->tgt_vocab;
    TensorShape s[PARAM_TENSORS] = {
        {"src_emb", Vs, E},       {"enc_w_ih", 3 * H, E},   {"enc_w_hh", 3 * H, H},
        {"enc_b_ih", 3 * H, 1},   {"enc_b_hh", 3 * H, 1},   {"tgt_emb", Vt, E},
        {"att_w_key", H, H},      {"att_v", H, 1},          {"dec_w_ih", 3 * H, E + H},
        {"dec_w_hh", 3 * H, H},   {"att_w_query", H, H},    {"dec_b_ih", 3 * H, 1},
        {"dec_b_hh", 3 * H, 1},   {"att_b_query", H, 1},    {"out_w", Vt, H},
        {"out_b", Vt, 1},
    };
    memcpy(out, s, sizeof s);
}

long params_count(const ModelDims *d)
{
    TensorShape s[PARAM_TENSORS];
    params_shapes(d, s);
    long n = 0;
    for (int i = 0; i < PARAM_TENSORS; i++)
        n += s[i].rows * s[i].cols;
    return n;
}

void params_tensors(const Params *p, float *out[PARAM_TENSORS])
{
    float *t[PARAM_TENSORS] = {
        p->src_emb, p->enc_w_ih, p->enc_w_hh, p->enc_b_ih, p->enc_b_hh, p->tgt_emb,
        p->att_w_key, p->att_v, p->dec_w_ih, p->dec_w_hh, p->att_w_query, p->dec_b_ih,
        p->dec_b_hh, p->att_b_query, p->out_w, p->out_b,
    };
    memcpy(out, t, sizeof t);
}

/* Carve mem into the tensors, in params_shapes order. */
static void params_point(Params *p, float *mem, const ModelDims *d)
{
    TensorShape s[PARAM_TENSORS];
    params_shapes(d, s);
    float **field[PARAM_TENSORS] = {
        &p->src_emb, &p->enc_w_ih, &p->enc_w_hh, &p->enc_b_ih, &p->enc_b_hh, &p->tgt_emb,
        &p->att_w_key, &p->att_v, &p->dec_w_ih, &p->dec_w_hh, &p->att_w_query, &p->dec_b_ih,
        &p->dec_b_hh, &p->att_b_query, &p->out_w, &p->out_b,
    };
    for (int i = 0; i < PARAM_TENSORS; i++) {
        *field[i] = mem;
        mem += s[i].rows * s[i].cols;
    }
}

void model_alloc(Model *m, const ModelDims *d)
{
    m->dims = *d;
    m->n_params = params_count(d);
    m->param_mem = xcalloc(m->n_params, sizeof(float));
    m->grad_mem = xcalloc(m->n_params, sizeof(float));
    params_point(&m->params, m->param_mem, d);
    params_point(&m->grads, m->grad_mem, d);
}

void model_init_weights(Model *m, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    TensorShape s[PARAM_TENSORS];
    float *t[PARAM_TENSORS];
    params_shapes(&m->dims, s);
    params_tensors(&m->params, t);
    float H = (float)m->dims.hidden;
    for (int i = 0; i < PARAM_TENSORS; i++) {
        long n = s[i].rows * s[i].cols;
        int is_embedding = t[i] == m->params.src_emb || t[i] == m->params.tgt_emb;
        /* Every non-embedding tensor here reads an H-wide input (GRU weights use
         * 1/sqrt(H) in PyTorch regardless of the input width) except nothing else. */
        float bound = 1.0f / sqrtf(H);
        for (long k = 0; k < n; k++)
            t[i][k] = is_embedding ? rng_normal(&rng) : bound * (2.0f * rng_uniform(&rng) - 1.0f);
    }
}

void model_zero_grad(Model *m) { memset(m->grad_mem, 0, sizeof(float) * m->n_params); }

void model_free(Model *m)
{
    free(m->param_mem);
    free(m->grad_mem);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- run state */

void runstate_alloc(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T)
{
    long E = d->embed, H = d->hidden, V = d->tgt_vocab;
    long SB = (long)S * B, TB = (long)T * B, ST = S > T ? S : T;
    long train = mode == RUN_TRAIN; /* backward buffers get 0 floats otherwise */
    struct { float **p; long n; } parts[] = {
        {&rs->xs, SB * E},          {&rs->enc_gi, SB * 3 * H},  {&rs->enc_gh, SB * 3 * H},
        {&rs->enc_rzn, SB * 3 * H}, {&rs->enc_h, (SB + B) * H}, {&rs->keys, SB * H},
        {&rs->x, TB * (E + H)},     {&rs->dec_gi, TB * 3 * H},  {&rs->dec_gh, TB * 4 * H},
        {&rs->dec_rzn, TB * 3 * H}, {&rs->dec_h, (TB + B) * H}, {&rs->attn, TB * S},
        {&rs->logits, (mode == RUN_DECODE ? B : TB) * V},
        {&rs->d_dec_h, train * TB * H},      {&rs->d_dec_gi, train * TB * 3 * H},
        {&rs->d_dec_gh, train * TB * 4 * H}, {&rs->d_ctx, train * B * H},
        {&rs->d_s, train * B * H},           {&rs->d_keys, train * SB * H},
        {&rs->d_enc, train * SB * H},        {&rs->d_emb, train * ST * B * E},
        {&rs->d_enc_gi, train * SB * 3 * H}, {&rs->d_enc_gh, train * SB * 3 * H},
        {&rs->d_h0, train * B * H},          {&rs->work, S + H},
    };
    int n_parts = sizeof parts / sizeof parts[0];
    long total = 0;
    for (int i = 0; i < n_parts; i++)
        total += parts[i].n;
    rs->mem = xcalloc(total, sizeof(float));
    float *p = rs->mem;
    for (int i = 0; i < n_parts; i++) {
        *parts[i].p = parts[i].n ? p : NULL;
        p += parts[i].n;
    }
    rs->mode = mode;
    rs->label_smoothing = 0;
    rs->cap_B = B;
    rs->cap_S = S;
    rs->cap_T = T;
}

void runstate_free(RunState *rs)
{
    free(rs->mem);
    memset(rs, 0, sizeof *rs);
}

void runstate_ensure(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T)
{
    if (rs->mem && (int)mode == rs->mode && B <= rs->cap_B && S <= rs->cap_S && T <= rs->cap_T) return;
    int nb = B > rs->cap_B ? B : rs->cap_B, ns = S > rs->cap_S ? S : rs->cap_S, nt = T > rs->cap_T ? T : rs->cap_T;
    runstate_free(rs);
    runstate_alloc(rs, d, mode, nb, ns, nt);
}

/* ---------------------------------------------------------------- forward */

static GruWeights encoder_gru(const ModelDims *d, const Params *p)
{
    return (GruWeights){p->enc_w_ih, p->enc_w_hh, p->enc_b_ih, p->enc_b_hh, d->embed, d->hidden};
}

void model_encode(Model *m, RunState *rs, const Batch *batch)
{
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, E = m->dims.embed, H = m->dims.hidden;
    GruWeights w = encoder_gru(&m->dims, p);
    embedding_forward(rs->xs, E, p->src_emb, batch->src, S * B, E);
    memset(rs->enc_h, 0, sizeof(float) * B * H);
    gru_sequence_forward(&w, rs->xs, batch->mask, rs->enc_h, rs->enc_gi, rs->enc_gh,
                         rs->enc_rzn, S, B);
    /* keys (S*B, H) = enc · att_w_key^T, once for all decoder steps */
    matmul_bias(rs->keys, H, rs->enc_h + (long)B * H, H, p->att_w_key, H, NULL, S * B, H, H);
    memcpy(rs->dec_h, rs->enc_h + (long)S * B * H, sizeof(float) * B * H);
}

void model_decoder_input(Model *m, RunState *rs, int t, const int *ids, int B)
{
    const Params *p = &m->params;
    int E = m->dims.embed, H = m->dims.hidden, X = E + H;
    float *x = rs->x + (long)t * B * X;
    embedding_forward(x, X, p->tgt_emb, ids, B, E);
    matmul_bias(rs->dec_gi + (long)t * B * 3 * H, 3 * H, x, X, p->dec_w_ih, X, p->dec_b_ih, B, 3 * H, E);
}

void model_decoder_step(Model *m, RunState *rs, const Batch *batch, int t)
{
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, E = m->dims.embed, H = m->dims.hidden, X = E + H;
    const float *s_prev = rs->dec_h + (long)t * B * H;
    float *gh = rs->dec_gh + (long)t * B * 4 * H;
    float *x = rs->x + (long)t * B * X;
    float *gi = rs->dec_gi + (long)t * B * 3 * H;
    /* [W_hh; W_query] s_{t-1} + [b_hh; b_query]: one product (the tensors are adjacent). */
    matmul_bias(gh, 4 * H, s_prev, H, p->dec_w_hh, H, p->dec_b_hh, B, 4 * H, H);
    attention_bahdanau_forward(rs->keys, rs->enc_h + (long)B * H, batch->mask, gh + 3 * H, 4 * H,
                               p->att_v, rs->attn + (long)t * B * S, x + E, X, S, B, H, H);
    /* gi += context · W_ih[:, E:]^T  (the embedding part is already in gi) */
    matmul_add(gi, 3 * H, x + E, X, p->dec_w_ih + E, X, B, 3 * H, H);
    gru_gates_forward(gi, 3 * H, gh, 4 * H, s_prev, rs->dec_h + (long)(t + 1) * B * H,
                      rs->dec_rzn + (long)t * B * 3 * H, B, H);
}

double model_forward(Model *m, RunState *rs, const Batch *batch, int want_grad)
{
    const Params *p = &m->params;
    int B = batch->B, T = batch->T, E = m->dims.embed, H = m->dims.hidden, V = m->dims.tgt_vocab;
    int X = E + H;
    model_encode(m, rs, batch);
    /* Teacher forcing: every decoder input is known, so embed and project them all at once. */
    embedding_forward(rs->x, X, p->tgt_emb, batch->tgt_in, T * B, E);
    matmul_bias(rs->dec_gi, 3 * H, rs->x, X, p->dec_w_ih, X, p->dec_b_ih, T * B, 3 * H, E);
    for (int t = 0; t < T; t++)
        model_decoder_step(m, rs, batch, t);
    /* All output projections at once: logits (T*B, V) */
    matmul_bias(rs->logits, V, rs->dec_h + (long)B * H, H, p->out_w, H, p->out_b, T * B, V, H);
    float scale = batch->n_tokens > 0 ? 1.0f / batch->n_tokens : 0.0f;
    return softmax_xent(rs->logits, batch->tgt_out, T * B, V, scale, rs->label_smoothing,
                        want_grad ? rs->logits : NULL);
}

/* ---------------------------------------------------------------- backward */

void model_backward(Model *m, RunState *rs, const Batch *batch)
{
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, T = batch->T, E = m->dims.embed, H = m->dims.hidden;
    int V = m->dims.tgt_vocab, X = E + H;
    long TB = (long)T * B, SB = (long)S * B;
    const float *s_all = rs->dec_h + (long)B * H;   /* s_1..s_T, (T*B, H) */
    const float *enc = rs->enc_h + (long)B * H;     /* h_1..h_S, (S*B, H) */

    /* Output layer: dlogits (T*B, V) is already in rs->logits. */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, V, H, TB,
                1.0f, rs->logits, V, s_all, H, 1.0f, g->out_w, H);
    column_sums_add(g->out_b, rs->logits, TB, V, V);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, TB, H, V,
                1.0f, rs->logits, V, p->out_w, H, 0.0f, rs->d_dec_h, H);

    /* Decoder steps in reverse. d_s carries dLoss/ds_t from step t+1. */
    memset(rs->d_s, 0, sizeof(float) * B * H);
    memset(rs->d_keys, 0, sizeof(float) * SB * H);
    memset(rs->d_enc, 0, sizeof(float) * SB * H);
    for (int t = T - 1; t >= 0; t--) {
        float *dh = rs->d_dec_h + (long)t * B * H;
        for (long i = 0; i < (long)B * H; i++)
            dh[i] += rs->d_s[i];
        float *dgi = rs->d_dec_gi + (long)t * B * 3 * H, *dgh = rs->d_dec_gh + (long)t * B * 4 * H;
        gru_gates_backward(dh, rs->dec_rzn + (long)t * B * 3 * H, rs->dec_gh + (long)t * B * 4 * H, 4 * H,
                           rs->dec_h + (long)t * B * H, dgi, 3 * H, dgh, 4 * H, rs->d_s, B, H);
        /* dctx = dgi · W_ih[:, E:] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, 3 * H,
                    1.0f, dgi, 3 * H, p->dec_w_ih + E, X, 0.0f, rs->d_ctx, H);
        attention_bahdanau_backward(rs->d_ctx, H, rs->keys, enc, batch->mask, rs->dec_gh + (long)t * B * 4 * H + 3 * H,
                                    4 * H, p->att_v, rs->attn + (long)t * B * S, g->att_v, rs->d_keys,
                                    rs->d_enc, dgh + 3 * H, 4 * H, rs->work, S, B, H, H);
        /* ds_{t-1} += [dgh | dq] · [W_hh; W_query] */
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, 4 * H,
                    1.0f, dgh, 4 * H, p->dec_w_hh, H, 1.0f, rs->d_s, H);
    }
    /* Decoder weight gradients over all steps at once. */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 4 * H, H, TB,
                1.0f, rs->d_dec_gh, 4 * H, rs->dec_h, H, 1.0f, g->dec_w_hh, H);
    column_sums_add(g->dec_b_hh, rs->d_dec_gh, TB, 4 * H, 4 * H);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 3 * H, X, TB,
                1.0f, rs->d_dec_gi, 3 * H, rs->x, X, 1.0f, g->dec_w_ih, X);
    column_sums_add(g->dec_b_ih, rs->d_dec_gi, TB, 3 * H, 3 * H);
    /* Target embeddings: d_emb = dgi · W_ih[:, :E] */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, TB, E, 3 * H,
                1.0f, rs->d_dec_gi, 3 * H, p->dec_w_ih, X, 0.0f, rs->d_emb, E);
    embedding_backward(g->tgt_emb, rs->d_emb, E, batch->tgt_in, TB, E);

    /* Attention keys: dW_key += dkeys^T enc; denc += dkeys · W_key */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, H, SB,
                1.0f, rs->d_keys, H, enc, H, 1.0f, g->att_w_key, H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, SB, H, H,
                1.0f, rs->d_keys, H, p->att_w_key, H, 1.0f, rs->d_enc, H);
    /* s_0 is the encoder's final state h_S. */
    float *d_last = rs->d_enc + (SB - B) * H;
    for (long i = 0; i < (long)B * H; i++)
        d_last[i] += rs->d_s[i];

    GruWeights w = encoder_gru(&m->dims, p), gw = encoder_gru(&m->dims, g);
    gru_sequence_backward(&w, &gw, rs->xs, batch->mask, rs->enc_h, rs->enc_gh, rs->enc_rzn, rs->d_enc,
                          rs->d_emb, rs->d_h0, rs->d_enc_gi, rs->d_enc_gh, S, B);
    embedding_backward(g->src_emb, rs->d_emb, E, batch->src, SB, E);
}
