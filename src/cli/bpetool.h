/* bpetool.h — `nmt bpe learn|apply|join`: the subword segmentation on its own, for
 * pipelines and for preparing data for other tools.
 *
 *   nmt bpe learn --merges 8000 --lowercase train.en > codes.en
 *   nmt bpe apply codes.en --lowercase < test.en > test.pieces.en   # "low@@ er"
 *   nmt bpe apply runs/x/model.bin < test.en                          # a model's merges
 *   nmt bpe join < output.pieces > output.txt                         # "lower"
 *   nmt bpe apply codes.snmt --codes-format subword-nmt < test.tok      # as subword-nmt
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
 * --codes-format subword-nmt (learn, and apply with a codes file) works as subword-nmt
 * does, so that an existing pipeline's codes carry over: apply reads CODES as
 * subword-nmt's apply-bpe reads them (version 0.1 or 0.2) and segments code points,
 * not nmt's grapheme clusters (subword.h says why the two differ), and treats lines as
 * it does: already tokenised text, split at single spaces only, nothing normalised,
 * the spaces around the words and the line end kept. Lines end at LF, CRLF or a lone
 * CR, each written as LF, as Python reads standard input, so the output is byte for
 * byte `subword-nmt apply-bpe -c CODES < input`'s. learn counts words split the same
 * way and learns merges of code points, ties broken as subword-nmt's learn-bpe breaks
 * them. Neither takes --lowercase or --nfkc (subword-nmt changes no text); a model
 * file or --char refuses --codes-format (a usage error), as they bring or need no
 * codes.
 *
 * Each input is a path or "-" (standard input); none means standard input. Bad input
 * (a missing file, invalid UTF-8, a damaged codes file, a read error) is an error naming
 * the file and line; output lines are flushed one by one. A line longer than the limit
 * (lines.h: 1 MiB unless --max-line-bytes says otherwise) is an error for learn, and an
 * empty output line with a warning naming it for apply and join.
 */
#ifndef BPETOOL_H
#define BPETOOL_H

#include <stdio.h>

#include "io/lines.h"   /* defines: LineLimit */
#include "text/subword.h" /* defines: BpeFormat */
#include "text/text.h" /* defines: TextOptions */
#include "base/util.h" /* defines: Error */

typedef struct {
    int merges;          /* learn: how many to learn */
    BpeFormat format;    /* learn, and apply with a codes file: --codes-format */
    int format_given;    /* --codes-format was given (a model file or --char refuses it) */
    TextOptions text;    /* learn; apply with a codes file or --char */
    const char *codes;   /* apply: a codes file or a model file (NULL with chars) */
    int target;          /* apply with a model file: the target side's merges */
    int chars;           /* apply: character segmentation */
    LineLimit lines;     /* the longest input line (--max-line-bytes) */
} BpeToolOptions;

/* The options of learn that do not apply: --lowercase or --nfkc with --codes-format
 * subword-nmt. Returns 0, or -1 with a message (main.c makes it a usage error). */
int bpe_tool_learn_usage(const BpeToolOptions *opt, Error *err);
int bpe_tool_learn(char *const *inputs, int n_inputs, FILE *out, const BpeToolOptions *opt, Error *err);
/* The options of apply that do not apply to what opt->codes turned out to be: --target
 * with a codes file or with --char, --lowercase or --nfkc with a model file or with
 * --codes-format subword-nmt, --codes-format with a model file or --char, --char with a
 * model file as the first input. Returns 0, or -1 with a message naming the
 * option and what to do (main.c makes it a usage error). Reads the first bytes of
 * opt->codes and inputs[0] when they are regular files. */
int bpe_tool_apply_usage(const BpeToolOptions *opt, char *const *inputs, int n_inputs, Error *err);
int bpe_tool_apply(char *const *inputs, int n_inputs, FILE *out, const BpeToolOptions *opt, Error *err);
int bpe_tool_join(char *const *inputs, int n_inputs, FILE *out, const LineLimit *limit, Error *err);
#endif
