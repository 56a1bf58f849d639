/* cmd_translate.c — nmt translate: lines of text through one model or an ensemble
 * (decode/translate.h), as a pipeline filter. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"     /* defines: OptionTable, Parsed, usage_error, fail, output_done */
#include "decode/heatmap.h"   /* defines: heatmap_prepare_dir */
#include "decode/translate.h" /* defines: TranslateOptions, translate_stream, NBEST_MOSES, NBEST_NMT */
#include "decode/unkdict.h"   /* defines: UnkDict, unkdict_load */
#include "files/modelfile.h"  /* defines: ModelFile, modelfile_read, modelfile_compatible */
#include "files/targets.h"    /* defines: TargetInput, target_check */

typedef struct {
    TranslateOptions opt;
    const char *out_path;     /* -o */
    const char *dict_path;    /* --unk-dict */
    int threads, workers;
    int compute_type;         /* --compute-type: ComputeType */
    StringList models;        /* --models */
    const char *prefix_path;  /* --prefix */
    const char *shortlist_path;  /* --shortlist */
    long seed;                /* --seed */
} TranslateArgs;

static const char *const nbest_formats[] = {"moses", "nmt", NULL};
static const int nbest_format_values[] = {NBEST_MOSES, NBEST_NMT};

/* Options that apply only with others, and the sampling options (Option.group:
 * Parsed.groups says they were given); one bit each. */
enum {
    GIVEN_LENGTH_PENALTY = 1, GIVEN_NBEST_FORMAT = 2,
    GIVEN_SAMPLE = 4, GIVEN_SAMPLE_P = 8, GIVEN_TEMPERATURE = 16, GIVEN_SEED = 32
};

static const Option translate_rows[] = {
    {"--max-len", OPT_INT, OPTION_AT(TranslateArgs, opt.max_len), .lo = 1, .hi = 10000, .metavar = "N",
     .help = "at most N output words (default: 2 x source words + 10)"},
    {"--models", OPT_LIST, OPTION_AT(TranslateArgs, models), .lo = 2, .needs = "two or more MODEL.bin files",
     .metavar = "MODEL.bin MODEL.bin ...",
     .help = "an ensemble: every model's next-word probabilities averaged at each\n"
             "step (they must share their vocabularies and text options; the\n"
             "first reads and writes the text); the files up to the next option"},
    {OPTION_THREADS(TranslateArgs, threads),
     .help = "one worker computing on N OpenBLAS threads instead of a worker\n"
             "per core (more than 1 may change the scores' last digits on some\n"
             "CPUs)"},
    {OPTION_WORKERS(TranslateArgs, workers), .help = WORKERS_HELP},
    {OPTION_COMPUTE_TYPE(TranslateArgs, compute_type),
     .help = "int8: the products of decoding with int8 weights (one scale per\n"
             "output row) and inputs quantized on the fly, as CTranslate2's\n"
             "compute_type int8 (faster; BLEU within about a tenth of a point on\n"
             "the held-out data measured); float32: the model's own weights;\n"
             "default: int8 for a file nmt quantize wrote, else float32"},
    {"--batch", OPT_INT, OPTION_AT(TranslateArgs, opt.batch), .lo = 1, .hi = 4096, .metavar = "N",
     .help = "decode N lines together (faster; output comes in groups of N\n"
             "lines: the same translations, scores equal to about 6 digits);\n"
             "default 64 for a file, 1 for a terminal or a pipe, where each line\n"
             "is answered as soon as it is read"},
    {OPTION_BEAM(TranslateArgs, opt.beam), .help = "beam search with K beams (default 1: greedy search)"},
    {OPTION_LENGTH_PENALTY(TranslateArgs, opt.length_penalty), .group = GIVEN_LENGTH_PENALTY,
     .help = "beam scores are log P / ((5 + length) / 6)^A (default 0.6; 0: none;\n"
             "avg: log P / length, the average log-probability per word)"},
    {"--nbest", OPT_INT, OPTION_AT(TranslateArgs, opt.nbest), .lo = 1, .hi = 100, .metavar = "N",
     .help = "the N best translations per line, as Moses/Marian n-best lines\n"
             "\"LINE ||| translation ||| F0= LOGPROB ||| SCORE\" (LINE counts from 0;\n"
             "LOGPROB = log P, SCORE = LOGPROB / length penalty; beam >= N)"},
    {"--nbest-format", OPT_CHOICE, OPTION_AT(TranslateArgs, opt.nbest_format), .choices = nbest_formats,
     .choice_values = nbest_format_values, .metavar = "moses|nmt", .needs = "moses or nmt", .group = GIVEN_NBEST_FORMAT,
     .help = "nmt: nmt 0.1's \"LINE ||| translation ||| SCORE\" (alignment last)"},
    {"--align", OPT_FLAG, OPTION_AT(TranslateArgs, opt.align),
     .help = "append \" ||| \" and the hard alignment \"j-i ...\": output word i\n"
             "attends most to source token j (both counted from 0)"},
    {"--attention-json", OPT_FLAG, OPTION_AT(TranslateArgs, opt.attention_json),
     .help = "one JSON object per line instead: source and output tokens,\n"
             "translation, score and the attention matrix"},
    {"--attention-svg", OPT_STRING, OPTION_AT(TranslateArgs, opt.attention_svg), .metavar = "DIR",
     .help = "also write DIR/LINE.svg, a heatmap of each line's attention"},
    {"--attention-heads", OPT_FLAG, OPTION_AT(TranslateArgs, opt.attention_heads),
     .help = "a Transformer's: also DIR/LINE.hK.svg, the map of each head K"},
    {"--align-layer", OPT_INT, OPTION_AT(TranslateArgs, opt.align_layer), .lo = 1, .hi = MAX_LAYERS, .metavar = "N",
     .needs = "a layer number from 1 to 8",
     .help = "a Transformer's attention is decoder layer N's cross-attention,\n"
             "averaged over its heads (default: the last layer)"},
    {"--replace-unk", OPT_FLAG, OPTION_AT(TranslateArgs, opt.replace_unk),
     .help = "replace each output <unk> by the source word it attends to most"},
    {"--unk-dict", OPT_STRING, OPTION_AT(TranslateArgs, dict_path), .metavar = "FILE",
     .help = "... or by that word's translation in FILE (source<TAB>target lines);\n"
             "implies --replace-unk"},
    {"--scores", OPT_FLAG, OPTION_AT(TranslateArgs, opt.scores),
     .help = "the model's scores of its output: TAB log P(translation | source)\n"
             "(natural log, <eos> included) TAB its units; with --nbest the\n"
             "features F0=, QE= (the sentence's quality estimate: the mean over\n"
             "its words of their units' mean log-probability) and WordQE= (each\n"
             "word's); with --attention-json the same as fields"},
    {"--word-scores", OPT_FLAG, OPTION_AT(TranslateArgs, opt.word_scores),
     .help = "--scores, and each unit's log-probability (<eos> last)"},
    {"--prefix", OPT_STRING, OPTION_AT(TranslateArgs, prefix_path), .metavar = "FILE",
     .help = "line i of FILE begins line i's translation (tokenised as the model's\n"
             "target side; an empty line: no prefix); FILE needs a line for each\n"
             "input line"},
    {"--shortlist", OPT_STRING, OPTION_AT(TranslateArgs, shortlist_path), .metavar = "FILE",
     .help = "score only the target units FILE keeps for each batch's source\n"
             "units (nmt shortlist writes it): faster, at some cost in BLEU"},
    {"--sample", OPT_INT, OPTION_AT(TranslateArgs, opt.sample.top_k), .lo = 0, .hi = 1000000, .metavar = "K",
     .group = GIVEN_SAMPLE,
     .help = "draw each word at random among the K most probable (0: among all)\n"
             "instead of searching; with --beam K or --nbest N, that many samples,\n"
             "best first"},
    {"--sample-p", OPT_FLOAT, OPTION_AT(TranslateArgs, opt.sample.top_p), .lo = 0, .hi = 1, .metavar = "P",
     .needs = "a number above 0 and at most 1", .group = GIVEN_SAMPLE_P,
     .help = "draw among the fewest most probable words whose probability\n"
             "reaches P (nucleus sampling; with --sample K, of those K)"},
    {"--temperature", OPT_FLOAT, OPTION_AT(TranslateArgs, opt.sample.temperature), .lo = 0, .hi = 100, .metavar = "T",
     .needs = "a number above 0 and at most 100", .group = GIVEN_TEMPERATURE,
     .help = "sample from softmax(logits / T) (default 1; below 1 sharper)"},
    {"--seed", OPT_INT, OPTION_AT(TranslateArgs, seed), .lo = 0, .hi = 9007199254740991L, .metavar = "S",
     .group = GIVEN_SEED,
     .help = "the random draws' seed (default 1): the same seed, the same output,\n"
             "whatever --batch, --threads and --workers"},
    {OPTION_MAX_LINE_BYTES(TranslateArgs, opt.lines.max_bytes),
     .help = "the longest input line, in bytes (default 1048576, 1 MiB; 1024 to\n"
             "2^30); a longer line is translated as empty, with a warning naming\n"
             "it, and does not make nmt hold it in memory"},
    {"--output", OPT_STRING, OPTION_AT(TranslateArgs, out_path), .alias = "-o", .metavar = "FILE",
     .help = "write there instead of standard output (a new file, in place once\n"
             "every line is translated; on an error the old one is left as it was)"},
};
_Static_assert(MAX_LAYERS == 8, "--align-layer's message names the range");

static const TranslateArgs translate_defaults = {
    .opt = {.length_penalty = 0.6f, .sample = {.top_p = 1.0f, .temperature = 1.0f}}, .seed = 1, .workers = WORKERS_DEFAULT,
    .compute_type = COMPUTE_AS_FILE};

const OptionTable translate_options = {
    .name = "translate",
    .usage =
        "usage: nmt translate MODEL.bin [INPUT ...] [-o OUTPUT] [--max-len N] [--batch N] [--beam K]\n"
        "                     [--threads N] [--workers N]\n"
        "       nmt translate [INPUT ...] [options] --models MODEL.bin MODEL.bin ...\n"
        "                     [--length-penalty A] [--nbest N] [--align] [--attention-json]\n"
        "                     [--attention-svg DIR [--attention-heads]] [--align-layer N]\n"
        "                     [--replace-unk] [--unk-dict FILE] [--max-line-bytes N]\n"
        "                     [--scores] [--word-scores] [--prefix FILE]\n"
        "                     [--sample K] [--sample-p P] [--temperature T] [--seed S]\n"
        "\n"
        "Translate each line of the INPUT files in turn (standard input if none, or for -);\n"
        "write one line per input line, flushed, to standard output (or -o OUTPUT), so it\n"
        "can sit in a pipeline. Empty lines stay empty.\n"
        "\n",
    OPTION_ROWS(translate_rows),
    .column = 16,
    .epilogue =
        "\n"
        "Exit status: 0 translated; 1 an input or a model cannot be read (a read error\n"
        "included) or the output cannot be written; 2 usage error.\n",
    .args_size = sizeof(TranslateArgs),
    .defaults = &translate_defaults,
};

/* --batch's default for one input. A regular file (named, or standard input redirected
 * from one) is there to its end: its lines decode TRANSLATE_FILE_BATCH at a time, the
 * same translations several times faster. A terminal or a pipe keeps one line at a time,
 * each answered as soon as it is read: a batch waits for its lines, and a person at the
 * terminal, or a program that writes a line and waits for its answer, would wait too. */
#define TRANSLATE_FILE_BATCH 64
static int default_batch(FILE *in)
{
    struct stat st;
    return fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode) ? TRANSLATE_FILE_BATCH : 1;
}

static int translate_input(FILE *in, const char *name, void *ctx, Error *err)
{
    StreamJob *job = ctx;
    TranslateOptions opt = *(const TranslateOptions *)job->opt;
    if (opt.batch == 0) opt.batch = default_batch(in);   /* --batch N always wins */
    return translate_stream(job->workers, in, job->out, name, &opt, &job->lines, err);
}

/* The models' own options: a Transformer's attention options need every model of the
 * run to be one, with the layer asked for. Returns 0, or -1 with err. */
static int check_attention_options(const TranslateOptions *opt, const ModelFile *mf, const ModelFile *more,
                                   int n_more, char *const *models, Error *err)
{
    for (int k = -1; k < n_more && (opt->align_layer || opt->attention_heads); k++) {
        const ModelDims *d = k < 0 ? &mf->model.dims : &more[k].model.dims;
        const char *name = models[k + 1];
        const char *option = opt->align_layer ? "--align-layer" : "--attention-heads";
        if (!model_family(d)->attention_heads)
            return error_set(err, "%s: %s applies only to a Transformer (model.type \"transformer\"); a recurrent "
                                  "model has one attention", name, option);
        if (opt->align_layer > d->dec_layers)
            return error_set(err, "%s: --align-layer %d: the model has %d decoder layer%s", name, opt->align_layer,
                             d->dec_layers, d->dec_layers > 1 ? "s" : "");
    }
    return 0;
}

/* The scoring and sampling options' own rules; 1 with *bad the usage error. Sampling
 * is on with --sample or --sample-p. */
static int sampling_problem(TranslateOptions *opt, const TranslateArgs *a, unsigned given, const char **bad)
{
    if (opt->word_scores) opt->scores = 1;
    opt->sampling = (given & (GIVEN_SAMPLE | GIVEN_SAMPLE_P)) != 0;
    opt->sample.seed = (uint64_t)a->seed;
    *bad = opt->scores && opt->nbest && opt->nbest_format == NBEST_NMT
               ? "translate: --nbest-format nmt has no field for --scores; the default moses form has them"
           : (given & GIVEN_SAMPLE_P) && !(opt->sample.top_p > 0) ? "translate: --sample-p needs a number above 0 and "
                                                                     "at most 1"
           : (given & GIVEN_TEMPERATURE) && !(opt->sample.temperature > 0) ? "translate: --temperature needs a number "
                                                                             "above 0 and at most 100"
           : (given & (GIVEN_TEMPERATURE | GIVEN_SEED)) && !opt->sampling ? "translate: --temperature and --seed shape "
                                                                          "sampling: give --sample K or --sample-p P"
           : NULL;
    return *bad != NULL;
}

/* --prefix FILE: opened and read along with the input; after the input, a line left
 * over is a warning. */
static int open_prefix(const char *path, const LineLimit *limit, LineReader *r, FILE **f, Error *err)
{
    *f = fopen(path, "rb");
    if (!*f) return error_set(err, "%s: %s (from --prefix)", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(*f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(*f);
        *f = NULL;
        return error_set(err, "%s: is a directory (from --prefix: a file of prefixes, one a line)", path);
    }
    line_reader_init(r, *f, limit);
    return 0;
}

static void close_prefix(LineReader *r, FILE *f, const char *path, int status)
{
    char *buf = NULL;
    size_t cap = 0;
    if (status == 0 && line_read(r, &buf, &cap, 1) != LINE_EOF)
        fprintf(stderr, "nmt: warning: %s: more lines than the input (%ld); the rest were not used\n", path,
                r->number - 1);
    free(buf);
    line_reader_free(r);
    fclose(f);
}

/* -o may name a text input (it is read to its end first), never a model or --unk-dict's
 * file (files/targets.h). 0, or -1 with err. */
static int check_translate_output(const char *out, char *const *models, int n_models, const TranslateArgs *a,
                                  Error *err)
{
    TargetInput *inputs = xmalloc(sizeof(TargetInput) * (size_t)(n_models + 3));
    for (int k = 0; k < n_models; k++)
        inputs[k] = (TargetInput){"a model of the run", models[k]};
    inputs[n_models] = (TargetInput){"--unk-dict's dictionary", a->dict_path};
    inputs[n_models + 1] = (TargetInput){"--prefix's file", a->prefix_path};
    inputs[n_models + 2] = (TargetInput){"--shortlist's file", a->shortlist_path};
    int status = target_check("-o", out, TARGET_TEXT, inputs, n_models + 3, NULL, err);
    free(inputs);
    return status;
}

int cmd_translate(void *args, const Parsed *p)
{
    TranslateArgs *a = args;
    TranslateOptions opt = a->opt;
    if (a->dict_path) opt.replace_unk = 1;
    /* Without --models the first operand is the model, the rest the text to translate. */
    char *const *models = a->models.v, *const *inputs = p->operands;
    int n_models = a->models.n, n_inputs = p->n_operands;
    if (n_models == 0 && n_inputs > 0) {
        models = inputs++;
        n_models = 1;
        n_inputs--;
    }
    inputs_or_stdin(&inputs, &n_inputs);
    const char *model = n_models > 0 ? models[0] : NULL;
    const char *bad = !model ? "translate: missing MODEL.bin"
                    : count_stdin(inputs, n_inputs) > 1 ? "translate: standard input (-) can be read only once"
                    : opt.attention_json && opt.nbest ? "translate: --attention-json writes the best translation only; "
                                                        "it does not combine with --nbest"
                    : opt.attention_heads && !opt.attention_svg ? "translate: --attention-heads draws heatmaps: it "
                                                                  "needs --attention-svg DIR"
                    : opt.attention_heads && n_models > 1 ? "translate: --attention-heads draws one model's heads; "
                                                            "it does not combine with --models"
                    : a->shortlist_path && a->prefix_path
                        ? "translate: --prefix forces words that --shortlist may not keep (they would have no "
                          "probability): the two do not combine"
                    /* Given, but nothing would use them: refused rather than ignored. */
                    : (p->groups & GIVEN_LENGTH_PENALTY) && opt.beam <= 1 && !opt.nbest
                        ? "translate: --length-penalty scores beam search; greedy search (no --beam K above 1, no "
                          "--nbest) has no use for it"
                    : (p->groups & GIVEN_NBEST_FORMAT) && !opt.nbest
                        ? "translate: --nbest-format is the layout of --nbest's lines: it needs --nbest N"
                    : opt.align_layer && !(opt.align || opt.attention_json || opt.attention_svg || opt.replace_unk)
                        ? "translate: --align-layer chooses the attention that --align, --attention-json, "
                          "--attention-svg or --replace-unk use: it needs one of them"
                    : NULL;
    if (bad) return usage_error(&translate_options, "%s", bad);
    if (sampling_problem(&opt, a, p->groups, &bad)) return usage_error(&translate_options, "%s", bad);
    if (workers_usage(&translate_options, a->workers, a->threads)) return 2;
    ModelFile mf;
    UnkDict dict = {0};
    Error err;
    if (a->out_path && check_translate_output(a->out_path, models, n_models, a, &err)) return fail(&err);
    if (read_translator(model, &mf, NULL, NULL, a->compute_type, 1, &err)) return fail(&err);
    if (mf.text.lowercase)
        fprintf(stderr, "nmt: note: %s writes lowercase: it was trained with data.lowercase true\n", model);
    /* The workers' models: the first reads and writes the text; with --models, all of
     * them decode together. */
    EnsembleFiles ensemble;
    int status = ensemble_files_open(&ensemble, models, n_models, &mf, a->compute_type, 1, &err);
    opt.ensemble = ensemble.n > 1;
    if (status == 0) status = check_attention_options(&opt, &mf, ensemble.more, ensemble.n - 1, models, &err);
    if (status == 0 && opt.attention_svg) status = heatmap_prepare_dir(opt.attention_svg, &err);
    /* Decoding is all these models do here: the float copies of int8 weights go. */
    for (int k = 0; status == 0 && k < ensemble.n; k++)
        model_drop_prepared_floats(&ensemble.all[k]->model);
    Shortlist shortlist = {0};
    if (status == 0 && a->shortlist_path)
        status = use_shortlist(a->shortlist_path, ensemble.all, ensemble.n, &opt.lines, &shortlist, &err);
    if (status == 0 && a->dict_path) {
        status = unkdict_load(&dict, a->dict_path, &mf.text, &opt.lines, &err);
        opt.unk_dict = &dict;
    }
    LineReader prefix;
    FILE *prefix_file = NULL;
    if (status == 0 && a->prefix_path) {
        status = open_prefix(a->prefix_path, &opt.lines, &prefix, &prefix_file, &err);
        opt.prefix = prefix_file ? &prefix : NULL;
        opt.prefix_name = a->prefix_path;
    }
    Workers *workers = NULL;
    if (status == 0 && !(workers = command_workers(ensemble.all, ensemble.n, a->workers, a->threads, &err)))
        status = -1;
    OutFile of = {.f = stdout};
    if (status == 0 && a->out_path) status = outfile_open(&of, a->out_path, &err);
    keep_going_without_reader(a->out_path);
    StreamJob job = {workers, of.f, &opt, 0};
    if (status == 0) status = read_inputs(inputs, n_inputs, translate_input, &job, &err);
    if (prefix_file) close_prefix(&prefix, prefix_file, a->prefix_path, status);
    status = output_done(&of, status, &err);
    if (status) fail(&err);
    workers_free(workers);
    unkdict_free(&dict);
    shortlist_free(&shortlist);
    ensemble_files_close(&ensemble);
    modelfile_free(&mf);
    return status ? 1 : 0;
}
