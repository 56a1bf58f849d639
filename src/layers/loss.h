/* loss.h — softmax cross-entropy over the target vocabulary, padding-masked, with
 * optional label smoothing.
 *
 * For N rows of logits (N, V) and targets (N) with VOCAB_PAD (0) meaning "no loss here",
 * each non-pad row i is scored against the target distribution
 *     q_i = (1 - smoothing) * onehot(targets[i]) + smoothing / V
 * (PyTorch's CrossEntropyLoss(label_smoothing=smoothing): the smoothed mass is spread
 * over all V classes, the target and <pad> included), that is
 *     loss_i = -sum_k q_ik log softmax(x_i)_k
 *            = (1 - smoothing) * (lse_i - x_i[target]) + smoothing * (lse_i - mean_k x_ik)
 * with lse_i = log sum_k exp x_ik, computed as max_k x_ik + log sum_k exp(x_ik - max)
 * with the max subtracted first (lse_i - x = (max - x) + log sum ...), so that huge
 * logits keep the log sum. smoothing = 0 is plain cross-entropy.
 *
 * Returns the sum of loss_i over non-pad rows (in double). When dlogits is non-NULL it
 * receives dLoss/dlogits = scale * (softmax - q) on non-pad rows and 0 on pad rows;
 * dlogits may be the logits buffer itself (fused, in place). The caller picks
 * scale = 1 / (number of non-pad targets) for a token-mean loss. smoothing is in [0, 1).
 */
#ifndef LOSS_H
#define LOSS_H

double softmax_xent(float *logits, const int *targets, int N, int V, float scale, float smoothing, float *dlogits);
#endif
