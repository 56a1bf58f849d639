#include "kernels/linalg.h"

#include <cblas.h>
#include <string.h>

#define SMALL_M 4

/* y = x · w^T + beta y */
static void matmul_nt(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w, float beta,
                      int M, int N, int K)
{
    /* A few rows (decoding one sentence, a small beam): sgemm would repack all of w on
     * every call, costing more than the product itself; matrix-vector products do not. */
    if (M <= SMALL_M) {
        for (int i = 0; i < M; i++)
            cblas_sgemv(CblasRowMajor, CblasNoTrans, N, K, 1.0f, w, ld_w, x + (long)i * ld_x, 1, beta,
                        y + (long)i * ld_y, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K,
                1.0f, x, ld_x, w, ld_w, beta, y, ld_y);
}

void matmul_bias(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                 const float *bias, int M, int N, int K)
{
    if (bias)
        for (int i = 0; i < M; i++)
            memcpy(y + (long)i * ld_y, bias, sizeof(float) * N);
    matmul_nt(y, ld_y, x, ld_x, w, ld_w, bias ? 1.0f : 0.0f, M, N, K);
}

void matmul_add(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w, int M, int N, int K)
{
    matmul_nt(y, ld_y, x, ld_x, w, ld_w, 1.0f, M, N, K);
}

void linear_grads(float *gw, float *gb, const float *dy, int ld_dy, const float *x, int ld_x, int M, int N, int K)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, N, K, M, 1.0f, dy, ld_dy, x, ld_x, 1.0f, gw, K);
    if (gb) column_sums_add(gb, dy, M, N, ld_dy);
}

void column_sums_add(float *sums, const float *d, int M, int N, int ld)
{
    for (int i = 0; i < M; i++) {
        const float *row = d + (long)i * ld;
        for (int j = 0; j < N; j++)
            sums[j] += row[j];
    }
}
