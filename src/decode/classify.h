/* classify.h — `nmt classify MODEL.bin`: a classifier's (model.type classifier) label
 * for each line of text.
 *
 * A line is read as the training texts were (normalised, tokenised, segmented as the
 * model file says), encoded, pooled and scored; line i of the output answers line i of
 * the input. Output, one line each:
 *   plain        the most likely label
 *   --probs      the label, a tab, its probability ("pos\t0.9731")
 *   --probs all  every label and its probability, tab-separated, in the model's label
 *                order (`nmt info` lists it): "neg\t0.0269\tpos\t0.9731"
 * A line with no tokens (empty, only spaces) or that cannot be read (invalid UTF-8, a
 * NUL byte, longer than the line limit of lines.h) has no label: its output line is
 * empty, with a warning naming its number. A line of more than CLASSIFY_MAX_UNITS units
 * is classified by its first CLASSIFY_MAX_UNITS, with a warning naming it.
 * --attention-svg DIR (attention pooling) also writes DIR/LINE.svg (LINE 1-based, six
 * digits): the line's tokens shaded by their attention weight.
 *
 * A line with a tab is read as training read its data.train: its text is the column
 * the model was trained on (data.text_column, ClassifyOptions.text_column), the other
 * columns (a gold label: `nmt classify MODEL labelled.tsv`) are left out, as they are
 * not text the model was taught to read; a note on stderr says so once per input. A
 * line without that column has no text (an empty output line, a warning).
 */
#ifndef CLASSIFY_H
#define CLASSIFY_H

#include <stdio.h>

#include "io/lines.h"     /* defines: LineLimit */
#include "files/modelfile.h" /* defines: ModelFile */
#include "base/util.h"      /* defines: Error */
#include "decode/workers.h" /* defines: Workers, Worker */

typedef struct {
    int text_column;            /* the column of a line with tabs that is its text (1-based;
                                   0: the first): the model's data.text_column */
    int probs;                  /* 0 label only, 1 with its probability, 2 every label's */
    int batch;                  /* lines scored together (0: 64) */
    const char *attention_svg;  /* directory for one picture per line, or NULL */
    LineLimit lines;            /* the longest input line (--max-line-bytes) */
} ClassifyOptions;

/* The lines scored together when ClassifyOptions.batch is 0. */
#define CLASSIFY_BATCH 64

/* The most units (tokens, pieces) of a line that are classified: a longer line is cut
 * to its first CLASSIFY_MAX_UNITS, with a warning naming it. */
#define CLASSIFY_MAX_UNITS 1000

/* The columns mf was trained on (its recorded config's data.text_column and
 * data.label_column), into *text_col and *label_col where they are -1 (1 and 0, the
 * last, where the config does not say). */
void classify_trained_columns(const ModelFile *mf, int *text_col, int *label_col);

/* Classifies every line of in (named in_name in messages) onto out with the workers'
 * model 0; *lines_before numbers the lines on across several inputs and is advanced. With
 * several workers, up to two batches per worker are read ahead and classified at once,
 * and written in input order: the same bytes as one worker writes. 0, or -1 with err (a
 * read or write error, a model file given as text, an SVG that cannot be written). */
int classify_stream(Workers *w, FILE *in, FILE *out, const char *in_name, const ClassifyOptions *opt,
                    long *lines_before, Error *err);

/* The most likely class of each of n lines (-1 for a line with no tokens or that
 * cannot be read) and, with probs non-NULL, every class's probability (n, C); with
 * attn non-NULL, attention pooling's weights per line (malloc'd, one per token; NULL
 * for a line without) and the tokens in units (n TokenLists, the caller frees); with
 * cut non-NULL, cut[i] is line i's unit count when only its first CLASSIFY_MAX_UNITS
 * were classified, else 0 (the caller warns). For nmt eval, which scores lines as nmt
 * classify labels them. rs may be zeroed. */
void classify_lines(ModelFile *mf, RunState *rs, char *const *lines, int n, int *classes, float *probs,
                    float **attn, TokenList *units, int *cut);
/* classify_lines with worker k's model `model` and its own state (workers.h): any
 * number of workers may classify at once. */
void worker_classify(Worker *k, int model, char *const *lines, int n, int *classes, float *probs, float **attn,
                     TokenList *units, int *cut);
#endif
