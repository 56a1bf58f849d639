#include "adam.h"

#include <math.h>
#include <stdlib.h>

#include "util.h" /* defines: xcalloc */

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

double grad_norm(const float *grad, long n)
{
    double sum = 0.0;
    for (long i = 0; i < n; i++)
        sum += (double)grad[i] * grad[i];
    return sqrt(sum);
}

void grad_clip(float *grad, long n, double norm, double max_norm)
{
    if (max_norm <= 0 || norm <= max_norm) return;
    float scale = (float)(max_norm / (norm + 1e-6));
    for (long i = 0; i < n; i++)
        grad[i] *= scale;
}

void adam_update(Adam *opt, float *params, const float *grad)
{
    opt->step++;
    float b1 = opt->beta1, b2 = opt->beta2;
    /* PyTorch's arrangement: step_size = lr / bc1, denom = sqrt(v) / sqrt(bc2) + eps */
    float bc1 = 1.0f - powf(b1, (float)opt->step);
    float bc2_sqrt = sqrtf(1.0f - powf(b2, (float)opt->step));
    float step_size = opt->lr / bc1;
    for (long i = 0; i < opt->n; i++) {
        float g = grad[i];
        opt->m[i] = b1 * opt->m[i] + (1.0f - b1) * g;
        opt->v[i] = b2 * opt->v[i] + (1.0f - b2) * g * g;
        float denom = sqrtf(opt->v[i]) / bc2_sqrt + opt->eps;
        params[i] -= step_size * opt->m[i] / denom;
    }
}
