/* logits.c — a logits row's maximum and log-normaliser (logits.h). */
#include "kernels/logits.h"

#include <math.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "kernels/fastmath.h" /* defines: expf_fast */

KERNEL_CLONES
float logits_max(const float *row, int n)
{
    float maxv = row[0];
#pragma omp simd reduction(max : maxv)
    for (int w = 1; w < n; w++)
        maxv = row[w] > maxv ? row[w] : maxv;
    return maxv;
}

enum { LANES = 4, BLOCK = 16 };  /* the baseline's lanes; exponentials per block */

/* sum_w exp(row[w] - maxv) in the baseline's order (logits.h). */
KERNEL_CLONES
static float exp_sum(const float *row, int V, float maxv)
{
    float lane[LANES] = {0.0f, 0.0f, 0.0f, 0.0f}, e[BLOCK];
    int whole = V - V % LANES, w = 0;
    for (; w + BLOCK <= whole; w += BLOCK) {
#pragma omp simd
        for (int i = 0; i < BLOCK; i++)
            e[i] = expf_fast(row[w + i] - maxv);
        for (int b = 0; b < BLOCK; b += LANES)
            for (int j = 0; j < LANES; j++)
                lane[j] += e[b + j];
    }
    for (; w < whole; w += LANES)
        for (int j = 0; j < LANES; j++)
            lane[j] += expf_fast(row[w + j] - maxv);
    for (; w < V; w++)
        lane[0] += expf_fast(row[w] - maxv);
    return (((0.0f + lane[0]) + lane[1]) + lane[2]) + lane[3];
}

float logits_log_normaliser(const float *row, int V)
{
    float maxv = logits_max(row, V);
    return maxv + logf(exp_sum(row, V, maxv));
}
