/* pairscore.h — scores of given sentence pairs (forced decoding): `nmt eval MODEL
 * PAIRS.tsv --per-line`, as marian-scorer, CTranslate2's score_batch and fairseq's
 * --score-reference give them, and the loss of an ensemble.
 *
 * Each pair's target, read and segmented exactly as nmt eval reads its references, is
 * fed to the model (or the ensemble: the members' mean probability) word by word, as
 * the searches feed their own words (decode.h, forced_search), and scored:
 *   log P(target | source) = sum over the target's units and <eos> of each one's
 *                            log-probability (natural log)
 *   units                  = the target's units + 1 (<eos>)
 * so that over the pairs, -(sum of log P) / (sum of units) is nmt eval's loss per
 * target token. The output has one line per input line, "LOGPROB<TAB>UNITS" (with
 * word_scores, TAB and each unit's log-probability, space-separated, <eos> last); a
 * line that is not a pair (blank, or malformed: a warning says why), or that nmt eval
 * leaves out (a side of more than TRANSLATE_MAX_SOURCE tokens, or none after
 * normalising: a warning too), gets an empty line.
 *
 * The file is read a line at a time, a batch at a time: memory holds a batch, not the
 * file. */
#ifndef PAIRSCORE_H
#define PAIRSCORE_H

#include <stdio.h>

#include "data/batch.h"       /* defines: Example */
#include "decode/translate.h" /* defines: TranslateOptions */
#include "decode/workers.h"   /* defines: Workers, Worker */

/* Scores every line of tsv_path (its lines at most opt->lines long: a longer one is an
 * error naming it) with the workers' models opt chooses (opt->model, or opt->ensemble
 * all of them; translate.h), on one worker borrowed for the file, to out. 0, or -1 with
 * err (the file cannot be read, a line too long, out cannot be written). */
int pairscore_file(Workers *w, const TranslateOptions *opt, const char *tsv_path, int word_scores, FILE *out,
                   Error *err);

/* The summed negative log-probability of examples ex[0..n) (ids, as corpus_encode
 * gives them) under the models opt chooses on worker k, by forced decoding; *units gets
 * the units it is over (<eos> included). */
double pairscore_examples(Worker *k, const TranslateOptions *opt, const Example *ex, int n, long *units);
#endif
