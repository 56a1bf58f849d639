/* test_subword_reference.c — BPE learning and applying (src/text/bpe_learn.c,
 * bpe_apply.c) against a brute-force reference of subword-nmt's learn and apply, on
 * random corpora in both codes formats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/subword.h"   // defines: Bpe, bpe_learn_format, subword_segment, bpe_to_text, bpe_from_text

/* ------------------------------------------------------------------------- */
/* A brute-force reference: subword-nmt's learn and apply as its papers and   */
/* scripts state them, recounting everything at every step.                   */
/* ------------------------------------------------------------------------- */

/* The reference's alphabet: letters of one code point and one grapheme cluster each,
 * and "我", which is written without spaces, so under BPE_NMT it is a unit of its own
 * and cuts a word into units; BPE_SUBWORD_NMT keeps the word one unit of code points. */
static const char *const ref_letters[] = {"a", "b", "c", "d", "e", "é", "ж", "我"};

/* A unit's symbols, "</w>" glued to the last, and how often it occurs. */
typedef struct {
    char **sym;
    int n;
    long count;
} RefUnit;

/* The units of word into units[*n..]; returns how many it added. */
static int ref_units(const char *word, BpeFormat format, long count, RefUnit *units, int *n)
{
    int added = 0;
    RefUnit *u = NULL;
    for (const char *p = word; *p;) {
        int len = (unsigned char)*p < 0x80 ? 1 : (unsigned char)*p < 0xE0 ? 2 : (unsigned char)*p < 0xF0 ? 3 : 4;
        int unspaced = format == BPE_NMT && !strncmp(p, "我", (size_t)len);
        if (!u || unspaced || (format == BPE_NMT && !strcmp(u->sym[u->n - 1], "我"))) {
            u = &units[(*n)++];
            *u = (RefUnit){xmalloc(strlen(word) * sizeof(char *)), 0, count};
            added++;
        }
        u->sym[u->n] = xmalloc((size_t)len + 1);
        memcpy(u->sym[u->n], p, (size_t)len);
        u->sym[u->n++][len] = '\0';
        p += len;
    }
    for (int i = *n - added; i < *n; i++) {   /* "</w>" ends every unit */
        RefUnit *v = &units[i];
        char *last = xmalloc(strlen(v->sym[v->n - 1]) + 5);
        sprintf(last, "%s</w>", v->sym[v->n - 1]);
        free(v->sym[v->n - 1]);
        v->sym[v->n - 1] = last;
    }
    return added;
}

static void ref_units_free(RefUnit *units, int n)
{
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < units[i].n; j++)
            free(units[i].sym[j]);
        free(units[i].sym);
    }
}

/* Merges every (l, r) in u, left to right: "a a a" with "a a" gives "aa a". */
static void ref_merge(RefUnit *u, const char *l, const char *r)
{
    int n = 0;
    for (int i = 0; i < u->n; i++) {
        if (i + 1 < u->n && !strcmp(u->sym[i], l) && !strcmp(u->sym[i + 1], r)) {
            char *joined = xmalloc(strlen(l) + strlen(r) + 1);
            sprintf(joined, "%s%s", l, r);
            free(u->sym[i]);
            free(u->sym[i + 1]);
            u->sym[n++] = joined;
            i++;
        } else {
            u->sym[n++] = u->sym[i];
        }
    }
    u->n = n;
}

typedef struct {
    const char *l, *r;
    long count;
} RefPair;

static int ref_pair_order(const void *a, const void *b)
{
    const RefPair *x = a, *y = b;
    int c = strcmp(x->l, y->l);
    return c ? c : strcmp(x->r, y->r);
}

/* The merges bpe_learn_format must learn, into left[] and right[] (malloc'd strings);
 * returns how many. Every step counts every adjacent pair of every unit afresh. */
static int ref_learn(char *const *words, const long *counts, int n_words, int n_merges, BpeFormat format,
                     char **left, char **right)
{
    int n_units = 0, total = 0, n = 0;
    for (int i = 0; i < n_words; i++)
        total += (int)strlen(words[i]);
    RefUnit *units = xmalloc((size_t)(total + 1) * sizeof *units);
    for (int i = 0; i < n_words; i++)
        if (counts[i] > 0 && strlen(words[i]) <= BPE_MAX_WORD_BYTES)
            ref_units(words[i], format, counts[i], units, &n_units);
    RefPair *pairs = xmalloc((size_t)(total + 1) * sizeof *pairs);
    while (n < n_merges) {
        int n_pairs = 0;
        for (int u = 0; u < n_units; u++)
            for (int i = 0; i + 1 < units[u].n; i++)
                pairs[n_pairs++] = (RefPair){units[u].sym[i], units[u].sym[i + 1], units[u].count};
        qsort(pairs, (size_t)n_pairs, sizeof *pairs, ref_pair_order);
        /* The most frequent; ties to the least pair (nmt) or the greatest (subword-nmt). */
        long best = 0;
        const char *l = NULL, *r = NULL;
        for (int i = 0; i < n_pairs;) {
            int j = i;
            long c = 0;
            for (; j < n_pairs && !ref_pair_order(&pairs[i], &pairs[j]); j++)
                c += pairs[j].count;
            if (c > best || (c == best && format == BPE_SUBWORD_NMT)) {
                best = c;
                l = pairs[i].l;
                r = pairs[i].r;
            }
            i = j;
        }
        if (best < 2)
            break;
        char *lc = strdup(l), *rc = strdup(r);
        int repeat = 0;
        for (int k = 0; k < n; k++)
            repeat |= !strcmp(left[k], lc) && !strcmp(right[k], rc);
        for (int u = 0; u < n_units; u++)
            ref_merge(&units[u], lc, rc);
        if (repeat) {   /* merged again, listed once (subword.h) */
            free(lc);
            free(rc);
        } else {
            left[n] = lc;
            right[n++] = rc;
        }
    }
    free(pairs);
    ref_units_free(units, n_units);
    free(units);
    return n;
}

/* The pieces subword_segment must give for word under the merges left/right[0..n):
 * in each unit, the lowest-ranked adjacent pair merged everywhere, again and again;
 * "</w>" cut off; "@@" on every piece but the word's last. Into out (a new list). */
static void ref_segment(char *const *left, char *const *right, int n, const char *word, BpeFormat format, TokenList *out)
{
    RefUnit *units = xmalloc((strlen(word) + 1) * sizeof *units);
    int n_units = 0, cap = 0;
    ref_units(word, format, 1, units, &n_units);
    *out = (TokenList){0};
    for (int u = 0; u < n_units; u++) {
        RefUnit *un = &units[u];
        for (;;) {
            int best = n;
            for (int i = 0; i + 1 < un->n; i++)
                for (int k = 0; k < best; k++)
                    if (!strcmp(un->sym[i], left[k]) && !strcmp(un->sym[i + 1], right[k]))
                        best = k;
            if (best == n)
                break;
            ref_merge(un, left[best], right[best]);
        }
        un->sym[un->n - 1][strlen(un->sym[un->n - 1]) - 4] = '\0';
        for (int i = 0; i < un->n; i++) {
            if (out->n == cap) {
                cap = cap ? 2 * cap : 16;
                out->tokens = xrealloc(out->tokens, (size_t)cap * sizeof *out->tokens);
            }
            int last = u == n_units - 1 && i == un->n - 1;
            char *piece = xmalloc(strlen(un->sym[i]) + 3);
            sprintf(piece, "%s%s", un->sym[i], last ? "" : "@@");
            out->tokens[out->n++] = piece;
        }
    }
    ref_units_free(units, n_units);
    free(units);
}

/* A word of len letters from the first `letters` of ref_letters. */
static char *ref_word(Rng *rng, int len, int letters)
{
    char *w = xmalloc((size_t)len * 4 + 1), *at = w;
    for (int i = 0; i < len; i++) {
        const char *c = ref_letters[rng_below(rng, (uint32_t)letters)];
        size_t cl = strlen(c);
        memcpy(at, c, cl);
        at += cl;
    }
    *at = '\0';
    return w;
}

/* The learner and the segmenter against the reference on random corpora: small
 * alphabets (pairs collide, counts tie, "a a a" runs overlap), repeated words, both
 * formats, and words past APPLY_SHORT (64 symbols), where segmenting takes its pairs
 * from a heap. The codes are also applied in a shuffled order, read back as text, so
 * that ranks are not the order the pairs were learned in. */
static void test_against_reference(void)
{
    enum { WORDS = 40, FRESH = 20, MAX_MERGES = 120 };
    int corpora = 0, merges_same = 0, pieces_same = 0, pieces_checked = 0, merges_total = 0;
    for (int seed = 1; seed <= 40; seed++) {
        Rng rng;
        rng_seed(&rng, (uint64_t)seed);
        BpeFormat format = seed % 2 ? BPE_NMT : BPE_SUBWORD_NMT;
        int letters = 2 + (int)rng_below(&rng, 7);   /* "我" only when letters is 8 */
        char *words[WORDS + FRESH];
        long counts[WORDS];
        for (int i = 0; i < WORDS + FRESH; i++) {
            int len = i % 10 == 9 ? 40 + (int)rng_below(&rng, 110) : 1 + (int)rng_below(&rng, 10);
            words[i] = i > 0 && i < WORDS && rng_below(&rng, 4) == 0 ? strdup(words[i - 1]) : ref_word(&rng, len, letters);
            if (i < WORDS)
                counts[i] = (long)rng_below(&rng, 5);   /* 0: ignored */
        }
        int n_merges = 1 + (int)rng_below(&rng, MAX_MERGES);
        char *left[MAX_MERGES], *right[MAX_MERGES];
        int n = ref_learn(words, counts, WORDS, n_merges, format, left, right);
        Bpe b;
        bpe_learn_format(&b, words, counts, WORDS, n_merges, format, NULL);
        int same = b.n == n;
        for (int k = 0; same && k < n; k++)
            same = !strcmp(b.left[k], left[k]) && !strcmp(b.right[k], right[k]);
        if (!same)
            fprintf(stderr, "  seed %d: %d merges, the reference %d (first [%s %s])\n", seed, b.n, n,
                    b.n ? b.left[0] : "-", b.n ? b.right[0] : "-");
        corpora++;
        merges_same += same;
        merges_total += n;

        /* The learned order, then shuffled and read back from text. */
        Bpe shuffled = {0};
        char *text = xmalloc(64 + (size_t)n * 2 * (4 * 150 + 8)), *at = text;
        at += sprintf(at, "#version: 0.2\n");
        int order[MAX_MERGES];
        for (int k = 0; k < n; k++)
            order[k] = k;
        rng_shuffle(&rng, order, n);
        char *sl[MAX_MERGES], *sr[MAX_MERGES];
        for (int k = 0; k < n; k++) {
            sl[k] = left[order[k]];
            sr[k] = right[order[k]];
            at += sprintf(at, "%s %s\n", sl[k], sr[k]);
        }
        Error err;
        CHECK(bpe_from_text_format(&shuffled, text, strlen(text), format, "codes", &err) == 0,
              "reference: shuffled codes read back");
        for (int pass = 0; pass < 2; pass++) {
            const Bpe *codes = pass ? &shuffled : &b;
            for (int i = 0; i < WORDS + FRESH; i++) {
                TokenList got, want;
                subword_segment(codes, &words[i], 1, &got);
                ref_segment(pass ? sl : left, pass ? sr : right, n, words[i], format, &want);
                int ok = got.n == want.n;
                for (int k = 0; ok && k < got.n; k++)
                    ok = !strcmp(got.tokens[k], want.tokens[k]);
                if (!ok)
                    fprintf(stderr, "  seed %d, %s codes: [%s] in %d pieces, the reference %d\n", seed,
                            pass ? "shuffled" : "learned", words[i], got.n, want.n);
                pieces_same += ok;
                pieces_checked++;
                token_list_free(&got);
                token_list_free(&want);
            }
        }
        free(text);
        bpe_free(&shuffled);
        bpe_free(&b);
        for (int k = 0; k < n; k++) {
            free(left[k]);
            free(right[k]);
        }
        for (int i = 0; i < WORDS + FRESH; i++)
            free(words[i]);
    }
    CHECK(merges_same == corpora, "reference: the same merges, in the same order, on every random corpus");
    CHECK(merges_total > 40 * 30, "reference: the corpora make many merges");
    CHECK(pieces_same == pieces_checked, "reference: the same pieces for every word, learned and shuffled codes");
}

int main(void)
{
    test_against_reference();
    return check_report("test_subword_reference");
}
