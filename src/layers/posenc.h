/* posenc.h — the Transformer's sinusoidal position encodings (Vaswani et al. 2017, 3.5).
 *
 *   PE(pos, 2i)   = sin(pos / 10000^(2i/d))
 *   PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
 *
 * added to the token embeddings after they are multiplied by sqrt(d) (section 3.4):
 *   x[t, b, :] = scale * x[t, b, :] + PE(pos0 + t, :)
 * for a time-major (T, B, d) tensor, row (t*B + b). pos0 is the position of row t = 0:
 * 0 for a whole sentence, the step number for one decoder step (T = 1). An odd d ends
 * with a sin column (its cos partner would be column d).
 *
 * Example, d = 4, pos = 1: (sin 1, cos 1, sin 0.01, cos 0.01) = (0.8415, 0.5403, 0.0100, 0.99995).
 */
#ifndef POSENC_H
#define POSENC_H

/* PE(pos, k) for one position and column, in double. */
double posenc_value(int pos, int k, int d);

/*   x (T, B, d) in place: x = scale * x + PE(pos0 + t); scale is sqrt(d) for embeddings.
 *   The backward pass is dx = scale * dy (PE is a constant). */
void posenc_add(float *x, int T, int B, int d, int pos0, float scale);
#endif
