/* transformer.c — the Transformer's passes; see transformer.h. */
#include "transformer.h"

#include <math.h>
#include <string.h>

#include "ffn.h"       /* defines: ffn_forward, FfnParams */
#include "layernorm.h" /* defines: layernorm_forward */
#include "linalg.h"    /* defines: matmul_bias */
#include "mha.h"       /* defines: mha_forward, MhaConfig, MhaParams, MhaWorkspace */
#include "posenc.h"    /* defines: posenc_add */

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
            ffn_forward(&ff, act, h, fh, fa, y, (int)N, D, d->ff);
            add_into(x, y, n);
        } else {
            mha_forward(&cfg, &att, x, x, len, len, NULL, y, &ws, S, S, B);
            add_into(x, y, n);
            layernorm_forward(x, mean, rstd, x, w->ln1.g, w->ln1.b, (int)N, D);
            ffn_forward(&ff, act, x, fh, fa, y, (int)N, D, d->ff);
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
                        const int *tgt_len, int T, int B, float *work, float *logits, float *cross_out)
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
        add_into(x, y, n);
        if (!pre) layernorm_forward(x, mean, rstd, x, w->ln2.g, w->ln2.b, (int)N, D);
        if (pre) in = (layernorm_forward(h, mean, rstd, x, w->ln3.g, w->ln3.b, (int)N, D), h);
        ffn_forward(&ff, act, in, fh, fa, y, (int)N, D, d->ff);
        add_into(x, y, n);
        if (!pre) layernorm_forward(x, mean, rstd, x, w->ln3.g, w->ln3.b, (int)N, D);
    }
    if (pre) layernorm_forward(x, mean, rstd, x, p->tdec_ln.g, p->tdec_ln.b, (int)N, D);
    matmul_bias(logits, d->tgt_vocab, x, D, p->out_w, D, p->out_b, (int)N, d->tgt_vocab, D);
    if (!cross_out) return;
    /* The last layer's cross-attention, averaged over heads: (B, T, S). */
    for (int b = 0; b < B; b++) {
        float *o = cross_out + (long)b * T * S;
        memset(o, 0, sizeof(float) * T * S);
        for (int hd = 0; hd < d->heads; hd++) {
            const float *P = mha_probs(&cross_ws, &cross_cfg, b, hd);
            for (long i = 0; i < (long)T * S; i++)
                o[i] += P[i] / (float)d->heads;
        }
    }
}
