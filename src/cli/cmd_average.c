/* cmd_average.c — nmt average: the mean of several checkpoints' weights (train/average.h). */
#include <stdio.h>
#include <stdlib.h>
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
        "cannot be resumed. A file named twice (run/checkpoint.bin is the newest\n"
        "checkpoint-STEP.bin under another name, so run/checkpoint*.bin names it twice)\n"
        "counts once, with a note.\n"
        "\n",
    OPTION_ROWS(average_rows),
    .column = 16,
    .epilogue =
        "\n"
        "Exit status: 0 written; 1 a file cannot be read or written, or the files are not\n"
        "checkpoints of one model; 2 usage error.\n",
    .args_size = sizeof(AverageArgs),
};

/* The index of the first of paths[0..i) that is the same file as paths[i] (the same
 * device and inode: the same name twice, a second name or a hard link such as a run's
 * checkpoint.bin), or -1. A glob like run/checkpoint*.bin names the newest checkpoint
 * twice; counting it twice would silently weight it double. */
static int earlier_same_file(char *const *paths, int i)
{
    for (int k = 0; k < i; k++)
        if (same_file(paths[k], paths[i])) return k;
    return -1;
}

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
    int n = 0;
    for (int i = 0; i < p->n_operands; i++)
        n += earlier_same_file(p->operands, i) < 0;
    if (n < 2)
        return usage_error(&average_options, "average: %s and %s are the same file; needs two different models",
                           p->operands[0], p->operands[1]);
    /* Each file counts once: the repeated names are noted and left out. */
    const char **models = malloc(sizeof *models * (size_t)n);
    if (!models) {
        fprintf(stderr, "nmt: average: out of memory\n");
        return 1;
    }
    for (int i = 0, kept = 0; i < p->n_operands; i++) {
        int k = earlier_same_file(p->operands, i);
        if (k >= 0)
            fprintf(stderr, "nmt: note: %s is the same file as %s; it counts once\n", p->operands[i], p->operands[k]);
        else
            models[kept++] = p->operands[i];
    }
    keep_going_without_reader(out);
    int status = average_models(models, n, out, &err);
    free(models);
    if (status) return fail(&err);
    fprintf(stderr, "nmt: wrote %s, the average of %d models\n", strcmp(out, "-") ? out : "standard output", n);
    return 0;
}
