/* corpus.h — from sentence-pair text to model examples: tokenising, length filtering,
 * the train/validation split, vocabulary counting and id encoding.
 *
 *   TsvCorpus --corpus_tokenize--> PairTokens (words) --corpus_split--> train / valid indices
 *   PairTokens (words) --corpus_segment--> PairTokens (the model's units: segment.h)
 *   PairTokens + indices --corpus_count--> VocabCounters --vocab_build--> Vocab
 *   PairTokens + indices + Vocabs --corpus_encode--> Example[]  (batch.h)
 */
#ifndef CORPUS_H
#define CORPUS_H

#include <stdint.h>

#include "data/batch.h" /* defines: Example */
#include "text/segment.h" /* defines: Segmenter */
#include "text/text.h"  /* defines: TextOptions, TokenList */
#include "data/tsv.h"   /* defines: TsvCorpus */
#include "text/vocab.h" /* defines: Vocab, VocabCounter */

typedef struct {
    TokenList *src, *tgt;
    int *line;            /* the pair's line in its file */
    int *index;           /* the pair's index in the TsvCorpus it came from */
    int n;
    int n_too_long;       /* dropped: more than max_len tokens on a side */
    int n_empty;          /* dropped: no tokens left on a side after normalising */
} PairTokens;

/* Tokenises every pair; pairs over max_len tokens on either side (max_len > 0) or with
 * an empty side are dropped and counted. The TSV reader has already rejected invalid
 * UTF-8, so tokenising cannot fail. */
void corpus_tokenize(const TsvCorpus *tsv, const TextOptions *opt, int max_len, PairTokens *out);
void pair_tokens_free(PairTokens *p);

/* Replaces every pair's word tokens by the segmenter's units (no-op for "word"). */
void corpus_segment(PairTokens *p, const Segmenter *s);

/* A seeded shuffle of 0..n-1 split into n_valid = round(n * fraction) validation
 * indices and the rest for training (both in shuffled order). */
void corpus_split(int n, double fraction, uint64_t seed, int **train, int *n_train, int **valid, int *n_valid);

/* Adds the tokens of pairs idx[0..n-1] to the counters (either may be NULL). */
void corpus_count(const PairTokens *p, const int *idx, int n, VocabCounter *src, VocabCounter *tgt);

/* Ids for one token list (unknown words -> VOCAB_UNK); malloc'd, len = t->n. */
int *encode_tokens(const TokenList *t, const Vocab *v);

/* Examples for pairs idx[0..n-1] (idx NULL: all pairs in order). */
Example *corpus_encode(const PairTokens *p, const int *idx, int n, const Vocab *sv, const Vocab *tv);
void examples_free(Example *ex, int n);
#endif
