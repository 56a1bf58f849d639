/* eval.h — `nmt eval MODEL TEST.tsv`: how good a model is on held-out pairs.
 *
 * Translates column 1 (greedy, as `nmt translate` does) and scores it against
 * column 2, the references as written, with corpus BLEU and chrF2 exactly as sacreBLEU
 * computes them (`sacrebleu TEST-column-2 -i translations`): case kept unless asked to
 * lowercase both sides, BLEU's tokeniser as asked or, if not, guessed from the
 * references (bleu_tokenize_guess: zh or char for Chinese or Japanese, else 13a).
 * The signatures say which. Also reports the teacher-forced
 * cross-entropy per target token (and perplexity) of the reference translations,
 * per token the model reads (a subword piece or character under data.tokenizer bpe or
 * char, so not comparable across tokenizers), and how much of the text the model's
 * vocabularies cover: the share of words that map to <unk> (under bpe/char: that have
 * a piece that does) on each side, and the share of the model's tokens that are <unk>.
 *
 * An ensemble (opt->ensemble over the workers' models, nmt eval --models A B ...)
 * translates as nmt translate --models does, and its loss is that of the members' mean
 * probability (pairscore.h).
 * Scores of each pair instead (--per-line): pairscore.h.
 */
#ifndef EVAL_H
#define EVAL_H

#include <stdio.h>

#include "eval/bleu.h"      /* defines: MetricOptions */
#include "files/modelfile.h" /* defines: ModelFile */
#include "decode/translate.h" /* defines: TranslateOptions, Workers */

typedef struct {
    double bleu, bleu_precisions[4], bleu_bp, bleu_ratio, hyp_len, ref_len;
    double chrf;
    double loss, perplexity;
    long target_tokens;
    /* <unk> coverage, per side (0 source, 1 target): shares of words and of model tokens */
    double unk_words[2], unk_tokens[2];
    int pairs, skipped;
    MetricOptions metric;   /* what BLEU and chrF were computed with */
} EvalResult;

/* How to score: metric's case and, when tokenize_given, its tokeniser (else guessed). */
typedef struct {
    MetricOptions metric;
    int tokenize_given;
} EvalScoring;

/* The workers' model 0 on tsv_path, the batches of the loss and of the translations
 * spread over the workers (the same figures for any number of them). opt chooses the
 * decoder (greedy or beam), as for nmt translate, and the longest line
 * of tsv_path (opt->lines: a longer one is an error naming it). Notes on stderr when
 * the tokeniser was guessed to be other than 13a, and when the model writes lowercase
 * but the comparison keeps case. -1 with err naming model_path (as messages call the
 * model) when the loss or its perplexity is not finite (eval_loss_problem), before any
 * translating: no figure is a NaN or an infinity. */
int eval_run(Workers *w, const char *model_path, const char *tsv_path, const TranslateOptions *opt,
             const EvalScoring *scoring, EvalResult *res, Error *err);
/* The error for a loss (per what: "per target token") whose perplexity e^loss is not
 * finite: the loss NaN or infinite, or too large. Returns -1. nmt eval of a classifier
 * says the same. */
int eval_loss_problem(const char *model_path, const char *tsv_path, const char *per, double loss, Error *err);
/* Human-readable lines, or one JSON object when json is set. */
void eval_print(const EvalResult *res, int json, FILE *out);
#endif
