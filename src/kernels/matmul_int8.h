/* matmul_int8.h — int8 products for decoding: y = x · W^T + bias with W stored as
 * 8-bit integers, one scale per output row, and x quantized row by row on the fly.
 *
 *   int8_t *q = xmalloc(N * K); float *scale = xmalloc(sizeof(float) * N);
 *   int8_quantize_rows(q, scale, weight, K, N, K);  // once: what a model file stores
 *   Int8Matrix w;
 *   int8_matrix_init(&w, q, scale, N, K);           // when the model is loaded
 *   Int8Rows xq = {0};
 *   int8_rows_quantize(&xq, x, K, M, K);            // each step: x (M, K), floats
 *   int8_matmul(y, N, &xq, &w, bias);               // y (M, N) = x · W^T + bias
 *   int8_rows_free(&xq); int8_matrix_free(&w);
 *
 * Quantization (symmetric, no zero point): a row v of n floats becomes
 *   scale = max |v| / 127,   q[i] = round-half-even(v[i] * (127 / max |v|)) in [-127, 127]
 * so that v[i] = scale * q[i] within scale / 2 (plus a rounding of the float product):
 * W per output row (weights), x per input row (activations). A row of zeros (or of
 * magnitudes all below INT8_MIN_AMAX) has scale 0 and all-zero q; a row holding a NaN or an infinity gets scale NaN and all-zero q, so that its
 * outputs are NaN rather than a quiet wrong number. -128 is never used: the products
 * below rely on it.
 *
 * The product: acc[r][j] = sum_k q_x[r][k] q_w[j][k] exactly in int32 (|acc| <= 127^2 K:
 * K at most INT8_MAX_K), then
 *   y[r][j] = prev + (float)acc[r][j] * (scale_x[r] * scale_w[j])
 * with prev = bias[j] (0 without a bias), or y[r][j] itself for int8_matmul_isa's add.
 * Every instruction set computes the same integers and the same float epilogue (a
 * multiply and an add, never fused), so the results are identical, bit for bit, on
 * every CPU, in every batch: a row's output depends on that row alone.
 *   AVX-512 VNNI: vpdpbusd multiplies unsigned by signed bytes, so x goes in as
 *     u = q + 128 and the kernel subtracts 128 sum_k q_w[j][k] (kept per row of W).
 *     Nothing saturates: vpdpbusd adds its four products into 32 bits.
 *   AVX2: vpmaddubsw multiplies unsigned by signed bytes and SATURATES the sum of each
 *     pair to 16 bits; it gets |q_x| and q_w with q_x's sign (vpsignb), so each pair is
 *     at most 2 * 127 * 127 = 32258 < 32767, exact (this is why -128 is excluded).
 *   portable C: int32 sums of int products.
 *
 * Layout of a packed Int8Matrix: panels of 16 outputs, each (K4 / 4, 16, 4) bytes:
 * for a group of 4 inputs, 4 consecutive bytes per output, as vpdpbusd reads them; K
 * padded with zeros to K4, a multiple of 4, and the last panel with zero rows.
 */
#ifndef MATMUL_INT8_H
#define MATMUL_INT8_H

#include <stdint.h>

#include "kernels/cpu.h" /* defines: KernelIsa */

#define INT8_PANEL 16
/* The longest input row: the sums VNNI makes before its correction, up to 255 * 127 * K,
 * stay within int32. */
#define INT8_MAX_K 65536
/* The smallest largest magnitude a row is quantized with: below it (zero, or so small
 * that 127 / max would overflow a float) the row is all zeros with scale 0. */
#define INT8_MIN_AMAX 1e-30f

typedef struct {
    int n, k, k4;        /* outputs, inputs, inputs rounded up to a multiple of 4 */
    int8_t *panels;      /* (ceil(n / 16), k4 / 4, 16, 4), 64-byte aligned */
    float *scale;        /* (n) the rows' scales */
    int32_t *shift;      /* (ceil(n / 16) * 16) 128 * sum_k q[j][k]: VNNI's correction */
} Int8Matrix;

/* A batch of quantized input rows; zero-initialise, then quantize into it as often as
 * needed (its buffers grow to the largest batch and are reused). */
typedef struct {
    int m, k, k4;        /* rows, inputs, inputs rounded up to a multiple of 4 */
    int8_t *q;           /* (m, k4), zero-padded */
    uint8_t *u;          /* (m, k4) q + 128: VNNI's unsigned operand */
    float *scale;        /* (m) */
    long q_cap, scale_cap;
} Int8Rows;

/* Quantizes w (N, K), row stride ld_w, into q (N, K) and scale (N), as above. */
void int8_quantize_rows(int8_t *q, float *scale, const float *w, int ld_w, int N, int K);

/* Packs q (N, K, values in [-127, 127]) and scale (N) for the kernels. 0, or -1 if K >
 * INT8_MAX_K or a value is -128 (the matrix is then left empty). Aborts only when out
 * of memory. */
int int8_matrix_init(Int8Matrix *m, const int8_t *q, const float *scale, int N, int K);
void int8_matrix_free(Int8Matrix *m);
/* out = the rows rows[0..n) of w (each < w->n), in that order, as int8_matrix_init would
 * pack them: a product with out gives, for each of those rows, the bits the product with
 * w gives. Frees what out held (zeroed, or a matrix). Aborts only when out of memory. */
void int8_matrix_gather(Int8Matrix *out, const Int8Matrix *w, const int *rows, int n);

/* x (M, K), row stride ld_x, quantized row by row into a (K <= INT8_MAX_K). */
void int8_rows_quantize(Int8Rows *a, const float *x, int ld_x, int M, int K);
void int8_rows_free(Int8Rows *a);

/* y (x->m, w->n), row stride ld_y, = x · w^T + bias (bias (n) or NULL), with the best
 * instruction set this CPU runs. x->k must be w->k. */
void int8_matmul(float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias);

/* The same with a given instruction set (one the CPU lacks runs the best supported
 * one; KERNEL_ISA_AVX512 without VNNI runs AVX2), for the outputs [j0, j1) only (j0 a
 * multiple of 16), and with add: y += x · w^T (bias ignored). For tests, benchmarks
 * and threads sharing one product. */
void int8_matmul_isa(KernelIsa isa, float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias,
                     int add, int j0, int j1);

/* ---- what matmul_int8.c shares with its intrinsics kernels (matmul_x86.c), each
 * compiled for its own instruction set by a target attribute on the function; not for
 * use elsewhere. int8_matmul_isa's work for x->m > 0, same arguments. */
#if defined(__x86_64__)
void int8_kernel_avx2(float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias, int add,
                      int j0, int j1);
void int8_kernel_avx512vnni(float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias, int add,
                            int j0, int j1);
#endif
#endif
