/* prepared.c — weights prepared for decoding (prepared.h). */
#include "kernels/prepared.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"      /* defines: xmalloc */
#include "kernels/linalg.h" /* defines: matmul_bias, matmul_*_prepacked, packed_matches_blas */

const char *compute_type_name(ComputeType type) { return type == COMPUTE_INT8 ? "int8" : "float32"; }

int prepared_weight_init(PreparedWeight *pw, const float *w, int ld_w, int N, int K, ComputeType type)
{
    memset(pw, 0, sizeof *pw);
    pw->n = N, pw->k = K, pw->type = type;
    if (type == COMPUTE_FLOAT32) {
        /* Only where the packed products give sgemm's bits (linalg.h): elsewhere they
         * would never be used. */
        if (packed_matches_blas()) packed_matrix_init(&pw->packed, w, ld_w, N, K);
        return 0;
    }
    if (K > INT8_MAX_K) return -1;
    int8_t *q = xmalloc((size_t)N * K + 1);
    float *scale = xmalloc(sizeof(float) * (N + 1));
    int8_quantize_rows(q, scale, w, ld_w, N, K);
    int rc = int8_matrix_init(&pw->q8, q, scale, N, K);
    free(q);
    free(scale);
    return rc;
}

int prepared_weight_init_int8(PreparedWeight *pw, const int8_t *q, const float *scale, int N, int K)
{
    memset(pw, 0, sizeof *pw);
    pw->n = N, pw->k = K, pw->type = COMPUTE_INT8;
    return int8_matrix_init(&pw->q8, q, scale, N, K);
}

void prepared_weight_free(PreparedWeight *pw)
{
    packed_matrix_free(&pw->packed);
    if (pw->type == COMPUTE_INT8) int8_matrix_free(&pw->q8);
    memset(pw, 0, sizeof *pw);
}

/* An int8 product's input rows quantized (this call's own: the weight is shared by the
 * decoding threads), then multiplied: y = x · w^T (+ bias, or y += with add). A few
 * rows (every step of a search) are quantized into buffers on this call's stack rather
 * than allocated and freed each time. */
enum { STACK_ROW_BYTES = 8192, STACK_ROW_SCALES = 65 };

static void int8_product(float *y, int ld_y, const float *x, int ld_x, const PreparedWeight *pw, const float *bias,
                         int M, int N, int K, int add)
{
    _Alignas(64) int8_t q[STACK_ROW_BYTES];
    _Alignas(64) uint8_t u[STACK_ROW_BYTES];
    float scale[STACK_ROW_SCALES];
    Int8Rows xq = {0};
    int on_stack = (long)M * ((K + 3) / 4 * 4) + 4 <= STACK_ROW_BYTES && M + 1 <= STACK_ROW_SCALES;
    if (on_stack)
        xq = (Int8Rows){.q = q, .u = u, .scale = scale, .q_cap = STACK_ROW_BYTES, .scale_cap = STACK_ROW_SCALES};
    int8_rows_quantize(&xq, x, ld_x, M, K);
    if (add) int8_matmul_isa(KERNEL_ISA_AVX512VNNI, y, ld_y, &xq, &pw->q8, NULL, 1, 0, N);
    else int8_matmul(y, ld_y, &xq, &pw->q8, bias);
    if (!on_stack) int8_rows_free(&xq);
}

void prepared_matmul_bias(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                          const PreparedWeight *pw, const float *bias, int M, int N, int K)
{
    if (pw && pw->type == COMPUTE_INT8) {
        int8_product(y, ld_y, x, ld_x, pw, bias, M, N, K, 0);
        return;
    }
    matmul_bias_prepacked(y, ld_y, x, ld_x, w, ld_w, pw && pw->packed.panels ? &pw->packed : NULL, bias, M, N, K);
}

void prepared_matmul_add(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                         const PreparedWeight *pw, int M, int N, int K)
{
    if (pw && pw->type == COMPUTE_INT8) {
        int8_product(y, ld_y, x, ld_x, pw, NULL, M, N, K, 1);
        return;
    }
    matmul_add_prepacked(y, ld_y, x, ld_x, w, ld_w, pw && pw->packed.panels ? &pw->packed : NULL, M, N, K);
}
