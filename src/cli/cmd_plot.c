/* cmd_plot.c — nmt plot: a run's train.log as an SVG chart (train/plot.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h" /* defines: OptionTable, Parsed, usage_error, fail */
#include "files/targets.h" /* defines: TargetInput, target_check */
#include "io/svg.h"       /* defines: svg_file_is_nmts */
#include "train/plot.h"   /* defines: plot_training */

typedef struct {
    const char *out;   /* -o */
} PlotArgs;

static const Option plot_rows[] = {
    {"--output", OPT_STRING, OPTION_AT(PlotArgs, out), .alias = "-o", .metavar = "FILE.svg", .needs = "a FILE",
     .help = "where to write it (default RUN_DIR/training.svg)"},
};

const OptionTable plot_options = {
    .name = "plot",
    .usage =
        "usage: nmt plot RUN_DIR [-o FILE.svg]\n"
        "\n"
        "Draw RUN_DIR/train.log as an SVG line chart against the update step: training and\n"
        "validation loss on the left axis, validation BLEU (when validated with BLEU) on\n"
        "the right. nmt train writes the same chart as OUTPUT_DIR/training.svg at the end.\n"
        "\n",
    OPTION_ROWS(plot_rows),
    .column = 25,
    .epilogue = "",
    .args_size = sizeof(PlotArgs),
};

/* -o may not name the run's train.log, a model or another file of a run directory
 * (files/targets.h); without -o, RUN_DIR/training.svg may be replaced only by nmt's own
 * chart. 0, or -1 with err. */
static int check_plot_output(const char *run_dir, const char *out, Error *err)
{
    size_t n = strlen(run_dir) + sizeof "/training.svg";
    char *log = xmalloc(n), *chart = xmalloc(n);
    snprintf(log, n, "%s/train.log", run_dir);
    snprintf(chart, n, "%s/training.svg", run_dir);
    TargetInput input = {"the run's train.log", log};
    struct stat st;
    int status = 0;
    if (out) status = target_check("-o", out, TARGET_TEXT, &input, 1, "training.svg", err);
    else if (lstat(chart, &st) == 0 && !svg_file_is_nmts(chart))
        status = error_set(err, "%s: not a chart nmt drew, and plot would replace it: move it, or give -o FILE.svg",
                           chart);
    free(log);
    free(chart);
    return status;
}

int cmd_plot(void *args, const Parsed *p)
{
    const PlotArgs *a = args;
    if (too_many_operands(&plot_options, p, 1)) return 2;
    if (p->n_operands == 0) return usage_error(&plot_options, "plot: missing RUN_DIR");
    char warning[ERROR_LEN];
    Error err;
    if (check_plot_output(p->operands[0], a->out, &err)) return fail(&err);
    keep_going_without_reader(a->out ? a->out : p->operands[0]);  /* without -o: RUN_DIR/training.svg */
    int status = plot_training(p->operands[0], a->out, warning, sizeof warning, &err);
    if (warning[0]) fprintf(stderr, "nmt: warning: %s\n", warning);
    return status ? fail(&err) : 0;
}
