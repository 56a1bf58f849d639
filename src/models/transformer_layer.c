/* transformer_layer.c — the Transformer's layers, once (transformer_layer.h): a
 * sub-layer around its residual connection, the encoder layer and the decoder layer,
 * forward and backward. The passes (transformer.c, transformer_train.c) say how their
 * attention runs and where their buffers are. */
#include "models/transformer_layer.h"

#include <string.h>

#include "layers/ffn.h"       /* defines: ffn_forward, ffn_backward, FfnParams, FfnGrads */
#include "layers/layernorm.h" /* defines: layernorm_forward, layernorm_backward */

/* ---------------------------------------------------------------- dropout */

void draw_keep(unsigned char *keep, long n, float p, Rng *rng)
{
    uint32_t cut = (uint32_t)(p * 4294967296.0);
    for (long i = 0; i < n; i++)
        keep[i] = rng_next(rng) >= cut;
}

void dropout(float *x, unsigned char *keep, long n, float p, Rng *rng)
{
    float scale = 1.0f / (1.0f - p);
    draw_keep(keep, n, p, rng);
    for (long i = 0; i < n; i++)
        x[i] = keep[i] ? x[i] * scale : 0.0f;
}

void dropout_backward(float *dx, const unsigned char *keep, long n, float p)
{
    float scale = 1.0f / (1.0f - p);
    for (long i = 0; i < n; i++)
        dx[i] = keep[i] ? dx[i] * scale : 0.0f;
}

/* ---------------------------------------------------------------- a sub-layer */

MhaParams att_params(const AttWeights *w)
{
    return (MhaParams){.Wq = w->wq, .bq = w->bq, .Wk = w->wk, .bk = w->bk, .Wv = w->wv, .bv = w->bv, .Wo = w->wo,
                       .bo = w->bo};
}

MhaParams att_params_prepared(const AttWeights *w, const PreparedAtt *pa)
{
    MhaParams p = att_params(w);
    if (pa) p.pq = &pa->q, p.pk = &pa->k, p.pv = &pa->v, p.po = &pa->o;
    return p;
}

MhaParams pass_att_params(const TPass *ps, int l, SubKind kind, const AttWeights *w)
{
    const PreparedAtt *pa = !ps->prep ? NULL : kind == SUB_SELF ? &ps->prep[l].self : &ps->prep[l].cross;
    return att_params_prepared(w, pa);
}

static FfnParams ff_params(const FfWeights *w, const PreparedTLayer *pl)
{
    return (FfnParams){w->w1, w->b1, w->w2, w->b2, pl ? &pl->w1 : NULL, pl ? &pl->w2 : NULL};
}

static FfnActivation activation(const ModelDims *d) { return d->activation == ACT_GELU ? FFN_GELU : FFN_RELU; }

/* out = a + b, n floats (out may be a or b). */
static void add(float *out, const float *a, const float *b, long n)
{
    for (long i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

/* f(in) into y (N, D): the sub-layer's own function, attention (the pass's) or the
 * feed-forward block. */
static void sublayer_f(const TPass *ps, int l, SubKind kind, const TLayer *w, const float *in, float *y, SubBufs *u)
{
    const ModelDims *d = ps->d;
    if (kind != SUB_FF) {
        ps->attend(ps, l, kind, kind == SUB_SELF ? &w->self : &w->cross, in, y, u);
        return;
    }
    FfnParams ff = ff_params(&w->ff, ps->prep ? &ps->prep[l] : NULL);
    if (ps->p_act > 0) draw_keep(u->fkeep, (long)ps->rows * d->ff, ps->p_act, ps->rng);  /* activation dropout */
    ffn_forward(&ff, activation(d), in, u->fh, u->fa, y, ps->p_act > 0 ? u->fkeep : NULL, ps->p_act, ps->rows,
                d->embed, d->ff);
}

/* One sub-layer around its residual connection, with its layer norm ln:
 *   pre:  y = f(LN(x)); out = x + dropout(y)
 *   post: y = x + dropout(f(x)); out = LN(y)
 * x (N, D) in, out (N, D) (may be x). */
static void sublayer_forward(const TPass *ps, int l, SubKind kind, const TLayer *w, const LnWeights *ln,
                             const float *x, float *out, SubBufs *u)
{
    int N = ps->rows, D = ps->d->embed;
    long n = (long)N * D;
    if (ps->d->norm == NORM_PRE) {
        layernorm_forward(u->n, u->mean, u->rstd, x, ln->g, ln->b, N, D);
        sublayer_f(ps, l, kind, w, u->n, u->y, u);
        if (ps->p > 0) dropout(u->y, u->rkeep, n, ps->p, ps->rng);  /* residual dropout */
        add(out, x, u->y, n);
    } else {
        sublayer_f(ps, l, kind, w, x, u->y, u);
        if (ps->p > 0) dropout(u->y, u->rkeep, n, ps->p, ps->rng);  /* residual dropout */
        add(u->y, x, u->y, n);
        layernorm_forward(out, u->mean, u->rstd, u->y, ln->g, ln->b, N, D);
    }
}

/* dL/d(f's input), d_in (N, D) (written), from dy: f's backward pass. */
static void sublayer_f_backward(const TPass *ps, int l, SubKind kind, const TLayer *w, TLayer *g, const float *in,
                                const float *dy, float *d_in, SubBufs *u)
{
    const ModelDims *d = ps->d;
    if (kind != SUB_FF) {
        int self = kind == SUB_SELF;
        ps->attend_backward(ps, l, kind, self ? &w->self : &w->cross, self ? &g->self : &g->cross, in, dy, d_in, u);
        return;
    }
    FfnParams ff = ff_params(&w->ff, ps->prep ? &ps->prep[l] : NULL);
    FfnGrads fg = {g->ff.w1, g->ff.b1, g->ff.w2, g->ff.b2};
    ffn_backward(&ff, activation(d), &fg, dy, in, u->fh, u->fa, ps->p_act > 0 ? u->fkeep : NULL, ps->p_act, d_in,
                 ps->ff_work, ps->rows, d->embed, d->ff);
}

/* ds (N, D): in, dL/d(out); out, dL/dx. The layer norm's gradients go into lg. */
static void sublayer_backward(const TPass *ps, int l, SubKind kind, const TLayer *w, TLayer *g, const LnWeights *ln,
                              LnWeights *lg, const float *x, float *ds, SubBufs *u)
{
    int N = ps->rows, D = ps->d->embed;
    long n = (long)N * D;
    float *dn = ps->d_n, *dsum = ps->d_sum;
    if (ps->d->norm == NORM_PRE) {
        const float *dy = ds;
        if (ps->p > 0) {
            memcpy(dsum, ds, sizeof(float) * n);
            dropout_backward(dsum, u->rkeep, n, ps->p);
            dy = dsum;
        }
        sublayer_f_backward(ps, l, kind, w, g, u->n, dy, dn, u);
        layernorm_backward(dn, lg->g, lg->b, dn, x, u->mean, u->rstd, ln->g, N, D);
        add(ds, ds, dn, n);
    } else {
        layernorm_backward(dsum, lg->g, lg->b, ds, u->y, u->mean, u->rstd, ln->g, N, D);
        memcpy(ds, dsum, sizeof(float) * n);
        if (ps->p > 0) dropout_backward(dsum, u->rkeep, n, ps->p);
        sublayer_f_backward(ps, l, kind, w, g, x, dsum, dn, u);
        add(ds, ds, dn, n);
    }
}

/* ---------------------------------------------------------------- the layers */

void encoder_layer_forward(const TPass *ps, int l, const TLayer *w, const float *x, float *mid, float *out,
                           SubBufs *const u[2])
{
    sublayer_forward(ps, l, SUB_SELF, w, &w->ln1, x, mid, u[0]);
    sublayer_forward(ps, l, SUB_FF, w, &w->ln2, mid, out, u[1]);
}

void decoder_layer_forward(const TPass *ps, int l, const TLayer *w, const float *x, float *mid, float *mid2,
                           float *out, SubBufs *const u[3])
{
    sublayer_forward(ps, l, SUB_SELF, w, &w->ln1, x, mid, u[0]);
    sublayer_forward(ps, l, SUB_CROSS, w, &w->ln2, mid, mid2, u[1]);
    sublayer_forward(ps, l, SUB_FF, w, &w->ln3, mid2, out, u[2]);
}

void encoder_layer_backward(const TPass *ps, int l, const TLayer *w, TLayer *g, const float *x, const float *mid,
                            float *ds, SubBufs *const u[2])
{
    sublayer_backward(ps, l, SUB_FF, w, g, &w->ln2, &g->ln2, mid, ds, u[1]);
    sublayer_backward(ps, l, SUB_SELF, w, g, &w->ln1, &g->ln1, x, ds, u[0]);
}

void decoder_layer_backward(const TPass *ps, int l, const TLayer *w, TLayer *g, const float *x, const float *mid,
                            const float *mid2, float *ds, SubBufs *const u[3])
{
    sublayer_backward(ps, l, SUB_FF, w, g, &w->ln3, &g->ln3, mid2, ds, u[2]);
    sublayer_backward(ps, l, SUB_CROSS, w, g, &w->ln2, &g->ln2, mid, ds, u[1]);
    sublayer_backward(ps, l, SUB_SELF, w, g, &w->ln1, &g->ln1, x, ds, u[0]);
}
