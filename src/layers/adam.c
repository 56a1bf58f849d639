#include "layers/adam.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "base/util.h" /* defines: xcalloc */

void adam_init(Adam *opt, long n, float lr)
{
    opt->lr = lr;
    opt->beta1 = 0.9f;
    opt->beta2 = 0.999f;
    opt->eps = 1e-8f;
    opt->step = 0;
    opt->n = n;
    opt->m = xcalloc(n, sizeof(float));
    opt->v = xcalloc(n, sizeof(float));
}

void adam_free(Adam *opt)
{
    free(opt->m);
    free(opt->v);
    opt->m = opt->v = NULL;
}

KERNEL_CLONES
double grad_norm(const float *grad, long n)
{
    /* Blocks of float sums (vectorised) added up in double: exact enough for a norm,
     * and the summation order is fixed, so the result is reproducible. */
    double total = 0.0;
    for (long start = 0; start < n; start += 4096) {
        long end = start + 4096 < n ? start + 4096 : n;
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (long i = start; i < end; i++)
            sum += grad[i] * grad[i];
        total += sum;
    }
    return sqrt(total);
}

float clip_scale(double norm, double max_norm)
{
    return max_norm <= 0 || norm <= max_norm ? 1.0f : (float)(max_norm / (norm + 1e-6));
}

void grad_clip(float *grad, long n, double norm, double max_norm)
{
    float scale = clip_scale(norm, max_norm);
    if (scale == 1.0f) return;
    for (long i = 0; i < n; i++)
        grad[i] *= scale;
}

KERNEL_CLONES
void adam_update(Adam *opt, float *params, float *grad, float grad_scale)
{
    opt->step++;
    float b1 = opt->beta1, b2 = opt->beta2, eps = opt->eps;
    /* PyTorch's arrangement: step_size = lr / bc1, denom = sqrt(v) / sqrt(bc2) + eps */
    float bc1 = 1.0f - powf(b1, (float)opt->step);
    float bc2_sqrt = sqrtf(1.0f - powf(b2, (float)opt->step));
    float step_size = opt->lr / bc1, *m = opt->m, *v = opt->v;
#pragma omp simd
    for (long i = 0; i < opt->n; i++) {
        float g = grad[i] * grad_scale;
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        params[i] -= step_size * m[i] / denom;
        grad[i] = 0.0f;  /* ready for the next backward pass: saves a separate pass */
    }
}
