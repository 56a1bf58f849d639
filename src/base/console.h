/* console.h — what a training run says on stderr: messages, warnings and, on a
 * terminal, the progress line.
 *
 * Messages start with "nmt: " (warnings with "nmt: warning: ") and are written as one
 * write each: under mpirun every write becomes a line of its own. A quiet console
 * (--quiet, and the ranks other than 0 of a data-parallel job) says nothing but
 * warnings.
 *
 * On a terminal, one line is redrawn in place at most ten times a second:
 *   epoch 2/3 [########........] 52%  step 712  loss 2.1707  5338 tok/s  65s  ETA 1m21s
 * (the bar: this epoch; ETA: the rest of the run, as the caller estimates it, shown as
 * 21s, 1m21s or 2h05m). Messages erase it first,
 * so that they never mix with the bar. When stderr is not a terminal (a log file, a
 * pipe, CI), console_live is 0 and nothing is drawn: the caller writes its plain
 * periodic lines instead.
 *
 * A reader that goes away (nmt train 2>&1 | head -3; the pipe's reader killed) makes a
 * write fail with EPIPE where SIGPIPE is ignored, as nmt train ignores it: the console
 * then writes nothing more (c->gone), and training goes on.
 */
#ifndef CONSOLE_H
#define CONSOLE_H

#include <stdio.h>

typedef struct {
    FILE *f;
    int quiet;         /* say nothing but warnings */
    int live;          /* a terminal: the bar is drawn */
    int drawn;         /* the bar is on the current line now */
    double last_draw;  /* now_seconds() of the last drawing */
    int gone;          /* a write failed with EPIPE: no one reads f any more */
} Console;

/* live if not quiet, f is a terminal and TERM is not "dumb". */
void console_init(Console *c, FILE *f, int quiet);
int console_live(const Console *c);

/* "nmt: MESSAGE\n", unless quiet. */
void console_say(Console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "nmt: warning: MESSAGE\n", even when quiet. */
void console_warn(Console *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Redraws the bar: done of total batches of epoch (of epochs), global step, the mean loss
 * and tokens/s of the latest window, seconds since training began, and the estimated
 * seconds left in the run (eta < 0: unknown, not shown). Skipped if drawn less than 0.1 s ago,
 * unless done == total. */
void console_progress(Console *c, int epoch, int epochs, long done, long total, long step, double loss, double tps,
                      double elapsed, double eta);
/* Erases the bar so that the next output starts on a clean line. */
void console_clear(Console *c);
#endif
