#include "train/progress.h"

long progress_updates_left(int epoch, int epochs, long done, long per_epoch, long step, long max_steps)
{
    long left = per_epoch - done + per_epoch * (long)(epochs - epoch);
    if (max_steps > 0 && max_steps - step < left) left = max_steps - step;
    return left > 0 ? left : 0;
}
