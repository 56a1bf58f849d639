/* svg.h — a small SVG writer: the drawing primitives the attention heatmap and the
 * training plot need, written straight to a FILE*, with no dependency.
 *
 * What it promises:
 *   - every number it writes is finite (a NaN or infinity becomes 0), with at most
 *     two decimals, so a browser never meets "nan" in an attribute;
 *   - every string it writes is valid UTF-8 with the XML specials & < > " ' escaped;
 *     invalid UTF-8 bytes, control characters (C0 including tab and newline, DEL, C1)
 *     and the XML-forbidden noncharacters U+FFFE / U+FFFF become U+FFFD, so one bad
 *     token cannot make the whole document unreadable. Text is otherwise kept as given
 *     (no normalisation: the caller's tokens are what the reader sees);
 *   - text inherits one font-family list, set on the root element (SVG_FONT_FAMILY),
 *     that covers Latin, Devanagari, Cyrillic and CJK where those fonts are installed
 *     (Debian: fonts-dejavu-core for Latin and Cyrillic; fonts-noto-core or
 *     fonts-lohit-deva for Devanagari, which DejaVu lacks; fonts-noto-cjk).
 *
 * Write errors are not checked per call: stdio keeps the stream's error flag, and
 * outfile_commit checks it once at the end (src/io/outfile.h: the file is written whole
 * or not at all).
 *
 * Example:
 *   Error err;
 *   OutFile o;
 *   if (outfile_open(&o, "out.svg", &err)) ... err.msg
 *   Svg svg;
 *   svg_begin(&svg, o.f, 200, 100);
 *   svg_rect(&svg, 10, 10, 50, 20, "#21908c", NULL, "a tooltip");
 *   SvgText st = svg_text_style(12);
 *   st.anchor = SVG_ANCHOR_MIDDLE;
 *   svg_text(&svg, 100, 60, "नमस्ते <world>", &st);
 *   svg_end(&svg);
 *   if (outfile_commit(&o, &err)) ... err.msg
 *
 * Coordinates are user units (pixels at 100%), y grows downwards.
 */
#ifndef SVG_H
#define SVG_H
#include <stdio.h>

#include "base/util.h"   /* defines: Error */

/* Fonts for every script nmt is used with; the browser takes each character from the
 * first family that has it. DejaVu has no Devanagari: a machine with only DejaVu shows
 * Marathi or Hindi as empty boxes, so two Devanagari families follow, from Debian's
 * fonts-noto-core and fonts-lohit-deva, then Windows' and macOS' own. */
#define SVG_FONT_FAMILY                                                                                       \
    "DejaVu Sans, Noto Sans, Noto Sans Devanagari, Lohit Devanagari, Nirmala UI, Kohinoor Devanagari, "       \
    "Noto Sans CJK SC, Noto Sans CJK JP, sans-serif"

typedef struct {
    FILE *f;           /* where the document goes; not owned */
} Svg;

/* Starts a document on an open stream: the root <svg> element with width, height and
 * a matching viewBox, a white background and the font family. */
void svg_begin(Svg *svg, FILE *f, double width, double height);
/* 1 if path is a regular file (not a symbolic link) whose first line opens as
 * svg_begin's root element does (its namespace and version, then a size): a picture
 * nmt drew. */
int svg_file_is_nmts(const char *path);
/* Ends the document (</svg>). The stream stays open. */
void svg_end(Svg *svg);

/* <g> with an optional class (NULL: none) and translation; groups nest. */
void svg_group_begin(Svg *svg, const char *class_name, double dx, double dy);
void svg_group_end(Svg *svg);

/* Colours and other style strings are written as given (escaped): "#2a788e", "none",
 * "black". NULL stroke means no outline. title, when not NULL, becomes a <title>
 * child: the tooltip a browser shows on hover. */
void svg_rect(Svg *svg, double x, double y, double w, double h, const char *fill, const char *stroke,
              const char *title);
/* dash: NULL for a solid line, else a stroke-dasharray such as "4 3". */
void svg_line(Svg *svg, double x1, double y1, double x2, double y2, const char *stroke, double width,
              const char *dash);
/* n points (xs[i], ys[i]); nothing is written for n < 1. */
void svg_polyline(Svg *svg, const double *xs, const double *ys, int n, const char *stroke, double width,
                  const char *dash);
void svg_circle(Svg *svg, double cx, double cy, double r, const char *fill, const char *stroke);

typedef enum { SVG_ANCHOR_START, SVG_ANCHOR_MIDDLE, SVG_ANCHOR_END } SvgAnchor;

/* How a piece of text is drawn. (x, y) is the anchor point on the baseline, unless
 * middle_baseline is set (then y is the text's vertical middle). rotate_deg turns the
 * text about (x, y), clockwise as SVG counts it (-45: rising to the right). */
typedef struct {
    double size;           /* font size, px */
    SvgAnchor anchor;
    double rotate_deg;
    const char *fill;      /* NULL: black */
    int bold;
    int middle_baseline;   /* dominant-baseline="central" */
} SvgText;

/* A plain style: the given size, start anchor, no rotation, black. */
SvgText svg_text_style(double size);
void svg_text(Svg *svg, double x, double y, const char *text, const SvgText *style);

/* s made safe for XML text and attribute values, as described above. Malloc'd. */
char *svg_escape(const char *s);
/* Writes svg_escape(s) to f without the allocation. */
void svg_put_escaped(FILE *f, const char *s);

/* The width of s in terminal columns (utf8proc_charwidth): 2 for wide (CJK) characters,
 * 0 for combining marks, 1 otherwise; an invalid byte counts 1. */
int svg_text_columns(const char *s);
/* An upper estimate of the rendered width of s in px at font size `size`, for layout.
 * ASCII characters count their advance in DejaVu Sans (the first family, and one of
 * the widest sans-serif fonts, so fallbacks are narrower); wide characters (CJK,
 * utf8proc_charwidth 2) 1 em; combining marks (width 0) nothing; Devanagari 0.66 em
 * (its letters average 0.63 em in Noto Sans Devanagari; vowel signs and conjuncts make
 * words narrower still); any other character 0.78 em, which covers Cyrillic (0.67 em
 * lower case, 0.77 upper case on average in DejaVu Sans), Greek and accented Latin.
 * Overestimating costs some white space; underestimating would let labels run into
 * cells. */
double svg_text_width(const char *s, double size);

/* Colour for t in [0, 1] on the viridis scale (matplotlib's default: perceptually
 * uniform, dark violet at 0 to yellow at 1, readable in grey and by colour-blind
 * readers), interpolated linearly between 9 stops. t outside [0, 1] is clamped, NaN
 * is 0. Writes "#rrggbb" and a NUL into out. */
void svg_viridis(double t, char out[8]);
/* ---------------------------------------------------------------- axes */

/* An axis whose ticks are whole multiples of a step of 1, 2 or 5 times a power of
 * ten, covering the data: lo <= data min, hi >= data max, both multiples of step. */
typedef struct {
    double lo, hi;     /* the axis range */
    double step;       /* distance between ticks */
    long first;        /* lo / step: tick k is at (first + k) * step, exactly */
    int n;             /* ticks lo, lo + step, ..., hi: n of them */
    int decimals;      /* digits after the point that print every tick exactly */
} PlotAxis;

/* The axis for data in [lo, hi] with about `target` intervals (at most target + 2
 * ticks beyond the first; target >= 1). lo == hi is widened around the value.
 * Returns 0, or -1 if lo or hi is not finite or lo > hi. */
int plot_axis(double lo, double hi, int target, PlotAxis *axis);
double plot_axis_tick(const PlotAxis *axis, int k);
/* Tick k as text with axis->decimals decimals ("0", "0.2", "1500"). */
void plot_axis_label(const PlotAxis *axis, int k, char *buf, size_t cap);

#endif
