/* attention.h — Bahdanau (additive) attention, one decoder step for a batch.
 *
 *   keys  k_j = W_key h_j                   (computed once per batch by the caller)
 *   query q   = W_query s_{t-1} + b_query   (computed by the caller, fused with the GRU's W_hh)
 *   score e_j = v · tanh(k_j + q)
 *   a     = softmax(e) over the source positions with mask 1 (padding gets weight 0)
 *   ctx   = sum_j a_j h_j
 *
 * Encoder states and keys are time-major like everything else: row (j*B + b).
 * A is the attention width (the keys' and query's size), H the encoder state size.
 */
#ifndef ATTENTION_H
#define ATTENTION_H

/*   keys (S, B, A); enc (S, B, H); mask (S, B); q (B, A) row stride ld_q; v (A)
 *   writes attn (B, S) weights and ctx (B, H) with row stride ld_ctx. */
void attention_bahdanau_forward(const float *keys, const float *enc, const float *mask,
                                const float *q, int ld_q, const float *v,
                                float *attn, float *ctx, int ld_ctx,
                                int S, int B, int A, int H);

/*   dctx (B, H) stride ld_dctx: dLoss/dctx; keys, enc, mask, q, v, attn as in forward.
 *   tanh(k_j + q) is recomputed rather than kept from the forward pass: storing it for
 *   every step would be the largest activation of all (T, B, S, A).
 *   accumulates dv (A), dkeys (S, B, A), denc (S, B, H);
 *   writes dq (B, A) with row stride ld_dq; work: (S + A) floats. */
void attention_bahdanau_backward(const float *dctx, int ld_dctx, const float *keys, const float *enc,
                                 const float *mask, const float *q, int ld_q, const float *v,
                                 const float *attn, float *dv, float *dkeys, float *denc, float *dq,
                                 int ld_dq, float *work, int S, int B, int A, int H);
#endif
