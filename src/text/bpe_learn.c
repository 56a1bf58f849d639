/* bpe_learn.c — learning BPE merges from word counts; see subword.h (bpe_learn,
 * bpe_learn_format). */
#include "text/bpe_core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/hash.h"   // defines: fnv1a, FNV1A_BASIS, hash_mix64, hash_find, hash_find_or_add

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
    return span_is(((const Interner *)interner)->str[id], sp->s, sp->len);
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
