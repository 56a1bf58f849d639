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

/* Beam search for one source sentence src (src_len ids) with K beams, which decode as
 * a batch of K rows. Each step extends every live beam by every word (<pad> and <sos>
 * excluded) and keeps the K best by total log-probability; a beam that emits <eos> is
 * finished. The search stops when K beams have finished or after max_len words, and
 * returns the finished hypothesis with the best length-normalised score
 *     log P(y | x) / lp(|y|),   lp(n) = ((5 + n) / 6)^alpha   (GNMT; n counts <eos>)
 * (alpha = 0: raw log-probability). out must hold max_len ids; out_len receives the
 * count; the normalised score is returned. K = 1 is plain greedy search. */
float decode_beam(Model *m, RunState *rs, const int *src, int src_len, int K, int max_len, float alpha, int *out,
                  int *out_len);
#endif
