/* test_loss.c — softmax_xent: values worked out by hand, the gradient against central
 * finite differences, padding, the fused in-place form, and logits of size 1e4.
 */
#include <string.h>

#include "check.h"     /* defines: CHECK, check_close, check_report */
#include "gradcheck.h" /* defines: check_grad, fill_uniform */
#include "loss.h"      /* defines: softmax_xent */
#include "util.h"      /* defines: Rng */

enum { N = 5, V = 7 };

typedef struct {
    float logits[N * V];
    int targets[N];
    float scale;
} Ctx;

/* The loss that dlogits is the gradient of: scale * summed NLL. */
static double objective(void *p)
{
    Ctx *c = p;
    return c->scale * softmax_xent(c->logits, c->targets, N, V, c->scale, NULL);
}

static void near(double got, double want, double tol, const char *what)
{
    int ok = fabs(got - want) <= tol;
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "     got %.9g, want %.9g\n", got, want);
}

static void test_hand_values(void)
{
    /* Uniform logits: every class has probability 1/V, so each non-pad row costs log V;
     * the pad row (target 0) costs nothing. */
    float uni[3 * V];
    for (int i = 0; i < 3 * V; i++)
        uni[i] = 0.25f;
    int t3[3] = {4, 0, 6};
    near(softmax_xent(uni, t3, 3, V, 1.0f, NULL), 2 * log(V), 1e-5, "uniform logits: log V per row");

    /* Two classes, logits (0, ln 3): p = (1/4, 3/4). Target 1 costs -ln(3/4) = ln(4/3);
     * gradient with scale 0.5 is 0.5 * (1/4 - 0, 3/4 - 1) = (0.125, -0.125). */
    float two[2] = {0.0f, logf(3.0f)}, d[2];
    int t1[1] = {1};
    near(softmax_xent(two, t1, 1, 2, 0.5f, d), log(4.0 / 3.0), 1e-6, "two classes: ln(4/3)");
    float want[2] = {0.125f, -0.125f};
    check_close(d, want, 2, 1e-6, "two classes: gradient");
}

static void test_gradient(Rng *rng)
{
    static Ctx c;
    fill_uniform(c.logits, N * V, 1.0f, rng);
    int targets[N] = {3, 0, 6, 1, 0};   /* rows 1 and 4 are padding */
    memcpy(c.targets, targets, sizeof targets);
    c.scale = 1.0f / 3;                  /* three non-pad targets: a token mean */

    float d[N * V];
    fill_uniform(d, N * V, 5.0f, rng);  /* garbage that every row must overwrite */
    double loss = softmax_xent(c.logits, c.targets, N, V, c.scale, d);
    int pad_zero = 1;
    for (int k = 0; k < V; k++)
        pad_zero &= d[1 * V + k] == 0.0f && d[4 * V + k] == 0.0f;
    CHECK(pad_zero, "pad rows get exactly zero gradient");
    int rows_sum_zero = 1;
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int k = 0; k < V; k++)
            s += d[i * V + k];
        rows_sum_zero &= fabs(s) <= 1e-6;
    }
    CHECK(rows_sum_zero, "each gradient row sums to 0 (softmax minus one-hot)");

    GradCheckOpts o = {.eps = 1e-2f, .rtol = 1e-2};
    check_grad("dlogits", objective, &c, c.logits, V, d, V, N, V, &o);

    /* Fused form: dlogits is the logits buffer. Same loss, same gradient, bit for bit. */
    float inplace[N * V];
    memcpy(inplace, c.logits, sizeof inplace);
    double loss_in = softmax_xent(inplace, c.targets, N, V, c.scale, inplace);
    CHECK(loss_in == loss, "in-place gives the same loss");
    CHECK(memcmp(inplace, d, sizeof d) == 0, "in-place gives the same gradient, bit for bit");
}

static void test_large_logits(Rng *rng)
{
    /* Logits near 1e4: exp would overflow without the max shift. Softmax is invariant to a
     * constant shift, so the loss and gradient must match those of the logits minus 1e4
     * (to float resolution at 1e4, ~1e-3 per logit). */
    float big[N * V], small[N * V], dbig[N * V], dsmall[N * V];
    int targets[N] = {3, 0, 6, 1, 2};
    for (int i = 0; i < N * V; i++) {
        big[i] = 1e4f + 2.0f * (2.0f * rng_uniform(rng) - 1.0f);
        small[i] = big[i] - 1e4f;       /* exact: both are multiples of 2^-10 */
    }
    double lb = softmax_xent(big, targets, N, V, 0.25f, dbig);
    double ls = softmax_xent(small, targets, N, V, 0.25f, dsmall);
    CHECK(isfinite(lb), "logits ~ 1e4: finite loss");
    near(lb, ls, 1e-2, "logits ~ 1e4: same loss as shifted to ~0");
    int finite = 1;
    for (int i = 0; i < N * V; i++)
        finite &= isfinite(dbig[i]);
    CHECK(finite, "logits ~ 1e4: finite gradient");
    check_close(dbig, dsmall, N * V, 1e-3, "logits ~ 1e4: gradient");

    /* One logit 1e4 above the rest, target elsewhere: loss = 1e4 + log(1 + 2 e^-1e4) = 1e4;
     * with the target on it, the loss is 0 (exp(-1e4) underflows). */
    float spike[3] = {1e4f, 0.0f, 0.0f};
    int t_off[1] = {1}, t_on[1] = {2};
    near(softmax_xent(spike, t_off, 1, 3, 1.0f, NULL), 1e4, 1e-3, "one logit 1e4, target elsewhere");
    float spike2[3] = {0.0f, 0.0f, 1e4f};
    near(softmax_xent(spike2, t_on, 1, 3, 1.0f, NULL), 0.0, 1e-6, "one logit 1e4, target on it");
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 5);
    test_hand_values();
    test_gradient(&rng);
    test_large_logits(&rng);
    return check_report("test_loss");
}
