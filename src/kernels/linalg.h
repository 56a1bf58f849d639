/* linalg.h — the two matrix helpers every layer uses, over cblas (OpenBLAS).
 * Matrices are row-major with explicit leading dimensions (row strides).
 */
#ifndef LINALG_H
#define LINALG_H

#include "kernels/matmul_packed.h" /* defines: PackedMatrix */

/* y (M, N) = x (M, K) · w^T + bias, with w (N, K) as a PyTorch Linear weight.
 * bias (N) may be NULL. ld_* are row strides. */
void matmul_bias(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                 const float *bias, int M, int N, int K);

/* y (M, N) += x (M, K) · w^T, w (N, K). */
void matmul_add(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w, int M, int N, int K);

/* matmul_bias and matmul_add when the weight is also packed (pw, the same w packed by
 * packed_matrix_init, or NULL): exactly the bits matmul_bias and matmul_add give, and
 * faster where the packed product can give them: from MATMUL_GEMV_ROWS + 1 rows (fewer
 * go through sgemv, which packs nothing) to PACKED_MAX_ROWS (more amortise sgemm's
 * packing: at 320 rows it was as fast or faster, scripts/bench/bench_matmul.c) when
 * packed_matches_blas and OpenBLAS runs one thread. */
void matmul_bias_prepacked(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                           const PackedMatrix *pw, const float *bias, int M, int N, int K);
void matmul_add_prepacked(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                          const PackedMatrix *pw, int M, int N, int K);

/* For the products of a recurrent pass, one per time step with the same weight and up
 * to max_rows rows each: packs w (N, K), row stride ld_w, into p (as packed_matrix_pack:
 * no allocation once p has the shape) and returns p when matmul_*_prepacked would
 * compute some product of up to max_rows rows from it and OpenBLAS runs one thread;
 * else returns NULL and leaves p as it was (the products are matmul_bias's, packing
 * would be wasted). On more threads OpenBLAS 0.3.21's sgemm sums some products
 * otherwise (K 449, 600 and 900 of 16 values of K from 24 to 4,096 measured, 2
 * threads), which the packed products do not follow. */
const PackedMatrix *matmul_pack_for_rows(PackedMatrix *p, const float *w, int ld_w, int N, int K, int max_rows);

/* A backward pass's products y (M, N) (=, or += with add) x (M, K) · w, w (K, N) with
 * row stride ld_w, as cblas_sgemm NoTrans/NoTrans computes them (alpha 1, beta add);
 * pw: w's columns packed (packed_matrix_pack_columns), or NULL. With pw, where
 * packed_matches_blas() and OpenBLAS runs one thread, M <= PACKED_MAX_ROWS and M·N·K
 * > MATMUL_NN_SMALL (below, OpenBLAS 0.3.21 computes NoTrans/NoTrans products with a
 * small-matrix kernel that sums otherwise), the packed product gives sgemm's very
 * bits (measured: 3,808 shapes, M 1 to 64, N 8 to 1,536, K 24 to 4,096, both betas,
 * and tests/test_matmul_packed.c). */
void matmul_nn_prepacked(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                         const PackedMatrix *pw, int add, int M, int N, int K);
/* As matmul_pack_for_rows, for matmul_nn_prepacked: packs w (K, N)'s columns. */
const PackedMatrix *matmul_pack_columns_for_rows(PackedMatrix *p, const float *w, int ld_w, int N, int K,
                                                 int max_rows);
#define MATMUL_NN_SMALL 1e6

/* matmul_bias computes up to this many rows as matrix-vector products (sgemv). */
#define MATMUL_GEMV_ROWS 4
/* The most rows matmul_*_prepacked give to the packed product. */
#define PACKED_MAX_ROWS 64

/* 1 when packed_matmul_bias/add (matmul_packed.h) give, for more than
 * MATMUL_GEMV_ROWS rows, the very bits of cblas_sgemm here: when OpenBLAS runs its
 * SkylakeX kernel (Debian 12's OpenBLAS 0.3.21 on AVX-512 CPUs, nmt's choice where it
 * detects a Prescott, blas.h), whose sgemm sums each output as one chain of fused
 * multiply-adds per block of 448 inputs, as the packed products do. Measured on 358
 * shapes (5 to 320 rows, K 100 to 2048, N 256 to 13,000), 1 and 2 threads; OpenBLAS's
 * Haswell and Cooperlake kernels sum otherwise (the Haswell one in two interleaved
 * chains), so there the packed products are not used for float models. */
int packed_matches_blas(void);

/* The parameter gradients of y = x · w^T + b over M rows: gw (N, K) += dy^T · x and,
 * unless gb is NULL, gb (N) += the column sums of dy. dy (M, N) has row stride ld_dy,
 * x (M, K) row stride ld_x, gw row stride K. */
void linear_grads(float *gw, float *gb, const float *dy, int ld_dy, const float *x, int ld_x, int M, int N, int K);

/* sums (N) += column sums of d (M, N) with row stride ld: a bias gradient. */
void column_sums_add(float *sums, const float *d, int M, int N, int ld);
#endif
