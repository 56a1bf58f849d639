/* text.h — turning a line of UTF-8 into word tokens and back (utf8proc).
 *
 * Every sentence the model sees, and every reference BLEU compares against, goes
 * through the same three steps, so that "é" typed as one code point or as "e" plus
 * a combining accent, or "Hello," and "Hello ," end up as the same token sequence:
 *
 *   1. normalise: NFC (or NFKC, which also folds compatibility forms such as the
 *      ligature "ﬁ" into "fi" and full-width letters into ASCII), optionally with
 *      Unicode case folding ("ÉCOLE" -> "école", "Straße" -> "strasse");
 *   2. split on whitespace: Unicode Zs/Zl/Zp (so NBSP and ideographic space count)
 *      and control characters Cc (tab, CR, LF, NUL); runs of it collapse;
 *   3. split off punctuation (categories P*): each punctuation code point becomes a
 *      token of its own, unless it sits between two letters/numbers/marks (L*, N*,
 *      M*), as in "don't", "well-known", "3.5", "e-mail", which stay one token.
 *      Some punctuation is never word-internal and always splits (see below).
 *      With whitespace_only (data.tokenizer none and spm: text segmented elsewhere,
 *      "low@@ er", or by SentencePiece) this step is left out: the tokens are exactly
 *      the runs between whitespace.
 *
 * Combining marks (Mn/Mc/Me) never split from the character before them, so a
 * Devanagari word with vowel signs ("नमस्ते") is one token. Symbols (S*) and format
 * characters (Cf: ZWJ/ZWNJ matter in Devanagari and Persian) stay inside words;
 * only U+FEFF (a stray byte-order mark) is dropped, before step 1, so that it cannot
 * keep a letter and its combining mark apart. Text in scripts written without
 * spaces (text_is_unspaced: Han, Kana, Thai, ...) stays inside words: splitting it
 * into symbols is the subword tokenizers' job (subword.h).
 *
 * Example:
 *   TextOptions opt = {.lowercase = 1, .nfkc = 0};
 *   TokenList t;
 *   Error err;
 *   if (text_tokenize("He said \"don't!\"", 16, &opt, &t, &err) != 0) ... err.msg
 *   // t.tokens = he said " don't ! "      (t.n = 6; with .whitespace_only = 1:
 *   //                                       he said "don't!", t.n = 3)
 *   char *s = text_detokenize(t.tokens, t.n);   // he said "don't!"
 *   free(s); token_list_free(&t);
 */
#ifndef TEXT_H
#define TEXT_H
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"   // defines: Error

/* Protected symbols (data.user_symbols): below. */
typedef struct UserSymbols UserSymbols;

typedef struct {
    int lowercase;  /* 1: Unicode case folding (utf8proc UTF8PROC_CASEFOLD) */
    int nfkc;       /* 1: NFKC, 0: NFC */
    int whitespace_only;  /* 1: split at whitespace only, not at punctuation (step 3) */
    const UserSymbols *symbols;  /* kept whole (below): each occurrence, after step 1,
                                    a token of its own; NULL: none. Not owned */
} TextOptions;

typedef struct {
    char **tokens;  /* n NUL-terminated UTF-8 strings, owned */
    int n;
} TokenList;

/* Normalise (NFC/NFKC, optional case fold), then split into word tokens.
 * Returns 0, or -1 with a message in err if the bytes are not valid UTF-8
 * ("invalid UTF-8 at byte N", N counted from 0). `len` bytes of `line` are read
 * (no NUL needed; a NUL byte inside counts as whitespace). On failure *out is
 * left empty (tokens NULL, n 0), so token_list_free is always safe.
 *
 * Punctuation that always splits, even between letters, because it ends or
 * brackets a phrase rather than joining a word: brackets (Ps, Pe), ! ? ¡ ¿ ; …
 * and the sentence marks of other scripts (। ॥ danda, 。、 ideographic, ، ؛ ؟ Arabic). */
int text_tokenize(const char *line, size_t len, const TextOptions *opt, TokenList *out, Error *err);
void token_list_free(TokenList *t);

/* The tokens joined by single spaces, as they are (malloc'd, "" for n == 0). */
char *text_join(char *const *tokens, int n);

/* Joins tokens into a sentence string (malloc'd, "" for n == 0), like the Moses
 * detokenizer: single spaces between tokens, except
 *   - no space before a closing token: a single Pe or Pf character, or one of
 *     . , ! ? : ; % ‰ … । ॥ and their CJK / full-width / Arabic counterparts;
 *   - no space after an opening token: a single Ps or Pi character, ¿ or ¡;
 *   - straight quotes " and ' alternate (each kind counted separately): the 1st,
 *     3rd, ... is opening, the 2nd, 4th, ... is closing;
 *   - dashes and everything else get spaces on both sides;
 *   - no space between two tokens when the character before the gap and the one
 *     after it are both Chinese or Japanese (Han, Kana, Bopomofo, CJK punctuation,
 *     full-width forms), so "我爱你 。 他" reads "我爱你。他". (Thai, Lao, Khmer and
 *     Myanmar put spaces between phrases, so theirs are kept; the symbols the subword
 *     tokenizers split off are glued back by subword_join, without any space.)
 *   - a token that starts with a combining mark always has a space before it (it
 *     would otherwise merge with the marks of an opening token before it, and read
 *     back differently).
 * A "single character" may carry combining marks after it. */
char *text_detokenize(char *const *tokens, int n);

/* Step 1 alone: len bytes of valid UTF-8 (U+FEFF dropped) normalised into code points
 * (*cps, malloc'd). Returns their number, or -1 with err ("invalid UTF-8 at byte N"). */
long text_normalize_codepoints(const char *s, size_t len, const TextOptions *opt, int32_t **cps, Error *err);

/* 1 if the code point separates tokens: Unicode Zs, Zl, Zp or a control
 * character (Cc). Shared so that tsv.c calls a column "whitespace only" by the
 * same rule the tokenizer uses. */
int text_is_space(int32_t cp);

/* 1 if the code point belongs to a script written without spaces between words:
 * Han (CJK ideographs, radicals, strokes), Hiragana, Katakana, Bopomofo, CJK
 * punctuation and full-width forms, Thai, Lao, Khmer, Myanmar, Tai Tham, New Tai
 * Lue. (utf8proc has no script property, so this is a table of Unicode blocks.)
 * Hangul is not here: Korean separates words with spaces. */
int text_is_unspaced(int32_t cp);

/* Tokenize then detokenize: what a sentence (e.g. a BLEU reference) looks like
 * after our processing. Malloc'd; NULL on invalid UTF-8. */
char *text_normalize_line(const char *line, size_t len, const TextOptions *opt);

/* ------------------------------------------------------------------------- */
/* Protected symbols                                                          */
/* ------------------------------------------------------------------------- */

/* Protected symbols (data.user_symbols): strings such as "<2da>", "<b>" or
 * "{name}" that every tokenizer keeps whole.
 *
 * Language tags, markup and placeholders are made of punctuation, which the word
 * tokenizer splits off ("<2da>" -> "<" "2da" ">"), and of letters BPE would cut into
 * pieces: without protection a language tag costs five units and means nothing to the
 * model as a whole. A protected symbol is instead, wherever it occurs in a line (inside
 * a word too), a token of its own (text_tokenize), which BPE and character segmentation
 * leave whole and BPE learning does not learn from, which SentencePiece is trained with
 * as a user_defined_symbol and which its segmentation leaves whole (segment.h). The
 * symbols travel in the model file (modelfile.h, section USYM), so translation keeps
 * them whole as training did.
 *
 * A symbol is matched after the line is normalised, so it is normalised as the text is
 * (data.lowercase: "<2DA>" is "<2da>", and matches "<2Da>" in the text too). Where two
 * symbols could start at the same place, the longer one is taken.
 *
 * Example:
 *   char *given[] = {"<2da>", "{name}"};
 *   TextOptions opt = {0};
 *   UserSymbols u;
 *   Error err;
 *   if (user_symbols_init(&u, given, 2, &opt, &err)) ... err.msg
 *   opt.symbols = &u;
 *   TokenList t;
 *   text_tokenize("<2da>Hello, {name}!", 19, &opt, &t, &err);  // <2da> Hello , {name} !
 *   user_symbols_is(&u, t.tokens[0]);                         // 1
 *   token_list_free(&t); user_symbols_free(&u);
 */
/* The most symbols, and the longest one in bytes, a config or a model file may hold. */
#define USER_SYMBOLS_MAX 10000
#define USER_SYMBOL_MAX_BYTES 256

struct UserSymbols {
    char **given;        /* (n) the symbols as given (what model files store) */
    int n;
    char **norm;         /* (n) each normalised as the text is: the tokens it becomes */
    int32_t **cps;       /* (n) the same as code points ... */
    int *cps_len;        /* ... of this many */
};

/* What is wrong with s as a symbol (a whole clause: "\"a b\" holds whitespace"), into
 * why[len]; 0 if nothing. A symbol is valid UTF-8 of 1 to USER_SYMBOL_MAX_BYTES bytes,
 * without whitespace or control characters (text splits there), not a reserved name
 * (<pad>, <unk>, <sos>, <eos>), not ending in "@@" (BPE's joiner), and without U+2581
 * (SentencePiece's space) or a comma (SentencePiece takes its symbols as a list with
 * commas). */
int user_symbol_problem(const char *s, char *why, size_t len);

/* u from the n symbols given (copied), normalised with text's options (its symbols
 * ignored). 0, or -1 with err naming the first bad symbol (user_symbol_problem, a
 * repeated one, or more than USER_SYMBOLS_MAX) and u empty. */
int user_symbols_init(UserSymbols *u, char *const *given, int n, const TextOptions *text, Error *err);
void user_symbols_free(UserSymbols *u);

/* The code points of the longest symbol that cp[0..n) starts with, or 0. */
int user_symbols_match(const UserSymbols *u, const int32_t *cp, long n);
/* 1 if token is one of the symbols (normalised), else 0; u may be NULL. */
int user_symbols_is(const UserSymbols *u, const char *token);
#endif
