/* test_matmul_packed.c — the packed float products (kernels/matmul_packed.h) against a
 * scalar chain of fmaf in the documented order, bit for bit, for every instruction set
 * this CPU runs, at awkward sizes (1 row, 1 output, K not a multiple of 16, K over
 * several blocks of 448, a panel left over); against cblas_sgemm, bit for bit, where
 * packed_matches_blas says they agree (this machine's OpenBLAS kernel), through
 * matmul_bias_prepacked too; the packed columns of a weight against cblas_sgemm's
 * NoTrans/NoTrans products (a backward pass's), through matmul_nn_prepacked too; and
 * the result of a row does not depend on the rows beside it. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/util.h"
#include "kernels/blas.h"
#include "kernels/linalg.h"
#include "kernels/matmul_packed.h"

static float *random_floats(Rng *rng, long n)
{
    float *m = xmalloc(sizeof(float) * (n ? n : 1));
    for (long i = 0; i < n; i++)
        m[i] = rng_uniform(rng) * 2 - 1;
    return m;
}

/* The documented order: y = start; per block, y = y + (fmaf chain from 0). */
static void reference(float *y, int ld_y, const float *x, int ld_x, const float *w, int ld_w, const float *bias,
                      int add, int M, int K, int j0, int j1, int fused)
{
    for (int r = 0; r < M; r++)
        for (int j = j0; j < j1; j++) {
            float sum = add ? y[(long)r * ld_y + j] : bias ? bias[j] : 0.0f;
            for (int k0 = 0; k0 < K;) {
                int kb = K - k0 >= 2 * PACKED_BLOCK_K ? PACKED_BLOCK_K
                       : K - k0 > PACKED_BLOCK_K      ? ((K - k0) / 2 + 15) / 16 * 16
                                                      : K - k0;
                float acc = 0.0f;
                for (int k = k0; k < k0 + kb; k++) {
                    float a = x[(long)r * ld_x + k], b = w[(long)j * ld_w + k];
                    acc = fused ? fmaf(a, b, acc) : a * b + acc;
                }
                sum = sum + acc;
                k0 += kb;
            }
            y[(long)r * ld_y + j] = sum;
        }
}

/* One shape, every instruction set, with a bias, without, and accumulating; outputs
 * [j0, j1) only, the rest of y must stay untouched. */
static void check_shape(Rng *rng, int M, int N, int K, int j0, int j1)
{
    int ld_x = K + 3, ld_w = K + 1, ld_y = N + 2;
    float *x = random_floats(rng, (long)M * ld_x), *w = random_floats(rng, (long)N * ld_w);
    float *bias = random_floats(rng, N), *y0 = random_floats(rng, (long)M * ld_y);
    float *y = xmalloc(sizeof(float) * M * ld_y), *ref = xmalloc(sizeof(float) * M * ld_y);
    PackedMatrix p;
    packed_matrix_init(&p, w, ld_w, N, K);
    for (int isa = KERNEL_ISA_PORTABLE; isa <= KERNEL_ISA_AVX512; isa++) {
        if (!kernel_isa_supported(isa)) continue;
        /* The FMA instruction sets, and portable C where fmaf is an instruction, must
         * match the fused chain exactly; the baseline's multiply-add is within rounding. */
        int exact = isa != KERNEL_ISA_PORTABLE;
#ifdef FP_FAST_FMAF
        exact = 1;
#endif
        for (int mode = 0; mode < 3; mode++) {
            const float *b = mode == 0 ? bias : NULL;
            int add = mode == 2;
            memcpy(y, y0, sizeof(float) * M * ld_y);
            memcpy(ref, y0, sizeof(float) * M * ld_y);
            packed_matmul_isa(isa, y, ld_y, x, ld_x, &p, b, add, M, j0, j1);
            reference(ref, ld_y, x, ld_x, w, ld_w, b, add, M, K, j0, j1, exact);
            char label[128];
            snprintf(label, sizeof label, "%s M %d N %d K %d [%d,%d) %s", kernel_isa_name(isa), M, N, K, j0, j1,
                     mode == 0 ? "bias" : mode == 1 ? "no bias" : "add");
            if (exact) {
                check_identical(y, ref, (long)M * ld_y, label);
            } else {
                /* two roundings per step instead of one: within K ulps of the sum of |x w| */
                check_close(y, ref, (long)M * ld_y, 1e-6 * K, label);
            }
        }
    }
    packed_matrix_free(&p);
    free(x);
    free(w);
    free(bias);
    free(y0);
    free(y);
    free(ref);
}

/* Bit for bit against cblas_sgemm where packed_matches_blas (on one OpenBLAS thread),
 * through the packed product and through matmul_bias_prepacked (which must equal
 * matmul_bias whatever M, the OpenBLAS kernel and its threads). */
static void check_blas(Rng *rng, int M, int N, int K)
{
    float *x = random_floats(rng, (long)M * K), *w = random_floats(rng, (long)N * K), *bias = random_floats(rng, N);
    float *y = xmalloc(sizeof(float) * M * N), *ref = xmalloc(sizeof(float) * M * N);
    PackedMatrix p;
    packed_matrix_init(&p, w, K, N, K);
    char label[128];
    matmul_bias(ref, N, x, K, w, K, bias, M, N, K);
    matmul_bias_prepacked(y, N, x, K, w, K, &p, bias, M, N, K);
    snprintf(label, sizeof label, "matmul_bias_prepacked = matmul_bias, M %d N %d K %d", M, N, K);
    check_identical(y, ref, (long)M * N, label);
    memcpy(y, bias, sizeof(float) * N);
    memcpy(ref, bias, sizeof(float) * N);
    matmul_add(ref, N, x, K, w, K, 1, N, K);
    matmul_add_prepacked(y, N, x, K, w, K, &p, 1, N, K);
    snprintf(label, sizeof label, "matmul_add_prepacked = matmul_add, M 1 N %d K %d", N, K);
    check_identical(y, ref, N, label);
    if (packed_matches_blas() && M > MATMUL_GEMV_ROWS && blas_thread_count() == 1) {
        for (int r = 0; r < M; r++)
            memcpy(ref + (long)r * N, bias, sizeof(float) * N);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, x, K, w, K, 1.0f, ref, N);
        for (int isa = KERNEL_ISA_AVX2; isa <= KERNEL_ISA_AVX512; isa++) {
            if (!kernel_isa_supported(isa)) continue;
            packed_matmul_isa(isa, y, N, x, K, &p, bias, 0, M, 0, N);
            snprintf(label, sizeof label, "%s = cblas_sgemm (%s), M %d N %d K %d", kernel_isa_name(isa),
                     blas_kernel_name(), M, N, K);
            check_identical(y, ref, (long)M * N, label);
        }
    }
    packed_matrix_free(&p);
    free(x);
    free(w);
    free(bias);
    free(y);
    free(ref);
}

/* A backward pass's y (=, +=) x · w (w (K, N), its columns packed) against cblas_sgemm
 * NoTrans/NoTrans, bit for bit where packed_matches_blas (on one OpenBLAS thread, and
 * above MATMUL_NN_SMALL), through matmul_nn_prepacked and the packed product itself;
 * matmul_nn_prepacked equals cblas_sgemm whatever the shape. */
static void check_blas_nn(Rng *rng, int M, int N, int K)
{
    int ld_x = K + 1, ld_w = N + 3, ld_y = N + 2;
    float *x = random_floats(rng, (long)M * ld_x), *w = random_floats(rng, (long)K * ld_w);
    float *y0 = random_floats(rng, (long)M * ld_y), *y = xmalloc(sizeof(float) * M * ld_y);
    float *ref = xmalloc(sizeof(float) * M * ld_y);
    PackedMatrix p = {0};
    packed_matrix_pack_columns(&p, w, ld_w, N, K);
    int packs = packed_matches_blas() && (double)M * N * K > MATMUL_NN_SMALL && M <= PACKED_MAX_ROWS;
    for (int add = 0; add < 2; add++) {
        char label[128];
        memcpy(ref, y0, sizeof(float) * M * ld_y);
        memcpy(y, y0, sizeof(float) * M * ld_y);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, x, ld_x, w, ld_w, add ? 1.0f : 0.0f, ref,
                    ld_y);
        matmul_nn_prepacked(y, ld_y, x, ld_x, w, ld_w, &p, add, M, N, K);
        snprintf(label, sizeof label, "matmul_nn_prepacked = cblas_sgemm NN, M %d N %d K %d, beta %d", M, N, K, add);
        check_identical(y, ref, (long)M * ld_y, label);
        if (!packs) continue;
        memcpy(y, y0, sizeof(float) * M * ld_y);
        if (add) packed_matmul_add(y, ld_y, x, ld_x, &p, M);
        else packed_matmul_bias(y, ld_y, x, ld_x, &p, NULL, M);
        snprintf(label, sizeof label, "packed columns = cblas_sgemm NN (%s), M %d N %d K %d, beta %d",
                 blas_kernel_name(), M, N, K, add);
        check_identical(y, ref, (long)M * ld_y, label);
    }
    packed_matrix_free(&p);
    free(x);
    free(w);
    free(y0);
    free(y);
    free(ref);
}

/* A row's output is the same computed alone or in any batch. */
static void check_rows_independent(Rng *rng)
{
    int M = 13, N = 70, K = 300;
    float *x = random_floats(rng, (long)M * K), *w = random_floats(rng, (long)N * K), *bias = random_floats(rng, N);
    float *all = xmalloc(sizeof(float) * M * N), *one = xmalloc(sizeof(float) * N);
    PackedMatrix p;
    packed_matrix_init(&p, w, K, N, K);
    packed_matmul_bias(all, N, x, K, &p, bias, M);
    for (int r = 0; r < M; r++) {
        packed_matmul_bias(one, N, x + (long)r * K, K, &p, bias, 1);
        char label[64];
        snprintf(label, sizeof label, "row %d alone = the same row among 13", r);
        check_identical(one, all + (long)r * N, N, label);
    }
    packed_matrix_free(&p);
    free(x);
    free(w);
    free(bias);
    free(all);
    free(one);
}

int main(int argc, char **argv)
{
    (void)argc;
    /* OpenBLAS's kernel as nmt gets it (blas.h): this may start the test again. */
    blas_select_kernel(argv);
    Rng rng;
    rng_seed(&rng, 31);
    printf("  (OpenBLAS kernel %s; instruction sets:", blas_kernel_name());
    for (int isa = KERNEL_ISA_PORTABLE; isa <= KERNEL_ISA_AVX512; isa++)
        if (kernel_isa_supported(isa)) printf(" %s", kernel_isa_name(isa));
    printf(")\n");

    int shapes[][3] = {{1, 1, 1},   {1, 16, 16},  {1, 17, 3},   {2, 33, 5},    {3, 15, 64},  {5, 50, 17},
                       {6, 64, 100}, {7, 129, 31}, {12, 40, 449}, {13, 20, 900}, {5, 37, 1000}, {1, 48, 1024},
                       {20, 3, 7},   {64, 65, 40}, {4, 1, 2000}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_shape(&rng, shapes[i][0], shapes[i][1], shapes[i][2], 0, shapes[i][1]);
    check_shape(&rng, 5, 100, 70, 16, 99); /* a range of outputs, as a thread would take */
    check_shape(&rng, 3, 40, 0, 0, 40);    /* K = 0: y = bias */

    int decoder[][3] = {{5, 256, 256}, {5, 1024, 256}, {5, 256, 1024}, {5, 6007, 256}, {16, 768, 256},
                        {64, 256, 1024}, {3, 512, 512}, {8, 1536, 512}};
    for (size_t i = 0; i < sizeof decoder / sizeof decoder[0]; i++)
        check_blas(&rng, decoder[i][0], decoder[i][1], decoder[i][2]);
    if (!packed_matches_blas())
        printf("  (OpenBLAS's %s kernel sums otherwise: matmul_*_prepacked use it, checked above)\n",
               blas_kernel_name());
    /* On two OpenBLAS threads sgemm sums some products otherwise (K 449, 600 and 900
     * were measured): matmul_*_prepacked must still give matmul_bias's bits there (nmt
     * translate --threads 2 with one worker decodes so). */
    blas_set_threads(2);
    int threaded[][3] = {{8, 1536, 449}, {32, 512, 600}, {64, 1024, 900}, {16, 768, 256}, {5, 6007, 900}};
    for (size_t i = 0; i < sizeof threaded / sizeof threaded[0]; i++)
        check_blas(&rng, threaded[i][0], threaded[i][1], threaded[i][2]);
    /* The recurrent layers' backward products dgates · W (one OpenBLAS thread, as under
     * training's workers): M rows of a step, N = hidden, K = 3 or 4 hidden (plus the
     * fused query), and the attention's. */
    blas_set_threads(1);
    int backward[][3] = {{1, 512, 2048}, {4, 256, 1024}, {5, 512, 1536}, {17, 160, 640}, {32, 512, 2048},
                         {64, 256, 768}, {33, 300, 900}, {12, 1024, 512}, {8, 96, 449}, {64, 80, 240}};
    for (size_t i = 0; i < sizeof backward / sizeof backward[0]; i++)
        check_blas_nn(&rng, backward[i][0], backward[i][1], backward[i][2]);
    check_rows_independent(&rng);
    return check_report("test_matmul_packed");
}
