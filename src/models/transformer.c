/* transformer.c — the Transformer family (transformer.h): its operations behind the
 * model interface (tensors, run state, training entry points, description, model file
 * section), the inference passes, and the Decoder for the searches.
 *
 * The layers themselves are transformer_layer.c, written once for the three passes
 * that run them (inference here, training in transformer_train.c, incremental decoding
 * in the Decoder below); this file says, per pass, how the attention runs and where
 * the activations go. */
#include "models/transformer.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/prepared.h"         /* defines: PreparedWeight, prepared_weight_init, prepared_matmul_bias */
#include "models/shortlist.h"         /* defines: ShortlistOutput, shortlist_output_start, shortlist_output_logits */
#include "layers/layernorm.h"         /* defines: layernorm_forward */
#include "layers/loss.h"              /* defines: softmax_xent */
#include "layers/mha.h"               /* defines: mha_forward, mha_step_forward, mha_cross_step_forward, ... */
#include "layers/posenc.h"            /* defines: posenc_add */
#include "models/transformer_layer.h" /* defines: encoder_layer_forward, decoder_layer_forward, TPass, SubBufs */
#include "base/util.h"                /* defines: xmalloc, xcalloc */
#include "text/vocab.h"               /* defines: VOCAB_SOS, VOCAB_PAD */

/* ---------------------------------------------------------------- dimensions, parameters */

/* d_model is the width everywhere (what the recurrent models call hidden too); the
 * encoder and decoder have model.layers layers unless their own keys say otherwise. */
static void transformer_settle_dims(ModelDims *d)
{
    d->hidden = d->embed;
    if (!d->enc_layers) d->enc_layers = d->layers;
    if (!d->dec_layers) d->dec_layers = d->layers;
    d->pooling = 0;
}

static void add_ln(ParamLayout *lo, LnWeights *w, long D, const char *name)
{
    param_add(lo, &w->g, D, 1, INIT_ONES, "%s.g", name);
    param_add(lo, &w->b, D, 1, INIT_ZEROS, "%s.b", name);
}

/* An attention's tensors. Wq, Wk and Wv are initialised as the one (3D, D) matrix they
 * are in nn.MultiheadAttention (in_proj_weight), within Xavier's sqrt(6 / (3D + D));
 * fairseq draws each (D, D) part with gain 1/sqrt(2), the same bound. A (D, D) matrix's
 * own bound would be sqrt(2) wider. */
static void add_att(ParamLayout *lo, AttWeights *w, long D, const char *name)
{
    float **slot[8] = {&w->wq, &w->bq, &w->wk, &w->bk, &w->wv, &w->bv, &w->wo, &w->bo};
    const char *part[8] = {"wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo"};
    char full[40];
    for (int i = 0; i < 8; i++) {
        snprintf(full, sizeof full, "%s.%s", name, part[i]);
        param_add(lo, slot[i], D, i % 2 ? 1 : D, (int)D, "%s", full);
        if (i < 6 && i % 2 == 0) lo->fan_out[lo->n - 1] = 3 * D;  /* Wq, Wk, Wv: in_proj's part */
    }
}

static void add_ff(ParamLayout *lo, FfWeights *w, long D, long F, const char *name)
{
    char full[40];
    snprintf(full, sizeof full, "%s.w1", name);
    param_add(lo, &w->w1, F, D, (int)D, "%s", full);
    snprintf(full, sizeof full, "%s.b1", name);
    param_add(lo, &w->b1, F, 1, (int)D, "%s", full);
    snprintf(full, sizeof full, "%s.w2", name);
    param_add(lo, &w->w2, D, F, (int)F, "%s", full);
    snprintf(full, sizeof full, "%s.b2", name);
    param_add(lo, &w->b2, D, 1, (int)F, "%s", full);
}

/* The Transformer's tensors, in scripts/reference/reference_transformer.py's order. */
static void transformer_layout(const ModelDims *d, Params *p, ParamLayout *lo)
{
    long D = d->embed, F = d->ff;
    char name[24];
    if (!d->share_src_emb) param_add(lo, &p->src_emb, d->src_vocab, D, 0, "src_emb%s", "");
    param_add(lo, &p->tgt_emb, d->tgt_vocab, D, 0, "tgt_emb%s", "");
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
    if (!d->tie_embeddings) param_add(lo, &p->out_w, d->tgt_vocab, D, (int)D, "out_w%s", "");
    param_add(lo, &p->out_b, d->tgt_vocab, 1, (int)D, "out_b%s", "");
}

/* ---------------------------------------------------------------- prepared for decoding */

static void prepare_att(const Model *m, PreparedAtt *pa, const AttWeights *w, int D, ComputeType type)
{
    model_prepare_weight(m, &pa->q, w->wq, D, D, D, type);
    model_prepare_weight(m, &pa->k, w->wk, D, D, D, type);
    model_prepare_weight(m, &pa->v, w->wv, D, D, D, type);
    model_prepare_weight(m, &pa->o, w->wo, D, D, D, type);
}

static void prepare_layer(const Model *m, PreparedTLayer *pl, const TLayer *w, int cross, ComputeType type)
{
    int D = m->dims.embed, F = m->dims.ff;
    prepare_att(m, &pl->self, &w->self, D, type);
    if (cross) prepare_att(m, &pl->cross, &w->cross, D, type);
    model_prepare_weight(m, &pl->w1, w->ff.w1, D, F, D, type);
    model_prepare_weight(m, &pl->w2, w->ff.w2, F, D, F, type);
}

/* (D and ff are at most MODEL_MAX_WIDTH and 4 times it, within INT8_MAX_K: the int8
 * preparation cannot fail.) */
static void *transformer_prepare(const Model *m, ComputeType type)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    TPrepared *tp = xcalloc(1, sizeof *tp);
    for (int l = 0; l < d->enc_layers; l++)
        prepare_layer(m, &tp->enc[l], &p->tenc[l], 0, type);
    for (int l = 0; l < d->dec_layers; l++)
        prepare_layer(m, &tp->dec[l], &p->tdec[l], 1, type);
    model_prepare_weight(m, &tp->out, p->out_w, d->embed, d->tgt_vocab, d->embed, type);
    return tp;
}

/* ModelFamily.repack: the weights in prepare's order, every parts-th from part on. */
static void repack_weight(PreparedWeight *pw, const float *w, int *i, int part, int parts)
{
    if ((*i)++ % parts == part) prepared_weight_repack(pw, w, pw->k);
}

static void repack_att(PreparedAtt *pa, const AttWeights *w, int *i, int part, int parts)
{
    repack_weight(&pa->q, w->wq, i, part, parts);
    repack_weight(&pa->k, w->wk, i, part, parts);
    repack_weight(&pa->v, w->wv, i, part, parts);
    repack_weight(&pa->o, w->wo, i, part, parts);
}

static void transformer_repack(const Model *m, void *prepared, int part, int parts)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    TPrepared *tp = prepared;
    /* The output layer first: the largest, so that its part starts first. */
    int i = 0;
    repack_weight(&tp->out, p->out_w, &i, part, parts);
    const TLayer *w[2] = {p->tenc, p->tdec};
    PreparedTLayer *pl[2] = {tp->enc, tp->dec};
    int depth[2] = {d->enc_layers, d->dec_layers};
    for (int e = 0; e < 2; e++)
        for (int l = 0; l < depth[e]; l++) {
            repack_att(&pl[e][l].self, &w[e][l].self, &i, part, parts);
            if (e) repack_att(&pl[e][l].cross, &w[e][l].cross, &i, part, parts);
            repack_weight(&pl[e][l].w1, w[e][l].ff.w1, &i, part, parts);
            repack_weight(&pl[e][l].w2, w[e][l].ff.w2, &i, part, parts);
        }
}

/* ModelFamily.int8_only: every product's weight but a tied output layer's, which is
 * the target embedding too (read row by row by the embedding lookup). */
static int transformer_int8_only(Model *m, float **slot[MAX_TENSORS], long n[MAX_TENSORS])
{
    Params *p = &m->params;
    const ModelDims *d = &m->dims;
    long D = d->embed, F = d->ff;
    int count = 0;
    TLayer *layers[2] = {p->tenc, p->tdec};
    int depth[2] = {d->enc_layers, d->dec_layers};
    for (int e = 0; e < 2; e++)
        for (int l = 0; l < depth[e]; l++) {
            AttWeights *att[2] = {&layers[e][l].self, &layers[e][l].cross};
            for (int a = 0; a < 1 + e; a++) {
                float **w[4] = {&att[a]->wq, &att[a]->wk, &att[a]->wv, &att[a]->wo};
                for (int i = 0; i < 4; i++)
                    slot[count] = w[i], n[count++] = D * D;
            }
            slot[count] = &layers[e][l].ff.w1, n[count++] = F * D;
            slot[count] = &layers[e][l].ff.w2, n[count++] = D * F;
        }
    if (!d->tie_embeddings) slot[count] = &p->out_w, n[count++] = d->tgt_vocab * D;
    return count;
}

static void free_att(PreparedAtt *pa)
{
    prepared_weight_free(&pa->q);
    prepared_weight_free(&pa->k);
    prepared_weight_free(&pa->v);
    prepared_weight_free(&pa->o);
}

static void transformer_prepared_free(void *prepared)
{
    TPrepared *tp = prepared;
    PreparedTLayer *layers[2] = {tp->enc, tp->dec};
    for (int e = 0; e < 2; e++)
        for (int l = 0; l < MAX_LAYERS; l++) {  /* the unused ones are zero: freeing them is a no-op */
            free_att(&layers[e][l].self);
            free_att(&layers[e][l].cross);
            prepared_weight_free(&layers[e][l].w1);
            prepared_weight_free(&layers[e][l].w2);
        }
    prepared_weight_free(&tp->out);
    free(tp);
}

/* The prepared layers of a pass over m's encoder (or decoder), NULL when m has none. */
static const PreparedTLayer *prepared_layers(const Model *m, int decoder)
{
    const TPrepared *tp = m->prepared;
    return !tp ? NULL : decoder ? tp->dec : tp->enc;
}

static const PreparedWeight *prepared_out(const Model *m)
{
    const TPrepared *tp = m->prepared;
    return tp ? &tp->out : NULL;
}

/* ---------------------------------------------------------------- inference passes */

/* P (B, heads, T, S) attention probabilities -> out (B, T, S), their mean over heads. */
static void average_heads(const float *P, int B, int heads, int T, int S, float *out)
{
    long n = (long)T * S;
    for (int b = 0; b < B; b++) {
        float *o = out + b * n;
        memset(o, 0, sizeof(float) * n);
        for (int hd = 0; hd < heads; hd++) {
            const float *q = P + ((long)b * heads + hd) * n;
            for (long i = 0; i < n; i++)
                o[i] += q[i];
        }
        for (long i = 0; i < n; i++)
            o[i] /= (float)heads;
    }
}

/* The attention of the padded passes: mha_forward over whole (padded) sentences. The
 * encoder's self-attention (queries and keys: len_q), or the decoder's causal
 * self-attention (len_q) and its cross-attention (queries len_q, keys the memory's
 * len_k), which reports cross_out's layer when asked. ps->ctx is a PaddedAttention. */
typedef struct {
    MhaConfig self_cfg, cross_cfg;
    MhaWorkspace self_ws, cross_ws;
    const int *len_q, *len_k;    /* (B) */
    const float *memory;         /* (Tk, B, D) the encoder's output */
    int Tq, Tk, B;
    const TCrossOut *cross_out;  /* or NULL */
    int cross_layer;             /* the layer cross_out asks for, 0-based */
} PaddedAttention;

static void attend_padded(const TPass *ps, int l, SubKind kind, const AttWeights *w, const float *in, float *y,
                          SubBufs *u)
{
    PaddedAttention *a = ps->ctx;
    MhaParams att = pass_att_params(ps, l, kind, w);
    (void)u;
    if (kind == SUB_SELF) {
        mha_forward(&a->self_cfg, &att, in, in, a->len_q, a->len_q, NULL, y, &a->self_ws, a->Tq, a->Tq, a->B);
        return;
    }
    mha_forward(&a->cross_cfg, &att, in, a->memory, a->len_q, a->len_k, NULL, y, &a->cross_ws, a->Tq, a->Tk, a->B);
    const TCrossOut *out = a->cross_out;
    if (!out || l != a->cross_layer) return;
    if (out->per_head) memcpy(out->attn, a->cross_ws.P, sizeof(float) * a->B * ps->d->heads * a->Tq * a->Tk);
    else average_heads(a->cross_ws.P, a->B, ps->d->heads, a->Tq, a->Tk, out->attn);
}

/* The encoder's scratch: a normalised copy, a sub-layer's output, layer norm statistics,
 * the feed-forward block's two (N, ff) tensors and the attention workspace. */
long transformer_encode_floats(const ModelDims *d, int S, int B)
{
    long N = (long)S * B;
    MhaConfig cfg = {.d = d->embed, .heads = d->heads};
    return 2 * N * d->embed + 2 * N + 2 * N * d->ff + mha_workspace_floats(&cfg, S, S, B);
}

/* x (N, D) = emb[ids] * sqrt(D) + the positions' encodings, time-major (T, B). */
static void embed_padded(const Model *m, float *x, const float *emb, const int *ids, int T, int B, int D)
{
    model_embed(m, x, D, emb, ids, T * B, D);
    posenc_add(x, T, B, D, 0, sqrtf((float)D));
}

void transformer_encode(const Model *m, const int *src, const int *len, int S, int B, float *work, float *x)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int D = d->embed;
    long N = (long)S * B, n = N * D;
    float *h = work, *y = h + n, *mean = y + n, *rstd = mean + N, *fh = rstd + N, *fa = fh + N * d->ff;
    PaddedAttention a = {.self_cfg = {.d = D, .heads = d->heads}, .len_q = len, .Tq = S, .B = B};
    mha_workspace_init(&a.self_ws, &a.self_cfg, fa + N * d->ff, S, S, B);
    TPass ps = {.d = d, .rows = (int)N, .attend = attend_padded, .ctx = &a, .prep = prepared_layers(m, 0)};
    SubBufs u = {.n = h, .y = y, .mean = mean, .rstd = rstd, .fh = fh, .fa = fa};
    SubBufs *const bufs[2] = {&u, &u};
    embed_padded(m, x, p->src_emb, src, S, B, D);
    for (int l = 0; l < d->enc_layers; l++)
        encoder_layer_forward(&ps, l, &p->tenc[l], x, x, x, bufs);
    if (d->norm == NORM_PRE) layernorm_forward(x, mean, rstd, x, p->tenc_ln.g, p->tenc_ln.b, (int)N, D);
}

long transformer_decode_floats(const ModelDims *d, int S, int T, int B)
{
    long N = (long)T * B;
    MhaConfig self = {.d = d->embed, .heads = d->heads, .causal = 1}, cross = {.d = d->embed, .heads = d->heads};
    return 3 * N * d->embed + 2 * N + 2 * N * d->ff + mha_workspace_floats(&self, T, T, B) +
           mha_workspace_floats(&cross, T, S, B);
}

void transformer_decode(const Model *m, const float *memory, const int *src_len, int S, const int *tgt_in,
                        const int *tgt_len, int T, int B, float *work, float *logits, const TCrossOut *cross_out)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int D = d->embed;
    long N = (long)T * B, n = N * D;
    float *x = work, *h = x + n, *y = h + n, *mean = y + n, *rstd = mean + N, *fh = rstd + N, *fa = fh + N * d->ff;
    PaddedAttention a = {.self_cfg = {.d = D, .heads = d->heads, .causal = 1}, .cross_cfg = {.d = D, .heads = d->heads},
                         .len_q = tgt_len, .len_k = src_len, .memory = memory, .Tq = T, .Tk = S, .B = B,
                         .cross_out = cross_out};
    if (cross_out) a.cross_layer = cross_out->layer >= 1 ? cross_out->layer - 1 : d->dec_layers - 1;
    float *ws_mem = fa + N * d->ff;
    mha_workspace_init(&a.self_ws, &a.self_cfg, ws_mem, T, T, B);
    mha_workspace_init(&a.cross_ws, &a.cross_cfg, ws_mem + mha_workspace_floats(&a.self_cfg, T, T, B), T, S, B);
    TPass ps = {.d = d, .rows = (int)N, .attend = attend_padded, .ctx = &a, .prep = prepared_layers(m, 1)};
    SubBufs u = {.n = h, .y = y, .mean = mean, .rstd = rstd, .fh = fh, .fa = fa};
    SubBufs *const bufs[3] = {&u, &u, &u};
    embed_padded(m, x, p->tgt_emb, tgt_in, T, B, D);
    for (int l = 0; l < d->dec_layers; l++)
        decoder_layer_forward(&ps, l, &p->tdec[l], x, x, x, x, bufs);
    if (d->norm == NORM_PRE) layernorm_forward(x, mean, rstd, x, p->tdec_ln.g, p->tdec_ln.b, (int)N, D);
    prepared_matmul_bias(logits, d->tgt_vocab, x, D, p->out_w, D, prepared_out(m), p->out_b, (int)N, d->tgt_vocab, D);
}

void transformer_attention_heads(const Model *m, const int *src, int S, const int *words, int n, int layer,
                                 float *attn)
{
    const ModelDims *d = &m->dims;
    int *tgt_in = xmalloc(sizeof(int) * n), len[2] = {S, n};
    tgt_in[0] = VOCAB_SOS;
    for (int t = 1; t < n; t++)
        tgt_in[t] = words[t - 1];
    long enc = transformer_encode_floats(d, S, 1), dec = transformer_decode_floats(d, S, n, 1);
    float *memory = xmalloc(sizeof(float) * ((long)S * d->embed + (enc > dec ? enc : dec) + (long)n * d->tgt_vocab));
    float *work = memory + (long)S * d->embed, *logits = work + (enc > dec ? enc : dec);
    transformer_encode(m, src, &len[0], S, 1, work, memory);
    TCrossOut want = {.layer = layer, .per_head = 1, .attn = attn};
    transformer_decode(m, memory, &len[0], S, tgt_in, &len[1], n, 1, work, logits, &want);
    free(memory);
    free(tgt_in);
}

/* ---------------------------------------------------------------- decoding */

static float *take(float **at, long n)
{
    float *p = *at;
    *at += n;
    return p;
}

struct TDecoder {
    const Model *m;
    int attn_layer;                        /* 0-based: the layer whose cross-attention is reported */
    int want_attn;
    int N, K, R, S, max_steps;             /* sources, rows per source, rows R = N*K */
    int *len;                              /* (N) source lengths */
    int *src_of;                           /* (R) the source of each row a step computes */
    int *live;                             /* (R) the rows a step computes, n_live of them */
    unsigned char *retired;                /* (R) rows the search no longer reads */
    int *changed;                          /* (R) reorder's rows with another parent */
    float *ck[MAX_LAYERS], *cv[MAX_LAYERS];  /* (S, N, D) cross-attention keys, values per source */
    float *sk[MAX_LAYERS], *sv[MAX_LAYERS];  /* (max_steps, R, D) self-attention caches */
    float *x, *h, *y, *fh, *fa, *work, *probs, *cprobs, *logits, *attn, *tmp;
    float *mem;
    long cap;
    int *ints;
    long int_cap;
    int step;                              /* the step running, for attend_step */
    ShortlistOutput shortlist;             /* the batch's words, with Model.shortlist */
    const int *rows;                       /* its rows: live, or NULL for every row in order */
};

TDecoder *tdecoder_new(const Model *m, int attn_layer)
{
    TDecoder *d = xcalloc(1, sizeof *d);
    d->m = m;
    int L = m->dims.dec_layers;
    d->attn_layer = attn_layer >= 1 && attn_layer <= L ? attn_layer - 1 : L - 1;
    return d;
}

void tdecoder_free(TDecoder *d)
{
    if (!d) return;
    free(d->mem);
    free(d->ints);
    shortlist_output_free(&d->shortlist);
    free(d);
}

static void td_start(void *ctx, const Batch *src, int K, int max_steps, int want_attn)
{
    TDecoder *t = ctx;
    t->want_attn = want_attn;
    const ModelDims *d = &t->m->dims;
    int N = src->B, S = src->S, R = N * K, D = d->embed, H = d->heads, L = d->dec_layers;
    if (t->m->shortlist)
        shortlist_output_start(&t->shortlist, t->m->shortlist, src, t->m->params.out_w, t->m->params.out_b,
                               prepared_out(t->m), D, d->tgt_vocab);
    long RD = (long)R * D, SND = (long)S * N * D, steps = max_steps > 0 ? max_steps : 1;
    MhaConfig cfg = {.d = D, .heads = H};
    long enc = transformer_encode_floats(d, S, N) + SND;
    long need = 2 * L * SND + 2 * L * steps * RD + 3 * RD + 2 * (long)R * d->ff + mha_step_work_floats(&cfg, R) +
                (long)R * H * steps + (long)R * H * S + (long)R * d->tgt_vocab + (long)R * S + steps * RD;
    need += enc;  /* the encoder's scratch after everything else */
    if (need > t->cap) {
        free(t->mem);
        t->mem = xmalloc(sizeof(float) * need);
        t->cap = need;
    }
    long ints = N + 4 * (long)R;
    if (ints > t->int_cap) {
        free(t->ints);
        t->ints = xmalloc(sizeof(int) * ints);
        t->int_cap = ints;
    }
    t->len = t->ints, t->src_of = t->len + N, t->live = t->src_of + R, t->changed = t->live + R;
    t->retired = (unsigned char *)(t->changed + R);
    memset(t->retired, 0, R);
    t->N = N, t->K = K, t->R = R, t->S = S, t->max_steps = (int)steps;
    float *at = t->mem;
    for (int l = 0; l < L; l++)
        t->ck[l] = take(&at, SND), t->cv[l] = take(&at, SND);
    for (int l = 0; l < L; l++)
        t->sk[l] = take(&at, steps * RD), t->sv[l] = take(&at, steps * RD);
    t->x = take(&at, RD), t->h = take(&at, RD), t->y = take(&at, RD), t->tmp = take(&at, steps * RD);
    t->fh = take(&at, (long)R * d->ff), t->fa = take(&at, (long)R * d->ff);
    t->work = take(&at, mha_step_work_floats(&cfg, R));
    t->probs = take(&at, (long)R * H * steps), t->cprobs = take(&at, (long)R * H * S);
    t->logits = take(&at, (long)R * d->tgt_vocab), t->attn = take(&at, (long)R * S);
    /* The encoder once per source; the cross-attention keys and values once per source
     * and layer, shared by the source's K rows. */
    float *memory = at, *ework = memory + SND;
    for (int n = 0; n < N; n++) {
        t->len[n] = 0;
        for (int j = 0; j < S; j++)
            t->len[n] += src->mask[(long)j * N + n] != 0.0f;
        if (t->len[n] < 1) t->len[n] = 1;
    }
    transformer_encode(t->m, src->src, t->len, S, N, ework, memory);
    const PreparedTLayer *prep = prepared_layers(t->m, 1);
    for (int l = 0; l < L; l++) {
        MhaParams cross = att_params_prepared(&t->m->params.tdec[l].cross, prep ? &prep[l].cross : NULL);
        mha_project_kv(&cfg, &cross, memory, t->ck[l], t->cv[l], S, N);
    }
}

/* The decoder's attention one position at a time: causal self-attention over the
 * row's cached keys and values (appending this position's), cross-attention over the
 * keys and values start projected once per source. ps->ctx is the TDecoder. */
static void attend_step(const TPass *ps, int l, SubKind kind, const AttWeights *w, const float *in, float *y,
                        SubBufs *u)
{
    TDecoder *t = ps->ctx;
    int n = ps->rows, H = ps->d->heads;
    MhaConfig cfg = {.d = ps->d->embed, .heads = H, .causal = 1};
    MhaParams att = pass_att_params(ps, l, kind, w);
    (void)u;
    if (kind == SUB_SELF) {
        mha_step_forward(&cfg, &att, in, t->step, t->sk[l], t->sv[l], t->rows, t->R, y, t->probs, t->work, n);
        return;
    }
    mha_cross_step_forward(&cfg, &att, in, t->ck[l], t->cv[l], t->src_of, t->N, t->len, y, t->cprobs, t->work, t->S, n);
    if (t->want_attn && l == t->attn_layer) average_heads(t->cprobs, n, H, 1, t->S, t->attn);
}

/* Runs the rows the search still reads (all but the retired ones), compacted: x's row i
 * is row live[i]; the logits and attention rows go back to their rows at the end. */
static const float *td_step(void *ctx, int step, const int *prev, const float **attn)
{
    TDecoder *t = ctx;
    const ModelDims *d = &t->m->dims;
    const Params *p = &t->m->params;
    int R = t->R, S = t->S, D = d->embed, V = d->tgt_vocab, n = 0;
    for (int r = 0; r < R; r++)
        if (!t->retired[r]) t->live[n] = r, t->src_of[n] = r / t->K, n++;
    t->step = step;
    t->rows = n == R ? NULL : t->live;  /* NULL: every row, in order */
    for (int i = 0; i < n; i++)
        model_embed(t->m, t->x + (long)i * D, D, p->tgt_emb, &prev[t->live[i]], 1, D);
    posenc_add(t->x, 1, n, D, step, sqrtf((float)D));
    /* The layers in place on x (layer norm statistics in the ff scratch, free then). */
    TPass ps = {.d = d, .rows = n, .attend = attend_step, .ctx = t, .prep = prepared_layers(t->m, 1)};
    SubBufs u = {.n = t->h, .y = t->y, .mean = t->fh, .rstd = t->fh + n, .fh = t->fh, .fa = t->fa};
    SubBufs *const bufs[3] = {&u, &u, &u};
    for (int l = 0; l < d->dec_layers; l++)
        decoder_layer_forward(&ps, l, &p->tdec[l], t->x, t->x, t->x, t->x, bufs);
    if (d->norm == NORM_PRE) layernorm_forward(t->x, t->h, t->h + n, t->x, p->tdec_ln.g, p->tdec_ln.b, n, D);
    if (t->m->shortlist)
        shortlist_output_logits(&t->shortlist, t->logits, V, t->x, D, n, D);
    else
        prepared_matmul_bias(t->logits, V, t->x, D, p->out_w, D, prepared_out(t->m), p->out_b, n, V, D);
    /* Back to the rows (live[i] >= i: from the last, nothing is overwritten before read). */
    for (int i = n - 1; t->rows && i >= 0; i--) {
        memmove(t->logits + (long)t->rows[i] * V, t->logits + (long)i * V, sizeof(float) * V);
        if (t->want_attn) memmove(t->attn + (long)t->rows[i] * S, t->attn + (long)i * S, sizeof(float) * S);
    }
    *attn = t->want_attn ? t->attn : NULL;
    return t->logits;
}

/* After step `step`, row r's caches (positions 0..step) become parent[r]'s: only the rows
 * with another parent are copied (through tmp, since a row may be another's parent). */
static void td_reorder(void *ctx, int step, const int *parent)
{
    TDecoder *t = ctx;
    int R = t->R, D = t->m->dims.embed, n = 0;
    for (int r = 0; r < R; r++)
        if (parent[r] != r && !t->retired[r]) t->changed[n++] = r;
    if (n == 0) return;
    long RD = (long)R * D;
    size_t row = sizeof(float) * D;
    for (int l = 0; l < t->m->dims.dec_layers; l++) {
        float *cache[2] = {t->sk[l], t->sv[l]};
        for (int c = 0; c < 2; c++) {
            for (int s = 0; s <= step; s++)
                for (int i = 0; i < n; i++)
                    memcpy(t->tmp + (long)s * RD + (long)i * D, cache[c] + (long)s * RD + (long)parent[t->changed[i]] * D,
                           row);
            for (int s = 0; s <= step; s++)
                for (int i = 0; i < n; i++)
                    memcpy(cache[c] + (long)s * RD + (long)t->changed[i] * D, t->tmp + (long)s * RD + (long)i * D, row);
        }
    }
}

static void td_retire(void *ctx, int row)
{
    TDecoder *t = ctx;
    t->retired[row] = 1;
}

Decoder tdecoder_decoder(TDecoder *d)
{
    return (Decoder){.ctx = d, .vocab = d->m->dims.tgt_vocab, .start = td_start, .step = td_step,
                     .reorder = td_reorder, .retire = td_retire};
}

/* ---------------------------------------------------------------- the family */

/* The training pass's activations (transformer_train.c) and the batch's lengths,
 * behind RunState.own. */
typedef struct {
    TRun *tr;
    int *src_len, *tgt_len;  /* (B) */
} TrainRun;

static void train_run_free(void *own)
{
    TrainRun *t = own;
    trun_free(t->tr);
    free(t->src_len);
    free(t->tgt_len);
    free(t);
}

static void transformer_runstate(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T)
{
    TrainRun *t = xcalloc(1, sizeof *t);
    t->tr = trun_new(d, S, T, B, mode == RUN_TRAIN);
    t->src_len = xcalloc(B, sizeof(int));
    t->tgt_len = xcalloc(B, sizeof(int));
    rs->own = t;
    rs->own_free = train_run_free;
    rs->mem = xcalloc(1, sizeof(float));  /* allocated: runstate_ensure's test */
}

/* The training pass over a padded batch (model_fill_batch: batch_fill), computed on its
 * real positions only; the loss as for the recurrent models. */
static double transformer_forward(Model *m, RunState *rs, const Batch *batch, int want_grad)
{
    TrainRun *tr = rs->own;
    int S = batch->S, T = batch->T, B = batch->B, V = m->dims.tgt_vocab;
    int training = want_grad && rs->mode == RUN_TRAIN;
    for (int b = 0; b < B; b++) {
        tr->src_len[b] = tr->tgt_len[b] = 0;
        for (int j = 0; j < S; j++)
            tr->src_len[b] += batch->mask[j * B + b] != 0.0f;
        for (int t = 0; t < T; t++)
            tr->tgt_len[b] += batch->tgt_in[t * B + b] != VOCAB_PAD;
    }
    TDropout drop = {0};
    if (training) drop = (TDropout){rs->dropout, rs->attention_dropout, rs->activation_dropout};
    float *logits = transformer_forward_train(m, tr->tr, batch->src, tr->src_len, S, batch->tgt_in, tr->tgt_len, T, B,
                                              drop, &rs->rng, rs->packs);
    long rows;
    const int *targets = trun_targets(tr->tr, batch->tgt_out, &rows);
    long tokens = rs->loss_tokens > 0 ? rs->loss_tokens : batch->n_tokens;
    float scale = tokens > 0 ? 1.0f / tokens : 0.0f;
    return softmax_xent(logits, targets, (int)rows, V, scale, training ? rs->label_smoothing : 0.0f,
                        want_grad ? logits : NULL);
}

static void transformer_backward_batch(Model *m, RunState *rs, const Batch *batch)
{
    (void)batch;
    transformer_backward(m, ((TrainRun *)rs->own)->tr, rs->defer_output ? &rs->output : NULL);
}

static void td_close(void *ctx) { tdecoder_free(ctx); }

static Decoder transformer_decoder(Model *m, RunState *rs)
{
    Decoder dec = tdecoder_decoder(tdecoder_new(m, rs->attn_layer));
    dec.close = td_close;
    return dec;
}

static const char *norm_name(const ModelDims *d) { return d->norm == NORM_POST ? "post" : "pre"; }
static const char *activation_name(const ModelDims *d) { return d->activation == ACT_GELU ? "gelu" : "relu"; }

static void transformer_describe(const ModelDims *d, long n_params, const Vocab *tgt, FILE *out)
{
    (void)tgt;
    fprintf(out, "model: Transformer, %d encoder and %d decoder layers, %d heads, %s-norm, %s%s\n", d->enc_layers,
            d->dec_layers, d->heads, norm_name(d), activation_name(d),
            d->share_src_emb ? ", one embedding for source, target and output"
            : d->tie_embeddings ? ", tied target embeddings" : "");
    fprintf(out, "sizes: d_model %d, feed-forward %d, %ld parameters\n", d->embed, d->ff, n_params);
}

static void transformer_facts(const ModelDims *d, const Vocab *tgt, const ModelFacts *f)
{
    (void)tgt;
    f->number(f->ctx, "encoder_layers", d->enc_layers);
    f->number(f->ctx, "decoder_layers", d->dec_layers);
    f->number(f->ctx, "heads", d->heads);
    f->number(f->ctx, "ff", d->ff);
    f->text(f->ctx, "activation", activation_name(d));
    f->text(f->ctx, "norm", norm_name(d));
    f->flag(f->ctx, "tie_embeddings", d->tie_embeddings);
    f->flag(f->ctx, "shared_source_embedding", d->share_src_emb);
    f->number(f->ctx, "embed", d->embed);
}

/* TRFM: the Transformer's dimensions, after ARCH. */
#define FIELD(name, member, lo, hi) {name, offsetof(ModelDims, member), lo, hi, 0}
static const ModelField trfm_fields[] = {
    {"type", offsetof(ModelDims, type), MODEL_TRANSFORMER, MODEL_TYPES - 1, MODEL_RNN},
    FIELD("heads", heads, 1, MODEL_MAX_WIDTH),
    FIELD("ff", ff, 1, 4 * MODEL_MAX_WIDTH),
    FIELD("activation", activation, ACT_RELU, ACT_GELU),
    FIELD("norm", norm, NORM_PRE, NORM_POST),
    FIELD("enc_layers", enc_layers, 1, MAX_LAYERS),
    FIELD("dec_layers", dec_layers, 1, MAX_LAYERS),
    FIELD("share_src_emb", share_src_emb, 0, 1),
};
#undef FIELD
static const ModelSection trfm_section = {"TRFM", trfm_fields, (int)(sizeof trfm_fields / sizeof trfm_fields[0]), 0};

const ModelFamily transformer_family = {
    .type = MODEL_TRANSFORMER,
    .name = "transformer",
    .title = "Transformer",
    .task = MODEL_TRANSLATES,
    .keys = MODEL_KEYS_TRANSFORMER,
    .size_keys = "model.embed, model.ff or the layers",
    .settle_dims = transformer_settle_dims,
    .layout = transformer_layout,
    .init = INIT_XAVIER,
    .runstate_alloc = transformer_runstate,
    .fill_batch = batch_fill,
    .forward = transformer_forward,
    .backward = transformer_backward_batch,
    .decoder = transformer_decoder,
    .prepare = transformer_prepare,
    .prepared_free = transformer_prepared_free,
    .repack = transformer_repack,
    .int8_only = transformer_int8_only,
    .attention_heads = transformer_attention_heads,
    .describe = transformer_describe,
    .facts = transformer_facts,
    .file_section = &trfm_section,
};
