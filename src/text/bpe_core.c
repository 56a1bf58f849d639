/* bpe_core.c — what BPE's learning, applying and codes text share: the symbols a word
 * is cut into (grapheme clusters or code points, and units), the merge table of a Bpe,
 * and the scratch space for cutting words; see bpe_core.h, and subword.h for the API.
 * Learning is in bpe_learn.c, applying and joining pieces in bpe_apply.c, the codes
 * text in bpe_codes.c. */
#include "text/bpe_core.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/hash.h"   // defines: fnv1a, FNV1A_BASIS, hash_find, hash_find_or_add

int span_is(const char *s, const char *p, size_t len)
{
    return strncmp(s, p, len) == 0 && s[len] == '\0';
}

/* ------------------------------------------------------------------------- */
/* Grapheme clusters and units                                                */
/* ------------------------------------------------------------------------- */

/* Splits s[0..len) into grapheme clusters: cluster i is s[off[i]..off[i+1]) for
 * i < k, off[k] = len; unspaced[i] is 1 if its first code point is in a script
 * written without spaces. off needs room for len+1 entries, unspaced for len.
 * Returns k. A byte that is not valid UTF-8 is a cluster of its own: callers promise
 * valid UTF-8, and this keeps a bad byte from being read past or lost. */
static int split_clusters(const char *s, size_t len, int *off, unsigned char *unspaced)
{
    utf8proc_int32_t state = 0, prev = -1;
    int k = 0;
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(len - at), &cp);
        if (step <= 0) {
            step = 1;
            cp = -1;
        }
        if (prev < 0 || cp < 0) state = 0;
        if (prev < 0 || cp < 0 || utf8proc_grapheme_break_stateful(prev, cp, &state)) {
            off[k] = (int)at;
            unspaced[k] = cp >= 0 && text_is_unspaced(cp);
            k++;
        }
        prev = cp;
        at += (size_t)step;
    }
    off[k] = (int)len;
    return k;
}

/* Splits s[0..len) into its code points, as split_clusters does clusters (every
 * unspaced[i] 0, so the whole token is one unit): subword-nmt's symbols. */
static int split_code_points(const char *s, size_t len, int *off, unsigned char *unspaced)
{
    int k = 0;
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(len - at), &cp);
        off[k] = (int)at;
        unspaced[k++] = 0;
        at += step > 0 ? (size_t)step : 1;
    }
    off[k] = (int)len;
    return k;
}

/* The symbols of s[0..len) under format (see split_clusters). */
int split_symbols(BpeFormat format, const char *s, size_t len, int *off, unsigned char *unspaced)
{
    return format == BPE_SUBWORD_NMT ? split_code_points(s, len, off, unspaced) : split_clusters(s, len, off, unspaced);
}

/* The unit that starts at cluster c of k: one unspaced cluster, or the run of
 * spaced clusters up to the next unspaced one. Returns the cluster after it. */
int unit_end(const unsigned char *unspaced, int c, int k)
{
    if (unspaced[c])
        return c + 1;
    while (c < k && !unspaced[c])
        c++;
    return c;
}

void scratch_fit(Scratch *s, size_t len)
{
    if (len <= s->cap && s->off)
        return;
    s->cap = len > 2 * s->cap ? len : 2 * s->cap;
    if (s->cap < 64) s->cap = 64;
    size_t symbols = s->cap + 2;
    free(s->off);
    s->off = xmalloc(3 * symbols * sizeof(int) + s->cap + s->cap + END_OF_WORD_LEN + 1);
    s->bound = s->off + symbols;
    s->rank = s->bound + symbols;
    s->unspaced = (unsigned char *)(s->rank + symbols);
    s->text = (char *)s->unspaced + s->cap;
}

/* Room for apply_merges_long on m symbols. */
void scratch_fit_long(Scratch *s, int m)
{
    size_t need = (size_t)m + 1;
    if (need <= s->long_cap)
        return;
    s->long_cap = need > 2 * s->long_cap ? need : 2 * s->long_cap;
    size_t symbols = s->long_cap;
    free(s->heap);
    s->heap = xmalloc(5 * symbols * sizeof(uint64_t) + 2 * symbols * sizeof(int));
    s->pending = s->heap + 3 * symbols;
    s->next = (int *)(s->pending + 2 * symbols);
    s->prev = s->next + symbols;
}

void scratch_free(Scratch *s)
{
    free(s->off);
    free(s->heap);
}

/* ------------------------------------------------------------------------- */
/* The merge table                                                            */
/* ------------------------------------------------------------------------- */

/* Hash of the pair pair[0], pair[1]: 0xFF, which never occurs in UTF-8, separates
 * them, so ("ab","c") and ("a","bc") hash apart. */
static uint64_t hash_pair(const Span *pair)
{
    uint64_t h = fnv1a(FNV1A_BASIS, pair[0].s, pair[0].len);
    h = fnv1a(h, "\xff", 1);
    return fnv1a(h, pair[1].s, pair[1].len);
}

/* Merge `id` of the Bpe joins the Span pair[0], pair[1]. */
static int merge_is(const void *bpe, int id, const void *pair)
{
    const Bpe *b = bpe;
    const Span *p = pair;
    return span_is(b->left[id], p[0].s, p[0].len) && span_is(b->right[id], p[1].s, p[1].len);
}

/* The merge index of the pair, or -1. A pair longer than every merge is none, found
 * without hashing it: applying looks up the pairs a long word's symbols make, and its
 * cost is then bounded by the merges, not by the word. */
int bpe_rank(const Bpe *b, const char *l, size_t ll, const char *r, size_t rl)
{
    if (ll + rl > b->longest)
        return -1;
    Span pair[2] = {{l, ll}, {r, rl}};
    return hash_find(&b->index, hash_pair(pair), merge_is, b, pair);
}

/* Appends the merge (l, r) (copied) unless it is there already. Returns its index,
 * or -1-i if it repeats merge i. */
int bpe_add(Bpe *b, const char *l, size_t ll, const char *r, size_t rl)
{
    Span pair[2] = {{l, ll}, {r, rl}};
    int id = hash_find_or_add(&b->index, hash_pair(pair), merge_is, b, pair, b->n);
    if (id < b->n)
        return -1 - id;
    if ((b->n & (b->n - 1)) == 0) {   /* capacity is the next power of two */
        size_t cap = b->n ? 2 * (size_t)b->n : 1;
        b->left = xrealloc(b->left, cap * sizeof *b->left);
        b->right = xrealloc(b->right, cap * sizeof *b->right);
    }
    b->left[b->n] = xmalloc(ll + 1);
    memcpy(b->left[b->n], l, ll);
    b->left[b->n][ll] = '\0';
    b->right[b->n] = xmalloc(rl + 1);
    memcpy(b->right[b->n], r, rl);
    b->right[b->n][rl] = '\0';
    b->n++;
    if (ll + rl > b->longest)
        b->longest = ll + rl;
    return id;
}

void bpe_free(Bpe *b)
{
    for (int i = 0; i < b->n; i++) {
        free(b->left[i]);
        free(b->right[i]);
    }
    free(b->left);
    free(b->right);
    hash_free(&b->index);
    *b = (Bpe){0};
}
