#include "train/plot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/outfile.h" /* defines: OutFile, outfile_open, outfile_commit */
#include "io/svg.h"   /* defines: Svg, svg_*, SvgText */

/* ---------------------------------------------------------------- train.log */

/* Appends v as element n of *a, doubling the allocation whenever n is a power of two
 * (so the capacity is never stored: it is the next power of two, at least 8). */
static void push(double **a, int n, double v)
{
    if ((n & (n - 1)) == 0) *a = xrealloc(*a, sizeof(double) * (n < 4 ? 8 : 2 * (size_t)n));
    (*a)[n] = v;
}

/* One line of train.log (trainlog_read's callback): 1 if used or ignored on purpose,
 * 0 if a step or validation line lacks the numbers drawn. */
static int add_line(void *ctx, const LogLine *l)
{
    TrainCurves *c = ctx;
    if (l->kind == LOG_START) {
        if (l->has & log_bit(LF_CLASSES)) c->classes = (int)l->v[LF_CLASSES];
    } else if (l->kind == LOG_STEP) {
        if (!(l->has & log_bit(LF_STEP)) || !(l->has & log_bit(LF_LOSS))) return 0;
        push(&c->step, c->n_steps, l->v[LF_STEP]);
        push(&c->loss, c->n_steps, l->v[LF_LOSS]);
        c->n_steps++;
    } else if (l->kind == LOG_VALIDATION) {
        if (!(l->has & log_bit(LF_STEP)) || !(l->has & log_bit(LF_VALID_LOSS))) return 0;
        int has_bleu = (l->has & log_bit(LF_VALID_BLEU)) != 0;
        int has_accuracy = (l->has & log_bit(LF_VALID_ACCURACY)) != 0;
        push(&c->valid_accuracy, c->n_valid, has_accuracy ? 100 * l->v[LF_VALID_ACCURACY] : NAN);
        c->n_accuracy += has_accuracy;
        push(&c->valid_step, c->n_valid, l->v[LF_STEP]);
        push(&c->valid_loss, c->n_valid, l->v[LF_VALID_LOSS]);
        push(&c->valid_bleu, c->n_valid, has_bleu ? l->v[LF_VALID_BLEU] : NAN);
        int timed = (l->has & log_bit(LF_ELAPSED)) != 0;
        push(&c->valid_elapsed, c->n_valid, timed ? l->v[LF_ELAPSED] : NAN);
        c->n_timed += has_bleu && timed;
        c->n_valid++;
        c->n_bleu += has_bleu;
    }
    return 1;
}

int train_curves_parse(FILE *f, const char *name, TrainCurves *c, Error *err)
{
    memset(c, 0, sizeof *c);
    if (trainlog_read(f, name, add_line, c, &c->lines, err)) {
        train_curves_free(c);
        return -1;
    }
    return 0;
}

int train_curves_read(const char *path, TrainCurves *c, Error *err)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f) return error_set(err, "%s: cannot read: %s", path, strerror(errno));
    int status = train_curves_parse(f, path, c, err);
    fclose(f);
    return status;
}

void train_curves_free(TrainCurves *c)
{
    free(c->step);
    free(c->loss);
    free(c->valid_step);
    free(c->valid_loss);
    free(c->valid_bleu);
    free(c->valid_accuracy);
    free(c->valid_elapsed);
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------------- the chart */

#define CHART_W 820.0
#define CHART_H 480.0
#define TIME_PANEL_H 240.0   /* the BLEU-against-time chart below the main one */
#define PAD 16.0
#define TITLE_SIZE 16.0
#define TICK_SIZE 12.0
#define LABEL_SIZE 13.0
#define LEGEND_SIZE 13.0
#define TICK_LEN 5.0

static const char *const colour_train = "#1f77b4", *const colour_valid = "#d62728", *const colour_bleu = "#2ca02c";

/* The plot area in px and the axes mapping data into it. */
typedef struct {
    double x0, y0, x1, y1;   /* left, top, right, bottom */
    PlotAxis x, y, y2;       /* steps, loss, BLEU */
} Frame;

static double map_x(const Frame *fr, double v)
{
    return fr->x0 + (v - fr->x.lo) / (fr->x.hi - fr->x.lo) * (fr->x1 - fr->x0);
}

static double map_y(const Frame *fr, const PlotAxis *a, double v)
{
    return fr->y1 - (v - a->lo) / (a->hi - a->lo) * (fr->y1 - fr->y0);
}

static void range_of(const double *v, int n, double *lo, double *hi)
{
    for (int i = 0; i < n; i++) {
        if (isnan(v[i])) continue;
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
}

/* The widest tick label of an axis, in px. */
static double ticks_width(const PlotAxis *a)
{
    char buf[64];
    double w = 0;
    for (int k = 0; k < a->n; k++) {
        plot_axis_label(a, k, buf, sizeof buf);
        double t = svg_text_width(buf, TICK_SIZE);
        if (t > w) w = t;
    }
    return w;
}

/* A series as a polyline, with dots at the points when there are few (a lone
 * validation would otherwise be invisible). NaN values (no BLEU) are left out. */
static void draw_series(Svg *svg, const Frame *fr, const PlotAxis *a, const double *xs, const double *ys, int n,
                        const char *colour, double width, const char *dash, int dots)
{
    double *px = xmalloc(sizeof(double) * (n + 1)), *py = xmalloc(sizeof(double) * (n + 1));
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(ys[i])) continue;
        px[m] = map_x(fr, xs[i]);
        py[m] = map_y(fr, a, ys[i]);
        m++;
    }
    svg_polyline(svg, px, py, m, colour, width, dash);
    if (dots && m <= 200)
        for (int i = 0; i < m; i++)
            svg_circle(svg, px[i], py[i], m < 3 ? 4 : 2.5, colour, NULL);
    free(px);
    free(py);
}

/* The validation BLEU against the run's clock in minutes (seconds for a short run), in the box (x0, top) to
 * (x1, bottom) of its axes: the quality a run had reached after so much time. */
static void draw_time_panel(Svg *svg, const TrainCurves *log, double x0, double x1, double top, double bottom)
{
    int n = log->n_valid;
    double *minutes = xmalloc(sizeof(double) * (n + 1)), *bleu = xmalloc(sizeof(double) * (n + 1));
    int m = 0;
    double last = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(log->valid_elapsed[i]) && !isnan(log->valid_bleu[i]) && log->valid_elapsed[i] > last)
            last = log->valid_elapsed[i];
    /* Minutes, or seconds for a run of under three minutes. */
    double unit = last >= 180 ? 60 : 1;
    for (int i = 0; i < n; i++) {
        if (isnan(log->valid_elapsed[i]) || isnan(log->valid_bleu[i])) continue;
        minutes[m] = log->valid_elapsed[i] / unit;
        bleu[m++] = log->valid_bleu[i];
    }
    double tlo = 0, thi = 0, blo = 0, bhi = -INFINITY;
    range_of(minutes, m, &tlo, &thi);
    range_of(bleu, m, &blo, &bhi);
    if (!(bhi > 0)) bhi = 1;
    if (!(thi > 0)) thi = 1;
    Frame fr = {.x0 = x0, .y0 = top, .x1 = x1, .y1 = bottom};
    plot_axis(tlo, thi, 8, &fr.x);
    plot_axis(blo, bhi, 4, &fr.y);
    char buf[64];
    svg_group_begin(svg, "time", 0, 0);
    SvgText st = svg_text_style(TICK_SIZE);
    st.middle_baseline = 1;
    st.anchor = SVG_ANCHOR_END;
    for (int k = 0; k < fr.y.n; k++) {
        double y = map_y(&fr, &fr.y, plot_axis_tick(&fr.y, k));
        svg_line(svg, fr.x0, y, fr.x1, y, "#e0e0e0", 1, NULL);
        svg_line(svg, fr.x0 - TICK_LEN, y, fr.x0, y, "#444", 1, NULL);
        plot_axis_label(&fr.y, k, buf, sizeof buf);
        svg_text(svg, fr.x0 - TICK_LEN - 4, y, buf, &st);
    }
    st = svg_text_style(TICK_SIZE);
    st.anchor = SVG_ANCHOR_MIDDLE;
    for (int k = 0; k < fr.x.n; k++) {
        double x = map_x(&fr, plot_axis_tick(&fr.x, k));
        svg_line(svg, x, fr.y0, x, fr.y1, "#f0f0f0", 1, NULL);
        svg_line(svg, x, fr.y1, x, fr.y1 + TICK_LEN, "#444", 1, NULL);
        plot_axis_label(&fr.x, k, buf, sizeof buf);
        svg_text(svg, x, fr.y1 + TICK_LEN + 4 + TICK_SIZE, buf, &st);
    }
    svg_rect(svg, fr.x0, fr.y0, fr.x1 - fr.x0, fr.y1 - fr.y0, NULL, "#444", NULL);
    st = svg_text_style(LABEL_SIZE);
    st.anchor = SVG_ANCHOR_MIDDLE;
    svg_text(svg, (fr.x0 + fr.x1) / 2, fr.y1 + TICK_LEN + 4 + TICK_SIZE + 10 + LABEL_SIZE,
             unit == 60 ? "minutes since training began (validations included)"
                        : "seconds since training began (validations included)", &st);
    st.rotate_deg = -90;
    svg_text(svg, PAD + LABEL_SIZE, (fr.y0 + fr.y1) / 2, "validation BLEU", &st);
    draw_series(svg, &fr, &fr.y, minutes, bleu, m, colour_bleu, 2, NULL, 1);
    svg_group_end(svg);
    free(minutes);
    free(bleu);
}

void plot_training_svg_to(FILE *f, const TrainCurves *log, const char *title)
{
    int classifier = log->classes > 0 || log->n_accuracy > 0;
    /* The right axis: a translation model's validation BLEU, a classifier's accuracy. */
    const double *right_values = log->n_bleu > 0 ? log->valid_bleu : log->valid_accuracy;
    const char *right_name = log->n_bleu > 0 ? "validation BLEU" : "validation accuracy (%)";
    const char *right_key = log->n_bleu > 0 ? "validation BLEU (right axis)" : "validation accuracy (right axis)";
    int with_right = log->n_bleu > 0 || log->n_accuracy > 0;
    Frame fr;
    double xlo = 0, xhi = 0, ylo = INFINITY, yhi = -INFINITY, blo = 0, bhi = -INFINITY;
    range_of(log->step, log->n_steps, &xlo, &xhi);
    range_of(log->valid_step, log->n_valid, &xlo, &xhi);
    range_of(log->loss, log->n_steps, &ylo, &yhi);
    range_of(log->valid_loss, log->n_valid, &ylo, &yhi);
    if (!(ylo <= yhi)) ylo = yhi = 0;   /* no data: an empty frame */
    range_of(right_values, log->n_valid, &blo, &bhi);
    if (!(bhi > 0)) bhi = 1;
    plot_axis(xlo, xhi, 8, &fr.x);
    if (fr.x.step < 1) {
        /* Steps are whole numbers: a run of a few steps gets ticks 0, 1, 2, ... */
        fr.x.step = 1;
        fr.x.first = (long)floor(xlo);
        fr.x.lo = (double)fr.x.first;
        fr.x.hi = ceil(xhi) > fr.x.lo ? ceil(xhi) : fr.x.lo + 1;
        fr.x.n = (int)(fr.x.hi - fr.x.lo) + 1;
        fr.x.decimals = 0;
    }
    /* Steps end where training ended: the x axis stops at the last step rather than at
     * the next round number, with the ticks that fall inside. */
    if (xhi > fr.x.lo) {
        fr.x.hi = xhi;
        while (fr.x.n > 1 && plot_axis_tick(&fr.x, fr.x.n - 1) > xhi * (1 + 1e-9)) fr.x.n--;
    }
    plot_axis(ylo, yhi, 6, &fr.y);
    plot_axis(blo, bhi, 6, &fr.y2);

    /* Margins from what goes in them: tick labels and the rotated axis titles. */
    double left = PAD + LABEL_SIZE + 10 + ticks_width(&fr.y) + TICK_LEN + 4;
    double right = with_right ? PAD + LABEL_SIZE + 10 + ticks_width(&fr.y2) + TICK_LEN + 4 : PAD + 12;
    double top = PAD + (title ? TITLE_SIZE + 12 : 0) + LEGEND_SIZE + 18;
    double bottom = TICK_LEN + 4 + TICK_SIZE + 10 + LABEL_SIZE + PAD;
    double width = CHART_W;
    if (title && svg_text_width(title, TITLE_SIZE) + 2 * PAD > width)
        width = ceil(svg_text_width(title, TITLE_SIZE) + 2 * PAD);
    fr.x0 = left;
    fr.x1 = width - right;
    fr.y0 = top;
    fr.y1 = CHART_H - bottom;

    int with_time = log->n_timed > 0;
    Svg svg;
    svg_begin(&svg, f, width, CHART_H + (with_time ? TIME_PANEL_H : 0));
    SvgText st;
    char buf[64];
    if (title) {
        st = svg_text_style(TITLE_SIZE);
        st.bold = 1;
        svg_text(&svg, PAD, PAD + TITLE_SIZE, title, &st);
    }

    /* Legend, in a row above the plot area, so it never hides a curve. */
    svg_group_begin(&svg, "legend", 0, 0);
    struct { const char *label, *colour, *dash; int show; } keys[] = {
        {"training loss", colour_train, NULL, log->n_steps > 0},
        {"validation loss", colour_valid, NULL, log->n_valid > 0},
        {right_key, colour_bleu, "5 3", with_right},
    };
    double lx = fr.x0, ly = top - 14;
    st = svg_text_style(LEGEND_SIZE);
    st.middle_baseline = 1;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (!keys[k].show) continue;
        svg_line(&svg, lx, ly, lx + 24, ly, keys[k].colour, 2, keys[k].dash);
        svg_text(&svg, lx + 30, ly, keys[k].label, &st);
        lx += 30 + svg_text_width(keys[k].label, LEGEND_SIZE) + 20;
    }
    svg_group_end(&svg);

    /* Grid and ticks. */
    svg_group_begin(&svg, "axes", 0, 0);
    st = svg_text_style(TICK_SIZE);
    st.middle_baseline = 1;
    st.anchor = SVG_ANCHOR_END;
    for (int k = 0; k < fr.y.n; k++) {
        double y = map_y(&fr, &fr.y, plot_axis_tick(&fr.y, k));
        svg_line(&svg, fr.x0, y, fr.x1, y, "#e0e0e0", 1, NULL);
        svg_line(&svg, fr.x0 - TICK_LEN, y, fr.x0, y, "#444", 1, NULL);
        plot_axis_label(&fr.y, k, buf, sizeof buf);
        svg_text(&svg, fr.x0 - TICK_LEN - 4, y, buf, &st);
    }
    st.anchor = SVG_ANCHOR_START;
    for (int k = 0; with_right && k < fr.y2.n; k++) {
        double y = map_y(&fr, &fr.y2, plot_axis_tick(&fr.y2, k));
        svg_line(&svg, fr.x1, y, fr.x1 + TICK_LEN, y, "#444", 1, NULL);
        plot_axis_label(&fr.y2, k, buf, sizeof buf);
        svg_text(&svg, fr.x1 + TICK_LEN + 4, y, buf, &st);
    }
    st = svg_text_style(TICK_SIZE);
    st.anchor = SVG_ANCHOR_MIDDLE;
    for (int k = 0; k < fr.x.n; k++) {
        double x = map_x(&fr, plot_axis_tick(&fr.x, k));
        svg_line(&svg, x, fr.y0, x, fr.y1, "#f0f0f0", 1, NULL);
        svg_line(&svg, x, fr.y1, x, fr.y1 + TICK_LEN, "#444", 1, NULL);
        plot_axis_label(&fr.x, k, buf, sizeof buf);
        svg_text(&svg, x, fr.y1 + TICK_LEN + 4 + TICK_SIZE, buf, &st);
    }
    svg_rect(&svg, fr.x0, fr.y0, fr.x1 - fr.x0, fr.y1 - fr.y0, NULL, "#444", NULL);
    st = svg_text_style(LABEL_SIZE);
    st.anchor = SVG_ANCHOR_MIDDLE;
    svg_text(&svg, (fr.x0 + fr.x1) / 2, CHART_H - PAD, "step", &st);
    st.rotate_deg = -90;
    double mid = (fr.y0 + fr.y1) / 2;
    svg_text(&svg, PAD + LABEL_SIZE, mid, classifier ? "loss per example (line)" : "loss per target token", &st);
    if (with_right) {
        st.rotate_deg = 90;
        svg_text(&svg, width - PAD - LABEL_SIZE, mid, right_name, &st);
    }
    svg_group_end(&svg);

    svg_group_begin(&svg, "series", 0, 0);
    draw_series(&svg, &fr, &fr.y, log->step, log->loss, log->n_steps, colour_train, 1.5, NULL, log->n_steps < 2);
    draw_series(&svg, &fr, &fr.y, log->valid_step, log->valid_loss, log->n_valid, colour_valid, 2, NULL, 1);
    if (with_right)
        draw_series(&svg, &fr, &fr.y2, log->valid_step, right_values, log->n_valid, colour_bleu, 2, "5 3", 1);
    svg_group_end(&svg);
    if (with_time) draw_time_panel(&svg, log, fr.x0, fr.x1, CHART_H + PAD, CHART_H + TIME_PANEL_H - bottom);
    svg_end(&svg);
}

int plot_training(const char *run_dir, const char *out_path, char *warning, size_t cap, Error *err)
{
    if (cap) warning[0] = 0;
    size_t n = strlen(run_dir) + 32;
    char *log_path = xmalloc(n), *default_out = xmalloc(n);
    snprintf(log_path, n, "%s/train.log", run_dir);
    snprintf(default_out, n, "%s/training.svg", run_dir);
    if (!out_path) out_path = default_out;
    TrainCurves log;
    int status = -1;
    if (train_curves_read(log_path, &log, err)) goto done;
    trainlog_describe_skipped(&log.lines, log_path, warning, cap);
    if (log.lines.n_lines == 0) {
        error_set(err, "%s: empty: nothing to plot (has the run logged a step yet?)", log_path);
        goto done;
    }
    if (log.n_steps == 0 && log.n_valid == 0) {
        error_set(err, "%s: no step or validation lines to plot%s", log_path,
                  log.lines.n_malformed == log.lines.n_lines ? " (every line is malformed)" : "");
        goto done;
    }
    size_t tn = strlen(run_dir) + 32;
    char *title = xmalloc(tn);
    snprintf(title, tn, "Training: %s", run_dir);
    OutFile o;
    if (outfile_open(&o, out_path, err) == 0) {
        plot_training_svg_to(o.f, &log, title);
        status = outfile_commit(&o, err);
    }
    free(title);
done:
    train_curves_free(&log);
    free(log_path);
    free(default_out);
    return status;
}
