/* transformer_train.c — the Transformer's training pass (transformer.h): the forward
 * pass over packed rows keeping what the backward pass reads, with dropout, and the
 * backward pass.
 *
 * Why a file of its own: training keeps every sub-layer's activations (a TRun) and runs
 * the attention over packed rows (no padding) with dropout masks; inference keeps
 * nothing. Both run the same layers (transformer_layer.c). */
#include "models/transformer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/prepared.h"         /* defines: prepared_matmul_bias, prepared_matmul_nn */
#include "layers/layernorm.h"         /* defines: layernorm_forward, layernorm_backward */
#include "layers/mha.h"               /* defines: mha_forward_packed, mha_backward_packed, MhaWorkspace */
#include "layers/posenc.h"            /* defines: posenc_add */
#include "models/transformer_layer.h" /* defines: encoder_layer_forward, decoder_layer_forward, TPass, SubBufs */
#include "base/util.h"                /* defines: xcalloc */

/* One sub-layer's activations: the residual stream entering it (the previous
 * sub-layer's output), and its own buffers (transformer_layer.h; y is post-norm's sum
 * x + f(x), which its layer norm's backward pass reads). */
typedef struct {
    float *stream;   /* (N, D) */
    SubBufs b;
} SubRun;

struct TRun {
    float *mem;                   /* the one allocation the floats below point into */
    unsigned char *masks;         /* and the dropout masks (training runs only) */
    float p, p_att, p_act;        /* this pass's dropout probabilities (TDropout; 0: none) */
    Rng *rng;                     /* draws the masks */
    const TPrepared *packs;       /* this pass's packed weights, or NULL (transformer.h) */
    unsigned char *ekeep[2];      /* the embeddings' keep masks (S*B, D), (T*B, D) */
    int cap_S, cap_T, cap_B;
    int S, T, B;                  /* the batch: longest source, longest target, sentences */
    /* Packed rows: sentence b's source positions are rows start_s[b] .. start_s[b] +
     * src_len[b] - 1 of every encoder tensor (Ns rows in all), its target positions rows
     * start_t[b] .. of every decoder tensor (Nt): no row for padding. */
    const int *src_len, *tgt_len;
    int Ns, Nt;
    int *start_s, *start_t;       /* (B) */
    int *src, *tgt_in, *tgt_out;  /* (Ns), (Nt), (Nt) the ids of the rows */
    float *pe;                    /* (max(cap_S, cap_T), D) the position encodings */
    int *ints;                    /* the allocation of the ints above */
    SubRun enc[MAX_LAYERS][2], dec[MAX_LAYERS][3];
    float *enc_out, *dec_out;     /* the streams leaving the last layers (N, D) */
    float *memory, *enc_fn, *dec_fn, *fn_mean[2], *fn_rstd[2];  /* pre-norm: after the final LNs */
    float *logits;                /* (Nt, Vt); the caller makes them dLoss/dlogits */
    float *d_a, *d_c, *d_n, *d_memory, *ff_work;   /* backward scratch */
};

static float *take(float **at, long n)
{
    float *p = *at;
    *at += n;
    return p;
}

static unsigned char *take_bytes(unsigned char **at, long n)
{
    unsigned char *p = *at;
    *at += n;
    return p;
}

TRun *trun_new(const ModelDims *d, int S, int T, int B, int train)
{
    TRun *r = xcalloc(1, sizeof *r);
    r->cap_S = S, r->cap_T = T, r->cap_B = B;
    long D = d->embed, F = d->ff, Ns = (long)S * B, Nt = (long)T * B, M = Ns > Nt ? Ns : Nt;
    MhaConfig c = {.d = (int)D, .heads = d->heads};
    long wss = mha_workspace_floats(&c, S, S, B), wst = mha_workspace_floats(&c, T, T, B),
         wsx = mha_workspace_floats(&c, T, S, B);
    long sub_n = 3 * D + 2;  /* per row: stream, n, sum, mean, rstd */
    long total = (long)d->enc_layers * (2 * Ns * sub_n + wss + 2 * Ns * F) +
                 (long)d->dec_layers * (3 * Nt * sub_n + wst + wsx + 2 * Nt * F) + 2 * Ns * D + 2 * Nt * D + Ns * D +
                 2 * (Ns + Nt) + Nt * d->tgt_vocab + 4 * M * D + M * F + (long)(S > T ? S : T) * D;
    float *mem = xcalloc(total, sizeof(float)), *at = mem;
    for (int l = 0; l < d->enc_layers; l++)
        for (int k = 0; k < 2; k++) {
            SubRun *u = &r->enc[l][k];
            u->stream = take(&at, Ns * D), u->b.n = take(&at, Ns * D), u->b.y = take(&at, Ns * D);
            u->b.mean = take(&at, Ns), u->b.rstd = take(&at, Ns);
            if (k == 0) u->b.ws_mem = take(&at, wss);
            else u->b.fh = take(&at, Ns * F), u->b.fa = take(&at, Ns * F);
        }
    for (int l = 0; l < d->dec_layers; l++)
        for (int k = 0; k < 3; k++) {
            SubRun *u = &r->dec[l][k];
            u->stream = take(&at, Nt * D), u->b.n = take(&at, Nt * D), u->b.y = take(&at, Nt * D);
            u->b.mean = take(&at, Nt), u->b.rstd = take(&at, Nt);
            if (k == 0) u->b.ws_mem = take(&at, wst);
            else if (k == 1) u->b.ws_mem = take(&at, wsx);
            else u->b.fh = take(&at, Nt * F), u->b.fa = take(&at, Nt * F);
        }
    r->enc_out = take(&at, Ns * D), r->memory = take(&at, Ns * D), r->enc_fn = r->memory;
    r->dec_out = take(&at, Nt * D), r->dec_fn = take(&at, Nt * D);
    r->fn_mean[0] = take(&at, Ns), r->fn_rstd[0] = take(&at, Ns);
    r->fn_mean[1] = take(&at, Nt), r->fn_rstd[1] = take(&at, Nt);
    r->logits = take(&at, Nt * d->tgt_vocab);
    r->d_a = take(&at, M * D), r->d_c = take(&at, M * D), r->d_n = take(&at, M * D);
    r->d_memory = take(&at, Ns * D), r->ff_work = take(&at, M * F);
    r->pe = take(&at, (long)(S > T ? S : T) * D);
    posenc_add(r->pe, S > T ? S : T, 1, (int)D, 0, 0.0f);  /* the encodings alone, once */
    r->mem = mem;
    int *ip = r->ints = xcalloc(2 * (long)B + Ns + 2 * Nt, sizeof(int));
    r->start_s = ip, r->start_t = ip + B, r->src = ip + 2 * B, r->tgt_in = r->src + Ns, r->tgt_out = r->tgt_in + Nt;
    if (!train) return r;
    /* Dropout masks, a byte per entry: residual (N, D) per sub-layer, the feed-forward
     * blocks' (N, ff), attention's (B, heads, Tq, Tk), the two embeddings'. */
    long H = d->heads, bytes = (long)d->enc_layers * (2 * Ns * D + Ns * F + B * H * S * S) +
                               (long)d->dec_layers * (3 * Nt * D + Nt * F + B * H * T * (T + S)) + (Ns + Nt) * D;
    unsigned char *bat = r->masks = xcalloc(bytes, 1);
    for (int l = 0; l < d->enc_layers; l++)
        for (int k = 0; k < 2; k++) {
            SubRun *u = &r->enc[l][k];
            u->b.rkeep = take_bytes(&bat, Ns * D);
            if (k == 0) u->b.akeep = take_bytes(&bat, B * H * S * S);
            else u->b.fkeep = take_bytes(&bat, Ns * F);
        }
    for (int l = 0; l < d->dec_layers; l++)
        for (int k = 0; k < 3; k++) {
            SubRun *u = &r->dec[l][k];
            u->b.rkeep = take_bytes(&bat, Nt * D);
            if (k == 0) u->b.akeep = take_bytes(&bat, B * H * T * T);
            else if (k == 1) u->b.akeep = take_bytes(&bat, B * H * T * S);
            else u->b.fkeep = take_bytes(&bat, Nt * F);
        }
    r->ekeep[0] = take_bytes(&bat, Ns * D), r->ekeep[1] = take_bytes(&bat, Nt * D);
    return r;
}

void trun_free(TRun *r)
{
    if (!r) return;
    free(r->mem);
    free(r->masks);
    free(r->ints);
    free(r);
}

/* ---------------------------------------------------------------- attention over packed rows */

/* The encoder's self-attention, the decoder's causal self-attention and its
 * cross-attention over the memory, each over the packed rows of its sentences, with
 * attention dropout; what they keep goes into the sub-layer's u->ws. ps->ctx is the
 * TRun. */
typedef struct {
    int causal, Tq, Tk;
    const int *len_q, *len_k, *start_q, *start_k;
    int rows_q, rows_k;
} PackedAttention;

static PackedAttention packed_attention(const TRun *r, int decoder, SubKind kind)
{
    if (!decoder) return (PackedAttention){0, r->S, r->S, r->src_len, r->src_len, r->start_s, r->start_s, r->Ns, r->Ns};
    if (kind == SUB_SELF)
        return (PackedAttention){1, r->T, r->T, r->tgt_len, r->tgt_len, r->start_t, r->start_t, r->Nt, r->Nt};
    return (PackedAttention){0, r->T, r->S, r->tgt_len, r->src_len, r->start_t, r->start_s, r->Nt, r->Ns};
}

static void attend_packed(const TPass *ps, int l, int decoder, SubKind kind, const AttWeights *w, const float *in,
                          float *y, SubBufs *u)
{
    const TRun *r = ps->ctx;
    PackedAttention a = packed_attention(r, decoder, kind);
    MhaConfig cfg = {.d = ps->d->embed, .heads = ps->d->heads, .causal = a.causal, .dropout = ps->p_att};
    MhaParams att = pass_att_params(ps, l, kind, w);
    mha_workspace_init(&u->ws, &cfg, u->ws_mem, a.Tq, a.Tk, r->B);
    if (ps->p_att > 0)  /* attention dropout */
        draw_keep(u->akeep, (long)r->B * ps->d->heads * a.Tq * a.Tk, ps->p_att, ps->rng);
    mha_forward_packed(&cfg, &att, in, kind == SUB_SELF ? in : r->memory, a.start_q, a.len_q, a.rows_q, a.start_k,
                       a.len_k, a.rows_k, ps->p_att > 0 ? u->akeep : NULL, y, &u->ws, a.Tq, a.Tk, r->B);
}

static void attend_backward_packed(const TPass *ps, int l, int decoder, SubKind kind, const AttWeights *w,
                                   AttWeights *gw, const float *in, const float *dy, float *d_in, SubBufs *u)
{
    const TRun *r = ps->ctx;
    PackedAttention a = packed_attention(r, decoder, kind);
    MhaConfig cfg = {.d = ps->d->embed, .heads = ps->d->heads, .causal = a.causal, .dropout = ps->p_att};
    MhaParams att = pass_att_params(ps, l, kind, w);
    MhaGrads ag = {gw->wq, gw->bq, gw->wk, gw->bk, gw->wv, gw->bv, gw->wo, gw->bo};
    int self = kind == SUB_SELF;
    memset(d_in, 0, sizeof(float) * a.rows_q * ps->d->embed);
    mha_backward_packed(&cfg, &att, &ag, dy, in, self ? in : r->memory, a.start_q, a.len_q, a.rows_q, a.start_k,
                        a.len_k, a.rows_k, ps->p_att > 0 ? u->akeep : NULL, d_in, self ? d_in : r->d_memory, &u->ws, a.Tq,
                        a.Tk, r->B);
}

static void enc_attend(const TPass *ps, int l, SubKind kind, const AttWeights *w, const float *in, float *y, SubBufs *u)
{
    attend_packed(ps, l, 0, kind, w, in, y, u);
}

static void dec_attend(const TPass *ps, int l, SubKind kind, const AttWeights *w, const float *in, float *y, SubBufs *u)
{
    attend_packed(ps, l, 1, kind, w, in, y, u);
}

static void enc_attend_backward(const TPass *ps, int l, SubKind kind, const AttWeights *w, AttWeights *gw,
                                const float *in, const float *dy, float *d_in, SubBufs *u)
{
    attend_backward_packed(ps, l, 0, kind, w, gw, in, dy, d_in, u);
}

static void dec_attend_backward(const TPass *ps, int l, SubKind kind, const AttWeights *w, AttWeights *gw,
                                const float *in, const float *dy, float *d_in, SubBufs *u)
{
    attend_backward_packed(ps, l, 1, kind, w, gw, in, dy, d_in, u);
}

/* The encoder's (decoder 0) or the decoder's pass over r. */
static TPass train_pass(const ModelDims *d, TRun *r, int decoder)
{
    return (TPass){.d = d, .rows = decoder ? r->Nt : r->Ns, .p = r->p, .p_att = r->p_att, .p_act = r->p_act,
                   .rng = r->rng, .attend = decoder ? dec_attend : enc_attend,
                   .attend_backward = decoder ? dec_attend_backward : enc_attend_backward, .ctx = r,
                   .prep = !r->packs ? NULL : decoder ? r->packs->dec : r->packs->enc,
                   .d_n = r->d_n, .d_sum = r->d_c, .ff_work = r->ff_work};
}

/* ---------------------------------------------------------------- forward */

/* x (rows, D): the rows' embeddings times sqrt(D) plus their positions' encodings (pe). */
static void embed(float *x, const float *emb, const int *ids, const int *start, const int *len, int B, const float *pe,
                  int D)
{
    float scale = sqrtf((float)D);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++) {
            float *v = x + (long)(start[b] + t) * D;
            const float *e = emb + (long)ids[start[b] + t] * D, *q = pe + (long)t * D;
            for (int k = 0; k < D; k++)
                v[k] = scale * e[k] + q[k];
        }
}

/* Packs the time-major (T, B) ids of the real positions (t < len[b]) into out, sentence
 * after sentence, with start[b] the row of sentence b's first; returns the rows. */
static int pack(int *out, int *start, const int *ids, const int *len, int T, int B)
{
    int n = 0;
    for (int b = 0; b < B; b++) {
        start[b] = n;
        for (int t = 0; t < len[b] && t < T; t++)
            out[n++] = ids[(long)t * B + b];
    }
    return n;
}

/* Encoder layer l's streams in r: its input, the stream between its sub-layers, and its
 * output (the next layer's input, or enc_out after the last); the decoder's likewise. */
static SubBufs *const *enc_bufs(TRun *r, int l, SubBufs *u[2])
{
    u[0] = &r->enc[l][0].b, u[1] = &r->enc[l][1].b;
    return u;
}

static SubBufs *const *dec_bufs(TRun *r, int l, SubBufs *u[3])
{
    u[0] = &r->dec[l][0].b, u[1] = &r->dec[l][1].b, u[2] = &r->dec[l][2].b;
    return u;
}

float *transformer_forward_train(const Model *m, TRun *r, const int *src, const int *src_len, int S,
                                 const int *tgt_in, const int *tgt_len, int T, int B, TDropout drop, Rng *rng,
                                 const TPrepared *packs)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int D = d->embed, V = d->tgt_vocab, pre = d->norm == NORM_PRE;
    r->S = S, r->T = T, r->B = B, r->src_len = src_len, r->tgt_len = tgt_len;
    long Ns = r->Ns = pack(r->src, r->start_s, src, src_len, S, B);
    long Nt = r->Nt = pack(r->tgt_in, r->start_t, tgt_in, tgt_len, T, B);
    int masks = r->masks != NULL;  /* an inference TRun has no room for them */
    r->p = masks ? drop.residual : 0.0f, r->p_att = masks ? drop.attention : 0.0f;
    r->p_act = masks ? drop.activation : 0.0f, r->rng = rng, r->packs = packs;
    SubBufs *u[3];
    /* The encoder: embeddings (with dropout), the layers, the final layer norm. */
    TPass enc = train_pass(d, r, 0);
    int L = d->enc_layers;
    embed(r->enc[0][0].stream, p->src_emb, r->src, r->start_s, src_len, B, r->pe, D);
    if (r->p > 0) dropout(r->enc[0][0].stream, r->ekeep[0], Ns * D, r->p, rng);  /* embedding dropout */
    for (int l = 0; l < L; l++)
        encoder_layer_forward(&enc, l, &p->tenc[l], r->enc[l][0].stream, r->enc[l][1].stream,
                              l + 1 < L ? r->enc[l + 1][0].stream : r->enc_out, enc_bufs(r, l, u));
    if (pre) layernorm_forward(r->memory, r->fn_mean[0], r->fn_rstd[0], r->enc_out, p->tenc_ln.g, p->tenc_ln.b,
                               (int)Ns, D);
    else memcpy(r->memory, r->enc_out, sizeof(float) * Ns * D);
    /* The decoder likewise, then the output layer. */
    TPass dec = train_pass(d, r, 1);
    L = d->dec_layers;
    embed(r->dec[0][0].stream, p->tgt_emb, r->tgt_in, r->start_t, tgt_len, B, r->pe, D);
    if (r->p > 0) dropout(r->dec[0][0].stream, r->ekeep[1], Nt * D, r->p, rng);  /* embedding dropout */
    for (int l = 0; l < L; l++)
        decoder_layer_forward(&dec, l, &p->tdec[l], r->dec[l][0].stream, r->dec[l][1].stream, r->dec[l][2].stream,
                              l + 1 < L ? r->dec[l + 1][0].stream : r->dec_out, dec_bufs(r, l, u));
    if (pre) layernorm_forward(r->dec_fn, r->fn_mean[1], r->fn_rstd[1], r->dec_out, p->tdec_ln.g, p->tdec_ln.b,
                               (int)Nt, D);
    else memcpy(r->dec_fn, r->dec_out, sizeof(float) * Nt * D);
    prepared_matmul_bias(r->logits, V, r->dec_fn, D, p->out_w, D, packs ? &packs->out : NULL, p->out_b, (int)Nt, V, D);
    return r->logits;
}

int trun_fits(const TRun *r, int S, int T, int B) { return S <= r->cap_S && T <= r->cap_T && B <= r->cap_B; }

const int *trun_targets(TRun *r, const int *tgt_out, long *rows)
{
    pack(r->tgt_out, r->start_t, tgt_out, r->tgt_len, r->T, r->B);
    *rows = r->Nt;
    return r->tgt_out;
}

/* ---------------------------------------------------------------- backward */

static void embed_backward(float *g_emb, const float *dx, const int *ids, long N, int D)
{
    float scale = sqrtf((float)D);
    for (long r = 0; r < N; r++) {
        float *g = g_emb + (long)ids[r] * D;
        for (int k = 0; k < D; k++)
            g[k] += scale * dx[r * D + k];
    }
}

void transformer_backward(Model *m, TRun *r, DeferredGrads *defer)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int D = d->embed, V = d->tgt_vocab, pre = d->norm == NORM_PRE;
    long Ns = r->Ns, Nt = r->Nt;
    float *ds = r->d_a;
    SubBufs *u[3];
    /* The output layer: logits = dec_fn W^T + b. */
    const float *dlogits = r->logits;  /* the caller's loss turned them into dLoss/dlogits */
    prepared_matmul_nn(ds, D, dlogits, V, p->out_w, D, r->packs ? &r->packs->out : NULL, 0, (int)Nt, V, D);
    model_output_grads(defer, g->out_w, g->out_b, dlogits, r->dec_fn, (int)Nt, V, D);
    /* The decoder, last layer first; its cross-attention adds into d_memory. */
    TPass dec = train_pass(d, r, 1);
    if (pre) layernorm_backward(ds, g->tdec_ln.g, g->tdec_ln.b, ds, r->dec_out, r->fn_mean[1], r->fn_rstd[1],
                                p->tdec_ln.g, (int)Nt, D);
    memset(r->d_memory, 0, sizeof(float) * Ns * D);
    for (int l = d->dec_layers - 1; l >= 0; l--)
        decoder_layer_backward(&dec, l, &p->tdec[l], &g->tdec[l], r->dec[l][0].stream, r->dec[l][1].stream,
                               r->dec[l][2].stream, ds, dec_bufs(r, l, u));
    if (r->p > 0) dropout_backward(ds, r->ekeep[1], Nt * D, r->p);
    embed_backward(g->tgt_emb, ds, r->tgt_in, Nt, D);
    /* The encoder, from dLoss/d(memory). */
    TPass enc = train_pass(d, r, 0);
    memcpy(ds, r->d_memory, sizeof(float) * Ns * D);
    if (pre) layernorm_backward(ds, g->tenc_ln.g, g->tenc_ln.b, ds, r->enc_out, r->fn_mean[0], r->fn_rstd[0],
                                p->tenc_ln.g, (int)Ns, D);
    for (int l = d->enc_layers - 1; l >= 0; l--)
        encoder_layer_backward(&enc, l, &p->tenc[l], &g->tenc[l], r->enc[l][0].stream, r->enc[l][1].stream, ds,
                               enc_bufs(r, l, u));
    if (r->p > 0) dropout_backward(ds, r->ekeep[0], Ns * D, r->p);
    embed_backward(g->src_emb, ds, r->src, Ns, D);
}
