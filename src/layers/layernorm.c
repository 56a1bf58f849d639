#include "layers/layernorm.h"

#include <math.h>

void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                       const float *beta, int N, int d)
{
    for (int r = 0; r < N; r++) {
        const float *xr = x + (long)r * d;
        float *yr = y + (long)r * d;
        /* Two passes in double: the variance of rows with a large mean stays exact. */
        double m = 0, v = 0;
        for (int k = 0; k < d; k++)
            m += xr[k];
        m /= d;
        for (int k = 0; k < d; k++)
            v += (xr[k] - m) * (xr[k] - m);
        v /= d;
        float s = (float)(1.0 / sqrt(v + LAYERNORM_EPS));
        mean[r] = (float)m;
        rstd[r] = s;
        for (int k = 0; k < d; k++)
            yr[k] = gamma[k] * ((xr[k] - (float)m) * s) + beta[k];
    }
}

void layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                        const float *mean, const float *rstd, const float *gamma, int N, int d)
{
    for (int r = 0; r < N; r++) {
        const float *xr = x + (long)r * d, *dyr = dy + (long)r * d;
        float *dxr = dx + (long)r * d;
        float m = mean[r], s = rstd[r];
        double g_mean = 0, gx_mean = 0;
        for (int k = 0; k < d; k++) {
            float xhat = (xr[k] - m) * s, g = dyr[k] * gamma[k];
            g_mean += g;
            gx_mean += g * xhat;
            dgamma[k] += dyr[k] * xhat;
            dbeta[k] += dyr[k];
        }
        g_mean /= d;
        gx_mean /= d;
        /* dyr is read before dxr[k] is written, index by index: dx may be dy. */
        for (int k = 0; k < d; k++) {
            float xhat = (xr[k] - m) * s;
            dxr[k] = s * (dyr[k] * gamma[k] - (float)g_mean - xhat * (float)gx_mean);
        }
    }
}
