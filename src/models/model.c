#include "models/model.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/batch.h"       /* defines: batch_fill, batch_fill_packed */
#include "layers/attention.h" /* defines: attention_bahdanau_*, attention_dot_*, DotAttention */
#include "layers/embedding.h" /* defines: embedding_forward/_backward */
#include "layers/gru.h"       /* defines: GruWeights, gru_sequence_*, gru_gates_* */
#include "kernels/linalg.h"    /* defines: matmul_bias, matmul_add, linear_grads */
#include "layers/loss.h"      /* defines: softmax_xent */
#include "layers/lstm.h"      /* defines: LstmWeights, lstm_sequence_*, lstm_gates_* */
#include "layers/pooling.h"   /* defines: Pooling, pooling_*_forward/_backward */
#include "models/transformer.h" /* defines: trun_new, transformer_forward_train, transformer_backward */
#include "base/util.h"      /* defines: xmalloc, Rng */
#include "text/vocab.h"     /* defines: VOCAB_PAD, VOCAB_UNK, VOCAB_EOS */

/* ---------------------------------------------------------------- dimensions */

static const char *const attention_names[ATT_KINDS] = {
    "bahdanau", "luong_dot", "luong_general", "luong_concat", "local_monotonic", "local_predictive",
};

const char *attention_name(int kind) { return kind >= 0 && kind < ATT_KINDS ? attention_names[kind] : "?"; }

int attention_kind(const char *name)
{
    for (int k = 0; k < ATT_KINDS; k++)
        if (strcmp(name, attention_names[k]) == 0) return k;
    return -1;
}

int attention_is_luong(int kind) { return kind != ATT_BAHDANAU; }

static int is_local(int kind) { return kind == ATT_LOCAL_MONOTONIC || kind == ATT_LOCAL_PREDICTIVE; }
static int is_additive(int kind) { return kind == ATT_BAHDANAU || kind == ATT_LUONG_CONCAT; }
/* The scores s . (W h_j): keys are W h_j, computed once per batch. */
static int has_att_w(int kind) { return kind == ATT_LUONG_GENERAL || is_local(kind); }

/* ---------------------------------------------------------------- the rules */

static int known_cell(const ModelDims *d) { return d->cell == CELL_GRU || d->cell == CELL_LSTM; }
static int known_attention(const ModelDims *d) { return d->attention >= 0 && d->attention < ATT_KINDS; }
/* layers 0 means 1 in a ModelDims (see above); a config and a file say 1 to 8. */
static int layers_in_range(const ModelDims *d) { return d->layers >= 0 && d->layers <= MAX_LAYERS; }
static int hidden_splits(const ModelDims *d) { return !d->bidirectional || d->hidden % 2 == 0; }
static int luong(const ModelDims *d) { return attention_is_luong(d->attention); }
static int input_feed_on(const ModelDims *d) { return d->input_feed; }
static int local(const ModelDims *d) { return is_local(d->attention); }
static int window_fits(const ModelDims *d) { return !is_local(d->attention) || d->window >= 1; }
static int dot_product(const ModelDims *d) { return !is_additive(d->attention); }
static int scaled_on(const ModelDims *d) { return d->scaled; }
static int tie_fits(const ModelDims *d) { return !d->tie_embeddings || d->embed == d->hidden; }
static int known_type(const ModelDims *d) { return d->type >= 0 && d->type < MODEL_TYPES; }
/* The models with the recurrent encoder: the translation family and the classifier. */
static int recurrent(const ModelDims *d) { return d->type == MODEL_RNN || d->type == MODEL_CLASSIFIER; }
static int transformer(const ModelDims *d) { return d->type == MODEL_TRANSFORMER; }
static int classifier(const ModelDims *d) { return d->type == MODEL_CLASSIFIER; }
static int translator(const ModelDims *d) { return !classifier(d); }
static int tie_on(const ModelDims *d) { return d->tie_embeddings; }
static int known_pooling(const ModelDims *d) { return !classifier(d) || (d->pooling >= 0 && d->pooling < POOL_KINDS); }
static int bidirectional_on(const ModelDims *d) { return d->bidirectional; }
static int heads_divide(const ModelDims *d) { return !transformer(d) || (d->heads >= 1 && d->embed % d->heads == 0); }
static int transformer_layers_in_range(const ModelDims *d)
{
    return !transformer(d) || (d->enc_layers >= 1 && d->enc_layers <= MAX_LAYERS && d->dec_layers >= 1 &&
                               d->dec_layers <= MAX_LAYERS);
}

#define STRING(x) #x
#define NUMBER(x) STRING(x)
/* The order matters where one rule reads what an earlier one checks: the attention
 * kind is known before any rule asks which kind it is. */
#define RNN_ONLY(key, in_use) \
    {RULE_APPLIES, key, {"model.type"}, recurrent, in_use, key " applies only to recurrent models", "set model.type to \"rnn\""}
#define TRANSLATION_ONLY(key, in_use) \
    {RULE_APPLIES, key, {"model.type"}, translator, in_use, key " applies only to translation models", \
     "set model.type to \"rnn\" or \"transformer\""}
#define TRANSFORMER_ONLY(key) \
    {RULE_APPLIES, key, {"model.type"}, transformer, NULL, key " applies only to the Transformer", \
     "set model.type to \"transformer\""}
static const ModelRule rules[] = {
    {RULE_VALUE, "model.type", {NULL}, known_type, NULL, "model.type must be rnn, transformer or classifier", NULL},
    /* The keys of one family given for the other: named before any rule of their own. */
    RNN_ONLY("model.hidden", NULL),
    RNN_ONLY("model.cell", NULL),
    RNN_ONLY("model.attention", NULL),
    RNN_ONLY("model.bidirectional", bidirectional_on),
    RNN_ONLY("model.input_feed", input_feed_on),
    RNN_ONLY("model.window", NULL),
    RNN_ONLY("model.scaled", scaled_on),
    TRANSLATION_ONLY("model.attention", NULL),
    TRANSLATION_ONLY("model.input_feed", input_feed_on),
    TRANSLATION_ONLY("model.window", NULL),
    TRANSLATION_ONLY("model.scaled", scaled_on),
    TRANSLATION_ONLY("model.tie_embeddings", tie_on),
    {RULE_APPLIES, "model.pooling", {"model.type"}, classifier, NULL, "model.pooling applies only to classifiers",
     "set model.type to \"classifier\""},
    {RULE_VALUE, "model.pooling", {NULL}, known_pooling, NULL, "model.pooling must be attention, last, mean or max",
     NULL},
    TRANSFORMER_ONLY("model.heads"),
    TRANSFORMER_ONLY("model.ff"),
    TRANSFORMER_ONLY("model.activation"),
    TRANSFORMER_ONLY("model.norm"),
    TRANSFORMER_ONLY("model.encoder_layers"),
    TRANSFORMER_ONLY("model.decoder_layers"),
    {RULE_VALUE, "model.heads", {"model.embed"}, heads_divide, NULL,
     "model.heads must divide model.embed (d_model): each head attends in embed / heads dimensions", NULL},
    {RULE_VALUE, "model.encoder_layers", {"model.decoder_layers"}, transformer_layers_in_range, NULL,
     "model.encoder_layers and model.decoder_layers must be from 1 to 8", NULL},
    {RULE_VALUE, "model.cell", {NULL}, known_cell, NULL, "model.cell must be gru or lstm", NULL},
    {RULE_VALUE, "model.attention", {NULL}, known_attention, NULL,
     "model.attention must be bahdanau, luong_dot, luong_general, luong_concat, local_monotonic or local_predictive",
     NULL},
    {RULE_VALUE, "model.layers", {NULL}, layers_in_range, NULL, "model.layers must be from 1 to " NUMBER(MAX_LAYERS),
     NULL},
    {RULE_VALUE, "model.hidden", {"model.bidirectional"}, hidden_splits, NULL,
     "model.hidden must be even for a bidirectional encoder, which has hidden / 2 units per direction", NULL},
    {RULE_APPLIES, "model.input_feed", {"model.attention"}, luong, input_feed_on,
     "model.input_feed applies only to Luong attention kinds",
     "choose luong_dot, luong_general, luong_concat, local_monotonic or local_predictive"},
    {RULE_APPLIES, "model.window", {"model.attention"}, local, NULL,
     "model.window applies only to local attention kinds", "choose local_monotonic or local_predictive"},
    {RULE_VALUE, "model.window", {"model.attention"}, window_fits, NULL,
     "model.window must be at least 1 for local attention", NULL},
    {RULE_APPLIES, "model.scaled", {"model.attention"}, dot_product, scaled_on,
     "model.scaled applies only to dot-product attention kinds",
     "choose luong_dot, luong_general, local_monotonic or local_predictive"},
    {RULE_VALUE, "model.tie_embeddings", {"model.embed", "model.hidden"}, tie_fits, NULL,
     "model.tie_embeddings needs model.embed equal to model.hidden", NULL},
};
#undef NUMBER
#undef STRING
#undef RNN_ONLY
#undef TRANSFORMER_ONLY
#undef TRANSLATION_ONLY

const ModelRule *model_rules(int *n)
{
    *n = (int)(sizeof rules / sizeof rules[0]);
    return rules;
}

const ModelRule *model_rule_broken(const ModelDims *d)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const ModelRule *r = &rules[i];
        if (r->holds(d)) continue;
        if (r->kind == RULE_VALUE || (r->in_use && r->in_use(d))) return r;
    }
    return NULL;
}

const char *dims_problem(const ModelDims *d)
{
    const ModelRule *r = model_rule_broken(d);
    if (r) return r->text;
    if (classifier(d) && model_classes(d) < 2) return "a classifier needs at least two classes";
    /* Not an option of its own (model.tie_embeddings with data.joint_vocab): for a file. */
    if (d->share_src_emb && !(transformer(d) && d->tie_embeddings && d->src_vocab == d->tgt_vocab))
        return "a shared source embedding needs a tied Transformer with one vocabulary for both sides";
    return NULL;
}

static int n_layers(const ModelDims *d) { return d->layers > 0 ? d->layers : 1; }
static int n_gates(const ModelDims *d) { return d->cell == CELL_LSTM ? 4 : 3; }
static int n_dirs(const ModelDims *d) { return d->bidirectional ? 2 : 1; }
/* Units per encoder direction. */
static int enc_units(const ModelDims *d) { return d->bidirectional ? d->hidden / 2 : d->hidden; }
/* Width of the decoder's first-layer input: [embedding; context or o_{t-1}] or the embedding. */
static int dec_in0(const ModelDims *d)
{
    return d->embed + (d->attention == ATT_BAHDANAU || d->input_feed ? d->hidden : 0);
}
/* The decoder layer whose recurrent product also computes the Bahdanau query. */
static int fused_query(const ModelDims *d, int l) { return d->attention == ATT_BAHDANAU && l == n_layers(d) - 1; }

/* ---------------------------------------------------------------- parameters */

/* The tensors in memory order, each with its slot in a Params and the fan-in its
 * initialisation uses. One enumeration serves shapes, pointers and initialisation. */
typedef struct {
    int n;
    TensorShape shape[MAX_TENSORS];
    float **slot[MAX_TENSORS];
    int units[MAX_TENSORS];   /* fan-in of a uniform init; 0 for embeddings (normal init);
                                 INIT_ONES, INIT_ZEROS for layer norms' gains and biases */
} Layout;

enum { INIT_ONES = -1, INIT_ZEROS = -2 };

static void add(Layout *lo, float **slot, long rows, long cols, int units, const char *fmt, const char *sfx)
{
    TensorShape *s = &lo->shape[lo->n];
    snprintf(s->name, sizeof s->name, fmt, sfx);
    s->rows = rows;
    s->cols = cols;
    lo->slot[lo->n] = slot;
    lo->units[lo->n] = units;
    lo->n++;
}

static void add_ln(Layout *lo, LnWeights *w, long D, const char *name)
{
    add(lo, &w->g, D, 1, INIT_ONES, "%s.g", name);
    add(lo, &w->b, D, 1, INIT_ZEROS, "%s.b", name);
}

static void add_att(Layout *lo, AttWeights *w, long D, const char *name)
{
    float **slot[8] = {&w->wq, &w->bq, &w->wk, &w->bk, &w->wv, &w->bv, &w->wo, &w->bo};
    const char *part[8] = {"wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo"};
    char full[40];
    for (int i = 0; i < 8; i++) {
        snprintf(full, sizeof full, "%s.%s", name, part[i]);
        add(lo, slot[i], D, i % 2 ? 1 : D, (int)D, "%s", full);
    }
}

static void add_ff(Layout *lo, FfWeights *w, long D, long F, const char *name)
{
    char full[40];
    snprintf(full, sizeof full, "%s.w1", name);
    add(lo, &w->w1, F, D, (int)D, "%s", full);
    snprintf(full, sizeof full, "%s.b1", name);
    add(lo, &w->b1, F, 1, (int)D, "%s", full);
    snprintf(full, sizeof full, "%s.w2", name);
    add(lo, &w->w2, D, F, (int)F, "%s", full);
    snprintf(full, sizeof full, "%s.b2", name);
    add(lo, &w->b2, D, 1, (int)F, "%s", full);
}

/* The Transformer's tensors, in scripts/reference_transformer.py's order. */
static void transformer_layout(const ModelDims *d, Params *p, Layout *lo)
{
    long D = d->embed, F = d->ff;
    char name[24];
    lo->n = 0;
    if (!d->share_src_emb) add(lo, &p->src_emb, d->src_vocab, D, 0, "src_emb%s", "");
    add(lo, &p->tgt_emb, d->tgt_vocab, D, 0, "tgt_emb%s", "");
    for (int l = 0; l < d->enc_layers; l++) {
        TLayer *w = &p->tenc[l];
        snprintf(name, sizeof name, "enc.%d.ln1", l);
        add_ln(lo, &w->ln1, D, name);
        snprintf(name, sizeof name, "enc.%d.self", l);
        add_att(lo, &w->self, D, name);
        snprintf(name, sizeof name, "enc.%d.ln2", l);
        add_ln(lo, &w->ln2, D, name);
        snprintf(name, sizeof name, "enc.%d.ff", l);
        add_ff(lo, &w->ff, D, F, name);
    }
    if (d->norm == NORM_PRE) add_ln(lo, &p->tenc_ln, D, "enc.ln");
    for (int l = 0; l < d->dec_layers; l++) {
        TLayer *w = &p->tdec[l];
        snprintf(name, sizeof name, "dec.%d.ln1", l);
        add_ln(lo, &w->ln1, D, name);
        snprintf(name, sizeof name, "dec.%d.self", l);
        add_att(lo, &w->self, D, name);
        snprintf(name, sizeof name, "dec.%d.ln2", l);
        add_ln(lo, &w->ln2, D, name);
        snprintf(name, sizeof name, "dec.%d.cross", l);
        add_att(lo, &w->cross, D, name);
        snprintf(name, sizeof name, "dec.%d.ln3", l);
        add_ln(lo, &w->ln3, D, name);
        snprintf(name, sizeof name, "dec.%d.ff", l);
        add_ff(lo, &w->ff, D, F, name);
    }
    if (d->norm == NORM_PRE) add_ln(lo, &p->tdec_ln, D, "dec.ln");
    if (!d->tie_embeddings) add(lo, &p->out_w, d->tgt_vocab, D, (int)D, "out_w%s", "");
    add(lo, &p->out_b, d->tgt_vocab, 1, (int)D, "out_b%s", "");
}

static void layout(const ModelDims *d, Params *p, Layout *lo)
{
    if (d->type == MODEL_TRANSFORMER) {
        transformer_layout(d, p, lo);
        return;
    }
    long E = d->embed, H = d->hidden, G = n_gates(d), U = enc_units(d);
    int L = n_layers(d), A = d->attention;
    char sfx[32];
    lo->n = 0;
    add(lo, &p->src_emb, d->src_vocab, E, 0, "src_emb%s", "");
    for (int l = 0; l < L; l++)
        for (int r = 0; r < n_dirs(d); r++) {
            RnnParams *w = &p->enc[l][r];
            if (l) snprintf(sfx, sizeof sfx, "_l%d%s", l, r ? "_reverse" : "");
            else snprintf(sfx, sizeof sfx, "%s", r ? "_reverse" : "");
            add(lo, &w->w_ih, G * U, l ? H : E, (int)U, "enc_w_ih%s", sfx);
            add(lo, &w->w_hh, G * U, U, (int)U, "enc_w_hh%s", sfx);
            add(lo, &w->b_ih, G * U, 1, (int)U, "enc_b_ih%s", sfx);
            add(lo, &w->b_hh, G * U, 1, (int)U, "enc_b_hh%s", sfx);
        }
    if (d->bidirectional && translator(d))
        for (int l = 0; l < L; l++) {
            if (l) snprintf(sfx, sizeof sfx, "_l%d", l);
            else sfx[0] = 0;
            add(lo, &p->bridge_w[l], H, H, (int)H, "bridge_w%s", sfx);
            add(lo, &p->bridge_b[l], H, 1, (int)H, "bridge_b%s", sfx);
        }
    if (classifier(d)) {
        if (d->pooling == POOL_ATTENTION) {
            add(lo, &p->pool_w, H, 1, (int)H, "pool_w%s", "");
            add(lo, &p->pool_b, 1, 1, (int)H, "pool_b%s", "");
        }
        add(lo, &p->out_w, model_classes(d), H, (int)H, "out_w%s", "");
        add(lo, &p->out_b, model_classes(d), 1, (int)H, "out_b%s", "");
        return;
    }
    add(lo, &p->tgt_emb, d->tgt_vocab, E, 0, "tgt_emb%s", "");
    if (is_additive(A)) {
        add(lo, &p->att_w_key, H, H, (int)H, "att_w_key%s", "");
        add(lo, &p->att_v, H, 1, (int)H, "att_v%s", "");
    }
    if (has_att_w(A)) add(lo, &p->att_w, H, H, (int)H, "att_w%s", "");
    if (A == ATT_LOCAL_PREDICTIVE) {
        add(lo, &p->att_w_pos, H, H, (int)H, "att_w_pos%s", "");
        add(lo, &p->att_v_pos, H, 1, (int)H, "att_v_pos%s", "");
    }
    if (attention_is_luong(A)) add(lo, &p->att_w_out, H, 2 * H, (int)H, "att_w_out%s", "");
    for (int l = 0; l < L; l++) {
        RnnParams *w = &p->dec[l];
        int query = is_additive(A) && l == L - 1;
        if (l) snprintf(sfx, sizeof sfx, "_l%d", l);
        else sfx[0] = 0;
        add(lo, &w->w_ih, G * H, l ? H : dec_in0(d), (int)H, "dec_w_ih%s", sfx);
        add(lo, &w->w_hh, G * H, H, (int)H, "dec_w_hh%s", sfx);
        if (query) add(lo, &p->att_w_query, H, H, (int)H, "att_w_query%s", "");
        add(lo, &w->b_ih, G * H, 1, (int)H, "dec_b_ih%s", sfx);
        add(lo, &w->b_hh, G * H, 1, (int)H, "dec_b_hh%s", sfx);
        if (query) add(lo, &p->att_b_query, H, 1, (int)H, "att_b_query%s", "");
    }
    if (!d->tie_embeddings) add(lo, &p->out_w, d->tgt_vocab, H, (int)H, "out_w%s", "");
    add(lo, &p->out_b, d->tgt_vocab, 1, (int)H, "out_b%s", "");
}

int params_shapes(const ModelDims *d, TensorShape out[MAX_TENSORS])
{
    Params p;
    Layout lo;
    layout(d, &p, &lo);
    memcpy(out, lo.shape, sizeof(TensorShape) * lo.n);
    return lo.n;
}

long params_count(const ModelDims *d)
{
    Params p;
    Layout lo;
    layout(d, &p, &lo);
    long n = 0;
    for (int i = 0; i < lo.n; i++)
        n += lo.shape[i].rows * lo.shape[i].cols;
    return n;
}

int params_tensors(const Params *p, const ModelDims *d, float *out[MAX_TENSORS])
{
    Params q = *p;
    Layout lo;
    layout(d, &q, &lo);
    for (int i = 0; i < lo.n; i++)
        out[i] = *lo.slot[i];
    return lo.n;
}

/* Carve mem into the tensors, in layout order. */
static void params_point(Params *p, float *mem, const ModelDims *d)
{
    Layout lo;
    memset(p, 0, sizeof *p);
    layout(d, p, &lo);
    for (int i = 0; i < lo.n; i++) {
        *lo.slot[i] = mem;
        mem += lo.shape[i].rows * lo.shape[i].cols;
    }
    if (d->tie_embeddings) p->out_w = p->tgt_emb;
    if (d->share_src_emb) p->src_emb = p->tgt_emb;
}

void model_alloc(Model *m, const ModelDims *d)
{
    m->dims = *d;
    m->dims.layers = n_layers(d);
    m->n_params = params_count(d);
    m->param_mem = xcalloc(m->n_params, sizeof(float));
    m->grad_mem = xcalloc(m->n_params + MODEL_GRAD_SPARE, sizeof(float));
    params_point(&m->params, m->param_mem, &m->dims);
    params_point(&m->grads, m->grad_mem, &m->dims);
}

/* An attention's query, key or value projection: nn.MultiheadAttention holds the three
 * as one (3d, d) matrix, in_proj_weight, whose Xavier bound is sqrt(6 / (3d + d)); fairseq
 * draws each (d, d) part with gain 1/sqrt(2), the same bound. A (d, d) matrix's own bound
 * would be sqrt(2) wider. */
static int in_projection(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && (!strcmp(name + n - 3, ".wq") || !strcmp(name + n - 3, ".wk") || !strcmp(name + n - 3, ".wv"));
}

/* The recurrent models: PyTorch's defaults (nn.Linear, nn.GRU: uniform within
 * 1/sqrt(fan-in); nn.Embedding: N(0, 1)). The Transformer: as fairseq, OpenNMT-py and
 * nn.Transformer's reset_parameters do it, Xavier-uniform matrices (within
 * sqrt(6 / (fan-in + fan-out)), the query, key and value projections as the one matrix
 * they are there: in_projection), zero biases, and embeddings N(0, 1/d_model), which the
 * input scales by sqrt(d_model) back to unit size (and which, tied, are the output layer). */
void model_init_weights(Model *m, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    Layout lo;
    Params q = m->params;
    layout(&m->dims, &q, &lo);
    int xavier = m->dims.type == MODEL_TRANSFORMER;
    float emb_std = xavier ? 1.0f / sqrtf((float)m->dims.embed) : 1.0f;
    for (int i = 0; i < lo.n; i++) {
        float *t = *lo.slot[i];
        long rows = lo.shape[i].rows, cols = lo.shape[i].cols, n = rows * cols;
        int units = lo.units[i];
        long fan_out = xavier && in_projection(lo.shape[i].name) ? 3 * rows : rows;
        float bound = units <= 0 ? 0.0f
                      : !xavier  ? 1.0f / sqrtf((float)units)
                      : cols > 1 ? sqrtf(6.0f / (float)(fan_out + cols))
                                 : 0.0f;   /* a Transformer's bias */
        for (long k = 0; k < n; k++)
            t[k] = units == INIT_ONES    ? 1.0f
                   : units == INIT_ZEROS ? 0.0f
                   : units > 0           ? bound * (2.0f * rng_uniform(&rng) - 1.0f)
                                         : emb_std * rng_normal(&rng);
    }
}

void model_zero_grad(Model *m) { memset(m->grad_mem, 0, sizeof(float) * m->n_params); }

void model_free(Model *m)
{
    free(m->param_mem);
    free(m->grad_mem);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- run state */

/* State layouts. Encoder forward direction: h[0] is the initial state, h[t+1] the
 * state after position t (outputs start at h + B*U). Reverse direction: h[S] is the
 * initial state, h[t] the state after position t (outputs start at h). Decoder:
 * h[0] = s_0, h[t+1] = s_t. */

typedef struct {
    float **p;
    long n;
} Part;

void runstate_alloc(RunState *rs, const ModelDims *dims, RunMode mode, int B, int S, int T)
{
    if (dims->type == MODEL_TRANSFORMER) {
        memset(rs, 0, sizeof *rs);
        rs->mode = mode;
        rs->cap_B = B, rs->cap_S = S, rs->cap_T = T;
        rs->tr = trun_new(dims, S, T, B, mode == RUN_TRAIN);
        rs->tr_src_len = xcalloc(B, sizeof(int));
        rs->tr_tgt_len = xcalloc(B, sizeof(int));
        rs->mem = xcalloc(1, sizeof(float));  /* allocated: runstate_ensure's test */
        return;
    }
    ModelDims d = *dims;
    d.layers = n_layers(dims);
    long E = d.embed, H = d.hidden, V = d.tgt_vocab, G = n_gates(&d), U = enc_units(&d);
    long SB = (long)S * B, TB = (long)T * B, ST = S > T ? S : T, EH = E > H ? E : H;
    long train = mode == RUN_TRAIN, lstm = d.cell == CELL_LSTM, bi = d.bidirectional;
    int L = d.layers, A = d.attention, luong = attention_is_luong(A);
    memset(rs, 0, sizeof *rs);
    Part parts[512];
    int n = 0;
#define PART(ptr, count) (parts[n++] = (Part){&(ptr), (count)})
    for (int l = 0; l < L; l++) {
        long in = l ? H : E;
        PART(rs->enc_x[l], SB * in);
        PART(rs->enc_drop[l], train * SB * in);
        for (int r = 0; r < n_dirs(&d); r++) {
            RnnRun *run = &rs->enc[l][r];
            PART(run->h, (SB + B) * U);
            PART(run->c, lstm * (SB + B) * U);
            PART(run->gi, SB * G * U);
            PART(run->gh, SB * G * U);
            PART(run->cache, SB * G * U);
        }
        PART(rs->enc_out[l], bi * SB * H);
    }
    long packs = mode != RUN_DECODE;  /* training and scoring take packed batches */
    /* A classifier has no decoder: of its parts only the zero final-state gradients
     * d_s, d_c that the encoder's backward pass reads, and T is 1. */
    long dec = d.type != MODEL_CLASSIFIER, cls = !dec;
    PART(rs->mem_batch, packs * SB * H);
    PART(rs->enc_work, packs * (SB + 2 * B) * U);
    PART(rs->bridge_in, dec * bi * L * B * H);
    PART(rs->keys, A == ATT_LUONG_DOT ? 0 : dec * SB * H);
    for (int l = 0; l < L; l++) {
        long in = l ? H : dec_in0(&d), ghw = G * H + (fused_query(&d, l) ? H : 0);
        RnnRun *run = &rs->dec[l];
        PART(rs->dec_x[l], dec * TB * in);
        PART(rs->dec_drop[l], dec * train * TB * (l ? H : E));
        PART(run->h, dec * (TB + B) * H);
        PART(run->c, dec * lstm * (TB + B) * H);
        PART(run->gi, dec * TB * G * H);
        PART(run->gh, dec * TB * ghw);
        PART(run->cache, dec * TB * G * H);
        PART(rs->d_dgi[l], dec * train * TB * G * H);
        PART(rs->d_dgh[l], dec * train * TB * ghw);
        PART(rs->d_s[l], train * B * H);
        PART(rs->d_c[l], train * lstm * B * H);
    }
    PART(rs->attn, dec * TB * S);
    PART(rs->query, A == ATT_LUONG_CONCAT ? dec * TB * H : 0);
    PART(rs->pos_hidden, A == ATT_LOCAL_PREDICTIVE ? dec * TB * H : 0);
    PART(rs->pos, is_local(A) ? dec * TB : 0);
    PART(rs->cat, dec * luong * TB * 2 * H);
    PART(rs->out, dec * luong * TB * H);
    PART(rs->logits, (mode == RUN_DECODE ? B : TB) * V);
    PART(rs->pool_attn, cls * B * S);
    PART(rs->pool_score, cls * B * S);
    PART(rs->pooled, cls * B * H);
    PART(rs->pool_drop, cls * train * B * H);
    PART(rs->d_pooled, cls * train * B * H);
    PART(rs->d_out, dec * train * TB * H);
    PART(rs->d_pre, dec * train * luong * TB * H);
    PART(rs->d_query, dec * train * (A == ATT_LUONG_CONCAT) * TB * H);
    PART(rs->d_pos, dec * train * (A == ATT_LOCAL_PREDICTIVE) * TB * H);
    PART(rs->d_feed, dec * train * B * H);
    PART(rs->d_ctx, dec * train * B * H);
    PART(rs->d_cat, dec * train * B * 2 * H);
    PART(rs->d_step, B * H); /* also the scratch row block of model_reorder_state */
    PART(rs->d_keys, dec * train * SB * H);
    PART(rs->d_enc, train * SB * H);
    PART(rs->d_encp, train * SB * H);
    PART(rs->d_hfin, train * B * H);
    PART(rs->d_dir[0], train * bi * SB * U);
    PART(rs->d_dir[1], train * bi * SB * U);
    PART(rs->d_x, train * ST * B * EH);
    PART(rs->d_x2, train * ST * B * EH);
    PART(rs->d_enc_gi, train * SB * G * U);
    PART(rs->d_enc_gh, train * SB * G * U);
    PART(rs->d_h0, train * B * H);
    PART(rs->d_c0, train * B * H);
    PART(rs->d_cfin, train * B * H);
    PART(rs->work, 2 * S + H + B);
#undef PART
    long total = 0;
    for (int i = 0; i < n; i++)
        total += parts[i].n;
    rs->mem = xcalloc(total, sizeof(float));
    float *p = rs->mem;
    for (int i = 0; i < n; i++) {
        *parts[i].p = parts[i].n ? p : NULL;
        p += parts[i].n;
    }
    rs->src_len = xcalloc(B, sizeof(int));
    rs->fed = train ? xcalloc(TB, sizeof(int)) : NULL;
    rs->pool_arg = cls ? xcalloc((size_t)B * H, sizeof(int)) : NULL;
    rs->mode = mode;
    rs->cap_B = B;
    rs->cap_S = S;
    rs->cap_T = T;
}

void runstate_free(RunState *rs)
{
    trun_free(rs->tr);
    free(rs->tr_src_len);
    free(rs->tr_tgt_len);
    free(rs->mem);
    free(rs->src_len);
    free(rs->fed);
    free(rs->pool_arg);
    memset(rs, 0, sizeof *rs);
}

void runstate_ensure(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T)
{
    if (rs->mem && (int)mode == rs->mode && B <= rs->cap_B && S <= rs->cap_S && T <= rs->cap_T) return;
    int nb = B > rs->cap_B ? B : rs->cap_B, ns = S > rs->cap_S ? S : rs->cap_S, nt = T > rs->cap_T ? T : rs->cap_T;
    /* The training options survive the reallocation. */
    float dropout = rs->dropout, smoothing = rs->label_smoothing, sampling = rs->sample_prob;
    float attention_dropout = rs->attention_dropout, activation_dropout = rs->activation_dropout;
    long loss_tokens = rs->loss_tokens;
    int attn_layer = rs->attn_layer;
    const float *class_weight = rs->class_weight;
    Rng rng = rs->rng;
    runstate_free(rs);
    runstate_alloc(rs, d, mode, nb, ns, nt);
    rs->dropout = dropout;
    rs->attention_dropout = attention_dropout;
    rs->activation_dropout = activation_dropout;
    rs->label_smoothing = smoothing;
    rs->sample_prob = sampling;
    rs->loss_tokens = loss_tokens;
    rs->attn_layer = attn_layer;
    rs->class_weight = class_weight;
    rs->rng = rng;
}

/* ---------------------------------------------------------------- pieces */

static int dropping(const RunState *rs) { return rs->dropping; }

/* Inverted dropout on rows x (n, w) with stride ld: keep[i] is 0 or 1/(1-p), stored
 * (n, w) for backward. */
static void dropout_rows(float *x, int ld, float *keep, long n, int w, float p, Rng *rng)
{
    float scale = 1.0f / (1.0f - p);
    for (long i = 0; i < n; i++)
        for (int k = 0; k < w; k++) {
            float kk = rng_uniform(rng) < p ? 0.0f : scale;
            keep[i * w + k] = kk;
            x[i * ld + k] *= kk;
        }
}

static void multiply_rows(float *x, int ld, const float *keep, long n, int w)
{
    for (long i = 0; i < n; i++)
        for (int k = 0; k < w; k++)
            x[i * ld + k] *= keep[i * w + k];
}

static void tanh_inplace(float *x, long n)
{
    for (long i = 0; i < n; i++)
        x[i] = tanhf(x[i]);
}

static GruWeights gru_weights(const RnnParams *p, int in, int units)
{
    return (GruWeights){p->w_ih, p->w_hh, p->b_ih, p->b_hh, in, units};
}

static LstmWeights lstm_weights(const RnnParams *p, int in, int units)
{
    return (LstmWeights){p->w_ih, p->w_hh, p->b_ih, p->b_hh, in, units};
}

const float *model_memory(const Model *m, const RunState *rs)
{
    (void)m;
    return rs->memory;
}

/* The keys k_j the scores read: W h_j, or h_j itself for the plain dot product. */
static const float *score_keys(const Model *m, const RunState *rs)
{
    return m->dims.attention == ATT_LUONG_DOT ? model_memory(m, rs) : rs->keys;
}

static DotAttention dot_config(const ModelDims *d)
{
    return (DotAttention){d->scaled ? 1.0f / sqrtf((float)d->hidden) : 1.0f, is_local(d->attention) ? d->window : 0};
}

/* ---------------------------------------------------------------- encoder */

/* The recurrent layers on a padded batch (translation), and the decoder's initial
 * state from their final states. */
static void encode_padded(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = enc_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM;
    long SB = (long)S * B;
    embedding_forward(rs->enc_x[0], E, p->src_emb, batch->src, S * B, E);
    if (dropping(rs)) dropout_rows(rs->enc_x[0], E, rs->enc_drop[0], SB, E, rs->dropout, &rs->rng);
    for (int l = 0; l < L; l++) {
        int in = l ? H : E;
        if (l) {
            memcpy(rs->enc_x[l], rs->enc_out[l - 1], sizeof(float) * SB * H);
            if (dropping(rs)) dropout_rows(rs->enc_x[l], H, rs->enc_drop[l], SB, H, rs->dropout, &rs->rng);
        }
        for (int r = 0; r < n_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            long init = r ? SB * U : 0;
            memset(run->h + init, 0, sizeof(float) * B * U);
            if (lstm) {
                memset(run->c + init, 0, sizeof(float) * B * U);
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U);
                lstm_sequence_forward(&w, rs->enc_x[l], batch->mask, run->h, run->c, run->gi, run->gh, run->cache,
                                      S, B, r);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U);
                gru_sequence_forward(&w, rs->enc_x[l], batch->mask, run->h, run->gi, run->gh, run->cache, S, B, r);
            }
        }
        if (!d->bidirectional) {
            /* One direction: the outputs are the states themselves (this batch's B). */
            rs->enc_out[l] = rs->enc[l][0].h + (long)B * U;
        } else {
            const float *fwd = rs->enc[l][0].h + (long)B * U, *rev = rs->enc[l][1].h;
            for (long i = 0; i < SB; i++) {
                memcpy(rs->enc_out[l] + i * H, fwd + i * U, sizeof(float) * U);
                memcpy(rs->enc_out[l] + i * H + U, rev + i * U, sizeof(float) * U);
            }
        }
    }
    rs->memory = rs->enc_out[L - 1];
    if (classifier(d)) return;  /* no decoder to start */
    /* The decoder's initial state, layer by layer: forward, the final state is h[S]
     * (carried through the padding); reverse, h[0]. */
    for (int l = 0; l < L; l++) {
        RnnRun *dec = &rs->dec[l];
        const RnnRun *fw = &rs->enc[l][0], *rv = &rs->enc[l][1];
        if (!d->bidirectional) {
            memcpy(dec->h, fw->h + SB * H, sizeof(float) * B * H);
            if (lstm) memcpy(dec->c, fw->c + SB * H, sizeof(float) * B * H);
            continue;
        }
        float *in = rs->bridge_in + (long)l * B * H;
        for (int b = 0; b < B; b++) {
            memcpy(in + (long)b * H, fw->h + (SB + b) * U, sizeof(float) * U);
            memcpy(in + (long)b * H + U, rv->h + (long)b * U, sizeof(float) * U);
            if (lstm) {
                memcpy(dec->c + (long)b * H, fw->c + (SB + b) * U, sizeof(float) * U);
                memcpy(dec->c + (long)b * H + U, rv->c + (long)b * U, sizeof(float) * U);
            }
        }
        matmul_bias(dec->h, H, in, H, p->bridge_w[l], H, p->bridge_b[l], B, H, H);
        tanh_inplace(dec->h, (long)B * H);
    }
}

/* The source length of encoder row i of a packed batch: the positions it is live at. */
static int packed_len(const int *off, int S, int i)
{
    int len = 0;
    while (len < S && off[len + 1] - off[len] > i)
        len++;
    return len;
}

/* The recurrent layers on a packed batch (training, scoring: packseq.h), the memory
 * unpacked into batch order, and the decoder's initial state from each row's final
 * states: forward at its last position, reverse at position 0. */
static void encode_packed(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = enc_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM, bi = d->bidirectional;
    const int *off = batch->src_off, *row = batch->enc_row;
    long N = off[S];
    embedding_forward(rs->enc_x[0], E, p->src_emb, batch->enc_src, N, E);
    if (dropping(rs)) dropout_rows(rs->enc_x[0], E, rs->enc_drop[0], N, E, rs->dropout, &rs->rng);
    for (int l = 0; l < L; l++) {
        int in = l ? H : E;
        if (l) {
            memcpy(rs->enc_x[l], rs->enc_out[l - 1], sizeof(float) * N * H);
            if (dropping(rs)) dropout_rows(rs->enc_x[l], H, rs->enc_drop[l], N, H, rs->dropout, &rs->rng);
        }
        for (int r = 0; r < n_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            memset(run->h, 0, sizeof(float) * B * U);
            if (lstm) {
                memset(run->c, 0, sizeof(float) * B * U);
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U);
                lstm_packed_forward(&w, rs->enc_x[l], run->h, run->c, run->gi, run->gh, run->cache, off, S, B, r,
                                    rs->enc_work);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U);
                gru_packed_forward(&w, rs->enc_x[l], run->h, run->gi, run->gh, run->cache, off, S, B, r, rs->enc_work);
            }
        }
        if (!bi) {
            rs->enc_out[l] = rs->enc[l][0].h + (long)B * U;
        } else {
            const float *fwd = rs->enc[l][0].h + (long)B * U, *rev = rs->enc[l][1].h + (long)B * U;
            for (long i = 0; i < N; i++) {
                memcpy(rs->enc_out[l] + i * H, fwd + i * U, sizeof(float) * U);
                memcpy(rs->enc_out[l] + i * H + U, rev + i * U, sizeof(float) * U);
            }
        }
    }
    /* The memory in batch order, zero on the padding (which the attention masks). */
    const float *top = rs->enc_out[L - 1];
    memset(rs->mem_batch, 0, sizeof(float) * S * B * H);
    for (int t = 0; t < S; t++)
        for (int i = 0; i < off[t + 1] - off[t]; i++)
            memcpy(rs->mem_batch + ((long)t * B + row[i]) * H, top + ((long)off[t] + i) * H, sizeof(float) * H);
    rs->memory = rs->mem_batch;
    if (classifier(d)) return;  /* no decoder to start */
    for (int l = 0; l < L; l++) {
        RnnRun *dec = &rs->dec[l];
        const RnnRun *fw = &rs->enc[l][0], *rv = &rs->enc[l][1];
        float *in = bi ? rs->bridge_in + (long)l * B * H : dec->h;
        for (int i = 0; i < B; i++) {
            long b = row[i], last = B + off[packed_len(off, S, i) - 1] + i, first = B + i;
            memcpy(in + b * H, fw->h + last * U, sizeof(float) * U);
            if (lstm) memcpy(dec->c + b * H, fw->c + last * U, sizeof(float) * U);
            if (!bi) continue;
            memcpy(in + b * H + U, rv->h + first * U, sizeof(float) * U);
            if (lstm) memcpy(dec->c + b * H + U, rv->c + first * U, sizeof(float) * U);
        }
        if (!bi) continue;
        matmul_bias(dec->h, H, in, H, p->bridge_w[l], H, p->bridge_b[l], B, H, H);
        tanh_inplace(dec->h, (long)B * H);
    }
}

void model_encode(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, H = d->hidden;
    for (int b = 0; b < B; b++) {
        int len = 0;
        for (int t = 0; t < S; t++)
            len += batch->mask[t * B + b] != 0.0f;
        rs->src_len[b] = len;
    }
    if (batch->src_off) encode_packed(m, rs, batch);
    else encode_padded(m, rs, batch);
    const float *mem = model_memory(m, rs);
    if (classifier(d)) return;
    if (is_additive(d->attention))
        matmul_bias(rs->keys, H, mem, H, p->att_w_key, H, NULL, S * B, H, H);
    else if (has_att_w(d->attention))
        matmul_bias(rs->keys, H, mem, H, p->att_w, H, NULL, S * B, H, H);
}

/* ---------------------------------------------------------------- decoder */

void model_decoder_input(Model *m, RunState *rs, int t, const int *ids, int B)
{
    const ModelDims *d = &m->dims;
    int E = d->embed, GH = n_gates(d) * d->hidden, X = dec_in0(d);
    float *x = rs->dec_x[0] + (long)t * B * X;
    embedding_forward(x, X, m->params.tgt_emb, ids, B, E);
    matmul_bias(rs->dec[0].gi + (long)t * B * GH, GH, x, X, m->params.dec[0].w_ih, X, m->params.dec[0].b_ih, B, GH, E);
}

/* Where the decoder's rows are (batch.h): step t's inputs, gates and outputs at row
 * batch_step_at(t), batch_step_rows(t) of them; a state array holds the initial
 * states in its first B rows and the states after step t at B + batch_step_at(t). A
 * packed batch has only the sentences still going at each step, the first rows. */
static long state_before(const Batch *b, int t) { return t ? b->B + batch_step_at(b, t - 1) : 0; }
static long state_after(const Batch *b, int t) { return b->B + batch_step_at(b, t); }

/* Weights a[j] and context for step t with the new state s_t (Luong kinds); the
 * context goes into cat[t][:, :H], s_t into cat[t][:, H:], and o_t = tanh(W_out cat). */
static void luong_attend(Model *m, RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, Bt = batch_step_rows(batch, t), S = batch->S, H = d->hidden, A = d->attention;
    long row = batch_step_at(batch, t);
    const float *s = rs->dec[d->layers - 1].h + state_after(batch, t) * H, *mem = model_memory(m, rs);
    float *cat = rs->cat + row * 2 * H, *attn = rs->attn + row * S;
    if (A == ATT_LUONG_CONCAT) {
        float *q = rs->query + row * H;
        matmul_bias(q, H, s, H, p->att_w_query, H, p->att_b_query, Bt, H, H);
        attention_bahdanau_forward(rs->keys, mem, batch->mask, q, H, p->att_v, attn, cat, 2 * H, S, B, Bt, H, H);
    } else {
        float *pos = is_local(A) ? rs->pos + row : NULL;
        if (A == ATT_LOCAL_MONOTONIC)
            for (int b = 0; b < Bt; b++)
                pos[b] = (float)(t < rs->src_len[b] - 1 ? t : rs->src_len[b] - 1);
        if (A == ATT_LOCAL_PREDICTIVE) {
            float *ph = rs->pos_hidden + row * H;
            matmul_bias(ph, H, s, H, p->att_w_pos, H, NULL, Bt, H, H);
            tanh_inplace(ph, (long)Bt * H);
            for (int b = 0; b < Bt; b++) {
                float u = 0.0f;
                for (int k = 0; k < H; k++)
                    u += p->att_v_pos[k] * ph[(long)b * H + k];
                pos[b] = (float)rs->src_len[b] / (1.0f + expf(-u));
            }
        }
        DotAttention cfg = dot_config(d);
        attention_dot_forward(&cfg, score_keys(m, rs), mem, rs->src_len, s, H, pos, attn, cat, 2 * H, S, B, Bt, H);
    }
    for (int b = 0; b < Bt; b++)
        memcpy(cat + (long)b * 2 * H + H, s + (long)b * H, sizeof(float) * H);
    float *o = rs->out + row * H;
    matmul_bias(o, H, cat, 2 * H, p->att_w_out, 2 * H, NULL, Bt, H, 2 * H);
    tanh_inplace(o, (long)Bt * H);
}

void model_decoder_step(Model *m, RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, Bt = batch_step_rows(batch, t), S = batch->S, E = d->embed, H = d->hidden, L = d->layers;
    int X = dec_in0(d), GH = n_gates(d) * H, lstm = d->cell == CELL_LSTM;
    long row = batch_step_at(batch, t), before = state_before(batch, t), after = state_after(batch, t);
    float *x0 = rs->dec_x[0] + row * X, *gi0 = rs->dec[0].gi + row * GH;
    if (d->attention == ATT_BAHDANAU) {
        /* [W_hh; W_query] s_{t-1} + [b_hh; b_query] of the top layer: one product (the
         * tensors are adjacent); then attention, whose context joins layer 0's input. */
        RnnRun *top = &rs->dec[L - 1];
        int ghw = GH + H;
        float *gh = top->gh + row * ghw;
        matmul_bias(gh, ghw, top->h + before * H, H, p->dec[L - 1].w_hh, H, p->dec[L - 1].b_hh, Bt, ghw, H);
        attention_bahdanau_forward(rs->keys, model_memory(m, rs), batch->mask, gh + GH, ghw, p->att_v,
                                   rs->attn + row * S, x0 + E, X, S, B, Bt, H, H);
        matmul_add(gi0, GH, x0 + E, X, p->dec[0].w_ih + E, X, Bt, GH, H);
    } else if (d->input_feed) {
        long prev = t ? batch_step_at(batch, t - 1) : 0;
        for (int b = 0; b < Bt; b++) {
            float *dst = x0 + (long)b * X + E;
            if (t == 0) memset(dst, 0, sizeof(float) * H);
            else memcpy(dst, rs->out + (prev + b) * H, sizeof(float) * H);
        }
        matmul_add(gi0, GH, x0 + E, X, p->dec[0].w_ih + E, X, Bt, GH, H);
    }
    for (int l = 0; l < L; l++) {
        RnnRun *run = &rs->dec[l];
        const RnnParams *w = &p->dec[l];
        int ghw = GH + (fused_query(d, l) ? H : 0);
        const float *s_prev = run->h + before * H;
        float *gi = run->gi + row * GH, *gh = run->gh + row * ghw;
        if (l) {
            float *x = rs->dec_x[l] + row * H;
            memcpy(x, rs->dec[l - 1].h + after * H, sizeof(float) * Bt * H);
            if (dropping(rs)) dropout_rows(x, H, rs->dec_drop[l] + row * H, Bt, H, rs->dropout, &rs->rng);
            matmul_bias(gi, GH, x, H, w->w_ih, H, w->b_ih, Bt, GH, H);
        }
        if (!fused_query(d, l)) matmul_bias(gh, ghw, s_prev, H, w->w_hh, H, w->b_hh, Bt, GH, H);
        if (lstm)
            lstm_gates_forward(gi, GH, gh, ghw, run->c + before * H, run->h + after * H, run->c + after * H,
                               run->cache + row * GH, Bt, H);
        else
            gru_gates_forward(gi, GH, gh, ghw, s_prev, run->h + after * H, run->cache + row * GH, Bt, H);
    }
    if (attention_is_luong(d->attention)) luong_attend(m, rs, batch, t);
}

const float *model_step_output(const Model *m, const RunState *rs, int t, int B)
{
    const ModelDims *d = &m->dims;
    if (attention_is_luong(d->attention)) return rs->out + (long)t * B * d->hidden;
    return rs->dec[d->layers - 1].h + (long)(t + 1) * B * d->hidden;
}

void model_step_logits(Model *m, RunState *rs, int t, int B, float *logits)
{
    int H = m->dims.hidden, V = m->dims.tgt_vocab;
    matmul_bias(logits, V, model_step_output(m, rs, t, B), H, m->params.out_w, H, m->params.out_b, B, V, H);
}

static void gather_rows(float *x, int w, const int *from, int B, float *scratch)
{
    for (int b = 0; b < B; b++)
        memcpy(scratch + (long)b * w, x + (long)from[b] * w, sizeof(float) * w);
    memcpy(x, scratch, sizeof(float) * B * w);
}

void model_reorder_state(Model *m, RunState *rs, int t, const int *from, int B)
{
    const ModelDims *d = &m->dims;
    int H = d->hidden;
    long at = (long)(t + 1) * B * H;
    for (int l = 0; l < d->layers; l++) {
        gather_rows(rs->dec[l].h + at, H, from, B, rs->d_step);
        if (d->cell == CELL_LSTM) gather_rows(rs->dec[l].c + at, H, from, B, rs->d_step);
    }
    if (d->input_feed) gather_rows(rs->out + (long)t * B * H, H, from, B, rs->d_step);
}

int best_word(const float *logits, int V)
{
    float maxv = -INFINITY;
#pragma omp simd reduction(max : maxv)
    for (int k = VOCAB_EOS; k < V; k++)
        maxv = logits[k] > maxv ? logits[k] : maxv;
    if (logits[VOCAB_UNK] >= maxv) return VOCAB_UNK;
    int best = VOCAB_EOS;
    while (best < V - 1 && logits[best] != maxv)
        best++;
    return best;
}

/* The output o_t of step t's rows (o_t = s_t for Bahdanau): the output layer's input. */
static const float *step_output(const Model *m, const RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    if (attention_is_luong(d->attention)) return rs->out + batch_step_at(batch, t) * d->hidden;
    return rs->dec[d->layers - 1].h + state_after(batch, t) * d->hidden;
}

/* Decoder inputs when some are the model's own predictions (sample_prob > 0): step
 * by step, each step's logits choose the next input, which then has to be embedded and
 * projected on its own. The fed words are kept in rs->fed for the embedding gradient
 * (laid out as batch->tgt_in). */
static void decode_sampled(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int T = batch->T, E = d->embed, H = d->hidden, X = dec_in0(d), V = d->tgt_vocab;
    int GH = n_gates(d) * H;
    memcpy(rs->fed, batch->tgt_in, sizeof(int) * batch_step_rows(batch, 0));
    for (int t = 0; t < T; t++) {
        long row = batch_step_at(batch, t);
        int Bt = batch_step_rows(batch, t);
        float *x = rs->dec_x[0] + row * X;
        embedding_forward(x, X, p->tgt_emb, rs->fed + row, Bt, E);
        if (dropping(rs)) dropout_rows(x, X, rs->dec_drop[0] + row * E, Bt, E, rs->dropout, &rs->rng);
        matmul_bias(rs->dec[0].gi + row * GH, GH, x, X, p->dec[0].w_ih, X, p->dec[0].b_ih, Bt, GH, E);
        model_decoder_step(m, rs, batch, t);
        float *logits = rs->logits + row * V;
        matmul_bias(logits, V, step_output(m, rs, batch, t), H, p->out_w, H, p->out_b, Bt, V, H);
        if (t + 1 == T) break;
        long next = batch_step_at(batch, t + 1);
        for (int b = 0; b < batch_step_rows(batch, t + 1); b++) {
            int gold = batch->tgt_in[next + b];
            /* Past the sentence's end the input stays <pad>: no loss is taken there. */
            int own = gold != VOCAB_PAD && rng_uniform(&rs->rng) < rs->sample_prob;
            rs->fed[next + b] = own ? best_word(logits + (long)b * V, V) : gold;
        }
    }
}

/* The Transformer's forward pass over a padded batch (model_fill_batch), computed on its
 * real positions only; the loss as for the recurrent models. */
static double transformer_model_forward(Model *m, RunState *rs, const Batch *batch, int want_grad)
{
    int S = batch->S, T = batch->T, B = batch->B, V = m->dims.tgt_vocab;
    int training = want_grad && rs->mode == RUN_TRAIN;
    for (int b = 0; b < B; b++) {
        rs->tr_src_len[b] = rs->tr_tgt_len[b] = 0;
        for (int j = 0; j < S; j++)
            rs->tr_src_len[b] += batch->mask[j * B + b] != 0.0f;
        for (int t = 0; t < T; t++)
            rs->tr_tgt_len[b] += batch->tgt_in[t * B + b] != VOCAB_PAD;
    }
    TDropout drop = {0};
    if (training) drop = (TDropout){rs->dropout, rs->attention_dropout, rs->activation_dropout};
    float *logits = transformer_forward_train(m, rs->tr, batch->src, rs->tr_src_len, S, batch->tgt_in,
                                              rs->tr_tgt_len, T, B, drop, &rs->rng);
    long rows;
    const int *targets = trun_targets(rs->tr, batch->tgt_out, &rows);
    long tokens = rs->loss_tokens > 0 ? rs->loss_tokens : batch->n_tokens;
    float scale = tokens > 0 ? 1.0f / tokens : 0.0f;
    return softmax_xent(logits, targets, (int)rows, V, scale, training ? rs->label_smoothing : 0.0f,
                        want_grad ? logits : NULL);
}

/* ---------------------------------------------------------------- classifier */

static void encoder_backward(Model *m, RunState *rs, const Batch *batch);

/* The cross-entropy of B rows of logits (B, C) against their classes, each row's loss
 * times weight[class] (NULL: 1), label-smoothed as loss.h describes; the summed loss,
 * and with dlogits its gradient times scale. Rows without a class (label < 0: a
 * source-only batch) count nothing. */
static double classes_xent(const float *logits, const int *label, const float *weight, int B, int C, float scale,
                           float smoothing, float *dlogits)
{
    double sum = 0;
    for (int i = 0; i < B; i++) {
        const float *x = logits + (long)i * C;
        float *g = dlogits ? dlogits + (long)i * C : NULL;
        if (label[i] < 0) {
            if (g) memset(g, 0, sizeof(float) * C);
            continue;
        }
        float top = x[0], mean = 0;
        for (int k = 0; k < C; k++) {
            if (x[k] > top) top = x[k];
            mean += x[k] / C;
        }
        double z = 0;
        for (int k = 0; k < C; k++)
            z += exp((double)x[k] - top);
        double lse = top + log(z), w = weight ? weight[label[i]] : 1.0;
        sum += w * ((1.0 - smoothing) * (lse - x[label[i]]) + smoothing * (lse - mean));
        if (!g) continue;
        for (int k = 0; k < C; k++) {
            double q = (k == label[i]) * (1.0 - smoothing) + smoothing / C;
            g[k] = (float)(scale * w * (exp(x[k] - lse) - q));
        }
    }
    return sum;
}

/* Encoder, pooling, (dropout,) output layer and loss. */
static double classifier_forward(Model *m, RunState *rs, const Batch *batch, int want_grad)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int B = batch->B, S = batch->S, H = d->hidden, C = model_classes(d);
    int training = want_grad && rs->mode == RUN_TRAIN;
    rs->dropping = training && rs->dropout > 0.0f;
    rs->sampling = 0;
    model_encode(m, rs, batch);
    const float *h = model_memory(m, rs);
    const int *len = rs->src_len;
    switch (d->pooling) {
    case POOL_ATTENTION:
        pooling_attention_forward(rs->pooled, rs->pool_attn, rs->pool_score, h, len, S, B, H, p->pool_w, p->pool_b);
        break;
    case POOL_LAST: pooling_last_forward(rs->pooled, h, len, S, B, H, d->bidirectional); break;
    case POOL_MEAN: pooling_mean_forward(rs->pooled, h, len, S, B, H); break;
    default: pooling_max_forward(rs->pooled, rs->pool_arg, h, len, S, B, H); break;
    }
    if (dropping(rs)) dropout_rows(rs->pooled, H, rs->pool_drop, B, H, rs->dropout, &rs->rng);
    matmul_bias(rs->logits, C, rs->pooled, H, p->out_w, H, p->out_b, B, C, H);
    if (batch->T == 0) return 0;  /* classifying: no labels */
    long n = rs->loss_tokens > 0 ? rs->loss_tokens : B;
    return classes_xent(rs->logits, batch->label, training ? rs->class_weight : NULL, B, C, 1.0f / (float)n,
                        training ? rs->label_smoothing : 0.0f, want_grad ? rs->logits : NULL);
}

/* dlogits (B, C) is in rs->logits: the output layer, dropout and pooling backward into
 * d_enc, then the encoder. */
static void classifier_backward(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, H = d->hidden, C = model_classes(d);
    const float *h = model_memory(m, rs);
    const int *len = rs->src_len;
    linear_grads(g->out_w, g->out_b, rs->logits, C, rs->pooled, H, B, C, H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, C, 1.0f, rs->logits, C, p->out_w, H, 0.0f,
                rs->d_pooled, H);
    if (dropping(rs)) multiply_rows(rs->d_pooled, H, rs->pool_drop, B, H);
    memset(rs->d_enc, 0, sizeof(float) * S * B * H);
    switch (d->pooling) {
    case POOL_ATTENTION:
        pooling_attention_backward(rs->d_enc, g->pool_w, g->pool_b, rs->d_pooled, h, rs->pool_attn, rs->pool_score,
                                   len, S, B, H, p->pool_w);
        break;
    case POOL_LAST: pooling_last_backward(rs->d_enc, rs->d_pooled, len, S, B, H, d->bidirectional); break;
    case POOL_MEAN: pooling_mean_backward(rs->d_enc, rs->d_pooled, len, S, B, H); break;
    default: pooling_max_backward(rs->d_enc, rs->d_pooled, rs->pool_arg, B, H); break;
    }
    encoder_backward(m, rs, batch);
}

void model_fill_batch(const Model *m, Batch *batch, const Example *ex, const int *idx, int n)
{
    if (m->dims.type == MODEL_TRANSFORMER) batch_fill(batch, ex, idx, n);
    else batch_fill_packed(batch, ex, idx, n);
}

double model_forward(Model *m, RunState *rs, const Batch *batch, int want_grad)
{
    if (m->dims.type == MODEL_TRANSFORMER) return transformer_model_forward(m, rs, batch, want_grad);
    if (m->dims.type == MODEL_CLASSIFIER) return classifier_forward(m, rs, batch, want_grad);
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int T = batch->T, E = d->embed, H = d->hidden, V = d->tgt_vocab, X = dec_in0(d);
    int GH = n_gates(d) * H;
    long N = batch_step_at(batch, T);  /* decoder rows: T*B, or the real tokens when packed */
    int training = want_grad && rs->mode == RUN_TRAIN;
    rs->dropping = training && rs->dropout > 0.0f;
    rs->sampling = training && rs->sample_prob > 0.0f;
    model_encode(m, rs, batch);
    if (rs->sampling) {
        decode_sampled(m, rs, batch);
    } else {
        /* Teacher forcing: every decoder input is known, so embed and project them all at once. */
        embedding_forward(rs->dec_x[0], X, p->tgt_emb, batch->tgt_in, N, E);
        if (dropping(rs)) dropout_rows(rs->dec_x[0], X, rs->dec_drop[0], N, E, rs->dropout, &rs->rng);
        matmul_bias(rs->dec[0].gi, GH, rs->dec_x[0], X, p->dec[0].w_ih, X, p->dec[0].b_ih, N, GH, E);
        for (int t = 0; t < T; t++)
            model_decoder_step(m, rs, batch, t);
        /* All output projections at once: logits (N, V); step t's rows follow step t-1's. */
        matmul_bias(rs->logits, V, step_output(m, rs, batch, 0), H, p->out_w, H, p->out_b, N, V, H);
    }
    long tokens = rs->loss_tokens > 0 ? rs->loss_tokens : batch->n_tokens;
    float scale = tokens > 0 ? 1.0f / tokens : 0.0f;
    return softmax_xent(rs->logits, batch->tgt_out, N, V, scale, training ? rs->label_smoothing : 0.0f,
                        want_grad ? rs->logits : NULL);
}

/* ---------------------------------------------------------------- backward */

/* dLoss/ds_t of the top layer from the attention on s_t and the attentional state
 * o_t = tanh(W_out [c_t; s_t]) (Luong kinds), added into rs->d_s[top]. */
static void luong_attend_backward(Model *m, RunState *rs, const Batch *batch, int t)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, Bt = batch_step_rows(batch, t), S = batch->S, H = d->hidden, A = d->attention;
    long row = batch_step_at(batch, t), BtH = (long)Bt * H;
    float *ds = rs->d_s[d->layers - 1];
    const float *s = rs->dec[d->layers - 1].h + state_after(batch, t) * H, *mem = model_memory(m, rs);
    const float *o = rs->out + row * H, *attn = rs->attn + row * S;
    float *dpre = rs->d_pre + row * H, *dout = rs->d_out + row * H;
    for (long i = 0; i < BtH; i++)
        dpre[i] = (dout[i] + (d->input_feed ? rs->d_feed[i] : 0.0f)) * (1.0f - o[i] * o[i]);
    /* d[c; s] = dpre · W_out */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Bt, 2 * H, H, 1.0f, dpre, H, p->att_w_out, 2 * H, 0.0f,
                rs->d_cat, 2 * H);
    for (int b = 0; b < Bt; b++)
        for (int k = 0; k < H; k++)
            ds[(long)b * H + k] += rs->d_cat[(long)b * 2 * H + H + k];
    if (A == ATT_LUONG_CONCAT) {
        float *dq = rs->d_query + row * H;
        attention_bahdanau_backward(rs->d_cat, 2 * H, rs->keys, mem, batch->mask, rs->query + row * H, H, p->att_v,
                                    attn, g->att_v, rs->d_keys, rs->d_enc, dq, H, rs->work, S, B, Bt, H, H);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Bt, H, H, 1.0f, dq, H, p->att_w_query, H, 1.0f, ds, H);
        return;
    }
    DotAttention cfg = dot_config(d);
    float *dpos = A == ATT_LOCAL_PREDICTIVE ? rs->work + 2 * S + H : NULL;
    float *dkeys = A == ATT_LUONG_DOT ? rs->d_enc : rs->d_keys;
    attention_dot_backward(&cfg, rs->d_cat, 2 * H, score_keys(m, rs), mem, rs->src_len, s, H,
                           is_local(A) ? rs->pos + row : NULL, attn, dkeys, rs->d_enc, rs->d_step, H, dpos, rs->work,
                           S, B, Bt, H);
    for (long i = 0; i < BtH; i++)
        ds[i] += rs->d_step[i];
    if (A == ATT_LOCAL_PREDICTIVE) {
        /* p = len * sigmoid(u), u = v_p . tanh(W_p s) */
        const float *ph = rs->pos_hidden + row * H;
        float *dph = rs->d_pos + row * H;
        for (int b = 0; b < Bt; b++) {
            float len = (float)rs->src_len[b], sg = rs->pos[row + b] / len;
            float du = dpos[b] * len * sg * (1.0f - sg);
            for (int k = 0; k < H; k++) {
                float h = ph[(long)b * H + k];
                g->att_v_pos[k] += du * h;
                dph[(long)b * H + k] = du * p->att_v_pos[k] * (1.0f - h * h);
            }
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Bt, H, H, 1.0f, dph, H, p->att_w_pos, H, 1.0f, ds, H);
    }
}

/* The states each step started from, s_{t-1} of layer l, laid out like the step's own
 * rows (a packed batch keeps the previous step's first rows), so that the recurrent
 * weights' gradient over all steps is one product. Unpacked, they already are: h. */
static const float *states_before(const RnnRun *run, const Batch *batch, int H, float *scratch)
{
    if (!batch->tgt_off) return run->h;
    for (int t = 0; t < batch->T; t++)
        memcpy(scratch + batch_step_at(batch, t) * H, run->h + state_before(batch, t) * H,
               sizeof(float) * batch_step_rows(batch, t) * H);
    return scratch;
}

/* The decoder, steps in reverse; leaves dLoss/ds_0 (and dc_0) in rs->d_s, rs->d_c. A
 * sentence's rows take part from its last step down (the carries of the others stay
 * 0 until then). */
static void decoder_backward(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, T = batch->T, E = d->embed, H = d->hidden, L = d->layers, X = dec_in0(d);
    int GH = n_gates(d) * H, lstm = d->cell == CELL_LSTM, luong = attention_is_luong(d->attention);
    long BH = (long)B * H, N = batch_step_at(batch, T);
    for (int l = 0; l < L; l++) {
        memset(rs->d_s[l], 0, sizeof(float) * BH);
        if (lstm) memset(rs->d_c[l], 0, sizeof(float) * BH);
    }
    memset(rs->d_feed, 0, sizeof(float) * BH);
    for (int t = T - 1; t >= 0; t--) {
        long row = batch_step_at(batch, t), before = state_before(batch, t), after = state_after(batch, t);
        int Bt = batch_step_rows(batch, t);
        long BtH = (long)Bt * H;
        if (luong) {
            luong_attend_backward(m, rs, batch, t);
        } else {
            const float *dout = rs->d_out + row * H;
            for (long i = 0; i < BtH; i++)
                rs->d_s[L - 1][i] += dout[i];
        }
        for (int l = L - 1; l >= 0; l--) {
            RnnRun *run = &rs->dec[l];
            int ghw = GH + (fused_query(d, l) ? H : 0);
            float *dh = rs->d_s[l], *dgi = rs->d_dgi[l] + row * GH, *dgh = rs->d_dgh[l] + row * ghw;
            if (lstm) {
                lstm_gates_backward(dh, rs->d_c[l], run->cache + row * GH, run->c + before * H, run->c + after * H,
                                    dgi, GH, rs->d_c[l], Bt, H);
                for (int b = 0; b < Bt; b++)
                    memcpy(dgh + (long)b * ghw, dgi + (long)b * GH, sizeof(float) * GH);
                memset(dh, 0, sizeof(float) * BtH);
            } else {
                /* dh becomes the part of dLoss/ds_{t-1} that bypasses W_hh. */
                gru_gates_backward(dh, run->cache + row * GH, run->gh + row * ghw, ghw, run->h + before * H, dgi, GH,
                                   dgh, ghw, dh, Bt, H);
            }
            if (l) {
                /* The layer's input was the layer below's s_t (after dropout). */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Bt, H, GH, 1.0f, dgi, GH, p->dec[l].w_ih, H,
                            0.0f, rs->d_step, H);
                if (dropping(rs)) multiply_rows(rs->d_step, H, rs->dec_drop[l] + row * H, Bt, H);
                for (long i = 0; i < BtH; i++)
                    rs->d_s[l - 1][i] += rs->d_step[i];
            } else if (X > E) {
                /* Layer 0's second input: the context (bahdanau) or o_{t-1} (input feeding). */
                float *dx = d->attention == ATT_BAHDANAU ? rs->d_ctx : rs->d_feed;
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Bt, H, GH, 1.0f, dgi, GH, p->dec[0].w_ih + E, X,
                            0.0f, dx, H);
                if (d->attention == ATT_BAHDANAU) {
                    RnnRun *top = &rs->dec[L - 1];
                    int tw = GH + H;
                    attention_bahdanau_backward(rs->d_ctx, H, rs->keys, model_memory(m, rs), batch->mask,
                                                top->gh + row * tw + GH, tw, p->att_v, rs->attn + row * S, g->att_v,
                                                rs->d_keys, rs->d_enc, rs->d_dgh[L - 1] + row * tw + GH, tw, rs->work,
                                                S, B, Bt, H, H);
                }
            }
        }
        /* ds_{t-1} += dgh · W_hh (with the query's rows for the fused top layer). */
        for (int l = 0; l < L; l++) {
            int ghw = GH + (fused_query(d, l) ? H : 0);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Bt, H, ghw, 1.0f, rs->d_dgh[l] + row * ghw, ghw,
                        p->dec[l].w_hh, H, 1.0f, rs->d_s[l], H);
        }
    }
    /* Weight gradients over all steps at once (d_out, consumed above, holds the states
     * each step started from when the batch is packed). */
    for (int l = 0; l < L; l++) {
        int ghw = GH + (fused_query(d, l) ? H : 0), in = l ? H : X;
        linear_grads(g->dec[l].w_hh, g->dec[l].b_hh, rs->d_dgh[l], ghw, states_before(&rs->dec[l], batch, H, rs->d_out),
                     H, N, ghw, H);
        linear_grads(g->dec[l].w_ih, g->dec[l].b_ih, rs->d_dgi[l], GH, rs->dec_x[l], in, N, GH, in);
    }
    /* Target embeddings: d_emb = dgi · W_ih[:, :E] */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, E, GH, 1.0f, rs->d_dgi[0], GH, p->dec[0].w_ih, X, 0.0f,
                rs->d_x, E);
    if (dropping(rs)) multiply_rows(rs->d_x, E, rs->dec_drop[0], N, E);
    embedding_backward(g->tgt_emb, rs->d_x, E, rs->sampling ? rs->fed : batch->tgt_in, N, E);
    if (!luong) return;
    linear_grads(g->att_w_out, NULL, rs->d_pre, H, rs->cat, 2 * H, N, H, 2 * H);
    const float *s_all = rs->dec[L - 1].h + (long)B * H;
    if (d->attention == ATT_LUONG_CONCAT) {
        linear_grads(g->att_w_query, g->att_b_query, rs->d_query, H, s_all, H, N, H, H);
    }
    if (d->attention == ATT_LOCAL_PREDICTIVE)
        linear_grads(g->att_w_pos, NULL, rs->d_pos, H, s_all, H, N, H, H);
}

/* A bidirectional layer's output gradient d (n, H) = [forward; reverse] split into its
 * directions' (n, U) each. */
static void split_directions(const float *d, long n, int H, int U, float *fwd, float *rev)
{
    for (long i = 0; i < n; i++) {
        memcpy(fwd + i * U, d + i * H, sizeof(float) * U);
        memcpy(rev + i * U, d + i * H + U, sizeof(float) * U);
    }
}

/* The encoder of a padded batch, top layer first; d_enc holds dLoss/d(top layer
 * output) on entry. */
static void encoder_backward_padded(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = enc_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM, bi = d->bidirectional;
    long SB = (long)S * B;
    for (int l = L - 1; l >= 0; l--) {
        int in = l ? H : E;
        float *dh[2] = {rs->d_enc, NULL}, *dcf[2] = {lstm ? rs->d_c[l] : NULL, NULL};
        if (classifier(d)) {
            /* No decoder starts from the final states: their gradient is the outputs'. */
            if (lstm && !bi) memset(rs->d_c[l], 0, sizeof(float) * B * H);  /* dcf[0] */
            if (bi) {
                dh[0] = rs->d_dir[0];
                dh[1] = rs->d_dir[1];
                split_directions(rs->d_enc, SB, H, U, dh[0], dh[1]);
                if (lstm) {
                    memset(rs->d_cfin, 0, sizeof(float) * 2 * B * U);
                    dcf[0] = rs->d_cfin;
                    dcf[1] = rs->d_cfin + (long)B * U;
                }
            }
        } else if (!bi) {
            /* s_0 of decoder layer l is this layer's final state, the carried h[S]. */
            float *last = rs->d_enc + (SB - B) * H;
            for (long i = 0; i < (long)B * H; i++)
                last[i] += rs->d_s[l][i];
        } else {
            /* s_0 = tanh(W_bridge [h_fwd; h_rev] + b) */
            const float *s0 = rs->dec[l].h;
            for (long i = 0; i < (long)B * H; i++)
                rs->d_step[i] = rs->d_s[l][i] * (1.0f - s0[i] * s0[i]);
            linear_grads(g->bridge_w[l], g->bridge_b[l], rs->d_step, H, rs->bridge_in + (long)l * B * H, H, B, H, H);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, H, 1.0f, rs->d_step, H, p->bridge_w[l], H,
                        0.0f, rs->d_h0, H);
            dh[0] = rs->d_dir[0];
            dh[1] = rs->d_dir[1];
            split_directions(rs->d_enc, SB, H, U, dh[0], dh[1]);
            /* The forward final state is at position S-1 (carried), the reverse one at 0. */
            for (int b = 0; b < B; b++)
                for (int k = 0; k < U; k++) {
                    dh[0][(SB - B + b) * U + k] += rs->d_h0[(long)b * H + k];
                    dh[1][(long)b * U + k] += rs->d_h0[(long)b * H + U + k];
                    if (lstm) {
                        rs->d_cfin[(long)b * U + k] = rs->d_c[l][(long)b * H + k];
                        rs->d_cfin[(long)(B + b) * U + k] = rs->d_c[l][(long)b * H + U + k];
                    }
                }
            if (lstm) {
                dcf[0] = rs->d_cfin;
                dcf[1] = rs->d_cfin + (long)B * U;
            }
        }
        for (int r = 0; r < n_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            float *dx = r ? rs->d_x2 : rs->d_x;
            if (lstm) {
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U), gw = lstm_weights(&g->enc[l][r], in, U);
                lstm_sequence_backward(&w, &gw, rs->enc_x[l], batch->mask, run->h, run->c, run->cache, dh[r], dcf[r],
                                       dx, rs->d_h0, rs->d_c0, rs->d_enc_gi, S, B, r);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U), gw = gru_weights(&g->enc[l][r], in, U);
                gru_sequence_backward(&w, &gw, rs->enc_x[l], batch->mask, run->h, run->gh, run->cache, dh[r], dx,
                                      rs->d_h0, rs->d_enc_gi, rs->d_enc_gh, S, B, r);
            }
        }
        if (bi)
            for (long i = 0; i < SB * in; i++)
                rs->d_x[i] += rs->d_x2[i];
        if (dropping(rs)) multiply_rows(rs->d_x, in, rs->enc_drop[l], SB, in);
        if (l) memcpy(rs->d_enc, rs->d_x, sizeof(float) * SB * H);
    }
    embedding_backward(g->src_emb, rs->d_x, E, batch->src, SB, E);
}

/* The encoder of a packed batch, top layer first; d_enc holds dLoss/d(memory) in
 * batch order on entry. */
static void encoder_backward_packed(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int B = batch->B, S = batch->S, E = d->embed, H = d->hidden, U = enc_units(d), L = d->layers;
    int lstm = d->cell == CELL_LSTM, bi = d->bidirectional;
    const int *off = batch->src_off, *row = batch->enc_row;
    long N = off[S];
    for (int t = 0; t < S; t++)
        for (int i = 0; i < off[t + 1] - off[t]; i++)
            memcpy(rs->d_encp + ((long)off[t] + i) * H, rs->d_enc + ((long)t * B + row[i]) * H, sizeof(float) * H);
    for (int l = L - 1; l >= 0; l--) {
        int in = l ? H : E;
        float *dh[2] = {rs->d_encp, NULL};
        /* The final states' gradients in the encoder's row order, per direction: from
         * the decoder's initial state directly (one direction) or through the bridge. */
        const float *dfin = rs->d_s[l];  /* a classifier's: zero (no decoder starts from them) */
        if (bi && !classifier(d)) {
            /* s_0 = tanh(W_bridge [h_fwd; h_rev] + b) */
            const float *s0 = rs->dec[l].h;
            for (long i = 0; i < (long)B * H; i++)
                rs->d_step[i] = rs->d_s[l][i] * (1.0f - s0[i] * s0[i]);
            linear_grads(g->bridge_w[l], g->bridge_b[l], rs->d_step, H, rs->bridge_in + (long)l * B * H, H, B, H, H);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, H, 1.0f, rs->d_step, H, p->bridge_w[l], H,
                        0.0f, rs->d_h0, H);
            dfin = rs->d_h0;
        }
        if (bi) {
            dh[0] = rs->d_dir[0];
            dh[1] = rs->d_dir[1];
            split_directions(rs->d_encp, N, H, U, dh[0], dh[1]);
        }
        for (int r = 0; r < n_dirs(d); r++)
            for (int i = 0; i < B; i++) {
                memcpy(rs->d_hfin + ((long)r * B + i) * U, dfin + (long)row[i] * H + r * U, sizeof(float) * U);
                if (lstm)
                    memcpy(rs->d_cfin + ((long)r * B + i) * U, rs->d_c[l] + (long)row[i] * H + r * U,
                           sizeof(float) * U);
            }
        for (int r = 0; r < n_dirs(d); r++) {
            RnnRun *run = &rs->enc[l][r];
            float *dx = r ? rs->d_x2 : rs->d_x, *hfin = rs->d_hfin + (long)r * B * U;
            if (lstm) {
                LstmWeights w = lstm_weights(&p->enc[l][r], in, U), gw = lstm_weights(&g->enc[l][r], in, U);
                lstm_packed_backward(&w, &gw, rs->enc_x[l], run->h, run->c, run->cache, dh[r], hfin,
                                     rs->d_cfin + (long)r * B * U, dx, rs->d_h0, rs->d_c0, rs->d_enc_gi, off, S, B, r,
                                     rs->enc_work);
            } else {
                GruWeights w = gru_weights(&p->enc[l][r], in, U), gw = gru_weights(&g->enc[l][r], in, U);
                gru_packed_backward(&w, &gw, rs->enc_x[l], run->h, run->gh, run->cache, dh[r], hfin, dx, rs->d_h0,
                                    rs->d_enc_gi, rs->d_enc_gh, off, S, B, r, rs->enc_work);
            }
        }
        if (bi)
            for (long i = 0; i < N * in; i++)
                rs->d_x[i] += rs->d_x2[i];
        if (dropping(rs)) multiply_rows(rs->d_x, in, rs->enc_drop[l], N, in);
        if (l) memcpy(rs->d_encp, rs->d_x, sizeof(float) * N * H);
    }
    embedding_backward(g->src_emb, rs->d_x, E, batch->enc_src, N, E);
}

static void encoder_backward(Model *m, RunState *rs, const Batch *batch)
{
    if (batch->src_off) encoder_backward_packed(m, rs, batch);
    else encoder_backward_padded(m, rs, batch);
}

void model_backward(Model *m, RunState *rs, const Batch *batch)
{
    if (m->dims.type == MODEL_TRANSFORMER) {
        transformer_backward(m, rs->tr);
        return;
    }
    if (m->dims.type == MODEL_CLASSIFIER) {
        classifier_backward(m, rs, batch);
        return;
    }
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int S = batch->S, H = d->hidden, V = d->tgt_vocab;
    long N = batch_step_at(batch, batch->T), SB = (long)S * batch->B;
    const float *o_all = step_output(m, rs, batch, 0), *mem = model_memory(m, rs);

    /* Output layer: dlogits (N, V) is already in rs->logits. */
    linear_grads(g->out_w, g->out_b, rs->logits, V, o_all, H, N, V, H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, H, V, 1.0f, rs->logits, V, p->out_w, H, 0.0f, rs->d_out,
                H);

    memset(rs->d_keys, 0, sizeof(float) * SB * H);
    memset(rs->d_enc, 0, sizeof(float) * SB * H);
    decoder_backward(m, rs, batch);

    /* Keys W h_j: dW += dkeys^T h; dh += dkeys · W */
    const float *w_key = is_additive(d->attention) ? p->att_w_key : p->att_w;
    float *g_key = is_additive(d->attention) ? g->att_w_key : g->att_w;
    if (d->attention != ATT_LUONG_DOT) {
        linear_grads(g_key, NULL, rs->d_keys, H, mem, H, SB, H, H);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, SB, H, H, 1.0f, rs->d_keys, H, w_key, H, 1.0f, rs->d_enc,
                    H);
    }
    encoder_backward(m, rs, batch);
}
