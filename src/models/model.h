/* model.h — the model interface: what every model family is, and what generic code
 * (training, scoring, decoding, the model file, `nmt info`) may ask of a model.
 *
 * nmt has several model families: the recurrent encoder-decoder (models/rnn.h), the
 * Transformer (models/transformer.h) and the sentence classifier (models/classifier.h).
 * They share this header's types:
 *   ModelDims  the hyper-parameters of any family (each family reads its own fields);
 *   Params     the weights, as named tensors carved out of one float array; the
 *              gradients are the same struct over a second array, so the optimizer is
 *              one loop;
 *   Model      dimensions, weights and gradients;
 *   RunState   the activations of one batch shape, allocated once per shape.
 * What differs between families is a table of operations, a ModelFamily (below): the
 * tensor layout, the run state, the batch layout, the teacher-forced forward and
 * backward passes, the Decoder the searches drive (models/decoder.h), what `nmt info`
 * says, and the model file section of the family's own fields. The registry
 * (models/registry.c) maps model.type to its family; the generic functions at the end
 * of this header (model_alloc, model_forward, ...) go through it. Generic code asks a
 * family (model_family) or one of its properties (model_classifies), never model.type.
 * Adding a family, or a variant of one (another precision), is one more ModelType and
 * registry row, and the family's own files.
 *
 *     Model m;
 *     model_alloc(&m, &dims);                  // dims_problem(&dims) == NULL
 *     model_init_weights(&m, seed);
 *     RunState rs = {0};
 *     runstate_ensure(&rs, &m.dims, RUN_TRAIN, B, S, T);
 *     model_fill_batch(&m, &batch, examples, idx, B);
 *     double loss = model_forward(&m, &rs, &batch, 1);    // summed; / batch.n_tokens
 *     model_zero_grad(&m);   model_backward(&m, &rs, &batch);   // then the optimizer
 *
 * The recurrent family's architecture (the attention kinds and their options below) is
 * described in models/rnn.h, the Transformer's in models/transformer.h, the
 * classifier's in models/classifier.h.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "data/batch.h"     /* defines: Batch, Example */
#include "models/decoder.h" /* defines: Decoder */
#include "base/util.h"      /* defines: Rng */
#include "kernels/prepared.h" /* defines: ComputeType */
#include "models/shortlist.h" /* defines: Shortlist */
#include "text/vocab.h"     /* defines: Vocab */

/* ---------------------------------------------------------------- dimensions */

typedef enum { CELL_GRU, CELL_LSTM } CellKind;
typedef enum {
    ATT_BAHDANAU, ATT_LUONG_DOT, ATT_LUONG_GENERAL, ATT_LUONG_CONCAT,
    ATT_LOCAL_MONOTONIC, ATT_LOCAL_PREDICTIVE, ATT_KINDS
} AttentionKind;
/* model.type: one per family, numbered as the registry (registry.c) lists them and as
 * model files store them: the recurrent family, the Transformer (issue 17), or a
 * sentence classifier (issue 18: the recurrent encoder, a pooling layer (pooling.h)
 * and a softmax over the label set, whose labels are the target vocabulary after its
 * four reserved ids). MODEL_TYPE_NAMES is model.type's values in a config, in order. */
typedef enum { MODEL_RNN, MODEL_TRANSFORMER, MODEL_CLASSIFIER, MODEL_TYPES } ModelType;
#define MODEL_TYPE_NAMES "rnn|transformer|classifier"
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
    int bag_of_words;       /* the bag-of-words term in the logits (bagofwords.h) */
} ModelDims;

/* A classifier's number of classes: its label ids are VOCAB_SPECIALS (4) .. tgt_vocab-1,
 * class c being label id c + 4. */
static inline int model_classes(const ModelDims *d) { return d->tgt_vocab - 4; }

const char *attention_name(int kind);   /* "bahdanau", "luong_dot", ... */
int attention_kind(const char *name);   /* -1 if unknown */
int attention_is_luong(int kind);       /* every kind but bahdanau */

/* The rules the options must keep, each stated once, in one table (rules.c) that a
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
 * for a file's ARCH section. Which family's keys apply is asked of the family
 * (ModelFamily.options, .task), so that a new family of an existing kind needs no
 * new rule. */
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

/* ---------------------------------------------------------------- parameters */

/* The weights of one recurrent layer (one direction), PyTorch's nn.GRU/nn.LSTM layout. */
typedef struct {
    float *w_ih;   /* (G*U, in) */
    float *w_hh;   /* (G*U, U) */
    float *b_ih;   /* (G*U) */
    float *b_hh;   /* (G*U) */
} RnnParams;

/* The Transformer's weights (model.type transformer), PyTorch's orientation: a weight
 * (out, in), used as y = x W^T + b; scripts/reference/reference_transformer.py is their
 * specification and transformer_layout() their order. */
typedef struct { float *g, *b; } LnWeights;                          /* (d), (d) */
typedef struct { float *wq, *bq, *wk, *bk, *wv, *bv, *wo, *bo; } AttWeights;  /* (d, d), (d) */
typedef struct { float *w1, *b1, *w2, *b2; } FfWeights;              /* (ff, d), (ff), (d, ff), (d) */
typedef struct {
    LnWeights ln1, ln2, ln3;   /* encoder layers: ln1, ln2; decoder layers: all three */
    AttWeights self, cross;    /* cross: decoder layers only */
    FfWeights ff;
} TLayer;

/* Every family's named tensors: a family points the ones it has (its layout) and
 * leaves the others NULL. */
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
    float *bow_w;                        /* (Vs, C): model.bag_of_words only, after out_b */
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

/* A family's tensors in memory order, each with its slot in a Params and how it is
 * initialised: one enumeration (the family's layout op) serves shapes, pointers and
 * initialisation. */
typedef struct {
    int n;
    TensorShape shape[MAX_TENSORS];
    float **slot[MAX_TENSORS];
    int units[MAX_TENSORS];   /* fan-in of a uniform init; 0 for embeddings (normal init);
                                 INIT_ONES, INIT_ZEROS for layer norms' gains and biases */
    long fan_out[MAX_TENSORS];  /* a Xavier init's fan-out: rows (param_add's), or what the
                                   family sets (the Transformer's Wq, Wk, Wv: 3 x rows) */
} ParamLayout;
enum { INIT_ONES = -1, INIT_ZEROS = -2 };
/* Appends a (rows, cols) tensor named by fmt with sfx (printf: fmt has one %s) whose
 * pointer goes to *slot, its fan-out rows. */
void param_add(ParamLayout *lo, float **slot, long rows, long cols, int units, const char *fmt, const char *sfx);

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

/* The weights of a model read for int8 decoding from a file with int8 weights
 * (modelfile_read_decoding): the matrices that decoding reads only through int8
 * products (ModelFamily.int8_only), kept as the file's int8 rows instead of being
 * dequantized into their float weights, which are left unwritten (and so cost no
 * memory). model_prepare_weight packs them as they are; anything that would read their
 * float weights first writes them (model_materialize). */
typedef struct {
    float *at;           /* the tensor's float weights, in param_mem: unwritten */
    long rows, cols;
    int8_t *q;           /* (rows, cols) */
    float *scale;        /* (rows) */
    int lookup;          /* an embedding table: kept after preparing, its rows read one
                            by one (model_embed) */
} StoredInt8;
typedef struct {
    int n;
    StoredInt8 t[MAX_TENSORS];
} StoredInt8s;

typedef struct {
    ModelDims dims;
    long n_params;
    float *param_mem;   /* n_params floats */
    float *grad_mem;    /* n_params + MODEL_GRAD_SPARE floats */
    Params params, grads;
    /* The weights prepared for decoding by model_prepare_decoding (the family's own
     * struct: packed or int8 copies, kernels/prepared.h), or NULL: training and
     * scoring never have them, and the products then read params as they are. */
    void *prepared;
    ComputeType compute_type;   /* what prepared holds */
    int floats_dropped;         /* model_drop_prepared_floats has run: m only decodes */
    /* Decoding's vocabulary shortlist (shortlist.h), or NULL: every target word. The
     * command's, shared read-only; training and scoring never read it. */
    const Shortlist *shortlist;
    StoredInt8s *stored_int8;   /* NULL, or what modelfile_read_decoding kept as int8 */
} Model;

/* Allocates parameters (zeroed) and gradients for these dimensions (dims_problem must
 * be NULL). */
void model_alloc(Model *m, const ModelDims *d);
/* The family's initialisation (ModelFamily.init): PyTorch's defaults, embeddings
 * N(0,1), recurrent and linear weights uniform(+-1/sqrt(units)); or Xavier's. */
void model_init_weights(Model *m, uint64_t seed);
/* Fine-tuning with a grown vocabulary (train.extend_vocab): copies every weight of
 * `from` into `to`, a model of the same family and architecture whose vocabularies may
 * be larger (the old ids first): a tensor of the same shape whole, a tensor with a row
 * per vocabulary entry (embeddings, the output layer and its bias) its old rows, the
 * new rows left as they are (model_init_weights: the family's initialisation). 0, or -1
 * with what does not fit in why[len] (another architecture, a smaller vocabulary). */
int model_grow_from(Model *to, const Model *from, char *why, size_t len);
void model_zero_grad(Model *m);
/* Frees the weights, gradients and prepared weights. */
void model_free(Model *m);
/* Prepares m's weights for decoding with products of this type (after the weights are
 * final: loaded from a file; they must not change while prepared): COMPUTE_FLOAT32
 * gives the very outputs of the unprepared model, faster; COMPUTE_INT8 quantizes the
 * products' weights (ModelFamily.prepare says which). A family without a prepare op
 * decodes as it is. Replaces what m had prepared. Aborts only when out of memory. */
void model_prepare_decoding(Model *m, ComputeType type);
/* Frees what model_prepare_decoding made: m decodes from its weights as they are. */
void model_unprepare_decoding(Model *m);
/* A family's prepare op's one way to prepare a weight (w (N, K), row stride ld, a block
 * of m's weights): from the stored int8 rows when w is exactly one of m->stored_int8's
 * tensors and int8 is asked for (int8_matrix_init on the file's integers: what
 * quantizing their float weights would give), else prepared_weight_init on the float
 * weights, written first from the stored rows wherever the block overlaps one. */
void model_prepare_weight(const Model *m, PreparedWeight *pw, const float *w, int ld, int N, int K,
                          ComputeType type);
/* Rows ids[0..n) of the embedding table (one of m's tensors, E wide) into out (row
 * stride ld): the table's float rows, or, for a table kept as int8 rows (an int8 file
 * read for decoding), scale x q, the very floats model_materialize would write. */
void model_embed(const Model *m, float *out, int ld, const float *table, const int *ids, int n, int E);
/* Writes the float weights of every tensor m->stored_int8 holds (scale x q) and frees
 * it: m is then an ordinary model. */
void model_materialize(Model *m);

/* After model_prepare_decoding(m, COMPUTE_INT8), for a run that only decodes (nmt
 * translate, nmt serve; not nmt eval, whose loss reads the float weights): gives back
 * the memory of the float weights that decoding no longer reads (ModelFamily.int8_only)
 * and sets their Params pointers to NULL, so that a read would fault, never see zeros.
 * m then decodes as prepared and nothing else: it cannot be prepared again, trained,
 * scored or written. Nothing happens for another compute type or a family without the
 * op. */
void model_drop_prepared_floats(Model *m);
/* view becomes m's dimensions and weights (shared: m's, not copied) with gradients of
 * its own (zeroed, n_params + MODEL_GRAD_SPARE floats): a data-parallel worker's model
 * (train/parallel.h), whose backward pass adds into its own gradients while the others
 * add into theirs. model_free_view frees only what the view owns; m must outlive it. */
void model_view(Model *view, const Model *m);
void model_free_view(Model *view);

/* ---------------------------------------------------------------- activations */

/* The activations of one recurrent layer (one direction) over n steps. */
typedef struct {
    float *h, *c;       /* (n+1, B, U) states (c: LSTM only); see rnn.c for the order */
    float *gi, *gh;     /* (n, B, G*U) pre-activations; gh of the decoder's top layer with an
                           additive score is (n, B, G*H + H): [W_hh s + b_hh | query] */
    float *cache;       /* (n, B, G*U) gate values kept for backward */
} RnnRun;

/* The output layer's weight gradient dW += dy^T x, left by a backward pass to its caller
 * (RunState.defer_output): dy (rows, n) with row stride n, x (rows, k) with row stride
 * k, both in the run state, unchanged until its next forward pass. rows 0: nothing. */
typedef struct {
    const float *dy, *x;
    int rows, n, k;
} DeferredGrads;

/* Activations and their gradients for batches up to (B, S, T), allocated once: a
 * training step makes no allocation. The fields are the recurrent family's and the
 * classifier's; another family keeps its own activations behind `own`. */
typedef struct {
    int cap_B, cap_S, cap_T, mode;
    int step_ring;      /* decoding (RUN_DECODE) keeps the decoder's rows of the last
                           step_ring steps only: step t's at slot t % step_ring, the state
                           after it at (t + 1) % step_ring; 0: every step's (training and
                           scoring read them all backward) */
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
    /* A family's own state, freed with own_free by runstate_free: the Transformer's
     * training activations (transformer.h); the recurrent families' weights packed for
     * a training or scoring pass's steps (rnn.h's rnn_pack_steps), or NULL. */
    void *own;
    void (*own_free)(void *own);
    /* The model's weights packed for this training pass's products (ModelFamily.repack:
     * the float32 form of prepare, packed from the weights as they are now), or NULL:
     * set by data-parallel training for a step whose shards are small enough to use
     * them (train/parallel.c), the pass's products give the same bits either way. The
     * caller's; shared read-only by the workers. */
    const void *packs;
    /* Set by data-parallel training (train/parallel.c): the backward pass adds every
     * gradient but the output layer's weight's (the largest), whose product it leaves
     * in `output` for the caller to compute once for all the workers. */
    int defer_output;
    DeferredGrads output;
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

/* to takes from's training options (the dropouts, label smoothing, sample_prob,
 * loss_tokens, class weights, attn_layer), not its random stream: a data-parallel
 * worker's run state computing its part of a step (train/parallel.h). */
void runstate_copy_options(RunState *to, const RunState *from);

/* The recurrent encoder's memory h_1..h_S (S, B, H) in rs, after a forward pass of a
 * model with that encoder (the recurrent family, the classifier): rs->memory. */
const float *model_memory(const Model *m, const RunState *rs);

/* ---------------------------------------------------------------- the families */

/* What a family is for: generic code asks this, not model.type. */
typedef enum { MODEL_TRANSLATES, MODEL_CLASSIFIES } ModelTask;
/* The groups of model keys a family reads (ModelFamily.options), which decide the
 * rules' "applies only to": the recurrent encoder's (model.hidden, cell, layers,
 * bidirectional, and for translation the attention keys), the Transformer's
 * (model.heads, ff, activation, norm, encoder_layers, decoder_layers), pooling. */
enum { MODEL_KEYS_RECURRENT = 1, MODEL_KEYS_TRANSFORMER = 2, MODEL_KEYS_POOLING = 4 };
/* How model_init_weights fills the tensors: PyTorch's defaults (nn.Linear, nn.GRU:
 * uniform within 1/sqrt(fan-in); nn.Embedding: N(0, 1)), or as fairseq, OpenNMT-py and
 * nn.Transformer's reset_parameters do it: Xavier-uniform matrices (within
 * sqrt(6 / (fan-in + fan-out)), the fan-out ParamLayout's), zero biases, and embeddings
 * N(0, 1/d_model). */
typedef enum { INIT_PYTORCH, INIT_XAVIER } ParamInit;

/* One field of a family's model file section: an int of ModelDims, stored as i64, with
 * the values a reader accepts and what a file without the section reads as. */
typedef struct {
    const char *name;
    size_t offset;          /* offsetof(ModelDims, ...) */
    int64_t min, max, absent;
} ModelField;
/* A family's own section of the model file (modelfile.h), after ARCH: its tag and its
 * fields in file order. A file holds at most one family's section; a file without
 * any holds a recurrent model (as files before the other families do). */
typedef struct {
    char tag[5];            /* "TRFM" */
    const ModelField *fields;
    int n;
    int required;           /* the fields every file holds (0: all n): a field added later
                               reads as its `absent` from an older file, and is not
                               written while it has that value, so an older nmt reads
                               the file as long as it does not use the new option */
} ModelSection;

/* What `nmt info --json` says of a model's architecture, one fact at a time, in order
 * (files/info.c writes them as JSON members). */
typedef struct {
    void *ctx;
    void (*text)(void *ctx, const char *key, const char *value);
    void (*number)(void *ctx, const char *key, double value);
    void (*flag)(void *ctx, const char *key, int value);
    void (*texts)(void *ctx, const char *key, const char *const *values, int n);
} ModelFacts;

/* A family: its table of operations. Every member is set unless it says NULL. */
typedef struct ModelFamily {
    ModelType type;         /* model.type's number (model files store it) */
    const char *name;       /* model.type's value in a config: "rnn", "transformer", ... */
    const char *title;      /* in messages: "recurrent model", "Transformer", "classifier" */
    ModelTask task;
    unsigned keys;          /* the model keys it reads: MODEL_KEYS_* */
    const char *size_keys;  /* the keys that make it smaller, for a message:
                               "model.embed, model.hidden or model.layers" */
    /* Dimensions: d holds every model key's value as a config gives it (with type
     * set); keeps what the family reads, zeroes the rest, derives what it implies
     * (the Transformer's hidden = embed). */
    void (*settle_dims)(ModelDims *d);
    /* Parameters: the tensors in memory order (appended to lo, which starts empty),
     * pointing into p's slots; and how they are initialised. */
    void (*layout)(const ModelDims *d, Params *p, ParamLayout *lo);
    ParamInit init;
    /* Activations: allocates rs (zeroed by the caller; runstate_alloc sets mode and
     * the capacities) for batches up to (B, S, T). */
    void (*runstate_alloc)(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T);
    /* Training and scoring: the batch layout it trains on, the teacher-forced forward
     * pass and the backward pass (model_fill_batch, model_forward, model_backward). */
    void (*fill_batch)(Batch *batch, const Example *ex, const int *idx, int n);
    double (*forward)(Model *m, RunState *rs, const Batch *batch, int want_grad);
    void (*backward)(Model *m, RunState *rs, const Batch *batch);
    /* Decoding (NULL for a classifier): a Decoder over m that decodes with rs (grown
     * as needed, RUN_DECODE), to be closed with decoder_close. */
    Decoder (*decoder)(Model *m, RunState *rs);
    /* Decoding's prepared weights (Model.prepared; NULL: the family prepares nothing):
     * prepare makes them from m's weights, prepared_free frees them. */
    void *(*prepare)(const Model *m, ComputeType type);
    void (*prepared_free)(void *prepared);
    /* Training's packs (RunState.packs): packs prepare's float32 weights again from m's
     * weights as they are now, rows and columns (the columns' buffers made at the
     * first call, then reused: no allocation after it); only weights part, part + parts,
     * part + 2 parts, ... of the family's list, so that parts threads share the work.
     * NULL: the family's training passes read no packs. */
    void (*repack)(const Model *m, void *prepared, int part, int parts);
    /* The weights that m, once prepared as int8, reads only in their prepared form
     * wherever it decodes (its Decoder, attention_heads): their slots in m->params and
     * their sizes (floats); returns how many. NULL: none (model_drop_prepared_floats). */
    int (*int8_only)(Model *m, float **slot[MAX_TENSORS], long n[MAX_TENSORS]);
    /* Each attention head's weights while the model reads src (S ids) and emits words
     * (n ids), decoder layer `layer` (1-based; 0: the last): attn (dims.heads, n, S).
     * NULL: the family has one attention, which the Decoder reports. */
    void (*attention_heads)(const Model *m, const int *src, int S, const int *words, int n, int layer,
                            float *attn);
    /* What `nmt info` says of the architecture: the "model:" and "sizes:" lines (and a
     * classifier's "labels:"), and the same as facts for --json. tgt is the model's
     * target vocabulary (a classifier's labels). */
    void (*describe)(const ModelDims *d, long n_params, const Vocab *tgt, FILE *out);
    void (*facts)(const ModelDims *d, const Vocab *tgt, const ModelFacts *out);
    /* Its model file section; NULL: none (the recurrent family, whose fields are ARCH's). */
    const ModelSection *file_section;
} ModelFamily;

/* ---------------------------------------------------------------- the registry (registry.c) */

/* The family of d->type, or NULL for a type no family has. */
const ModelFamily *model_family(const ModelDims *d);
/* The family of a config's model.type ("rnn", ...), or NULL. */
const ModelFamily *model_family_named(const char *name);
/* All families, in ModelType order; *n gets their number. */
const ModelFamily *const *model_families(int *n);
/* d's family classifies sentences (a classifier) rather than translating them. */
int model_classifies(const ModelDims *d);

/* ---------------------------------------------------------------- through the family */

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
/* Accumulates the gradient of the token-mean loss into m->grads (but the output layer's
 * weight's, with rs->defer_output: see RunState). */
void model_backward(Model *m, RunState *rs, const Batch *batch);
/* For the families' backward passes: the output layer's gradients over `rows` rows,
 * gw (n, k) += dy^T x and gb (n) += dy's column sums (linalg.h's linear_grads); with
 * defer (non-NULL) only gb's, dW's product recorded in *defer instead. */
void model_output_grads(DeferredGrads *defer, float *gw, float *gb, const float *dy, const float *x, int rows, int n,
                        int k);
#endif
