#include "layers/loss.h"

#include <math.h>
#include <string.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "kernels/fastmath.h" /* defines: expf_fast */

KERNEL_CLONES
double softmax_xent(float *logits, const int *targets, int N, int V, float scale, float smoothing, float *dlogits)
{
    double total = 0.0;
    for (int i = 0; i < N; i++) {
        float *x = logits + (long)i * V;
        float *d = dlogits ? dlogits + (long)i * V : NULL;
        if (targets[i] == 0) {
            if (d) memset(d, 0, sizeof(float) * V);
            continue;
        }
        float maxv = x[0];
#pragma omp simd reduction(max : maxv)
        for (int k = 1; k < V; k++)
            maxv = x[k] > maxv ? x[k] : maxv;
        float sum = 0.0f, target = x[targets[i]];
        /* The smoothing term needs the mean logit, read before d (which may be x)
         * is overwritten. */
        double mean = 0.0;
        if (smoothing > 0.0f) {
            for (int k = 0; k < V; k++)
                mean += x[k];
            mean /= V;
        }
        if (d) {
            /* One exponential per logit: keep e^(x - max) in d, then scale it. */
#pragma omp simd reduction(+ : sum)
            for (int k = 0; k < V; k++) {
                d[k] = expf_fast(x[k] - maxv);
                sum += d[k];
            }
            float f = scale / sum;
            if (smoothing > 0.0f) {
                /* scale * (p - q): every class loses smoothing / V, the target also 1 - smoothing. */
                float spread = scale * smoothing / V;
#pragma omp simd
                for (int k = 0; k < V; k++)
                    d[k] = d[k] * f - spread;
                d[targets[i]] -= scale * (1.0f - smoothing);
            } else {
#pragma omp simd
                for (int k = 0; k < V; k++)
                    d[k] *= f;
                d[targets[i]] -= scale;
            }
        } else {
#pragma omp simd reduction(+ : sum)
            for (int k = 0; k < V; k++)
                sum += expf_fast(x[k] - maxv);
        }
        /* lse - target as (max - target) + log(sum): lse itself loses log(sum) when the
         * logits are huge (max 1e30, where a double's spacing is 1e14), and a model of
         * equal huge logits, which predicts every word as likely, scored 0, not log V. */
        double log_sum = log((double)sum), over_target = (double)maxv - target;
        if (smoothing > 0.0f)
            total += (1.0 - smoothing) * (over_target + log_sum) + smoothing * ((double)maxv - mean + log_sum);
        else
            total += over_target + log_sum;
    }
    return total;
}
