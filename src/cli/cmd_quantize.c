/* cmd_quantize.c — nmt quantize: a model file whose weights are int8 (files/weights_int8.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"        /* defines: OptionTable, Parsed, usage_error, fail */
#include "files/modelfile.h"     /* defines: ModelFile, modelfile_read, modelfile_write */
#include "files/targets.h"       /* defines: target_check */

typedef struct {
    StringList out;   /* -o, which must be given once */
} QuantizeArgs;

static const Option quantize_rows[] = {
    {"--output", OPT_STRINGS, OPTION_AT(QuantizeArgs, out), .alias = "-o", .metavar = "OUT.bin", .needs = "a FILE",
     .help = "where to write the int8 model (required; not MODEL.bin itself)"},
};

const OptionTable quantize_options = {
    .name = "quantize",
    .usage =
        "usage: nmt quantize MODEL.bin -o OUT.bin\n"
        "\n"
        "Write MODEL.bin's model with int8 weights: every weight matrix (embeddings,\n"
        "recurrent and linear weights, the output layer) as 8-bit integers with one\n"
        "scale per row, the biases and layer norms as they are. The file is about a\n"
        "quarter of the float32 one; nmt translate, eval, classify and serve decode it\n"
        "with int8 products (--compute-type int8, their default for such a file), and\n"
        "nmt info says int8. Training cannot go on from it (train.init_from, --resume\n"
        "and nmt average refuse it): keep the float32 model. A checkpoint's optimizer\n"
        "state is left out. The file is format version 2: an nmt from before int8\n"
        "weights refuses it by that version.\n"
        "\n",
    OPTION_ROWS(quantize_rows),
    .column = 16,
    .epilogue =
        "\n"
        "Exit status: 0 written; 1 the model cannot be read, already has int8 weights,\n"
        "or the output cannot be written; 2 usage error.\n",
    .args_size = sizeof(QuantizeArgs),
};

/* The size of path in bytes, or -1. */
static long long file_bytes(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int cmd_quantize(void *args, const Parsed *p)
{
    const QuantizeArgs *a = args;
    if (a->out.n > 1) return usage_error(&quantize_options, "quantize: -o given twice");
    if (p->n_operands < 1) return usage_error(&quantize_options, "quantize: needs MODEL.bin");
    if (too_many_operands(&quantize_options, p, 1)) return 2;
    if (a->out.n == 0) return usage_error(&quantize_options, "quantize: needs -o OUT.bin");
    const char *in = p->operands[0], *out = a->out.v[0];
    Error err;
    TargetInput input = {"MODEL.bin", in};
    if (target_check("-o", out, TARGET_MODEL, &input, 1, NULL, &err)) return fail(&err);
    ModelFile mf;
    if (modelfile_read(in, &mf, &err)) return fail(&err);
    if (mf.weights_int8) {
        modelfile_free(&mf);
        fprintf(stderr, "nmt: %s: its weights are int8 already (nmt quantize wrote it)\n", in);
        return 1;
    }
    /* A model to decode with: a checkpoint's optimizer and training state stay behind. */
    if (mf.has_train_state) trainstate_free(&mf.train_state);
    if (mf.has_optimizer) adam_free(&mf.opt);
    mf.has_train_state = mf.has_optimizer = 0;
    mf.weights_int8 = 1;
    keep_going_without_reader(out);
    int status = modelfile_write(out, &mf, &err);
    modelfile_free(&mf);
    if (status) return fail(&err);
    if (strcmp(out, "-")) {
        long long before = file_bytes(in), after = file_bytes(out);
        fprintf(stderr, "nmt: wrote %s: int8 weights, %.1f MB (%.2f of %s's %.1f MB)\n", out, after / 1e6,
                before > 0 ? (double)after / (double)before : 0.0, in, before / 1e6);
    } else
        fprintf(stderr, "nmt: wrote standard output: %s with int8 weights\n", in);
    return 0;
}
