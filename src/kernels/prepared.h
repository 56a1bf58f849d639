/* prepared.h — a Linear layer's weight prepared once for decoding, and the product
 * that uses whichever form it was prepared in.
 *
 * A decoder step multiplies a few rows by every weight matrix of the model. Prepared
 * when the model is loaded for decoding (models' prepare op, model.h), each weight is
 * either
 *   COMPUTE_FLOAT32  packed for the products of 5 to 64 rows (matmul_packed.h), where
 *                    that gives the very bits cblas_sgemm gives (packed_matches_blas):
 *                    outputs stay byte-identical and OpenBLAS no longer repacks the
 *                    weight on every call; elsewhere nothing is prepared;
 *   COMPUTE_INT8     quantized, one scale per output row, and multiplied by the input
 *                    rows quantized on the fly (matmul_int8.h): the same bits on every
 *                    CPU, whatever the batch.
 *
 *   PreparedWeight pw;
 *   prepared_weight_init(&pw, w, K, N, K, COMPUTE_INT8);
 *   prepared_matmul_bias(y, N, x, K, w, K, &pw, bias, M, N, K);   // y (M, N) = x w^T + bias
 *   prepared_weight_free(&pw);
 *
 * A NULL PreparedWeight is matmul_bias itself: training passes give NULL.
 * A prepared weight is read-only once made: the products write only y (an int8 product
 * quantizes its input rows into its thread's own buffer), so any number of decoding
 * threads (decode/workers.h) may share one prepared model.
 */
#ifndef PREPARED_H
#define PREPARED_H

#include "kernels/matmul_int8.h"   /* defines: Int8Matrix, Int8Rows */
#include "kernels/matmul_packed.h" /* defines: PackedMatrix */

/* How decoding computes its products: CTranslate2's compute_type names. */
typedef enum { COMPUTE_FLOAT32, COMPUTE_INT8 } ComputeType;
/* "float32", "int8". */
const char *compute_type_name(ComputeType type);

typedef struct {
    int n, k;              /* the weight's rows (outputs) and columns (inputs) */
    ComputeType type;
    PackedMatrix packed;   /* float32, when packed_matches_blas(); else empty */
    PackedMatrix columns;  /* float32, training's packs only (prepared_weight_repack): the
                              weight's columns, for the backward products; else empty */
    Int8Matrix q8;         /* int8 */
} PreparedWeight;

/* Prepares w (N, K), row stride ld_w (a column block of a wider weight: K < ld_w). 0,
 * or -1 for an int8 weight that cannot be quantized (K > INT8_MAX_K). Aborts only when
 * out of memory. */
int prepared_weight_init(PreparedWeight *pw, const float *w, int ld_w, int N, int K, ComputeType type);
/* Prepares an int8 weight from integers and scales as int8_quantize_rows makes them
 * (a model file's int8 rows): q (N, K), scale (N). 0, or -1 (int8_matrix_init's). */
int prepared_weight_init_int8(PreparedWeight *pw, const int8_t *q, const float *scale, int N, int K);
void prepared_weight_free(PreparedWeight *pw);
/* Packs a float32 weight prepared from w (N, K), row stride ld_w, again from w as it is
 * now (a training update changed it), in the buffer it has, and its columns too, for
 * prepared_matmul_nn (their buffer made at the first call): after that, no
 * allocation. Nothing for one that holds no packed form (where packed_matches_blas()
 * is false). */
void prepared_weight_repack(PreparedWeight *pw, const float *w, int ld_w);

/* y (M, N) = x (M, K) · w^T + bias (bias (N) or NULL), ld_* row strides, w (N, K), as
 * matmul_bias; pw: the same (N, K) weight prepared, or NULL. */
void prepared_matmul_bias(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                          const PreparedWeight *pw, const float *bias, int M, int N, int K);
/* y (M, N) += x (M, K) · w^T; w has row stride ld_w, and pw holds the same (N, K)
 * block. */
void prepared_matmul_add(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                         const PreparedWeight *pw, int M, int N, int K);
/* A backward pass's y (M, K) (=, or += with add) x (M, N) · w, w (N, K) with row
 * stride ld_w as pw was prepared from (dx = dy · W of y = x · W^T): linalg.h's
 * matmul_nn_prepacked with pw's columns (packed by prepared_weight_repack), the same
 * bits as cblas_sgemm; pw NULL or without them: cblas_sgemm. */
void prepared_matmul_nn(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                        const PreparedWeight *pw, int add, int M, int N, int K);
#endif
