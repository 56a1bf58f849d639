/* linalg.h — the two matrix helpers every layer uses, over cblas (OpenBLAS).
 * Matrices are row-major with explicit leading dimensions (row strides).
 */
#ifndef LINALG_H
#define LINALG_H

/* y (M, N) = x (M, K) · w^T + bias, with w (N, K) as a PyTorch Linear weight.
 * bias (N) may be NULL. ld_* are row strides. */
void matmul_bias(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                 const float *bias, int M, int N, int K);

/* y (M, N) += x (M, K) · w^T, w (N, K). */
void matmul_add(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w, int M, int N, int K);

/* The parameter gradients of y = x · w^T + b over M rows: gw (N, K) += dy^T · x and,
 * unless gb is NULL, gb (N) += the column sums of dy. dy (M, N) has row stride ld_dy,
 * x (M, K) row stride ld_x, gw row stride K. */
void linear_grads(float *gw, float *gb, const float *dy, int ld_dy, const float *x, int ld_x, int M, int N, int K);

/* sums (N) += column sums of d (M, N) with row stride ld: a bias gradient. */
void column_sums_add(float *sums, const float *d, int M, int N, int ld);
#endif
