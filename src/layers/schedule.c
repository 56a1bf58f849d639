#include "layers/schedule.h"

#include <math.h>
#include <string.h>

int lr_schedule_kind(const char *name, LrScheduleKind *kind)
{
    static const char *names[] = {"constant", "plateau", "inverse_sqrt"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, names[i])) {
            *kind = (LrScheduleKind)i;
            return 0;
        }
    return -1;
}

void lr_schedule_init(LrSchedule *s, LrScheduleKind kind, double base, long warmup, double decay, int patience)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->base = base;
    s->warmup = warmup > 0 ? warmup : 0;
    s->decay = decay;
    s->patience = patience > 0 ? patience : 1;
    s->factor = 1.0;
    s->best_loss = INFINITY;
}

double lr_schedule_at(const LrSchedule *s, long step)
{
    if (step < 1) step = 1;
    double w = (double)s->warmup, n = (double)step;
    if (s->kind == LR_INVERSE_SQRT) {
        if (w < 1) w = 1;
        return n <= w ? s->base * n / w : s->base * sqrt(w / n);
    }
    double ramp = n < w ? n / w : 1.0;
    return s->base * s->factor * ramp;
}

int lr_schedule_validation(LrSchedule *s, double valid_loss)
{
    if (s->kind != LR_PLATEAU) return 0;
    if (valid_loss < s->best_loss) {
        s->best_loss = valid_loss;
        s->bad = 0;
        return 0;
    }
    if (++s->bad < s->patience) return 0;
    s->factor *= s->decay;
    s->decays++;
    s->bad = 0;
    return 1;
}
