/* attention.h — attention over the encoder states, one decoder step for a batch.
 * Two kernels: Bahdanau (additive) and dot-product (Luong dot/general, scaled, local).
 *
 * Bahdanau:
 *   keys  k_j = W_key h_j                   (computed once per batch by the caller)
 *   query q   = W_query s_{t-1} + b_query   (computed by the caller, fused with the GRU's W_hh)
 *   score e_j = v · tanh(k_j + q)
 *   a     = softmax(e) over the source positions with mask 1 (padding gets weight 0)
 *   ctx   = sum_j a_j h_j
 *
 * Encoder states and keys are time-major like everything else: row (j*B + b).
 * A is the attention width (the keys' and query's size), H the encoder state size.
 * Every kernel attends for the first `rows` (<= B) sentences of the batch: a packed
 * training batch (batch.h) has fewer sentences still going at a late decoder step.
 */
#ifndef ATTENTION_H
#define ATTENTION_H

/*   keys (S, B, A); enc (S, B, H); mask (S, B); q (B, A) row stride ld_q; v (A)
 *   writes attn (B, S) weights and ctx (B, H) with row stride ld_ctx. */
void attention_bahdanau_forward(const float *keys, const float *enc, const float *mask,
                                const float *q, int ld_q, const float *v,
                                float *attn, float *ctx, int ld_ctx,
                                int S, int B, int rows, int A, int H);

/*   dctx (B, H) stride ld_dctx: dLoss/dctx; keys, enc, mask, q, v, attn as in forward.
 *   tanh(k_j + q) is recomputed rather than kept from the forward pass: storing it for
 *   every step would be the largest activation of all (T, B, S, A).
 *   accumulates dv (A), dkeys (S, B, A), denc (S, B, H);
 *   writes dq (B, A) with row stride ld_dq; work: (S + A) floats. */
void attention_bahdanau_backward(const float *dctx, int ld_dctx, const float *keys, const float *enc,
                                 const float *mask, const float *q, int ld_q, const float *v,
                                 const float *attn, float *dv, float *dkeys, float *denc, float *dq,
                                 int ld_dq, float *work, int S, int B, int rows, int A, int H);

/* ------------------------------------------------------------------ dot product
 * Luong attention on the new decoder state q = s_t:
 *
 *   score  e_j = scale * (q . k_j)     k_j = h_j (luong_dot: the caller passes keys = enc)
 *                                      k_j = W h_j (luong_general, local_*: computed once per batch)
 *   global (window 0):  a = softmax of e over the real positions j < len[b]; a_j = 0 at padding
 *   local  (window D):  W = { j : 0 <= j < len[b], |j - p| <= D },  p = pos[b]
 *                       a_j = softmax_{j in W}(e_j) * exp(-(j - p)^2 / (2 (D/2)^2))  for j in W,
 *                       a_j = 0 elsewhere; NOT renormalised after the Gaussian (Luong et al.
 *                       2015, sec. 3.2), so a local row sums to less than 1.
 *   ctx    = sum_j a_j h_j
 *
 * Keys and query have the encoder's width H. Softmaxes subtract the maximum over the
 * window, so any finite scores are safe. An empty window (cannot happen for the
 * contract's p: see notes/issue4.md) gives a = 0 and ctx = 0 rather than NaN.
 */
typedef struct {
    float scale;   /* multiplies every score: 1, or 1/sqrt(H) for scaled dot-product */
    int window;    /* 0: global; D >= 1: local window of half-width D around pos[b] */
} DotAttention;

/*   keys (S, B, H); enc (S, B, H); len (B) real source lengths, 1 <= len[b] <= S
 *   (positions >= len[b] are padding and never read); q (B, H) row stride ld_q;
 *   pos (B) window centres p, required when cfg->window > 0, ignored (may be NULL) otherwise.
 *   writes attn (B, S) weights and ctx (B, H) with row stride ld_ctx. */
void attention_dot_forward(const DotAttention *cfg, const float *keys, const float *enc, const int *len,
                           const float *q, int ld_q, const float *pos, float *attn, float *ctx, int ld_ctx,
                           int S, int B, int rows, int H);

/*   dctx (B, H) stride ld_dctx: dLoss/dctx; cfg, keys, enc, len, q, pos, attn as in forward
 *   (attn is the forward's output, not recomputed).
 *   accumulates (+=) dkeys (S, B, H) and denc (S, B, H); they may be the same buffer
 *   (luong_dot, keys == enc): both terms then add into it. Positions outside the window
 *   or at padding get nothing.
 *   writes dq (B, H) with row stride ld_dq;
 *   dpos (B) or NULL: writes dLoss/dp through the Gaussian factor (window membership is
 *   piecewise constant, so it contributes no gradient); 0 in global mode.
 *   work: (S) floats. */
void attention_dot_backward(const DotAttention *cfg, const float *dctx, int ld_dctx, const float *keys,
                            const float *enc, const int *len, const float *q, int ld_q, const float *pos,
                            const float *attn, float *dkeys, float *denc, float *dq, int ld_dq, float *dpos,
                            float *work, int S, int B, int rows, int H);
#endif
