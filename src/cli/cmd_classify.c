/* cmd_classify.c — nmt classify: a classifier's label for each line (decode/classify.h). */
#include <stdio.h>

#include "cli/commands.h"    /* defines: OptionTable, Parsed, usage_error, fail, output_done */
#include "decode/classify.h" /* defines: ClassifyOptions, classify_stream, classify_trained_columns */
#include "decode/heatmap.h"  /* defines: heatmap_prepare_dir */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_read, modelfile_read_decoding */
#include "files/targets.h"   /* defines: TargetInput, target_check */
#include "layers/pooling.h"  /* defines: POOL_ATTENTION, pooling_name */

typedef struct {
    ClassifyOptions opt;
    const char *out_path;   /* -o */
    int threads, workers;
    int compute_type;       /* --compute-type: ComputeType */
} ClassifyArgs;

static const char *const probs_words[] = {"all", NULL};
static const int probs_values[] = {2};

static const Option classify_rows[] = {
    {"--output", OPT_STRING, OPTION_AT(ClassifyArgs, out_path), .alias = "-o", .metavar = "FILE",
     .help = "write there instead of standard output"},
    {"--probs", OPT_CHOICE, OPTION_AT(ClassifyArgs, opt.probs), .choices = probs_words, .choice_values = probs_values,
     .bare = 1, .help = "the label, a tab and its probability"},
    OPTION_MORE("--probs all", "every label and its probability, tab-separated, in the\n"
                               "model's label order (nmt info lists it)"),
    {"--batch", OPT_INT, OPTION_AT(ClassifyArgs, opt.batch), .lo = 1, .hi = 4096, .metavar = "N",
     .help = "lines scored together (default 64)"},
    {"--attention-svg", OPT_STRING, OPTION_AT(ClassifyArgs, opt.attention_svg), .metavar = "DIR",
     .help = "also DIR/LINE.svg: the line's words shaded by their attention\n"
             "weight (attention pooling only)"},
    {OPTION_THREADS(ClassifyArgs, threads), .help = "OpenBLAS threads for one worker, as for nmt translate"},
    {OPTION_WORKERS(ClassifyArgs, workers), .help = WORKERS_HELP},
    {OPTION_COMPUTE_TYPE(ClassifyArgs, compute_type),
     .help = "int8: the encoder's and output layer's products with int8\n"
             "weights, as nmt translate's (faster); float32: the model's own\n"
             "weights; default: int8 for a file nmt quantize wrote, else float32"},
    {OPTION_MAX_LINE_BYTES(ClassifyArgs, opt.lines.max_bytes),
     .help = "the longest input line, in bytes (default 1048576; 1024 to\n"
             "2^30): a longer one gets an empty output line and a warning"},
};

static const ClassifyArgs classify_defaults = {.workers = WORKERS_DEFAULT, .compute_type = COMPUTE_AS_FILE};

const OptionTable classify_options = {
    .name = "classify",
    .usage =
        "usage: nmt classify MODEL.bin [INPUT ...] [-o OUTPUT] [--probs [all]] [--batch N]\n"
        "                    [--attention-svg DIR] [--threads N] [--workers N]\n"
        "                    [--compute-type float32|int8] [--max-line-bytes N]\n"
        "\n"
        "Label each line of the INPUT files (standard input without any, or -) with a classifier\n"
        "(a model trained with model.type \"classifier\"): one output line per input line.\n"
        "\n",
    OPTION_ROWS(classify_rows),
    .column = 25,
    .epilogue =
        "\n"
        "A line with no words gets an empty output line and a warning; a line of more than\n"
        "1000 words (pieces) is classified by its first 1000, with a warning. A line with tabs\n"
        "is read as training read data.train: its text is the model's data.text_column, the\n"
        "other columns (a gold label) are left out, with a note. Exit 0, 1 on an error (an\n"
        "unreadable model or input, a translation model, a write error), 2 usage error.\n",
    .args_size = sizeof(ClassifyArgs),
    .defaults = &classify_defaults,
};

static int classify_input(FILE *in, const char *name, void *ctx, Error *err)
{
    StreamJob *job = ctx;
    return classify_stream(job->workers, in, job->out, name, job->opt, &job->lines, err);
}

int cmd_classify(void *args, const Parsed *p)
{
    ClassifyArgs *a = args;
    ClassifyOptions *opt = &a->opt;
    if (p->n_operands == 0) return usage_error(&classify_options, "classify: missing MODEL.bin");
    const char *model = p->operands[0];
    char *const *inputs = p->operands + 1;
    int n_inputs = p->n_operands - 1;
    inputs_or_stdin(&inputs, &n_inputs);
    if (count_stdin(inputs, n_inputs) > 1)
        return usage_error(&classify_options, "classify: standard input (-) can be read only once");
    if (workers_usage(&classify_options, a->workers, a->threads)) return 2;
    ModelFile mf;
    Error err;
    TargetInput model_input = {"the model", model};
    if (a->out_path && target_check("-o", a->out_path, TARGET_TEXT, &model_input, 1, NULL, &err)) return fail(&err);
    /* Only classifying: a file with int8 weights read for int8 (unless float32 is asked). */
    if ((a->compute_type != COMPUTE_FLOAT32 ? modelfile_read_decoding : modelfile_read)(model, &mf, &err))
        return fail(&err);
    int status = 0;
    if (!model_classifies(&mf.model.dims))
        status = error_set(&err, "%s: a translation model, not a classifier: translate with nmt translate %s "
                                 "(nmt classify takes a model trained with model.type \"classifier\")", model, model);
    else if (opt->attention_svg && mf.model.dims.pooling != POOL_ATTENTION)
        status = error_set(&err, "%s: --attention-svg draws attention pooling's weights; this classifier pools by "
                                 "%s", model, pooling_name(mf.model.dims.pooling));
    /* Prepared once, before the workers share it read-only; then the float copies of
     * its int8 weights go (it only classifies). */
    if (status == 0) status = prepare_model(&mf, model, a->compute_type, &err);
    if (status == 0) model_drop_prepared_floats(&mf.model);
    if (status == 0 && opt->attention_svg) status = heatmap_prepare_dir(opt->attention_svg, &err);
    int label_column = -1;
    opt->text_column = -1;
    classify_trained_columns(&mf, &opt->text_column, &label_column);
    ModelFile *files[1] = {&mf};
    Workers *workers = NULL;
    if (status == 0 && !(workers = command_workers(files, 1, a->workers, a->threads, &err))) status = -1;
    OutFile of = {.f = stdout};
    if (status == 0 && a->out_path) status = outfile_open(&of, a->out_path, &err);
    keep_going_without_reader(a->out_path);
    StreamJob job = {workers, of.f, opt, 0};
    if (status == 0) status = read_inputs(inputs, n_inputs, classify_input, &job, &err);
    status = output_done(&of, status, &err);
    if (status) fail(&err);
    workers_free(workers);
    modelfile_free(&mf);
    return status ? 1 : 0;
}
