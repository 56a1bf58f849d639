/* rnn.c — the recurrent encoder-decoder family's operations (rnn.h): its tensors, its
 * run state, the teacher-forced forward and backward passes over a batch, the Decoder
 * the searches drive, and what `nmt info` says of it. The encoder and the decoder
 * themselves are rnn_encoder.c and rnn_decoder.c.
 *
 * Why: the recurrent model was model.c's inside the model interface itself; a family of
 * its own, behind the interface's table, lets another family (a Transformer, a
 * classifier, a lower-precision variant) sit beside it without touching it. */
#include "models/rnn.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/linalg.h"   /* defines: matmul_bias, linear_grads */
#include "layers/embedding.h" /* defines: embedding_forward */
#include "layers/loss.h"      /* defines: softmax_xent */
#include "base/util.h"        /* defines: xmalloc, xcalloc, rng_uniform */
#include "text/vocab.h"       /* defines: VOCAB_PAD */

/* ---------------------------------------------------------------- dimensions */

/* The recurrent keys only: none of the Transformer's or the classifier's. */
static void rnn_settle_dims(ModelDims *d)
{
    d->heads = d->ff = d->activation = d->norm = d->enc_layers = d->dec_layers = 0;
    d->share_src_emb = d->pooling = 0;
}

/* ---------------------------------------------------------------- parameters */

void rnn_encoder_layout(const ModelDims *d, Params *p, ParamLayout *lo, int with_decoder)
{
    long E = d->embed, H = d->hidden, G = rnn_gates(d), U = rnn_units(d);
    int L = rnn_layers(d);
    char sfx[32];
    param_add(lo, &p->src_emb, d->src_vocab, E, 0, "src_emb%s", "");
    for (int l = 0; l < L; l++)
        for (int r = 0; r < rnn_dirs(d); r++) {
            RnnParams *w = &p->enc[l][r];
            if (l) snprintf(sfx, sizeof sfx, "_l%d%s", l, r ? "_reverse" : "");
            else snprintf(sfx, sizeof sfx, "%s", r ? "_reverse" : "");
            param_add(lo, &w->w_ih, G * U, l ? H : E, (int)U, "enc_w_ih%s", sfx);
            param_add(lo, &w->w_hh, G * U, U, (int)U, "enc_w_hh%s", sfx);
            param_add(lo, &w->b_ih, G * U, 1, (int)U, "enc_b_ih%s", sfx);
            param_add(lo, &w->b_hh, G * U, 1, (int)U, "enc_b_hh%s", sfx);
        }
    if (d->bidirectional && with_decoder)
        for (int l = 0; l < L; l++) {
            if (l) snprintf(sfx, sizeof sfx, "_l%d", l);
            else sfx[0] = 0;
            param_add(lo, &p->bridge_w[l], H, H, (int)H, "bridge_w%s", sfx);
            param_add(lo, &p->bridge_b[l], H, 1, (int)H, "bridge_b%s", sfx);
        }
}

/* The encoder's tensors, then the attention's and the decoder's (rnn.h's order). */
static void rnn_layout(const ModelDims *d, Params *p, ParamLayout *lo)
{
    long E = d->embed, H = d->hidden, G = rnn_gates(d);
    int L = rnn_layers(d), A = d->attention;
    char sfx[32];
    rnn_encoder_layout(d, p, lo, 1);
    param_add(lo, &p->tgt_emb, d->tgt_vocab, E, 0, "tgt_emb%s", "");
    if (rnn_is_additive(A)) {
        param_add(lo, &p->att_w_key, H, H, (int)H, "att_w_key%s", "");
        param_add(lo, &p->att_v, H, 1, (int)H, "att_v%s", "");
    }
    if (rnn_has_att_w(A)) param_add(lo, &p->att_w, H, H, (int)H, "att_w%s", "");
    if (A == ATT_LOCAL_PREDICTIVE) {
        param_add(lo, &p->att_w_pos, H, H, (int)H, "att_w_pos%s", "");
        param_add(lo, &p->att_v_pos, H, 1, (int)H, "att_v_pos%s", "");
    }
    if (attention_is_luong(A)) param_add(lo, &p->att_w_out, H, 2 * H, (int)H, "att_w_out%s", "");
    for (int l = 0; l < L; l++) {
        RnnParams *w = &p->dec[l];
        int query = rnn_is_additive(A) && l == L - 1;
        if (l) snprintf(sfx, sizeof sfx, "_l%d", l);
        else sfx[0] = 0;
        param_add(lo, &w->w_ih, G * H, l ? H : rnn_dec_in0(d), (int)H, "dec_w_ih%s", sfx);
        param_add(lo, &w->w_hh, G * H, H, (int)H, "dec_w_hh%s", sfx);
        if (query) param_add(lo, &p->att_w_query, H, H, (int)H, "att_w_query%s", "");
        param_add(lo, &w->b_ih, G * H, 1, (int)H, "dec_b_ih%s", sfx);
        param_add(lo, &w->b_hh, G * H, 1, (int)H, "dec_b_hh%s", sfx);
        if (query) param_add(lo, &p->att_b_query, H, 1, (int)H, "att_b_query%s", "");
    }
    if (!d->tie_embeddings) param_add(lo, &p->out_w, d->tgt_vocab, H, (int)H, "out_w%s", "");
    param_add(lo, &p->out_b, d->tgt_vocab, 1, (int)H, "out_b%s", "");
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

void rnn_runstate_alloc(RunState *rs, const ModelDims *dims, RunMode mode, int B, int S, int T, int with_decoder)
{
    ModelDims d = *dims;
    d.layers = rnn_layers(dims);
    long E = d.embed, H = d.hidden, V = d.tgt_vocab, G = rnn_gates(&d), U = rnn_units(&d);
    /* Decoding reads the last step's decoder rows only: two slots (rnn_decoder.c). */
    int ring = mode == RUN_DECODE ? 2 : 0;
    long SB = (long)S * B, TB = (long)(ring ? ring : T) * B, ST = S > T ? S : T, EH = E > H ? E : H;
    long train = mode == RUN_TRAIN, lstm = d.cell == CELL_LSTM, bi = d.bidirectional;
    int L = d.layers, A = d.attention, luong = attention_is_luong(A);
    /* Translation's decoding encodes padded, keeping one position's gate rows. */
    int one_position = mode == RUN_DECODE && with_decoder;
    Part parts[512];
    int n = 0;
#define PART(ptr, count) (parts[n++] = (Part){&(ptr), (count)})
    for (int l = 0; l < L; l++) {
        long in = l ? H : E;
        PART(rs->enc_x[l], SB * in);
        PART(rs->enc_drop[l], train * SB * in);
        for (int r = 0; r < rnn_dirs(&d); r++) {
            RnnRun *run = &rs->enc[l][r];
            PART(run->h, (SB + B) * U);
            PART(run->c, lstm * (SB + B) * U);
            PART(run->gi, SB * G * U);
            PART(run->gh, (one_position ? B : SB) * G * U);  /* decoding: one position's (no backward) */
            PART(run->cache, (one_position ? B : SB) * G * U);
        }
        PART(rs->enc_out[l], bi * SB * H);
    }
    long packs = mode != RUN_DECODE || !with_decoder;  /* training, scoring, classifying: packed batches */
    /* A classifier has no decoder: of its parts only the zero final-state gradients
     * d_s, d_c that the encoder's backward pass reads, and T is 1. */
    long dec = with_decoder != 0, cls = !dec;
    PART(rs->mem_batch, packs * SB * H);
    PART(rs->enc_work, packs * (SB + 2 * B) * U);
    PART(rs->bridge_in, dec * bi * L * B * H);
    PART(rs->keys, A == ATT_LUONG_DOT ? 0 : dec * SB * H);
    for (int l = 0; l < L; l++) {
        long in = l ? H : rnn_dec_in0(&d), ghw = G * H + (rnn_fused_query(&d, l) ? H : 0);
        RnnRun *run = &rs->dec[l];
        PART(rs->dec_x[l], dec * TB * in);
        PART(rs->dec_drop[l], dec * train * TB * (l ? H : E));
        PART(run->h, dec * (TB + (ring ? 0 : B)) * H);
        PART(run->c, dec * lstm * (TB + (ring ? 0 : B)) * H);
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
    PART(rs->pos, rnn_is_local(A) ? dec * TB : 0);
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
    rnn_step_packs_attach(rs, mode);
    rs->step_ring = ring;
}

static void rnn_runstate(RunState *rs, const ModelDims *d, RunMode mode, int B, int S, int T)
{
    rnn_runstate_alloc(rs, d, mode, B, S, T, 1);
}

/* ---------------------------------------------------------------- forward and backward */

/* Decoder inputs when some are the model's own predictions (sample_prob > 0): step
 * by step, each step's logits choose the next input, which then has to be embedded and
 * projected on its own. The fed words are kept in rs->fed for the embedding gradient
 * (laid out as batch->tgt_in). */
static void decode_sampled(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int T = batch->T, E = d->embed, H = d->hidden, X = rnn_dec_in0(d), V = d->tgt_vocab;
    int GH = rnn_gates(d) * H;
    memcpy(rs->fed, batch->tgt_in, sizeof(int) * batch_step_rows(batch, 0));
    for (int t = 0; t < T; t++) {
        long row = batch_step_at(batch, t);
        int Bt = batch_step_rows(batch, t);
        float *x = rs->dec_x[0] + row * X;
        embedding_forward(x, X, p->tgt_emb, rs->fed + row, Bt, E);
        if (rs->dropping) rows_dropout(x, X, rs->dec_drop[0] + row * E, Bt, E, rs->dropout, &rs->rng);
        matmul_bias(rs->dec[0].gi + row * GH, GH, x, X, p->dec[0].w_ih, X, p->dec[0].b_ih, Bt, GH, E);
        model_decoder_step(m, rs, batch, t);
        float *logits = rs->logits + row * V;
        matmul_bias(logits, V, rnn_step_output(m, rs, batch, t), H, p->out_w, H, p->out_b, Bt, V, H);
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

/* The encoder, the decoder over every step (teacher-forced, or fed its own words), the
 * output layer and the loss; model.h's model_forward. */
static double rnn_forward(Model *m, RunState *rs, const Batch *batch, int want_grad)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    int T = batch->T, E = d->embed, H = d->hidden, V = d->tgt_vocab, X = rnn_dec_in0(d);
    int GH = rnn_gates(d) * H;
    long N = batch_step_at(batch, T);  /* decoder rows: T*B, or the real tokens when packed */
    int training = want_grad && rs->mode == RUN_TRAIN;
    rs->dropping = training && rs->dropout > 0.0f;
    rs->sampling = training && rs->sample_prob > 0.0f;
    rnn_pack_steps(m, rs, batch->B);  /* the weights as they are now, for this pass's steps */
    model_encode(m, rs, batch);
    if (rs->sampling) {
        decode_sampled(m, rs, batch);
    } else {
        /* Teacher forcing: every decoder input is known, so embed and project them all at once. */
        embedding_forward(rs->dec_x[0], X, p->tgt_emb, batch->tgt_in, N, E);
        if (rs->dropping) rows_dropout(rs->dec_x[0], X, rs->dec_drop[0], N, E, rs->dropout, &rs->rng);
        matmul_bias(rs->dec[0].gi, GH, rs->dec_x[0], X, p->dec[0].w_ih, X, p->dec[0].b_ih, N, GH, E);
        for (int t = 0; t < T; t++)
            model_decoder_step(m, rs, batch, t);
        /* All output projections at once: logits (N, V); step t's rows follow step t-1's. */
        matmul_bias(rs->logits, V, rnn_step_output(m, rs, batch, 0), H, p->out_w, H, p->out_b, N, V, H);
    }
    rnn_unpack_steps(rs);
    long tokens = rs->loss_tokens > 0 ? rs->loss_tokens : batch->n_tokens;
    float scale = tokens > 0 ? 1.0f / tokens : 0.0f;
    return softmax_xent(rs->logits, batch->tgt_out, N, V, scale, training ? rs->label_smoothing : 0.0f,
                        want_grad ? rs->logits : NULL);
}

/* The output layer, the decoder steps in reverse, the attention keys and the encoder;
 * model.h's model_backward. */
static void rnn_backward(Model *m, RunState *rs, const Batch *batch)
{
    const ModelDims *d = &m->dims;
    const Params *p = &m->params;
    Params *g = &m->grads;
    int S = batch->S, H = d->hidden, V = d->tgt_vocab;
    long N = batch_step_at(batch, batch->T), SB = (long)S * batch->B;
    const float *o_all = rnn_step_output(m, rs, batch, 0), *mem = model_memory(m, rs);

    /* Output layer: dlogits (N, V) is already in rs->logits. */
    model_output_grads(rs->defer_output ? &rs->output : NULL, g->out_w, g->out_b, rs->logits, o_all, (int)N, V, H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, H, V, 1.0f, rs->logits, V, p->out_w, H, 0.0f, rs->d_out,
                H);

    memset(rs->d_keys, 0, sizeof(float) * SB * H);
    memset(rs->d_enc, 0, sizeof(float) * SB * H);
    rnn_pack_steps_backward(m, rs, batch->B);  /* the weights' columns, for the steps' dgates · W */
    rnn_decoder_backward(m, rs, batch);
    rnn_unpack_steps(rs);

    /* Keys W h_j: dW += dkeys^T h; dh += dkeys · W */
    const float *w_key = rnn_is_additive(d->attention) ? p->att_w_key : p->att_w;
    float *g_key = rnn_is_additive(d->attention) ? g->att_w_key : g->att_w;
    if (d->attention != ATT_LUONG_DOT) {
        linear_grads(g_key, NULL, rs->d_keys, H, mem, H, SB, H, H);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, SB, H, H, 1.0f, rs->d_keys, H, w_key, H, 1.0f, rs->d_enc,
                    H);
    }
    rnn_encoder_backward(m, rs, batch, 1);
}

/* ---------------------------------------------------------------- the model as a Decoder */

/* The recurrent model behind the Decoder interface: rnn.h's step-by-step pieces over
 * a batch of R rows. Its encoder runs per row, so with K > 1 every source is repeated
 * K times and encoded K times (identical rows; beam search always did so). */
typedef struct {
    Model *m;
    RunState *rs;
    const Batch *rows;  /* the R rows being decoded: the sources themselves, or repeated */
    Batch repeated;     /* K > 1: source n as rows n*K .. n*K+K-1 */
    ShortlistOutput shortlist;  /* the batch's words, with Model.shortlist */
} RnnDecoder;

/* Sentence n's source length: its real (mask 1) positions, which come first. */
static int source_length(const Batch *src, int n)
{
    int len = 0;
    for (int t = 0; t < src->S; t++)
        len += src->mask[(long)t * src->B + n] != 0.0f;
    return len;
}

/* dst = each of src's N sources K times, rows n*K .. n*K+K-1, laid out by
 * batch_fill_source exactly as it lays out the sentences themselves. */
static void repeat_sources(Batch *dst, const Batch *src, int K)
{
    int N = src->B, S = src->S, R = N * K;
    int *ids = xmalloc(sizeof(int) * (long)N * S), **rows = xmalloc(sizeof(int *) * R), *lens = xmalloc(sizeof(int) * R);
    for (int n = 0; n < N; n++) {
        int len = source_length(src, n);
        for (int t = 0; t < len; t++)
            ids[(long)n * S + t] = src->src[(long)t * N + n];
        for (int k = 0; k < K; k++) {
            rows[n * K + k] = ids + (long)n * S;
            lens[n * K + k] = len;
        }
    }
    batch_fill_source(dst, rows, lens, R);
    free(ids);
    free(rows);
    free(lens);
}

static void rnn_start(void *ctx, const Batch *src, int K, int max_steps, int want_attn)
{
    RnnDecoder *d = ctx;
    (void)want_attn; /* the attention weights are part of every step anyway */
    d->rows = src;
    if (K > 1) {
        repeat_sources(&d->repeated, src, K);
        d->rows = &d->repeated;
    }
    runstate_ensure(d->rs, &d->m->dims, RUN_DECODE, d->rows->B, d->rows->S, max_steps);
    /* int8 decoding encodes each sentence once and spreads its rows to its K. Not float32:
     * OpenBLAS may sum a product of N rows otherwise than one of N*K (a one-row product
     * went another way here, in the last bit of some scores), and float32 decoding keeps
     * the bits of the unprepared model. */
    const Model *m = d->m;
    if (K > 1 && d->rows->S == src->S && m->prepared && m->compute_type == COMPUTE_INT8) {
        model_encode(d->m, d->rs, src);
        rnn_repeat_encoding(d->m, d->rs, src->B, src->S, K);
    } else {
        model_encode(d->m, d->rs, d->rows);
    }
    if (m->shortlist)
        shortlist_output_start(&d->shortlist, m->shortlist, src, m->params.out_w, m->params.out_b,
                               rnn_prepared_out(m), m->dims.hidden, m->dims.tgt_vocab);
}

static const float *rnn_step(void *ctx, int t, const int *prev, const float **attn)
{
    RnnDecoder *d = ctx;
    int R = d->rows->B;
    model_decoder_input(d->m, d->rs, t, prev, R);
    model_decoder_step(d->m, d->rs, d->rows, t);
    if (d->m->shortlist)
        shortlist_output_logits(&d->shortlist, d->rs->logits, d->m->dims.tgt_vocab,
                                model_step_output(d->m, d->rs, t, R), d->m->dims.hidden, R, d->m->dims.hidden);
    else
        model_step_logits(d->m, d->rs, t, R, d->rs->logits);
    *attn = d->rs->attn + rnn_step_row(d->rs, d->rows, t) * d->rows->S; /* step t's (R, S) */
    return d->rs->logits;
}

static void rnn_reorder(void *ctx, int t, const int *parent)
{
    RnnDecoder *d = ctx;
    model_reorder_state(d->m, d->rs, t, parent, d->rows->B);
}

static void rnn_close(void *ctx)
{
    RnnDecoder *d = ctx;
    batch_free(&d->repeated);
    shortlist_output_free(&d->shortlist);
    free(d);
}

static Decoder rnn_decoder(Model *m, RunState *rs)
{
    RnnDecoder *d = xcalloc(1, sizeof *d);
    d->m = m;
    d->rs = rs;
    return (Decoder){.ctx = d, .vocab = m->dims.tgt_vocab, .start = rnn_start, .step = rnn_step,
                     .reorder = rnn_reorder, .close = rnn_close};
}

/* ---------------------------------------------------------------- description */

const char *rnn_cell_name(int cell) { return cell == CELL_LSTM ? "lstm" : "gru"; }

static void rnn_describe(const ModelDims *d, long n_params, const Vocab *tgt, FILE *out)
{
    (void)tgt;
    fprintf(out, "model: %s, %d layer%s%s, %s attention%s%s", rnn_cell_name(d->cell), d->layers,
            d->layers > 1 ? "s" : "", d->bidirectional ? ", bidirectional encoder" : "", attention_name(d->attention),
            d->input_feed ? ", input feeding" : "", d->scaled ? ", scaled scores" : "");
    if (d->attention == ATT_LOCAL_MONOTONIC || d->attention == ATT_LOCAL_PREDICTIVE)
        fprintf(out, ", window %d", d->window);
    fprintf(out, "%s\n", d->tie_embeddings ? ", tied target embeddings" : "");
    fprintf(out, "sizes: embed %d, hidden %d, %ld parameters\n", d->embed, d->hidden, n_params);
}

static void rnn_facts(const ModelDims *d, const Vocab *tgt, const ModelFacts *f)
{
    (void)tgt;
    f->text(f->ctx, "cell", rnn_cell_name(d->cell));
    f->number(f->ctx, "layers", d->layers);
    f->flag(f->ctx, "bidirectional", d->bidirectional);
    f->text(f->ctx, "attention", attention_name(d->attention));
    f->flag(f->ctx, "input_feed", d->input_feed);
    f->number(f->ctx, "window", d->window);
    f->flag(f->ctx, "scaled", d->scaled);
    f->flag(f->ctx, "tie_embeddings", d->tie_embeddings);
    f->number(f->ctx, "embed", d->embed);
    f->number(f->ctx, "hidden", d->hidden);
}

/* ---------------------------------------------------------------- the family */

const ModelFamily rnn_family = {
    .type = MODEL_RNN,
    .name = "rnn",
    .title = "recurrent model",
    .task = MODEL_TRANSLATES,
    .keys = MODEL_KEYS_RECURRENT,
    .size_keys = "model.embed, model.hidden or model.layers",
    .settle_dims = rnn_settle_dims,
    .layout = rnn_layout,
    .init = INIT_PYTORCH,
    .runstate_alloc = rnn_runstate,
    .fill_batch = batch_fill_packed,
    .forward = rnn_forward,
    .backward = rnn_backward,
    .decoder = rnn_decoder,
    .prepare = rnn_prepare,
    .prepared_free = rnn_prepared_free,
    .int8_only = rnn_int8_only,
    .attention_heads = NULL,
    .describe = rnn_describe,
    .facts = rnn_facts,
    .file_section = NULL,
};
