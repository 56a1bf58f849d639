/* schedule.h — the learning rate over training: linear warmup, then constant, decayed
 * on a validation plateau, or decaying as the inverse square root of the step.
 *
 * With base = train.learning_rate and w = train.warmup_steps, the rate of update
 * number `step` (1, 2, ...) is
 *   constant      base * ramp(step)
 *   plateau       base * ramp(step) * decay^k, k = the decays so far (below)
 *   inverse_sqrt  base * step / w          for step <= w  (linear warmup)
 *                 base * sqrt(w / step)    for step >= w  (the two meet at base)
 * where ramp(step) = min(1, step / w) is the same linear warmup for the first two
 * (ramp = 1 when w = 0), and inverse_sqrt with w = 0 decays as base / sqrt(step)
 * from the first step (as if w = 1).
 *
 * Plateau: after each validation, lr_schedule_validation compares the validation loss
 * with the best so far; a loss lower than every earlier one resets the count, any
 * other adds one, and when the count reaches `patience` the rate is multiplied by
 * `decay` and the count starts again. The other schedules ignore validations.
 *
 *     LrSchedule s;
 *     lr_schedule_init(&s, LR_PLATEAU, 0.001, 0, 0.5, 1);
 *     opt.lr = lr_schedule_at(&s, step);           // before each update
 *     if (lr_schedule_validation(&s, valid_loss))  // after each validation
 *         log("learning rate now %g", lr_schedule_at(&s, step));
 */
#ifndef SCHEDULE_H
#define SCHEDULE_H

typedef enum { LR_CONSTANT, LR_PLATEAU, LR_INVERSE_SQRT } LrScheduleKind;

/* The names train.lr_schedule accepts, in LrScheduleKind order, as config.c lists
 * choices. */
#define LR_SCHEDULE_NAMES "constant|plateau|inverse_sqrt"

typedef struct {
    LrScheduleKind kind;
    double base;       /* train.learning_rate */
    long warmup;       /* steps of linear warmup (0: none) */
    double decay;      /* plateau: factor applied per decay, in (0, 1) */
    int patience;      /* plateau: validations without improvement before a decay */
    double factor;     /* plateau: decay^k after k decays (1 at the start) */
    double best_loss;  /* plateau: the lowest validation loss so far (+inf at the start) */
    int bad;           /* plateau: validations since the last improvement or decay */
    int decays;        /* plateau: k */
} LrSchedule;

/* The kind named `name` (one of LR_SCHEDULE_NAMES); returns 0, or -1 if unknown. */
int lr_schedule_kind(const char *name, LrScheduleKind *kind);
void lr_schedule_init(LrSchedule *s, LrScheduleKind kind, double base, long warmup, double decay, int patience);
/* The learning rate of update number step (>= 1). */
double lr_schedule_at(const LrSchedule *s, long step);
/* Records one validation loss; returns 1 if it decayed the rate (plateau only), else 0.
 * A NaN loss counts as no improvement. */
int lr_schedule_validation(LrSchedule *s, double valid_loss);
#endif
