/* cmd_eval.c — nmt eval: a model on held-out pairs; BLEU, chrF and perplexity for a
 * translation model (eval/eval.h), accuracy and F1 for a classifier (eval/classeval.h). */
#include <stdio.h>

#include "cli/commands.h"     /* defines: OptionTable, Parsed, usage_error, fail, MetricArgs */
#include "eval/classeval.h"   /* defines: ClassEvalResult, classeval_run, classeval_print */
#include "eval/eval.h"        /* defines: EvalResult, EvalScoring, eval_run, eval_print */
#include "files/modelfile.h"  /* defines: ModelFile, modelfile_read */

typedef struct {
    TranslateOptions opt;   /* --beam, --length-penalty, --max-line-bytes */
    MetricArgs metric;
    int json, threads, workers;
    int text_col, label_col;  /* a classifier's columns (-1: the model's) */
} EvalArgs;

/* The options of one kind of model only (Option.group); and --length-penalty, which
 * applies only with --beam. */
enum { FOR_TRANSLATION = 1, FOR_CLASSIFIER = 2, GIVEN_LENGTH_PENALTY = 4 };

static const Option eval_rows[] = {
    {"--json", OPT_FLAG, OPTION_AT(EvalArgs, json), .help = "one JSON object instead of text"},
    {OPTION_BEAM(EvalArgs, opt.beam), .group = FOR_TRANSLATION, .term = "--beam K, --length-penalty A", .gap = 3,
     .help = "decode as nmt translate does (default greedy)"},
    {OPTION_LENGTH_PENALTY(EvalArgs, opt.length_penalty), .group = FOR_TRANSLATION | GIVEN_LENGTH_PENALTY},
    {OPTION_TOKENIZE(EvalArgs, metric.tokenize), .group = FOR_TRANSLATION,
     .term = "-tok, --tokenize NAME, -l, --language-pair SRC-TGT, -lc, --lowercase",
     .help = "BLEU's tokeniser and case, as for nmt score"},
    {OPTION_LANGUAGE_PAIR(EvalArgs, metric.language_pair), .group = FOR_TRANSLATION},
    {OPTION_LOWERCASE(EvalArgs, metric.lowercase), .group = FOR_TRANSLATION},
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

static const EvalArgs eval_defaults = {.opt = {.length_penalty = 0.6f}, .text_col = -1, .label_col = -1,
                                       .workers = 1};

const OptionTable eval_options = {
    .name = "eval",
    .usage =
        "usage: nmt eval MODEL.bin TEST.tsv [--json] [--beam K] [--length-penalty A]\n"
        "                [-tok NAME] [-l SRC-TGT] [-lc] [--threads N] [--workers N]\n"
        "                [--max-line-bytes N]\n"
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

int cmd_eval(void *args, const Parsed *p)
{
    EvalArgs *a = args;
    if (too_many_operands(&eval_options, p, 2)) return 2;
    if ((p->groups & GIVEN_LENGTH_PENALTY) && a->opt.beam <= 1)
        return usage_error(&eval_options, "eval: --length-penalty scores beam search; greedy search (no --beam K "
                                          "above 1) has no use for it");
    if (p->n_operands < 2) return usage_error(&eval_options, "eval: needs MODEL.bin and TEST.tsv");
    const char *model = p->operands[0], *test = p->operands[1];
    EvalScoring scoring = {0};
    metric_resolve(&a->metric, &scoring.metric, &scoring.tokenize_given);
    if (workers_usage(&eval_options, a->workers, a->threads)) return 2;
    ModelFile mf;
    Error err;
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    int classifier = model_classifies(&mf.model.dims);
    if (p->groups & (classifier ? FOR_TRANSLATION : FOR_CLASSIFIER)) {
        modelfile_free(&mf);
        return usage_error(&eval_options, classifier ? "eval: %s is a classifier: --beam, --length-penalty and the BLEU "
                                                       "options apply only to translation models"
                                                     : "eval: %s is a translation model: --text-column and "
                                                       "--label-column apply only to classifiers", model);
    }
    if (classifier && a->text_col >= 1 && a->text_col == a->label_col) {
        modelfile_free(&mf);
        return usage_error(&eval_options, "eval: --text-column %d and --label-column %d are the same column: the "
                                          "labels would be read as the text", a->text_col, a->label_col);
    }
    ModelFile *files[1] = {&mf};
    Workers *w = command_workers(files, 1, a->workers, a->threads, &err);
    if (!w) {
        modelfile_free(&mf);
        return fail(&err);
    }
    int status;
    if (classifier) {
        status = eval_classifier(w, model, test, a);
    } else {
        EvalResult res;
        status = eval_run(w, model, test, &a->opt, &scoring, &res, &err) ? fail(&err) : 0;
        if (status == 0) eval_print(&res, a->json, stdout);
    }
    workers_free(w);
    modelfile_free(&mf);
    return status;
}
