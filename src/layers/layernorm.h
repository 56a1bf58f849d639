/* layernorm.h — layer normalisation over the last dimension (Ba et al. 2016), as the
 * Transformer uses it after (or before) every sub-layer.
 *
 * For each of N rows x (d):
 *   mean = (1/d) sum_k x_k        var = (1/d) sum_k (x_k - mean)^2   (biased, as PyTorch)
 *   rstd = 1 / sqrt(var + eps)    xhat_k = (x_k - mean) * rstd
 *   y_k  = gamma_k * xhat_k + beta_k
 * eps is LAYERNORM_EPS = 1e-5, nn.LayerNorm's default. gamma, beta (d) are shared by
 * every row; rows are contiguous (row stride d), so a time-major (T, B, d) tensor is
 * simply N = T*B rows.
 *
 * Backward, with g_k = dy_k * gamma_k (the gradient with respect to xhat):
 *   dx_k = rstd * (g_k - mean_j(g_j) - xhat_k * mean_j(g_j xhat_j))
 *   dgamma_k += sum_rows dy_k xhat_k      dbeta_k += sum_rows dy_k
 *
 * Example: x = (1, 2, 3), gamma = 1, beta = 0: mean 2, var 2/3, y = (-1.2247, 0, 1.2247).
 */
#ifndef LAYERNORM_H
#define LAYERNORM_H

#define LAYERNORM_EPS 1e-5f

/*   x (N, d); gamma, beta (d).
 *   writes y (N, d) (y may be x: in place), and mean (N), rstd (N) for the backward pass. */
void layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *gamma,
                       const float *beta, int N, int d);

/*   dy (N, d); x, mean, rstd, gamma as in forward (x is the forward's input, so an
 *   in-place forward needs the caller to keep a copy).
 *   writes dx (N, d) (dx may be dy); accumulates (+=) dgamma (d) and dbeta (d). */
void layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dy, const float *x,
                        const float *mean, const float *rstd, const float *gamma, int N, int d);
#endif
