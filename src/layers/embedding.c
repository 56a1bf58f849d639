#include "layers/embedding.h"

#include <string.h>

void embedding_forward(float *out, int ld_out, const float *table, const int *ids, int n, int E)
{
    for (int i = 0; i < n; i++)
        memcpy(out + (long)i * ld_out, table + (long)ids[i] * E, sizeof(float) * E);
}

void embedding_backward(float *dtable, const float *dout, int ld_dout, const int *ids, int n, int E)
{
    for (int i = 0; i < n; i++) {
        float *row = dtable + (long)ids[i] * E;
        const float *d = dout + (long)i * ld_dout;
        for (int e = 0; e < E; e++)
            row[e] += d[e];
    }
}
