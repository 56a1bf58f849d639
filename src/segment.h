/* segment.h — the units the model reads and writes: word tokens, subword pieces or
 * characters (data.tokenizer), per side, and the way back to words.
 *
 * text_tokenize (text.h) turns a sentence into word tokens; a Segmenter turns those
 * into the model's units and the model's output units back into word tokens, which
 * text_detokenize joins into a sentence:
 *
 *   "lower newest"  --text_tokenize-->  lower newest
 *                   --segmenter_apply-->  low@@ er new@@ est      (bpe)
 *                                         l@@ o@@ w@@ e@@ r n@@ ...  (char)
 *                   <--segmenter_join--   lower newest
 *
 * The "@@" marker (subword.h) is internal: users see it only from `nmt bpe apply`.
 * With "word" the pieces are the words themselves, as before subword units existed.
 * Under "bpe" each side has its own merges, learned from that side of the training
 * split, unless `joint` (data.joint_vocab): then one merge list, learned from both
 * sides together, serves both, and the model has one vocabulary for both sides.
 *
 * Example:
 *   Segmenter s = {.kind = TOKENIZER_BPE};
 *   segmenter_learn_bpe(&s.src, source_counts, 8000);   ... and s.tgt from the target side
 *   TokenList pieces, back;
 *   segmenter_apply(&s, SIDE_SOURCE, &words_of_a_sentence, &pieces);
 *   segmenter_join(&s, pieces.tokens, pieces.n, &back);   // the words again
 *   token_list_free(&pieces); token_list_free(&back); segmenter_free(&s);
 */
#ifndef SEGMENT_H
#define SEGMENT_H

#include "subword.h" /* defines: Bpe */
#include "text.h"    /* defines: TokenList */
#include "vocab.h"   /* defines: VocabCounter */

typedef enum { TOKENIZER_WORD, TOKENIZER_BPE, TOKENIZER_CHAR } TokenizerKind;
typedef enum { SIDE_SOURCE, SIDE_TARGET } Side;

#define TOKENIZER_NAMES "word|bpe|char"

typedef struct {
    TokenizerKind kind;
    int joint;        /* one vocabulary for both sides (and, under bpe, one merge list) */
    Bpe src, tgt;     /* bpe: the merges of each side (joint: the same list twice) */
} Segmenter;

/* The kind named by data.tokenizer; -1 for an unknown name. */
int tokenizer_kind(const char *name);
const char *tokenizer_name(TokenizerKind kind);

/* bpe_learn over every word a counter has counted (with its count): how nmt train
 * learns a side's merges and nmt bpe learn a file's. */
void segmenter_learn_bpe(Bpe *b, const VocabCounter *words, int n_merges);

/* The model's units for one sentence's word tokens (a new list; copies for "word"). */
void segmenter_apply(const Segmenter *s, Side side, const TokenList *words, TokenList *pieces);
/* The word tokens that pieces[0..n) spell (a new list; copies for "word"). */
void segmenter_join(const Segmenter *s, char *const *pieces, int n, TokenList *words);
void segmenter_free(Segmenter *s);
#endif
