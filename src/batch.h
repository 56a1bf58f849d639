/* batch.h — sentence pairs as token ids, and padded, time-major mini-batches of them.
 *
 * An Example is one sentence pair after tokenising and vocabulary lookup. A Batch lays
 * B examples out for the model:
 *   src     (S, B)  source ids, VOCAB_PAD after each sentence's end
 *   mask    (S, B)  1.0 on real source tokens, 0.0 on padding
 *   tgt_in  (T, B)  <sos> y_1 ... y_n, then padding
 *   tgt_out (T, B)  y_1 ... y_n <eos>, then padding   (T = longest target + 1)
 */
#ifndef BATCH_H
#define BATCH_H

#include "util.h" /* defines: Rng */

typedef struct {
    int *src, *tgt;     /* token ids, no specials */
    int src_len, tgt_len;
} Example;

typedef struct {
    int B, S, T;
    int *src;
    float *mask;
    int *tgt_in, *tgt_out;
    int n_tokens;       /* non-pad entries of tgt_out: the loss's denominator */
    int cap;            /* allocated entries per array (grows, never shrinks) */
} Batch;

/* Fill a batch from examples ex[idx[0..n-1]]. Examples with an empty source are not allowed. */
void batch_fill(Batch *batch, const Example *ex, const int *idx, int n);
/* Source side only (for translation): tgt arrays are left with T = 0. */
void batch_fill_source(Batch *batch, int *const *src, const int *src_len, int n);
void batch_free(Batch *batch);

/* The order of one epoch: a seeded shuffle, then within windows of 50 batches the
 * examples are sorted by length (target first), so that batches hold sentences of
 * similar length (little padding) while the batch order stays random. order receives
 * n indices. */
void batch_epoch_order(int *order, const Example *ex, int n, int batch_size, Rng *rng);
/* The order of one epoch without length grouping (train.bucket false): a seeded
 * shuffle of 0..n-1, so batches mix lengths and carry more padding. */
void batch_shuffled_order(int *order, int n, Rng *rng);
/* Sorts the indices order[0..n-1] by (target length, source length), stable. Target
 * length first: the decoder and output layer, which scale with it, cost the most. */
void sort_by_length(int *order, const Example *ex, int n);
#endif
