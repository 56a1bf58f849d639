/* signals.h — SIGINT and SIGTERM ask training to stop after the step under way, with a
 * checkpoint; a signal that ends any other job leaves no temporary file behind.
 *
 * A signal handler can do nothing but set a flag of type sig_atomic_t (or call the few
 * async-signal-safe functions: unlink, raise), and it can only reach a variable at file
 * scope: the one piece of global state of a training run, kept here and read between
 * steps (signals_pending), and the list of temporary files to remove.
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

/* Files to remove if a signal ends the process: the temporary file an output is being
 * written to (io/outfile.h), which would otherwise be left behind by Ctrl-C, a SIGTERM,
 * a SIGHUP or a SIGPIPE (a closed stderr pipe). The first call installs a handler for
 * those of the four whose action is the default (not one ignored, and not training's
 * own, signals_catch's, which stops at a checkpoint and removes the file itself); it
 * removes the files and lets the signal end the process as it would have, with the
 * same status. At most SIGNALS_CLEANUP_MAX files at once; past that a file is left to
 * the caller alone. path must stay valid until signals_cleanup_remove(path). */
#define SIGNALS_CLEANUP_MAX 16
void signals_cleanup_add(const char *path);
/* A directory to remove (rmdir: only if empty) after the files, the last added first. */
void signals_cleanup_add_dir(const char *path);
/* Takes path (a file or a directory) off the list. */
void signals_cleanup_remove(const char *path);
#endif
