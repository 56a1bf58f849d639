/* sample.c — the support of a sampling step and one draw from it (sample.h). */
#include "decode/sample.h"

#include <math.h>
#include <stdlib.h>

#include "base/hash.h"  /* defines: hash_mix64 */
#include "text/vocab.h" /* defines: VOCAB_PAD, VOCAB_SOS */

void sample_scratch_free(SampleScratch *sc)
{
    free(sc->entry);
    free(sc->ids);
    free(sc->prob);
    *sc = (SampleScratch){0};
}

static void scratch_grow(SampleScratch *sc, int V)
{
    if (V <= sc->cap) return;
    sample_scratch_free(sc);
    sc->entry = xmalloc(sizeof(SampleEntry) * (size_t)V);
    sc->ids = xmalloc(sizeof(int) * (size_t)V);
    sc->prob = xmalloc(sizeof(double) * (size_t)V);
    sc->cap = V;
}

/* a ranks before b: the larger logit, or on a tie the lower id. */
static int ranks_before(SampleEntry a, SampleEntry b)
{
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

/* Heap of n entries in which the parent ranks after (worst_on_top) or before its
 * children: sift entry i down. */
static void sift_down(SampleEntry *h, int n, int i, int worst_on_top)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, top = i;
        if (l < n && ranks_before(h[top], h[l]) == worst_on_top) top = l;
        if (r < n && ranks_before(h[top], h[r]) == worst_on_top) top = r;
        if (top == i) return;
        SampleEntry t = h[i];
        h[i] = h[top];
        h[top] = t;
        i = top;
    }
}

static void heapify(SampleEntry *h, int n, int worst_on_top)
{
    for (int i = n / 2 - 1; i >= 0; i--)
        sift_down(h, n, i, worst_on_top);
}

/* The k best of e[0..n) into e[0..k), best first: a heap of the k best so far with the
 * worst on top, O(n log k). */
static void keep_top_k(SampleEntry *e, int n, int k)
{
    heapify(e, k, 1);
    for (int i = k; i < n; i++)
        if (ranks_before(e[i], e[0])) {
            e[0] = e[i];
            sift_down(e, k, 0, 1);
        }
    /* Heap sort: the worst goes to the end each time. */
    for (int m = k - 1; m > 0; m--) {
        SampleEntry t = e[0];
        e[0] = e[m];
        e[m] = t;
        sift_down(e, m, 0, 1);
    }
}

/* The nucleus of e[0..n): puts its words first and returns how many. The
 * probabilities are exp((logit - top) / T) / z. Heap with the best on top, popped until
 * the words taken reach p: O(n + m log n) for a nucleus of m words. */
static int keep_nucleus(SampleEntry *e, int n, double top, double T, double z, double p)
{
    heapify(e, n, 0);
    double reached = 0;
    int m = 0;
    while (m < n && reached < p * z) {
        SampleEntry best = e[0];
        e[0] = e[n - 1 - m];
        sift_down(e, n - 1 - m, 0, 0);
        e[n - 1 - m] = best;  /* the popped entries pile up at the end */
        reached += exp(((double)best.logit - top) / T);
        m++;
    }
    for (int i = 0; i < m; i++)
        e[i] = e[n - m + i];
    return m;
}

static int by_id(const void *a, const void *b)
{
    int x = ((const SampleEntry *)a)->id, y = ((const SampleEntry *)b)->id;
    return (x > y) - (x < y);
}

int sample_support(const float *logits, int V, const Sampling *s, SampleScratch *sc)
{
    scratch_grow(sc, V);
    SampleEntry *e = sc->entry;
    double T = s->temperature > 0 ? s->temperature : 1.0;
    int n = 0;
    for (int w = 0; w < V; w++)
        if (w != VOCAB_PAD && w != VOCAB_SOS) e[n++] = (SampleEntry){logits[w], w};
    if (n == 0) return 0;
    int cut = 0;
    if (s->top_k > 0 && s->top_k < n) {
        keep_top_k(e, n, s->top_k);
        n = s->top_k;
        cut = 1;
    }
    double top = e[0].logit;
    for (int i = 1; i < n; i++)
        if (e[i].logit > top) top = e[i].logit;
    double z = 0;
    for (int i = 0; i < n; i++)
        z += exp(((double)e[i].logit - top) / T);
    if (s->top_p > 0 && s->top_p < 1) {
        n = keep_nucleus(e, n, top, T, z, s->top_p);
        cut = 1;
        z = 0;
        for (int i = 0; i < n; i++)
            z += exp(((double)e[i].logit - top) / T);
    }
    if (cut) qsort(e, (size_t)n, sizeof *e, by_id);
    for (int i = 0; i < n; i++) {
        sc->ids[i] = e[i].id;
        sc->prob[i] = exp(((double)e[i].logit - top) / T) / z;
    }
    return n;
}

int sample_word(const float *logits, int V, const Sampling *s, Rng *rng, SampleScratch *sc)
{
    int n = sample_support(logits, V, s, sc);
    double u = rng_next(rng) / 4294967296.0, reached = 0;  /* [0, 1) */
    for (int i = 0; i < n - 1; i++) {
        reached += sc->prob[i];
        if (u < reached) return sc->ids[i];
    }
    return n > 0 ? sc->ids[n - 1] : VOCAB_EOS;
}

void sample_stream(Rng *rng, uint64_t seed, long sentence, int k)
{
    uint64_t key = hash_mix64(hash_mix64(seed ^ 0x73616d706c65ull) + (uint64_t)sentence);
    rng_seed(rng, hash_mix64(key + (uint64_t)k * 0x9e3779b97f4a7c15ull));
}
