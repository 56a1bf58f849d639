/* model.c — the model interface's generic half (model.h): the parameter memory, its
 * initialisation, the run state's life, and the entry points that hand a model to its
 * family's operations. Nothing here knows a family; registry.c says which family a
 * model.type is. */
#include "models/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h" /* defines: xcalloc, Rng, rng_seed, rng_uniform, rng_normal */
#include "kernels/linalg.h"   /* defines: linear_grads, column_sums_add */
#include "layers/embedding.h" /* defines: embedding_forward */

/* The family of d: every ModelDims that reaches these functions has passed dims_problem
 * (or comes from a file that did), so it has one. */
static const ModelFamily *family_of(const ModelDims *d)
{
    const ModelFamily *f = model_family(d);
    if (!f) {  /* a programming error, not bad input: the input checks come first */
        fprintf(stderr, "nmt: internal error: model type %d has no family (dims_problem was not asked)\n", d->type);
        abort();
    }
    return f;
}

/* ---------------------------------------------------------------- parameters */

void param_add(ParamLayout *lo, float **slot, long rows, long cols, int units, const char *fmt, const char *sfx)
{
    TensorShape *s = &lo->shape[lo->n];
    snprintf(s->name, sizeof s->name, fmt, sfx);
    s->rows = rows;
    s->cols = cols;
    lo->slot[lo->n] = slot;
    lo->units[lo->n] = units;
    lo->fan_out[lo->n] = rows;
    lo->n++;
}

static void layout(const ModelDims *d, Params *p, ParamLayout *lo)
{
    lo->n = 0;
    family_of(d)->layout(d, p, lo);
}

int params_shapes(const ModelDims *d, TensorShape out[MAX_TENSORS])
{
    Params p;
    ParamLayout lo;
    layout(d, &p, &lo);
    memcpy(out, lo.shape, sizeof(TensorShape) * lo.n);
    return lo.n;
}

long params_count(const ModelDims *d)
{
    Params p;
    ParamLayout lo;
    layout(d, &p, &lo);
    long n = 0;
    for (int i = 0; i < lo.n; i++)
        n += lo.shape[i].rows * lo.shape[i].cols;
    return n;
}

int params_tensors(const Params *p, const ModelDims *d, float *out[MAX_TENSORS])
{
    Params q = *p;
    ParamLayout lo;
    layout(d, &q, &lo);
    for (int i = 0; i < lo.n; i++)
        out[i] = *lo.slot[i];
    return lo.n;
}

int model_grow_from(Model *to, const Model *from, char *why, size_t len)
{
    if (to->dims.src_vocab < from->dims.src_vocab || to->dims.tgt_vocab < from->dims.tgt_vocab) {
        snprintf(why, len, "smaller vocabularies (%d and %d) than the model's (%d and %d)", to->dims.src_vocab,
                 to->dims.tgt_vocab, from->dims.src_vocab, from->dims.tgt_vocab);
        return -1;
    }
    TensorShape old_shape[MAX_TENSORS], new_shape[MAX_TENSORS];
    float *old_t[MAX_TENSORS], *new_t[MAX_TENSORS];
    int n = params_shapes(&from->dims, old_shape);
    if (model_family(&to->dims) != model_family(&from->dims) || params_shapes(&to->dims, new_shape) != n) {
        snprintf(why, len, "another kind of model");
        return -1;
    }
    /* The same architecture has the same tensors in the same order, differing at most in
     * their rows, one per vocabulary entry: the old rows come first (row-major). */
    for (int i = 0; i < n; i++) {
        const TensorShape *o = &old_shape[i], *w = &new_shape[i];
        int vocab_rows = o->rows == from->dims.src_vocab || o->rows == from->dims.tgt_vocab;
        if (strcmp(o->name, w->name) || o->cols != w->cols || (o->rows != w->rows && !vocab_rows) || w->rows < o->rows) {
            snprintf(why, len, "tensor %s is (%ld, %ld) in the model, (%ld, %ld) here: another architecture", o->name,
                     o->rows, o->cols, w->rows, w->cols);
            return -1;
        }
    }
    params_tensors(&from->params, &from->dims, old_t);
    params_tensors(&to->params, &to->dims, new_t);
    for (int i = 0; i < n; i++)
        memcpy(new_t[i], old_t[i], sizeof(float) * (size_t)(old_shape[i].rows * old_shape[i].cols));
    return 0;
}

/* Carve mem into the tensors, in layout order. */
static void params_point(Params *p, float *mem, const ModelDims *d)
{
    ParamLayout lo;
    memset(p, 0, sizeof *p);
    layout(d, p, &lo);
    for (int i = 0; i < lo.n; i++) {
        *lo.slot[i] = mem;
        mem += lo.shape[i].rows * lo.shape[i].cols;
    }
    if (d->tie_embeddings) p->out_w = p->tgt_emb;
    if (d->share_src_emb) p->src_emb = p->tgt_emb;
}

void model_view(Model *view, const Model *m)
{
    view->dims = m->dims;
    view->n_params = m->n_params;
    view->param_mem = m->param_mem;
    view->params = m->params;
    view->floats_dropped = m->floats_dropped;
    view->shortlist = m->shortlist;
    view->stored_int8 = NULL;  /* a view trains: its model has no stored rows (model_forward) */
    view->grad_mem = xcalloc(m->n_params + MODEL_GRAD_SPARE, sizeof(float));
    params_point(&view->grads, view->grad_mem, &view->dims);
}

void model_free_view(Model *view)
{
    free(view->grad_mem);
    memset(view, 0, sizeof *view);
}

void model_alloc(Model *m, const ModelDims *d)
{
    m->dims = *d;
    m->prepared = NULL;
    m->compute_type = COMPUTE_FLOAT32;
    m->floats_dropped = 0;
    m->shortlist = NULL;
    m->stored_int8 = NULL;
    m->dims.layers = d->layers > 0 ? d->layers : 1;
    m->n_params = params_count(d);
    m->param_mem = xcalloc(m->n_params, sizeof(float));
    m->grad_mem = xcalloc(m->n_params + MODEL_GRAD_SPARE, sizeof(float));
    params_point(&m->params, m->param_mem, &m->dims);
    params_point(&m->grads, m->grad_mem, &m->dims);
}

/* One pass over the tensors in layout order, each entry drawn from one generator, as
 * ParamInit describes: the Xavier embeddings N(0, 1/d_model) are scaled back to unit
 * size by the input's sqrt(d_model) (and, tied, are the output layer). */
void model_init_weights(Model *m, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    ParamLayout lo;
    Params q = m->params;
    layout(&m->dims, &q, &lo);
    int xavier = family_of(&m->dims)->init == INIT_XAVIER;
    float emb_std = xavier ? 1.0f / sqrtf((float)m->dims.embed) : 1.0f;
    for (int i = 0; i < lo.n; i++) {
        float *t = *lo.slot[i];
        long rows = lo.shape[i].rows, cols = lo.shape[i].cols, n = rows * cols;
        int units = lo.units[i];
        float bound = units <= 0 ? 0.0f
                      : !xavier  ? 1.0f / sqrtf((float)units)
                      : cols > 1 ? sqrtf(6.0f / (float)(lo.fan_out[i] + cols))
                                 : 0.0f;   /* a Xavier-initialised bias */
        for (long k = 0; k < n; k++)
            t[k] = units == INIT_ONES    ? 1.0f
                   : units == INIT_ZEROS ? 0.0f
                   : units > 0           ? bound * (2.0f * rng_uniform(&rng) - 1.0f)
                                         : emb_std * rng_normal(&rng);
    }
}

void model_zero_grad(Model *m) { memset(m->grad_mem, 0, sizeof(float) * m->n_params); }

void model_unprepare_decoding(Model *m)
{
    const ModelFamily *f = model_family(&m->dims);
    if (m->prepared && f && f->prepared_free) f->prepared_free(m->prepared);
    m->prepared = NULL;
    m->compute_type = COMPUTE_FLOAT32;
}

void model_prepare_decoding(Model *m, ComputeType type)
{
    if (m->floats_dropped) {  /* a programming error: such a model only decodes as it is */
        fprintf(stderr, "nmt: internal error: preparing a model whose float weights were given back\n");
        abort();
    }
    if (type != COMPUTE_INT8) model_materialize(m);  /* float32 reads every weight */
    model_unprepare_decoding(m);
    const ModelFamily *f = family_of(&m->dims);
    if (!f->prepare) return;
    m->prepared = f->prepare(m, type);
    m->compute_type = type;
}

static void stored_free(Model *m);
static void stored_row(const StoredInt8 *t, long r, float *out);

void model_drop_prepared_floats(Model *m)
{
    const ModelFamily *f = family_of(&m->dims);
    if (!m->prepared || m->compute_type != COMPUTE_INT8 || !f->int8_only) return;
    float **slot[MAX_TENSORS];
    long n[MAX_TENSORS];
    int count = f->int8_only(m, slot, n);
    for (int i = 0; i < count; i++) {
        memory_give_back(*slot[i], sizeof(float) * (size_t)n[i]);
        *slot[i] = NULL;
    }
    m->floats_dropped = count > 0;
    /* Prepared: the stored rows were copied, but an embedding's, which lookups read. */
    StoredInt8s *st = m->stored_int8;
    int kept = 0;
    for (int i = 0; st && i < st->n; i++) {
        if (st->t[i].lookup && st->t[i].q) st->t[kept++] = st->t[i];
        else free(st->t[i].q), free(st->t[i].scale);
    }
    if (st) st->n = kept;
    if (st && !kept) stored_free(m);
}

void model_embed(const Model *m, float *out, int ld, const float *table, const int *ids, int n, int E)
{
    const StoredInt8s *st = m->stored_int8;
    for (int i = 0; st && i < st->n; i++) {
        const StoredInt8 *t = &st->t[i];
        if (!t->q || t->at != table || t->cols != E) continue;
        for (int r = 0; r < n; r++)
            stored_row(t, ids[r], out + (long)r * ld);
        return;
    }
    embedding_forward(out, ld, table, ids, n, E);
}

static void stored_free(Model *m)
{
    StoredInt8s *st = m->stored_int8;
    if (!st) return;
    for (int i = 0; i < st->n; i++)
        free(st->t[i].q), free(st->t[i].scale);
    free(st);
    m->stored_int8 = NULL;
}

/* Row r of stored tensor t as floats into out: scale x q, the one formula for writing
 * the tensor's weights and for looking a row up (model_embed), so both give the same
 * bits. */
static void stored_row(const StoredInt8 *t, long r, float *out)
{
    const int8_t *q = t->q + r * t->cols;
    for (long c = 0; c < t->cols; c++)
        out[c] = t->scale[r] * (float)q[c];
}

/* Writes stored tensor i's float weights. */
static void stored_write(StoredInt8 *t)
{
    for (long r = 0; r < t->rows; r++)
        stored_row(t, r, t->at + r * t->cols);
    free(t->q), free(t->scale);
    t->q = NULL, t->scale = NULL;
}

void model_materialize(Model *m)
{
    StoredInt8s *st = m->stored_int8;
    for (int i = 0; st && i < st->n; i++)
        if (st->t[i].q) stored_write(&st->t[i]);
    stored_free(m);
}

void model_prepare_weight(const Model *m, PreparedWeight *pw, const float *w, int ld, int N, int K,
                          ComputeType type)
{
    StoredInt8s *st = m->stored_int8;
    const float *end = w + (long)(N - 1) * ld + K;
    for (int i = 0; st && i < st->n; i++) {
        StoredInt8 *t = &st->t[i];
        if (!t->q) continue;
        if (type == COMPUTE_INT8 && t->at == w && t->rows == N && t->cols == K && ld == K) {
            prepared_weight_init_int8(pw, t->q, t->scale, N, K);
            return;
        }
        if (w < t->at + t->rows * t->cols && t->at < end) stored_write(t);  /* read as floats below */
    }
    prepared_weight_init(pw, w, ld, N, K, type);
}

void model_free(Model *m)
{
    model_unprepare_decoding(m);
    stored_free(m);
    free(m->param_mem);
    free(m->grad_mem);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- run state */

void runstate_alloc(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T)
{
    memset(rs, 0, sizeof *rs);
    family_of(d)->runstate_alloc(rs, d, mode, B, S, T);
    rs->mode = mode;
    rs->cap_B = B;
    rs->cap_S = S;
    rs->cap_T = T;
}

void runstate_free(RunState *rs)
{
    if (rs->own_free) rs->own_free(rs->own);
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

void runstate_copy_options(RunState *to, const RunState *from)
{
    to->dropout = from->dropout;
    to->attention_dropout = from->attention_dropout;
    to->activation_dropout = from->activation_dropout;
    to->label_smoothing = from->label_smoothing;
    to->sample_prob = from->sample_prob;
    to->loss_tokens = from->loss_tokens;
    to->class_weight = from->class_weight;
    to->attn_layer = from->attn_layer;
}

const float *model_memory(const Model *m, const RunState *rs)
{
    (void)m;
    return rs->memory;
}

/* ---------------------------------------------------------------- through the family */

void model_fill_batch(const Model *m, Batch *batch, const Example *ex, const int *idx, int n)
{
    family_of(&m->dims)->fill_batch(batch, ex, idx, n);
}

double model_forward(Model *m, RunState *rs, const Batch *batch, int want_grad)
{
    /* A model read for int8 decoding only has a forward pass that decodes: a classifier
     * prepared for int8 classifying (RUN_DECODE); any other is a programming error. */
    if ((m->stored_int8 || m->floats_dropped) && !(rs->mode == RUN_DECODE && m->compute_type == COMPUTE_INT8)) {
        fprintf(stderr, "nmt: internal error: a forward pass of a model read for int8 decoding only\n");
        abort();
    }
    return family_of(&m->dims)->forward(m, rs, batch, want_grad);
}

void model_backward(Model *m, RunState *rs, const Batch *batch) { family_of(&m->dims)->backward(m, rs, batch); }

void model_output_grads(DeferredGrads *defer, float *gw, float *gb, const float *dy, const float *x, int rows, int n,
                        int k)
{
    if (!defer) {
        linear_grads(gw, gb, dy, n, x, k, rows, n, k);
        return;
    }
    *defer = (DeferredGrads){dy, x, rows, n, k};
    if (gb) column_sums_add(gb, dy, rows, n, n);
}
