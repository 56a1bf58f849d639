/* ffn.h — the Transformer's position-wise feed-forward sub-layer.
 *
 *   h = x W1^T + b1          W1 (ff, d), b1 (ff)      pre-activation, kept for backward
 *   a = act(h)               relu: max(h, 0); gelu: h * Phi(h) = h/2 (1 + erf(h/sqrt 2))
 *                            (the exact GELU, PyTorch's F.gelu default, not the tanh one)
 *   a = a * keep / (1 - p)   with dropout (training): keep (N, ff) of 0/1, as
 *                            nn.TransformerEncoderLayer's dropout after the activation
 *   y = a W2^T + b2          W2 (d, ff), b2 (d)
 *
 * Weights are in PyTorch's nn.Linear orientation (out, in), so linear1.weight and
 * linear2.weight of nn.TransformerEncoderLayer copy over as they are. Every position
 * (row) is independent: a time-major (T, B, d) tensor is N = T*B rows.
 *
 * Backward:
 *   dW2 += dy^T a, db2 += sum dy, da = dy W2
 *   dh = da * keep / (1 - p) * act'(h)   relu' = [h > 0]; gelu' = Phi(h) + h phi(h)
 *   dW1 += dh^T x, db1 += sum dh, dx = dh W1
 *
 * Example: d 512, ff 2048 (the base Transformer); N = 40 tokens: h, a are (40, 2048).
 */
#ifndef FFN_H
#define FFN_H

#include "kernels/prepared.h" /* defines: PreparedWeight */

typedef enum { FFN_RELU, FFN_GELU } FfnActivation;

typedef struct {
    const float *W1, *b1; /* (ff, d), (ff) */
    const float *W2, *b2; /* (d, ff), (d)  */
    const PreparedWeight *p1, *p2;  /* decoding: W1, W2 prepared (kernels/prepared.h), or NULL */
} FfnParams;

typedef struct {
    float *W1, *b1, *W2, *b2; /* same shapes as FfnParams; accumulated (+=) */
} FfnGrads;

/*   x (N, d); keep (N, ff) of 0/1 and the dropout probability, or NULL (no dropout);
 *   writes h (N, ff) pre-activation, a (N, ff) activation (after dropout), y (N, d). */
void ffn_forward(const FfnParams *p, FfnActivation act, const float *x, float *h, float *a, float *y,
                 const unsigned char *keep, float dropout, int N, int d, int ff);

/*   dy (N, d); x, h, a, keep, dropout as the forward had them.
 *   writes dx (N, d); accumulates g; work: N*ff floats (dh). */
void ffn_backward(const FfnParams *p, FfnActivation act, FfnGrads *g, const float *dy, const float *x,
                  const float *h, const float *a, const unsigned char *keep, float dropout, float *dx,
                  float *work, int N, int d, int ff);
#endif
