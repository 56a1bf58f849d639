/* bpe_apply.c — words into pieces by a Bpe's merges (or into characters), and pieces
 * back into words; see subword.h (subword_segment, subword_join). */
#include "text/bpe_core.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
