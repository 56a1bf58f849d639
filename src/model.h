/* model.h — the attention encoder-decoder: parameters, activations, forward, backward.
 *
 *   encoder:  h_t = GRU_enc(src_emb[x_t], h_{t-1}), h_0 = 0, carried through padding
 *   decoder:  s_0 = h_S (the encoder's last real state)
 *             c_t = Bahdanau attention over h_1..h_S with query s_{t-1}
 *             s_t = GRU_dec([tgt_emb[y_{t-1}]; c_t], s_{t-1})
 *             logits_t = out_w s_t + out_b
 *   loss:     token-mean cross-entropy over non-pad targets (teacher forcing)
 *
 * All activations are time-major, row (t*B + b). The parameters are one float array
 * carved into named tensors (Params); the gradients use the same struct over a second
 * array, so the optimizer is one loop. Two adjacencies are relied on for speed:
 * dec_w_hh is followed by att_w_query, and dec_b_hh by att_b_query, so that the
 * decoder's recurrent product and the attention query are one matrix product of
 * s_{t-1} with a (3H + H, H) matrix.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stdint.h>

#include "batch.h" /* defines: Batch */

typedef struct {
    int src_vocab, tgt_vocab;
    int embed, hidden;    /* the attention width equals hidden */
} ModelDims;

#define PARAM_TENSORS 16
typedef struct {
    float *src_emb;      /* (Vs, E) */
    float *enc_w_ih;     /* (3H, E) */
    float *enc_w_hh;     /* (3H, H) */
    float *enc_b_ih;     /* (3H) */
    float *enc_b_hh;     /* (3H) */
    float *tgt_emb;      /* (Vt, E) */
    float *att_w_key;    /* (H, H) */
    float *att_v;        /* (H) */
    float *dec_w_ih;     /* (3H, E+H) input is [embedding; context] */
    float *dec_w_hh;     /* (3H, H) */
    float *att_w_query;  /* (H, H)  directly after dec_w_hh */
    float *dec_b_ih;     /* (3H) */
    float *dec_b_hh;     /* (3H) */
    float *att_b_query;  /* (H)     directly after dec_b_hh */
    float *out_w;        /* (Vt, H) */
    float *out_b;        /* (Vt) */
} Params;

typedef struct {
    const char *name;
    long rows, cols;     /* cols = 1 for vectors */
} TensorShape;

/* Names and shapes in memory order (the order of Params' fields). */
void params_shapes(const ModelDims *d, TensorShape out[PARAM_TENSORS]);
long params_count(const ModelDims *d);
/* Pointers to each tensor of p, in the same order. */
void params_tensors(const Params *p, float *out[PARAM_TENSORS]);

typedef struct {
    ModelDims dims;
    long n_params;
    float *param_mem, *grad_mem;   /* n_params floats each */
    Params params, grads;
} Model;

/* Allocates parameters (zeroed) and gradients for these dimensions. */
void model_alloc(Model *m, const ModelDims *d);
/* PyTorch's default initialisation: embeddings N(0,1), GRU and Linear weights and biases
 * uniform(+-1/sqrt(fan_in)). */
void model_init_weights(Model *m, uint64_t seed);
void model_zero_grad(Model *m);
void model_free(Model *m);

/* Activations and their gradients for batches up to (B, S, T), allocated once: a
 * training step makes no allocation. */
typedef struct {
    int cap_B, cap_S, cap_T, mode;
    float *mem;
    /* encoder */
    float *xs;        /* (S, B, E) source embeddings */
    float *enc_gi, *enc_gh, *enc_rzn;   /* (S, B, 3H) */
    float *enc_h;     /* (S+1, B, H): enc_h[0] = 0, enc_h[t+1] = state after token t */
    float *keys;      /* (S, B, H) att_w_key h_j */
    /* decoder */
    float *x;         /* (T, B, E+H) decoder inputs [embedding; context] */
    float *dec_gi;    /* (T, B, 3H) */
    float *dec_gh;    /* (T, B, 4H) [W_hh s + b_hh | W_query s + b_query] */
    float *dec_rzn;   /* (T, B, 3H) */
    float *dec_h;     /* (T+1, B, H): dec_h[0] = s_0, dec_h[t+1] = s_t */
    float *attn;      /* (T, B, S) attention weights */
    float *logits;    /* (T, B, Vt); after a forward with gradients: dLoss/dlogits */
    /* backward work */
    float *d_dec_h;   /* (T, B, H) */
    float *d_dec_gi;  /* (T, B, 3H) */
    float *d_dec_gh;  /* (T, B, 4H) */
    float *d_ctx;     /* (B, H) */
    float *d_s;       /* (B, H) running dLoss/ds_{t} */
    float *d_keys;    /* (S, B, H) */
    float *d_enc;     /* (S, B, H) */
    float *d_emb;     /* (max(S,T), B, E) */
    float *d_enc_gi, *d_enc_gh;  /* (S, B, 3H) */
    float *d_h0;      /* (B, H) */
    float *work;      /* (S + H) */
    /* Label smoothing of the loss model_forward computes (loss.h); 0 = plain
     * cross-entropy. runstate_alloc sets it to 0, so a growing runstate_ensure does
     * too: the trainer sets it before each training step; held-out scoring leaves it 0. */
    float label_smoothing;
} RunState;

/* What the activations are kept for, which decides what is allocated:
 *   RUN_TRAIN   forward and backward
 *   RUN_SCORE   forward only (loss on held-out data): no backward buffers
 *   RUN_DECODE  step by step: also logits for one step only, (B, Vt) */
typedef enum { RUN_TRAIN, RUN_SCORE, RUN_DECODE } RunMode;

void runstate_alloc(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T);
void runstate_free(RunState *rs);
/* Grows rs (losing its contents) if (B, S, T) exceeds what it holds; rs may be zeroed,
 * and keeps the mode it was allocated with. */
void runstate_ensure(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T);

/* Teacher-forced forward pass (rs in RUN_TRAIN or RUN_SCORE mode). Returns the summed cross-entropy over the batch's
 * non-pad targets (divide by batch->n_tokens for the mean). With want_grad, the logits
 * buffer is replaced by dLoss/dlogits of the token-mean loss, ready for model_backward. */
double model_forward(Model *m, RunState *rs, const Batch *batch, int want_grad);
/* Accumulates the gradient of the token-mean loss into m->grads. */
void model_backward(Model *m, RunState *rs, const Batch *batch);

/* Pieces for step-by-step decoding (decode.c):
 * model_encode runs the encoder over batch->src and sets dec_h[0];
 * model_decoder_input puts tgt_emb[ids] into x[t] and the input projection into dec_gi[t];
 * model_decoder_step computes attention and s_t = dec_h[t+1] from dec_h[t]. */
void model_encode(Model *m, RunState *rs, const Batch *batch);
void model_decoder_input(Model *m, RunState *rs, int t, const int *ids, int B);
void model_decoder_step(Model *m, RunState *rs, const Batch *batch, int t);
#endif
