/* test_loss.c — softmax_xent: values worked out by hand, the gradient against central
 * finite differences, padding, the fused in-place form, logits of size 1e4, and label
 * smoothing (by hand, against a direct double-precision -sum q log p, and by finite
 * differences).
 */
#include <string.h>

#include "check.h"     /* defines: CHECK, check_close, check_report */
#include "gradcheck.h" /* defines: check_grad, fill_uniform */
#include "layers/loss.h"      /* defines: softmax_xent */
#include "base/util.h"      /* defines: Rng */

enum { N = 5, V = 7 };

typedef struct {
    float logits[N * V];
    int targets[N];
    float scale, smoothing;
} Ctx;

/* The loss that dlogits is the gradient of: scale * summed (smoothed) NLL. */
static double objective(void *p)
{
    Ctx *c = p;
    return c->scale * softmax_xent(c->logits, c->targets, N, V, c->scale, c->smoothing, NULL);
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
    near(softmax_xent(uni, t3, 3, V, 1.0f, 0.0f, NULL), 2 * log(V), 1e-5, "uniform logits: log V per row");

    /* Two classes, logits (0, ln 3): p = (1/4, 3/4). Target 1 costs -ln(3/4) = ln(4/3);
     * gradient with scale 0.5 is 0.5 * (1/4 - 0, 3/4 - 1) = (0.125, -0.125). */
    float two[2] = {0.0f, logf(3.0f)}, d[2];
    int t1[1] = {1};
    near(softmax_xent(two, t1, 1, 2, 0.5f, 0.0f, d), log(4.0 / 3.0), 1e-6, "two classes: ln(4/3)");
    float want[2] = {0.125f, -0.125f};
    check_close(d, want, 2, 1e-6, "two classes: gradient");
}

static void test_gradient(Rng *rng, float smoothing)
{
    static Ctx c;
    char label[80];
    fill_uniform(c.logits, N * V, 1.0f, rng);
    int targets[N] = {3, 0, 6, 1, 0};   /* rows 1 and 4 are padding */
    memcpy(c.targets, targets, sizeof targets);
    c.scale = 1.0f / 3;                  /* three non-pad targets: a token mean */
    c.smoothing = smoothing;

    float d[N * V];
    fill_uniform(d, N * V, 5.0f, rng);  /* garbage that every row must overwrite */
    double loss = softmax_xent(c.logits, c.targets, N, V, c.scale, smoothing, d);
    int pad_zero = 1;
    for (int k = 0; k < V; k++)
        pad_zero &= d[1 * V + k] == 0.0f && d[4 * V + k] == 0.0f;
    snprintf(label, sizeof label, "smoothing %g: pad rows get exactly zero gradient", smoothing);
    CHECK(pad_zero, label);
    int rows_sum_zero = 1;
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int k = 0; k < V; k++)
            s += d[i * V + k];
        rows_sum_zero &= fabs(s) <= 1e-6;
    }
    snprintf(label, sizeof label, "smoothing %g: each gradient row sums to 0 (softmax minus q)", smoothing);
    CHECK(rows_sum_zero, label);

    GradCheckOpts o = {.eps = 1e-2f, .rtol = 1e-2};
    snprintf(label, sizeof label, "dlogits, smoothing %g", smoothing);
    check_grad(label, objective, &c, c.logits, V, d, V, N, V, &o);

    /* Fused form: dlogits is the logits buffer. Same loss, same gradient, bit for bit. */
    float inplace[N * V];
    memcpy(inplace, c.logits, sizeof inplace);
    double loss_in = softmax_xent(inplace, c.targets, N, V, c.scale, smoothing, inplace);
    snprintf(label, sizeof label, "smoothing %g: in-place gives the same loss", smoothing);
    CHECK(loss_in == loss, label);
    snprintf(label, sizeof label, "smoothing %g: in-place gives the same gradient, bit for bit", smoothing);
    CHECK(memcmp(inplace, d, sizeof d) == 0, label);
}

static void test_label_smoothing(Rng *rng)
{
    /* Two classes, logits (0, ln 3): p = (1/4, 3/4). With smoothing 0.2 and target 1,
     * q = (0.1, 0.9): loss = -0.1 ln(1/4) - 0.9 ln(3/4); gradient with scale 0.5 is
     * 0.5 * (p - q) = (0.075, -0.075). */
    float two[2] = {0.0f, logf(3.0f)}, d2[2];
    int t1[1] = {1};
    near(softmax_xent(two, t1, 1, 2, 0.5f, 0.2f, d2), 0.1 * log(4.0) + 0.9 * log(4.0 / 3.0), 1e-6,
         "smoothing 0.2, two classes: by hand");
    float want2[2] = {0.075f, -0.075f};
    check_close(d2, want2, 2, 1e-6, "smoothing 0.2, two classes: gradient");

    /* Uniform logits: every log p_k = -log V and q sums to 1, so the loss is log V per
     * row whatever the smoothing; the gradient p - q = (1 - 0.3) (1/V - onehot). */
    float uni[V], du[V], wantu[V];
    for (int k = 0; k < V; k++) {
        uni[k] = -1.5f;
        wantu[k] = 0.7f / V - 0.7f * (k == 5);
    }
    int t5[1] = {5};
    near(softmax_xent(uni, t5, 1, V, 1.0f, 0.3f, du), log(V), 1e-5, "smoothing 0.3, uniform logits: log V");
    check_close(du, wantu, V, 1e-6, "smoothing 0.3, uniform logits: gradient");

    /* Random logits against -sum_k q_k log p_k evaluated directly in double. */
    float x[N * V], d[N * V], want[N * V];
    int targets[N] = {2, 6, 0, 1, 3};
    fill_uniform(x, N * V, 3.0f, rng);
    const double eps = 0.1, scale = 0.25;
    double ref = 0;
    for (int i = 0; i < N; i++) {
        double z = 0;
        for (int k = 0; k < V; k++)
            z += exp(x[i * V + k]);
        for (int k = 0; k < V; k++) {
            double p = exp(x[i * V + k]) / z, q = (1 - eps) * (k == targets[i]) + eps / V;
            if (targets[i] == 0) {
                want[i * V + k] = 0;
                continue;
            }
            ref -= q * log(p);
            want[i * V + k] = (float)(scale * (p - q));
        }
    }
    near(softmax_xent(x, targets, N, V, (float)scale, (float)eps, d), ref, 1e-5,
         "smoothing 0.1: loss = -sum q log p (double reference)");
    check_close(d, want, N * V, 1e-6, "smoothing 0.1: gradient = scale (p - q)");
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
    double lb = softmax_xent(big, targets, N, V, 0.25f, 0.0f, dbig);
    double ls = softmax_xent(small, targets, N, V, 0.25f, 0.0f, dsmall);
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
    near(softmax_xent(spike, t_off, 1, 3, 1.0f, 0.0f, NULL), 1e4, 1e-3, "one logit 1e4, target elsewhere");
    float spike2[3] = {0.0f, 0.0f, 1e4f};
    near(softmax_xent(spike2, t_on, 1, 3, 1.0f, 0.0f, NULL), 0.0, 1e-6, "one logit 1e4, target on it");

    /* Equal logits of 1e30 (a model whose weights are all 1e30 gives them): every word
     * as likely, log V per row, smoothed or not. max + log V rounds back to 1e30 in
     * double, and a loss computed as (max + log sum) - target was 0 (issue 19). */
    float huge[N * V];
    int t_huge[N] = {3, 1, 6, 0, 2};
    for (int i = 0; i < N * V; i++)
        huge[i] = 1e30f;
    near(softmax_xent(huge, t_huge, N, V, 1.0f, 0.0f, NULL), 4 * log(V), 1e-9, "equal logits of 1e30: log V per row");
    near(softmax_xent(huge, t_huge, N, V, 1.0f, 0.1f, NULL), 4 * log(V), 1e-9,
         "equal logits of 1e30, smoothing 0.1: log V per row");
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 5);
    test_hand_values();
    test_gradient(&rng, 0.0f);
    test_gradient(&rng, 0.1f);
    test_label_smoothing(&rng);
    test_large_logits(&rng);
    return check_report("test_loss");
}
