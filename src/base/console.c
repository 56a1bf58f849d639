#include "base/console.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h" /* defines: now_seconds, ERROR_LEN */

#define BAR_WIDTH 20

void console_init(Console *c, FILE *f, int quiet)
{
    const char *term = getenv("TERM");
    memset(c, 0, sizeof *c);
    c->f = f;
    c->quiet = quiet;
    c->live = !quiet && isatty(fileno(f)) && !(term && !strcmp(term, "dumb"));
}

int console_live(const Console *c) { return c->live; }

/* One line "nmt: PREFIXMESSAGE\n" in a single write. */
static void say_line(Console *c, const char *prefix, const char *fmt, va_list ap)
{
    console_clear(c);
    char line[2 * ERROR_LEN];
    vsnprintf(line, sizeof line, fmt, ap);
    if (c->gone) return;
    errno = 0;
    if (fprintf(c->f, "nmt: %s%s\n", prefix, line) < 0 && errno == EPIPE) c->gone = 1;
}

void console_say(Console *c, const char *fmt, ...)
{
    if (c->quiet) return;
    va_list ap;
    va_start(ap, fmt);
    say_line(c, "", fmt, ap);
    va_end(ap);
}

void console_warn(Console *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say_line(c, "warning: ", fmt, ap);
    va_end(ap);
}

void console_progress(Console *c, int epoch, int epochs, long done, long total, long step, double loss, double tps,
                      double elapsed, double eta)
{
    if (!c->live || c->gone) return;
    double now = now_seconds();
    if (done < total && c->drawn && now - c->last_draw < 0.1) return;
    c->last_draw = now;
    double frac = total > 0 ? (double)done / (double)total : 1.0;
    if (frac > 1.0) frac = 1.0;
    char bar[BAR_WIDTH + 1];
    int full = (int)(frac * BAR_WIDTH + 0.5);
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < full ? '#' : '.';
    bar[BAR_WIDTH] = 0;
    /* \r and erase-to-end-of-line: the bar replaces itself. */
    fprintf(c->f, "\r\033[Kepoch %d/%d [%s] %3.0f%%  step %ld  loss %.4f  %.0f tok/s  %.0fs", epoch, epochs, bar,
            100.0 * frac, step, loss, tps, elapsed);
    /* The run's ETA (the caller's estimate), in the largest units that read at a glance. */
    if (eta >= 0) {
        long sec = (long)(eta + 0.5);
        if (sec < 60) fprintf(c->f, "  ETA %lds", sec);
        else if (sec < 3600) fprintf(c->f, "  ETA %ldm%02lds", sec / 60, sec % 60);
        else fprintf(c->f, "  ETA %ldh%02ldm", sec / 3600, sec % 3600 / 60);
    }
    fflush(c->f);
    c->drawn = 1;
}

void console_clear(Console *c)
{
    if (!c->live || !c->drawn || c->gone) return;
    fputs("\r\033[K", c->f);
    fflush(c->f);
    c->drawn = 0;
}
