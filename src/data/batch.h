/* batch.h — sentence pairs as token ids, and padded, time-major mini-batches of them.
 *
 * An Example is one sentence pair after tokenising and vocabulary lookup. A Batch lays
 * B examples out for the model:
 *   src     (S, B)  source ids, VOCAB_PAD after each sentence's end
 *   mask    (S, B)  1.0 on real source tokens, 0.0 on padding
 *   tgt_in  (T, B)  <sos> y_1 ... y_n, then padding
 *   tgt_out (T, B)  y_1 ... y_n <eos>, then padding   (T = longest target + 1)
 *
 * A packed batch (batch_fill_packed, for training and scoring) has no target padding:
 * its rows are sorted longest target first, so the sentences still going at decoder
 * step t are the first active(t) rows, and step t's target entries are stored at rows
 * tgt_off[t] .. tgt_off[t+1]-1 of tgt_in and tgt_out (PyTorch's PackedSequence
 * layout). The model then computes nothing for the steps after a sentence's end. The
 * source side is packed too, for the encoder, whose rows are sorted longest source
 * first (enc_row, src_off, enc_src; src and mask stay padded in batch order for the
 * attention). So a batch of mixed lengths costs what its real tokens cost: random
 * batches train as fast as length-sorted ones without their loss of quality per epoch.
 */
#ifndef BATCH_H
#define BATCH_H

#include "base/util.h" /* defines: Rng */

typedef struct {
    int *src, *tgt;     /* token ids, no specials */
    int src_len, tgt_len;
    int label;          /* a classifier's example (model.type classifier, tgt_len 0): its class,
                           0 .. classes-1 */
} Example;

typedef struct {
    int B, S, T;
    int *src;
    float *mask;
    int *tgt_in, *tgt_out;
    int *label;         /* (B) each row's Example.label (a classifier's batch) */
    int n_tokens;       /* non-pad entries of tgt_out: the loss's denominator */
    int cap;            /* allocated entries per array (grows, never shrinks) */
    int *tgt_off;       /* packed: (T + 1) where each step's rows start (tgt_off[T] =
                           n_tokens); NULL: not packed, step t at row t*B */
    int *tgt_off_mem;   /* what tgt_off points at when packed (off_cap entries) */
    int off_cap;
    /* Packed batches also pack the source side, in an order of its own (packseq.h):
     * the encoder's rows sorted longest source first. NULL when not packed. */
    int *src_off;       /* (S + 1) where each source position's rows start */
    int *enc_row;       /* (B) the batch row of encoder row i */
    int *enc_src;       /* (src_off[S]) the source ids, position by position */
    int *enc_mem;       /* what the three point into (enc_cap entries) */
    int enc_cap;
} Batch;

/* Where decoder step t's rows start in the target arrays, and how many sentences are
 * still going there: t*B and B, or as packed. */
static inline long batch_step_at(const Batch *b, int t) { return b->tgt_off ? b->tgt_off[t] : (long)t * b->B; }
static inline int batch_step_rows(const Batch *b, int t)
{
    return b->tgt_off ? b->tgt_off[t + 1] - b->tgt_off[t] : b->B;
}

/* Fill a batch from examples ex[idx[0..n-1]]. Examples with an empty source are not allowed. */
void batch_fill(Batch *batch, const Example *ex, const int *idx, int n);
/* The same examples as a packed batch: rows in order of decreasing target length
 * (stable: equal lengths keep their order in idx). */
void batch_fill_packed(Batch *batch, const Example *ex, const int *idx, int n);
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
