/* segment.h — the units the model reads and writes: word tokens, subword pieces or
 * characters (data.tokenizer), per side, and the way back to a sentence.
 *
 * text_tokenize (text.h) turns a sentence into word tokens; a Segmenter turns those
 * into the model's units, and the model's output units back into a sentence:
 *
 *   "lower newest"  --text_tokenize-->  lower newest
 *                   --segmenter_apply-->  low@@ er new@@ est      (bpe)
 *                                         l@@ o@@ w@@ e@@ r n@@ ...  (char)
 *                   <--segmenter_detokenize--   "lower newest"
 *
 * The "@@" marker (subword.h) is internal: users see it only from `nmt bpe apply`.
 * With "word" the pieces are the words themselves, as before subword units existed.
 * Under "bpe" each side has its own merges, learned from that side of the training
 * split, unless `joint` (data.joint_vocab): then one merge list, learned from both
 * sides together, serves both, and the model has one vocabulary for both sides.
 *
 * "none" is for text segmented elsewhere (subword-nmt, SentencePiece, a word
 * segmenter): text_tokenize splits it at whitespace only (TextOptions.whitespace_only)
 * and the tokens are the units, untouched. Its `format` (data.subword_format) says how
 * output units become a sentence again, as the tool that segmented the text would:
 *
 *   none    units joined by single spaces              "low@@ er ."  -> "low@@ er ."
 *   bpe_at  subword-nmt's "@@ " removed (sed -r 's/(@@ )|(@@ ?$)//g')  -> "lower ."
 *   spm     units concatenated, U+2581 a space         "▁low er ▁." -> "lower ."
 *
 * "spm" is SentencePiece itself (spm.h): text split at whitespace only, as under none,
 * the words of a sentence joined by single spaces and encoded by a SentencePiece model
 * of each side (joint: one for both), trained by nmt on the training split or read from
 * a .model file; its pieces ("▁low", "er") are the units, and spm_decode turns output
 * pieces back into the sentence. The serialized models travel in the model file.
 *
 * Example:
 *   Segmenter s = {.kind = TOKENIZER_BPE};
 *   segmenter_learn_bpe(&s.src, source_counts, 8000, BPE_NMT);   ... and s.tgt from the target side
 *   TokenList pieces;
 *   segmenter_apply(&s, SIDE_SOURCE, &words_of_a_sentence, &pieces);
 *   char *sentence = segmenter_detokenize(&s, pieces.tokens, pieces.n);
 *   free(sentence); token_list_free(&pieces); segmenter_free(&s);
 */
#ifndef SEGMENT_H
#define SEGMENT_H

#include "text/spm.h"     /* defines: Spm */
#include "text/subword.h" /* defines: Bpe */
#include "text/text.h"    /* defines: TokenList, UserSymbols */
#include "text/vocab.h"   /* defines: VocabCounter */

/* The values are stored in model files (modelfile.h: SUBW's kind): append only. */
typedef enum {
    TOKENIZER_WORD, TOKENIZER_BPE, TOKENIZER_CHAR, TOKENIZER_NONE, TOKENIZER_SPM, TOKENIZER_KINDS
} TokenizerKind;
typedef enum { SIDE_SOURCE, SIDE_TARGET } Side;
/* How tokenizer none's output units become a sentence (above); stored in model files. */
typedef enum { SUBWORD_FORMAT_NONE, SUBWORD_FORMAT_BPE_AT, SUBWORD_FORMAT_SPM, SUBWORD_FORMATS } SubwordFormat;

#define TOKENIZER_NAMES "word|bpe|char|none|spm"
#define SUBWORD_FORMAT_NAMES "none|bpe_at|spm"

/* One side's SentencePiece model: its bytes as a .model file holds them (what the model
 * file stores and ensembles compare) and the model they load. */
typedef struct {
    char *proto;
    size_t n;
    Spm *spm;
} SpmModel;

typedef struct {
    TokenizerKind kind;
    int joint;        /* one vocabulary for both sides (under bpe one merge list, under spm
                         one SentencePiece model) */
    Bpe src, tgt;     /* bpe: the merges of each side (joint: the same list twice) */
    int format;       /* none: a SubwordFormat */
    SpmModel spm_src, spm_tgt;  /* spm: each side's model (joint: the same one twice) */
    const UserSymbols *symbols; /* protected symbols (text.h), kept whole; NULL: none.
                                   Not owned (a ModelFile's) */
} Segmenter;

/* The kind named by data.tokenizer, the format named by data.subword_format; -1 for an
 * unknown name. */
int tokenizer_kind(const char *name);
const char *tokenizer_name(TokenizerKind kind);
int subword_format(const char *name);
const char *subword_format_name(int format);
/* What the model's units are called under kind ("words", "subword pieces", ...). */
const char *tokenizer_units(TokenizerKind kind);
/* 1 if text for kind is split at whitespace only (TextOptions.whitespace_only). */
int tokenizer_whitespace_only(TokenizerKind kind);

/* bpe_learn_format over every word a counter has counted (with its count) but the
 * protected symbols (NULL: none), which BPE never cuts: how nmt train learns a side's
 * merges (BPE_NMT) and nmt bpe learn a file's. Returns how many distinct words were
 * left out as longer than BPE_MAX_WORD_BYTES, for the caller's warning. */
long segmenter_learn_bpe(Bpe *b, const VocabCounter *words, int n_merges, BpeFormat format,
                         const UserSymbols *symbols);
/* A SentencePiece model of model_type ("unigram" or "bpe") with about vocab_size pieces
 * trained on n lines (words joined by single spaces) into m, the protected symbols
 * (NULL: none) its user_defined_symbols; or one read from the bytes of a .model file,
 * `name` naming it in messages. 0, or -1 with err (the library's reason) and m empty. */
int segmenter_learn_spm(SpmModel *m, const char *const *lines, long n, const char *model_type, int vocab_size,
                        const UserSymbols *symbols, Error *err);
int segmenter_load_spm(SpmModel *m, const void *proto, size_t n, const char *name, Error *err);
/* The model type a SentencePiece model records ("unigram", "bpe", ...). */
const char *segmenter_spm_type(const SpmModel *m);
void spm_model_free(SpmModel *m);

/* The model's units for one sentence's word tokens (a new list; copies for "word" and
 * "none"; under spm the pieces of the words joined by single spaces). A protected
 * symbol among the words stays one unit: itself under bpe and char, U+2581 and itself
 * under spm (a word of its own, as SentencePiece's pieces mark one). */
void segmenter_apply(const Segmenter *s, Side side, const TokenList *words, TokenList *pieces);
/* The word tokens that pieces[0..n) spell (a new list; copies for "word" and "none";
 * under spm the decoded sentence's words). */
void segmenter_join(const Segmenter *s, char *const *pieces, int n, TokenList *words);
/* The sentence that output units[0..n) spell (malloc'd, "" for none): every way from
 * the model's units to text goes through here (translate, validation, eval, nmt bpe
 * join). word, bpe, char: the words joined by text_detokenize's rules; none: by the
 * format's (above); spm: spm_decode with the target side's model. */
char *segmenter_detokenize(const Segmenter *s, char *const *units, int n);
/* A reference sentence as the model's output is meant to read: under "none" with a
 * format, the reference segmented as the training data is ("low@@ er") read back by
 * segmenter_detokenize ("lower"), so that BLEU compares sentences with sentences;
 * otherwise (and for a line that is not UTF-8) the line as it is. Malloc'd. */
char *segmenter_reference(const Segmenter *s, const char *line);
/* 1 if units[i] ends a word of the text (the next unit starts another): what <unk>
 * rates count words by (eval.h). */
int segmenter_word_ends(const Segmenter *s, char *const *units, int n, int i);
void segmenter_free(Segmenter *s);
#endif
