/* cmd_average.c — nmt average: the mean of several checkpoints' weights (train/average.h). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"  /* defines: OptionTable, Parsed, usage_error, fail */
#include "files/targets.h" /* defines: target_check */
#include "train/average.h" /* defines: average_models */

typedef struct {
    StringList out;   /* -o, which must be given once */
} AverageArgs;

static const Option average_rows[] = {
    {"--output", OPT_STRINGS, OPTION_AT(AverageArgs, out), .alias = "-o", .metavar = "AVERAGE.bin", .needs = "a FILE",
     .help = "where to write the average (required; not one of the inputs)"},
};

const OptionTable average_options = {
    .name = "average",
    .usage =
        "usage: nmt average MODEL.bin MODEL.bin ... -o AVERAGE.bin\n"
        "\n"
        "Average the weights of two or more model or checkpoint files of one model (the\n"
        "same architecture, sizes, vocabularies and subword merges: checked, and what\n"
        "differs is named) and write a model file: typically a run's last few checkpoints,\n"
        "which together often translate a little better than the last alone. The first\n"
        "file gives the config and vocabularies; the result has no optimizer state and\n"
        "cannot be resumed.\n"
        "\n",
    OPTION_ROWS(average_rows),
    .column = 16,
    .epilogue =
        "\n"
        "Exit status: 0 written; 1 a file cannot be read or written, or the files are not\n"
        "checkpoints of one model; 2 usage error.\n",
    .args_size = sizeof(AverageArgs),
};

int cmd_average(void *args, const Parsed *p)
{
    const AverageArgs *a = args;
    if (a->out.n > 1) return usage_error(&average_options, "average: -o given twice");
    if (p->n_operands < 2) return usage_error(&average_options, "average: needs at least two MODEL.bin files");
    if (a->out.n == 0) return usage_error(&average_options, "average: needs -o AVERAGE.bin");
    const char *out = a->out.v[0];
    Error err;
    /* (average_models refuses an output that is one of the models itself.) */
    if (target_check("-o", out, TARGET_MODEL, NULL, 0, NULL, &err)) return fail(&err);
    keep_going_without_reader(out);
    if (average_models((const char *const *)p->operands, p->n_operands, out, &err)) return fail(&err);
    fprintf(stderr, "nmt: wrote %s, the average of %d models\n", strcmp(out, "-") ? out : "standard output",
            p->n_operands);
    return 0;
}
