#include "base/signals.h"

#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

void signals_catch(SignalHandlers *h)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    stop_signal = 0;
    h->int_set = sigaction(SIGINT, NULL, &h->old_int) == 0 && h->old_int.sa_handler != SIG_IGN &&
                 sigaction(SIGINT, &sa, NULL) == 0;
    h->term_set = sigaction(SIGTERM, NULL, &h->old_term) == 0 && h->old_term.sa_handler != SIG_IGN &&
                  sigaction(SIGTERM, &sa, NULL) == 0;
}

void signals_restore(const SignalHandlers *h)
{
    if (h->int_set) sigaction(SIGINT, &h->old_int, NULL);
    if (h->term_set) sigaction(SIGTERM, &h->old_term, NULL);
}

int signals_pending(void) { return stop_signal; }

/* ---------------------------------------------------------------- temporary files */

/* The files to remove; a slot is NULL when free. Changed only with the four signals
 * blocked in the calling thread (a handler running on another thread, OpenBLAS's,
 * reads a pointer that is whole either way). */
static const char *volatile cleanup_paths[SIGNALS_CLEANUP_MAX];
static volatile sig_atomic_t cleanup_is_dir[SIGNALS_CLEANUP_MAX];
static const int fatal_signals[] = {SIGHUP, SIGINT, SIGPIPE, SIGTERM};
#define N_FATAL (int)(sizeof fatal_signals / sizeof fatal_signals[0])

static void on_fatal_signal(int sig)
{
    for (int i = 0; i < SIGNALS_CLEANUP_MAX; i++) {
        const char *path = cleanup_paths[i];
        if (path && !cleanup_is_dir[i]) unlink(path);
    }
    for (int i = SIGNALS_CLEANUP_MAX - 1; i >= 0; i--) {
        const char *path = cleanup_paths[i];
        if (path && cleanup_is_dir[i]) rmdir(path);
    }
    /* The default action, at once: it is blocked in the handler, so raise leaves it
     * pending until the handler returns. */
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Blocks the four signals (old: the mask before); installs the handler at the first call. */
static void cleanup_begin(sigset_t *old)
{
    static int installed;
    sigset_t block;
    sigemptyset(&block);
    for (int i = 0; i < N_FATAL; i++)
        sigaddset(&block, fatal_signals[i]);
    sigprocmask(SIG_BLOCK, &block, old);
    if (installed) return;
    installed = 1;
    struct sigaction sa, was;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_FATAL; i++)
        if (sigaction(fatal_signals[i], NULL, &was) == 0 && was.sa_handler == SIG_DFL)
            sigaction(fatal_signals[i], &sa, NULL);
}

/* The first free slot takes path. (Directories are added outermost first and taken off
 * together, so the slots keep them in that order for the handler's reverse walk.) */
static void cleanup_add(const char *path, int is_dir)
{
    sigset_t old;
    cleanup_begin(&old);
    for (int i = 0; i < SIGNALS_CLEANUP_MAX; i++)
        if (!cleanup_paths[i]) {
            cleanup_is_dir[i] = is_dir;
            cleanup_paths[i] = path;
            break;
        }
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void signals_cleanup_add(const char *path) { cleanup_add(path, 0); }
void signals_cleanup_add_dir(const char *path) { cleanup_add(path, 1); }

void signals_cleanup_remove(const char *path)
{
    sigset_t old;
    cleanup_begin(&old);
    for (int i = 0; i < SIGNALS_CLEANUP_MAX; i++)
        if (cleanup_paths[i] == path) cleanup_paths[i] = NULL;
    sigprocmask(SIG_SETMASK, &old, NULL);
}
