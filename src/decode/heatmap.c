#include "decode/heatmap.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/outfile.h" /* defines: OutFile, outfile_open, outfile_commit */
#include "io/svg.h"     /* defines: Svg, svg_*, SvgText, PlotAxis, plot_axis, svg_file_is_nmts */

/* Sizes in px. A cell is square; at LABEL_SIZE a row needs ~1.5 em for Devanagari
 * (vowel signs above and below the line), and 45° labels need columns of at least
 * line height / sin 45° ≈ 1.7 em so that neighbours do not touch. */
#define LABEL_SIZE 14.0
#define TITLE_SIZE 16.0
#define CAPTION_SIZE 12.0
#define CELL_MIN 28.0
#define PAD 16.0
#define LABEL_GAP 8.0          /* between a label and the grid */
#define LEGEND_GAP 28.0        /* between the grid (or the last label) and the legend bar */
#define LEGEND_BAR_W 16.0
#define LEGEND_BAR_MIN_H 140.0
#define LEGEND_STEPS 64        /* bands the colour bar is drawn in */
#define COS45 0.70710678118654752

/* s cut to max_columns columns with "…" (malloc'd; NULL gives ""). Cuts between code
 * points and never right before a combining mark, so a Devanagari letter keeps its
 * vowel sign. */
static char *cut_text(const char *s, int max_columns)
{
    if (!s) s = "";
    if (svg_text_columns(s) <= max_columns) return xstrdup(s);
    size_t len = strlen(s), cut = 0;
    int cols = 0;
    char one[5];
    for (size_t i = 0; i < len;) {
        /* One UTF-8 sequence: a byte and at most 3 continuation bytes. */
        size_t n = 1;
        while (i + n < len && n < 4 && ((unsigned char)s[i + n] & 0xC0) == 0x80) n++;
        memcpy(one, s + i, n);
        one[n] = 0;
        int w = svg_text_columns(one);
        if (w > 0 && cols + w > max_columns - 1) break;
        cols += w;
        i += n;
        cut = i;
    }
    char *t = xmalloc(cut + 4);
    memcpy(t, s, cut);
    memcpy(t + cut, "\xE2\x80\xA6", 4);   /* … and the NUL */
    return t;
}

/* Where everything goes, computed before anything is drawn. */
typedef struct {
    double width, height;
    double grid_x, grid_y, cell;   /* the grid's top-left corner and cell size */
    double legend_x, legend_y, legend_h;
} Layout;

/* Bold text runs 10-15% wider than the regular widths svg_text_width estimates. */
static double title_width(const char *title)
{
    return title ? 1.15 * svg_text_width(title, TITLE_SIZE) : 0;
}

static void layout_compute(Layout *L, const char *title, char **src, int n_src, char **out, int n_out)
{
    double title_h = title ? TITLE_SIZE + PAD : 0;
    L->cell = CELL_MIN;

    /* Left: the widest output label, or the corner captions. */
    double left = svg_text_width("output ↓", CAPTION_SIZE);
    for (int i = 0; i < n_out; i++) {
        double w = svg_text_width(out[i], LABEL_SIZE);
        if (w > left) left = w;
    }
    /* Whole pixels, so that cell edges fall on pixel boundaries and no seams show. */
    L->grid_x = ceil(PAD + left + LABEL_GAP);

    /* Top: a source label of width w rises at 45° from its anchor: its baseline ends
     * w cos 45° up and right, and its glyphs (up to ~1 em high with Devanagari vowel
     * signs) stand another em cos 45° up-left of the baseline; descenders (~0.3 em)
     * reach down-right. */
    double rise = 2 * CAPTION_SIZE + 4;   /* the corner captions */
    double reach_right = 0;               /* beyond the grid's right edge */
    for (int j = 0; j < n_src; j++) {
        double w = svg_text_width(src[j], LABEL_SIZE);
        double up = (w + LABEL_SIZE) * COS45;
        if (up > rise) rise = up;
        double right = (j + 0.5) * L->cell + 0.25 * LABEL_SIZE + (w + 0.3 * LABEL_SIZE) * COS45 - n_src * L->cell;
        if (right > reach_right) reach_right = right;
    }
    L->grid_y = ceil(PAD + title_h + rise + LABEL_GAP);

    double grid_w = n_src * L->cell, grid_h = n_out * L->cell;
    L->legend_x = L->grid_x + grid_w + LEGEND_GAP;
    L->legend_y = L->grid_y;
    L->legend_h = grid_h > LEGEND_BAR_MIN_H ? grid_h : LEGEND_BAR_MIN_H;
    /* The legend's labels ("0.75") and caption ("attention"), right of and below the bar. */
    double legend_w = LEGEND_BAR_W + 6 + svg_text_width("0.00", CAPTION_SIZE);
    if (svg_text_width("attention", CAPTION_SIZE) > legend_w) legend_w = svg_text_width("attention", CAPTION_SIZE);
    double right = L->legend_x + legend_w;
    if (L->grid_x + grid_w + reach_right > right) right = L->grid_x + grid_w + reach_right;
    L->width = ceil(right + PAD);
    if (2 * PAD + title_width(title) > L->width) L->width = ceil(2 * PAD + title_width(title));
    double bottom = L->grid_y + (grid_h > L->legend_h ? grid_h : L->legend_h) + CAPTION_SIZE + LABEL_GAP;
    L->height = ceil(bottom + PAD);
}

/* The colour bar from 0 (bottom) to top_value, with nice ticks and top_value itself. */
static void draw_legend(Svg *svg, const Layout *L, double top_value)
{
    char colour[8], label[32];
    svg_group_begin(svg, "legend", 0, 0);
    double band = L->legend_h / LEGEND_STEPS;
    for (int k = 0; k < LEGEND_STEPS; k++) {
        svg_viridis((k + 0.5) / LEGEND_STEPS, colour);
        /* Bands overlap by half a pixel so that no seam shows between them. */
        svg_rect(svg, L->legend_x, L->legend_y + L->legend_h - (k + 1) * band, LEGEND_BAR_W, band + 0.5, colour,
                 NULL, NULL);
    }
    svg_rect(svg, L->legend_x, L->legend_y, LEGEND_BAR_W, L->legend_h, NULL, "#444", NULL);
    SvgText st = svg_text_style(CAPTION_SIZE);
    st.middle_baseline = 1;
    double tx = L->legend_x + LEGEND_BAR_W + 6;
    PlotAxis axis;
    plot_axis(0, top_value, 4, &axis);
    for (int k = 0; k < axis.n; k++) {
        double v = plot_axis_tick(&axis, k);
        /* Ticks near the top would crowd the top value's label. */
        if (v > top_value * 0.85 + 1e-12) break;
        double y = L->legend_y + L->legend_h * (1 - v / top_value);
        svg_line(svg, L->legend_x + LEGEND_BAR_W - 4, y, L->legend_x + LEGEND_BAR_W, y, "white", 1, NULL);
        plot_axis_label(&axis, k, label, sizeof label);
        svg_text(svg, tx, y, label, &st);
    }
    /* A row's largest weight is at least 1 / n_src, so two decimals suffice unless the
     * weights are not distributions. */
    snprintf(label, sizeof label, top_value >= 0.01 ? "%.2f" : "%.2g", top_value);
    svg_text(svg, tx, L->legend_y, label, &st);
    st.middle_baseline = 0;
    st.fill = "#444";
    svg_text(svg, L->legend_x, L->legend_y + L->legend_h + CAPTION_SIZE + 4, "attention", &st);
    svg_group_end(svg);
}

int heatmap_write_svg_to(FILE *f, const char *title, const char *const *src, int n_src,
                         const char *const *out, int n_out, const float *attn, Error *err)
{
    if (n_src < 0) n_src = 0;
    if (n_out < 0) n_out = 0;
    if (n_src > 0 && n_out > 0 && !attn) return error_set(err, "heatmap: no attention weights");
    char **s = xmalloc(sizeof(char *) * (n_src + 1)), **o = xmalloc(sizeof(char *) * (n_out + 1));
    for (int j = 0; j < n_src; j++) s[j] = cut_text(src[j], HEATMAP_LABEL_COLUMNS);
    for (int i = 0; i < n_out; i++) o[i] = cut_text(out[i], HEATMAP_LABEL_COLUMNS);
    char *cut_title = title ? cut_text(title, HEATMAP_TITLE_COLUMNS) : NULL;
    title = cut_title;

    Svg svg;
    SvgText st;
    if (n_src == 0 || n_out == 0) {
        double w = 480;
        if (2 * PAD + title_width(title) > w) w = ceil(2 * PAD + title_width(title));
        svg_begin(&svg, f, w, 2 * PAD + (title ? TITLE_SIZE + PAD : 0) + LABEL_SIZE + 4);
        double y = PAD + TITLE_SIZE;
        if (title) {
            st = svg_text_style(TITLE_SIZE);
            st.bold = 1;
            svg_text(&svg, PAD, y, title, &st);
            y += PAD + LABEL_SIZE;
        }
        st = svg_text_style(LABEL_SIZE);
        st.fill = "#444";
        svg_text(&svg, PAD, y, n_src == 0 && n_out == 0 ? "no source and no output tokens: nothing to show"
                               : n_src == 0 ? "no source tokens: nothing to show" : "no output tokens: nothing to show",
                 &st);
        svg_end(&svg);
        goto done;
    }

    Layout L;
    layout_compute(&L, title, s, n_src, o, n_out);
    svg_begin(&svg, f, L.width, L.height);
    if (title) {
        st = svg_text_style(TITLE_SIZE);
        st.bold = 1;
        svg_text(&svg, PAD, PAD + TITLE_SIZE, title, &st);
    }

    /* Corner captions: which axis is which. */
    st = svg_text_style(CAPTION_SIZE);
    st.anchor = SVG_ANCHOR_END;
    st.fill = "#444";
    svg_text(&svg, L.grid_x - LABEL_GAP, L.grid_y - LABEL_GAP - CAPTION_SIZE - 4, "source →", &st);
    svg_text(&svg, L.grid_x - LABEL_GAP, L.grid_y - LABEL_GAP, "output ↓", &st);

    /* Source labels, rising at 45° from just above the middle of each column. The
     * anchor is shifted right by a quarter em so that the glyphs, which sit above the
     * baseline (up and left once rotated), end up centred on the column. */
    svg_group_begin(&svg, "source", 0, 0);
    st = svg_text_style(LABEL_SIZE);
    st.rotate_deg = -45;
    for (int j = 0; j < n_src; j++)
        svg_text(&svg, L.grid_x + (j + 0.5) * L.cell + 0.25 * LABEL_SIZE, L.grid_y - LABEL_GAP / 2, s[j], &st);
    svg_group_end(&svg);

    svg_group_begin(&svg, "output", 0, 0);
    st = svg_text_style(LABEL_SIZE);
    st.anchor = SVG_ANCHOR_END;
    st.middle_baseline = 1;
    for (int i = 0; i < n_out; i++)
        svg_text(&svg, L.grid_x - LABEL_GAP, L.grid_y + (i + 0.5) * L.cell, o[i], &st);
    svg_group_end(&svg);

    /* The colour scale's top: the largest weight, so that the scale is used fully. */
    double top = 0;
    for (long k = 0; k < (long)n_out * n_src; k++)
        if (attn[k] > top) top = attn[k] > 1 ? 1 : attn[k];
    if (!(top > 0)) top = 1;

    svg_group_begin(&svg, "cells", 0, 0);
    size_t tip_cap = 64;
    char *tip = xmalloc(tip_cap), colour[8];
    for (int i = 0; i < n_out; i++)
        for (int j = 0; j < n_src; j++) {
            double v = attn[(long)i * n_src + j];
            size_t need = strlen(s[j]) + strlen(o[i]) + 32;
            if (need > tip_cap) tip = xrealloc(tip, tip_cap = need);
            if (isnan(v)) {
                snprintf(tip, tip_cap, "%s → %s: n/a", s[j], o[i]);
                strcpy(colour, "#bbbbbb");
            } else {
                v = v < 0 ? 0 : v > 1 ? 1 : v;
                snprintf(tip, tip_cap, "%s → %s: %.3f", s[j], o[i], v);
                svg_viridis(v / top, colour);
            }
            svg_rect(&svg, L.grid_x + j * L.cell, L.grid_y + i * L.cell, L.cell, L.cell, colour, NULL, tip);
        }
    free(tip);
    svg_group_end(&svg);
    svg_rect(&svg, L.grid_x, L.grid_y, n_src * L.cell, n_out * L.cell, NULL, "#444", NULL);

    draw_legend(&svg, &L, top);
    svg_end(&svg);
done:
    for (int j = 0; j < n_src; j++) free(s[j]);
    for (int i = 0; i < n_out; i++) free(o[i]);
    free(s);
    free(o);
    free(cut_title);
    return 0;
}

/* ---------------------------------------------------------------- one row: a classifier's pooling */

#define ROW_WORD_SIZE 14.0
#define ROW_WEIGHT_SIZE 10.0
#define ROW_PAD 6.0            /* inside a box, on each side of its widest text */
#define ROW_GAP 2.0            /* between two boxes */
#define ROW_TOP 40.0           /* the boxes' top; the title sits above */
#define ROW_BOX_H 28.0

int heatmap_write_row_svg_to(FILE *f, const char *title, const char *const *tokens, int n, const float *weights)
{
    if (n < 0) n = 0;
    char **t = xmalloc(sizeof(char *) * (n + 1)), value[16];
    double top = 0, width = ROW_PAD, *box_w = xmalloc(sizeof(double) * (n + 1));
    for (int j = 0; j < n; j++) {
        t[j] = cut_text(tokens[j], HEATMAP_LABEL_COLUMNS);
        float a = weights[j];
        if (a > top) top = a;
        /* A box is as wide as its word or its weight, whichever is wider, so that two
         * weights under short words never run into each other. */
        snprintf(value, sizeof value, "%.3f", a);
        double w = svg_text_width(t[j], ROW_WORD_SIZE), wv = svg_text_width(value, ROW_WEIGHT_SIZE);
        box_w[j] = (w > wv ? w : wv) + 2 * ROW_PAD;
        width += box_w[j] + ROW_GAP;
    }
    char *cut_title = cut_text(title, HEATMAP_TITLE_COLUMNS);
    double title_w = 2 * ROW_PAD + title_width(cut_title);
    Svg svg;
    svg_begin(&svg, f, ceil(width > title_w ? width : title_w), ROW_TOP + ROW_BOX_H + 30);
    SvgText st = svg_text_style(ROW_WORD_SIZE);
    st.bold = 1;
    svg_text(&svg, ROW_PAD, 22, cut_title, &st);
    SvgText word = svg_text_style(ROW_WORD_SIZE), weight = svg_text_style(ROW_WEIGHT_SIZE);
    word.anchor = weight.anchor = SVG_ANCHOR_MIDDLE;
    word.middle_baseline = 1;
    double x = ROW_PAD;
    for (int j = 0; j < n; j++) {
        double a = weights[j], share = top > 0 ? a / top : 0, mid = x + box_w[j] / 2;
        char fill[8], tip[64];
        svg_viridis(share, fill);
        snprintf(tip, sizeof tip, "attention %.4f", a);
        svg_rect(&svg, x, ROW_TOP, box_w[j], ROW_BOX_H, fill, NULL, tip);
        word.fill = share > 0.6 ? "black" : "white";  /* readable on viridis' dark and light ends */
        svg_text(&svg, mid, ROW_TOP + ROW_BOX_H / 2, t[j], &word);
        snprintf(value, sizeof value, "%.3f", a);
        svg_text(&svg, mid, ROW_TOP + ROW_BOX_H + 16, value, &weight);
        x += box_w[j] + ROW_GAP;
        free(t[j]);
    }
    svg_end(&svg);
    free(t);
    free(box_w);
    free(cut_title);
    return 0;
}

int heatmap_write_row_svg(const char *path, const char *title, const char *const *tokens, int n, const float *weights,
                          Error *err)
{
    OutFile o;
    if (outfile_open(&o, path, err)) return -1;
    heatmap_write_row_svg_to(o.f, title, tokens, n, weights);
    return outfile_commit(&o, err);
}

/* 1 if name is a picture's: six or more digits, then ".svg" or ".hK.svg". */
static int is_picture_name(const char *name)
{
    size_t digits = strspn(name, "0123456789");
    if (digits < 6) return 0;
    const char *rest = name + digits;
    if (!strncmp(rest, ".h", 2) && strspn(rest + 2, "0123456789") > 0) rest += 2 + strspn(rest + 2, "0123456789");
    return !strcmp(rest, ".svg");
}

int heatmap_prepare_dir(const char *dir, Error *err)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return error_set(err, "%s: cannot create: %s", dir, strerror(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return error_set(err, "%s: not a directory (--attention-svg names the directory its pictures go to)", dir);
    DIR *d = opendir(dir);
    if (!d) return error_set(err, "%s: cannot list: %s", dir, strerror(errno));
    int status = 0;
    for (struct dirent *e; status == 0 && (e = readdir(d)) != NULL;) {
        if (!is_picture_name(e->d_name)) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = xmalloc(n);
        snprintf(path, n, "%s/%s", dir, e->d_name);
        if (!svg_file_is_nmts(path))
            status = error_set(err, "%s: not a picture nmt drew, at a name --attention-svg writes: move it, or "
                                    "choose another directory", path);
        free(path);
    }
    closedir(d);
    return status;
}

int heatmap_write_svg(const char *path, const char *title, const char *const *src, int n_src,
                      const char *const *out, int n_out, const float *attn, Error *err)
{
    if (n_src > 0 && n_out > 0 && !attn) return error_set(err, "%s: no attention weights to draw", path);
    OutFile o;
    if (outfile_open(&o, path, err)) return -1;
    heatmap_write_svg_to(o.f, title, src, n_src, out, n_out, attn, err);
    return outfile_commit(&o, err);
}
