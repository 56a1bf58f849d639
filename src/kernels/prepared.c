/* prepared.c — weights prepared for decoding (prepared.h). */
#include "kernels/prepared.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
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
    packed_matrix_free(&pw->columns);
    if (pw->type == COMPUTE_INT8) int8_matrix_free(&pw->q8);
    memset(pw, 0, sizeof *pw);
}

void prepared_weight_repack(PreparedWeight *pw, const float *w, int ld_w)
{
    if (pw->type != COMPUTE_FLOAT32 || !pw->packed.panels) return;
    packed_matrix_pack(&pw->packed, w, ld_w, pw->n, pw->k);
    packed_matrix_pack_columns(&pw->columns, w, ld_w, pw->k, pw->n);
}

void prepared_matmul_nn(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w,
                        const PreparedWeight *pw, int add, int M, int N, int K)
{
    const PackedMatrix *columns = pw && pw->columns.panels ? &pw->columns : NULL;
    matmul_nn_prepacked(y, ld_y, x, ld_x, w, ld_w, columns, add, M, K, N);
}

/* Each thread's quantized input rows, reused from product to product (their buffers
 * grow to the largest batch the thread multiplies, int8_rows_quantize): a prepared
 * weight is shared by the decoding threads, this scratch is not. A thread's is freed
 * when the thread ends (the key's destructor); the main thread's lives until exit. */
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *scratch)
{
    int8_rows_free(scratch);
    free(scratch);
}

static void scratch_init(void)
{
    if (pthread_key_create(&scratch_key, scratch_free) != 0) {
        fprintf(stderr, "nmt: out of thread-specific keys\n");
        abort();
    }
}

static Int8Rows *thread_scratch(void)
{
    pthread_once(&scratch_once, scratch_init);
    Int8Rows *scratch = pthread_getspecific(scratch_key);
    if (!scratch) {
        scratch = xcalloc(1, sizeof *scratch);
        if (pthread_setspecific(scratch_key, scratch) != 0) {
            fprintf(stderr, "nmt: out of memory for thread-specific data\n");
            abort();
        }
    }
    return scratch;
}

/* An int8 product: x's rows quantized into the thread's scratch, then y = x · w^T (+
 * bias), or y += x · w^T with add. */
static void int8_product(float *y, int ld_y, const float *x, int ld_x, const PreparedWeight *pw, const float *bias,
                         int M, int N, int K, int add)
{
    Int8Rows *xq = thread_scratch();
    int8_rows_quantize(xq, x, ld_x, M, K);
    if (add) int8_matmul_isa(KERNEL_ISA_AVX512VNNI, y, ld_y, xq, &pw->q8, NULL, 1, 0, N);
    else int8_matmul(y, ld_y, xq, &pw->q8, bias);
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
