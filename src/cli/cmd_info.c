/* cmd_info.c — nmt info: what a model or checkpoint file holds (files/info.h prints it). */
#include <stdio.h>

#include "cli/commands.h"    /* defines: OptionTable, Parsed, usage_error, fail */
#include "files/info.h"      /* defines: info_print */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_read */

typedef struct {
    int json;
} InfoArgs;

static const Option info_rows[] = {
    {"--json", OPT_FLAG, OPTION_AT(InfoArgs, json), .help = "one JSON object instead of text"},
};

const OptionTable info_options = {
    .name = "info",
    .usage =
        "usage: nmt info MODEL.bin [--json]\n"
        "\n"
        "What a model or checkpoint file holds: format version, architecture, sizes,\n"
        "parameter count, vocabularies, text options, training progress, its quality (the\n"
        "validation loss and BLEU or accuracy at its update and the best up to it, from\n"
        "the train.log beside it in its run directory, or a checkpoint's own record) and\n"
        "the config it was trained with.\n"
        "\n",
    OPTION_ROWS(info_rows),
    .column = 16,
    .epilogue = "",
    .args_size = sizeof(InfoArgs),
};

int cmd_info(void *args, const Parsed *p)
{
    const InfoArgs *a = args;
    if (too_many_operands(&info_options, p, 1)) return 2;
    if (p->n_operands == 0) return usage_error(&info_options, "info: missing MODEL.bin");
    const char *model = p->operands[0];
    ModelFile mf;
    Error err;
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    info_print(model, &mf, a->json, stdout);
    modelfile_free(&mf);
    return 0;
}
