#include "loss.h"

#include <math.h>
#include <string.h>

double softmax_xent(float *logits, const int *targets, int N, int V, float scale, float *dlogits)
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
        for (int k = 1; k < V; k++)
            if (x[k] > maxv) maxv = x[k];
        float sum = 0.0f;
        for (int k = 0; k < V; k++)
            sum += expf(x[k] - maxv);
        float logz = maxv + logf(sum);
        total += (double)logz - x[targets[i]];
        if (d) {
            for (int k = 0; k < V; k++)
                d[k] = scale * expf(x[k] - logz);
            d[targets[i]] -= scale;
        }
    }
    return total;
}
