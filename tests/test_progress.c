/* test_progress.c — the updates left in a run, which the progress line's ETA is made of
 * (src/train/progress.h): the rest of the run, not of the epoch, and train.max_steps
 * ending it first. */
#include "check.h"
#include "train/progress.h" /* defines: progress_updates_left */

int main(void)
{
    /* 3 epochs of 100 batches, 40 done in epoch 1: 60 in this epoch and 200 after it. */
    CHECK(progress_updates_left(1, 3, 40, 100, 40, 0) == 260, "epochs left count, not only this epoch's rest");
    CHECK(progress_updates_left(3, 3, 40, 100, 240, 0) == 60, "the last epoch: only its rest");
    CHECK(progress_updates_left(2, 3, 100, 100, 200, 0) == 100, "an epoch's end: the epochs after it");
    CHECK(progress_updates_left(3, 3, 100, 100, 300, 0) == 0, "the run's last batch: nothing left");
    /* max_steps ends the run before the epochs do. */
    CHECK(progress_updates_left(1, 3, 40, 100, 40, 150) == 110, "max_steps first: max_steps - step");
    CHECK(progress_updates_left(1, 3, 40, 100, 40, 1000) == 260, "max_steps after the epochs: the epochs");
    CHECK(progress_updates_left(1, 10, 5, 100, 5, 10) == 5, "max_steps inside the first epoch");
    CHECK(progress_updates_left(1, 3, 40, 100, 40, 40) == 0, "at max_steps: nothing left");
    /* Resumed with a lower limit than the step reached, or skipped (non-finite) batches
     * that made done run ahead of step: never below 0. */
    CHECK(progress_updates_left(2, 3, 50, 100, 150, 120) == 0, "past max_steps: 0, not negative");
    CHECK(progress_updates_left(2, 3, 50, 100, 140, 0) == 150, "batches without an update: counted by batch");
    return check_report("test_progress");
}
