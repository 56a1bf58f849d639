/* test_check.c — the test helpers themselves (tests/check.h, tests/gradcheck.h).
 *
 * Every PyTorch-fixture comparison and every gradient check in the suite rests on
 * check_close, check_close_scaled and check_grad, so they are tested like any other
 * code: a NaN or an infinity at the first, a middle and the last position, in the
 * computed array and in the reference, must each fail and be named (index and value);
 * a genuine difference above the tolerance must fail; a clean array must pass. Each
 * call runs with its output captured and the pass/fail counters put back afterwards
 * (an expected failure must not fail this test); what it returned, how it moved the
 * counters and what it printed are then asserted with CHECK, which counts as usual.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"     // defines: CHECK, SKIP, check_close, check_close_scaled, check_identical, check_report
#include "gradcheck.h" // defines: check_grad, GradCheckOpts
#include "base/util.h"      // defines: Rng, rng_seed

/* ---------------------------------------------------------------- running a helper aside */

/* What one helper call did: its return value, how it moved the three counters, and
 * everything it printed on stdout and stderr. */
typedef struct {
    int ret;
    int passed, failed, skipped;
    char out[2048];
} Verdict;

static FILE *capture;
static int saved_stdout, saved_stderr, passed0, failed0, skipped0;

/* Sends stdout and stderr to a temporary file and remembers the counters. */
static void capture_begin(void)
{
    fflush(stdout);
    fflush(stderr);
    capture = tmpfile();
    saved_stdout = dup(1);
    saved_stderr = dup(2);
    if (!capture || saved_stdout < 0 || saved_stderr < 0 || dup2(fileno(capture), 1) < 0 ||
        dup2(fileno(capture), 2) < 0) {
        perror("test_check: capturing output");
        exit(2);
    }
    passed0 = check_passed, failed0 = check_failed, skipped0 = check_skipped;
}

/* Puts stdout, stderr and the counters back; returns what the call did. */
static Verdict capture_end(int ret)
{
    Verdict v = {.ret = ret};
    fflush(stdout);
    fflush(stderr);
    dup2(saved_stdout, 1);
    dup2(saved_stderr, 2);
    close(saved_stdout);
    close(saved_stderr);
    rewind(capture);
    size_t n = fread(v.out, 1, sizeof v.out - 1, capture);
    v.out[n] = 0;
    fclose(capture);
    v.passed = check_passed - passed0, v.failed = check_failed - failed0, v.skipped = check_skipped - skipped0;
    check_passed = passed0, check_failed = failed0, check_skipped = skipped0;
    return v;
}

/* The comma operator sequences the three: capture, the call, restore. */
#define ASIDE(call) (capture_begin(), capture_end(call))

/* v failed (returned 0, counted one failure and nothing else, printed FAIL) and its
 * output holds want. */
static void expect_fail(Verdict v, const char *want, const char *what)
{
    int ok = v.ret == 0 && v.failed == 1 && v.passed == 0 && v.skipped == 0 && strstr(v.out, "FAIL") &&
             strstr(v.out, want);
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "     wanted a failure printing \"%s\"; got %d, printed: %s", want, v.ret, v.out);
}

/* v passed: returned 1, counted one pass, printed "  ok". */
static void expect_pass(Verdict v, const char *what)
{
    int ok = v.ret == 1 && v.passed == 1 && v.failed == 0 && v.skipped == 0 && !strncmp(v.out, "  ok ", 5);
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "     wanted a pass; got %d, printed: %s", v.ret, v.out);
}

/* The values planted below, and how the helpers name them. */
static const float poison[] = {NAN, INFINITY, -INFINITY};
static const char *const poison_name[] = {"nan", "inf", "-inf"};
#define N_POISON 3

/* ---------------------------------------------------------------- check_close, check_close_scaled */

#define N 9
static const long where[] = {0, N / 2, N - 1};   /* the first, a middle and the last position */

typedef int (*CloseFn)(const float *, const float *, long, double, const char *);

static void fill_pair(float *a, float *b)
{
    for (int i = 0; i < N; i++) {
        b[i] = 0.25f * (float)(i + 1) - 1.0f;   /* -0.75 .. 1.25, a zero at i = 3 */
        a[i] = b[i];
    }
}

/* A NaN, inf or -inf at each of the three positions, in the computed array and in the
 * reference, must fail and be named; so must a NaN on both sides (NaN == NaN is false,
 * but a comparison could still skip over it). */
static void test_close_nonfinite(CloseFn fn, const char *name)
{
    float a[N], b[N];
    char what[160], want[80];
    for (int side = 0; side < 2; side++)
        for (int p = 0; p < N_POISON; p++)
            for (int w = 0; w < 3; w++) {
                fill_pair(a, b);
                long at = where[w];
                (side == 0 ? a : b)[at] = poison[p];
                if (side == 0)
                    snprintf(want, sizeof want, "non-finite at %ld of %d: computed %s,", at, N, poison_name[p]);
                else
                    snprintf(want, sizeof want, "non-finite at %ld of %d: computed %g, expected %s (", at, N,
                             (double)a[at], poison_name[p]);
                snprintf(what, sizeof what, "%s: %s in the %s values at %ld of %d fails, naming it", name,
                         poison_name[p], side == 0 ? "computed" : "reference", at, N);
                expect_fail(ASIDE(fn(a, b, N, 1e-3, "poisoned")), want, what);
            }
    fill_pair(a, b);
    a[N - 1] = b[N - 1] = NAN;
    snprintf(what, sizeof what, "%s: NaN on both sides at the same place fails", name);
    expect_fail(ASIDE(fn(a, b, N, 1e-3, "both")), "computed nan, expected nan (1 non-finite entry)", what);
    /* The case: {NaN, 0, 0} against zeros was "max diff 0" and passed. */
    float z[3] = {0, 0, 0}, q[3] = {NAN, 0, 0};
    snprintf(what, sizeof what, "%s: {NaN, 0, 0} against zeros fails", name);
    expect_fail(ASIDE(fn(q, z, 3, 1e-3, "issue 14")), "non-finite at 0 of 3: computed nan, expected 0", what);
    /* Several: counted, the first named. */
    fill_pair(a, b);
    a[2] = INFINITY, a[5] = NAN, b[7] = -INFINITY;
    snprintf(what, sizeof what, "%s: three non-finite entries: the first named, all three counted", name);
    expect_fail(ASIDE(fn(a, b, N, 1e-3, "three")), "at 2 of 9: computed inf, expected -0.25 (3 non-finite entries)",
                what);
}

static void test_close(void)
{
    float a[N], b[N];
    char what[120];
    CloseFn fns[] = {check_close, check_close_scaled};
    const char *names[] = {"check_close", "check_close_scaled"};
    for (int k = 0; k < 2; k++) {
        test_close_nonfinite(fns[k], names[k]);
        fill_pair(a, b);
        snprintf(what, sizeof what, "%s: equal arrays pass", names[k]);
        expect_pass(ASIDE(fns[k](a, b, N, 0, "equal")), what);
        for (int w = 0; w < 3; w++) {
            /* The largest |b| is 1.25, so both measures divide a difference by 1 or 1.25. */
            fill_pair(a, b);
            a[where[w]] += 2e-3f;
            snprintf(what, sizeof what, "%s: a difference of 2e-3 at %ld fails at tol 1e-3, naming it", names[k],
                     where[w]);
            char want[40];
            snprintf(want, sizeof want, "(at %ld of %d, tol", where[w], N);
            expect_fail(ASIDE(fns[k](a, b, N, 1e-3, "off")), want, what);
            snprintf(what, sizeof what, "%s: the same difference passes at tol 1e-2", names[k]);
            expect_pass(ASIDE(fns[k](a, b, N, 1e-2, "within")), what);
        }
    }
    /* What each measures: check_close is relative above |b| = 1 and absolute below;
     * check_close_scaled is relative to the tensor's largest |b|. */
    float big_b[2] = {1000, 1}, big_a[2] = {1000.5f, 1};
    expect_pass(ASIDE(check_close(big_a, big_b, 2, 1e-3, "relative")),
                "check_close: 0.5 off 1000 is 5e-4 relative: passes at 1e-3");
    float small_b[2] = {1e-3f, 2e-3f}, small_a[2] = {1e-3f, 2.1e-3f};
    expect_pass(ASIDE(check_close(small_a, small_b, 2, 1e-3, "absolute")),
                "check_close: 1e-4 off 2e-3 is 1e-4 absolute: passes at 1e-3");
    expect_fail(ASIDE(check_close_scaled(small_a, small_b, 2, 1e-3, "scaled")), "max diff 0.05 of max 0.002",
                "check_close_scaled: 1e-4 off a tensor of scale 2e-3 is 5e-2: fails at 1e-3");
    float zeros[2] = {0, 0}, tiny[2] = {0, 1e-4f};
    expect_fail(ASIDE(check_close_scaled(tiny, zeros, 2, 1e-5, "zero scale")), "max diff 0.0001 of max 1",
                "check_close_scaled: against zeros the scale is 1 (absolute)");
}

/* ---------------------------------------------------------------- check_grad */

/* L(x) = sum_ij (c_ij x_ij + x_ij^2 / 2), so dL/dx_ij = c_ij + x_ij. A poisoned
 * coordinate makes L non-finite when that coordinate is moved up (side +1) or down
 * (side -1): the finite difference there is then non-finite. */
#define ROWS 3
#define COLS 4
#define LD_X 5
#define LD_G 6
typedef struct {
    float x[ROWS * LD_X];
    float c[ROWS * COLS];
    long poison_at;     /* r * COLS + c, or -1 */
    int poison_side;
    double poison_value;
    float poison_orig;
} Quadratic;

static double quadratic(void *ctx)
{
    Quadratic *q = ctx;
    if (q->poison_at >= 0) {
        float v = q->x[(q->poison_at / COLS) * LD_X + q->poison_at % COLS];
        if ((q->poison_side > 0 && v > q->poison_orig) || (q->poison_side < 0 && v < q->poison_orig))
            return q->poison_value;
    }
    double L = 0;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) {
            double x = q->x[r * LD_X + c];
            L += q->c[r * COLS + c] * x + 0.5 * x * x;
        }
    return L;
}

/* x and c in [-1, 1); the gaps of x's rows hold GAP, which L never reads. grad is the
 * true gradient, with row stride LD_G. */
static void quadratic_init(Quadratic *q, float *grad)
{
    Rng rng;
    rng_seed(&rng, 14);
    for (int i = 0; i < ROWS * LD_X; i++) q->x[i] = GAP;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) {
            q->x[r * LD_X + c] = 2.0f * rng_uniform(&rng) - 1.0f;
            q->c[r * COLS + c] = 2.0f * rng_uniform(&rng) - 1.0f;
        }
    for (int i = 0; i < ROWS * LD_G; i++) grad[i] = GAP;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) grad[r * LD_G + c] = q->c[r * COLS + c] + q->x[r * LD_X + c];
    q->poison_at = -1;
}

static int grad_check(Quadratic *q, const float *grad, int n_sample)
{
    Rng rng;
    rng_seed(&rng, 7);
    GradCheckOpts o = {.eps = 1e-2f, .rtol = 1e-2, .atol = 0, .n_sample = n_sample, .rng = &rng};
    return check_grad("quadratic", quadratic, q, q->x, LD_X, grad, LD_G, ROWS, COLS, &o);
}

static void test_grad(void)
{
    static const long gwhere[] = {0, (ROWS * COLS) / 2 - 1, ROWS * COLS - 1};   /* (0,0), (1,1), (2,3) */
    Quadratic q;
    float grad[ROWS * LD_G];
    char what[160], want[120];

    quadratic_init(&q, grad);
    expect_pass(ASIDE(grad_check(&q, grad, 0)), "check_grad: the true gradient passes");
    expect_pass(ASIDE(grad_check(&q, grad, 5)), "check_grad: the true gradient passes, 5 coordinates sampled");
    float x_before[ROWS * LD_X];
    memcpy(x_before, q.x, sizeof x_before);
    Verdict v = ASIDE(grad_check(&q, grad, 0));
    CHECK(v.ret == 1 && !memcmp(x_before, q.x, sizeof x_before), "check_grad: x restored exactly, its gaps untouched");

    for (int p = 0; p < N_POISON; p++)
        for (int w = 0; w < 3; w++) {
            long at = gwhere[w], r = at / COLS, c = at % COLS;
            /* In the analytic gradient: found whether or not the coordinate is sampled. */
            quadratic_init(&q, grad);
            grad[r * LD_G + c] = poison[p];
            snprintf(want, sizeof want, "non-finite analytic gradient at (%ld, %ld): %s (1 of 12", r, c,
                     poison_name[p]);
            snprintf(what, sizeof what, "check_grad: %s in the analytic gradient at (%ld, %ld) fails, naming it",
                     poison_name[p], r, c);
            expect_fail(ASIDE(grad_check(&q, grad, 0)), want, what);
            snprintf(what, sizeof what, "check_grad: ... also when only 2 of 12 coordinates are sampled (%s at %ld)",
                     poison_name[p], at);
            expect_fail(ASIDE(grad_check(&q, grad, 2)), want, what);
            /* In the objective, moved up (inf: the difference is inf; nan: nan) or down. */
            for (int side = 1; side >= -1; side -= 2) {
                quadratic_init(&q, grad);
                q.poison_at = at, q.poison_side = side, q.poison_value = poison[p];
                q.poison_orig = q.x[r * LD_X + c];
                double fd = side > 0 ? (double)poison[p] : -(double)poison[p];
                char fd_text[32];
                snprintf(want, sizeof want, "non-finite finite difference at (%ld, %ld): %s, from L(x+eps) %s", r, c,
                         check_fmt(fd_text, fd), side > 0 ? poison_name[p] : "");
                snprintf(what, sizeof what, "check_grad: an objective of %s at x%ceps of (%ld, %ld) fails, naming it",
                         poison_name[p], side > 0 ? '+' : '-', r, c);
                expect_fail(ASIDE(grad_check(&q, grad, 0)), want, what);
            }
        }

    /* A wrong gradient: half again at one coordinate, or a sign flipped. */
    for (int w = 0; w < 3; w++) {
        long at = gwhere[w], r = at / COLS, c = at % COLS;
        quadratic_init(&q, grad);
        grad[r * LD_G + c] *= 1.5f;
        snprintf(want, sizeof want, "at (%ld, %ld): analytic", r, c);
        snprintf(what, sizeof what, "check_grad: a gradient 1.5x too large at (%ld, %ld) fails, naming it", r, c);
        expect_fail(ASIDE(grad_check(&q, grad, 0)), want, what);
    }
    quadratic_init(&q, grad);
    grad[1 * LD_G + 2] = -grad[1 * LD_G + 2];
    expect_fail(ASIDE(grad_check(&q, grad, 0)), "at (1, 2): analytic", "check_grad: a flipped sign fails");
    /* Within tolerance: 0.1% off everywhere (rtol is 1%). */
    quadratic_init(&q, grad);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) grad[r * LD_G + c] *= 1.001f;
    expect_pass(ASIDE(grad_check(&q, grad, 0)), "check_grad: 0.1% off everywhere passes at rtol 1%");
}

/* ---------------------------------------------------------------- SKIP and the closing line */

static void test_report(void)
{
    capture_begin();
    SKIP("groff check", "groff is not installed");
    Verdict v = capture_end(1);
    CHECK(v.skipped == 1 && v.passed == 0 && v.failed == 0 && !strcmp(v.out, "skip groff check: groff is not installed\n"),
          "SKIP: counts one skip, prints 'skip WHAT: WHY'");
    /* The closing line tests/run.sh reads, with the counters set for the occasion
     * (capture_end puts the real ones back). */
    capture_begin();
    check_passed = 3, check_failed = 1, check_skipped = 2;
    v = capture_end(check_report("test_x"));
    CHECK(v.ret == 1 && !strcmp(v.out, "test_x: 3 passed, 1 failed, 2 skipped\n"),
          "check_report: 'NAME: N passed, M failed, K skipped', non-zero after a failure");
    capture_begin();
    check_passed = 5, check_failed = 0, check_skipped = 0;
    v = capture_end(check_report("test_y"));
    CHECK(v.ret == 0 && !strcmp(v.out, "test_y: 5 passed, 0 failed, 0 skipped\n"), "check_report: zero when all passed");
}

/* ---------------------------------------------------------------- check_identical */

/* Identical bits pass, NaN and -0 included; +0 against -0, or one ulp anywhere, fails and
 * is named. */
static void test_identical(void)
{
    float a[N], b[N];
    fill_pair(a, b);
    a[2] = b[2] = NAN;
    a[3] = b[3] = -0.0f;
    expect_pass(ASIDE(check_identical(a, b, N, "same")), "check_identical: the same bits (a NaN, a -0) pass");
    b[3] = 0.0f;
    expect_fail(ASIDE(check_identical(a, b, N, "zeros")), "first difference at 3 of 9: computed -0",
                "check_identical: -0 against +0 fails, naming index 3");
    fill_pair(a, b);
    a[N - 1] = nextafterf(b[N - 1], 2.0f);
    expect_fail(ASIDE(check_identical(a, b, N, "ulp")), "first difference at 8 of 9",
                "check_identical: one ulp at the last position fails, naming it");
}

int main(void)
{
    test_close();
    test_identical();
    test_grad();
    test_report();
    return check_report("test_check");
}
