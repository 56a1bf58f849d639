/* transformer.c — the Transformer's passes; see transformer.h. */
#include "transformer.h"

#include <math.h>
#include <string.h>

#include "ffn.h"       /* defines: ffn_forward, FfnParams */
#include "layernorm.h" /* defines: layernorm_forward */
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
