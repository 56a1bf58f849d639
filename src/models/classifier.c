/* classifier.c — the sentence classifier family's operations (classifier.h).
 *
 * Why a file of its own: the classifier shares the recurrent encoder (rnn_encoder.c)
 * but nothing of the decoder, and has its own head, loss, description and model file
 * section; it was a set of branches inside the recurrent model before. */
#include "models/classifier.h"

#include <cblas.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/linalg.h" /* defines: matmul_bias */
#include "layers/bagofwords.h" /* defines: bag_of_words_forward, bag_of_words_backward */
#include "layers/pooling.h"    /* defines: Pooling, pooling_*_forward/_backward, pooling_name */
#include "models/rnn.h"     /* defines: rnn_encode, rnn_encoder_backward, rnn_encoder_layout, rows_dropout */
#include "base/util.h"      /* defines: xmalloc */

/* ---------------------------------------------------------------- dimensions, parameters */

/* The recurrent encoder's keys and pooling: none of the Transformer's. */
static void classifier_settle_dims(ModelDims *d)
{
    d->heads = d->ff = d->activation = d->norm = d->enc_layers = d->dec_layers = 0;
    d->share_src_emb = 0;
}

/* The encoder's tensors, then the attention pooling's (attention only), the output
 * layer's and the bag-of-words scores (model.bag_of_words only: zeros at the start, so
 * that the first updates see the encoder's logits alone). */
static void classifier_layout(const ModelDims *d, Params *p, ParamLayout *lo)
{
    long H = d->hidden;
    rnn_encoder_layout(d, p, lo, 0);
    if (d->pooling == POOL_ATTENTION) {
        param_add(lo, &p->pool_w, H, 1, (int)H, "pool_w%s", "");
        param_add(lo, &p->pool_b, 1, 1, (int)H, "pool_b%s", "");
    }
    param_add(lo, &p->out_w, model_classes(d), H, (int)H, "out_w%s", "");
    param_add(lo, &p->out_b, model_classes(d), 1, (int)H, "out_b%s", "");
    if (d->bag_of_words) param_add(lo, &p->bow_w, d->src_vocab, model_classes(d), INIT_ZEROS, "bow_w%s", "");
}

static void classifier_runstate(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T)
{
    rnn_runstate_alloc(rs, d, mode, B, S, T, 0);
}

/* ---------------------------------------------------------------- prepared for int8 */

/* Model.prepared of a classifier: for int8 only, the encoder's weights
 * (rnn_encoder_prepare; first, where the shared encoder looks) and the output layer's,
 * so that every product is per row and a sentence's label and probabilities do not
 * depend on its batch. A classifier prepared for int8 classifies in RUN_DECODE
 * (classify_lines). */
typedef struct {
    RnnEncoderPrepared enc;
    PreparedWeight out;
} ClassifierPrepared;

static void *classifier_prepare(const Model *m, ComputeType type)
{
    ClassifierPrepared *pr = xcalloc(1, sizeof *pr);
    rnn_encoder_prepare(m, &pr->enc, type, 0);
    if (type == COMPUTE_INT8)
        model_prepare_weight(m, &pr->out, m->params.out_w, m->dims.hidden, model_classes(&m->dims), m->dims.hidden,
                             type);
    return pr;
}

static void classifier_prepared_free(void *prepared)
{
    ClassifierPrepared *pr = prepared;
    rnn_encoder_prepared_free(&pr->enc);
    prepared_weight_free(&pr->out);
    free(pr);
}

static int classifier_int8_only(Model *m, float **slot[MAX_TENSORS], long n[MAX_TENSORS])
{
    int c = rnn_encoder_int8_only(m, slot, n, 0, 0);
    slot[c] = &m->params.out_w, n[c++] = (long)model_classes(&m->dims) * m->dims.hidden;
    return c;
}

/* The output layer's int8 weight when rs classifies with a model prepared for int8, or NULL. */
static const PreparedWeight *out_int8(const Model *m, const RunState *rs)
{
    if (rs->mode != RUN_DECODE || !m->prepared || m->compute_type != COMPUTE_INT8) return NULL;
    return &((const ClassifierPrepared *)m->prepared)->out;
}

/* ---------------------------------------------------------------- forward and backward */

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
    rnn_encode(m, rs, batch, 0);
    const float *h = rs->memory;
    const int *len = rs->src_len;
    switch (d->pooling) {
    case POOL_ATTENTION:
        pooling_attention_forward(rs->pooled, rs->pool_attn, rs->pool_score, h, len, S, B, H, p->pool_w, p->pool_b);
        break;
    case POOL_LAST: pooling_last_forward(rs->pooled, h, len, S, B, H, d->bidirectional); break;
    case POOL_MEAN: pooling_mean_forward(rs->pooled, h, len, S, B, H); break;
    default: pooling_max_forward(rs->pooled, rs->pool_arg, h, len, S, B, H); break;
    }
    if (rs->dropping) rows_dropout(rs->pooled, H, rs->pool_drop, B, H, rs->dropout, &rs->rng);
    prepared_matmul_bias(rs->logits, C, rs->pooled, H, p->out_w, H, out_int8(m, rs), p->out_b, B, C, H);
    if (d->bag_of_words) bag_of_words_forward(rs->logits, p->bow_w, batch->src, rs->src_len, S, B, C);
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
    const float *h = rs->memory;
    const int *len = rs->src_len;
    if (d->bag_of_words) bag_of_words_backward(g->bow_w, rs->logits, batch->src, rs->src_len, S, B, C);
    model_output_grads(rs->defer_output ? &rs->output : NULL, g->out_w, g->out_b, rs->logits, rs->pooled, B, C, H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, H, C, 1.0f, rs->logits, C, p->out_w, H, 0.0f,
                rs->d_pooled, H);
    if (rs->dropping) rows_multiply(rs->d_pooled, H, rs->pool_drop, B, H);
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
    rnn_encoder_backward(m, rs, batch, 0);
}

/* ---------------------------------------------------------------- description */

static void classifier_describe(const ModelDims *d, long n_params, const Vocab *tgt, FILE *out)
{
    fprintf(out, "model: classifier, %s, %d layer%s%s, %s pooling%s, %d classes\n", rnn_cell_name(d->cell),
            d->layers, d->layers > 1 ? "s" : "", d->bidirectional ? ", bidirectional encoder" : "",
            pooling_name(d->pooling), d->bag_of_words ? " and a bag of words" : "", model_classes(d));
    fprintf(out, "labels: ");
    for (int c = 0; c < model_classes(d); c++)
        fprintf(out, "%s%s", c ? ", " : "", vocab_class_label(tgt, c));
    fprintf(out, "\nsizes: embed %d, hidden %d, %ld parameters\n", d->embed, d->hidden, n_params);
}

static void classifier_facts(const ModelDims *d, const Vocab *tgt, const ModelFacts *f)
{
    f->text(f->ctx, "cell", rnn_cell_name(d->cell));
    f->number(f->ctx, "layers", d->layers);
    f->flag(f->ctx, "bidirectional", d->bidirectional);
    f->text(f->ctx, "pooling", pooling_name(d->pooling));
    f->flag(f->ctx, "bag_of_words", d->bag_of_words);
    f->number(f->ctx, "embed", d->embed);
    f->number(f->ctx, "hidden", d->hidden);
    int C = model_classes(d);
    const char **labels = xmalloc(sizeof(char *) * (C > 0 ? C : 1));
    for (int c = 0; c < C; c++)
        labels[c] = vocab_class_label(tgt, c);
    f->texts(f->ctx, "labels", labels, C);
    free(labels);
}

/* ---------------------------------------------------------------- the family */

/* CLSF: read only when present (a file without it holds a translation model); a file
 * from before model.bag_of_words holds the first two fields (ModelSection.required). */
static const ModelField clsf_fields[] = {
    {"type", offsetof(ModelDims, type), MODEL_CLASSIFIER, MODEL_CLASSIFIER, MODEL_RNN},
    {"pooling", offsetof(ModelDims, pooling), 0, POOL_KINDS - 1, 0},
    {"bag_of_words", offsetof(ModelDims, bag_of_words), 0, 1, 0},
};
static const ModelSection clsf_section = {"CLSF", clsf_fields, (int)(sizeof clsf_fields / sizeof clsf_fields[0]), 2};

const ModelFamily classifier_family = {
    .type = MODEL_CLASSIFIER,
    .name = "classifier",
    .title = "classifier",
    .task = MODEL_CLASSIFIES,
    .keys = MODEL_KEYS_RECURRENT | MODEL_KEYS_POOLING,
    .size_keys = "model.embed, model.hidden or model.layers",
    .settle_dims = classifier_settle_dims,
    .layout = classifier_layout,
    .init = INIT_PYTORCH,
    .runstate_alloc = classifier_runstate,
    .fill_batch = batch_fill_packed,
    .forward = classifier_forward,
    .backward = classifier_backward,
    .decoder = NULL,
    .prepare = classifier_prepare,
    .prepared_free = classifier_prepared_free,
    .int8_only = classifier_int8_only,
    .attention_heads = NULL,
    .describe = classifier_describe,
    .facts = classifier_facts,
    .file_section = &clsf_section,
};
