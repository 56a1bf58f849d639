/* subword.c — BPE learning and applying, character segmentation, joining pieces,
 * and the codes text format; see subword.h. */
#include "text/subword.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/hash.h"   // defines: fnv1a, FNV1A_BASIS, hash_mix64, hash_find, hash_find_or_add

#define END_OF_WORD "</w>"
#define END_OF_WORD_LEN 4
#define JOINER_LEN 2

/* Bytes s[0..len) of some longer text: a key the tables below look up without
 * copying it out. */
typedef struct {
    const char *s;
    size_t len;
} Span;

/* s equals the len bytes at p. */
static int same(const char *s, const char *p, size_t len)
{
    return strncmp(s, p, len) == 0 && s[len] == '\0';
}

/* Appends a copy of s[0..len), followed by the joiner if `joined`, to a growable
 * token list (the lists subword_segment and subword_join return). */
static void list_push(TokenList *t, int *cap, const char *s, size_t len, int joined)
{
    if (t->n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        t->tokens = xrealloc(t->tokens, (size_t)*cap * sizeof *t->tokens);
    }
    char *copy = xmalloc(len + (joined ? JOINER_LEN : 0) + 1);
    memcpy(copy, s, len);
    if (joined) {
        memcpy(copy + len, SUBWORD_JOINER, JOINER_LEN);
        len += JOINER_LEN;
    }
    copy[len] = '\0';
    t->tokens[t->n++] = copy;
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
static int split_symbols(BpeFormat format, const char *s, size_t len, int *off, unsigned char *unspaced)
{
    return format == BPE_SUBWORD_NMT ? split_code_points(s, len, off, unspaced) : split_clusters(s, len, off, unspaced);
}

/* The unit that starts at cluster c of k: one unspaced cluster, or the run of
 * spaced clusters up to the next unspaced one. Returns the cluster after it. */
static int unit_end(const unsigned char *unspaced, int c, int k)
{
    if (unspaced[c])
        return c + 1;
    while (c < k && !unspaced[c])
        c++;
    return c;
}

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

static void scratch_fit(Scratch *s, size_t len)
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
static void scratch_fit_long(Scratch *s, int m)
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

static void scratch_free(Scratch *s)
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
    return same(b->left[id], p[0].s, p[0].len) && same(b->right[id], p[1].s, p[1].len);
}

/* The merge index of the pair, or -1. A pair longer than every merge is none, found
 * without hashing it: applying looks up the pairs a long word's symbols make, and its
 * cost is then bounded by the merges, not by the word. */
static int bpe_rank(const Bpe *b, const char *l, size_t ll, const char *r, size_t rl)
{
    if (ll + rl > b->longest)
        return -1;
    Span pair[2] = {{l, ll}, {r, rl}};
    return hash_find(&b->index, hash_pair(pair), merge_is, b, pair);
}

/* Appends the merge (l, r) (copied) unless it is there already. Returns its index,
 * or -1-i if it repeats merge i. */
static int bpe_add(Bpe *b, const char *l, size_t ll, const char *r, size_t rl)
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

/* ------------------------------------------------------------------------- */
/* Learning                                                                   */
/* ------------------------------------------------------------------------- */

/* The incremental algorithm: the distinct units of the corpus, each a list of symbol
 * ids with a count; a hash map from each adjacent pair of symbols to its weighted
 * count and the places it occurs at; a max-heap of pairs by count. A merge rewrites
 * only the places its pair occurs at and adjusts the counts of the pairs around each,
 * so a step costs what its pair touches, not a pass over the corpus nor over a unit:
 * learning takes time linear in the corpus's symbols (and a heap operation per
 * change), however long a unit is. Rewriting a whole unit per merge would be
 * quadratic in its length (a word of 40,000 letters took over 20 s, one of 1 MB hours).
 *
 * A place is (unit, position): the units' symbols are kept at the positions of the
 * symbols they started from, a merged symbol at the position of its left part, so a
 * place names the same pair until a merge changes that pair. A pair's list of places
 * is appended to when the pair forms and never pruned, except when its count drops to
 * 0; a merge checks each place it visits and passes over those gone since. Every
 * place is created by the start or by a merge (at most two per merged place), so the
 * lists hold at most three times the corpus's symbols in all.
 *
 * The heap is lazy: a pair gets a new entry when its count grows (one per merge step,
 * after the step), and keeps its old entries when the count shrinks. Every pair thus
 * has an entry no lower than its count; an entry is current when it equals the count.
 * A popped entry that is too high is pushed again at the current count; one that is
 * too low is dropped (a current one was pushed when the count grew). The first current
 * entry popped is then the best pair, ties included. */

/* Strings -> dense ids (symbols, and units while counting them). */
typedef struct {
    char **str;       /* id -> string, (n), room for cap */
    int n, cap;
    HashTable index;  /* string -> id */
} Interner;

static int string_is(const void *interner, int id, const void *span)
{
    const Span *sp = span;
    return same(((const Interner *)interner)->str[id], sp->s, sp->len);
}

/* The id of s[0..len) (a copy is made on first sight). */
static int intern(Interner *t, const char *s, size_t len)
{
    Span key = {s, len};
    int id = hash_find_or_add(&t->index, fnv1a(FNV1A_BASIS, s, len), string_is, t, &key, t->n);
    if (id < t->n)
        return id;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->str = xrealloc(t->str, (size_t)t->cap * sizeof *t->str);
    }
    char *copy = xmalloc(len + 1);
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->str[t->n++] = copy;
    return id;
}

static void interner_free(Interner *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->str[i]);
    free(t->str);
    hash_free(&t->index);
}

/* A distinct unit of the corpus. Position i holds the symbol that starts with the
 * unit's i-th starting symbol, or is dead when a merge has joined that symbol to the
 * one before it; the live positions are a doubly linked list. */
typedef struct {
    int *sym;       /* (len) symbol id at each position, -1 when dead */
    int *next;      /* (len) the next live position; len after the last */
    int *prev;      /* (len) the previous live position; -1 before the first */
    int len;        /* positions: the symbols the unit started from */
    long count;     /* how often the unit occurs in the corpus */
} Unit;

/* Where a pair occurs: its left symbol is at position pos of unit `unit`. */
typedef struct {
    int unit, pos;
} Place;

typedef struct {
    int left, right;   /* symbol ids */
    long count;        /* occurrences weighted by unit counts; 0: in no unit */
    Place *at;         /* where it has occurred (some no longer hold it), (n_at) */
    int n_at, cap_at;
    int grown;         /* 1 while on the learner's list of pairs grown this step */
} Pair;

typedef struct {
    long count;
    int pair;
} HeapEntry;

typedef struct {
    Interner syms;
    Unit *units;
    int n_units;
    Pair *pairs;
    int n_pairs, cap_pairs;
    HashTable pair_index; /* pair_key(left, right) -> pair index */
    HeapEntry *heap;
    int n_heap, cap_heap;
    int *grown;           /* the pairs whose count grew in this step, to push, (n_grown) */
    int n_grown, cap_grown;
    int greatest_first;   /* ties: the greatest pair first (subword-nmt), not the least */
    long work;            /* steps taken (BpeLearnReport) */
} Learner;

static uint64_t pair_key(int left, int right) { return (uint64_t)(uint32_t)left << 32 | (uint32_t)right; }

static int pair_is(const void *learner, int p, const void *key)
{
    const Pair *pr = &((const Learner *)learner)->pairs[p];
    return pair_key(pr->left, pr->right) == *(const uint64_t *)key;
}

/* The index of the pair with this pair_key, created with count 0 on first sight. */
static int pair_get(Learner *L, uint64_t key)
{
    int p = hash_find_or_add(&L->pair_index, hash_mix64(key), pair_is, L, &key, L->n_pairs);
    if (p < L->n_pairs)
        return p;
    if (L->n_pairs == L->cap_pairs) {
        L->cap_pairs = L->cap_pairs ? 2 * L->cap_pairs : 4096;
        L->pairs = xrealloc(L->pairs, (size_t)L->cap_pairs * sizeof *L->pairs);
    }
    L->pairs[L->n_pairs++] = (Pair){.left = (int)(key >> 32), .right = (int)(uint32_t)key};
    return p;
}

/* Heap order: higher count first, then left symbol, then right, in byte order (which
 * for UTF-8 is code point order): least first, or greatest with greatest_first. */
static int heap_before(const Learner *L, HeapEntry a, HeapEntry b)
{
    if (a.count != b.count)
        return a.count > b.count;
    const Pair *x = &L->pairs[a.pair], *y = &L->pairs[b.pair];
    int c = strcmp(L->syms.str[x->left], L->syms.str[y->left]);
    if (c == 0)
        c = strcmp(L->syms.str[x->right], L->syms.str[y->right]);
    return L->greatest_first ? c > 0 : c < 0;
}

static void heap_push(Learner *L, long count, int pair)
{
    L->work++;
    if (L->n_heap == L->cap_heap) {
        L->cap_heap = L->cap_heap ? 2 * L->cap_heap : 4096;
        L->heap = xrealloc(L->heap, (size_t)L->cap_heap * sizeof *L->heap);
    }
    HeapEntry e = {count, pair};
    int i = L->n_heap++;
    while (i > 0 && heap_before(L, e, L->heap[(i - 1) / 2])) {
        L->heap[i] = L->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    L->heap[i] = e;
}

static HeapEntry heap_pop(Learner *L)
{
    L->work++;
    HeapEntry top = L->heap[0], e = L->heap[--L->n_heap];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= L->n_heap)
            break;
        if (c + 1 < L->n_heap && heap_before(L, L->heap[c + 1], L->heap[c]))
            c++;
        if (!heap_before(L, L->heap[c], e))
            break;
        L->heap[i] = L->heap[c];
        i = c;
    }
    L->heap[i] = e;
    return top;
}

/* The pair (left, right) occurs once more at position pos of unit u, which occurs
 * `count` times. */
static void pair_formed(Learner *L, int left, int right, int u, int pos, long count)
{
    L->work++;
    int p = pair_get(L, pair_key(left, right));   /* may move L->pairs */
    Pair *pr = &L->pairs[p];
    pr->count += count;
    if (pr->n_at == pr->cap_at) {
        pr->cap_at = pr->cap_at ? 2 * pr->cap_at : 4;
        pr->at = xrealloc(pr->at, (size_t)pr->cap_at * sizeof *pr->at);
    }
    pr->at[pr->n_at++] = (Place){u, pos};
    if (!pr->grown) {
        pr->grown = 1;
        if (L->n_grown == L->cap_grown) {
            L->cap_grown = L->cap_grown ? 2 * L->cap_grown : 1024;
            L->grown = xrealloc(L->grown, (size_t)L->cap_grown * sizeof *L->grown);
        }
        L->grown[L->n_grown++] = p;
    }
}

/* The pair (left, right) occurs once less, in a unit that occurs `count` times. */
static void pair_broken(Learner *L, int left, int right, long count)
{
    L->work++;
    int p = pair_get(L, pair_key(left, right));   /* may move L->pairs */
    Pair *pr = &L->pairs[p];
    pr->count -= count;
    if (pr->count == 0)
        pr->n_at = 0;   /* in no unit any more: forget the stale places */
}

/* Pushes the pairs that grew in this step, once each, at their count now. */
static void push_grown(Learner *L)
{
    for (int g = 0; g < L->n_grown; g++) {
        Pair *pr = &L->pairs[L->grown[g]];
        pr->grown = 0;
        if (pr->count > 0)
            heap_push(L, pr->count, L->grown[g]);
    }
    L->n_grown = 0;
}

/* Places in order: by unit, then left to right. */
static int place_order(const void *a, const void *b)
{
    const Place *x = a, *y = b;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* Replaces pair p, (left, right), by the symbol `joined` wherever it occurs, left to
 * right within each unit, and updates the counts of the pairs around it. */
static void learner_merge(Learner *L, int p, int joined)
{
    int left = L->pairs[p].left, right = L->pairs[p].right;
    Place *at = L->pairs[p].at;
    int n_at = L->pairs[p].n_at;
    /* The list is detached: the rewrites below form only pairs with `joined` in them. */
    L->pairs[p].at = NULL;
    L->pairs[p].n_at = L->pairs[p].cap_at = 0;
    /* Places of a pair of two equal symbols can overlap ("a a a"), and which of them
     * are merged depends on the order: left to right, as the units are read. A step
     * appends a pair's places in that order, so a list is out of it only when its
     * symbol was made by two different merges (the repeat in subword.h); sorting keeps
     * even that exact. Places of other pairs never overlap, and each is merged
     * whatever the order. */
    if (left == right)
        qsort(at, (size_t)n_at, sizeof *at, place_order);
    for (int k = 0; k < n_at; k++) {
        L->work++;
        int u = at[k].unit, i = at[k].pos;
        Unit *un = &L->units[u];
        int j = un->next[i];
        if (un->sym[i] != left || j == un->len || un->sym[j] != right)
            continue;   /* not there any more: merged since, on either side */
        /* h i j k  ->  h i k: (h,left) (left,right) (right,k) become (h,joined)
         * (joined,k). */
        int h = un->prev[i], k2 = un->next[j];
        long c = un->count;
        L->pairs[p].count -= c;
        if (h >= 0) {
            pair_broken(L, un->sym[h], left, c);
            pair_formed(L, un->sym[h], joined, u, h, c);
        }
        if (k2 < un->len) {
            pair_broken(L, right, un->sym[k2], c);
            pair_formed(L, joined, un->sym[k2], u, i, c);
            un->prev[k2] = i;
        }
        un->sym[i] = joined;
        un->sym[j] = -1;
        un->next[i] = k2;
    }
    free(at);
    push_grown(L);
}

/* Adds the units of word, count times each, to the distinct units (unit_ids) and
 * their counts (unit_counts[id], grown as needed). */
static void count_units(Interner *unit_ids, long **unit_counts, int *cap_counts, const char *word, long count,
                        BpeFormat format, Scratch *s)
{
    size_t len = strlen(word);
    scratch_fit(s, len);
    int k = split_symbols(format, word, len, s->off, s->unspaced);
    for (int c = 0; c < k;) {
        int end = unit_end(s->unspaced, c, k);
        if (end - c >= 2) {   /* a single symbol has no pairs to learn from */
            int id = intern(unit_ids, word + s->off[c], (size_t)(s->off[end] - s->off[c]));
            if (id >= *cap_counts) {
                int old = *cap_counts;
                *cap_counts = old ? 2 * old : 1024;
                *unit_counts = xrealloc(*unit_counts, (size_t)*cap_counts * sizeof **unit_counts);
                memset(*unit_counts + old, 0, (size_t)(*cap_counts - old) * sizeof **unit_counts);
            }
            (*unit_counts)[id] += count;
        }
        c = end;
    }
}

/* Words whose symbols bpe_to_text could not write so that bpe_from_text_format
 * reads them back: empty, not UTF-8, with a space or line end, or (BPE_NMT) with
 * "</w>". */
static int learnable(const char *w, BpeFormat format)
{
    if (!w[0] || strpbrk(w, " \r\n") || (format == BPE_NMT && strstr(w, END_OF_WORD)))
        return 0;
    size_t len = strlen(w);
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)w + at, (utf8proc_ssize_t)(len - at), &cp);
        if (step <= 0)
            return 0;
        at += (size_t)step;
    }
    return 1;
}

void bpe_learn(Bpe *b, char *const *words, const long *counts, int n_words, int n_merges)
{
    bpe_learn_format(b, words, counts, n_words, n_merges, BPE_NMT, NULL);
}

void bpe_learn_format(Bpe *b, char *const *words, const long *counts, int n_words, int n_merges, BpeFormat format,
                      BpeLearnReport *report)
{
    *b = (Bpe){.format = format};
    BpeLearnReport r = {0};
    if (report)
        *report = r;
    if (n_merges <= 0)
        return;
    Learner L = {.greatest_first = format == BPE_SUBWORD_NMT};
    Scratch s = {0};

    /* Distinct units and their counts. */
    Interner unit_ids = {0};
    long *unit_counts = NULL;
    int cap_counts = 0;
    for (int i = 0; i < n_words; i++) {
        if (counts[i] <= 0)
            continue;
        if (strlen(words[i]) > BPE_MAX_WORD_BYTES)
            r.too_long++;
        else if (learnable(words[i], format))
            count_units(&unit_ids, &unit_counts, &cap_counts, words[i], counts[i], format, &s);
    }

    /* Each unit as symbol ids, and its pairs counted. */
    L.n_units = unit_ids.n;
    L.units = xmalloc((size_t)(L.n_units ? L.n_units : 1) * sizeof *L.units);
    char *sym = xmalloc(1);
    size_t sym_cap = 1;
    for (int u = 0; u < L.n_units; u++) {
        const char *text = unit_ids.str[u];
        size_t len = strlen(text);
        scratch_fit(&s, len);
        int k = split_symbols(format, text, len, s.off, s.unspaced);
        Unit *un = &L.units[u];
        int *lists = xmalloc(3 * (size_t)k * sizeof *lists);   /* sym, next, prev */
        *un = (Unit){.sym = lists, .next = lists + k, .prev = lists + 2 * k, .len = k, .count = unit_counts[u]};
        for (int c = 0; c < k; c++) {
            size_t sl = (size_t)(s.off[c + 1] - s.off[c]);
            if (sl + END_OF_WORD_LEN > sym_cap) {
                sym_cap = 2 * (sl + END_OF_WORD_LEN);
                sym = xrealloc(sym, sym_cap);
            }
            memcpy(sym, text + s.off[c], sl);
            if (c == k - 1) {
                memcpy(sym + sl, END_OF_WORD, END_OF_WORD_LEN);
                sl += END_OF_WORD_LEN;
            }
            un->sym[c] = intern(&L.syms, sym, sl);
            un->next[c] = c + 1;
            un->prev[c] = c - 1;
            if (c > 0)
                pair_formed(&L, un->sym[c - 1], un->sym[c], u, c - 1, un->count);
        }
    }
    push_grown(&L);
    free(unit_counts);
    interner_free(&unit_ids);

    /* The merges. */
    while (b->n < n_merges && L.n_heap > 0) {
        HeapEntry e = heap_pop(&L);
        long count = L.pairs[e.pair].count;
        if (e.count != count) {
            if (e.count > count && count > 0)
                heap_push(&L, count, e.pair);
            continue;
        }
        if (count < 2)
            break;
        const char *l = L.syms.str[L.pairs[e.pair].left], *rs = L.syms.str[L.pairs[e.pair].right];
        size_t ll = strlen(l), rl = strlen(rs);
        if (ll + rl + 1 > sym_cap) {
            sym_cap = 2 * (ll + rl + 1);
            sym = xrealloc(sym, sym_cap);
        }
        memcpy(sym, l, ll);
        memcpy(sym + ll, rs, rl);
        bpe_add(b, l, ll, rs, rl);   /* a repeat (see subword.h) is not listed again */
        int joined = intern(&L.syms, sym, ll + rl);
        learner_merge(&L, e.pair, joined);
    }

    r.work = L.work;
    if (report)
        *report = r;
    free(sym);
    scratch_free(&s);
    for (int u = 0; u < L.n_units; u++)
        free(L.units[u].sym);   /* and next and prev */
    free(L.units);
    for (int p = 0; p < L.n_pairs; p++)
        free(L.pairs[p].at);
    free(L.pairs);
    hash_free(&L.pair_index);
    free(L.heap);
    free(L.grown);
    interner_free(&L.syms);
}

/* ------------------------------------------------------------------------- */
/* Segmenting                                                                 */
/* ------------------------------------------------------------------------- */

/* Applying merges to a unit of m symbols, as subword-nmt does: find the lowest-ranked
 * adjacent pair, merge it everywhere left to right, again until no pair is a merge.
 * Each pair is looked up once, when it forms, and its rank kept. Finding the lowest
 * then takes a pass over the unit per rank merged, which for a short unit (the
 * words of a language) is quickest, and for a long one quadratic: a word of 40,000
 * letters could take 2,000 passes. A unit of more than APPLY_SHORT symbols takes its
 * pairs from a heap instead, O(m log m) in all. Both give the same pieces. */
#define APPLY_SHORT 64

/* The rank of the pair of the symbols text[bound[i]..bound[j]) and
 * text[bound[j]..bound[k]) of s, or -1. */
static int pair_rank(const Bpe *b, const Scratch *s, int i, int j, int k)
{
    const int *bound = s->bound;
    return bpe_rank(b, s->text + bound[i], (size_t)(bound[j] - bound[i]), s->text + bound[j],
                    (size_t)(bound[k] - bound[j]));
}

/* apply_merges for a short unit: passes over the symbols s->text[bound[i]..bound[i+1])
 * of the unit, i < m, compacting bound and rank in place. */
static int apply_merges_short(const Bpe *b, Scratch *s, int m, long *work)
{
    int *bound = s->bound, *rank = s->rank;
    enum { STALE = -2 };   /* a rank to look up again: a symbol of the pair is new */
    for (int i = 0; i + 1 < m; i++)
        rank[i] = pair_rank(b, s, i, i + 1, i + 2);
    rank[m - 1] = -1;
    *work += m;
    while (m > 1) {
        int best = INT_MAX;
        for (int i = 0; i + 1 < m; i++)
            if (rank[i] >= 0 && rank[i] < best)
                best = rank[i];
        *work += m;
        if (best == INT_MAX)
            break;
        /* Dropping boundary i+1 joins symbols i and i+1; skip the pair after a
         * merge, so "a a a" with merge "a a" gives "aa a". */
        int n = 0;
        for (int i = 0; i < m; i++, n++) {
            bound[n] = bound[i];
            rank[n] = rank[i];
            if (i + 1 < m && rank[i] == best) {
                rank[n] = STALE;
                if (n > 0)
                    rank[n - 1] = STALE;
                i++;
            }
        }
        bound[n] = bound[m];
        m = n;
        for (int i = 0; i + 1 < m; i++)
            if (rank[i] == STALE) {
                rank[i] = pair_rank(b, s, i, i + 1, i + 2);
                (*work)++;
            }
        rank[m - 1] = -1;
    }
    return m;
}

/* A heap entry: rank << 32 | symbol index, so that integer order is (rank, index). */
static uint64_t heap_entry(int rank, int i) { return (uint64_t)rank << 32 | (uint32_t)i; }

/* The heap holds up to 3m entries, more than an int counts for a word of a billion
 * letters: sizes and indices are longs. */
static void min_heap_push(uint64_t *heap, long *n, uint64_t e)
{
    long i = (*n)++;
    while (i > 0 && e < heap[(i - 1) / 2]) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = e;
}

static uint64_t min_heap_pop(uint64_t *heap, long *n)
{
    uint64_t top = heap[0], e = heap[--*n];
    long i = 0;
    for (;;) {
        long c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap[c + 1] < heap[c])
            c++;
        if (e <= heap[c])
            break;
        heap[i] = heap[c];
        i = c;
    }
    heap[i] = e;
    return top;
}

/* apply_merges for a long unit. The heap gives the pairs of one rank in order of
 * position: subword-nmt's left-to-right pass. A pair formed during the pass (around
 * a merged symbol, so never of the pass's rank) waits in `pending` until the pass is
 * over, as subword-nmt only sees it in its next round. Symbols keep their index (a
 * merged symbol its left part's) in a linked list; rank[i] is the rank of the pair
 * symbol i starts now, -1 when none or when i is merged away, so a heap entry of
 * another rank is stale (a pair never comes back: its symbols only grow). Each merge
 * looks up two pairs and pushes at most two entries: the heap holds at most 3m. */
static int apply_merges_long(const Bpe *b, Scratch *s, int m, long *work)
{
    scratch_fit_long(s, m);
    int *next = s->next, *prev = s->prev, *rank = s->rank;
    uint64_t *heap = s->heap, *pending = s->pending;
    long n_heap = 0;
    for (int i = 0; i < m; i++) {
        next[i] = i + 1;
        prev[i] = i - 1;
    }
    for (int i = 0; i + 1 < m; i++) {
        rank[i] = pair_rank(b, s, i, i + 1, i + 2);
        if (rank[i] >= 0)
            min_heap_push(heap, &n_heap, heap_entry(rank[i], i));
    }
    rank[m - 1] = -1;
    *work += m + n_heap;
    while (n_heap > 0) {
        int pass = (int)(heap[0] >> 32);
        long n_pending = 0;
        while (n_heap > 0 && (int)(heap[0] >> 32) == pass) {
            int i = (int)(uint32_t)min_heap_pop(heap, &n_heap);
            (*work)++;
            if (rank[i] != pass)
                continue;   /* stale: i was merged since, on one side or the other */
            /* h i j k  ->  h i k */
            int j = next[i], k = next[j], h = prev[i];
            next[i] = k;
            if (k < m)
                prev[k] = i;
            rank[j] = -1;
            rank[i] = k < m ? pair_rank(b, s, i, k, next[k]) : -1;
            if (rank[i] >= 0)
                pending[n_pending++] = heap_entry(rank[i], i);
            if (h >= 0) {
                rank[h] = pair_rank(b, s, h, i, k);
                if (rank[h] >= 0)
                    pending[n_pending++] = heap_entry(rank[h], h);
            }
            *work += 2;
        }
        for (long p = 0; p < n_pending; p++)
            min_heap_push(heap, &n_heap, pending[p]);
        *work += n_pending;
    }
    int n = 0;
    for (int i = 0; i < m; i = next[i])
        s->bound[n++] = s->bound[i];
    s->bound[n] = s->bound[m];
    return n;
}

/* Applies b's merges to the unit in s->text (its bytes, then "</w>") whose m symbols
 * are s->text[bound[i]..bound[i+1]). Returns the new symbol count; bound is updated
 * in place. Adds its steps (lookups, symbols passed over, heap operations) to *work. */
static int apply_merges(const Bpe *b, Scratch *s, int m, long *work)
{
    return m <= APPLY_SHORT ? apply_merges_short(b, s, m, work) : apply_merges_long(b, s, m, work);
}

void subword_segment(const Bpe *b, char *const *tokens, int n, TokenList *out)
{
    long work = 0;
    subword_segment_counted(b, tokens, n, out, &work);
}

void subword_segment_counted(const Bpe *b, char *const *tokens, int n, TokenList *out, long *work)
{
    *out = (TokenList){0};
    int cap = 0;
    Scratch s = {0};
    for (int ti = 0; ti < n; ti++) {
        const char *tok = tokens[ti];
        size_t len = strlen(tok);
        scratch_fit(&s, len);
        int k = split_symbols(b ? b->format : BPE_NMT, tok, len, s.off, s.unspaced);
        *work += k;
        for (int c = 0; c < k;) {
            int end = unit_end(s.unspaced, c, k);
            /* The unit's symbols: its clusters (or code points), "</w>" glued to the
             * last, or with eow_apart a symbol of its own. (subword-nmt leaves a word
             * of one code point alone; merging it could only give it back.) */
            int base = s.off[c], ulen = s.off[end] - base;
            memcpy(s.text, tok + base, (size_t)ulen);
            memcpy(s.text + ulen, END_OF_WORD, END_OF_WORD_LEN + 1);
            int m = end - c;
            for (int i = 0; i < m; i++)
                s.bound[i] = s.off[c + i] - base;
            if (b && b->eow_apart)
                s.bound[m++] = ulen;
            s.bound[m] = ulen + END_OF_WORD_LEN;
            if (b && b->n)
                m = apply_merges(b, &s, m, work);
            if (s.bound[m - 1] == ulen)
                m--;             /* a bare "</w>" is dropped */
            s.bound[m] = ulen;   /* "</w>" stripped */
            for (int i = 0; i < m; i++) {
                int last = end == k && i == m - 1;   /* of the token: the only piece without "@@" */
                list_push(out, &cap, s.text + s.bound[i], (size_t)(s.bound[i + 1] - s.bound[i]), !last);
            }
            c = end;
        }
    }
    scratch_free(&s);
}

/* ------------------------------------------------------------------------- */
/* Joining                                                                    */
/* ------------------------------------------------------------------------- */

int subword_continues(const char *piece)
{
    size_t pl = strlen(piece);
    return pl >= JOINER_LEN && memcmp(piece + pl - JOINER_LEN, SUBWORD_JOINER, JOINER_LEN) == 0;
}

void subword_join(char *const *pieces, int n, TokenList *out)
{
    *out = (TokenList){0};
    int cap = 0;
    char *word = NULL;
    size_t len = 0, word_cap = 0;
    for (int i = 0; i < n; i++) {
        size_t pl = strlen(pieces[i]);
        int joins = subword_continues(pieces[i]);
        if (joins)
            pl -= JOINER_LEN;
        if (len + pl + 1 > word_cap) {
            word_cap = 2 * (len + pl + 1);
            word = xrealloc(word, word_cap);
        }
        memcpy(word + len, pieces[i], pl);
        len += pl;
        if (!joins && len > 0) {
            list_push(out, &cap, word, len, 0);
            len = 0;
        }
    }
    if (len > 0)   /* the last piece ended in "@@" */
        list_push(out, &cap, word, len, 0);
    free(word);
}

/* ------------------------------------------------------------------------- */
/* Codes text                                                                 */
/* ------------------------------------------------------------------------- */

#define CODES_HEADER "#version: 0.2\n"

/* Copies s to *at and advances it. */
static void put(char **at, const char *s)
{
    size_t n = strlen(s);
    memcpy(*at, s, n);
    *at += n;
}

int bpe_format_from_name(const char *name)
{
    if (!strcmp(name, "nmt")) return BPE_NMT;
    if (!strcmp(name, "subword-nmt")) return BPE_SUBWORD_NMT;
    return -1;
}

char *bpe_to_text(const Bpe *b)
{
    const char *header = b->eow_apart ? "" : CODES_HEADER;   /* version 0.1 has none */
    size_t len = strlen(header);
    for (int i = 0; i < b->n; i++)
        len += strlen(b->left[i]) + 1 + strlen(b->right[i]) + 1;
    char *text = xmalloc(len + 1), *at = text;
    put(&at, header);
    for (int i = 0; i < b->n; i++) {
        put(&at, b->left[i]);
        put(&at, " ");
        put(&at, b->right[i]);
        put(&at, "\n");
    }
    *at = '\0';
    return text;
}

/* The first occurrence of "</w>" in s[0..len), or NULL. */
static const char *find_end_of_word(const char *s, size_t len)
{
    for (size_t i = 0; i + END_OF_WORD_LEN <= len; i++)
        if (memcmp(s + i, END_OF_WORD, END_OF_WORD_LEN) == 0)
            return s + i;
    return NULL;
}

/* The first error in s[0..len): invalid UTF-8 or a NUL byte (also checks whitespace
 * and control characters unless `any_space`). Returns 0 or -1. */
static int check_symbols(const char *s, size_t len, int any_space, const char *name, int line, Error *err)
{
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(len - at), &cp);
        if (step <= 0)
            return error_set(err, "%s:%d: invalid UTF-8", name, line);
        if (cp == 0)
            return error_set(err, "%s:%d: NUL byte", name, line);
        /* Symbols come from tokens, which hold no whitespace or control characters;
         * a CR or tab here would not survive being written out and read back. */
        if (!any_space && cp != ' ' && text_is_space(cp))
            return error_set(err, "%s:%d: whitespace or a control character (U+%04X) in a symbol", name, line,
                             (unsigned)cp);
        at += (size_t)step;
    }
    return 0;
}

/* Checks one merge line s[0..len) (no line end) and adds it to b. */
static int parse_merge(Bpe *b, const char *s, size_t len, const char *name, int line, const int *merge_line, Error *err)
{
    if (check_symbols(s, len, 0, name, line, err))
        return -1;
    const char *space = memchr(s, ' ', len);
    if (!space || memchr(space + 1, ' ', len - (size_t)(space + 1 - s)))
        return error_set(err, "%s:%d: expected two symbols separated by one space", name, line);
    const char *l = s, *r = space + 1;
    size_t ll = (size_t)(space - s), rl = len - ll - 1;
    if (ll == 0 || rl == 0)
        return error_set(err, "%s:%d: empty symbol", name, line);
    if (rl == END_OF_WORD_LEN && memcmp(r, END_OF_WORD, END_OF_WORD_LEN) == 0)
        return error_set(err, "%s:%d: \"</w>\" on its own is subword-nmt 0.1's convention; "
                         "expected version 0.2 codes (\"</w>\" ends the last symbol)", name, line);
    const char *eow = find_end_of_word(r, rl);
    if (find_end_of_word(l, ll) || (eow && eow != r + rl - END_OF_WORD_LEN))
        return error_set(err, "%s:%d: \"</w>\" may only end the right symbol", name, line);
    int id = bpe_add(b, l, ll, r, rl);
    if (id < 0)
        return error_set(err, "%s:%d: repeated merge \"%.*s %.*s\" (first on line %d)", name, line,
                         (int)(ll > 100 ? 100 : ll), l, (int)(rl > 100 ? 100 : rl), r, merge_line[-1 - id]);
    return 0;
}

/* The first line of subword-nmt codes, "#version: V" (n bytes at s): sets b->eow_apart
 * for 0.1. Like subword-nmt, V is the line's last field with trailing ".0" groups
 * dropped ("0.2.0" is 0.2). */
static int subword_nmt_version(Bpe *b, const char *s, size_t n, const char *name, Error *err)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    size_t start = n;
    while (start > 0 && s[start - 1] != ' ' && s[start - 1] != '\t')
        start--;
    const char *v = s + start;
    size_t vn = n - start;
    if (vn == 4 && memcmp(v, "byte", 4) == 0)
        return error_set(err, "%s:1: byte-level codes (subword-nmt learn-bpe --byte) are not supported", name);
    for (;;) {   /* drop a trailing "." followed only by zeros, again and again */
        size_t dot = vn;
        while (dot > 0 && v[dot - 1] == '0')
            dot--;
        if (dot == vn || dot == 0 || v[dot - 1] != '.')
            break;
        vn = dot - 1;
    }
    if (vn == 3 && (memcmp(v, "0.1", 3) == 0 || memcmp(v, "0.2", 3) == 0)) {
        b->eow_apart = v[2] == '1';
        return 0;
    }
    return error_set(err, "%s:1: codes version \"%.*s\"; subword-nmt's codes are version 0.1 or 0.2", name,
                     (int)(vn > 20 ? 20 : vn), v);
}

/* Codes text as subword-nmt's apply_bpe.py reads it (subword.h). */
static int subword_nmt_from_text(Bpe *b, const char *text, size_t len, const char *name, Error *err)
{
    b->format = BPE_SUBWORD_NMT;
    b->eow_apart = 1;   /* without a "#version" line */
    int line = 0, blank_line = 0;   /* the first blank line since the last merge */
    for (size_t at = 0; at < len;) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + (nl ? 1 : 0);
        line++;
        if (line == 1 && n >= 9 && memcmp(s, "#version:", 9) == 0) {
            if (subword_nmt_version(b, s, n, name, err))
                return -1;
            continue;
        }
        while (n > 0 && (*s == ' ' || *s == '\r')) {
            s++;
            n--;
        }
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\r'))
            n--;
        if (n == 0) {   /* an error unless only blank lines follow */
            if (!blank_line)
                blank_line = line;
            continue;
        }
        if (blank_line)
            return error_set(err, "%s:%d: expected two symbols separated by one space", name, blank_line);
        if (check_symbols(s, n, 1, name, line, err))
            return -1;
        const char *space = memchr(s, ' ', n);
        if (!space || memchr(space + 1, ' ', n - (size_t)(space + 1 - s)))
            return error_set(err, "%s:%d: expected two symbols separated by one space", name, line);
        size_t ll = (size_t)(space - s);
        bpe_add(b, s, ll, space + 1, n - ll - 1);   /* a repeat keeps its first rank */
    }
    return 0;
}

int bpe_from_text_format(Bpe *b, const char *text, size_t len, BpeFormat format, const char *name, Error *err)
{
    if (format == BPE_NMT)
        return bpe_from_text(b, text, len, name, err);
    *b = (Bpe){0};
    if (subword_nmt_from_text(b, text, len, name, err) == 0)
        return 0;
    bpe_free(b);
    return -1;
}

int bpe_from_text(Bpe *b, const char *text, size_t len, const char *name, Error *err)
{
    *b = (Bpe){0};
    int *merge_line = NULL;   /* merge index -> line number, for repeats */
    int cap_lines = 0;
    int line = 0, blank_line = 0;   /* the first blank line since the last merge */
    for (size_t at = 0; at < len;) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + (nl ? 1 : 0);
        line++;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        if (line == 1 && n >= 8 && memcmp(s, "#version", 8) == 0) {
            const char *v = s + 8;
            size_t vn = n - 8;
            if (vn > 0 && *v == ':') { v++; vn--; }
            while (vn > 0 && (*v == ' ' || *v == '\t')) { v++; vn--; }
            while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;
            if (vn != 3 || memcmp(v, "0.2", 3) != 0) {
                error_set(err, "%s:1: codes version \"%.*s\"; only 0.2 is supported", name, (int)(vn > 20 ? 20 : vn), v);
                goto fail;
            }
            continue;
        }
        if (n == 0) {
            if (!blank_line)
                blank_line = line;
            continue;
        }
        if (blank_line) {
            error_set(err, "%s:%d: expected two symbols separated by one space", name, blank_line);
            goto fail;
        }
        if (b->n == cap_lines) {
            cap_lines = cap_lines ? 2 * cap_lines : 256;
            merge_line = xrealloc(merge_line, (size_t)cap_lines * sizeof *merge_line);
        }
        merge_line[b->n] = line;
        if (parse_merge(b, s, n, name, line, merge_line, err) != 0)
            goto fail;
    }
    free(merge_line);
    return 0;
fail:
    free(merge_line);
    bpe_free(b);
    return -1;
}
