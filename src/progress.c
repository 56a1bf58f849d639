#include "progress.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h" /* defines: now_seconds */

#define BAR_WIDTH 20

void progress_init(Progress *p, FILE *f, int enabled)
{
    const char *term = getenv("TERM");
    memset(p, 0, sizeof *p);
    p->f = f;
    p->live = enabled && isatty(fileno(f)) && !(term && !strcmp(term, "dumb"));
}

int progress_live(const Progress *p) { return p->live; }

void progress_draw(Progress *p, int epoch, int epochs, long done, long total, long step, double loss, double tps,
                   double elapsed, double eta)
{
    if (!p->live) return;
    double now = now_seconds();
    if (done < total && p->drawn && now - p->last_draw < 0.1) return;
    p->last_draw = now;
    double frac = total > 0 ? (double)done / (double)total : 1.0;
    if (frac > 1.0) frac = 1.0;
    char bar[BAR_WIDTH + 1];
    int full = (int)(frac * BAR_WIDTH + 0.5);
    for (int i = 0; i < BAR_WIDTH; i++)
        bar[i] = i < full ? '#' : '.';
    bar[BAR_WIDTH] = 0;
    /* \r and erase-to-end-of-line: the bar replaces itself. */
    fprintf(p->f, "\r\033[Kepoch %d/%d [%s] %3.0f%%  step %ld  loss %.4f  %.0f tok/s  %.0fs", epoch, epochs, bar,
            100.0 * frac, step, loss, tps, elapsed);
    if (eta >= 0 && done < total) fprintf(p->f, "  ETA %.0fs", eta);
    fflush(p->f);
    p->drawn = 1;
}

void progress_clear(Progress *p)
{
    if (!p->live || !p->drawn) return;
    fputs("\r\033[K", p->f);
    fflush(p->f);
    p->drawn = 0;
}
