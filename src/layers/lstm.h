/* lstm.h — the long short-term memory cell, PyTorch/cuDNN formulation.
 *
 * With gi = W_ih x + b_ih and gh = W_hh h + b_hh, each (4H) laid out as [i | f | g | o]:
 *     i  = sigmoid(gi_i + gh_i)       input gate
 *     f  = sigmoid(gi_f + gh_f)       forget gate
 *     g  = tanh(gi_g + gh_g)          candidate cell
 *     o  = sigmoid(gi_o + gh_o)       output gate
 *     c' = f * c + i * g
 *     h' = o * tanh(c')
 *
 * Unlike the GRU, every gate sees gi + gh only through their sum, so the gradient of
 * the pre-activations is one buffer serving both the W_ih and the W_hh products.
 *
 * The matrix products are the caller's business (they are batched across time steps
 * where possible); this file does the element-wise gate arithmetic of one step for a
 * batch, and runs a whole padded sequence, in either direction, for the encoder.
 *
 * Weights follow PyTorch's nn.LSTM: w_ih (4H, In), w_hh (4H, H), b_ih (4H), b_hh (4H).
 */
#ifndef LSTM_H
#define LSTM_H

#include "kernels/matmul_packed.h" /* defines: PackedMatrix */
#include "kernels/prepared.h"      /* defines: PreparedWeight */

typedef struct {
    float *w_ih;  /* (4H, In) */
    float *w_hh;  /* (4H, H)  */
    float *b_ih;  /* (4H)     */
    float *b_hh;  /* (4H)     */
    int in, hidden;
    /* w_hh packed (kernels/matmul_packed.h), or NULL: the forward passes' per-step
     * products w_hh h read it instead of having OpenBLAS repack w_hh at every step,
     * with the same bits (matmul_bias_prepacked, kernels/linalg.h). */
    const PackedMatrix *w_hh_packed;
    /* w_hh's columns packed (packed_matrix_pack_columns), or NULL: the same for the
     * backward passes' per-step products dgates · w_hh (matmul_nn_prepacked). */
    const PackedMatrix *w_hh_columns;
    /* w_ih and w_hh prepared for int8 decoding (kernels/prepared.h), or NULL: the
     * forward passes (sequence and packed) multiply by these instead (and read no float
     * weight). */
    const PreparedWeight *w_ih_int8, *w_hh_int8;
} LstmWeights;

/* One step's gates for B rows.
 *   gi (B, 4H) row stride ld_gi; gh (B, 4H) row stride ld_gh; c_prev (B, H)
 *   writes h_out (B, H), c_out (B, H) and ifgo (B, 4H): the activated gate values
 *   i, f, g, o kept for backward. */
void lstm_gates_forward(const float *gi, int ld_gi, const float *gh, int ld_gh, const float *c_prev,
                        float *h_out, float *c_out, float *ifgo, int B, int H);

/* Backward of lstm_gates_forward.
 *   dh (B, H) = dLoss/dh_out; dc (B, H) = dLoss/dc_out from outside (the next step's
 *   dc_prev, the final-state gradient), or NULL for zero; c (B, H) is c_out.
 *   writes dgates (B, 4H) row stride ld_dg: the gradient of the pre-activations
 *   gi + gh (the same for both), and dc_prev (B, H) = dLoss/dc_prev. dc_prev may be dc
 *   (updated in place). dLoss/dh_prev is all through W_hh: the caller's dgates · W_hh. */
void lstm_gates_backward(const float *dh, const float *dc, const float *ifgo, const float *c_prev,
                         const float *c, float *dgates, int ld_dg, float *dc_prev, int B, int H);

/* A padded batch of sequences, time-major, run in either direction.
 *   x (S, B, In); mask (S, B) of 0/1
 *   h, c (S+1, B, H): the states, laid out so that the outputs for positions 0..S-1
 *     are always one contiguous (S, B, H) block of h:
 *       reverse = 0: positions t = 0 .. S-1.  h[0], c[0] hold the initial state (set by
 *         the caller), h[t+1], c[t+1] the state after position t; final state h[S], c[S].
 *       reverse = 1: positions t = S-1 .. 0.  h[S], c[S] hold the initial state (set by
 *         the caller), h[t], c[t] the state after position t; final state h[0], c[0].
 *     Where mask[t,b] is 0 both h and c are carried unchanged (as pack_padded_sequence
 *     does): forward, the final state is each sequence's last real state; reverse,
 *     trailing padding keeps the initial state, so each sequence starts at its last
 *     real token.
 *   cache: gi (S, B, 4H) = x · W_ih^T + b_ih, gh (S, B, 4H) = h_prev · W_hh^T + b_hh and
 *     ifgo (S, B, 4H) the activated gates, indexed by position t in both directions;
 *     backward needs only ifgo (and h, c); keep 0 (no backward: decoding) writes every
 *     position's gh and ifgo into the same (B, 4H) rows */
void lstm_sequence_forward(const LstmWeights *w, const float *x, const float *mask, float *h, float *c,
                           float *gi, float *gh, float *ifgo, int S, int B, int reverse, int keep);

/* Backward of lstm_sequence_forward, same reverse flag.
 *   dh (S, B, H): dLoss/d(output at position t) from outside (attention, the next
 *     layer; the caller adds dLoss/d(final h) at the final position: S-1 forward, 0
 *     reverse); consumed (overwritten)
 *   dc_final (B, H) or NULL: dLoss/d(final c) from outside (the decoder's initial c)
 *   grads accumulate into g (same shapes as w); dx (S, B, In) is written;
 *   dh0, dc0 (B, H) receive dLoss/d(initial h, c) (h[0], c[0] forward, h[S], c[S]
 *     reverse); dc0 may be dc_final;
 *   work: dgates (S, B, 4H). */
void lstm_sequence_backward(const LstmWeights *w, LstmWeights *g, const float *x, const float *mask,
                            const float *h, const float *c, const float *ifgo, float *dh, float *dc_final,
                            float *dx, float *dh0, float *dc0, float *dgates, int S, int B, int reverse);

/* The same on a packed batch (packseq.h: rows longest first, position t's n_t rows at
 * off[t], no padding stored or computed), for training.
 *   x (N, In); h, c (B + N, H): the initial state in rows 0..B-1 (set by the caller),
 *   then the state after each position; gi, gh, ifgo (N, 4H); stage (2B, H) scratch. */
void lstm_packed_forward(const LstmWeights *w, const float *x, float *h, float *c, float *gi, float *gh, float *ifgo,
                         const int *off, int S, int B, int reverse, float *stage);
/* Backward of lstm_packed_forward.
 *   dh (N, H): dLoss/d(h after each position) from outside; consumed
 *   dh_final, dc_final (B, H) or NULL: dLoss/d(each row's final h, c)
 *   grads accumulate into g; dx (N, In) is written; dh0, dc0 (B, H) receive dLoss/d(the
 *   initial h, c); work: dgates (N, 4H), work (N, H). */
void lstm_packed_backward(const LstmWeights *w, LstmWeights *g, const float *x, const float *h, const float *c,
                          const float *ifgo, float *dh, const float *dh_final, const float *dc_final, float *dx,
                          float *dh0, float *dc0, float *dgates, const int *off, int S, int B, int reverse, float *work);
#endif
