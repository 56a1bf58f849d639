/* test_adam.c — Adam's constants (src/layers/adam.c): several updates with betas and an
 * epsilon other than the defaults against torch.optim.Adam's arithmetic written out in
 * double. (tests/test_model.c checks one update against PyTorch itself; one update
 * cannot tell the betas apart, since its bias corrections cancel them.) */
#include <math.h>

#include "check.h"
#include "layers/adam.h"

enum { N = 7, STEPS = 6 };

/* A gradient per step and parameter, of both signs and several sizes. */
static float gradient(int step, int i) { return (float)(sin(1.3 * step + 0.7 * i) * pow(10.0, (i % 3) - 1)); }

/* torch.optim.Adam's update (no weight decay) in double, from the same float start. */
static void reference(double *p, double lr, double b1, double b2, double eps)
{
    double m[N] = {0}, v[N] = {0};
    for (int t = 1; t <= STEPS; t++)
        for (int i = 0; i < N; i++) {
            double g = gradient(t, i);
            m[i] = b1 * m[i] + (1 - b1) * g;
            v[i] = b2 * v[i] + (1 - b2) * g * g;
            double denom = sqrt(v[i]) / sqrt(1 - pow(b2, t)) + eps;
            p[i] -= lr / (1 - pow(b1, t)) * m[i] / denom;
        }
}

/* nmt's Adam with these constants set after adam_init (as train.c sets the config's),
 * STEPS updates; the largest difference from the reference, relative to the distance the
 * parameters moved. */
static double run(float b1, float b2, float eps, double *moved)
{
    Adam opt;
    float p[N], g[N];
    double want[N];
    for (int i = 0; i < N; i++)
        want[i] = p[i] = 0.5f - 0.1f * (float)i;
    adam_init(&opt, N, 0.01f);
    opt.beta1 = b1, opt.beta2 = b2, opt.eps = eps;
    for (int t = 1; t <= STEPS; t++) {
        for (int i = 0; i < N; i++)
            g[i] = gradient(t, i);
        adam_update(&opt, p, g, 1.0f);
    }
    reference(want, 0.01f, b1, b2, eps);
    double worst = 0;
    *moved = 0;
    for (int i = 0; i < N; i++) {
        worst = fmax(worst, fabs(p[i] - want[i]));
        *moved = fmax(*moved, fabs(want[i] - (0.5 - 0.1 * i)));
    }
    adam_free(&opt);
    return worst / *moved;
}

int main(void)
{
    Adam opt;
    adam_init(&opt, N, 0.001f);
    CHECK(opt.beta1 == (float)0.9 && opt.beta2 == (float)0.999 && opt.eps == (float)1e-8,
          "adam_init: torch.optim.Adam's betas (0.9, 0.999) and eps 1e-8, as the config's defaults give them");
    adam_free(&opt);

    char label[160];
    double moved, diff = run(0.9f, 0.98f, 1e-6f, &moved);
    snprintf(label, sizeof label, "betas (0.9, 0.98), eps 1e-6: %d updates as torch.optim.Adam's (%.2g of the way)",
             STEPS, diff);
    CHECK(diff < 1e-5, label);
    diff = run(0.8f, 0.95f, 1e-3f, &moved);
    snprintf(label, sizeof label, "betas (0.8, 0.95), eps 1e-3: %d updates as torch.optim.Adam's (%.2g of the way)",
             STEPS, diff);
    CHECK(diff < 1e-5, label);
    /* The reference itself tells the settings apart: a check that could fail. */
    double a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = b[i] = 0.5 - 0.1 * i;
    reference(a, 0.01, 0.9, 0.999, 1e-8);
    reference(b, 0.01, 0.9, 0.98, 1e-8);
    double apart = 0;
    for (int i = 0; i < N; i++)
        apart = fmax(apart, fabs(a[i] - b[i]));
    snprintf(label, sizeof label, "beta2 0.98 against 0.999 moves the parameters apart (%.2g, %.2g of the way)",
             apart, apart / moved);
    CHECK(apart / moved > 1e-3, label);
    return check_report("test_adam");
}
