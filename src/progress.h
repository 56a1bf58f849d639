/* progress.h — the training progress line on a terminal.
 *
 * On a terminal, one line is redrawn in place at most ten times a second:
 *   epoch 2/3 [########........] 52%  step 712  loss 2.1707  5338 tok/s  65s  ETA 21s
 * (ETA: the rest of this epoch, as the caller estimates it). Anything else written to
 * the stream must call progress_clear first, so that messages never mix with the bar.
 * When the stream is not a terminal (a log file, a pipe, CI), progress_live is 0 and
 * nothing is drawn: the caller writes its plain periodic lines instead.
 */
#ifndef PROGRESS_H
#define PROGRESS_H

#include <stdio.h>

typedef struct {
    FILE *f;
    int live;          /* a terminal: the bar is drawn */
    int drawn;         /* the bar is on the current line now */
    double last_draw;  /* now_seconds() of the last drawing */
} Progress;

/* live if enabled, f is a terminal and TERM is not "dumb". */
void progress_init(Progress *p, FILE *f, int enabled);
int progress_live(const Progress *p);
/* Redraws the bar: done of total batches of epoch (of epochs), global step, the mean loss
 * and tokens/s of the latest window, seconds since training began, and the estimated
 * seconds left in this epoch (eta < 0: unknown). Skipped if drawn less than 0.1 s ago,
 * unless done == total. */
void progress_draw(Progress *p, int epoch, int epochs, long done, long total, long step, double loss, double tps,
                   double elapsed, double eta);
/* Erases the bar so that the next output starts on a clean line. */
void progress_clear(Progress *p);
#endif
