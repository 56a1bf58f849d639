/* bpe_core.h — what bpe_core.c, bpe_learn.c, bpe_apply.c and bpe_codes.c share, and
 * nothing else includes: the end-of-word marker, the symbols and units a word is
 * cut into, the scratch space for cutting words, and the merge table's lookups. The
 * public interface is subword.h. */
#ifndef BPE_CORE_H
#define BPE_CORE_H
#include <stddef.h>
#include <stdint.h>

#include "text/subword.h"   // defines: Bpe, BpeFormat, TokenList, SUBWORD_JOINER

#define END_OF_WORD "</w>"
#define END_OF_WORD_LEN 4
#define JOINER_LEN 2

/* Bytes s[0..len) of some longer text: a key the tables below look up without
 * copying it out. */
typedef struct {
    const char *s;
    size_t len;
} Span;

/* s (NUL-terminated) equals the len bytes at p. */
int span_is(const char *s, const char *p, size_t len);

/* The symbols of s[0..len) under format: grapheme clusters (BPE_NMT) or code points
 * (BPE_SUBWORD_NMT). Symbol i is s[off[i]..off[i+1]) for i < k, off[k] = len;
 * unspaced[i] is 1 if its first code point is in a script written without spaces.
 * off needs room for len+1 entries, unspaced for len. Returns k. A byte that is not
 * valid UTF-8 is a symbol of its own. */
int split_symbols(BpeFormat format, const char *s, size_t len, int *off, unsigned char *unspaced);
/* The unit that starts at cluster c of k: one unspaced cluster, or the run of
 * spaced clusters up to the next unspaced one. Returns the cluster after it. */
int unit_end(const unsigned char *unspaced, int c, int k);

/* Scratch space for cutting one token, grown to the longest token seen: one
 * allocation, carved into the arrays below (subword_segment makes one per call, and
 * small blocks come quickest). The arrays only apply_merges_long needs are a second
 * allocation, made when the first long unit comes. */
typedef struct {
    int *off;                 /* cluster offsets, (len+1) */
    int *bound;               /* symbol boundaries within text, (len+2) */
    int *rank;                /* the rank of the pair each symbol starts, (len+2) */
    unsigned char *unspaced;  /* (len) */
    char *text;               /* one unit + "</w>" + NUL */
    size_t cap;               /* token bytes the buffers fit */
    uint64_t *heap;           /* apply_merges_long's pairs to merge, (3 long_cap) */
    uint64_t *pending;        /* and those found during a pass, (2 long_cap) */
    int *next, *prev;         /* its list of symbols, (long_cap) */
    size_t long_cap;          /* symbols those fit */
} Scratch;

/* Room in s for a token of len bytes. */
void scratch_fit(Scratch *s, size_t len);
/* Room for apply_merges_long (bpe_apply.c) on m symbols. */
void scratch_fit_long(Scratch *s, int m);
void scratch_free(Scratch *s);

/* The merge index of the pair (l[0..ll), r[0..rl)), or -1. A pair longer than every
 * merge is none, found without hashing it. */
int bpe_rank(const Bpe *b, const char *l, size_t ll, const char *r, size_t rl);
/* Appends the merge (l, r) (copied) unless it is there already. Returns its index,
 * or -1-i if it repeats merge i. */
int bpe_add(Bpe *b, const char *l, size_t ll, const char *r, size_t rl);
#endif
