#include "base/signals.h"

#include <string.h>

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
