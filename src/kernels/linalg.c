#include "kernels/linalg.h"

#include <cblas.h>
#include <string.h>

#include "kernels/cpu.h" /* defines: kernel_isa_supported */

/* y = x · w^T + beta y */
static void matmul_nt(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w, float beta,
                      int M, int N, int K)
{
    /* A few rows (decoding one sentence, a small beam): sgemm would repack all of w on
     * every call, costing more than the product itself; matrix-vector products do not. */
    if (M <= MATMUL_GEMV_ROWS) {
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

int packed_matches_blas(void)
{
    /* (The kernel is fixed when OpenBLAS loads; asking costs a few nanoseconds.) */
    return strcmp(openblas_get_corename(), "SkylakeX") == 0 && kernel_isa_supported(KERNEL_ISA_AVX2);
}

/* Whether the packed product gives cblas_sgemm's bits for an (M, N, K) product: given
 * packed_matches_blas(), and on one OpenBLAS thread (on two, sgemm sums some products
 * otherwise: K 449, 600 and 900 were measured; decoding with one worker and --threads
 * N, or training with train.threads N, then goes through cblas as before). OpenBLAS
 * 0.3.21 computes small products by another kernel (SMALL_MATRIX_OPT:
 * sgemm_small_kernel_permit_skylakex.c, for nmt's x · w^T: M*N*K at most 100^3, M*N at
 * most 1200 and K at least 32), which sums otherwise; measured with d 64: M*N up to
 * 1200 differed, from 1216 on identical. Only tiny models have such products (d_model
 * 256 reaches M*N = 1200 at 4 rows, which go through sgemv). */
static int packed_gives_blas_bits(int M, int N, int K)
{
    int blas_small = K >= 32 && (long)M * N <= 1200 && (double)M * N * K <= 1e6;
    return M > MATMUL_GEMV_ROWS && M <= PACKED_MAX_ROWS && !blas_small && packed_matches_blas() &&
           openblas_get_num_threads() == 1;
}

void matmul_bias_prepacked(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                           const PackedMatrix *pw, const float *bias, int M, int N, int K)
{
    if (pw && packed_gives_blas_bits(M, N, K))
        packed_matmul_bias(y, ld_y, x, ld_x, pw, bias, M);
    else matmul_bias(y, ld_y, x, ld_x, w, ld_w, bias, M, N, K);
}

void matmul_add_prepacked(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                          const PackedMatrix *pw, int M, int N, int K)
{
    if (pw && packed_gives_blas_bits(M, N, K))
        packed_matmul_add(y, ld_y, x, ld_x, pw, M);
    else matmul_add(y, ld_y, x, ld_x, w, ld_w, M, N, K);
}

const PackedMatrix *matmul_pack_for_rows(PackedMatrix *p, const float *w, int ld_w, int N, int K, int max_rows)
{
    /* The small-product exclusion only shrinks as the rows grow: the most rows decide. */
    int rows = max_rows < PACKED_MAX_ROWS ? max_rows : PACKED_MAX_ROWS;
    if (openblas_get_num_threads() != 1 || !packed_gives_blas_bits(rows, N, K)) return NULL;
    packed_matrix_pack(p, w, ld_w, N, K);
    return p;
}

/* Whether the packed product gives cblas_sgemm NoTrans/NoTrans's bits (linalg.h). */
static int packed_gives_blas_nn_bits(int M, int N, int K)
{
    return M <= PACKED_MAX_ROWS && (double)M * N * K > MATMUL_NN_SMALL && packed_matches_blas() &&
           openblas_get_num_threads() == 1;
}

void matmul_nn_prepacked(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                         const PackedMatrix *pw, int add, int M, int N, int K)
{
    if (pw && packed_gives_blas_nn_bits(M, N, K)) {
        if (add) packed_matmul_add(y, ld_y, x, ld_x, pw, M);
        else packed_matmul_bias(y, ld_y, x, ld_x, pw, NULL, M);
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, x, ld_x, w, ld_w, add ? 1.0f : 0.0f, y,
                ld_y);
}

const PackedMatrix *matmul_pack_columns_for_rows(PackedMatrix *p, const float *w, int ld_w, int N, int K,
                                                 int max_rows)
{
    int rows = max_rows < PACKED_MAX_ROWS ? max_rows : PACKED_MAX_ROWS;
    if (!packed_gives_blas_nn_bits(rows, N, K)) return NULL;
    packed_matrix_pack_columns(p, w, ld_w, N, K);
    return p;
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
