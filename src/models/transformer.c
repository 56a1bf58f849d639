/* transformer.c — the Transformer's passes; see transformer.h. */
#include "models/transformer.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers/ffn.h"       /* defines: ffn_forward, FfnParams */
#include "layers/layernorm.h" /* defines: layernorm_forward */
#include "kernels/linalg.h"    /* defines: matmul_bias, linear_grads */
#include "layers/mha.h"       /* defines: mha_forward, MhaConfig, MhaParams, MhaWorkspace */
#include "layers/posenc.h"    /* defines: posenc_add */
#include "base/util.h"      /* defines: xcalloc */
#include "text/vocab.h"     /* defines: VOCAB_SOS */

static MhaParams att_params(const AttWeights *w)
{
    return (MhaParams){w->wq, w->bq, w->wk, w->bk, w->wv, w->bv, w->wo, w->bo};
}

static FfnParams ff_params(const FfWeights *w) { return (FfnParams){w->w1, w->b1, w->w2, w->b2}; }

/* The encoder's scratch: a normalised copy, a sub-layer's output, layer norm statistics,
 * the feed-forward block's two (N, ff) tensors and the attention workspace. */
long transformer_encode_floats(const ModelDims *d, int S, int B)
{
    long N = (long)S * B;
    MhaConfig cfg = {.d = d->embed, .heads = d->heads};
    return 2 * N * d->embed + 2 * N + 2 * N * d->ff + mha_workspace_floats(&cfg, S, S, B);
}

/* P (B, heads, T, S) attention probabilities -> out (B, T, S), their mean over heads. */
static void average_heads(const float *P, int B, int heads, int T, int S, float *out)
{
    long n = (long)T * S;
    for (int b = 0; b < B; b++) {
        float *o = out + b * n;
        memset(o, 0, sizeof(float) * n);
        for (int hd = 0; hd < heads; hd++) {
            const float *q = P + ((long)b * heads + hd) * n;
            for (long i = 0; i < n; i++)
                o[i] += q[i];
        }
        for (long i = 0; i < n; i++)
            o[i] /= (float)heads;
    }
}

static void add_into(float *x, const float *y, long n)
{
    for (long i = 0; i < n; i++)
        x[i] += y[i];
}

void transformer_encode(const Model *m, const int *src, const int *len, int S, int B, float *work, float *x)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int D = d->embed;
    long N = (long)S * B, n = N * D;
    float *h = work, *y = h + n, *mean = y + n, *rstd = mean + N, *fh = rstd + N, *fa = fh + N * d->ff;
    MhaConfig cfg = {.d = D, .heads = d->heads};
    MhaWorkspace ws;
    mha_workspace_init(&ws, &cfg, fa + N * d->ff, S, S, B);
    FfnActivation act = d->activation == ACT_GELU ? FFN_GELU : FFN_RELU;
    for (long r = 0; r < N; r++)
        memcpy(x + r * D, p->src_emb + (long)src[r] * D, sizeof(float) * D);
    posenc_add(x, S, B, D, 0, sqrtf((float)D));
    for (int l = 0; l < d->enc_layers; l++) {
        const TLayer *w = &p->tenc[l];
        MhaParams att = att_params(&w->self);
        FfnParams ff = ff_params(&w->ff);
        if (d->norm == NORM_PRE) {
            layernorm_forward(h, mean, rstd, x, w->ln1.g, w->ln1.b, (int)N, D);
            mha_forward(&cfg, &att, h, h, len, len, NULL, y, &ws, S, S, B);
            add_into(x, y, n);
            layernorm_forward(h, mean, rstd, x, w->ln2.g, w->ln2.b, (int)N, D);
            ffn_forward(&ff, act, h, fh, fa, y, NULL, 0.0f, (int)N, D, d->ff);
            add_into(x, y, n);
        } else {
            mha_forward(&cfg, &att, x, x, len, len, NULL, y, &ws, S, S, B);
            add_into(x, y, n);
            layernorm_forward(x, mean, rstd, x, w->ln1.g, w->ln1.b, (int)N, D);
            ffn_forward(&ff, act, x, fh, fa, y, NULL, 0.0f, (int)N, D, d->ff);
            add_into(x, y, n);
            layernorm_forward(x, mean, rstd, x, w->ln2.g, w->ln2.b, (int)N, D);
        }
    }
    if (d->norm == NORM_PRE) layernorm_forward(x, mean, rstd, x, p->tenc_ln.g, p->tenc_ln.b, (int)N, D);
}

long transformer_decode_floats(const ModelDims *d, int S, int T, int B)
{
    long N = (long)T * B;
    MhaConfig self = {.d = d->embed, .heads = d->heads, .causal = 1}, cross = {.d = d->embed, .heads = d->heads};
    return 3 * N * d->embed + 2 * N + 2 * N * d->ff + mha_workspace_floats(&self, T, T, B) +
           mha_workspace_floats(&cross, T, S, B);
}

void transformer_decode(const Model *m, const float *memory, const int *src_len, int S, const int *tgt_in,
                        const int *tgt_len, int T, int B, float *work, float *logits, const TCrossOut *cross_out)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int D = d->embed, pre = d->norm == NORM_PRE;
    long N = (long)T * B, n = N * D;
    float *x = work, *h = x + n, *y = h + n, *mean = y + n, *rstd = mean + N, *fh = rstd + N, *fa = fh + N * d->ff;
    MhaConfig self_cfg = {.d = D, .heads = d->heads, .causal = 1}, cross_cfg = {.d = D, .heads = d->heads};
    MhaWorkspace self_ws, cross_ws;
    float *ws_mem = fa + N * d->ff;
    mha_workspace_init(&self_ws, &self_cfg, ws_mem, T, T, B);
    mha_workspace_init(&cross_ws, &cross_cfg, ws_mem + mha_workspace_floats(&self_cfg, T, T, B), T, S, B);
    FfnActivation act = d->activation == ACT_GELU ? FFN_GELU : FFN_RELU;
    for (long r = 0; r < N; r++)
        memcpy(x + r * D, p->tgt_emb + (long)tgt_in[r] * D, sizeof(float) * D);
    posenc_add(x, T, B, D, 0, sqrtf((float)D));
    for (int l = 0; l < d->dec_layers; l++) {
        const TLayer *w = &p->tdec[l];
        MhaParams self = att_params(&w->self), cross = att_params(&w->cross);
        FfnParams ff = ff_params(&w->ff);
        /* Each sub-layer: pre-norm reads LN(x) and adds to x; post-norm reads x, adds,
         * then normalises x. */
        const float *in = x;
        if (pre) in = (layernorm_forward(h, mean, rstd, x, w->ln1.g, w->ln1.b, (int)N, D), h);
        mha_forward(&self_cfg, &self, in, in, tgt_len, tgt_len, NULL, y, &self_ws, T, T, B);
        add_into(x, y, n);
        if (!pre) layernorm_forward(x, mean, rstd, x, w->ln1.g, w->ln1.b, (int)N, D);
        if (pre) in = (layernorm_forward(h, mean, rstd, x, w->ln2.g, w->ln2.b, (int)N, D), h);
        mha_forward(&cross_cfg, &cross, in, memory, tgt_len, src_len, NULL, y, &cross_ws, T, S, B);
        if (cross_out && l == (cross_out->layer >= 1 ? cross_out->layer - 1 : d->dec_layers - 1)) {
            if (cross_out->per_head) memcpy(cross_out->attn, cross_ws.P, sizeof(float) * B * d->heads * T * S);
            else average_heads(cross_ws.P, B, d->heads, T, S, cross_out->attn);
        }
        add_into(x, y, n);
        if (!pre) layernorm_forward(x, mean, rstd, x, w->ln2.g, w->ln2.b, (int)N, D);
        if (pre) in = (layernorm_forward(h, mean, rstd, x, w->ln3.g, w->ln3.b, (int)N, D), h);
        ffn_forward(&ff, act, in, fh, fa, y, NULL, 0.0f, (int)N, D, d->ff);
        add_into(x, y, n);
        if (!pre) layernorm_forward(x, mean, rstd, x, w->ln3.g, w->ln3.b, (int)N, D);
    }
    if (pre) layernorm_forward(x, mean, rstd, x, p->tdec_ln.g, p->tdec_ln.b, (int)N, D);
    matmul_bias(logits, d->tgt_vocab, x, D, p->out_w, D, p->out_b, (int)N, d->tgt_vocab, D);
}

void transformer_attention_heads(const Model *m, const int *src, int S, const int *words, int n, int layer,
                                 float *attn)
{
    const ModelDims *d = &m->dims;
    int *tgt_in = xmalloc(sizeof(int) * n), len[2] = {S, n};
    tgt_in[0] = VOCAB_SOS;
    for (int t = 1; t < n; t++)
        tgt_in[t] = words[t - 1];
    long enc = transformer_encode_floats(d, S, 1), dec = transformer_decode_floats(d, S, n, 1);
    float *memory = xmalloc(sizeof(float) * ((long)S * d->embed + (enc > dec ? enc : dec) + (long)n * d->tgt_vocab));
    float *work = memory + (long)S * d->embed, *logits = work + (enc > dec ? enc : dec);
    transformer_encode(m, src, &len[0], S, 1, work, memory);
    TCrossOut want = {.layer = layer, .per_head = 1, .attn = attn};
    transformer_decode(m, memory, &len[0], S, tgt_in, &len[1], n, 1, work, logits, &want);
    free(memory);
    free(tgt_in);
}

/* ---------------------------------------------------------------- training */

/* One sub-layer (attention or feed-forward) around its residual connection, and what
 * its backward pass reads:
 *   pre:  n = LN(stream); y = f(n);      next = stream + y
 *   post: y = f(stream);  sum = stream + y; next = LN(sum)
 * stream is the residual stream entering it (the previous sub-layer's next). */
typedef struct {
    float *stream, *n, *sum, *mean, *rstd;   /* (N, D), (N, D), (N, D), (N), (N) */
    MhaWorkspace ws;                         /* attention sub-layers */
    float *ws_mem;
    float *fh, *fa;                          /* the feed-forward sub-layer: (N, ff) */
    unsigned char *rkeep;                    /* training: residual dropout's keep mask (N, D) */
    unsigned char *akeep;                    /* attention dropout's (B, heads, Tq, Tk) */
    unsigned char *fkeep;                    /* the feed-forward block's (N, ff) */
} SubRun;

struct TRun {
    float *mem;                   /* the one allocation the floats below point into */
    unsigned char *masks;         /* and the dropout masks (training runs only) */
    float p, p_att, p_act;        /* this pass's dropout probabilities (TDropout; 0: none) */
    Rng *rng;                     /* draws the masks */
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

/* A (n) keep mask for dropout probability p: each entry 1 with probability 1 - p. */
static void draw_keep(unsigned char *keep, long n, float p, Rng *rng)
{
    uint32_t cut = (uint32_t)(p * 4294967296.0);
    for (long i = 0; i < n; i++)
        keep[i] = rng_next(rng) >= cut;
}

/* Draws keep (n) and applies it to x: inverted dropout, x * keep / (1 - p). */
static void dropout(float *x, unsigned char *keep, long n, float p, Rng *rng)
{
    float scale = 1.0f / (1.0f - p);
    draw_keep(keep, n, p, rng);
    for (long i = 0; i < n; i++)
        x[i] = keep[i] ? x[i] * scale : 0.0f;
}

/* The backward of dropout: dx = dy * keep / (1 - p), in place. */
static void dropout_backward(float *dx, const unsigned char *keep, long n, float p)
{
    float scale = 1.0f / (1.0f - p);
    for (long i = 0; i < n; i++)
        dx[i] = keep[i] ? dx[i] * scale : 0.0f;
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
            u->stream = take(&at, Ns * D), u->n = take(&at, Ns * D), u->sum = take(&at, Ns * D);
            u->mean = take(&at, Ns), u->rstd = take(&at, Ns);
            if (k == 0) u->ws_mem = take(&at, wss);
            else u->fh = take(&at, Ns * F), u->fa = take(&at, Ns * F);
        }
    for (int l = 0; l < d->dec_layers; l++)
        for (int k = 0; k < 3; k++) {
            SubRun *u = &r->dec[l][k];
            u->stream = take(&at, Nt * D), u->n = take(&at, Nt * D), u->sum = take(&at, Nt * D);
            u->mean = take(&at, Nt), u->rstd = take(&at, Nt);
            if (k == 0) u->ws_mem = take(&at, wst);
            else if (k == 1) u->ws_mem = take(&at, wsx);
            else u->fh = take(&at, Nt * F), u->fa = take(&at, Nt * F);
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
            u->rkeep = take_bytes(&bat, Ns * D);
            if (k == 0) u->akeep = take_bytes(&bat, B * H * S * S);
            else u->fkeep = take_bytes(&bat, Ns * F);
        }
    for (int l = 0; l < d->dec_layers; l++)
        for (int k = 0; k < 3; k++) {
            SubRun *u = &r->dec[l][k];
            u->rkeep = take_bytes(&bat, Nt * D);
            if (k == 0) u->akeep = take_bytes(&bat, B * H * T * T);
            else if (k == 1) u->akeep = take_bytes(&bat, B * H * T * S);
            else u->fkeep = take_bytes(&bat, Nt * F);
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

typedef enum { SUB_SELF, SUB_CROSS, SUB_FF } SubKind;

/* Where a sub-layer runs: its layer's weights (and gradients), its kind and layer norm
 * (0: ln1, 1: ln2, 2: ln3), the lengths and, for cross-attention, the memory. */
typedef struct {
    const ModelDims *d;
    const TLayer *w;
    TLayer *g;            /* backward only */
    SubKind kind;
    int causal;           /* self-attention of the decoder */
    int ln, Tq, Tk, B;
    float p, p_att, p_act;  /* dropout probabilities of this pass: the sub-layer's output,
                               the attention probabilities, the feed-forward activation */
    Rng *rng;
    const int *len_q, *len_k;      /* (B) */
    const int *start_q, *start_k;  /* (B) the packed rows' starts */
    int rows_q, rows_k;
    const float *memory;
    float *d_memory;      /* backward of cross-attention: += */
} Sub;

static const LnWeights *sub_ln(const TLayer *w, int k) { return k == 0 ? &w->ln1 : k == 1 ? &w->ln2 : &w->ln3; }
static LnWeights *sub_ln_grad(TLayer *g, int k) { return k == 0 ? &g->ln1 : k == 1 ? &g->ln2 : &g->ln3; }
static MhaGrads att_grads(AttWeights *g) { return (MhaGrads){g->wq, g->bq, g->wk, g->bk, g->wv, g->bv, g->wo, g->bo}; }

static MhaConfig sub_cfg(const Sub *c)
{
    return (MhaConfig){.d = c->d->embed, .heads = c->d->heads, .causal = c->causal, .dropout = c->p_att};
}

/* f(in) into y (N, D): the sub-layer's own function. */
static void sub_f(const Sub *c, SubRun *u, const float *in, float *y)
{
    int N = c->rows_q, D = c->d->embed;
    MhaConfig cfg = sub_cfg(c);
    if (c->kind == SUB_FF) {
        FfnParams ff = ff_params(&c->w->ff);
        if (c->p_act > 0) draw_keep(u->fkeep, (long)N * c->d->ff, c->p_act, c->rng);
        ffn_forward(&ff, c->d->activation == ACT_GELU ? FFN_GELU : FFN_RELU, in, u->fh, u->fa, y,
                    c->p_act > 0 ? u->fkeep : NULL, c->p_act, N, D, c->d->ff);
        return;
    }
    const AttWeights *aw = c->kind == SUB_SELF ? &c->w->self : &c->w->cross;
    MhaParams att = att_params(aw);
    mha_workspace_init(&u->ws, &cfg, u->ws_mem, c->Tq, c->Tk, c->B);
    if (c->p_att > 0) draw_keep(u->akeep, (long)c->B * c->d->heads * c->Tq * c->Tk, c->p_att, c->rng);
    mha_forward_packed(&cfg, &att, in, c->kind == SUB_SELF ? in : c->memory, c->start_q, c->len_q, c->rows_q,
                       c->start_k, c->len_k, c->rows_k, c->p_att > 0 ? u->akeep : NULL, y, &u->ws, c->Tq, c->Tk, c->B);
}

/* u->stream holds the input; writes next (N, D). */
static void sub_forward(const Sub *c, SubRun *u, float *next)
{
    int N = c->rows_q, D = c->d->embed;
    long n = (long)N * D;
    const LnWeights *ln = sub_ln(c->w, c->ln);
    if (c->d->norm == NORM_PRE) {
        layernorm_forward(u->n, u->mean, u->rstd, u->stream, ln->g, ln->b, N, D);
        sub_f(c, u, u->n, next);
        if (c->p > 0) dropout(next, u->rkeep, n, c->p, c->rng);
        add_into(next, u->stream, n);
    } else {
        sub_f(c, u, u->stream, u->sum);
        if (c->p > 0) dropout(u->sum, u->rkeep, n, c->p, c->rng);
        add_into(u->sum, u->stream, n);
        layernorm_forward(next, u->mean, u->rstd, u->sum, ln->g, ln->b, N, D);
    }
}

/* The gradient with respect to f's input, dn (N, D) (written), from dy. */
static void sub_f_backward(const Sub *c, SubRun *u, const float *in, const float *dy, float *dn, float *ff_work)
{
    int N = c->rows_q, D = c->d->embed;
    if (c->kind == SUB_FF) {
        FfnParams ff = ff_params(&c->w->ff);
        FfnGrads fg = {c->g->ff.w1, c->g->ff.b1, c->g->ff.w2, c->g->ff.b2};
        ffn_backward(&ff, c->d->activation == ACT_GELU ? FFN_GELU : FFN_RELU, &fg, dy, in, u->fh, u->fa,
                     c->p_act > 0 ? u->fkeep : NULL, c->p_act, dn, ff_work, N, D, c->d->ff);
        return;
    }
    MhaConfig cfg = sub_cfg(c);
    int self = c->kind == SUB_SELF;
    MhaParams att = att_params(self ? &c->w->self : &c->w->cross);
    MhaGrads ag = att_grads(self ? &c->g->self : &c->g->cross);
    memset(dn, 0, sizeof(float) * N * D);
    mha_backward_packed(&cfg, &att, &ag, dy, in, self ? in : c->memory, c->start_q, c->len_q, c->rows_q, c->start_k,
                        c->len_k, c->rows_k, c->p_att > 0 ? u->akeep : NULL, dn, self ? dn : c->d_memory, &u->ws, c->Tq,
                        c->Tk, c->B);
}

/* ds (N, D): in, dL/d next; out, dL/d stream. dn, dsum, ff_work: scratch. */
static void sub_backward(const Sub *c, SubRun *u, float *ds, float *dn, float *dsum, float *ff_work)
{
    int N = c->rows_q, D = c->d->embed;
    long n = (long)N * D;
    const LnWeights *ln = sub_ln(c->w, c->ln);
    LnWeights *lg = sub_ln_grad(c->g, c->ln);
    if (c->d->norm == NORM_PRE) {
        const float *dy = ds;
        if (c->p > 0) {
            memcpy(dsum, ds, sizeof(float) * n);
            dropout_backward(dsum, u->rkeep, n, c->p);
            dy = dsum;
        }
        sub_f_backward(c, u, u->n, dy, dn, ff_work);
        layernorm_backward(dn, lg->g, lg->b, dn, u->stream, u->mean, u->rstd, ln->g, N, D);
        add_into(ds, dn, n);
    } else {
        layernorm_backward(dsum, lg->g, lg->b, ds, u->sum, u->mean, u->rstd, ln->g, N, D);
        memcpy(ds, dsum, sizeof(float) * n);
        if (c->p > 0) dropout_backward(dsum, u->rkeep, n, c->p);
        sub_f_backward(c, u, u->stream, dsum, dn, ff_work);
        add_into(ds, dn, n);
    }
}

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

static Sub enc_sub(const Model *m, TRun *r, int l, int k)
{
    return (Sub){.d = &m->dims, .w = &m->params.tenc[l], .g = (TLayer *)&m->grads.tenc[l], .kind = k ? SUB_FF : SUB_SELF,
                 .ln = k, .p = r->p, .p_att = r->p_att, .p_act = r->p_act, .rng = r->rng, .Tq = r->S, .Tk = r->S,
                 .B = r->B, .len_q = r->src_len, .len_k = r->src_len,
                 .start_q = r->start_s, .start_k = r->start_s, .rows_q = r->Ns, .rows_k = r->Ns};
}

static Sub dec_sub(const Model *m, TRun *r, int l, int k)
{
    SubKind kind = k == 0 ? SUB_SELF : k == 1 ? SUB_CROSS : SUB_FF;
    return (Sub){.d = &m->dims, .w = &m->params.tdec[l], .g = (TLayer *)&m->grads.tdec[l], .kind = kind,
                 .causal = kind == SUB_SELF, .ln = k, .p = r->p, .p_att = r->p_att, .p_act = r->p_act, .rng = r->rng,
                 .Tq = r->T, .Tk = kind == SUB_CROSS ? r->S : r->T, .B = r->B, .len_q = r->tgt_len,
                 .len_k = kind == SUB_CROSS ? r->src_len : r->tgt_len, .start_q = r->start_t,
                 .start_k = kind == SUB_CROSS ? r->start_s : r->start_t, .rows_q = r->Nt,
                 .rows_k = kind == SUB_CROSS ? r->Ns : r->Nt, .memory = r->memory, .d_memory = r->d_memory};
}

float *transformer_forward_train(const Model *m, TRun *r, const int *src, const int *src_len, int S,
                                 const int *tgt_in, const int *tgt_len, int T, int B, TDropout drop, Rng *rng)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int D = d->embed, V = d->tgt_vocab, pre = d->norm == NORM_PRE;
    r->S = S, r->T = T, r->B = B, r->src_len = src_len, r->tgt_len = tgt_len;
    long Ns = r->Ns = pack(r->src, r->start_s, src, src_len, S, B);
    long Nt = r->Nt = pack(r->tgt_in, r->start_t, tgt_in, tgt_len, T, B);
    int masks = r->masks != NULL;  /* an inference TRun has no room for them */
    r->p = masks ? drop.residual : 0.0f, r->p_att = masks ? drop.attention : 0.0f;
    r->p_act = masks ? drop.activation : 0.0f, r->rng = rng;
    int L = d->enc_layers;
    embed(r->enc[0][0].stream, p->src_emb, r->src, r->start_s, src_len, B, r->pe, D);
    if (r->p > 0) dropout(r->enc[0][0].stream, r->ekeep[0], Ns * D, r->p, rng);
    for (int l = 0; l < L; l++)
        for (int k = 0; k < 2; k++) {
            Sub c = enc_sub(m, r, l, k);
            float *next = k == 0 ? r->enc[l][1].stream : l + 1 < L ? r->enc[l + 1][0].stream : r->enc_out;
            sub_forward(&c, &r->enc[l][k], next);
        }
    if (pre) layernorm_forward(r->memory, r->fn_mean[0], r->fn_rstd[0], r->enc_out, p->tenc_ln.g, p->tenc_ln.b,
                               (int)Ns, D);
    else memcpy(r->memory, r->enc_out, sizeof(float) * Ns * D);
    L = d->dec_layers;
    embed(r->dec[0][0].stream, p->tgt_emb, r->tgt_in, r->start_t, tgt_len, B, r->pe, D);
    if (r->p > 0) dropout(r->dec[0][0].stream, r->ekeep[1], Nt * D, r->p, rng);
    for (int l = 0; l < L; l++)
        for (int k = 0; k < 3; k++) {
            Sub c = dec_sub(m, r, l, k);
            float *next = k < 2 ? r->dec[l][k + 1].stream : l + 1 < L ? r->dec[l + 1][0].stream : r->dec_out;
            sub_forward(&c, &r->dec[l][k], next);
        }
    if (pre) layernorm_forward(r->dec_fn, r->fn_mean[1], r->fn_rstd[1], r->dec_out, p->tdec_ln.g, p->tdec_ln.b,
                               (int)Nt, D);
    else memcpy(r->dec_fn, r->dec_out, sizeof(float) * Nt * D);
    matmul_bias(r->logits, V, r->dec_fn, D, p->out_w, D, p->out_b, (int)Nt, V, D);
    return r->logits;
}

int trun_fits(const TRun *r, int S, int T, int B) { return S <= r->cap_S && T <= r->cap_T && B <= r->cap_B; }

const int *trun_targets(TRun *r, const int *tgt_out, long *rows)
{
    pack(r->tgt_out, r->start_t, tgt_out, r->tgt_len, r->T, r->B);
    *rows = r->Nt;
    return r->tgt_out;
}

static void embed_backward(float *g_emb, const float *dx, const int *ids, long N, int D)
{
    float scale = sqrtf((float)D);
    for (long r = 0; r < N; r++) {
        float *g = g_emb + (long)ids[r] * D;
        for (int k = 0; k < D; k++)
            g[k] += scale * dx[r * D + k];
    }
}

void transformer_backward(Model *m, TRun *r)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int D = d->embed, V = d->tgt_vocab, pre = d->norm == NORM_PRE;
    long Ns = r->Ns, Nt = r->Nt;
    float *ds = r->d_a;
    /* The output layer: logits = dec_fn W^T + b. */
    const float *dlogits = r->logits;  /* the caller's loss turned them into dLoss/dlogits */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Nt, D, V, 1.0f, dlogits, V, p->out_w, D, 0.0f, ds,
                D);
    linear_grads(g->out_w, g->out_b, dlogits, V, r->dec_fn, D, (int)Nt, V, D);
    if (pre) layernorm_backward(ds, g->tdec_ln.g, g->tdec_ln.b, ds, r->dec_out, r->fn_mean[1], r->fn_rstd[1],
                                p->tdec_ln.g, (int)Nt, D);
    memset(r->d_memory, 0, sizeof(float) * Ns * D);
    for (int l = d->dec_layers - 1; l >= 0; l--)
        for (int k = 2; k >= 0; k--) {
            Sub c = dec_sub(m, r, l, k);
            sub_backward(&c, &r->dec[l][k], ds, r->d_n, r->d_c, r->ff_work);
        }
    if (r->p > 0) dropout_backward(ds, r->ekeep[1], Nt * D, r->p);
    embed_backward(g->tgt_emb, ds, r->tgt_in, Nt, D);
    memcpy(ds, r->d_memory, sizeof(float) * Ns * D);
    if (pre) layernorm_backward(ds, g->tenc_ln.g, g->tenc_ln.b, ds, r->enc_out, r->fn_mean[0], r->fn_rstd[0],
                                p->tenc_ln.g, (int)Ns, D);
    for (int l = d->enc_layers - 1; l >= 0; l--)
        for (int k = 1; k >= 0; k--) {
            Sub c = enc_sub(m, r, l, k);
            sub_backward(&c, &r->enc[l][k], ds, r->d_n, r->d_c, r->ff_work);
        }
    if (r->p > 0) dropout_backward(ds, r->ekeep[0], Ns * D, r->p);
    embed_backward(g->src_emb, ds, r->src, Ns, D);
}

/* ---------------------------------------------------------------- decoding */

struct TDecoder {
    const Model *m;
    int attn_layer;                        /* 0-based: the layer whose cross-attention is reported */
    int want_attn;
    int N, K, R, S, max_steps;             /* sources, rows per source, rows R = N*K */
    int *len;                              /* (N) source lengths */
    int *src_of;                           /* (R) the source of each row a step computes */
    int *live;                             /* (R) the rows a step computes, n_live of them */
    unsigned char *retired;                /* (R) rows the search no longer reads */
    int *changed;                          /* (R) reorder's rows with another parent */
    float *ck[MAX_LAYERS], *cv[MAX_LAYERS];  /* (S, N, D) cross-attention keys, values per source */
    float *sk[MAX_LAYERS], *sv[MAX_LAYERS];  /* (max_steps, R, D) self-attention caches */
    float *x, *h, *y, *fh, *fa, *work, *probs, *cprobs, *logits, *attn, *tmp;
    float *mem;
    long cap;
    int *ints;
    long int_cap;
};

TDecoder *tdecoder_new(const Model *m, int attn_layer)
{
    TDecoder *d = xcalloc(1, sizeof *d);
    d->m = m;
    int L = m->dims.dec_layers;
    d->attn_layer = attn_layer >= 1 && attn_layer <= L ? attn_layer - 1 : L - 1;
    return d;
}

void tdecoder_free(TDecoder *d)
{
    if (!d) return;
    free(d->mem);
    free(d->ints);
    free(d);
}

static void td_start(void *ctx, const Batch *src, int K, int max_steps, int want_attn)
{
    TDecoder *t = ctx;
    t->want_attn = want_attn;
    const ModelDims *d = &t->m->dims;
    int N = src->B, S = src->S, R = N * K, D = d->embed, H = d->heads, L = d->dec_layers;
    long RD = (long)R * D, SND = (long)S * N * D, steps = max_steps > 0 ? max_steps : 1;
    MhaConfig cfg = {.d = D, .heads = H};
    long enc = transformer_encode_floats(d, S, N) + SND;
    long need = 2 * L * SND + 2 * L * steps * RD + 3 * RD + 2 * (long)R * d->ff + mha_step_work_floats(&cfg, R) +
                (long)R * H * steps + (long)R * H * S + (long)R * d->tgt_vocab + (long)R * S + steps * RD;
    need += enc;  /* the encoder's scratch after everything else */
    if (need > t->cap) {
        free(t->mem);
        t->mem = xmalloc(sizeof(float) * need);
        t->cap = need;
    }
    long ints = N + 4 * (long)R;
    if (ints > t->int_cap) {
        free(t->ints);
        t->ints = xmalloc(sizeof(int) * ints);
        t->int_cap = ints;
    }
    t->len = t->ints, t->src_of = t->len + N, t->live = t->src_of + R, t->changed = t->live + R;
    t->retired = (unsigned char *)(t->changed + R);
    memset(t->retired, 0, R);
    t->N = N, t->K = K, t->R = R, t->S = S, t->max_steps = (int)steps;
    float *at = t->mem;
    for (int l = 0; l < L; l++)
        t->ck[l] = take(&at, SND), t->cv[l] = take(&at, SND);
    for (int l = 0; l < L; l++)
        t->sk[l] = take(&at, steps * RD), t->sv[l] = take(&at, steps * RD);
    t->x = take(&at, RD), t->h = take(&at, RD), t->y = take(&at, RD), t->tmp = take(&at, steps * RD);
    t->fh = take(&at, (long)R * d->ff), t->fa = take(&at, (long)R * d->ff);
    t->work = take(&at, mha_step_work_floats(&cfg, R));
    t->probs = take(&at, (long)R * H * steps), t->cprobs = take(&at, (long)R * H * S);
    t->logits = take(&at, (long)R * d->tgt_vocab), t->attn = take(&at, (long)R * S);
    /* The encoder once per source; the cross-attention keys and values once per source
     * and layer, shared by the source's K rows. */
    float *memory = at, *ework = memory + SND;
    for (int n = 0; n < N; n++) {
        t->len[n] = 0;
        for (int j = 0; j < S; j++)
            t->len[n] += src->mask[(long)j * N + n] != 0.0f;
        if (t->len[n] < 1) t->len[n] = 1;
    }
    transformer_encode(t->m, src->src, t->len, S, N, ework, memory);
    for (int l = 0; l < L; l++) {
        MhaParams cross = att_params(&t->m->params.tdec[l].cross);
        mha_project_kv(&cfg, &cross, memory, t->ck[l], t->cv[l], S, N);
    }
}

/* Runs the rows the search still reads (all but the retired ones), compacted: x's row i
 * is row live[i]; the logits and attention rows go back to their rows at the end. */
static const float *td_step(void *ctx, int step, const int *prev, const float **attn)
{
    TDecoder *t = ctx;
    const ModelDims *d = &t->m->dims;
    const Params *p = &t->m->params;
    int R = t->R, S = t->S, D = d->embed, H = d->heads, V = d->tgt_vocab, pre = d->norm == NORM_PRE, n = 0;
    for (int r = 0; r < R; r++)
        if (!t->retired[r]) t->live[n] = r, t->src_of[n] = r / t->K, n++;
    const int *rows = n == R ? NULL : t->live;  /* NULL: every row, in order */
    long nD = (long)n * D;
    MhaConfig cfg = {.d = D, .heads = H, .causal = 1};
    FfnActivation act = d->activation == ACT_GELU ? FFN_GELU : FFN_RELU;
    for (int i = 0; i < n; i++)
        memcpy(t->x + (long)i * D, p->tgt_emb + (long)prev[t->live[i]] * D, sizeof(float) * D);
    posenc_add(t->x, 1, n, D, step, sqrtf((float)D));
    float *mean = t->fh, *rstd = t->fh + n;  /* layer norm statistics: the ff scratch is free then */
    for (int l = 0; l < d->dec_layers; l++) {
        const TLayer *w = &p->tdec[l];
        MhaParams self = att_params(&w->self), cross = att_params(&w->cross);
        FfnParams ff = ff_params(&w->ff);
        const LnWeights *ln[3] = {&w->ln1, &w->ln2, &w->ln3};
        for (int k = 0; k < 3; k++) {
            const float *in = t->x;
            if (pre) {
                layernorm_forward(t->h, mean, rstd, t->x, ln[k]->g, ln[k]->b, n, D);
                in = t->h;
            }
            if (k == 0) {
                mha_step_forward(&cfg, &self, in, step, t->sk[l], t->sv[l], rows, R, t->y, t->probs, t->work, n);
            } else if (k == 1) {
                mha_cross_step_forward(&cfg, &cross, in, t->ck[l], t->cv[l], t->src_of, t->N, t->len, t->y, t->cprobs,
                                       t->work, S, n);
                if (t->want_attn && l == t->attn_layer) average_heads(t->cprobs, n, H, 1, S, t->attn);
            } else {
                ffn_forward(&ff, act, in, t->fh, t->fa, t->y, NULL, 0.0f, n, D, d->ff);
            }
            add_into(t->x, t->y, nD);
            if (!pre) layernorm_forward(t->x, t->h, t->h + n, t->x, ln[k]->g, ln[k]->b, n, D);
        }
    }
    if (pre) layernorm_forward(t->x, t->h, t->h + n, t->x, p->tdec_ln.g, p->tdec_ln.b, n, D);
    matmul_bias(t->logits, V, t->x, D, p->out_w, D, p->out_b, n, V, D);
    /* Back to the rows (live[i] >= i: from the last, nothing is overwritten before read). */
    for (int i = n - 1; rows && i >= 0; i--) {
        memmove(t->logits + (long)rows[i] * V, t->logits + (long)i * V, sizeof(float) * V);
        if (t->want_attn) memmove(t->attn + (long)rows[i] * S, t->attn + (long)i * S, sizeof(float) * S);
    }
    *attn = t->want_attn ? t->attn : NULL;
    return t->logits;
}

/* After step `step`, row r's caches (positions 0..step) become parent[r]'s: only the rows
 * with another parent are copied (through tmp, since a row may be another's parent). */
static void td_reorder(void *ctx, int step, const int *parent)
{
    TDecoder *t = ctx;
    int R = t->R, D = t->m->dims.embed, n = 0;
    for (int r = 0; r < R; r++)
        if (parent[r] != r && !t->retired[r]) t->changed[n++] = r;
    if (n == 0) return;
    long RD = (long)R * D;
    size_t row = sizeof(float) * D;
    for (int l = 0; l < t->m->dims.dec_layers; l++) {
        float *cache[2] = {t->sk[l], t->sv[l]};
        for (int c = 0; c < 2; c++) {
            for (int s = 0; s <= step; s++)
                for (int i = 0; i < n; i++)
                    memcpy(t->tmp + (long)s * RD + (long)i * D, cache[c] + (long)s * RD + (long)parent[t->changed[i]] * D,
                           row);
            for (int s = 0; s <= step; s++)
                for (int i = 0; i < n; i++)
                    memcpy(cache[c] + (long)s * RD + (long)t->changed[i] * D, t->tmp + (long)s * RD + (long)i * D, row);
        }
    }
}

static void td_retire(void *ctx, int row)
{
    TDecoder *t = ctx;
    t->retired[row] = 1;
}

Decoder tdecoder_decoder(TDecoder *d)
{
    return (Decoder){.ctx = d, .vocab = d->m->dims.tgt_vocab, .start = td_start, .step = td_step,
                     .reorder = td_reorder, .retire = td_retire};
}
