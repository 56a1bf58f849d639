/* cmd_shortlist.c — nmt shortlist: a model's vocabulary shortlist, learnt from sentence
 * pairs (decode/lexicon.h), for translate --shortlist. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"    /* defines: OptionTable, Parsed, usage_error, fail */
#include "decode/lexicon.h"  /* defines: lexicon_learn */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_read */
#include "files/targets.h"   /* defines: target_check */

typedef struct {
    StringList out;   /* -o, which must be given once */
    int per_word, frequent;
    LineLimit lines;
} ShortlistArgs;

static const Option shortlist_rows[] = {
    {"--output", OPT_STRINGS, OPTION_AT(ShortlistArgs, out), .alias = "-o", .metavar = "SHORTLIST.tsv",
     .needs = "a FILE", .help = "where to write the shortlist (required; - for standard output)"},
    {"--per-word", OPT_INT, OPTION_AT(ShortlistArgs, per_word), .lo = 1, .hi = 100000, .metavar = "K",
     .help = "the K target units kept for each source unit (default 50)"},
    {"--frequent", OPT_INT, OPTION_AT(ShortlistArgs, frequent), .lo = 0, .hi = 100000, .metavar = "N",
     .help = "the N most frequent target units, kept in every batch (default 100)"},
    {OPTION_MAX_LINE_BYTES(ShortlistArgs, lines.max_bytes), .help = "the longest line of PAIRS.tsv (default 1048576)"},
};

static const ShortlistArgs shortlist_defaults = {.per_word = 50, .frequent = 100};

const OptionTable shortlist_options = {
    .name = "shortlist",
    .usage =
        "usage: nmt shortlist MODEL.bin PAIRS.tsv -o SHORTLIST.tsv [--per-word K] [--frequent N]\n"
        "\n"
        "Learn MODEL.bin's vocabulary shortlist from sentence pairs (its training data):\n"
        "for each source unit, the target units seen most often in the same pairs, and\n"
        "the most frequent target units. nmt translate --shortlist SHORTLIST.tsv then\n"
        "scores, in each batch, only the target units its source units keep: a smaller\n"
        "output layer, faster decoding, at some cost in BLEU (BENCHMARKS.md measures it).\n"
        "The file is text, one unit pair per line, \"SOURCE<TAB>TARGET<TAB>P\" (P: the\n"
        "share of the pairs with SOURCE that have TARGET; an empty SOURCE, the units every\n"
        "batch keeps, with their counts), in the model's units; prune it with awk, or\n"
        "make it with another tool.\n"
        "\n",
    OPTION_ROWS(shortlist_rows),
    .column = 20,
    .epilogue =
        "\n"
        "Exit status: 0 written; 1 the model or the pairs cannot be read, or the output\n"
        "cannot be written; 2 usage error.\n",
    .args_size = sizeof(ShortlistArgs),
    .defaults = &shortlist_defaults,
};

int cmd_shortlist(void *args, const Parsed *p)
{
    const ShortlistArgs *a = args;
    if (a->out.n > 1) return usage_error(&shortlist_options, "shortlist: -o given twice");
    if (p->n_operands < 2) return usage_error(&shortlist_options, "shortlist: needs MODEL.bin and PAIRS.tsv");
    if (too_many_operands(&shortlist_options, p, 2)) return 2;
    if (a->out.n == 0) return usage_error(&shortlist_options, "shortlist: needs -o SHORTLIST.tsv");
    const char *model = p->operands[0], *pairs = p->operands[1], *out = a->out.v[0];
    Error err;
    TargetInput inputs[2] = {{"MODEL.bin", model}, {"PAIRS.tsv", pairs}};
    if (target_check("-o", out, TARGET_TEXT, inputs, 2, NULL, &err)) return fail(&err);
    ModelFile mf;
    if (modelfile_read(model, &mf, &err)) return fail(&err);
    if (model_classifies(&mf.model.dims)) {
        modelfile_free(&mf);
        fprintf(stderr, "nmt: %s: a classifier: a shortlist is of a translation model's target words\n", model);
        return 1;
    }
    keep_going_without_reader(out);
    LexiconStats st;
    int status = lexicon_learn(&mf, pairs, &a->lines, a->per_word, a->frequent, out, &st, &err);
    modelfile_free(&mf);
    if (status) return fail(&err);
    fprintf(stderr, "nmt: wrote %s: %ld lines, %ld source units from %ld pairs of %s\n",
            strcmp(out, "-") ? out : "standard output", st.lines, st.sources, st.pairs, pairs);
    return 0;
}
