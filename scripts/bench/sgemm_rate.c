/* sgemm_rate.c — OpenBLAS sgemm throughput at given shapes, for the roofline of `make bench`.
 *
 * scripts/bench/bench.py asks how fast OpenBLAS multiplies matrices of exactly the shapes nmt's
 * training step uses (input projections, per-step recurrent products, the output layer
 * and the backward products), on the same kernel and thread count, so that nmt's
 * throughput can be stated as a fraction of what its matrix products alone would allow.
 *
 * Build and run (bench.py does this):
 *   cc -O2 -I/usr/include/x86_64-linux-gnu -o build/sgemm_rate scripts/bench/sgemm_rate.c -lopenblas
 *   printf 'out_fwd N T 512 12530 512\n' | OPENBLAS_CORETYPE=SkylakeX build/sgemm_rate 2 0.05 5
 *
 * Arguments: THREADS (openblas_set_num_threads), SECONDS (the least time one trial
 * runs), TRIALS. Standard input: one product per line, "NAME TA TB M N K", where TA and
 * TB are N or T as in cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, ...): C (M, N) =
 * op(A) op(B), op(A) (M, K), op(B) (K, N), all contiguous, beta 1 as in nmt's
 * accumulating products. Standard output: a comment line with the kernel and threads,
 * then per input line "NAME TA TB M N K GFLOPS" with GFLOPS = 2 M N K / time of the best
 * trial (the best, since the machine is shared and a slow trial measures the neighbours).
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *random_matrix(long n)
{
    float *a = malloc(sizeof(float) * (n > 0 ? n : 1));
    if (!a) {
        fprintf(stderr, "sgemm_rate: out of memory\n");
        exit(3);
    }
    unsigned s = 12345;
    for (long i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        a[i] = (float)((s >> 9) & 0xffff) / 65536.0f - 0.5f;
    }
    return a;
}

/* Best GFLOP/s over `trials` trials of at least `min_seconds` each. */
static double measure(int ta, int tb, int M, int N, int K, double min_seconds, int trials)
{
    float *a = random_matrix((long)M * K), *b = random_matrix((long)K * N), *c = random_matrix((long)M * N);
    enum CBLAS_TRANSPOSE op_a = ta ? CblasTrans : CblasNoTrans, op_b = tb ? CblasTrans : CblasNoTrans;
    int lda = ta ? M : K, ldb = tb ? K : N;
    double flops = 2.0 * M * N * K, best = 0;
    for (int w = 0; w < 2; w++)
        cblas_sgemm(CblasRowMajor, op_a, op_b, M, N, K, 1.0f, a, lda, b, ldb, 1.0f, c, N);
    for (int t = 0; t < trials; t++) {
        long reps = 0;
        double start = now_seconds(), elapsed;
        do {
            cblas_sgemm(CblasRowMajor, op_a, op_b, M, N, K, 1.0f, a, lda, b, ldb, 1.0f, c, N);
            reps++;
            elapsed = now_seconds() - start;
        } while (elapsed < min_seconds);
        double rate = flops * reps / elapsed / 1e9;
        if (rate > best) best = rate;
    }
    free(a);
    free(b);
    free(c);
    return best;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: sgemm_rate THREADS SECONDS TRIALS < shapes (NAME TA TB M N K per line)\n");
        return 2;
    }
    int threads = atoi(argv[1]), trials = atoi(argv[3]);
    double min_seconds = atof(argv[2]);
    if (threads < 1 || trials < 1 || min_seconds <= 0) {
        fprintf(stderr, "sgemm_rate: THREADS and TRIALS must be >= 1, SECONDS > 0\n");
        return 2;
    }
    openblas_set_num_threads(threads);
    printf("# kernel %s threads %d\n", openblas_get_corename(), threads);
    char name[128], ta[8], tb[8];
    int M, N, K;
    while (scanf("%127s %7s %7s %d %d %d", name, ta, tb, &M, &N, &K) == 6) {
        if (M < 1 || N < 1 || K < 1) {
            fprintf(stderr, "sgemm_rate: %s: dimensions must be positive\n", name);
            return 2;
        }
        double rate = measure(ta[0] == 'T', tb[0] == 'T', M, N, K, min_seconds, trials);
        printf("%s %s %s %d %d %d %.2f\n", name, ta, tb, M, N, K, rate);
        fflush(stdout);
    }
    return 0;
}
