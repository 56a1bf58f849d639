/* test_schedule.c — the learning-rate schedules (src/layers/schedule.c): warmup ramps, the
 * inverse square root against its formula, and plateau decay with patience. */
#include <math.h>
#include <stdio.h>

#include "check.h"    /* defines: CHECK, check_report */
#include "layers/schedule.h" /* defines: LrSchedule, lr_schedule_* */

static void near(double got, double want, const char *what)
{
    int ok = fabs(got - want) <= 1e-12 * fabs(want) + 1e-18;
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "     got %.17g, want %.17g\n", got, want);
}

static void test_names(void)
{
    LrScheduleKind k = LR_CONSTANT;
    CHECK(lr_schedule_kind("plateau", &k) == 0 && k == LR_PLATEAU, "\"plateau\" is LR_PLATEAU");
    CHECK(lr_schedule_kind("inverse_sqrt", &k) == 0 && k == LR_INVERSE_SQRT, "\"inverse_sqrt\"");
    CHECK(lr_schedule_kind("constant", &k) == 0 && k == LR_CONSTANT, "\"constant\"");
    CHECK(lr_schedule_kind("cosine", &k) == -1 && k == LR_CONSTANT, "unknown name: -1, kind untouched");
}

static void test_constant(void)
{
    LrSchedule s;
    lr_schedule_init(&s, LR_CONSTANT, 0.001, 0, 0.5, 1);
    near(lr_schedule_at(&s, 1), 0.001, "constant, no warmup: base at step 1");
    near(lr_schedule_at(&s, 1000000), 0.001, "constant: base at step 1e6");
    CHECK(lr_schedule_validation(&s, 5.0) == 0 && lr_schedule_validation(&s, 6.0) == 0 &&
          lr_schedule_validation(&s, 7.0) == 0, "constant: validations never decay");
    near(lr_schedule_at(&s, 10), 0.001, "constant: still base after worse validations");

    /* Warmup 4: 1/4, 2/4, 3/4, then base. */
    lr_schedule_init(&s, LR_CONSTANT, 0.002, 4, 0.5, 1);
    near(lr_schedule_at(&s, 1), 0.0005, "constant, warmup 4: step 1 is base/4");
    near(lr_schedule_at(&s, 3), 0.0015, "constant, warmup 4: step 3 is 3 base/4");
    near(lr_schedule_at(&s, 4), 0.002, "constant, warmup 4: step 4 is base");
    near(lr_schedule_at(&s, 50), 0.002, "constant, warmup 4: step 50 is base");
}

static void test_inverse_sqrt(void)
{
    LrSchedule s;
    lr_schedule_init(&s, LR_INVERSE_SQRT, 0.01, 100, 0.5, 1);
    int ok = 1;
    for (long n = 1; n <= 1000; n++) {
        double want = n <= 100 ? 0.01 * n / 100.0 : 0.01 * sqrt(100.0 / n);
        ok &= fabs(lr_schedule_at(&s, n) - want) <= 1e-15;
    }
    CHECK(ok, "inverse_sqrt, warmup 100: steps 1..1000 follow the formula");
    near(lr_schedule_at(&s, 50), 0.005, "inverse_sqrt: half way through warmup, base/2");
    near(lr_schedule_at(&s, 100), 0.01, "inverse_sqrt: base at the end of warmup");
    near(lr_schedule_at(&s, 400), 0.005, "inverse_sqrt: base/2 at 4 x warmup");
    CHECK(lr_schedule_at(&s, 101) < lr_schedule_at(&s, 100) && lr_schedule_at(&s, 99) < lr_schedule_at(&s, 100),
          "inverse_sqrt: the peak is at the end of warmup");
    CHECK(lr_schedule_validation(&s, 1.0) == 0 && lr_schedule_validation(&s, 2.0) == 0,
          "inverse_sqrt: validations never decay");
    near(lr_schedule_at(&s, 400), 0.005, "inverse_sqrt: unchanged by validations");

    /* No warmup: base / sqrt(step) from the first step. */
    lr_schedule_init(&s, LR_INVERSE_SQRT, 0.01, 0, 0.5, 1);
    near(lr_schedule_at(&s, 1), 0.01, "inverse_sqrt, warmup 0: base at step 1");
    near(lr_schedule_at(&s, 16), 0.0025, "inverse_sqrt, warmup 0: base/4 at step 16");
}

static void test_plateau(void)
{
    LrSchedule s;
    /* Patience 2, decay 0.5. */
    lr_schedule_init(&s, LR_PLATEAU, 0.001, 0, 0.5, 2);
    CHECK(lr_schedule_validation(&s, 3.0) == 0, "plateau: the first validation is an improvement");
    CHECK(lr_schedule_validation(&s, 2.5) == 0, "plateau: an improvement");
    CHECK(lr_schedule_validation(&s, 2.5) == 0, "plateau: equal is no improvement (1 of 2)");
    near(lr_schedule_at(&s, 10), 0.001, "plateau: no decay before patience is reached");
    CHECK(lr_schedule_validation(&s, 2.7) == 1, "plateau: 2 without improvement: decay");
    near(lr_schedule_at(&s, 10), 0.0005, "plateau: halved");
    CHECK(lr_schedule_validation(&s, 2.6) == 0, "plateau: the count restarts after a decay (1 of 2)");
    CHECK(lr_schedule_validation(&s, 2.4) == 0, "plateau: a new best resets the count");
    CHECK(lr_schedule_validation(&s, 2.45) == 0, "plateau: 1 of 2 after the new best");
    CHECK(lr_schedule_validation(&s, NAN) == 1, "plateau: NaN counts as no improvement (2 of 2)");
    near(lr_schedule_at(&s, 10), 0.00025, "plateau: halved twice");
    CHECK(s.decays == 2, "plateau: two decays counted");

    /* Patience 1, decay 0.1, with warmup 10: the ramp and the decay multiply. */
    lr_schedule_init(&s, LR_PLATEAU, 0.01, 10, 0.1, 1);
    lr_schedule_validation(&s, 1.0);
    CHECK(lr_schedule_validation(&s, 1.0) == 1, "plateau, patience 1: one bad validation decays");
    near(lr_schedule_at(&s, 5), 0.01 * 0.5 * 0.1, "plateau: ramp x decay during warmup");
    near(lr_schedule_at(&s, 20), 0.001, "plateau: decayed after warmup");
}

int main(void)
{
    test_names();
    test_constant();
    test_inverse_sqrt();
    test_plateau();
    return check_report("test_schedule");
}
