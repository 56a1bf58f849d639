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
void grad_norm_blocks(const float *grad, long n, long first, long last, float *sums)
{
    /* Each block's float sum of squares (vectorised); grad_norm adds them up in double. */
    for (long b = first; b < last; b++) {
        long start = b * GRAD_NORM_BLOCK, end = start + GRAD_NORM_BLOCK < n ? start + GRAD_NORM_BLOCK : n;
        float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
        for (long i = start; i < end; i++)
            sum += grad[i] * grad[i];
        sums[b - first] = sum;
    }
}

double grad_norm_of_blocks(const float *sums, long blocks)
{
    double total = 0.0;
    for (long b = 0; b < blocks; b++)
        total += sums[b];
    return sqrt(total);
}

double grad_norm(const float *grad, long n)
{
    /* Blocks of float sums added up in double, in order: exact enough for a norm, and
     * the summation order is fixed, so the result is reproducible, and the same when
     * the blocks are computed in parallel (train/parallel.h). A chunk of blocks at a
     * time on the stack. */
    float sums[256];
    double total = 0.0;
    long blocks = (n + GRAD_NORM_BLOCK - 1) / GRAD_NORM_BLOCK;
    for (long first = 0; first < blocks; first += 256) {
        long last = first + 256 < blocks ? first + 256 : blocks;
        grad_norm_blocks(grad, n, first, last, sums);
        for (long b = first; b < last; b++)
            total += sums[b - first];
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

void adam_update(Adam *opt, float *params, float *grad, float grad_scale)
{
    adam_begin_update(opt);
    adam_update_range(opt, params, grad, grad_scale, 0, opt->n);
}

void adam_begin_update(Adam *opt) { opt->step++; }

KERNEL_CLONES
void adam_update_range(const Adam *opt, float *params, float *grad, float grad_scale, long lo, long hi)
{
    float b1 = opt->beta1, b2 = opt->beta2, eps = opt->eps;
    /* PyTorch's arrangement: step_size = lr / bc1, denom = sqrt(v) / sqrt(bc2) + eps */
    float bc1 = 1.0f - powf(b1, (float)opt->step);
    float bc2_sqrt = sqrtf(1.0f - powf(b2, (float)opt->step));
    float step_size = opt->lr / bc1, *m = opt->m, *v = opt->v;
    /* Element-wise, no sum: any range, vector or scalar, gives every element the same bits. */
#pragma omp simd
    for (long i = lo; i < hi; i++) {
        float g = grad[i] * grad_scale;
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        params[i] -= step_size * m[i] / denom;
        grad[i] = 0.0f;  /* ready for the next backward pass: saves a separate pass */
    }
}
