/* cmd_bpe.c — nmt bpe learn|apply|join: subword segmentation on its own (cli/bpetool.h
 * does the work). */
#include <stdio.h>

#include "cli/bpetool.h"  /* defines: BpeToolOptions, bpe_tool_learn(_usage), bpe_tool_apply(_usage), bpe_tool_join */
#include "cli/commands.h" /* defines: OptionTable, Parsed, usage_error, fail, output_done */
#include "files/targets.h" /* defines: TargetInput, target_check */

typedef struct {
    BpeToolOptions opt;
    const char *out_path;   /* -o */
} BpeArgs;

/* The actions, and the bits of Option.actions that name them. */
static const char *const bpe_actions[] = {"learn", "apply", "join", NULL};
enum { LEARN = 1 << 0, APPLY = 1 << 1, JOIN = 1 << 2 };
/* The group of --codes-format: BpeToolOptions.format_given. */
enum { FORMAT_GIVEN = 1 };

static const char *const bpe_formats[] = {"nmt", "subword-nmt", NULL};
static const int bpe_format_values[] = {BPE_NMT, BPE_SUBWORD_NMT};

static const Option bpe_rows[] = {
    {"--merges", OPT_INT, OPTION_AT(BpeArgs, opt.merges), .lo = 1, .hi = 1000000, .metavar = "N", .actions = LEARN,
     .help = "merges to learn (1 to 1000000)"},
    {"--lowercase", OPT_FLAG, OPTION_AT(BpeArgs, opt.text.lowercase), .actions = LEARN | APPLY,
     .help = "Unicode case folding (as data.lowercase); a model file brings its\n"
             "own text options, and refuses it"},
    {"--nfkc", OPT_FLAG, OPTION_AT(BpeArgs, opt.text.nfkc), .actions = LEARN | APPLY,
     .help = "NFKC normalisation (as data.normalization); a model file refuses it"},
    {"--target", OPT_FLAG, OPTION_AT(BpeArgs, opt.target), .actions = APPLY,
     .help = "a model file's target side (a codes file has one side)"},
    {"--char", OPT_FLAG, OPTION_AT(BpeArgs, opt.chars), .actions = APPLY, .help = "every character its own piece; no CODES"},
    {"--codes-format", OPT_CHOICE, OPTION_AT(BpeArgs, opt.format), .choices = bpe_formats,
     .choice_values = bpe_format_values, .needs = BPE_FORMAT_NAMES, .metavar = BPE_FORMAT_NAMES,
     .actions = LEARN | APPLY, .group = FORMAT_GIVEN, .gap = 2,
     .help = "whose codes (default nmt). subword-nmt: as\n"
             "subword-nmt learn-bpe / apply-bpe, for its codes files: symbols are\n"
             "code points, not nmt's grapheme clusters; lines are pre-tokenised\n"
             "text, split at spaces only, nothing normalised"},
    {"--output", OPT_STRING, OPTION_AT(BpeArgs, out_path), .alias = "-o", .metavar = "FILE", .gap = 2,
     .help = "write to FILE instead of standard output"},
    {OPTION_MAX_LINE_BYTES(BpeArgs, opt.lines.max_bytes), .gap = 2,
     .help = "the longest input line, in bytes (default 1048576; 1024 to\n"
             "2^30): learn refuses a longer one (exit 1); apply and join write an\n"
             "empty line for it, with a warning"},
};

static const BpeArgs bpe_defaults = {.opt = {.merges = 8000}};

const OptionTable bpe_options = {
    .name = "bpe",
    .usage =
        "usage: nmt bpe learn [--merges N] [--lowercase] [--nfkc] [-o CODES] [INPUT ...]\n"
        "       nmt bpe learn --codes-format subword-nmt [--merges N] [-o CODES] [INPUT ...]\n"
        "       nmt bpe apply CODES [--lowercase] [--nfkc] [-o OUTPUT] [INPUT ...]\n"
        "       nmt bpe apply CODES --codes-format subword-nmt [-o OUTPUT] [INPUT ...]\n"
        "       nmt bpe apply MODEL.bin [--target] [-o OUTPUT] [INPUT ...]\n"
        "       nmt bpe apply --char [--lowercase] [--nfkc] [-o OUTPUT] [INPUT ...]\n"
        "       nmt bpe join [-o OUTPUT] [INPUT ...]\n"
        "       (each also takes --max-line-bytes N)\n"
        "\n"
        "Byte-pair encoding as nmt train uses it (data.tokenizer \"bpe\"), on its own. Lines\n"
        "are tokenised as training tokenises them: normalised, split at spaces and\n"
        "punctuation; characters of scripts written without spaces (Chinese, Japanese, Thai,\n"
        "...) are symbols of their own. INPUT files are read in turn (standard input if\n"
        "none, or for -).\n"
        "\n"
        "  learn   learn N merges (default 8000) from the text; write them in subword-nmt's\n"
        "          codes layout (\"#version: 0.2\", then one \"left right\" pair per line);\n"
        "          words longer than 4096 bytes are left out, with a warning counting them\n"
        "  apply   write each line as its pieces, separated by spaces, \"@@\" ending every\n"
        "          piece that continues into the next (\"low@@ er\"). CODES is a learn\n"
        "          output, or a model trained with data.tokenizer bpe: its source side's\n"
        "          merges (--target: its target side's) and its own text options\n"
        "  join    the reverse: glue the pieces back into words and detokenise\n"
        "\n",
    OPTION_ROWS(bpe_rows),
    .column = 15,
    .epilogue = "",
    .args_size = sizeof(BpeArgs),
    .defaults = &bpe_defaults,
    .actions = bpe_actions,
};

int cmd_bpe(void *args, const Parsed *p)
{
    BpeArgs *a = args;
    BpeToolOptions *opt = &a->opt;
    int learn = p->action == 0, apply = p->action == 1;
    opt->format_given = (p->groups & FORMAT_GIVEN) != 0;
    char *const *inputs = p->operands;
    int n_inputs = p->n_operands;
    /* apply's first operand is CODES, but for --char, which takes none. */
    if (apply && !opt->chars && n_inputs > 0) {
        opt->codes = inputs[0];
        inputs++;
        n_inputs--;
    }
    if (apply && !opt->chars && !opt->codes) return usage_error(&bpe_options, "bpe apply: missing CODES (or --char)");
    inputs_or_stdin(&inputs, &n_inputs);
    Error err;
    if (apply && bpe_tool_apply_usage(opt, inputs, n_inputs, &err)) return usage_error(&bpe_options, "%s", err.msg);
    if (learn && bpe_tool_learn_usage(opt, &err)) return usage_error(&bpe_options, "%s", err.msg);
    /* -o may name an INPUT (read to its end first), never CODES. */
    TargetInput codes = {"CODES", opt->codes};
    if (a->out_path && target_check("-o", a->out_path, TARGET_TEXT, &codes, 1, NULL, &err)) return fail(&err);
    OutFile of = {.f = stdout};
    if (a->out_path && outfile_open(&of, a->out_path, &err)) return fail(&err);
    keep_going_without_reader(a->out_path);
    int status = learn ? bpe_tool_learn(inputs, n_inputs, of.f, opt, &err)
               : apply ? bpe_tool_apply(inputs, n_inputs, of.f, opt, &err)
                       : bpe_tool_join(inputs, n_inputs, of.f, &opt->lines, &err);
    status = output_done(&of, status, &err);
    return status ? fail(&err) : 0;
}
