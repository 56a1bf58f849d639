/* check.h — the tiny test helper every tests/test_*.c includes.
 *
 *   CHECK(cond, "what")           counts a pass or prints the failure with file:line
 *   SKIP("what", "why")           counts a check that could not run here and prints
 *                                 "skip what: why" (never for a check that merely failed)
 *   check_close(a, b, n, tol, "label")  max |a-b| / max(1,|b|) over n floats <= tol;
 *                                 prints the max difference either way
 *   check_close_scaled(a, b, n, tol, "label")  max |a-b| / max|b| <= tol
 *   check_identical(a, b, n, "label")  the n floats are the same bits (results that must
 *                                 not depend on the instruction set or the batch);
 *                                 prints the first difference on a failure
 *   return check_report("name");  prints "name: N passed, M failed, K skipped" (the line
 *                                 tests/run.sh reads), returns the exit code
 *
 * a is what the code computed, b what it must be (a fixture, a hand computation). A NaN
 * or an infinity in either array fails check_close and check_close_scaled whatever the
 * tolerance, and the line says where the first one is and what it is: a comparison
 * that skipped over it (NaN compares false with everything) would pass a tensor whose
 * every entry but one is right and the one is garbage. tests/test_check.c tests these
 * helpers themselves.
 */
#ifndef CHECK_H
#define CHECK_H
#include <math.h>
#include <stdio.h>
#include <string.h>

/* UNDER_ASAN: defined when built with AddressSanitizer (gcc says so by a macro, clang
 * by __has_feature), for the checks it cannot run (memory limits). */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

static int check_passed, check_failed, check_skipped;

#define CHECK(cond, what) do { \
    if (cond) check_passed++; \
    else { check_failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } \
} while (0)

#define SKIP(what, why) do { check_skipped++; printf("skip %s: %s\n", what, why); } while (0)

/* x as printf's %.6g would write it, but NaN always as "nan" (glibc writes "-nan" for a
 * negative one). buf holds at least 32 bytes. */
static inline const char *check_fmt(char *buf, double x)
{
    if (isnan(x)) return "nan";
    snprintf(buf, 32, "%.6g", x);
    return buf;
}

/* The first index i < n where a[i] or b[i] is NaN or infinite, or -1; *count gets how
 * many such indices there are. */
static inline long check_first_nonfinite(const float *a, const float *b, long n, long *count)
{
    long first = -1;
    *count = 0;
    for (long i = 0; i < n; i++)
        if (!isfinite(a[i]) || !isfinite(b[i])) {
            if (first < 0) first = i;
            (*count)++;
        }
    return first;
}

/* Counts a failure and prints where the first non-finite entry of a or b is. */
static inline int check_fail_nonfinite(const float *a, const float *b, long n, long at, long count, const char *label)
{
    char x[32], y[32];
    check_failed++;
    fprintf(stderr, "FAIL %-28s non-finite at %ld of %ld: computed %s, expected %s (%ld non-finite entr%s)\n", label,
            at, n, check_fmt(x, a[at]), check_fmt(y, b[at]), count, count == 1 ? "y" : "ies");
    return 0;
}

/* Relative difference where |b| > 1, absolute below: robust for values near zero. */
static inline int check_close(const float *a, const float *b, long n, double tol, const char *label)
{
    long count, bad = check_first_nonfinite(a, b, n, &count);
    if (bad >= 0) return check_fail_nonfinite(a, b, n, bad, count, label);
    double worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double s = fabs((double)b[i]) > 1 ? fabs((double)b[i]) : 1;
        if (d / s > worst) { worst = d / s; at = i; }
    }
    int ok = worst <= tol;
    if (ok) check_passed++; else check_failed++;
    fprintf(ok ? stdout : stderr, "%s %-28s max diff %.3g (at %ld of %ld, tol %.1g)\n",
            ok ? "  ok" : "FAIL", label, worst, at, n, tol);
    return ok;
}

/* Max |a-b| relative to the largest |b| of the tensor: the right measure for gradients
 * whose entries are all small (an absolute tolerance would test nothing there). */
static inline int check_close_scaled(const float *a, const float *b, long n, double tol, const char *label)
{
    long count, bad = check_first_nonfinite(a, b, n, &count);
    if (bad >= 0) return check_fail_nonfinite(a, b, n, bad, count, label);
    double scale = 0, worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++)
        if (fabs((double)b[i]) > scale) scale = fabs((double)b[i]);
    if (scale == 0) scale = 1;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]) / scale;
        if (d > worst) { worst = d; at = i; }
    }
    int ok = worst <= tol;
    if (ok) check_passed++; else check_failed++;
    fprintf(ok ? stdout : stderr, "%s %-28s max diff %.3g of max %.3g (at %ld of %ld, tol %.1g)\n",
            ok ? "  ok" : "FAIL", label, worst, scale, at, n, tol);
    return ok;
}

static inline int check_identical(const float *a, const float *b, long n, const char *label)
{
    for (long i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0) {
            char x[32], y[32];
            check_failed++;
            fprintf(stderr, "FAIL %s: first difference at %ld of %ld: computed %s (%a), expected %s (%a)\n", label, i, n,
                    check_fmt(x, a[i]), a[i], check_fmt(y, b[i]), b[i]);
            return 0;
        }
    check_passed++;
    printf("  ok %s (%ld floats identical)\n", label, n);
    return 1;
}

static inline int check_report(const char *name)
{
    printf("%s: %d passed, %d failed, %d skipped\n", name, check_passed, check_failed, check_skipped);
    return check_failed != 0;
}
#endif
