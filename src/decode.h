/* decode.h — turning source sentences into target sentences with a trained model.
 *
 * Greedy search: at each step feed the most probable word of the previous step, until
 * <eos> or max_len words. A batch of sentences is decoded together (one matrix product
 * per step for all of them); each sentence stops at its own <eos>.
 */
#ifndef DECODE_H
#define DECODE_H

#include "batch.h" /* defines: Batch */
#include "model.h" /* defines: Model, RunState */

/* batch holds B sources (batch_fill_source). out[b] must hold max_len ids; receives the
 * words before <eos>, out_len[b] their number. rs grows as needed (RUN_DECODE mode). */
void decode_greedy(Model *m, RunState *rs, const Batch *batch, int max_len, int **out, int *out_len);

/* Beam search for N source sentences src[n] (src_len[n] ids) with K beams each; all
 * N*K beams decode together as one batch. Each step extends every live beam by every
 * word (<pad> and <sos> excluded) and keeps a sentence's K best by total
 * log-probability; a beam that emits <eos> is finished. A sentence's search stops when
 * K of its beams have finished or after limit[n] words, and yields the finished
 * hypothesis with the best length-normalised score
 *     log P(y | x) / lp(|y|),   lp(n) = ((5 + n) / 6)^alpha   (GNMT; n counts <eos>)
 * (alpha = 0: raw log-probability); if none finished, the best live beam, cut at the
 * limit. out[n] must hold limit[n] ids; out_len[n] receives the count. */
void decode_beam(Model *m, RunState *rs, int *const *src, const int *src_len, int N, int K, const int *limit,
                 float alpha, int **out, int *out_len);
#endif
