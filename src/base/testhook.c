#include "base/testhook.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/signals.h" /* defines: signals_pending */

/* NMT_PAUSE_AT_STEP and NMT_WAIT_AT_STEP as read at the first call: -1 not read yet,
 * 0 off. */
static long pause_step = -1, wait_step = -1;

static long read_step(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s) return 0;
    char *end;
    long k = strtol(s, &end, 10);
    if (*end || k < 0) {
        fprintf(stderr, "nmt: warning: %s=%s is not a step number; ignored\n", name, s);
        return 0;
    }
    return k;
}

/* Sleeps until SIGINT or SIGTERM has come. The two are blocked while the flag is
 * looked at, and sigsuspend unblocks them and sleeps in one step: a signal between the
 * look and the sleep is not lost. */
static void wait_for_stop_signal(void)
{
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &old);
    while (!signals_pending())
        sigsuspend(&old);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void testhook_pause_at_step(long step)
{
    if (pause_step < 0) {
        pause_step = read_step("NMT_PAUSE_AT_STEP");
        wait_step = read_step("NMT_WAIT_AT_STEP");
    }
    if (pause_step > 0 && step == pause_step) raise(SIGSTOP);
    if (wait_step > 0 && step == wait_step) {
        fprintf(stderr, "nmt: test hook: waiting for SIGINT or SIGTERM after step %ld\n", step);
        wait_for_stop_signal();
    }
}

double testhook_clock(long steps, double seconds)
{
    static double per_step = -1;  /* NMT_SECONDS_PER_STEP as read at the first call; 0: off */
    if (per_step < 0) {
        const char *v = getenv("NMT_SECONDS_PER_STEP");
        char *end = NULL;
        per_step = v && *v ? strtod(v, &end) : 0;
        if (v && *v && (*end || !(per_step > 0))) {
            fprintf(stderr, "nmt: warning: NMT_SECONDS_PER_STEP=%s is not a positive number; ignored\n", v);
            per_step = 0;
        }
    }
    return per_step > 0 ? (double)steps * per_step : seconds;
}

long testhook_full_disk_bytes(const char *path)
{
    const char *name = getenv("NMT_FULL_DISK_AT"), *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!name || !*name) return -1;
    const char *at = strchr(name, '@');
    size_t len = at ? (size_t)(at - name) : strlen(name);
    if (strlen(base) != len || strncmp(name, base, len)) return -1;
    if (!at) return 0;
    char *end;
    long bytes = strtol(at + 1, &end, 10);
    return at[1] && !*end && bytes >= 0 ? bytes : 0;
}

int testhook_full_disk(const char *path) { return testhook_full_disk_bytes(path) == 0; }

void testhook_serve_gate(void)
{
    const char *path = getenv("NMT_SERVE_GATE");
    if (!path || !*path) return;
    int fd = open(path, O_RDONLY);  /* blocks until a writer has the pipe open */
    if (fd < 0) return;
    char b;
    while (read(fd, &b, 1) < 0 && errno == EINTR) {
    }
    close(fd);
}
