/* loss.h — softmax cross-entropy over the target vocabulary, padding-masked.
 *
 * For N rows of logits (N, V) and targets (N) with VOCAB_PAD (0) meaning "no loss here":
 *   returns the summed negative log-likelihood over non-pad rows (in double), and when
 *   dlogits is non-NULL writes dLoss/dlogits = scale * (softmax - onehot) on non-pad rows
 *   and 0 on pad rows. dlogits may be the logits buffer itself (fused, in place).
 * The caller picks scale = 1 / (number of non-pad targets) for a token-mean loss.
 */
#ifndef LOSS_H
#define LOSS_H

double softmax_xent(float *logits, const int *targets, int N, int V, float scale, float *dlogits);
#endif
