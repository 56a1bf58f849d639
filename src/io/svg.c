#include "io/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---------------------------------------------------------------- text */

/* The code point at s (at most `len` bytes) and its length in bytes, with everything
 * XML cannot carry, or a reader should not see, replaced by U+FFFD: invalid UTF-8
 * (one byte at a time, so the rest of the string survives), control characters and
 * the noncharacters U+FFFE / U+FFFF. */
static int32_t next_char(const char *s, size_t len, size_t *bytes)
{
    int32_t cp;
    utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)len, &cp);
    if (n <= 0) {
        *bytes = 1;
        return 0xFFFD;
    }
    *bytes = (size_t)n;
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) return 0xFFFD;
    return cp;
}

/* Appends the escaped form of one code point to out (at least 8 bytes); returns the
 * bytes written. */
static size_t escape_char(int32_t cp, char *out)
{
    const char *entity = NULL;
    switch (cp) {
    case '&': entity = "&amp;"; break;
    case '<': entity = "&lt;"; break;
    case '>': entity = "&gt;"; break;
    case '"': entity = "&quot;"; break;
    case '\'': entity = "&apos;"; break;
    }
    if (entity) {
        size_t n = strlen(entity);
        memcpy(out, entity, n);
        return n;
    }
    return (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)out);
}

char *svg_escape(const char *s)
{
    size_t len = strlen(s), cap = 6 * len + 1, at = 0;   /* "&quot;" is the longest per input byte */
    char *out = xmalloc(cap);
    for (size_t i = 0; i < len;) {
        size_t bytes;
        int32_t cp = next_char(s + i, len - i, &bytes);
        at += escape_char(cp, out + at);
        i += bytes;
    }
    out[at] = 0;
    return out;
}

void svg_put_escaped(FILE *f, const char *s)
{
    size_t len = strlen(s);
    char buf[8];
    for (size_t i = 0; i < len;) {
        size_t bytes;
        int32_t cp = next_char(s + i, len - i, &bytes);
        fwrite(buf, 1, escape_char(cp, buf), f);
        i += bytes;
    }
}

int svg_text_columns(const char *s)
{
    size_t len = strlen(s);
    int cols = 0;
    for (size_t i = 0; i < len;) {
        size_t bytes;
        int32_t cp = next_char(s + i, len - i, &bytes);
        cols += utf8proc_charwidth(cp);
        i += bytes;
    }
    return cols;
}

/* Advance widths of ASCII 32..126 in DejaVu Sans, in thousandths of an em, measured in
 * Chromium (canvas measureText at 1000 px). */
static const short dejavu_ascii[95] = {
    318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636,
    636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775,
    752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390,
    337, 390, 838, 500, 500, 613, 635, 550, 635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612,
    635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636, 337, 636, 838,
};

double svg_text_width(const char *s, double size)
{
    size_t len = strlen(s);
    double em = 0;
    for (size_t i = 0; i < len;) {
        size_t bytes;
        int32_t cp = next_char(s + i, len - i, &bytes);
        int cols = utf8proc_charwidth(cp);
        if (cp >= 32 && cp < 127) em += dejavu_ascii[cp - 32] / 1000.0;
        else if (cols == 2) em += 1.0;
        else if (cols == 1) em += cp >= 0x0900 && cp <= 0x097F ? 0.66 : 0.78;
        i += bytes;
    }
    return em * size;
}

/* ---------------------------------------------------------------- colour */

/* viridis at 0, 1/8, ..., 1 (matplotlib's table; the same as R's viridis(9)). */
static const unsigned char viridis_stops[9][3] = {
    {0x44, 0x01, 0x54}, {0x47, 0x2D, 0x7B}, {0x3B, 0x52, 0x8B}, {0x2C, 0x72, 0x8E}, {0x21, 0x90, 0x8C},
    {0x27, 0xAD, 0x81}, {0x5D, 0xC8, 0x63}, {0xAA, 0xDC, 0x32}, {0xFD, 0xE7, 0x25},
};

void svg_viridis(double t, char out[8])
{
    if (!(t > 0)) t = 0;   /* also NaN */
    if (t > 1) t = 1;
    double pos = t * 8;
    int k = (int)pos;
    if (k > 7) k = 7;
    double f = pos - k;
    int rgb[3];
    for (int c = 0; c < 3; c++)
        rgb[c] = (int)lround(viridis_stops[k][c] + f * (viridis_stops[k + 1][c] - viridis_stops[k][c]));
    snprintf(out, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* ---------------------------------------------------------------- document */

/* A coordinate: finite, two decimals at most, no trailing zeros ("12", "3.5"). */
static void put_num(FILE *f, double v)
{
    if (!isfinite(v)) v = 0;
    char buf[64];
    snprintf(buf, sizeof buf, "%.2f", v);
    char *end = buf + strlen(buf);
    while (end > buf && end[-1] == '0') *--end = 0;
    if (end > buf && end[-1] == '.') *--end = 0;
    if (!strcmp(buf, "-0")) strcpy(buf, "0");
    fputs(buf, f);
}

/* ` name="value"` with the value escaped; nothing when value is NULL. */
static void put_attr(FILE *f, const char *name, const char *value)
{
    if (!value) return;
    fprintf(f, " %s=\"", name);
    svg_put_escaped(f, value);
    fputc('"', f);
}

static void put_num_attr(FILE *f, const char *name, double v)
{
    fprintf(f, " %s=\"", name);
    put_num(f, v);
    fputc('"', f);
}

/* The root element's opening, as svg_begin writes it, up to the size. */
#define SVG_ROOT "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\""

void svg_begin(Svg *svg, FILE *f, double width, double height)
{
    svg->f = f;
    fputs(SVG_ROOT, f);
    put_num(f, width);
    fputc('"', f);
    put_num_attr(f, "height", height);
    fputs(" viewBox=\"0 0 ", f);
    put_num(f, width);
    fputc(' ', f);
    put_num(f, height);
    fputc('"', f);
    put_attr(f, "font-family", SVG_FONT_FAMILY);
    fputs(">\n", f);
    svg_rect(svg, 0, 0, width, height, "white", NULL, NULL);
}

int svg_file_is_nmts(const char *path) { return file_begins_with(path, SVG_ROOT, sizeof SVG_ROOT - 1); }

void svg_end(Svg *svg)
{
    fputs("</svg>\n", svg->f);
}

void svg_group_begin(Svg *svg, const char *class_name, double dx, double dy)
{
    fputs("<g", svg->f);
    put_attr(svg->f, "class", class_name);
    if (dx != 0 || dy != 0) {
        fputs(" transform=\"translate(", svg->f);
        put_num(svg->f, dx);
        fputc(' ', svg->f);
        put_num(svg->f, dy);
        fputs(")\"", svg->f);
    }
    fputs(">\n", svg->f);
}

void svg_group_end(Svg *svg)
{
    fputs("</g>\n", svg->f);
}

/* ---------------------------------------------------------------- shapes */

void svg_rect(Svg *svg, double x, double y, double w, double h, const char *fill, const char *stroke,
              const char *title)
{
    FILE *f = svg->f;
    fputs("<rect", f);
    put_num_attr(f, "x", x);
    put_num_attr(f, "y", y);
    put_num_attr(f, "width", w > 0 ? w : 0);
    put_num_attr(f, "height", h > 0 ? h : 0);
    put_attr(f, "fill", fill ? fill : "none");
    put_attr(f, "stroke", stroke);
    if (!title) {
        fputs("/>\n", f);
        return;
    }
    fputs("><title>", f);
    svg_put_escaped(f, title);
    fputs("</title></rect>\n", f);
}

void svg_line(Svg *svg, double x1, double y1, double x2, double y2, const char *stroke, double width,
              const char *dash)
{
    FILE *f = svg->f;
    fputs("<line", f);
    put_num_attr(f, "x1", x1);
    put_num_attr(f, "y1", y1);
    put_num_attr(f, "x2", x2);
    put_num_attr(f, "y2", y2);
    put_attr(f, "stroke", stroke ? stroke : "black");
    put_num_attr(f, "stroke-width", width);
    put_attr(f, "stroke-dasharray", dash);
    fputs("/>\n", f);
}

void svg_polyline(Svg *svg, const double *xs, const double *ys, int n, const char *stroke, double width,
                  const char *dash)
{
    if (n < 1) return;
    FILE *f = svg->f;
    fputs("<polyline points=\"", f);
    for (int i = 0; i < n; i++) {
        if (i) fputc(' ', f);
        put_num(f, xs[i]);
        fputc(',', f);
        put_num(f, ys[i]);
    }
    fputc('"', f);
    put_attr(f, "fill", "none");
    put_attr(f, "stroke", stroke ? stroke : "black");
    put_num_attr(f, "stroke-width", width);
    put_attr(f, "stroke-linejoin", "round");
    put_attr(f, "stroke-dasharray", dash);
    fputs("/>\n", f);
}

void svg_circle(Svg *svg, double cx, double cy, double r, const char *fill, const char *stroke)
{
    FILE *f = svg->f;
    fputs("<circle", f);
    put_num_attr(f, "cx", cx);
    put_num_attr(f, "cy", cy);
    put_num_attr(f, "r", r);
    put_attr(f, "fill", fill ? fill : "none");
    put_attr(f, "stroke", stroke);
    fputs("/>\n", f);
}

SvgText svg_text_style(double size)
{
    return (SvgText){.size = size, .anchor = SVG_ANCHOR_START};
}

void svg_text(Svg *svg, double x, double y, const char *text, const SvgText *style)
{
    static const char *anchors[] = {"start", "middle", "end"};
    FILE *f = svg->f;
    fputs("<text", f);
    put_num_attr(f, "x", x);
    put_num_attr(f, "y", y);
    put_num_attr(f, "font-size", style->size);
    if (style->anchor != SVG_ANCHOR_START) put_attr(f, "text-anchor", anchors[style->anchor]);
    if (style->middle_baseline) put_attr(f, "dominant-baseline", "central");
    if (style->bold) put_attr(f, "font-weight", "bold");
    if (style->fill) put_attr(f, "fill", style->fill);
    if (style->rotate_deg != 0) {
        fputs(" transform=\"rotate(", f);
        put_num(f, style->rotate_deg);
        fputc(' ', f);
        put_num(f, x);
        fputc(' ', f);
        put_num(f, y);
        fputs(")\"", f);
    }
    fputc('>', f);
    svg_put_escaped(f, text);
    fputs("</text>\n", f);
}

/* ---------------------------------------------------------------- axes */

int plot_axis(double lo, double hi, int target, PlotAxis *axis)
{
    if (!isfinite(lo) || !isfinite(hi) || lo > hi) return -1;
    if (target < 1) target = 1;
    if (hi == lo) {
        double half = lo != 0 ? fabs(lo) * 0.1 : 1;
        lo -= half;
        hi += half;
    }
    /* The smallest 1-2-5 step that covers the range in `target` intervals. */
    double raw = (hi - lo) / target;
    double mag = pow(10, floor(log10(raw)));
    double r = raw / mag;
    double step = (r <= 1 + 1e-9 ? 1 : r <= 2 + 1e-9 ? 2 : r <= 5 + 1e-9 ? 5 : 10) * mag;
    /* The small tolerance keeps 0.6 / 0.2 = 2.9999999999999996 from adding a tick. */
    double first = floor(lo / step + 1e-9), last = ceil(hi / step - 1e-9);
    axis->step = step;
    axis->first = (long)first;
    axis->n = (int)(last - first) + 1;
    axis->lo = first * step;
    axis->hi = last * step;
    int decimals = -(int)floor(log10(step) + 1e-9);
    axis->decimals = decimals > 0 ? decimals : 0;
    return 0;
}

double plot_axis_tick(const PlotAxis *axis, int k)
{
    return (double)(axis->first + k) * axis->step;
}

void plot_axis_label(const PlotAxis *axis, int k, char *buf, size_t cap)
{
    double v = plot_axis_tick(axis, k);
    if (fabs(v) < axis->step * 1e-6) v = 0;   /* never "-0" */
    snprintf(buf, cap, "%.*f", axis->decimals, v);
}
