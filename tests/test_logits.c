/* test_logits.c — a logits row's maximum and log-normaliser (kernels/logits.h) at this
 * CPU's vector width: the bits of the order logits.h documents, for rows of every
 * length from 1 to 70 and a vocabulary's, of logits at several scales, with the
 * -infinity a shortlist gives the words it leaves out; within a few ulp of a double
 * sum; and, in the release build (x86-64 baseline, optimised, no sanitizer), the very
 * bits of the code the searches had before (decode.c's log_normaliser, an `omp simd
 * reduction` that GCC vectorises four lanes wide there), compiled here without
 * KERNEL_CLONES. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/util.h"
#include "kernels/fastmath.h"
#include "kernels/logits.h"

/* The documented order, one term at a time: lane j sums the terms j, j + 4, ... below
 * the last multiple of 4, lane 0 then the rest, and the lanes are added 0 to 3. */
static float documented_log_normaliser(const float *row, int V)
{
    float maxv = row[0], lane[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int w = 1; w < V; w++)
        maxv = row[w] > maxv ? row[w] : maxv;
    int whole = V - V % 4;
    for (int w = 0; w < whole; w++)
        lane[w % 4] += expf_fast(row[w] - maxv);
    for (int w = whole; w < V; w++)
        lane[0] += expf_fast(row[w] - maxv);
    return maxv + logf((((0.0f + lane[0]) + lane[1]) + lane[2]) + lane[3]);
}

/* Where the old code's bits are the documented order's: GCC's SSE2 vectorisation of it. */
#if defined(__x86_64__) && !defined(__AVX__) && defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__clang__)
#define RELEASE_BUILD 1
#else
#define RELEASE_BUILD 0
#endif

static float old_log_normaliser(const float *row, int V)
{
    float maxv = row[0], sum = 0.0f;
#pragma omp simd reduction(max : maxv)
    for (int w = 1; w < V; w++)
        maxv = row[w] > maxv ? row[w] : maxv;
#pragma omp simd reduction(+ : sum)
    for (int w = 0; w < V; w++)
        sum += expf_fast(row[w] - maxv);
    return maxv + logf(sum);
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 5);
    enum { BIG = 12274 };
    float *row = xmalloc(sizeof(float) * BIG);
    int lengths[72], n_lengths = 0;
    for (int V = 1; V <= 70; V++)
        lengths[n_lengths++] = V;
    lengths[n_lengths++] = 1003;
    lengths[n_lengths++] = BIG;
    const float scales[] = {0.5f, 4.0f, 30.0f};
    long rows = 0, same_lse = 0, same_old = 0, same_max = 0, near = 0;
    for (int l = 0; l < n_lengths; l++)
        for (int s = 0; s < 3; s++)
            for (int rep = 0; rep < 6; rep++) {
                int V = lengths[l];
                double top = -INFINITY;
                for (int w = 0; w < V; w++) {
                    row[w] = (rng_uniform(&rng) * 2 - 1) * scales[s];
                    if (rep >= 3 && V > 1 && rng_uniform(&rng) < 0.7f) row[w] = -INFINITY;  /* shortlisted out */
                }
                if (rep >= 3) row[rng_below(&rng, V)] = scales[s];  /* at least one kept */
                for (int w = 0; w < V; w++)
                    top = row[w] > top ? row[w] : top;
                float want = documented_log_normaliser(row, V), got = logits_log_normaliser(row, V);
                float old = old_log_normaliser(row, V);
                same_lse += memcmp(&want, &got, sizeof got) == 0;
                same_old += memcmp(&old, &got, sizeof got) == 0;
                float m = logits_max(row, V);
                same_max += m == (float)top;
                double sum = 0;
                for (int w = 0; w < V; w++)
                    sum += exp((double)row[w] - top);
                near += fabs(got - (top + log(sum))) <= 1e-5 * (1 + fabs(top + log(sum)));
                rows++;
            }
    char label[160];
    snprintf(label, sizeof label, "logits_log_normaliser: the documented order's bits on %ld of %ld rows (lengths 1 "
             "to 70, 1003, %d; with and without -infinity)", same_lse, rows, BIG);
    CHECK(same_lse == rows, label);
    if (RELEASE_BUILD) {
        snprintf(label, sizeof label, "logits_log_normaliser: the old omp-simd code's bits on %ld of %ld rows",
                 same_old, rows);
        CHECK(same_old == rows, label);
    } else {
        /* As tests/test_failures.sh leaves out what a sanitizer build cannot run: a note,
         * not a skip (CI counts skips as missing tools). */
        printf("  note: the old omp-simd code's bits are checked in the release build only (this build does not "
               "vectorise it four lanes wide)\n");
    }
    snprintf(label, sizeof label, "logits_max: the largest logit on %ld of %ld rows", same_max, rows);
    CHECK(same_max == rows, label);
    snprintf(label, sizeof label, "logits_log_normaliser: within 1e-5 of a double sum on %ld of %ld rows", near, rows);
    CHECK(near == rows, label);
    free(row);
    return check_report("test_logits");
}
