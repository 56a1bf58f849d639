#include "layers/ffn.h"

#include <math.h>

#include "kernels/linalg.h"   /* defines: linear_grads */
#include "kernels/prepared.h" /* defines: prepared_matmul_bias, prepared_matmul_nn */

#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794

static float activate(FfnActivation act, float h)
{
    if (act == FFN_RELU) return h > 0 ? h : 0;
    return (float)(0.5 * h * (1.0 + erf(h * INV_SQRT2)));
}

/* d act(h) / dh; relu' at 0 is 0, as PyTorch's. */
static float activate_grad(FfnActivation act, float h)
{
    if (act == FFN_RELU) return h > 0 ? 1.0f : 0.0f;
    double cdf = 0.5 * (1.0 + erf(h * INV_SQRT2)), pdf = INV_SQRT_2PI * exp(-0.5 * (double)h * h);
    return (float)(cdf + h * pdf);
}

void ffn_forward(const FfnParams *p, FfnActivation act, const float *x, float *h, float *a, float *y,
                 const unsigned char *keep, float dropout, int N, int d, int ff)
{
    prepared_matmul_bias(h, ff, x, d, p->W1, d, p->p1, p->b1, N, ff, d);
    long n = (long)N * ff;
    for (long i = 0; i < n; i++)
        a[i] = activate(act, h[i]);
    if (keep) {
        float scale = 1.0f / (1.0f - dropout);
        for (long i = 0; i < n; i++)
            a[i] = keep[i] ? a[i] * scale : 0.0f;
    }
    prepared_matmul_bias(y, d, a, ff, p->W2, ff, p->p2, p->b2, N, d, ff);
}

void ffn_backward(const FfnParams *p, FfnActivation act, FfnGrads *g, const float *dy, const float *x,
                  const float *h, const float *a, const unsigned char *keep, float dropout, float *dx, float *work,
                  int N, int d, int ff)
{
    float *dh = work;
    linear_grads(g->W2, g->b2, dy, d, a, ff, N, d, ff);
    /* da (N, ff) = dy (N, d) W2 (d, ff) */
    prepared_matmul_nn(dh, ff, dy, d, p->W2, ff, p->p2, 0, N, d, ff);
    float scale = keep ? 1.0f / (1.0f - dropout) : 1.0f;
    for (long i = 0; i < (long)N * ff; i++)
        dh[i] *= keep && !keep[i] ? 0.0f : scale * activate_grad(act, h[i]);
    linear_grads(g->W1, g->b1, dh, ff, x, d, N, ff, d);
    /* dx (N, d) = dh (N, ff) W1 (ff, d) */
    prepared_matmul_nn(dx, d, dh, ff, p->W1, d, p->p1, 0, N, ff, d);
}
