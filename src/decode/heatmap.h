/* heatmap.h — an attention matrix as an SVG heatmap, the way the attention papers and
 * the PyTorch seq2seq tutorial plot it: source tokens along the top, output tokens
 * down the left side, one cell per (output, source) pair, coloured by the weight the
 * decoder gave that source token when it produced that output token.
 *
 *        source →   w1  w2  w3      (labels rotated 45° so long words fit)
 *   output ↓      +---+---+---+
 *           o1    |   |   |   |     legend: viridis bar from 0 (dark) to the
 *           o2    |   |   |   |     largest weight (yellow), labelled
 *                 +---+---+---+
 *
 * Layout is computed from the labels: their width is estimated from their code points
 * (wide CJK characters count double, combining marks nothing; see svg_text_width), and
 * the margins are made wide enough for the longest, so labels never overlap cells or
 * each other. Labels longer than HEATMAP_LABEL_COLUMNS columns, and titles longer than
 * HEATMAP_TITLE_COLUMNS, are cut with "…" (a 5000-word line must not make a document
 * metres wide).
 * Each cell carries a tooltip "source → output: weight". Text is any UTF-8; invalid
 * bytes and control characters are shown as U+FFFD (see svg.h).
 *
 * The colour scale runs from 0 to the largest weight in the matrix (1 if none is
 * positive), so a flat attention over many words still shows its structure; the
 * legend gives the scale's top value. Weights outside [0, 1] are clamped; a NaN
 * weight is drawn as a grey cell with "n/a" in its tooltip.
 */
#ifndef HEATMAP_H
#define HEATMAP_H
#include <stdio.h>

#include "base/util.h"   /* defines: Error */

#define HEATMAP_LABEL_COLUMNS 40
#define HEATMAP_TITLE_COLUMNS 120

/* Writes an SVG heatmap of attention weights to path: source tokens along the x axis (top, rotated so long words fit),
 * output tokens down the y axis, one cell per (output, source) with the colour of attn[i * n_src + j] in [0, 1],
 * a colour scale with a legend (0 .. max, labelled), and a title. Returns 0, or -1 with err set (naming path).
 *
 * attn is (n_out, n_src), row i the weights over the source for output token i.
 * With no tokens on either side the file is still a valid SVG, with the title and a
 * note saying so (attn may then be NULL). title may be NULL (no title). */
int heatmap_write_svg(const char *path, const char *title, const char *const *src, int n_src,
                      const char *const *out, int n_out, const float *attn, Error *err);

/* Readies DIR of --attention-svg DIR, where the pictures of input line N are DIR/N.svg
 * and DIR/N.hK.svg (N in six or more digits): DIR is made if missing; refused if it is
 * not a directory, or if a file at one of those names is not a picture nmt drew
 * (svg_file_is_nmts; a symbolic link never is), since a picture would replace it. 0, or
 * -1 with err naming DIR or the file. */
int heatmap_prepare_dir(const char *dir, Error *err);

/* The same document written to an open stream (not closed; the caller checks ferror).
 * Returns -1 with err set only if attn is NULL while both sides have tokens. */
int heatmap_write_svg_to(FILE *f, const char *title, const char *const *src, int n_src,
                         const char *const *out, int n_out, const float *attn, Error *err);
/* A classifier's attention pooling over one line: the tokens in a row, each on a box
 * shaded by its weight (viridis, scaled to the line's largest weight) with the weight
 * below it ("0.055"), and the title (the label and its probability) above. A box is as
 * wide as the wider of its word and its weight, so no two texts overlap and none runs
 * past the picture's edge (by svg_text_width's upper estimates). weights is (n);
 * tokens and title are cut as above. Writes to path: 0, or -1 with err naming it. */
int heatmap_write_row_svg(const char *path, const char *title, const char *const *tokens, int n, const float *weights,
                          Error *err);
/* The same document written to an open stream (not closed; the caller checks ferror).
 * Returns 0. */
int heatmap_write_row_svg_to(FILE *f, const char *title, const char *const *tokens, int n, const float *weights);
#endif
