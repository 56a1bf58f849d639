#include "testhook.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

/* NMT_PAUSE_AT_STEP as read at the first call: -1 not read yet, 0 off. */
static long pause_step = -1;

static long read_pause_step(void)
{
    const char *s = getenv("NMT_PAUSE_AT_STEP");
    if (!s || !*s) return 0;
    char *end;
    long k = strtol(s, &end, 10);
    if (*end || k < 0) {
        fprintf(stderr, "nmt: warning: NMT_PAUSE_AT_STEP=%s is not a step number; ignored\n", s);
        return 0;
    }
    return k;
}

void testhook_pause_at_step(long step)
{
    if (pause_step < 0) pause_step = read_pause_step();
    if (pause_step > 0 && step == pause_step) raise(SIGSTOP);
}
