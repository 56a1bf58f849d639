/* bench_matmul.c — the products of a decoder step, timed: OpenBLAS's sgemm, nmt's
 * matmul_bias (sgemv up to 4 rows, sgemm above), the packed float product
 * (kernels/matmul_packed.h) and the int8 one (kernels/matmul_int8.h, quantizing x each
 * call), each instruction set this CPU runs, on one thread.
 *
 *   build/bench_matmul [ROUNDS] [MS_PER_RUN]     (make bench-matmul runs it)
 *
 * Shapes: M = 1 (greedy, one sentence), 5 (a beam of 5), 64 (a batch), 320 (a batch of
 * beams, an encoder); (N, K) of a Transformer with d 256 and ff 1024 (attention 256 x
 * 256, its fused q/k/v 768 x 256, the feed-forward 1024 x 256 and 256 x 1024), of GRU
 * decoders with hidden 256 and 512 (gates 768 x 256, 1536 x 512), and output layers of
 * 6,000 and 12,274 words (data/mar.txt's target vocabulary).
 *
 * Each method of a shape runs in turn, for about MS_PER_RUN of CPU time, ROUNDS times
 * (A B C ... A B C ...: a load that drifts falls on all alike); the figure is the
 * median time per call, in CPU time of the thread (what other processes do on a shared
 * machine counts less than in wall time). Prints a Markdown table: microseconds per
 * call and each method's speed relative to sgemm (>1: faster).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "kernels/blas.h"
#include "kernels/cpu.h"
#include "kernels/linalg.h"
#include "kernels/matmul_int8.h"
#include "kernels/matmul_packed.h"

enum { SGEMM, MATMUL_BIAS, PACKED_AVX2, PACKED_AVX512, INT8_PORTABLE, INT8_AVX2, INT8_VNNI, METHODS };
static const char *method_names[METHODS] = {"sgemm", "matmul_bias", "packed avx2", "packed avx512",
                                            "int8 portable", "int8 avx2", "int8 vnni"};

typedef struct {
    int M, N, K;
    const float *x, *w, *bias;
    float *y;
    PackedMatrix packed;
    Int8Matrix q;
    Int8Rows rows;
} Shape;

static int method_runs(int m)
{
    switch (m) {
    case PACKED_AVX2: case INT8_AVX2: return kernel_isa_supported(KERNEL_ISA_AVX2);
    case PACKED_AVX512: return kernel_isa_supported(KERNEL_ISA_AVX512);
    case INT8_VNNI: return kernel_isa_supported(KERNEL_ISA_AVX512VNNI);
    default: return 1;
    }
}

static void run_once(int m, Shape *s)
{
    int M = s->M, N = s->N, K = s->K;
    switch (m) {
    case SGEMM:
        for (int r = 0; r < M; r++)
            memcpy(s->y + (long)r * N, s->bias, sizeof(float) * N);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, s->x, K, s->w, K, 1.0f, s->y, N);
        break;
    case MATMUL_BIAS: matmul_bias(s->y, N, s->x, K, s->w, K, s->bias, M, N, K); break;
    case PACKED_AVX2: packed_matmul_isa(KERNEL_ISA_AVX2, s->y, N, s->x, K, &s->packed, s->bias, 0, M, 0, N); break;
    case PACKED_AVX512:
        packed_matmul_isa(KERNEL_ISA_AVX512, s->y, N, s->x, K, &s->packed, s->bias, 0, M, 0, N);
        break;
    default: {
        KernelIsa isa = m == INT8_PORTABLE ? KERNEL_ISA_PORTABLE : m == INT8_AVX2 ? KERNEL_ISA_AVX2
                                                                                 : KERNEL_ISA_AVX512VNNI;
        int8_rows_quantize(&s->rows, s->x, K, M, K);
        int8_matmul_isa(isa, s->y, N, &s->rows, &s->q, s->bias, 0, 0, N);
    }
    }
}

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    blas_select_kernel(argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    double run_s = (argc > 2 ? atof(argv[2]) : 40) / 1000;
    if (rounds < 1 || run_s <= 0) {
        fprintf(stderr, "usage: bench_matmul [ROUNDS] [MS_PER_RUN]\n");
        return 2;
    }
    blas_set_threads(1);
    int Ms[] = {1, 5, 64, 320};
    int NKs[][2] = {{256, 256}, {768, 256}, {1024, 256}, {256, 1024}, {1536, 512}, {6000, 256}, {12274, 256}};
    const char *what[] = {"attention", "q/k/v, GRU 256 gates", "feed-forward in", "feed-forward out",
                          "GRU 512 gates", "output 6k", "output 12k"};
    printf("OpenBLAS kernel %s, one thread; %d rounds of ~%.0f ms per method, median CPU time per call\n\n",
           blas_kernel_name(), rounds, run_s * 1000);
    printf("| M | N x K | layer |");
    for (int m = 0; m < METHODS; m++)
        if (method_runs(m)) printf(" %s us |", method_names[m]);
    for (int m = 1; m < METHODS; m++)
        if (method_runs(m)) printf(" %s / sgemm |", method_names[m]);
    printf("\n|---:|---|---|");
    for (int m = 0; m < METHODS; m++)
        if (method_runs(m)) printf("---:|");
    for (int m = 1; m < METHODS; m++)
        if (method_runs(m)) printf("---:|");
    printf("\n");
    Rng rng;
    rng_seed(&rng, 1);
    for (size_t si = 0; si < sizeof Ms / sizeof Ms[0]; si++)
        for (size_t ni = 0; ni < sizeof NKs / sizeof NKs[0]; ni++) {
            Shape s = {.M = Ms[si], .N = NKs[ni][0], .K = NKs[ni][1]};
            long nx = (long)s.M * s.K, nw = (long)s.N * s.K;
            float *x = xmalloc(sizeof(float) * nx), *w = xmalloc(sizeof(float) * nw), *b = xmalloc(sizeof(float) * s.N);
            for (long i = 0; i < nx; i++) x[i] = rng_uniform(&rng) * 2 - 1;
            for (long i = 0; i < nw; i++) w[i] = (rng_uniform(&rng) * 2 - 1) * 0.1f;
            for (int j = 0; j < s.N; j++) b[j] = rng_uniform(&rng);
            s.x = x;
            s.w = w;
            s.bias = b;
            s.y = xmalloc(sizeof(float) * s.M * s.N);
            packed_matrix_init(&s.packed, w, s.K, s.N, s.K);
            int8_t *q = xmalloc((size_t)nw);
            float *scale = xmalloc(sizeof(float) * s.N);
            int8_quantize_rows(q, scale, w, s.K, s.N, s.K);
            int8_matrix_init(&s.q, q, scale, s.N, s.K);
            double times[METHODS][64];
            long calls[METHODS];
            for (int m = 0; m < METHODS; m++) { /* calls per run, from a first timing */
                if (!method_runs(m)) continue;
                double t0 = thread_seconds();
                long n = 0;
                while (thread_seconds() - t0 < run_s / 4) {
                    run_once(m, &s);
                    n++;
                }
                calls[m] = n * 4 > 0 ? n * 4 : 1;
            }
            for (int r = 0; r < rounds && r < 64; r++)
                for (int m = 0; m < METHODS; m++) {
                    if (!method_runs(m)) continue;
                    double t0 = thread_seconds();
                    for (long i = 0; i < calls[m]; i++)
                        run_once(m, &s);
                    times[m][r] = (thread_seconds() - t0) / calls[m];
                }
            double med[METHODS] = {0};
            for (int m = 0; m < METHODS; m++) {
                if (!method_runs(m)) continue;
                int n = rounds < 64 ? rounds : 64;
                qsort(times[m], n, sizeof(double), compare_doubles);
                med[m] = n % 2 ? times[m][n / 2] : (times[m][n / 2 - 1] + times[m][n / 2]) / 2;
            }
            printf("| %d | %d x %d | %s |", s.M, s.N, s.K, what[ni]);
            for (int m = 0; m < METHODS; m++)
                if (method_runs(m)) printf(" %.1f |", med[m] * 1e6);
            for (int m = 1; m < METHODS; m++)
                if (method_runs(m)) printf(" %.2f |", med[SGEMM] / med[m]);
            printf("\n");
            fflush(stdout);
            packed_matrix_free(&s.packed);
            int8_matrix_free(&s.q);
            int8_rows_free(&s.rows);
            free(x);
            free(w);
            free(b);
            free(s.y);
            free(q);
            free(scale);
        }
    return 0;
}
