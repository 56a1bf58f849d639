/* gradcheck.h — analytic gradients against central finite differences, for the tests.
 *
 *   check_grad(label, f, ctx, x, ld_x, grad, ld_grad, rows, cols, &opts)
 *
 * x is a (rows, cols) float matrix with row stride ld_x that the scalar objective
 * f(ctx) reads; grad (rows, cols), row stride ld_grad, is the backward pass's claim for
 * dL/dx. For each checked coordinate x[i] is moved to x+eps and x-eps and
 *     fd = (L(x+eps) - L(x-eps)) / ((x+eps) - (x-eps))
 * (the denominator is the step actually taken in float), then x[i] is restored exactly.
 * Only the (rows, cols) entries are touched: gaps in a strided row are left alone.
 *
 * Pass when, for every checked coordinate,
 *     |grad - fd| <= rtol * max(|fd|, 0.1 * max|grad over the whole tensor|) + atol.
 * Why this form: for eps ~ 1e-2 and O(1) inputs, the truncation error of a central
 * difference is ~ eps^2/6 * f''' ~ 2e-5 relative. Rounding adds absolute noise: an
 * objective evaluated in float jitters by some delta under any perturbation, which
 * becomes up to delta / eps in fd. For a single layer delta ~ 1e-7 * |L| and that noise
 * stays far below 1e-3 of the tensor's scale; so a correct backward pass matches to
 * ~1e-4 of the scale and rtol = 1e-2 leaves a 100x margin. Entries near zero are compared
 * against a tenth of the tensor's largest gradient instead of their own size, because
 * there the fd noise is absolute. atol (0 for the layers) is for a deep objective whose
 * float jitter is comparable to its smaller gradients; the caller measures it and says
 * why. A real bug (a missing term, a wrong sign, a swapped index) moves entries by the
 * order of the entries themselves, i.e. 100% instead of 1%, and fails.
 *
 * Prints one line per tensor with the worst |grad - fd| / tolerance (<= 1 passes), and
 * for a failure the coordinate with both values.
 *
 * A NaN or an infinity fails the check whatever the tolerance, and the line says where
 * and what: anywhere in grad (all rows*cols entries are scanned, sampled or not), or a
 * finite difference at a checked coordinate (which is what a non-finite objective
 * L(x+eps) or L(x-eps) gives; both are printed).
 */
#ifndef GRADCHECK_H
#define GRADCHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h" /* defines: check_passed, check_failed */
#include "base/util.h"  /* defines: Rng, rng_below, xmalloc */

typedef struct {
    float eps;      /* finite-difference step */
    double rtol;    /* tolerance relative to max(|fd|, 0.1 * tensor scale) */
    double atol;    /* plus this, for the fd noise of a float objective; usually 0 */
    int n_sample;   /* check this many random coordinates; 0 (or >= rows*cols) = all */
    Rng *rng;       /* picks the sample; may be NULL when checking all */
} GradCheckOpts;

typedef double (*GradObjective)(void *ctx);

static inline int check_grad(const char *label, GradObjective f, void *ctx,
                             float *x, long ld_x, const float *grad, long ld_grad,
                             long rows, long cols, const GradCheckOpts *o)
{
    long n = rows * cols;
    double scale = 0;
    long bad = -1, n_bad = 0;
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++) {
            double g = grad[r * ld_grad + c];
            if (!isfinite(g)) {
                if (bad < 0) bad = r * cols + c;
                n_bad++;
            } else if (fabs(g) > scale) {
                scale = fabs(g);
            }
        }
    if (bad >= 0) {
        char v[32];
        check_failed++;
        fprintf(stderr, "FAIL %-22s non-finite analytic gradient at (%ld, %ld): %s (%ld of %ld entries non-finite)\n",
                label, bad / cols, bad % cols, check_fmt(v, grad[(bad / cols) * ld_grad + bad % cols]), n_bad, n);
        return 0;
    }

    /* Coordinates to check: all, or the first m of a partial Fisher-Yates shuffle. */
    long m = o->n_sample > 0 && o->n_sample < n ? o->n_sample : n;
    long *idx = xmalloc(sizeof(long) * n);
    for (long i = 0; i < n; i++)
        idx[i] = i;
    for (long i = 0; i < m && m < n; i++) {
        long j = i + (long)rng_below(o->rng, (uint32_t)(n - i));
        long t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }

    double worst = 0, worst_a = 0, worst_fd = 0, bad_lp = 0, bad_lm = 0, bad_fd = 0;
    long worst_at = 0;
    for (long s = 0; s < m; s++) {
        long r = idx[s] / cols, c = idx[s] % cols;
        float *p = x + r * ld_x + c, orig = *p;
        float plus = orig + o->eps, minus = orig - o->eps;
        *p = plus;
        double lp = f(ctx);
        *p = minus;
        double lm = f(ctx);
        *p = orig;
        double fd = (lp - lm) / ((double)plus - (double)minus);
        if (!isfinite(fd)) {
            if (bad < 0) { bad = idx[s]; bad_lp = lp; bad_lm = lm; bad_fd = fd; }
            n_bad++;
            continue;
        }
        double a = grad[r * ld_grad + c];
        double ref = fabs(fd) > 0.1 * scale ? fabs(fd) : 0.1 * scale;
        double tol = o->rtol * ref + o->atol;
        double ratio = tol > 0 ? fabs(a - fd) / tol : (a == fd ? 0 : INFINITY);
        if (ratio > worst) { worst = ratio; worst_at = idx[s]; worst_a = a; worst_fd = fd; }
    }
    free(idx);
    if (bad >= 0) {
        char v[3][32];
        check_failed++;
        fprintf(stderr, "FAIL %-22s non-finite finite difference at (%ld, %ld): %s, from L(x+eps) %s and L(x-eps) %s "
                "(%ld of %ld checked non-finite)\n", label, bad / cols, bad % cols, check_fmt(v[0], bad_fd),
                check_fmt(v[1], bad_lp), check_fmt(v[2], bad_lm), n_bad, m);
        return 0;
    }

    int ok = worst <= 1;
    if (ok) check_passed++; else check_failed++;
    fprintf(ok ? stdout : stderr, "%s %-22s err/tol %.3g  (%ld of %ld checked, max|grad| %.3g)\n",
            ok ? "  ok" : "FAIL", label, worst, m, n, scale);
    if (!ok)
        fprintf(stderr, "     at (%ld, %ld): analytic %.6g, finite difference %.6g\n",
                worst_at / cols, worst_at % cols, worst_a, worst_fd);
    return ok;
}

/* Fills n floats with uniform values in [-a, a). */
static inline void fill_uniform(float *p, long n, float a, Rng *rng)
{
    for (long i = 0; i < n; i++)
        p[i] = a * (2.0f * rng_uniform(rng) - 1.0f);
}

/* Strided outputs: the gaps between rows are filled with GAP before a call, and the
 * call must leave them as they are. */
#define GAP 777.0f
static inline int gaps_hold(const float *m, int rows, int cols, int ld)
{
    int ok = 1;
    for (int r = 0; r < rows; r++)
        for (int k = cols; k < ld; k++)
            ok &= m[r * ld + k] == GAP;
    return ok;
}

/* sum_i w_i * out_i over a (rows, cols) matrix with row stride ld, in double. */
static inline double weighted_sum(const float *w, const float *out, long rows, long cols, long ld)
{
    double L = 0;
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++)
            L += (double)w[r * ld + c] * out[r * ld + c];
    return L;
}
#endif
