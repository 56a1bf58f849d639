/* bpetool.h — `nmt bpe learn|apply|join`: the subword segmentation on its own, for
 * pipelines and for preparing data for other tools.
 *
 *   nmt bpe learn --merges 8000 --lowercase train.en > codes.en
 *   nmt bpe apply codes.en --lowercase < test.en > test.pieces.en   # "low@@ er"
 *   nmt bpe apply runs/x/model.bin < test.en                          # a model's merges
 *   nmt bpe join < output.pieces > output.txt                         # "lower"
 *
 * Lines are tokenised exactly as training tokenises them (text.h): normalised, split
 * at whitespace and punctuation, case-folded with --lowercase. learn writes codes in
 * subword-nmt's layout (subword.h); apply writes each line's pieces separated by single
 * spaces, "@@" ending every piece that continues into the next; join undoes that and
 * detokenises. A model file given to apply brings its own merges (the source side's, or
 * the target side's with --target) and its own text options; with --char, apply splits
 * into characters and needs no codes. An option that does not apply to what CODES is
 * (--target with a codes file or --char, --lowercase or --nfkc with a model file) is
 * refused, as a config key that does not apply is (config.h).
 *
 * Each input is a path or "-" (standard input); none means standard input. Bad input
 * (a missing file, invalid UTF-8, a damaged codes file) is an error naming the file and
 * line; output lines are flushed one by one.
 */
#ifndef BPETOOL_H
#define BPETOOL_H

#include <stdio.h>

#include "text.h" /* defines: TextOptions */
#include "util.h" /* defines: Error */

typedef struct {
    int merges;          /* learn: how many to learn */
    TextOptions text;    /* learn; apply with a codes file or --char */
    const char *codes;   /* apply: a codes file or a model file (NULL with chars) */
    int target;          /* apply with a model file: the target side's merges */
    int chars;           /* apply: character segmentation */
} BpeToolOptions;

int bpe_tool_learn(char *const *inputs, int n_inputs, FILE *out, const BpeToolOptions *opt, Error *err);
/* The options of apply that do not apply to what opt->codes turned out to be: --target
 * with a codes file or with --char, --lowercase or --nfkc with a model file, --char
 * with a model file as the first input. Returns 0, or -1 with a message naming the
 * option and what to do (main.c makes it a usage error). Reads the first bytes of
 * opt->codes and inputs[0] when they are regular files. */
int bpe_tool_apply_usage(const BpeToolOptions *opt, char *const *inputs, int n_inputs, Error *err);
int bpe_tool_apply(char *const *inputs, int n_inputs, FILE *out, const BpeToolOptions *opt, Error *err);
int bpe_tool_join(char *const *inputs, int n_inputs, FILE *out, Error *err);
#endif
