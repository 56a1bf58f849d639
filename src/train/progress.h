/* progress.h — what the progress line estimates: the updates left in a training run.
 *
 * The bar of nmt train (base/console.h) shows the run's ETA: the seconds per update
 * measured so far times the updates left, which are the rest of the current epoch and
 * the epochs after it, or fewer where train.max_steps ends the run first. (Validations
 * and checkpoints add to the time and are not in the estimate.)
 *
 * Example: epoch 1 of 3, 40 of 100 batches done, step 40, max_steps 150:
 *   progress_updates_left(1, 3, 40, 100, 40, 150) == 110   (not 260: max_steps ends it)
 */
#ifndef PROGRESS_H
#define PROGRESS_H

/* The updates left after `step` updates, `done` of `per_epoch` batches into epoch
 * `epoch` (from 1) of `epochs`, with max_steps (0: no limit) the run's last update:
 * the smaller of (per_epoch - done) + per_epoch * (epochs - epoch) and
 * max_steps - step. Never below 0. */
long progress_updates_left(int epoch, int epochs, long done, long per_epoch, long step, long max_steps);

#endif
