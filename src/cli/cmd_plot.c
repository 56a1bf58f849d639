/* cmd_plot.c — nmt plot: a run's train.log as an SVG chart (train/plot.h). */
#include <stdio.h>

#include "cli/commands.h" /* defines: OptionTable, Parsed, usage_error, fail */
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

int cmd_plot(void *args, const Parsed *p)
{
    const PlotArgs *a = args;
    if (too_many_operands(&plot_options, p, 1)) return 2;
    if (p->n_operands == 0) return usage_error(&plot_options, "plot: missing RUN_DIR");
    char warning[ERROR_LEN];
    Error err;
    int status = plot_training(p->operands[0], a->out, warning, sizeof warning, &err);
    if (warning[0]) fprintf(stderr, "nmt: warning: %s\n", warning);
    return status ? fail(&err) : 0;
}
