/* plot.h — the training plot: `nmt plot RUN_DIR`, also written by `nmt train` at the
 * end of a run as OUTPUT_DIR/training.svg.
 *
 * Reads RUN_DIR/train.log (trainlog.h: one JSON object per line) and draws
 * an SVG line chart against the update step:
 *   - training loss: the step lines {"step":S, "loss":L, ...} (the mean loss per target
 *     token over the log_every updates before S), left axis;
 *   - validation loss: {"event":"validation", "step":S, "valid_loss":L, ...}, left axis;
 *   - validation BLEU: the same lines' "valid_bleu", on a right axis, when any has it;
 *     a classifier's validation accuracy ("valid_accuracy", in %) instead.
 * A classifier's run (its start line has "classes", or its validations an accuracy) has
 * its losses per example, and the left axis says so; a translation model's are per
 * target token.
 * Other events (start, epoch, lr_decay, early_stop) are not drawn. A line that is not
 * a JSON object, or a step / validation line without its numbers, is skipped and
 * counted; the caller is told in a warning naming the file and the first such line.
 *
 * Axes get "nice" ticks (1, 2 or 5 times a power of ten, see plot_axis), labels, grid
 * lines, a legend above the plot and the run directory in the title.
 *
 * Example (what main.c does):
 *   char warning[ERROR_LEN];
 *   Error err;
 *   if (plot_training("runs/default", NULL, warning, sizeof warning, &err)) ... err.msg
 *   if (warning[0]) fprintf(stderr, "nmt: warning: %s\n", warning);
 */
#ifndef PLOT_H
#define PLOT_H
#include <stddef.h>
#include <stdio.h>

#include "files/trainlog.h" /* defines: LogReadStats, trainlog_describe_skipped */
#include "base/util.h"     /* defines: Error */
#include "io/svg.h"        /* defines: PlotAxis, plot_axis (the axes of a plot) */


/* ---------------------------------------------------------------- train.log */

/* The curves of a train.log (read through trainlog.h, which defines its lines). */
typedef struct {
    double *step, *loss;          /* n_steps step lines, in file order */
    int n_steps;
    double *valid_step, *valid_loss, *valid_bleu;   /* n_valid validations; bleu NaN if absent */
    double *valid_accuracy;       /* a classifier's, in %; NaN if absent */
    double *valid_elapsed;        /* the run's clock at each validation, seconds; NaN if absent */
    int n_valid, n_bleu;          /* n_bleu: validations that have a BLEU */
    int n_accuracy;               /* validations that have an accuracy */
    int classes;                  /* the start line's "classes": a classifier's; 0 if absent */
    int n_timed;                  /* validations with both a BLEU and an elapsed time */
    LogReadStats lines;           /* lines read and skipped: a line that is not a JSON
                                     object, or a step / validation line without its
                                     numbers, is malformed */
} TrainCurves;

/* Reads a train.log from f; name is used in messages. Never fails on content (bad
 * lines are counted); returns -1 with err only on a read error. */
int train_curves_parse(FILE *f, const char *name, TrainCurves *c, Error *err);
/* Opens and parses path. Returns -1 with err naming path if it cannot be read. */
int train_curves_read(const char *path, TrainCurves *c, Error *err);
void train_curves_free(TrainCurves *c);

/* ---------------------------------------------------------------- the chart */

/* Draws the chart of log as a complete SVG document on f (not closed): the losses and
 * validation BLEU (a classifier's accuracy) against the step, and below them, when validations carry a BLEU and
 * the run's clock, the validation BLEU against wall-clock minutes (seconds
 * for a run of under three). title may be NULL.
 * Needs at least one step line or validation. */
void plot_training_svg_to(FILE *f, const TrainCurves *log, const char *title);

/* RUN_DIR/train.log -> out_path (NULL: RUN_DIR/training.svg). warning gets the
 * skipped-lines note, or "" (it may be NULL when cap is 0). Returns 0, or -1 with err
 * naming the file: train.log missing or unreadable, holding no step line and no
 * validation, or the SVG not writable. */
int plot_training(const char *run_dir, const char *out_path, char *warning, size_t cap, Error *err);
#endif
