/* embedding.h — table lookup and its gradient.
 *
 *   embedding_forward:  out (N, E) = table[ids[i]] for each of the N ids
 *   embedding_backward: dtable[ids[i]] += dout[i]  (rows of repeated ids accumulate)
 *
 * Rows are read with a stride so that an embedding can be written straight into a
 * wider row (the decoder input [embedding; context] is E+H wide).
 */
#ifndef EMBEDDING_H
#define EMBEDDING_H

void embedding_forward(float *out, int ld_out, const float *table, const int *ids, int n, int E);
void embedding_backward(float *dtable, const float *dout, int ld_dout, const int *ids, int n, int E);
#endif
