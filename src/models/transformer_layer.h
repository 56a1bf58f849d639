/* transformer_layer.h — the Transformer's encoder layer and decoder layer, each written
 * once, forward and backward, for every pass that runs them.
 *
 * Why: three passes run the same layers: inference over padded batches
 * (transformer_encode/decode), training over packed rows with dropout
 * (transformer_forward_train, transformer_backward) and incremental decoding, one
 * position per step with key/value caches (the Decoder). They differ only in how the
 * attention runs (a kernel of mha.h each) and in which buffers they keep; a TPass says
 * both, and the layers below read as the architecture does, top to bottom:
 *
 *   encoder layer  x = x + SelfAttn(LN1(x)); x = x + FFN(LN2(x))             (pre-norm)
 *                  x = LN1(x + SelfAttn(x)); x = LN2(x + FFN(x))             (post-norm)
 *   decoder layer  y = y + CausalSelf(LN1(y)); y = y + Cross(LN2(y), memory);
 *                  y = y + FFN(LN3(y))                                       (pre-norm)
 *                  y = LN1(y + CausalSelf(y)); y = LN2(y + Cross(y, memory));
 *                  y = LN3(y + FFN(y))                                       (post-norm)
 *
 * with dropout (training) where nn.Transformer has it: on each sub-layer's output before
 * its residual sum, on the attention probabilities (the pass's attend) and after the
 * feed-forward block's activation. Every tensor is (N, D): N rows of the pass (padded
 * time-major, packed, or one per decoding row), D = d_model.
 */
#ifndef TRANSFORMER_LAYER_H
#define TRANSFORMER_LAYER_H

#include "layers/mha.h"   /* defines: MhaWorkspace */
#include "models/model.h" /* defines: ModelDims, TLayer, LnWeights, AttWeights */

typedef enum { SUB_SELF, SUB_CROSS, SUB_FF } SubKind;

/* One sub-layer's buffers in a pass: what its forward pass writes and, in training,
 * keeps for the backward pass. A pass that keeps nothing gives every sub-layer the
 * same scratch. */
typedef struct {
    float *n;                /* (N, D) LN(x): pre-norm's input to f */
    float *y;                /* (N, D) f's output; post-norm: then x + f's output, LN's input */
    float *mean, *rstd;      /* (N) the layer norm's statistics */
    float *fh, *fa;          /* (N, ff) the feed-forward block's pre-activation and activation */
    unsigned char *rkeep;    /* (N, D) dropout keep masks (training): the residual branch's */
    unsigned char *fkeep;    /* (N, ff) the feed-forward block's */
    unsigned char *akeep;    /* (B, heads, Tq, Tk) the attention probabilities' */
    MhaWorkspace ws;         /* attention sub-layers of a training pass: what mha keeps */
    float *ws_mem;           /* the floats ws is carved from */
} SubBufs;

/* A layer's weights prepared for decoding (kernels/prepared.h): each attention's four
 * projections and the feed-forward block's two. */
typedef struct { PreparedWeight q, k, v, o; } PreparedAtt;
typedef struct {
    PreparedAtt self, cross;   /* cross: decoder layers only */
    PreparedWeight w1, w2;
} PreparedTLayer;

/* How a pass runs its layers. attend runs attention sub-layer `kind` (SUB_SELF or
 * SUB_CROSS) of layer l with weights w on in (rows, D), writing y (rows, D) (and, in
 * training, what its backward pass needs into u); attend_backward (training only)
 * adds its gradients into gw and dL/d(in) into d_in (written, not added: it starts
 * from zero), and for SUB_CROSS dL/d(memory) into the pass's own buffer. */
typedef struct TPass TPass;
struct TPass {
    const ModelDims *d;
    int rows;                /* N: the rows of the tensors the layers run on */
    float p;                 /* dropout probabilities (0: none; training passes only): the */
    float p_att, p_act;      /* residual's, the attention probabilities', the activation's */
    Rng *rng;                /* draws the dropout masks */
    void (*attend)(const TPass *ps, int l, SubKind kind, const AttWeights *w, const float *in, float *y, SubBufs *u);
    void (*attend_backward)(const TPass *ps, int l, SubKind kind, const AttWeights *w, AttWeights *gw,
                            const float *in, const float *dy, float *d_in, SubBufs *u);
    void *ctx;               /* the pass's own state, for attend */
    const PreparedTLayer *prep;  /* (layers) the pass's layers' weights prepared for
                                    decoding, or NULL (training) */
    float *d_n, *d_sum;      /* backward scratch (N, D) each */
    float *ff_work;          /* backward scratch (N, ff) */
};

/* Forward. x (N, D) in; mid, mid2 the streams between sub-layers and out the layer's
 * output (N, D) each. A pass that keeps nothing may give x for all of them (in place);
 * u[k] are the sub-layers' buffers, in order. */
void encoder_layer_forward(const TPass *ps, int l, const TLayer *w, const float *x, float *mid, float *out,
                           SubBufs *const u[2]);
void decoder_layer_forward(const TPass *ps, int l, const TLayer *w, const float *x, float *mid, float *mid2,
                           float *out, SubBufs *const u[3]);

/* Backward, after the forward pass with the same buffers (kept, not in place). ds
 * (N, D): in, dL/d(out); out, dL/dx. Gradients are added into g, the layer's
 * gradients (the model's, which the caller may write). */
void encoder_layer_backward(const TPass *ps, int l, const TLayer *w, TLayer *g, const float *x, const float *mid,
                            float *ds, SubBufs *const u[2]);
void decoder_layer_backward(const TPass *ps, int l, const TLayer *w, TLayer *g, const float *x, const float *mid,
                            const float *mid2, float *ds, SubBufs *const u[3]);

/* Dropout with byte masks: draw_keep fills keep (n) with 1 at probability 1 - p;
 * dropout draws keep and applies it to x, inverted (x * keep / (1 - p));
 * dropout_backward is dx = dy * keep / (1 - p), in place. */
void draw_keep(unsigned char *keep, long n, float p, Rng *rng);
void dropout(float *x, unsigned char *keep, long n, float p, Rng *rng);
void dropout_backward(float *dx, const unsigned char *keep, long n, float p);

/* The weights of an attention sub-layer as mha.h takes them; with pa (or NULL), their
 * prepared forms too. */
MhaParams att_params(const AttWeights *w);
MhaParams att_params_prepared(const AttWeights *w, const PreparedAtt *pa);
/* Those of attention sub-layer `kind` of layer l of a pass, with the pass's prepared
 * forms (TPass.prep) where it has them. */
MhaParams pass_att_params(const TPass *ps, int l, SubKind kind, const AttWeights *w);
#endif
