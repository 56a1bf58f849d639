/* signals.h — SIGINT and SIGTERM ask training to stop after the step under way, with a
 * checkpoint.
 *
 * A signal handler can do nothing but set a flag of type sig_atomic_t, and it can only
 * reach a variable at file scope: the one piece of global state of a training run,
 * kept here and read between steps (signals_pending).
 */
#ifndef SIGNALS_H
#define SIGNALS_H

#include <signal.h>

typedef struct {
    struct sigaction old_int, old_term;
    int int_set, term_set;
} SignalHandlers;

/* Catches SIGINT and SIGTERM once each (SA_RESETHAND: a second one has its default
 * effect and stops the process at once; the checkpoints on disk are whole either way).
 * A signal the process was started ignoring (nohup, a background job) stays ignored. */
void signals_catch(SignalHandlers *h);
/* Puts back the handlers signals_catch found. */
void signals_restore(const SignalHandlers *h);
/* 0, or the number of the signal that asked to stop since signals_catch. */
int signals_pending(void);
#endif
