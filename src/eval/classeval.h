/* classeval.h — `nmt eval MODEL TEST.tsv` for a classifier (model.type classifier):
 * how well it labels held-out lines.
 *
 * TEST.tsv is read as the training file was (tsv_read_labelled, the text and label
 * columns the model was trained with unless given), every text labelled as nmt
 * classify labels it, and the labels compared: accuracy, macro-averaged F1 (the mean
 * of the classes' F1, scikit-learn's f1_score(average="macro")), each class's
 * precision, recall, F1 and support (scikit-learn's classification_report), the
 * confusion matrix (rows the true label, columns the predicted one; up to
 * CLASSEVAL_MATRIX_MAX labels) and the cross-entropy per line. A line whose label the model never saw in training cannot be
 * scored: such lines are counted, per label, and left out of every figure; so are
 * lines whose text has no tokens.
 */
#ifndef CLASSEVAL_H
#define CLASSEVAL_H

#include <stdio.h>

#include "io/lines.h"     /* defines: LineLimit */
#include "files/modelfile.h" /* defines: ModelFile */
#include "base/util.h"      /* defines: Error */
#include "decode/workers.h"  /* defines: Workers */

#define CLASSEVAL_UNSEEN_KEPT 8
/* The confusion matrix is kept and printed for at most this many labels: it grows with
 * their square (a model of 20,000 labels, an id column taken for labels, would make
 * it 3.2 GB, and its printout hundreds of megabytes). */
#define CLASSEVAL_MATRIX_MAX 50

typedef struct {
    int classes;
    long lines, scored, right;   /* lines read, scored (known label and text), right */
    double accuracy, macro_f1, loss;
    long *confusion;             /* (classes, classes) [true][predicted]; NULL above
                                    CLASSEVAL_MATRIX_MAX classes */
    long *true_positive, *predicted;  /* (classes): right answers and answers per label */
    double *precision, *recall, *f1;
    long *support;
    long unseen, no_text;        /* lines left out */
    int n_unseen_labels;         /* distinct unseen labels, the first CLASSEVAL_UNSEEN_KEPT kept */
    char *unseen_label[CLASSEVAL_UNSEEN_KEPT];
    long unseen_count[CLASSEVAL_UNSEEN_KEPT];
    const Vocab *labels;         /* the model's label set (not owned) */
} ClassEvalResult;

/* The workers' model 0 on tsv_path, its batches classified on the workers (the same
 * figures for any number of them). text_col, label_col: the columns (1-based; label 0:
 * the last); -1: as the model was
 * trained. limit: the longest line of tsv_path (NULL: the default). 0, or -1 with err
 * (the file unreadable, a line over the limit, a line without a label, no line that
 * can be scored, a loss that is not finite: err names model_path). A line of more than
 * CLASSIFY_MAX_UNITS units is scored by its first ones, with a warning. */
int classeval_run(Workers *w, const char *model_path, const char *tsv_path, int text_col, int label_col,
                  const LineLimit *limit, ClassEvalResult *res, Error *err);
/* Human-readable lines, or one JSON object when json is set. */
void classeval_print(const ClassEvalResult *res, int json, FILE *out);
void classeval_free(ClassEvalResult *res);
#endif
