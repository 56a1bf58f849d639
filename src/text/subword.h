/* subword.h — word tokens <-> subword pieces: byte-pair encoding (BPE) and
 * character segmentation.
 *
 * A word vocabulary maps every rare word to "<unk>". Cutting words into pieces
 * from a fixed inventory instead lets the model spell out any word, and keeps the
 * vocabulary small. BPE (Sennrich, Haddow & Birch 2016, "Neural Machine Translation
 * of Rare Words with Subword Units") learns that inventory as an ordered list of
 * merges of adjacent symbols, most frequent pair first; this is subword-nmt's
 * algorithm and file layout (version 0.2).
 *
 * Pieces. A piece that does not end its word carries the joiner "@@":
 *   "lower"    -> "low@@" "er"
 * subword_join removes the joiner and glues the piece to the next one. Our tokenizer
 * never makes a token that ends in "@@" ("@" is punctuation and splits off unless it
 * sits between letters), so this is unambiguous.
 *
 * Units. Before BPE each token is cut into units: every grapheme cluster whose first
 * code point is in a script written without spaces (text_is_unspaced: Han, Kana,
 * Thai, ...) is a unit of its own, and each maximal run of other grapheme clusters is
 * one unit. Merges are learned and applied within units only, so those scripts stay
 * one symbol per character (a word boundary in them is not marked, so a merge would
 * cross it blindly). All pieces of a token but its last carry "@@", so the units
 * glue back together without spaces:
 *   "我爱Python" -> units 我 | 爱 | Python -> "我@@" "爱@@" "Py@@" "thon"
 *
 * Symbols. The symbols a unit starts from are its grapheme clusters, not bytes or
 * code points: a Devanagari consonant with its vowel sign ("ते"), a letter with a
 * combining accent, or an emoji ZWJ sequence is one symbol, so no piece ever starts
 * with a combining mark. While learning and applying, the last symbol of a unit
 * carries the end-of-word marker "</w>" ("l o w</w>"), so that a suffix ("er</w>")
 * and the same letters inside a word ("er") are different symbols; the marker never
 * appears in the pieces.
 *
 * subword-nmt's symbols. subword-nmt (rsennrich/subword-nmt) starts from code points
 * and cuts no units: the whole token is one word. The two differ wherever a grapheme
 * cluster has more than one code point, which is most Devanagari words: Marathi "ते"
 * is one symbol here and two ("त" and the vowel sign "े") there, so a merge "त े" of
 * subword-nmt's codes never matches here, and a merge of ours starting "ते" never
 * matches there; codes learned by one segment almost every Marathi line differently
 * in the other. A Bpe of format BPE_SUBWORD_NMT (bpe_from_text_format,
 * bpe_learn_format) works subword-nmt's way throughout, to carry an existing
 * pipeline's codes over: subword_segment then gives exactly the pieces of
 * subword-nmt's apply_bpe.py (its encode(): each token's code points, "</w>" glued to
 * the last, the lowest-ranked pair merged everywhere until none is a merge, "</w>"
 * removed; a token of one code point is left as it is). Its codes may be version 0.2
 * or subword-nmt's older 0.1, where "</w>" is a symbol of its own after the last
 * character (subword-nmt reads a file without a "#version" line as 0.1).
 *
 * Example:
 *   char *words[] = {"low", "lower", "newest", "widest"};
 *   long counts[] = {5, 2, 6, 3};
 *   Bpe bpe;
 *   bpe_learn(&bpe, words, counts, 4, 10);          // merges "e s", "es t</w>", "l o", ...
 *   char *toks[] = {"lowest", "我爱"};
 *   TokenList p;
 *   subword_segment(&bpe, toks, 2, &p);             // lo@@ w@@ est 我@@ 爱
 *   TokenList back;
 *   subword_join(p.tokens, p.n, &back);             // lowest 我爱
 *   char *codes = bpe_to_text(&bpe);                // "#version: 0.2\ne s\nes t</w>\n..."
 *   free(codes); token_list_free(&p); token_list_free(&back); bpe_free(&bpe);
 *
 *   const char *snmt = "#version: 0.2\nत े\n";      // subword-nmt's codes: merge त + े
 *   Error err;
 *   bpe_from_text_format(&bpe, snmt, strlen(snmt), BPE_SUBWORD_NMT, "codes", &err);
 *   char *mr[] = {"तेथे"};
 *   subword_segment(&bpe, mr, 1, &p);               // ते@@ थ@@ े   (as subword-nmt)
 *   token_list_free(&p); bpe_free(&bpe);
 */
#ifndef SUBWORD_H
#define SUBWORD_H
#include <stddef.h>

#include "base/hash.h"   // defines: HashTable
#include "text/text.h"   // defines: TokenList, text_is_unspaced
#include "base/util.h"   // defines: Error

#define SUBWORD_JOINER "@@"

/* Which symbols a word starts from, and so which codes files mean what they say. */
typedef enum {
    BPE_NMT,          /* units of grapheme clusters (above); codes version 0.2 */
    BPE_SUBWORD_NMT   /* subword-nmt's: the whole token, code points; 0.1 or 0.2 */
} BpeFormat;

#define BPE_FORMAT_NAMES "nmt|subword-nmt"

typedef struct {
    int n;                  /* merges, in the order learned (= priority, 0 first) */
    char **left, **right;   /* merge i joins the adjacent symbols left[i] right[i];
                               BPE_NMT: only right may end in "</w>" */
    BpeFormat format;       /* BPE_NMT in a zeroed Bpe, and in every model file */
    int eow_apart;          /* BPE_SUBWORD_NMT, version 0.1 codes: "</w>" a symbol of
                               its own ("l o w </w>"), not glued to the last one */
    HashTable index;        /* private: (left, right) -> merge index */
    size_t longest;         /* private: the most bytes of any merge's left and right */
} Bpe;

/* The longest word learned from, in bytes: a longer one is left out of learning
 * (counted in BpeLearnReport.too_long; nmt bpe learn and nmt train say how many). No
 * word of a language comes near it; what does is a base64 blob, a DNA sequence, a
 * URL list or text glued together without spaces, whose merges would be of no use.
 * Learning takes time linear in the symbols of the words it learns from, however long
 * one of them is; the limit bounds what a word can cost in the symbols' text, which
 * grows with the merges made inside it (a word of n letters seen twice can make
 * merges of every length up to n). Applying merges has no limit: a word of n symbols
 * takes O(n log n) time (subword_segment). */
#ifndef BPE_MAX_WORD_BYTES   /* a build may set it (scripts/bench/bench_bpe_long_word.sh lifts it) */
#define BPE_MAX_WORD_BYTES 4096
#endif

/* What learning did besides the merges. */
typedef struct {
    long too_long;   /* words left out as longer than BPE_MAX_WORD_BYTES (counts > 0) */
    long work;       /* steps taken: pair counts changed, places visited, heap
                        operations. Linear in the symbols learned from, with one step per
                        heap operation; tests check it instead of a clock */
} BpeLearnReport;

/* The format named name ("nmt", "subword-nmt"), or -1. */
int bpe_format_from_name(const char *name);

/* Learns up to n_merges merges from words[i] seen counts[i] times (word tokens as
 * text_tokenize makes them; duplicates allowed, their counts add; counts <= 0 and
 * empty words are ignored). Each step merges the most frequent adjacent pair of
 * symbols (counts weighted by word frequency); ties go to the pair whose left, then
 * right, symbol comes first in byte order ("</w>" included), so the result does not
 * depend on the order of the words. Stops early when the best pair occurs fewer than
 * 2 times. n_merges <= 0 gives an empty Bpe.
 *
 * Words longer than BPE_MAX_WORD_BYTES are left out (bpe_learn_format counts them).
 * Words that could not be written as codes text are skipped: invalid UTF-8, or
 * containing an ASCII space, CR or LF, or the marker "</w>" (text_tokenize makes
 * none of these).
 * A pair merged before could in principle become adjacent again, if a later merge
 * spelled an existing symbol ("ab"+"c" spells "a"+"bc"; not seen on real data). It
 * is then merged again in the data but not listed twice, so the codes always parse;
 * subword_segment applies it at its first rank. */
void bpe_learn(Bpe *b, char *const *words, const long *counts, int n_words, int n_merges);

/* bpe_learn with the symbols of `format`, saying in *report (unless NULL) what else
 * it did. BPE_SUBWORD_NMT: each word is one unit of code points, as subword-nmt's
 * learn_bpe.py sees it, and ties go to the pair that compares greatest (left, then
 * right symbol, in code point order), as in its max(stats, key=lambda x: (stats[x],
 * x)); words are skipped only when empty, not UTF-8, or holding a space, CR or LF
 * (and, unlike subword-nmt, when longer than BPE_MAX_WORD_BYTES). Merges learned so
 * are what subword-nmt's apply reads them as. */
void bpe_learn_format(Bpe *b, char *const *words, const long *counts, int n_words, int n_merges, BpeFormat format,
                      BpeLearnReport *report);

/* Pieces of tokens[0..n-1], in order, into *out (a new TokenList; out->tokens
 * owned). b NULL: character segmentation (every grapheme cluster its own piece, the
 * same "@@" rule). An empty Bpe: units unmerged, i.e. characters. Each unit is
 * segmented as subword-nmt does: repeatedly merge the adjacent pair with the lowest
 * merge index anywhere in the unit (all its occurrences, left to right), until no
 * adjacent pair is a merge. Under BPE_SUBWORD_NMT the unit is the whole token and
 * its symbols are code points (above). Never fails: tokens should be valid UTF-8 (a
 * byte that is not becomes a symbol of its own); empty tokens give no piece. Tokens
 * of any length are segmented, a unit of n symbols in O(n log n) time and O(n)
 * memory. */
void subword_segment(const Bpe *b, char *const *tokens, int n, TokenList *out);

/* subword_segment, adding to *work the steps it took (symbols read, merge lookups and
 * heap operations): O(n log n) for a word of n symbols, which tests check instead of
 * a clock. */
void subword_segment_counted(const Bpe *b, char *const *tokens, int n, TokenList *out, long *work);

/* The inverse, into *out (a new TokenList): glues each piece ending in "@@" (marker
 * removed) to the next; a piece that is only "@@", or empty, adds nothing; a
 * trailing "@@" on the last piece is removed (model output may end mid-word). No
 * empty token is made. join(segment(x)) == x for every list x of non-empty tokens
 * that do not end in "@@" (every list text_tokenize makes). */
void subword_join(char *const *pieces, int n, TokenList *out);

/* 1 if the piece ends in "@@": it continues into the next piece, within one word. */
int subword_continues(const char *piece);

/* Codes text: "#version: 0.2\n" then one "left right\n" line per merge, in order
 * (subword-nmt's layout; no "#version" line for version 0.1 codes, eow_apart).
 * Malloc'd. */
char *bpe_to_text(const Bpe *b);

/* Parses codes text (len bytes of text, no NUL needed). Returns 0, or -1 with err
 * naming `name` (a path, or "model file") and the line, *b then empty (bpe_free is
 * safe):
 *   "NAME:LINE: expected two symbols separated by one space"  (also a blank line
 *                                                   before the last merge)
 *   "NAME:LINE: invalid UTF-8" / "...: NUL byte"
 *   "NAME:LINE: whitespace or a control character (U+XXXX) in a symbol"
 *   "NAME:LINE: empty symbol"
 *   "NAME:LINE: \"</w>\" may only end the right symbol"
 *   "NAME:LINE: \"</w>\" on its own is subword-nmt 0.1's convention; ..."
 *   "NAME:LINE: repeated merge \"l r\" (first on line K)"
 *   "NAME:1: codes version V; only 0.2 is supported"
 * Accepts a missing "#version" line, CRLF line ends, and blank trailing lines. */
int bpe_from_text(Bpe *b, const char *text, size_t len, const char *name, Error *err);

/* bpe_from_text for codes of `format`. BPE_SUBWORD_NMT reads them as subword-nmt's
 * apply_bpe.py does: the first line "#version: 0.2" (or "0.1") sets the version, and
 * without it the file is version 0.1 and its first line a merge; each line, stripped
 * of spaces, CR and LF at both ends, is two symbols separated by one space, which may
 * hold anything else ("</w>" anywhere, tabs); a merge listed again keeps its first
 * rank. Errors as above, and:
 *   "NAME:1: codes version \"V\"; subword-nmt's codes are version 0.1 or 0.2"
 *   "NAME:1: byte-level codes (subword-nmt learn-bpe --byte) are not supported" */
int bpe_from_text_format(Bpe *b, const char *text, size_t len, BpeFormat format, const char *name, Error *err);

void bpe_free(Bpe *b);
#endif
