/* decoder.h — a model seen by a search: the interface translation models implement.
 *
 * Why here: the searches (decode/: greedy, beam, ensembles) are written against this
 * interface and never against a model, and each translation family (models/rnn.c,
 * models/transformer.c) implements it, so the interface sits in the lower layer, with
 * the models, and decode/ holds only the searches.
 *
 * A Decoder is a model seen as R rows (partial sentences) that each advance by one word
 * per step. A search runs
 *
 *     dec->start(dec->ctx, src, K, max_steps, want_attn);      R = src->B * K rows
 *     for t = 0, 1, ...:
 *         logits = dec->step(dec->ctx, t, prev, &attn);        prev: (R) words fed
 *         ... choose each row's next word; beam search also picks which rows survive ...
 *         dec->reorder(dec->ctx, t, parent);                   beam search only
 *
 * and when it is done with the Decoder, whoever made it closes it (decoder_close).
 */
#ifndef MODELS_DECODER_H
#define MODELS_DECODER_H

#include "data/batch.h" /* defines: Batch */

/* What a search needs from a model. ctx is the model's own state (weights, caches,
 * scratch); the search passes it back unchanged and never frees it.
 *
 * start(ctx, src, K, max_steps, want_attn)
 *     src holds N source sentences (batch_fill_source: src->src and src->mask are (S, N),
 *     time-major). The search decodes R = N*K rows: row r = n*K + k continues sentence
 *     n = r / K (greedy: K = 1; beam search: K beams per sentence, so a model may encode
 *     each source once and share it between its K rows). Encodes the sources and puts
 *     every row in the decoder's initial state; at most max_steps steps follow. This is
 *     where a model allocates what the steps need (per batch, never per step). src stays
 *     valid and unchanged until the search returns.
 * step(ctx, t, prev, &attn) -> logits
 *     Step t = 0, 1, ... (in order, t < max_steps): row r is fed the word prev[r] (R ids:
 *     <sos> at t = 0, then the word the search chose for the row at step t - 1; the rows
 *     of a sentence that is already done are fed some word and their output ignored) and
 *     advances one position. Returns the logits (R, V) of the next word, V = vocab,
 *     unnormalised (the search takes the log-softmax). With want_attn, *attn is set to
 *     (R, S): row r's attention weights over its source at this step, of which the first
 *     src_len[r / K] are read (a Transformer reports its cross-attention averaged over
 *     heads, and layers if it likes); without want_attn *attn may be left NULL. Both
 *     buffers belong to ctx and are read before the next call.
 * reorder(ctx, t, parent)
 *     After step t, the rows that survive: row r's whole state (for a Transformer, its
 *     key/value cache rows of every layer for steps 0..t) becomes a copy of row
 *     parent[r]'s as it was before the call (R ids; parent[r] / K == r / K; a row may be
 *     the parent of several). Beam search calls it after every step; greedy never.
 * retire(ctx, r)   (optional: NULL if the model has no use for it)
 *     Row r's sentence is done: the search reads neither its logits nor its attention
 *     again, and never names it as a parent, so a model may stop computing it (its rows
 *     of later steps' outputs are then unspecified).
 * close(ctx)       (optional: NULL when whoever made the Decoder frees ctx itself)
 *     Frees ctx and everything it holds; the Decoder is not used again. A model
 *     family's decoder op (model.h) sets it; decoder_close calls it. */
typedef struct {
    void *ctx;
    int vocab; /* V: the width of a logits row */
    void (*start)(void *ctx, const Batch *src, int K, int max_steps, int want_attn);
    const float *(*step)(void *ctx, int t, const int *prev, const float **attn);
    void (*reorder)(void *ctx, int t, const int *parent);
    void (*retire)(void *ctx, int row);
    void (*close)(void *ctx);
} Decoder;

/* Closes dec (its close, if any) and zeroes it. */
void decoder_close(Decoder *dec);

/* The most likely word of a logits row (V), never <pad> or <sos>: the first index of
 * the maximum. Greedy decoding and scheduled sampling both choose with it. */
int best_word(const float *logits, int V);

#endif
