/* gru.h — the gated recurrent unit, PyTorch/cuDNN formulation.
 *
 * With gi = W_ih x + b_ih and gh = W_hh h + b_hh, each (3H) laid out as [r | z | n]:
 *     r  = sigmoid(gi_r + gh_r)
 *     z  = sigmoid(gi_z + gh_z)
 *     n  = tanh(gi_n + r * gh_n)        <- reset gate applied after the hidden matmul
 *     h' = (1 - z) * n + z * h
 *
 * The matrix products are the caller's business (they are batched across time steps
 * where possible); this file does the element-wise gate arithmetic of one step for a
 * batch, and runs a whole padded sequence for the encoder.
 *
 * Weights follow PyTorch's nn.GRU: w_ih (3H, In), w_hh (3H, H), b_ih (3H), b_hh (3H).
 */
#ifndef GRU_H
#define GRU_H

#include "kernels/matmul_packed.h" /* defines: PackedMatrix */
#include "kernels/prepared.h"      /* defines: PreparedWeight */

typedef struct {
    float *w_ih;  /* (3H, In) */
    float *w_hh;  /* (3H, H)  */
    float *b_ih;  /* (3H)     */
    float *b_hh;  /* (3H)     */
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
} GruWeights;

/* One step's gates for B rows.
 *   gi (B, 3H) row stride ld_gi; gh (B, 3H) row stride ld_gh; h_prev (B, H)
 *   writes h_out (B, H) and rzn (B, 3H): the gate values r, z, n kept for backward. */
void gru_gates_forward(const float *gi, int ld_gi, const float *gh, int ld_gh,
                       const float *h_prev, float *h_out, float *rzn, int B, int H);

/* Backward of gru_gates_forward. dh (B, H) is dLoss/dh_out.
 *   writes dgi (B, 3H) stride ld_dgi and dgh (B, 3H) stride ld_dgh: gradients of the
 *   pre-activations, and dh_prev (B, H) = the part of dLoss/dh_prev that does not go
 *   through W_hh (that is dh * z; the caller adds dgh · W_hh). */
void gru_gates_backward(const float *dh, const float *rzn, const float *gh, int ld_gh,
                        const float *h_prev, float *dgi, int ld_dgi, float *dgh, int ld_dgh,
                        float *dh_prev, int B, int H);

/* A padded batch of sequences, time-major, run in either direction.
 *   x (S, B, In); mask (S, B) of 0/1
 *   h (S+1, B, H): the states, laid out so that the outputs for positions 0..S-1 are
 *     always one contiguous (S, B, H) block:
 *       reverse = 0: positions t = 0 .. S-1.  h[0] is the initial state (set by the
 *         caller), h[t+1] the state after position t; outputs h[1..S], final state h[S].
 *       reverse = 1: positions t = S-1 .. 0.  h[S] is the initial state (set by the
 *         caller), h[t] the state after position t; outputs h[0..S-1], final state h[0].
 *     Where mask[t,b] is 0 the state is carried unchanged (as pack_padded_sequence does):
 *     forward, the final state is each sequence's last real state; reverse, trailing
 *     padding keeps the initial state, so each sequence starts at its last real token.
 *   cache: gi (S, B, 3H), gh (S, B, 3H), rzn (S, B, 3H) for backward, indexed by
 *     position t in both directions; keep 0 (no backward: decoding) writes every
 *     position's gh and rzn into the same (B, 3H) rows, which is all they need hold */
void gru_sequence_forward(const GruWeights *w, const float *x, const float *mask,
                          float *h, float *gi, float *gh, float *rzn, int S, int B, int reverse, int keep);

/* Backward of gru_sequence_forward, same reverse flag.
 *   dh (S, B, H): dLoss/d(output at position t) from outside (attention, the final
 *     state): dLoss/dh[t+1] forward, dLoss/dh[t] reverse; consumed (overwritten)
 *   grads accumulate into g (same shapes as w); dx (S, B, In) is written;
 *   dh0 (B, H) receives dLoss/d(initial state) (h[0] forward, h[S] reverse);
 *   work: dgi, dgh (S, B, 3H). */
void gru_sequence_backward(const GruWeights *w, GruWeights *g, const float *x, const float *mask,
                           const float *h, const float *gh, const float *rzn, float *dh,
                           float *dx, float *dh0, float *dgi, float *dgh, int S, int B, int reverse);

/* The same on a packed batch (packseq.h: rows longest first, position t's n_t rows at
 * off[t], no padding stored or computed), for training.
 *   x (N, In); h (B + N, H): the initial state in rows 0..B-1 (set by the caller), then
 *     the state after each position; gi, gh, rzn (N, 3H); stage (B, H) scratch. */
void gru_packed_forward(const GruWeights *w, const float *x, float *h, float *gi, float *gh, float *rzn,
                        const int *off, int S, int B, int reverse, float *stage);
/* Backward of gru_packed_forward.
 *   dh (N, H): dLoss/d(state after each position) from outside; consumed
 *   dh_final (B, H) or NULL: dLoss/d(each row's final state) (packseq.h says where it is)
 *   grads accumulate into g; dx (N, In) is written; dh0 (B, H) receives dLoss/d(initial
 *   state); work: dgi, dgh (N, 3H), work (N, H). */
void gru_packed_backward(const GruWeights *w, GruWeights *g, const float *x, const float *h, const float *gh,
                         const float *rzn, float *dh, const float *dh_final, float *dx, float *dh0, float *dgi,
                         float *dgh, const int *off, int S, int B, int reverse, float *work);
#endif
