#include "linalg.h"

#include <cblas.h>
#include <string.h>

void matmul_bias(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                 const float *bias, int M, int N, int K)
{
    float beta = 0.0f;
    if (bias) {
        for (int i = 0; i < M; i++)
            memcpy(y + (long)i * ld_y, bias, sizeof(float) * N);
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K,
                1.0f, x, ld_x, w, ld_w, beta, y, ld_y);
}

void column_sums_add(float *sums, const float *d, int M, int N, int ld)
{
    for (int i = 0; i < M; i++) {
        const float *row = d + (long)i * ld;
        for (int j = 0; j < N; j++)
            sums[j] += row[j];
    }
}
