/* check.h — the tiny test helper every tests/test_*.c includes.
 *
 *   CHECK(cond, "what")           counts a pass or prints the failure with file:line
 *   check_close(a, b, n, tol, "label")  max |a-b| / max(1,|b|) over n floats <= tol;
 *                                 prints the max difference either way
 *   return check_report("name");  prints "name: N passed, N failed", returns exit code
 */
#ifndef CHECK_H
#define CHECK_H
#include <math.h>
#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, what) do { \
    if (cond) check_passed++; \
    else { check_failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } \
} while (0)

/* Relative difference where |b| > 1, absolute below: robust for values near zero. */
static inline int check_close(const float *a, const float *b, long n, double tol, const char *label)
{
    double worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        double s = fabs((double)b[i]) > 1 ? fabs((double)b[i]) : 1;
        if (!(d / s <= worst)) { worst = d / s; at = i; }
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
    double scale = 0, worst = 0;
    long at = 0;
    for (long i = 0; i < n; i++)
        if (fabs((double)b[i]) > scale) scale = fabs((double)b[i]);
    if (scale == 0) scale = 1;
    for (long i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]) / scale;
        if (!(d <= worst)) { worst = d; at = i; }
    }
    int ok = worst <= tol;
    if (ok) check_passed++; else check_failed++;
    fprintf(ok ? stdout : stderr, "%s %-28s max diff %.3g of max %.3g (at %ld of %ld, tol %.1g)\n",
            ok ? "  ok" : "FAIL", label, worst, scale, at, n, tol);
    return ok;
}

static inline int check_report(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
    return check_failed != 0;
}
#endif
