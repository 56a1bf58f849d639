/* test_linalg.c — matmul_bias and column_sums_add against naive double-precision loops,
 * and every cblas_sgemm transpose combination the model uses, at awkward sizes (odd,
 * strided) and at the model's real shapes. This also checks that the OpenBLAS kernel
 * selected on this machine computes correct results. */
#include <cblas.h>
#include <stdlib.h>

#include "check.h"
#include "kernels/linalg.h"
#include "base/util.h"

static float *random_matrix(Rng *rng, long n)
{
    float *m = xmalloc(sizeof(float) * n);
    for (long i = 0; i < n; i++)
        m[i] = rng_uniform(rng) * 2 - 1;
    return m;
}

/* C (M, N) = op(A) op(B), ops given by ta/tb, in double; lda/ldb are row strides. */
static void naive(float *c, const float *a, int lda, int ta, const float *b, int ldb, int tb, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)(ta ? a[(long)k * lda + i] : a[(long)i * lda + k]) *
                     (tb ? b[(long)j * ldb + k] : b[(long)k * ldb + j]);
            c[(long)i * N + j] = (float)s;
        }
}

static void check_gemm(Rng *rng, int ta, int tb, int M, int N, int K, const char *label)
{
    int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5;
    float *a = random_matrix(rng, (long)(ta ? K : M) * lda), *b = random_matrix(rng, (long)(tb ? N : K) * ldb);
    float *c = xcalloc((long)M * N, sizeof(float)), *ref = xcalloc((long)M * N, sizeof(float));
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, a, lda,
                b, ldb, 0.0f, c, N);
    naive(ref, a, lda, ta, b, ldb, tb, M, N, K);
    /* float accumulation of K products of magnitude <= 1: rounding error grows like sqrt(K) */
    check_close(c, ref, (long)M * N, 4e-6 * sqrt(K), label);
    free(a);
    free(b);
    free(c);
    free(ref);
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 7);
    /* matmul_bias with a bias and strides */
    int M = 7, N = 5, K = 3;
    float *x = random_matrix(&rng, M * (K + 2)), *w = random_matrix(&rng, N * (K + 1)), *bias = random_matrix(&rng, N);
    float y[7 * 6], ref[7 * 6];
    matmul_bias(y, N + 1, x, K + 2, w, K + 1, bias, M, N, K);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = bias[j];
            for (int k = 0; k < K; k++)
                s += (double)x[i * (K + 2) + k] * w[j * (K + 1) + k];
            ref[i * (N + 1) + j] = (float)s;
            y[i * (N + 1) + N] = ref[i * (N + 1) + N] = 0; /* the stride gap is not compared */
        }
    check_close(y, ref, M * (N + 1), 1e-6, "matmul_bias strided + bias");
    float nobias[7 * 5];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            nobias[i * N + j] = ref[i * (N + 1) + j] - bias[j];
    matmul_bias(y, N, x, K + 2, w, K + 1, NULL, M, N, K);
    check_close(y, nobias, M * N, 1e-6, "matmul_bias without bias");
    float sums[5] = {1, 1, 1, 1, 1}, want[5];
    for (int j = 0; j < N; j++) {
        double s = 1;
        for (int i = 0; i < M; i++)
            s += x[i * (K + 2) + j % K];
        want[j] = (float)s;
    }
    float cols[7 * 5];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++)
            cols[i * N + j] = x[i * (K + 2) + j % K];
    column_sums_add(sums, cols, M, N, N);
    check_close(sums, want, N, 1e-6, "column_sums_add");

    /* Small awkward shapes, every transpose combination. */
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            char label[64];
            snprintf(label, sizeof label, "sgemm %c%c 13x11x9", ta ? 'T' : 'N', tb ? 'T' : 'N');
            check_gemm(&rng, ta, tb, 13, 11, 9, label);
        }
    /* The model's shapes at batch 64, hidden 512, embed 256, a 2000-word vocabulary. */
    check_gemm(&rng, 0, 1, 64, 2048, 512, "sgemm NT 64x2048x512 (W_hh)");
    check_gemm(&rng, 0, 1, 640, 2000, 512, "sgemm NT 640x2000x512 (out)");
    check_gemm(&rng, 1, 0, 2000, 512, 640, "sgemm TN 2000x512x640 (dW)");
    check_gemm(&rng, 0, 0, 640, 512, 2000, "sgemm NN 640x512x2000 (dx)");
    check_gemm(&rng, 0, 1, 64, 1536, 256, "sgemm NT 64x1536x256 (W_ih)");
    free(x);
    free(w);
    free(bias);
    return check_report("test_linalg");
}
