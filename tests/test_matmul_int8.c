/* test_matmul_int8.c — the int8 products (kernels/matmul_int8.h): quantization (the
 * rounding, the bound, zero and non-finite rows, -128 never made), the integer
 * products exact against an int64 reference (extreme values included: where AVX2's
 * vpmaddubsw would saturate and where VNNI's shift of x by 128 must be undone), every
 * instruction set this CPU runs bit for bit equal to the portable C, odd sizes (1 row,
 * 1 output, K not a multiple of 4, 16 or 64, ranges of outputs), and the error of a
 * whole quantized product against the float product within its analytic bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/util.h"
#include "kernels/matmul_int8.h"

static const KernelIsa isas[] = {KERNEL_ISA_PORTABLE, KERNEL_ISA_AVX2, KERNEL_ISA_AVX512VNNI};
#define N_ISAS 3

static float *random_floats(Rng *rng, long n, float range)
{
    float *m = xmalloc(sizeof(float) * (n ? n : 1));
    for (long i = 0; i < n; i++)
        m[i] = (rng_uniform(rng) * 2 - 1) * range;
    return m;
}

static void check_quantization(Rng *rng)
{
    /* Half-way cases round to even: max 127 makes the scale 1 and q = round(v). */
    float v[8] = {127, 0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -126.5f, 3.49f};
    int8_t q[8], want[8] = {127, 0, 2, 2, 0, -2, -126, 3};
    float scale;
    int8_quantize_rows(q, &scale, v, 8, 1, 8);
    CHECK(scale == 1.0f && memcmp(q, want, 8) == 0, "rounding half to even, scale max/127");

    float zero[5] = {0}, bad[5] = {1, 2, NAN, 4, 5}, inf[3] = {1, INFINITY, -2};
    int8_t qz[5] = {1, 1, 1, 1, 1};
    int8_quantize_rows(qz, &scale, zero, 5, 1, 5);
    CHECK(scale == 0.0f && !qz[0] && !qz[4], "a row of zeros: scale 0, q 0");
    int8_quantize_rows(qz, &scale, bad, 5, 1, 5);
    CHECK(isnan(scale) && !qz[0] && !qz[3], "a row with a NaN: scale NaN, q 0");
    int8_quantize_rows(qz, &scale, inf, 3, 1, 3);
    CHECK(isnan(scale), "a row with an infinity: scale NaN");

    /* Random rows of very different ranges: |v - scale q| <= scale / 2 (+ a float
     * rounding), the largest |v| goes to +-127, and -128 never appears. */
    int N = 50, K = 77, ok_bound = 1, ok_range = 1, ok_peak = 1;
    float *w = random_floats(rng, (long)N * K, 1), *s = xmalloc(sizeof(float) * N);
    for (int j = 0; j < N; j++)
        for (int k = 0; k < K; k++)
            w[j * K + k] *= powf(10.0f, (float)(j % 7) - 3);
    int8_t *qw = xmalloc((size_t)N * K);
    int8_quantize_rows(qw, s, w, K, N, K);
    for (int j = 0; j < N; j++) {
        int peak = 0;
        for (int k = 0; k < K; k++) {
            float err = fabsf(w[j * K + k] - s[j] * qw[j * K + k]);
            if (err > s[j] * 0.5f * (1 + 1e-5f) + 1e-30f) ok_bound = 0;
            if (qw[j * K + k] == -128) ok_range = 0;
            if (abs(qw[j * K + k]) > peak) peak = abs(qw[j * K + k]);
        }
        if (peak != 127) ok_peak = 0;
    }
    CHECK(ok_bound, "|w - scale q| <= scale / 2 on rows from 1e-3 to 1e3");
    CHECK(ok_range, "q never -128");
    CHECK(ok_peak, "each row's largest |w| becomes 127");
    free(w);
    free(s);
    free(qw);
}

/* Rows of x given as integers: scale 1 for both sides, so y = the integer product. */
static void set_rows(Int8Rows *a, const int8_t *q, int M, int K)
{
    float *x = xmalloc(sizeof(float) * M * K);
    for (int r = 0; r < M; r++) {
        int peak = 0;
        for (int k = 0; k < K; k++) {
            x[r * K + k] = q[r * K + k];
            if (abs(q[r * K + k]) > peak) peak = abs(q[r * K + k]);
        }
        /* pin the scale at 1: the quantizer maps the peak to 127, so put one 127 in */
        if (peak != 127) x[r * K] = 127;
    }
    int8_rows_quantize(a, x, K, M, K);
    free(x);
}

/* The integer products, exact: every instruction set against an int64 reference. */
static void check_exact(Rng *rng, int M, int N, int K, int fill, const char *what)
{
    int8_t *qx = xmalloc((size_t)M * K + 1), *qw = xmalloc((size_t)N * K + 1);
    for (long i = 0; i < (long)M * K; i++)
        qx[i] = fill == 1 ? 127 : fill == 2 ? -127 : (int8_t)((int)rng_below(rng, 255) - 127);
    for (long i = 0; i < (long)N * K; i++)
        qw[i] = fill == 1 ? 127 : fill == 2 ? ((i & 1) ? 127 : -127) : (int8_t)((int)rng_below(rng, 255) - 127);
    Int8Rows a = {0};
    set_rows(&a, qx, M, K);
    float *ones = xmalloc(sizeof(float) * N), *ref = xmalloc(sizeof(float) * M * N), *y = xmalloc(sizeof(float) * M * N);
    for (int j = 0; j < N; j++)
        ones[j] = 1.0f;
    Int8Matrix w;
    CHECK(int8_matrix_init(&w, qw, ones, N, K) == 0, "int8_matrix_init");
    for (int r = 0; r < M; r++)
        for (int j = 0; j < N; j++) {
            long long acc = 0;
            for (int k = 0; k < K; k++)
                acc += (long long)a.q[(long)r * a.k4 + k] * qw[(long)j * K + k];
            ref[r * N + j] = (float)acc;
        }
    for (int i = 0; i < N_ISAS; i++) {
        if (!kernel_isa_supported(isas[i])) continue;
        memset(y, 0xff, sizeof(float) * M * N);
        int8_matmul_isa(isas[i], y, N, &a, &w, NULL, 0, 0, N);
        char label[128];
        snprintf(label, sizeof label, "%s exact, %s, M %d N %d K %d", kernel_isa_name(isas[i]), what, M, N, K);
        check_identical(y, ref, (long)M * N, label);
    }
    int8_matrix_free(&w);
    int8_rows_free(&a);
    free(qx);
    free(qw);
    free(ones);
    free(ref);
    free(y);
}

/* Float inputs, every instruction set against the portable C, bit for bit, with a
 * bias, without, accumulating, on a range of outputs; the rest of y untouched. */
static void check_variants(Rng *rng, int M, int N, int K, int j0, int j1)
{
    int ld_x = K + 2, ld_y = N + 3;
    float *x = random_floats(rng, (long)M * ld_x, 3), *wf = random_floats(rng, (long)N * K, 0.2f);
    float *bias = random_floats(rng, N, 1), *y0 = random_floats(rng, (long)M * ld_y, 1);
    float *y = xmalloc(sizeof(float) * M * ld_y), *ref = xmalloc(sizeof(float) * M * ld_y);
    int8_t *q = xmalloc((size_t)N * K + 1);
    float *scale = xmalloc(sizeof(float) * (N + 1));
    int8_quantize_rows(q, scale, wf, K, N, K);
    Int8Matrix w;
    int8_matrix_init(&w, q, scale, N, K);
    Int8Rows a = {0};
    int8_rows_quantize(&a, x, ld_x, M, K);
    for (int mode = 0; mode < 3; mode++) {
        const float *b = mode == 0 ? bias : NULL;
        memcpy(ref, y0, sizeof(float) * M * ld_y);
        int8_matmul_isa(KERNEL_ISA_PORTABLE, ref, ld_y, &a, &w, b, mode == 2, j0, j1);
        for (int i = 1; i < N_ISAS; i++) {
            if (!kernel_isa_supported(isas[i])) continue;
            memcpy(y, y0, sizeof(float) * M * ld_y);
            int8_matmul_isa(isas[i], y, ld_y, &a, &w, b, mode == 2, j0, j1);
            char label[128];
            snprintf(label, sizeof label, "%s = portable, M %d N %d K %d [%d,%d) %s", kernel_isa_name(isas[i]), M, N,
                     K, j0, j1, mode == 0 ? "bias" : mode == 1 ? "no bias" : "add");
            check_identical(y, ref, (long)M * ld_y, label);
        }
    }
    int8_rows_free(&a);
    int8_matrix_free(&w);
    free(x);
    free(wf);
    free(bias);
    free(y0);
    free(y);
    free(ref);
    free(q);
    free(scale);
}

/* The whole quantized product against the float one (in double), element by element,
 * within the bound of the two quantizations: each term x w becomes (x + dx)(w + dw)
 * with |dx| <= sx / 2, |dw| <= sw / 2. */
static void check_error_bound(Rng *rng, int M, int N, int K)
{
    float *x = random_floats(rng, (long)M * K, 2), *wf = random_floats(rng, (long)N * K, 0.1f);
    float *bias = random_floats(rng, N, 1), *y = xmalloc(sizeof(float) * M * N);
    int8_t *q = xmalloc((size_t)N * K);
    float *scale = xmalloc(sizeof(float) * N);
    int8_quantize_rows(q, scale, wf, K, N, K);
    Int8Matrix w;
    int8_matrix_init(&w, q, scale, N, K);
    Int8Rows a = {0};
    int8_rows_quantize(&a, x, K, M, K);
    int8_matmul(y, N, &a, &w, bias);
    int within = 1;
    double worst = 0, worst_rel = 0;
    for (int r = 0; r < M; r++)
        for (int j = 0; j < N; j++) {
            double exact = bias[j], bound = 0;
            for (int k = 0; k < K; k++) {
                double xv = x[r * K + k], wv = wf[j * K + k], dx = a.scale[r] / 2, dw = scale[j] / 2;
                exact += xv * wv;
                bound += fabs(xv) * dw + fabs(wv) * dx + dx * dw;
            }
            bound = bound * (1 + 1e-4) + 1e-6 * (fabs(exact) + 1); /* the float epilogue's roundings */
            double err = fabs(y[r * N + j] - exact);
            if (err > bound) within = 0;
            if (err > worst) worst = err;
            if (err / bound > worst_rel) worst_rel = err / bound;
        }
    char label[128];
    snprintf(label, sizeof label, "error within the quantization bound, M %d N %d K %d", M, N, K);
    CHECK(within, label);
    printf("  (M %d N %d K %d: largest error %.3g, %.0f%% of its bound)\n", M, N, K, worst, 100 * worst_rel);
    int8_rows_free(&a);
    int8_matrix_free(&w);
    free(x);
    free(wf);
    free(bias);
    free(y);
    free(q);
    free(scale);
}

/* A NaN in one input row makes that row's outputs NaN and leaves the others alone. */
static void check_nonfinite(Rng *rng)
{
    int M = 3, N = 20, K = 9;
    float *x = random_floats(rng, M * K, 1), *wf = random_floats(rng, N * K, 1), y[3 * 20];
    x[K + 4] = NAN;
    int8_t q[20 * 9];
    float scale[20];
    int8_quantize_rows(q, scale, wf, K, N, K);
    Int8Matrix w;
    int8_matrix_init(&w, q, scale, N, K);
    Int8Rows a = {0};
    int8_rows_quantize(&a, x, K, M, K);
    for (int i = 0; i < N_ISAS; i++) {
        if (!kernel_isa_supported(isas[i])) continue;
        int8_matmul_isa(isas[i], y, N, &a, &w, NULL, 0, 0, N);
        int ok = 1;
        for (int j = 0; j < N; j++)
            ok &= !isnan(y[j]) && isnan(y[N + j]) && !isnan(y[2 * N + j]);
        char label[96];
        snprintf(label, sizeof label, "%s: a NaN input makes its row NaN, only", kernel_isa_name(isas[i]));
        CHECK(ok, label);
    }
    int8_rows_free(&a);
    int8_matrix_free(&w);
    free(x);
    free(wf);
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 8);
    printf("  (instruction sets:");
    for (int i = 0; i < N_ISAS; i++)
        if (kernel_isa_supported(isas[i])) printf(" %s", kernel_isa_name(isas[i]));
    printf(")\n");
    check_quantization(&rng);

    int8_t minus128[2] = {1, -128};
    float s2[1] = {1};
    Int8Matrix bad;
    CHECK(int8_matrix_init(&bad, minus128, s2, 1, 2) == -1, "int8_matrix_init refuses -128");
    CHECK(int8_matrix_init(&bad, minus128, s2, 1, INT8_MAX_K + 1) == -1, "int8_matrix_init refuses K > INT8_MAX_K");

    check_exact(&rng, 1, 1, 1, 0, "random");
    check_exact(&rng, 5, 37, 63, 0, "random");
    check_exact(&rng, 7, 64, 257, 0, "random");
    check_exact(&rng, 13, 17, 1000, 0, "random");
    check_exact(&rng, 3, 33, 4096, 1, "all +127 (AVX2 pairs at 32258)");
    check_exact(&rng, 2, 20, 4095, 2, "x -127, w +-127");
    check_exact(&rng, 1, 16, 65536, 1, "K = INT8_MAX_K, all +127");

    int shapes[][3] = {{1, 1, 1}, {1, 16, 16}, {1, 17, 3}, {2, 33, 5}, {3, 15, 64}, {4, 50, 65}, {5, 64, 100},
                       {6, 100, 31}, {7, 129, 255}, {11, 40, 1}, {64, 70, 40}, {20, 1, 7}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_variants(&rng, shapes[i][0], shapes[i][1], shapes[i][2], 0, shapes[i][1]);
    check_variants(&rng, 5, 100, 70, 32, 91); /* a range of outputs, as a thread would take */

    check_error_bound(&rng, 5, 64, 256);
    check_error_bound(&rng, 2, 30, 1024);
    check_nonfinite(&rng);
    return check_report("test_matmul_int8");
}
