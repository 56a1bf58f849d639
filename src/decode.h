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
#endif
