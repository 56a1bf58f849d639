/* model.h — the attention encoder-decoder family: parameters, activations, forward, backward.
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
 * scripts/reference_variants.py is the same family in PyTorch, and the specification.
 *
 * All activations are time-major, row (t*B + b). The parameters are one float array
 * carved into named tensors (Params); the gradients use the same struct over a second
 * array, so the optimizer is one loop. For the additive scores the query weights
 * directly follow the top decoder layer's recurrent weights (att_w_query after its
 * w_hh, att_b_query after its b_hh), so that the recurrent product and the attention
 * query are one matrix product with a (G*H + H, H) matrix.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stdint.h>

#include "data/batch.h" /* defines: Batch */
#include "base/util.h"  /* defines: Rng */

typedef enum { CELL_GRU, CELL_LSTM } CellKind;
typedef enum {
    ATT_BAHDANAU, ATT_LUONG_DOT, ATT_LUONG_GENERAL, ATT_LUONG_CONCAT,
    ATT_LOCAL_MONOTONIC, ATT_LOCAL_PREDICTIVE, ATT_KINDS
} AttentionKind;
/* model.type: the recurrent family, the Transformer (issue 17), or a sentence classifier
 * (issue 18: the recurrent encoder, a pooling layer (pooling.h) and a softmax over the
 * label set, whose labels are the target vocabulary after its four reserved ids). */
typedef enum { MODEL_RNN, MODEL_TRANSFORMER, MODEL_CLASSIFIER, MODEL_TYPES } ModelType;
typedef enum { ACT_RELU, ACT_GELU } Activation;
typedef enum { NORM_PRE, NORM_POST } NormPlacement;
#define MAX_LAYERS 8
/* The largest model.embed and model.hidden, and model.window: bounds that a config
 * (config.c) and a model file (modelfile.c) are both checked against. */
#define MODEL_MAX_WIDTH 8192
#define MODEL_MAX_WINDOW 1000

typedef struct {
    int src_vocab, tgt_vocab;
    int embed, hidden;      /* the attention width equals hidden */
    /* The options below are all 0 for the original model (one GRU layer, Bahdanau);
     * layers 0 means 1. */
    int cell;               /* CellKind */
    int layers;             /* 1 .. MAX_LAYERS, encoder and decoder alike */
    int bidirectional;      /* encoder only; hidden must be even */
    int attention;          /* AttentionKind */
    int input_feed;         /* Luong kinds only */
    int window;             /* D for local attention, >= 1 */
    int scaled;             /* divide dot-product scores by sqrt(hidden) */
    int tie_embeddings;     /* out_w = tgt_emb; needs embed == hidden */
    /* The Transformer's (type MODEL_TRANSFORMER; all 0 for the recurrent models):
     * embed is d_model, and hidden equals it. */
    int type;               /* ModelType */
    int heads;              /* attention heads, dividing embed */
    int ff;                 /* the feed-forward block's inner width */
    int activation;         /* Activation, in the feed-forward block */
    int norm;               /* NormPlacement */
    int enc_layers, dec_layers;  /* 1 .. MAX_LAYERS each */
    int share_src_emb;      /* src_emb is tgt_emb too: tied, with one vocabulary for both sides
                               (data.joint_vocab) */
    /* A classifier's (type MODEL_CLASSIFIER; 0 otherwise): the encoder is the recurrent
     * one above (embed, hidden, cell, layers, bidirectional); tgt_vocab is the label
     * set's size with the four reserved ids (model_classes). */
    int pooling;            /* Pooling (pooling.h) */
} ModelDims;

/* A classifier's number of classes: its label ids are VOCAB_SPECIALS (4) .. tgt_vocab-1,
 * class c being label id c + 4. */
static inline int model_classes(const ModelDims *d) { return d->tgt_vocab - 4; }

const char *attention_name(int kind);   /* "bahdanau", "luong_dot", ... */
int attention_kind(const char *name);   /* -1 if unknown */
int attention_is_luong(int kind);       /* every kind but bahdanau */

/* The rules the options must keep, each stated once, in one table (model.c) that a
 * config and a model file are checked against alike. A rule is about one option (key,
 * named as a config names it) and the options whose values decide it (depends):
 *   RULE_VALUE    the option's value must satisfy holds(d):
 *                 "model.hidden must be even for a bidirectional encoder, ..."
 *   RULE_APPLIES  the option means something only where holds(d):
 *                 "model.window applies only to local attention kinds".
 *                 A config may not give it elsewhere (config_check, which knows which
 *                 keys a config gave); ModelDims may not have it switched on elsewhere
 *                 (in_use; NULL for an option that is a size, not a switch).
 * text starts with the key, so that it reads whole in any message. config.c adds the
 * values ("(model.attention is "bahdanau")") and the remedy; modelfile.c prints text
 * for a file's ARCH section. New options (a Transformer's model.heads, its rule that
 * the heads divide model.embed, the keys that apply only to recurrent models) add
 * their rows to the same table. */
typedef enum { RULE_VALUE, RULE_APPLIES } RuleKind;
typedef struct {
    RuleKind kind;
    const char *key;                      /* "model.window" */
    const char *depends[2];               /* NULL-padded: {"model.attention"} */
    int (*holds)(const ModelDims *d);
    int (*in_use)(const ModelDims *d);    /* RULE_APPLIES: the option is switched on */
    const char *text;                     /* "model.window applies only to local attention kinds" */
    const char *remedy;                   /* RULE_APPLIES: what to choose for it to apply:
                                             "choose local_monotonic or local_predictive" */
} ModelRule;

/* The rules in the order they are checked; *n gets their number. */
const ModelRule *model_rules(int *n);
/* The first rule d breaks: a RULE_VALUE that does not hold, or a RULE_APPLIES whose
 * option is in use where it does not apply. NULL if d is a valid model. */
const ModelRule *model_rule_broken(const ModelDims *d);
/* The broken rule's text ("model.hidden must be even ..."), or NULL. */
const char *dims_problem(const ModelDims *d);

/* The weights of one recurrent layer (one direction), PyTorch's nn.GRU/nn.LSTM layout. */
typedef struct {
    float *w_ih;   /* (G*U, in) */
    float *w_hh;   /* (G*U, U) */
    float *b_ih;   /* (G*U) */
    float *b_hh;   /* (G*U) */
} RnnParams;

/* The Transformer's weights (model.type transformer), PyTorch's orientation: a weight
 * (out, in), used as y = x W^T + b; scripts/reference_transformer.py is their
 * specification and layout() their order. */
typedef struct { float *g, *b; } LnWeights;                          /* (d), (d) */
typedef struct { float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo; } AttWeights;  /* (d, d), (d) */
typedef struct { float *w1, *b1, *w2, *b2; } FfWeights;              /* (ff, d), (ff), (d, ff), (d) */
typedef struct {
    LnWeights ln1, ln2, ln3;   /* encoder layers: ln1, ln2; decoder layers: all three */
    AttWeights self, cross;    /* cross: decoder layers only */
    FfWeights ff;
} TLayer;

typedef struct {
    float *src_emb;                      /* (Vs, E) */
    RnnParams enc[MAX_LAYERS][2];        /* [layer][direction] */
    float *bridge_w[MAX_LAYERS];         /* (H, H), bidirectional only */
    float *bridge_b[MAX_LAYERS];         /* (H) */
    float *tgt_emb;                      /* (Vt, E) */
    float *att_w_key, *att_v;            /* (H, H), (H): additive scores */
    float *att_w;                        /* (H, H): general and local scores */
    float *att_w_pos, *att_v_pos;        /* (H, H), (H): predictive local */
    float *att_w_out;                    /* (H, 2H): Luong's attentional state */
    RnnParams dec[MAX_LAYERS];
    float *att_w_query, *att_b_query;    /* (H, H), (H): additive scores */
    float *out_w;                        /* (Vt, H), or tgt_emb when tied */
    float *out_b;                        /* (Vt) */
    /* model.type classifier: src_emb and enc as above, then the attention pooling's
     * pool_w (H) and pool_b (1) (pooling attention only), and out_w (C, H), out_b (C). */
    float *pool_w, *pool_b;
    /* model.type transformer (src_emb, tgt_emb, out_w and out_b as above, E = d) */
    TLayer tenc[MAX_LAYERS], tdec[MAX_LAYERS];
    LnWeights tenc_ln, tdec_ln;          /* the final layer norms, pre-norm only */
} Params;

#define MAX_RNN_TENSORS (4 + 8 * MAX_LAYERS + 2 * MAX_LAYERS + 6 + 4 * MAX_LAYERS + 4)
#define MAX_TRANSFORMER_TENSORS (8 + 16 * MAX_LAYERS + 26 * MAX_LAYERS)
#define MAX_TENSORS (MAX_RNN_TENSORS > MAX_TRANSFORMER_TENSORS ? MAX_RNN_TENSORS : MAX_TRANSFORMER_TENSORS)
typedef struct {
    char name[48];
    long rows, cols;     /* cols = 1 for vectors */
} TensorShape;

/* Names and shapes in memory order; returns the number of tensors. */
int params_shapes(const ModelDims *d, TensorShape out[MAX_TENSORS]);
long params_count(const ModelDims *d);
/* Pointers to each tensor of p, in the same order; returns the number of tensors. */
int params_tensors(const Params *p, const ModelDims *d, float *out[MAX_TENSORS]);

/* grad_mem has MODEL_GRAD_SPARE floats after the n_params gradients that the model
 * never reads or writes (model_zero_grad leaves them too): a data-parallel training
 * step puts its own figures there (its loss, a stop request), so that one sum over the
 * ranks carries them along with the gradients (train.c, dist.h). */
#define MODEL_GRAD_SPARE 4

typedef struct {
    ModelDims dims;
    long n_params;
    float *param_mem;   /* n_params floats */
    float *grad_mem;    /* n_params + MODEL_GRAD_SPARE floats */
    Params params, grads;
} Model;

/* Allocates parameters (zeroed) and gradients for these dimensions (dims_problem must
 * be NULL). */
void model_alloc(Model *m, const ModelDims *d);
/* PyTorch's default initialisation: embeddings N(0,1), recurrent and linear weights
 * uniform(+-1/sqrt(units)). */
void model_init_weights(Model *m, uint64_t seed);
void model_zero_grad(Model *m);
void model_free(Model *m);

/* The activations of one recurrent layer (one direction) over n steps. */
typedef struct {
    float *h, *c;       /* (n+1, B, U) states (c: LSTM only); see model.c for the order */
    float *gi, *gh;     /* (n, B, G*U) pre-activations; gh of the decoder's top layer with an
                           additive score is (n, B, G*H + H): [W_hh s + b_hh | query] */
    float *cache;       /* (n, B, G*U) gate values kept for backward */
} RnnRun;

/* Activations and their gradients for batches up to (B, S, T), allocated once: a
 * training step makes no allocation. */
typedef struct {
    int cap_B, cap_S, cap_T, mode;
    float *mem;
    int *src_len;       /* (B) real source lengths */
    /* encoder */
    float *enc_x[MAX_LAYERS];     /* (S, B, in) layer inputs as fed (after dropout) */
    float *enc_drop[MAX_LAYERS];  /* (S, B, in) dropout multipliers (training) */
    RnnRun enc[MAX_LAYERS][2];
    float *enc_out[MAX_LAYERS];   /* (S, B, H) layer outputs; enc_out[L-1] is the memory
                                     (one direction: points into enc[l][0].h, set by model_encode) */
    float *memory;                /* (S, B, H) what the attention reads: enc_out[L-1], or for a
                                     packed batch its output unpacked into batch order */
    float *mem_batch;             /* (S, B, H) that unpacked memory */
    float *enc_work;              /* (S*B + 2B, H/dirs) the packed layers' scratch */
    float *bridge_in;             /* (L, B, H) [h_fwd; h_rev] final states (bidirectional) */
    float *keys;                  /* (S, B, H) W h_j for the scores that have a W */
    /* decoder */
    float *dec_x[MAX_LAYERS];     /* (T, B, in) layer inputs; layer 0 [embedding; ctx or o_{t-1}] */
    float *dec_drop[MAX_LAYERS];  /* (T, B, E or H) dropout multipliers (training) */
    RnnRun dec[MAX_LAYERS];
    float *attn;                  /* (T, B, S) attention weights */
    float *query;                 /* (T, B, H) luong_concat: W_query s_t + b_query */
    float *pos_hidden, *pos;      /* (T, B, H) tanh(W_p s_t), (T, B) p_t: local attention */
    float *cat;                   /* (T, B, 2H) [c_t; s_t], Luong kinds */
    float *out;                   /* (T, B, H) o_t = tanh(W_out cat), Luong kinds */
    float *logits;    /* (T, B, Vt); after a forward with gradients: dLoss/dlogits */
    /* backward work */
    float *d_out;     /* (T, B, H) dLoss/do_t */
    float *d_pre;     /* (T, B, H) dLoss/d(W_out cat), Luong kinds */
    float *d_query;   /* (T, B, H) dLoss/d query, luong_concat */
    float *d_pos;     /* (T, B, H) dLoss/d(W_p s_t), predictive */
    float *d_dgi[MAX_LAYERS], *d_dgh[MAX_LAYERS];  /* (T, B, G*H [+H]) */
    float *d_s[MAX_LAYERS], *d_c[MAX_LAYERS];      /* (B, H) carries */
    float *d_feed;    /* (B, H) dLoss/do_{t-1} through input feeding */
    float *d_ctx;     /* (B, H) */
    float *d_cat;     /* (B, 2H) */
    float *d_step;    /* (B, H) */
    float *d_keys;    /* (S, B, H) */
    float *d_enc;     /* (S, B, H) dLoss/d(layer output), reused per layer */
    float *d_encp;    /* (N, H) the same for a packed batch, in the encoder's packed order */
    float *d_hfin;    /* (B, H) dLoss/d(final encoder states) in the encoder's row order */
    float *d_dir[2];  /* (S, B, H/2) per-direction parts (bidirectional) */
    float *d_x, *d_x2; /* (max(S,T), B, max(E,H)) input gradients */
    float *d_enc_gi, *d_enc_gh;  /* (S, B, G*H) */
    float *d_h0, *d_c0, *d_cfin;  /* (B, H) */
    float *work;      /* (S + H) */
    /* Training options, set by the caller after allocation (zero = off). */
    float dropout;          /* probability of zeroing, training mode only */
    float attention_dropout;   /* the Transformer's on the attention probabilities, */
    float activation_dropout;  /* and after the feed-forward activation (TDropout) */
    Rng rng;                /* draws the dropout masks */
    float label_smoothing;
    long loss_tokens;       /* the target tokens the loss is a mean over; 0: the batch's own
                               n_tokens. A data-parallel rank computes a shard of a batch
                               and sets the whole batch's count, so that the ranks'
                               gradients sum to the gradient of the whole batch's mean */
    float sample_prob;      /* probability of feeding the model's own best word instead of
                               the gold previous one: 1 - train.teacher_forcing (0 = pure
                               teacher forcing) */
    int dropping;           /* set by model_forward: dropout is on for this pass */
    int sampling;           /* set by model_forward: some inputs are the model's own */
    int *fed;               /* (T, B) the words fed to the decoder when sampling */
    /* model.type transformer: its training pass's activations (transformer.h), and the
     * batch's lengths */
    struct TRun *tr;
    int *tr_src_len, *tr_tgt_len;   /* (B) */
    /* model.type classifier: the pooling's activations (pooling.h), in batch order */
    float *pool_attn, *pool_score;  /* (B, S) attention weights a_t and scores e_t */
    int *pool_arg;                  /* (B, H) max pooling's positions */
    float *pooled;                  /* (B, H) the pooled vector, after dropout (training) */
    float *pool_drop;               /* (B, H) its dropout multipliers */
    float *d_pooled;                /* (B, H) */
    const float *class_weight;      /* (C) training loss weight per class, or NULL (all 1); the
                                       caller's */
    int attn_layer;         /* decoding a Transformer: the decoder layer (1-based) whose
                               cross-attention, averaged over heads, is the alignment; 0:
                               the last. Survives runstate_ensure. */
} RunState;

/* What the activations are kept for, which decides what is allocated:
 *   RUN_TRAIN   forward and backward
 *   RUN_SCORE   forward only (loss on held-out data): no backward buffers
 *   RUN_DECODE  step by step: also logits for one step only, (B, Vt) */
typedef enum { RUN_TRAIN, RUN_SCORE, RUN_DECODE } RunMode;

/* Allocates rs (whatever it held) with every training option off. */
void runstate_alloc(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T);
void runstate_free(RunState *rs);
/* Grows rs (losing its activations, keeping the training options) if (B, S, T)
 * exceeds what it holds; rs may be zeroed (with options set), and keeps the mode it
 * was allocated with. */
void runstate_ensure(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T);

/* Teacher-forced forward pass (rs in RUN_TRAIN or RUN_SCORE mode). Returns the summed
 * cross-entropy over the batch's non-pad targets (divide by batch->n_tokens for the
 * mean). With want_grad, the logits buffer is replaced by dLoss/dlogits of the
 * token-mean loss (the mean over rs->loss_tokens when set), ready for model_backward.
 * Dropout, label smoothing and sampled decoder inputs (sample_prob > 0) apply only with
 * want_grad in RUN_TRAIN mode: held-out scoring is the plain model and loss.
 * A classifier's: the summed cross-entropy of its examples' labels (batch->label;
 * weighted by rs->class_weight in training), one target per example (n_tokens = B),
 * with the logits (B, C) in rs->logits and, for attention pooling, the weights in
 * rs->pool_attn; in RUN_DECODE mode (classifying a source-only batch) the loss is 0. */
double model_forward(Model *m, RunState *rs, const Batch *batch, int want_grad);
/* The batch layout the model trains on: packed for the recurrent models (packseq.h),
 * padded and time-major for the Transformer, which attends over whole sentences. */
void model_fill_batch(const Model *m, Batch *batch, const Example *ex, const int *idx, int n);
/* The most likely word of a logits row (V), never <pad> or <sos>: the first index of
 * the maximum. Greedy decoding and scheduled sampling both choose with it. */
int best_word(const float *logits, int V);
/* Accumulates the gradient of the token-mean loss into m->grads. */
void model_backward(Model *m, RunState *rs, const Batch *batch);

/* Pieces for step-by-step decoding (decode.c):
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
/* The encoder memory h_1..h_S, (S, B, H). */
const float *model_memory(const Model *m, const RunState *rs);
#endif
