#include "layers/posenc.h"

#include <math.h>

double posenc_value(int pos, int k, int d)
{
    int i2 = k & ~1; /* 2i: the pair's even column */
    double angle = pos / pow(10000.0, (double)i2 / d);
    return k % 2 == 0 ? sin(angle) : cos(angle);
}

void posenc_add(float *x, int T, int B, int d, int pos0, float scale)
{
    for (int t = 0; t < T; t++)
        for (int k = 0; k < d; k++) {
            float pe = (float)posenc_value(pos0 + t, k, d);
            for (int b = 0; b < B; b++) {
                float *v = x + ((long)t * B + b) * d + k;
                *v = scale * *v + pe;
            }
        }
}
