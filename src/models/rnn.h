/* rnn.h — the attention encoder-decoder family (model.type "rnn"): its table of
 * operations, and the step-by-step pieces its Decoder and the tests use.
 *
 * One architecture with options (ModelDims); in summary, with H = hidden:
 *   encoder  `layers` stacked GRU or LSTM layers over src_emb[x]; bidirectional layers
 *            have H/2 units per direction and output [forward; reverse] (width H).
 *            States are carried through padding, so each direction's final state is
 *            the one after the sentence's last (forward) or first (reverse) real token.
 *   bridge   decoder layer l starts from encoder layer l's final state; bidirectional:
 *            s0 = tanh(bridge_w [h_fwd; h_rev] + bridge_b), LSTM c0 = [c_fwd; c_rev].
 *   decoder  bahdanau:  c_t from attention with query s_{t-1}; the layers read
 *                       [tgt_emb[y_{t-1}]; c_t]; output o_t = s_t.
 *            Luong kinds: the layers read tgt_emb[y_{t-1}] (and o_{t-1} with input
 *                       feeding); then attention with query s_t; o_t = tanh(W_out [c_t; s_t]).
 *            logits_t = out_w o_t + out_b (out_w is tgt_emb when tie_embeddings).
 *   scores   bahdanau, luong_concat: v . tanh(W_key h_j + W_query s + b_query)
 *            luong_dot: s . h_j   luong_general, local_*: s . (W h_j)   (scaled: / sqrt(H))
 *            local_*: only a window |j - p_t| <= D, weighted by a Gaussian around p_t,
 *            p_t = t (monotonic) or len * sigmoid(v_p . tanh(W_p s_t)) (predictive).
 *   loss     token-mean cross-entropy over non-pad targets (teacher forcing).
 * scripts/reference/reference_variants.py is the same family in PyTorch, and the specification.
 *
 * All activations are time-major, row (t*B + b), in the RunState (model.h). For the
 * additive scores the query weights directly follow the top decoder layer's recurrent
 * weights (att_w_query after its w_hh, att_b_query after its b_hh), so that the
 * recurrent product and the attention query are one matrix product with a
 * (G*H + H, H) matrix.
 *
 * The family is in three files: rnn.c (the family's operations: layout, run state,
 * forward and backward passes, Decoder, description), rnn_encoder.c (the encoder,
 * forward and backward, which the classifier shares) and rnn_decoder.c (the attention
 * decoder, forward and backward).
 */
#ifndef RNN_H
#define RNN_H

#include "models/model.h" /* defines: Model, ModelDims, RunState, ModelFamily */

extern const ModelFamily rnn_family;

/* ---------------------------------------------------------------- decoding step by step
 * model_encode runs the encoder over batch->src and sets the decoder's initial state;
 * model_decoder_input puts tgt_emb[ids] into the step's input and its projection;
 * model_decoder_step runs step t (attention and the layers);
 * model_step_output is o_t (B, H), what the output layer reads;
 * model_step_logits writes logits (B, Vt) of step t;
 * model_reorder_state makes row r of the state after step t a copy of row from[r]
 * (beam search). */
void model_encode(Model *m, RunState *rs, const Batch *batch);
void model_decoder_input(Model *m, RunState *rs, int t, const int *ids, int B);
void model_decoder_step(Model *m, RunState *rs, const Batch *batch, int t);
const float *model_step_output(const Model *m, const RunState *rs, int t, int B);
void model_step_logits(Model *m, RunState *rs, int t, int B, float *logits);
void model_reorder_state(Model *m, RunState *rs, int t, const int *from, int B);

/* ---------------------------------------------------------------- shared with the classifier
 * The recurrent encoder is the classifier's too (classifier.h), which has no decoder:
 * with_decoder 0 leaves out the decoder's tensors, activations and initial state. */

/* Sizes: layers (0 means 1), gates per unit, directions, units per direction. */
static inline int rnn_layers(const ModelDims *d) { return d->layers > 0 ? d->layers : 1; }
static inline int rnn_gates(const ModelDims *d) { return d->cell == CELL_LSTM ? 4 : 3; }
static inline int rnn_dirs(const ModelDims *d) { return d->bidirectional ? 2 : 1; }
static inline int rnn_units(const ModelDims *d) { return d->bidirectional ? d->hidden / 2 : d->hidden; }

/* The source embedding and the encoder layers' tensors (and with the decoder, the
 * bridges of a bidirectional encoder). */
void rnn_encoder_layout(const ModelDims *d, Params *p, ParamLayout *lo, int with_decoder);
/* The run state's activations (model.h's RunState) for batches up to (B, S, T);
 * without the decoder, the classifier's pooling activations instead. rs comes zeroed
 * (runstate_alloc). */
void rnn_runstate_alloc(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T, int with_decoder);
/* The encoder over a packed batch (training, scoring, classifying) or a padded one
 * (translation's decoding): rs->memory (S, B, H) in batch order, rs->src_len; with the
 * decoder, the decoder's initial state. */
void rnn_encode(Model *m, RunState *rs, const Batch *batch, int with_decoder);
/* d_enc (S, B, H) holds dLoss/d(memory) in batch order (and, with the decoder, d_s,
 * d_c dLoss/d(the decoder's initial states)): accumulates the encoder's and the source
 * embedding's gradients into m->grads. Clobbers d_enc. */
void rnn_encoder_backward(Model *m, RunState *rs, const Batch *batch, int with_decoder);

/* The encoder's weights prepared for int8 decoding (kernels/prepared.h): each layer and
 * direction's w_ih and w_hh, and with the decoder, a bidirectional encoder's bridges.
 * The first member of the family's Model.prepared, the recurrent translation model's
 * (rnn_decoder.c) and the classifier's alike, so that the shared encoder finds it in
 * either. rnn_encoder_prepare prepares them for int8 (float32 prepares nothing: the
 * encoder's float products stay OpenBLAS's, with their bits); rnn_encoder_int8_only
 * appends the weights they replace to ModelFamily.int8_only's slots from index c and
 * returns the new count. A batch decoded or classified (RUN_DECODE) by a model prepared
 * for int8 is encoded with them: every product per row, so a sentence's encoding does
 * not depend on its batch. */
typedef struct {
    PreparedWeight ih[MAX_LAYERS][2], hh[MAX_LAYERS][2], bridge[MAX_LAYERS];
} RnnEncoderPrepared;
void rnn_encoder_prepare(const Model *m, RnnEncoderPrepared *pe, ComputeType type, int with_decoder);
void rnn_encoder_prepared_free(RnnEncoderPrepared *pe);
int rnn_encoder_int8_only(Model *m, float **slot[MAX_TENSORS], long n[MAX_TENSORS], int c, int with_decoder);

/* Inverted dropout on rows x (n, w) with stride ld: keep[i] is 0 or 1/(1-p), stored
 * (n, w) for backward (rows_multiply). */
void rows_dropout(float *x, int ld, float *keep, long n, int w, float p, Rng *rng);
void rows_multiply(float *x, int ld, const float *keep, long n, int w);
void tanh_inplace(float *x, long n);
/* "gru" or "lstm": model.cell's value, as `nmt info` says it. */
const char *rnn_cell_name(int cell);

/* ---------------------------------------------------------------- inside the family
 * What rnn.c, rnn_encoder.c and rnn_decoder.c share. */

static inline int rnn_is_local(int kind) { return kind == ATT_LOCAL_MONOTONIC || kind == ATT_LOCAL_PREDICTIVE; }
static inline int rnn_is_additive(int kind) { return kind == ATT_BAHDANAU || kind == ATT_LUONG_CONCAT; }
/* The scores s . (W h_j): keys are W h_j, computed once per batch. */
static inline int rnn_has_att_w(int kind) { return kind == ATT_LUONG_GENERAL || rnn_is_local(kind); }
/* Width of the decoder's first-layer input: [embedding; context or o_{t-1}] or the embedding. */
static inline int rnn_dec_in0(const ModelDims *d)
{
    return d->embed + (d->attention == ATT_BAHDANAU || d->input_feed ? d->hidden : 0);
}
/* The decoder layer whose recurrent product also computes the Bahdanau query. */
static inline int rnn_fused_query(const ModelDims *d, int l)
{
    return d->attention == ATT_BAHDANAU && l == rnn_layers(d) - 1;
}

/* rnn_decoder.c's ModelFamily.prepare and .prepared_free: the decoder's weights
 * prepared for decoding (kernels/prepared.h). */
void *rnn_prepare(const Model *m, ComputeType type);
void rnn_prepared_free(void *prepared);
int rnn_int8_only(Model *m, float **slot[MAX_TENSORS], long n[MAX_TENSORS]);
/* The output layer's prepared weight, or NULL (m not prepared). */
const PreparedWeight *rnn_prepared_out(const Model *m);

/* rnn_decoder.c's packed step weights for training and scoring passes: the weights a
 * pass multiplies once per time step, packed once per pass in the run state's own
 * buffers (RunState.own), with the same bits as the plain products (linalg.h).
 * rnn_step_packs_attach gives a RUN_TRAIN or RUN_SCORE run state its buffers (nothing
 * where packed_matches_blas() is 0: the products stay matmul_bias's).
 * rnn_pack_steps packs the decoder's step weights for batches of up to B rows, for the
 * forward pass that follows; rnn_unpack_steps ends that (model_decoder_step then
 * multiplies plainly again). rnn_step_pack_encoder packs encoder layer l, direction
 * r's w_hh (N, K) for a pass of up to B rows and returns it, or NULL where the
 * products would not read it. */
void rnn_step_packs_attach(RunState *rs, RunMode mode);
void rnn_pack_steps(const Model *m, RunState *rs, int B);
void rnn_unpack_steps(RunState *rs);
const PackedMatrix *rnn_step_pack_encoder(RunState *rs, int l, int r, const float *w_hh, int N, int K, int B);
/* The same for the backward passes' per-step products dgates · W (matmul_nn_prepacked):
 * rnn_pack_steps_backward packs the decoder's weights' columns for the backward pass
 * that follows (rnn_unpack_steps ends it too); rnn_step_pack_encoder_columns packs the
 * columns of encoder layer l, direction r's w_hh (K, N). */
void rnn_pack_steps_backward(const Model *m, RunState *rs, int B);
const PackedMatrix *rnn_step_pack_encoder_columns(RunState *rs, int l, int r, const float *w_hh, int N, int K,
                                                  int B);
/* How many weights rs's last training step packed, its forward pass and its backward
 * pass (0: every product was plain), for the tests and benchmarks. */
int rnn_steps_packed(const RunState *rs);

/* rnn_decoder.c's passes for rnn.c. The output o_t of step t's rows of a training
 * batch (o_t = s_t for Bahdanau): the output layer's input. */
const float *rnn_step_output(const Model *m, const RunState *rs, const Batch *batch, int t);
/* Where step t's decoder rows start in the (T, B, ...) arrays: batch_step_at(batch, t),
 * or in decoding, which keeps two steps (RunState.step_ring), slot t % 2's. */
long rnn_step_row(const RunState *rs, const Batch *batch, int t);
/* After model_encode of N sentences (S positions), into a run state sized for N * K
 * rows: the memory, the keys, the decoder's initial states and the source lengths
 * spread so that rows n*K .. n*K + K-1 are sentence n's, as if the N * K rows had been
 * encoded (a beam of K, each sentence encoded once). */
void rnn_repeat_encoding(Model *m, RunState *rs, int N, int S, int K);
/* The decoder, steps in reverse, from dLoss/do_t in d_out: accumulates its gradients,
 * adds dLoss/d(memory) into d_enc and dLoss/d(keys) into d_keys, and leaves
 * dLoss/ds_0 (and dc_0) in d_s, d_c. */
void rnn_decoder_backward(Model *m, RunState *rs, const Batch *batch);
#endif
