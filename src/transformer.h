/* transformer.h — the Transformer encoder-decoder (model.type "transformer"; issue 17,
 * being built): scripts/reference_transformer.py is its specification.
 *
 * So far the encoder's forward pass, as inference uses it (nothing kept for a backward
 * pass):
 *
 *   x_0    = src_emb[src] * sqrt(d) + PE                         (posenc.h)
 *   pre:   x = x + SelfAttn(LN1(x)); x = x + FFN(LN2(x)); memory = LN_enc(x_L)
 *   post:  x = LN1(x + SelfAttn(x)); x = LN2(x + FFN(x));  memory = x_L
 *
 * Self-attention masks the padding keys of each sentence (j >= len[b]); the rows of
 * padding positions come out as the kernels leave them (mha.h: attention output 0
 * there) and are never read by a real row. Time-major: row (t*B + b).
 *
 * Example:
 *   float *work = xmalloc(sizeof(float) * transformer_encode_floats(&m.dims, S, B));
 *   transformer_encode(&m, src, len, S, B, work, memory);    // memory (S, B, d)
 */
#ifndef TRANSFORMER_H
#define TRANSFORMER_H

#include "model.h" /* defines: Model, ModelDims */

/* Floats of scratch transformer_encode needs for S positions of B sentences. */
long transformer_encode_floats(const ModelDims *d, int S, int B);
/*   src (S, B) token ids, len (B) real lengths (1 <= len[b] <= S); writes memory (S, B, d). */
void transformer_encode(const Model *m, const int *src, const int *len, int S, int B, float *work, float *memory);
#endif
