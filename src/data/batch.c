#include "data/batch.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"  /* defines: xrealloc, Rng, rng_shuffle */
#include "text/vocab.h" /* defines: VOCAB_PAD, VOCAB_SOS, VOCAB_EOS */

static void batch_reserve(Batch *batch, int entries)
{
    if (entries <= batch->cap) return;
    batch->cap = entries;
    batch->src = xrealloc(batch->src, sizeof(int) * entries);
    batch->mask = xrealloc(batch->mask, sizeof(float) * entries);
    batch->tgt_in = xrealloc(batch->tgt_in, sizeof(int) * entries);
    batch->tgt_out = xrealloc(batch->tgt_out, sizeof(int) * entries);
    batch->label = xrealloc(batch->label, sizeof(int) * entries);
}

void batch_fill_source(Batch *batch, int *const *src, const int *src_len, int n)
{
    batch->tgt_off = NULL;
    batch->src_off = batch->enc_row = batch->enc_src = NULL;
    int S = 1;
    for (int i = 0; i < n; i++)
        if (src_len[i] > S) S = src_len[i];
    batch_reserve(batch, S * n);
    batch->B = n;
    batch->S = S;
    batch->T = 0;
    batch->n_tokens = 0;
    for (int t = 0; t < S; t++)
        for (int b = 0; b < n; b++) {
            int real = t < src_len[b];
            batch->src[t * n + b] = real ? src[b][t] : VOCAB_PAD;
            batch->mask[t * n + b] = real ? 1.0f : 0.0f;
        }
}

void batch_fill(Batch *batch, const Example *ex, const int *idx, int n)
{
    batch->tgt_off = NULL;
    batch->src_off = batch->enc_row = batch->enc_src = NULL;
    int S = 1, T = 1;
    for (int i = 0; i < n; i++) {
        const Example *e = &ex[idx[i]];
        if (e->src_len > S) S = e->src_len;
        if (e->tgt_len + 1 > T) T = e->tgt_len + 1;
    }
    batch_reserve(batch, (S > T ? S : T) * n);
    batch->B = n;
    batch->S = S;
    batch->T = T;
    batch->n_tokens = 0;
    for (int b = 0; b < n; b++) {
        const Example *e = &ex[idx[b]];
        for (int t = 0; t < S; t++) {
            int real = t < e->src_len;
            batch->src[t * n + b] = real ? e->src[t] : VOCAB_PAD;
            batch->mask[t * n + b] = real ? 1.0f : 0.0f;
        }
        for (int t = 0; t < T; t++) {
            batch->tgt_in[t * n + b] = t == 0 ? VOCAB_SOS : t <= e->tgt_len ? e->tgt[t - 1] : VOCAB_PAD;
            batch->tgt_out[t * n + b] = t < e->tgt_len ? e->tgt[t] : t == e->tgt_len ? VOCAB_EOS : VOCAB_PAD;
        }
        batch->label[b] = e->label;
        batch->n_tokens += e->tgt_len + 1;
    }
}

/* Orders 64-bit keys ascending: the callers put what they sort by in the high 32 bits
 * and the position in the low ones, so that ties keep their order. */
static int compare_keys(const void *a, const void *b);

/* The source side of a filled batch in packseq.h's layout: encoder rows by decreasing
 * source length (ties in batch order), each position's live rows together. */
static void pack_source(Batch *batch, const Example *ex, const int *rows)
{
    int B = batch->B, S = batch->S, need = S + 1 + B + S * B;
    if (need > batch->enc_cap) {
        batch->enc_cap = need;
        batch->enc_mem = xrealloc(batch->enc_mem, sizeof(int) * need);
    }
    int *off = batch->enc_mem, *order = off + S + 1, *ids = order + B;
    long long *keys = xmalloc(sizeof(long long) * B);
    for (int b = 0; b < B; b++)
        keys[b] = ((long long)(0x7fffffff - ex[rows[b]].src_len) << 32) | b;
    qsort(keys, B, sizeof *keys, compare_keys);
    for (int i = 0; i < B; i++)
        order[i] = (int)(keys[i] & 0xffffffff);
    free(keys);
    off[0] = 0;
    int live = B;
    for (int t = 0; t < S; t++) {
        while (live > 0 && ex[rows[order[live - 1]]].src_len <= t)
            live--;
        off[t + 1] = off[t] + live;
        for (int i = 0; i < live; i++)
            ids[off[t] + i] = batch->src[t * B + order[i]];
    }
    batch->src_off = off;
    batch->enc_row = order;
    batch->enc_src = ids;
}

void batch_fill_packed(Batch *batch, const Example *ex, const int *idx, int n)
{
    /* The rows, longest target first: keys (INT_MAX - length, position). */
    long long *keys = xmalloc(sizeof(long long) * (n ? n : 1));
    for (int i = 0; i < n; i++)
        keys[i] = ((long long)(0x7fffffff - ex[idx[i]].tgt_len) << 32) | i;
    qsort(keys, n, sizeof *keys, compare_keys);
    int *rows = xmalloc(sizeof(int) * (n ? n : 1));
    for (int i = 0; i < n; i++)
        rows[i] = idx[keys[i] & 0xffffffff];
    free(keys);
    batch_fill(batch, ex, rows, n);   /* the source side and S, T, n_tokens as usual */
    int T = batch->T;
    if (T + 1 > batch->off_cap) {
        batch->off_cap = T + 1;
        batch->tgt_off = NULL;
        batch->tgt_off_mem = xrealloc(batch->tgt_off_mem, sizeof(int) * (T + 1));
    }
    int *off = batch->tgt_off_mem;
    /* Step t has the rows whose target (with <eos>) is longer than t: a prefix. */
    off[0] = 0;
    int live = n;
    for (int t = 0; t < T; t++) {
        while (live > 0 && ex[rows[live - 1]].tgt_len + 1 <= t)
            live--;
        off[t + 1] = off[t] + live;
        for (int b = 0; b < live; b++) {
            const Example *e = &ex[rows[b]];
            batch->tgt_in[off[t] + b] = t == 0 ? VOCAB_SOS : e->tgt[t - 1];
            batch->tgt_out[off[t] + b] = t < e->tgt_len ? e->tgt[t] : VOCAB_EOS;
        }
    }
    batch->tgt_off = off;
    pack_source(batch, ex, rows);
    free(rows);
}

void batch_free(Batch *batch)
{
    free(batch->tgt_off_mem);
    free(batch->enc_mem);
    free(batch->src);
    free(batch->mask);
    free(batch->tgt_in);
    free(batch->tgt_out);
    free(batch->label);
    memset(batch, 0, sizeof *batch);
}

/* Sorts by (target length, source length), ties by position, using one 64-bit key per
 * example: no comparison context needed. */
static int compare_keys(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

void sort_by_length(int *order, const Example *ex, int n)
{
    if (n <= 1) return;
    long long *keys = xmalloc(sizeof(long long) * n);
    for (int i = 0; i < n; i++) {
        const Example *e = &ex[order[i]];
        keys[i] = ((long long)(e->tgt_len * 4096 + e->src_len) << 32) | ((long long)i << 0);
    }
    qsort(keys, n, sizeof *keys, compare_keys);
    int *copy = xmalloc(sizeof(int) * n);
    memcpy(copy, order, sizeof(int) * n);
    for (int i = 0; i < n; i++)
        order[i] = copy[keys[i] & 0xffffffff];
    free(copy);
    free(keys);
}

void batch_shuffled_order(int *order, int n, Rng *rng)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    rng_shuffle(rng, order, n);
}

void batch_epoch_order(int *order, const Example *ex, int n, int batch_size, Rng *rng)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    rng_shuffle(rng, order, n);
    int window = batch_size * 50;
    for (int start = 0; start < n; start += window)
        sort_by_length(order + start, ex, n - start < window ? n - start : window);
    /* Shuffle whole batches so that lengths do not rise steadily within a window;
     * a partial last batch stays last. */
    int full = n / batch_size;
    int *perm = xmalloc(sizeof(int) * (full ? full : 1));
    for (int i = 0; i < full; i++)
        perm[i] = i;
    rng_shuffle(rng, perm, full);
    int *copy = xmalloc(sizeof(int) * (n ? n : 1));
    memcpy(copy, order, sizeof(int) * n);
    for (int i = 0; i < full; i++)
        memcpy(order + (long)i * batch_size, copy + (long)perm[i] * batch_size, sizeof(int) * batch_size);
    free(copy);
    free(perm);
}
