/* cmd_eval.c — nmt eval: a model on held-out pairs; BLEU, chrF and perplexity for a
 * translation model (eval/eval.h), accuracy and F1 for a classifier (eval/classeval.h). */
#include <stdio.h>

#include "cli/commands.h"     /* defines: OptionTable, Parsed, usage_error, fail, MetricArgs */
#include "eval/classeval.h"   /* defines: ClassEvalResult, classeval_run, classeval_print */
#include "eval/eval.h"        /* defines: EvalResult, EvalScoring, eval_run, eval_print */
#include "files/modelfile.h"  /* defines: ModelFile, modelfile_read */

#include "eval/pairscore.h"   /* defines: pairscore_file */

typedef struct {
    TranslateOptions opt;   /* --beam, --length-penalty, --max-line-bytes */
    MetricArgs metric;
    int json, threads, workers;
    int compute_type;         /* --compute-type: ComputeType */
    int text_col, label_col;  /* a classifier's columns (-1: the model's) */
    StringList models;        /* --models */
    int per_line, word_scores;
    const char *shortlist_path; /* --shortlist */
} EvalArgs;

/* The options of one kind of model only, and of one use (Option.group): translating
 * and scoring with BLEU, or scoring each pair (--per-line); and --length-penalty, which
 * applies only with --beam. */
enum { FOR_TRANSLATION = 1, FOR_CLASSIFIER = 2, FOR_BLEU = 4, FOR_PER_LINE = 8, JSON = 16, GIVEN_LENGTH_PENALTY = 32 };

static const Option eval_rows[] = {
    {"--json", OPT_FLAG, OPTION_AT(EvalArgs, json), .group = JSON, .help = "one JSON object instead of text"},
    {OPTION_BEAM(EvalArgs, opt.beam), .group = FOR_TRANSLATION | FOR_BLEU, .term = "--beam K, --length-penalty A", .gap = 3,
     .help = "decode as nmt translate does (default greedy)"},
    {OPTION_LENGTH_PENALTY(EvalArgs, opt.length_penalty), .group = FOR_TRANSLATION | FOR_BLEU | GIVEN_LENGTH_PENALTY},
    {OPTION_TOKENIZE(EvalArgs, metric.tokenize), .group = FOR_TRANSLATION | FOR_BLEU,
     .term = "-tok, --tokenize NAME, -l, --language-pair SRC-TGT, -lc, --lowercase",
     .help = "BLEU's tokeniser and case, as for nmt score"},
    {OPTION_LANGUAGE_PAIR(EvalArgs, metric.language_pair), .group = FOR_TRANSLATION | FOR_BLEU},
    {OPTION_LOWERCASE(EvalArgs, metric.lowercase), .group = FOR_TRANSLATION | FOR_BLEU},
    {"--models", OPT_LIST, OPTION_AT(EvalArgs, models), .lo = 2, .needs = "two or more MODEL.bin files",
     .metavar = "MODEL.bin MODEL.bin ...", .group = FOR_TRANSLATION,
     .help = "an ensemble, as for nmt translate: it translates, and its loss is\n"
             "that of the members' mean probability (TEST.tsv is then the one\n"
             "operand)"},
    {"--per-line", OPT_FLAG, OPTION_AT(EvalArgs, per_line), .group = FOR_TRANSLATION | FOR_PER_LINE,
     .help = "instead, score each pair: one line per line of TEST.tsv,\n"
             "\"LOGPROB<TAB>UNITS\": log P(target | source) (natural log, summed\n"
             "over the target's units and <eos>) and that count (-(sum of LOGPROB)\n"
             "/ (sum of UNITS) is the loss); an empty line, with a warning, where\n"
             "a line is no pair"},
    {"--word-scores", OPT_FLAG, OPTION_AT(EvalArgs, word_scores), .group = FOR_TRANSLATION | FOR_PER_LINE,
     .help = "--per-line, and TAB each unit's log-probability (<eos> last)"},
    {"--shortlist", OPT_STRING, OPTION_AT(EvalArgs, shortlist_path), .metavar = "FILE",
     .group = FOR_TRANSLATION | FOR_BLEU,
     .help = "decode with nmt translate's --shortlist FILE (the loss and\n"
             "perplexity are of the whole vocabulary either way)"},
    {OPTION_COMPUTE_TYPE(EvalArgs, compute_type), .group = FOR_BLEU,
     .help = "the products of decoding, as for nmt translate (the loss and\n"
             "perplexity are computed in float32 either way); a classifier's\n"
             "labels as nmt classify --compute-type gives them"},
    {OPTION_THREADS(EvalArgs, threads), .help = "OpenBLAS threads, as for nmt translate"},
    {OPTION_WORKERS(EvalArgs, workers), .help = "workers, as for nmt translate: the same figures"},
    {OPTION_MAX_LINE_BYTES(EvalArgs, opt.lines.max_bytes),
     .help = "the longest line of TEST.tsv, in bytes (default 1048576; 1024 to\n"
             "2^30): a longer one is an error naming it (exit 1)"},
    {"--text-column", OPT_INT, OPTION_AT(EvalArgs, text_col), .lo = 1, .hi = 1000, .metavar = "N",
     .needs = "a column number (1-based; --label-column 0: the last)", .group = FOR_CLASSIFIER,
     .help = "a classifier's: the column of TEST.tsv with the text (1: the first;\n"
             "default: the model's data.text_column)"},
    {"--label-column", OPT_INT, OPTION_AT(EvalArgs, label_col), .lo = 0, .hi = 1000, .metavar = "N",
     .needs = "a column number (1-based; --label-column 0: the last)", .group = FOR_CLASSIFIER,
     .help = "a classifier's: the column with the label (0: the last; default:\n"
             "the model's data.label_column)"},
};

static const EvalArgs eval_defaults = {.opt = {.length_penalty = 0.6f}, .text_col = -1, .label_col = -1, .compute_type = COMPUTE_AS_FILE,
                                       .workers = WORKERS_DEFAULT};

const OptionTable eval_options = {
    .name = "eval",
    .usage =
        "usage: nmt eval MODEL.bin TEST.tsv [--json] [--beam K] [--length-penalty A]\n"
        "                [-tok NAME] [-l SRC-TGT] [-lc] [--threads N] [--workers N]\n"
        "                [--max-line-bytes N]\n"
        "       nmt eval TEST.tsv --models MODEL.bin MODEL.bin ... [options]\n"
        "       nmt eval MODEL.bin PAIRS.tsv --per-line [--word-scores] [--models ...]\n"
        "       nmt eval CLASSIFIER.bin TEST.tsv [--json] [--text-column N] [--label-column N]\n"
        "                [--workers N] [--max-line-bytes N]\n"
        "\n"
        "Translate column 1 of TEST.tsv, score it against column 2 as written with corpus BLEU\n"
        "and chrF2 (as sacreBLEU computes them), and report the teacher-forced loss and\n"
        "perplexity. BLEU's tokeniser is 13a unless the references are Chinese or Japanese\n"
        "text (zh, char; said on stderr); the signatures say what was computed.\n"
        "\n",
    OPTION_ROWS(eval_rows),
    .column = 16,
    .epilogue =
        "\n"
        "A classifier (model.type \"classifier\"): label the text column of TEST.tsv as nmt\n"
        "classify does and report accuracy, macro F1, each label's precision, recall, F1 and\n"
        "support, the confusion matrix and the loss per line; lines whose label training never\n"
        "saw are counted and left out.\n",
    .args_size = sizeof(EvalArgs),
    .defaults = &eval_defaults,
};

/* nmt eval on a classifier: its own measures, and only its own options. */
static int eval_classifier(Workers *w, const char *model, const char *test, const EvalArgs *a)
{
    ClassEvalResult res;
    Error err;
    if (classeval_run(w, model, test, a->text_col, a->label_col, &a->opt.lines, &res, &err)) return fail(&err);
    classeval_print(&res, a->json, stdout);
    classeval_free(&res);
    return 0;
}

/* nmt eval --per-line: each pair's score. */
static int eval_per_line(Workers *w, const char *test, const EvalArgs *a, const TranslateOptions *opt)
{
    Error err;
    if (pairscore_file(w, opt, test, a->word_scores, stdout, &err)) return fail(&err);
    return 0;
}

int cmd_eval(void *args, const Parsed *p)
{
    EvalArgs *a = args;
    int n_models = a->models.n;
    if (too_many_operands(&eval_options, p, n_models ? 1 : 2)) return 2;
    if (a->word_scores) a->per_line = 1;
    if (a->per_line && (p->groups & (FOR_BLEU | JSON)))
        return usage_error(&eval_options, "eval: --per-line scores the given targets, one line each: --beam, "
                                          "--length-penalty, --compute-type, --shortlist, --json and the BLEU options do not "
                                          "apply");
    if ((p->groups & GIVEN_LENGTH_PENALTY) && a->opt.beam <= 1)
        return usage_error(&eval_options, "eval: --length-penalty scores beam search; greedy search (no --beam K "
                                          "above 1) has no use for it");
    if (p->n_operands < (n_models ? 1 : 2))
        return usage_error(&eval_options, n_models ? "eval: needs TEST.tsv" : "eval: needs MODEL.bin and TEST.tsv");
    char *const *models = n_models ? a->models.v : p->operands;
    const char *model = models[0], *test = p->operands[n_models ? 0 : 1];
    if (n_models == 0) n_models = 1;
    EvalScoring scoring = {0};
    metric_resolve(&a->metric, &scoring.metric, &scoring.tokenize_given);
    if (workers_usage(&eval_options, a->workers, a->threads)) return 2;
    ModelFile mf;
    Error err;
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    int classifier = model_classifies(&mf.model.dims);
    if (p->groups & (classifier ? FOR_TRANSLATION : FOR_CLASSIFIER)) {
        modelfile_free(&mf);
        return usage_error(&eval_options, classifier ? "eval: %s is a classifier: --beam, --length-penalty, --models, "
                                                       "--per-line and the BLEU options apply only to translation "
                                                       "models"
                                                     : "eval: %s is a translation model: --text-column and "
                                                       "--label-column apply only to classifiers", model);
    }
    if (classifier && a->text_col >= 1 && a->text_col == a->label_col) {
        modelfile_free(&mf);
        return usage_error(&eval_options, "eval: --text-column %d and --label-column %d are the same column: the "
                                          "labels would be read as the text", a->text_col, a->label_col);
    }
    /* The workers' models, as for nmt translate: the first reads and writes the text;
     * with --models, all of them decode (and score) together. Each is prepared once,
     * before the workers share it read-only. */
    EnsembleFiles ensemble = {0};
    Workers *w = NULL;
    Shortlist shortlist = {0};
    if (prepare_model(&mf, model, a->compute_type, &err) ||
        ensemble_files_open(&ensemble, models, n_models, &mf, a->compute_type, 0, &err) ||
        (a->shortlist_path &&
         use_shortlist(a->shortlist_path, ensemble.all, ensemble.n, &a->opt.lines, &shortlist, &err)) ||
        !(w = command_workers(ensemble.all, ensemble.n, a->workers, a->threads, &err))) {
        shortlist_free(&shortlist);
        ensemble_files_close(&ensemble);
        modelfile_free(&mf);
        return fail(&err);
    }
    TranslateOptions opt = a->opt;
    opt.ensemble = ensemble.n > 1;
    int status;
    if (classifier) {
        status = eval_classifier(w, model, test, a);
    } else if (a->per_line) {
        status = eval_per_line(w, test, a, &opt);
    } else {
        EvalResult res;
        status = eval_run(w, model, test, &opt, &scoring, &res, &err) ? fail(&err) : 0;
        if (status == 0) eval_print(&res, a->json, stdout);
    }
    workers_free(w);
    shortlist_free(&shortlist);
    ensemble_files_close(&ensemble);
    modelfile_free(&mf);
    return status;
}
