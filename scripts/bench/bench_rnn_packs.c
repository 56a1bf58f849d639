/* bench_rnn_packs.c — a recurrent training pass (forward and backward) with its per-step
 * weights packed once per pass (models/rnn.h's rnn_pack_steps, RunState.own) against
 * the same pass with every product plain (OpenBLAS's sgemm packing the weight at every
 * step), on one thread, in one process: the two alternate pass by pass (A B A B ...),
 * so that a load that drifts falls on both alike. Prints the median CPU time of the
 * thread per pass and plain / packed (> 1: packing is faster), and checks that both give
 * the same gradients bit for bit.
 *
 *   build/bench_rnn_packs [ROUNDS]     (make bench-rnn-packs runs it)
 *
 * The model is issue 30's GRU (embed 256, hidden 512, Bahdanau attention, vocabularies
 * of 6,000 words) and its LSTM twin, on batches of 64 rows (one worker's pass of a batch
 * of 64) and of 32 (each of two workers' passes), sentences of 3 to 20 tokens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data/corpus.h"     /* defines: Example, examples_free */
#include "kernels/blas.h"    /* defines: blas_select_kernel, blas_set_threads, blas_kernel_name */
#include "kernels/linalg.h"  /* defines: packed_matches_blas */
#include "models/rnn.h"      /* defines: rnn_steps_packed */

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static Example *make_examples(int n, int V, Rng *rng)
{
    Example *ex = xcalloc(n, sizeof(Example));
    for (int i = 0; i < n; i++) {
        ex[i].src_len = 3 + (int)rng_below(rng, 18);
        ex[i].tgt_len = 3 + (int)rng_below(rng, 18);
        ex[i].src = xmalloc(sizeof(int) * ex[i].src_len);
        ex[i].tgt = xmalloc(sizeof(int) * ex[i].tgt_len);
        for (int j = 0; j < ex[i].src_len; j++)
            ex[i].src[j] = 4 + (int)rng_below(rng, V - 4);
        for (int j = 0; j < ex[i].tgt_len; j++)
            ex[i].tgt[j] = 4 + (int)rng_below(rng, V - 4);
    }
    return ex;
}

/* One forward and backward pass; its CPU seconds. */
static double pass(Model *m, RunState *rs, Batch *batch)
{
    double t = thread_seconds();
    model_zero_grad(m);
    model_forward(m, rs, batch, 1);
    model_backward(m, rs, batch);
    return thread_seconds() - t;
}

static void bench(const char *what, const ModelDims *d, int B, int rounds)
{
    Model m;
    model_alloc(&m, d);
    model_init_weights(&m, 3);
    Rng rng;
    rng_seed(&rng, 9);
    Example *ex = make_examples(B, d->tgt_vocab, &rng);
    int *idx = xmalloc(sizeof(int) * B);
    for (int i = 0; i < B; i++)
        idx[i] = i;
    Batch batch = {0};
    model_fill_batch(&m, &batch, ex, idx, B);
    RunState packed = {0}, plain = {0};
    runstate_ensure(&packed, &m.dims, RUN_TRAIN, B, batch.S, batch.T);
    runstate_ensure(&plain, &m.dims, RUN_TRAIN, B, batch.S, batch.T);
    if (plain.own) plain.own_free(plain.own), plain.own = NULL, plain.own_free = NULL;
    float *grad = xmalloc(sizeof(float) * m.n_params);
    pass(&m, &packed, &batch);  /* warm: the packs' buffers, OpenBLAS's */
    pass(&m, &plain, &batch);
    memcpy(grad, m.grad_mem, sizeof(float) * m.n_params);
    double *tp = xmalloc(sizeof(double) * rounds), *tq = xmalloc(sizeof(double) * rounds);
    int same = 1;
    for (int r = 0; r < rounds; r++) {
        tq[r] = pass(&m, &plain, &batch);
        tp[r] = pass(&m, &packed, &batch);
        same &= !memcmp(grad, m.grad_mem, sizeof(float) * m.n_params);
    }
    qsort(tp, rounds, sizeof(double), by_value);
    qsort(tq, rounds, sizeof(double), by_value);
    printf("| %s | %d | %d | %.1f | %.1f | %.2f | %s |\n", what, B, rnn_steps_packed(&packed), tq[rounds / 2] * 1e3,
           tp[rounds / 2] * 1e3, tq[rounds / 2] / tp[rounds / 2], same ? "yes" : "NO");
    free(tp), free(tq), free(grad), free(idx);
    runstate_free(&packed);
    runstate_free(&plain);
    batch_free(&batch);
    examples_free(ex, B);
    model_free(&m);
}

int main(int argc, char **argv)
{
    blas_select_kernel(argv);
    blas_set_threads(1);
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    if (rounds < 1) {
        fprintf(stderr, "usage: bench_rnn_packs [ROUNDS]\n");
        return 2;
    }
    printf("OpenBLAS kernel %s, one thread, packed_matches_blas %d; %d alternated passes each, median CPU ms\n\n",
           blas_kernel_name(), packed_matches_blas(), rounds);
    printf("| model | rows | weights packed | plain ms | packed ms | plain / packed | same gradients |\n");
    printf("|---|---:|---:|---:|---:|---:|---|\n");
    ModelDims gru = {.src_vocab = 6000, .tgt_vocab = 6000, .embed = 256, .hidden = 512};
    ModelDims lstm = gru;
    lstm.cell = CELL_LSTM;
    bench("GRU 512, Bahdanau", &gru, 64, rounds);
    bench("GRU 512, Bahdanau", &gru, 32, rounds);
    bench("LSTM 512, Bahdanau", &lstm, 64, rounds);
    bench("LSTM 512, Bahdanau", &lstm, 32, rounds);
    return 0;
}
