/* logits.h — the reductions a search makes over a row of V logits every step: its
 * largest value and its log-normaliser, at the vector width of the CPU (dispatch.h),
 * with the same bits on every CPU and in every build.
 *
 * A maximum is the same in any order. A sum is not: logits_log_normaliser sums in one
 * written order, four lanes (lane j the terms j, j + 4, ... up to the last multiple of
 * 4, in turn; lane 0 then the remaining terms), added lane 0 to 3, while it computes
 * the exponentials 16 at a time where the CPU can. That is the order in which the
 * release build (x86-64 baseline, -O3) vectorised the `omp simd reduction(+)` the
 * searches had before, so its scores and n-best lists stay byte for byte what they
 * were (tests/test_logits.c). */
#ifndef LOGITS_H
#define LOGITS_H

/* The largest of row[0 .. n), n >= 1. */
float logits_max(const float *row, int n);
/* log sum_w exp(row[w]) over the V >= 1 logits (expf_fast, fastmath.h): what a logit
 * minus it is, a log-probability. */
float logits_log_normaliser(const float *row, int V);
#endif
