/* cmd_score.c — nmt score: BLEU and chrF of translations against references, as
 * sacreBLEU computes them (eval/score.h). */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h" /* defines: OptionTable, Parsed, usage_error, fail, MetricArgs */
#include "eval/score.h"   /* defines: ScoreOptions, score_run */

typedef struct {
    ScoreOptions opt;    /* --json, --sentence, --max-line-bytes */
    MetricArgs metric;
    StringList hyp;      /* -i, which may be given once */
} ScoreArgs;

static const Option score_rows[] = {
    {"--input", OPT_STRINGS, OPTION_AT(ScoreArgs, hyp), .alias = "-i", .metavar = "HYP.txt", .needs = "HYP.txt",
     .help = "the translations"},
    {OPTION_TOKENIZE(ScoreArgs, metric.tokenize),
     .help = "BLEU's tokeniser: 13a (default), zh (each Chinese character\n"
             "a word), char (each character a word), none (the text's own\n"
             "spaces); the signature says which (tok:NAME)"},
    {OPTION_LANGUAGE_PAIR(ScoreArgs, metric.language_pair),
     .help = "pick the tokeniser for the target language as sacreBLEU does:\n"
             "zh for zh; char for ja and ko (sacreBLEU's MeCab tokenisers\n"
             "are not in nmt; said on stderr); 13a otherwise"},
    {OPTION_LOWERCASE(ScoreArgs, metric.lowercase),
     .help = "compare lowercased text (Python's str.lower), for BLEU and\n"
             "chrF; the signatures say case:lc"},
    {"--json", OPT_FLAG, OPTION_AT(ScoreArgs, opt.json), .help = "one JSON object instead of text"},
    {"--sentence", OPT_FLAG, OPTION_AT(ScoreArgs, opt.sentence),
     .help = "first one line per pair: LINE<TAB>sentence BLEU<TAB>chrF2\n"
             "(sacreBLEU's sentence_bleu: effective order, exp smoothing)"},
    {OPTION_MAX_LINE_BYTES(ScoreArgs, opt.lines.max_bytes),
     .help = "the longest line of either file, in bytes (default 1048576;\n"
             "1024 to 2^30): a longer one is an error naming it"},
};

const OptionTable score_options = {
    .name = "score",
    .usage =
        "usage: nmt score REF.txt -i HYP.txt [-tok NAME] [-l SRC-TGT] [-lc] [--json] [--sentence]\n"
        "                 [--max-line-bytes N]\n"
        "       nmt score REF.txt [options] < HYP.txt\n"
        "\n"
        "Score translations (HYP.txt, one sentence per line) against references (REF.txt,\n"
        "the same number of lines) with corpus BLEU and chrF2 exactly as sacreBLEU 2.x does,\n"
        "in sacreBLEU's order (sacrebleu REF -i HYP), and print them as nmt eval does.\n"
        "Nothing is normalised. Without -i the translations come from standard input; -i -\n"
        "says so explicitly. Lines with invalid UTF-8 or NUL bytes are scored as empty, with a\n"
        "warning; references with <unk> where the translations have none get a warning that\n"
        "the files look swapped.\n"
        "\n",
    OPTION_ROWS(score_rows),
    .column = 24,
    .epilogue =
        "\n"
        "Exit status: 0 scored; 1 a file is missing or unreadable (a read error, a line over\n"
        "the limit), or the line counts differ; 2 usage error (also two files without -i:\n"
        "nmt score's older HYP REF order, which sacreBLEU would read as two references).\n",
    .args_size = sizeof(ScoreArgs),
};

int cmd_score(void *args, const Parsed *p)
{
    ScoreArgs *a = args;
    if (a->hyp.n > 1) return usage_error(&score_options, "score: -i given twice (one HYP.txt)");
    const char *hyp = a->hyp.n ? a->hyp.v[0] : NULL;
    if (p->n_operands > 2) return usage_error(&score_options, "score: unexpected argument %s", p->operands[2]);
    if (p->n_operands == 2 && !hyp)
        return usage_error(&score_options,
                           "score: two files and no -i: say which holds the translations, as sacreBLEU does: "
                           "nmt score REF.txt -i HYP.txt (before 0.2 nmt score took HYP REF; sacreBLEU would "
                           "read two files as two references)");
    if (p->n_operands == 2)
        return usage_error(&score_options, "score: unexpected argument %s (one REF.txt)", p->operands[1]);
    if (p->n_operands == 0)
        return usage_error(&score_options, "score: needs REF.txt (and -i HYP.txt, or the translations on stdin)");
    const char *ref = p->operands[0];
    if (!hyp) hyp = "-";
    if (!strcmp(hyp, "-") && !strcmp(ref, "-"))
        return usage_error(&score_options, "score: only one of REF.txt and HYP.txt can be - (standard input)");
    int tokenize_given;
    metric_resolve(&a->metric, &a->opt.metric, &tokenize_given);
    Error err;
    return score_run(hyp, ref, &a->opt, stdout, &err) ? fail(&err) : 0;
}
