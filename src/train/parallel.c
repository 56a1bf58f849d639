/* parallel.c — data-parallel workers inside one training process; see parallel.h. */
#include "train/parallel.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/blas.h"   /* defines: blas_check_memory_limit */
#include "kernels/linalg.h" /* defines: packed_matches_blas, PACKED_MAX_ROWS */

/* The parameter vector is shared out in slices of this many floats (whole blocks of the
 * norm's): small enough that a slice of every worker's gradients stays in cache while
 * they are added up, many enough that the threads end together. */
#define SLICE (4 * GRAD_NORM_BLOCK)

/* Worker w >= 1's own: its model view (shared weights, its gradients), run state and
 * batch; and what its part of the step came to. */
typedef struct {
    Model view;
    RunState rs;
    Batch batch;
    double loss;
    long tokens, right;
    int deferred;   /* its last pass left the output layer's weight gradient (RunState.output) */
} Worker;

/* A table of the gradients that the workers' buffers hold only in part: an embedding
 * table, its place, which of a batch's words it embeds and a byte per row, set while a
 * step's words are marked (mark_rows); or the output layer's weight (used NULL), which
 * the workers leave to the step (RunState.defer_output): zeros in every buffer. */
typedef struct {
    long at, rows, cols;
    int src_ids, tgt_ids;
    unsigned char *used;
} SparseTable;

struct TrainWorkers {
    int n;
    ThreadPool *pool;     /* n - 1 threads: the caller is worker 0 */
    Worker *w;            /* (n) w[0] holds only worker 0's figures */
    float *block_sums;    /* the gradient norm's blocks */
    long blocks;
    /* The model's weights packed for the workers' products (RunState.packs), or NULL:
     * made where the family reads them and the packed products give OpenBLAS's bits
     * (linalg.h), packed again at each step whose shards are small enough to use them. */
    void *packs;
    const ModelFamily *family;
    /* The embedding tables whose gradients a step writes only at the rows of the words
     * it embeds, and the output layer's weight unless it is one of them (find_tables),
     * in the order of the gradients. */
    int n_tables;
    SparseTable table[3];
    /* The workers leave the output layer's weight gradient to the step (not when the
     * weight is an embedding table too: then its rows add up in each worker's buffer). */
    int defer_output;
};

/* The target and source embedding tables, each once (a shared source embedding is the
 * target's), unless one is the output layer's weight too (tied: every row gets a
 * gradient); and the output layer's weight unless tied; in the order of the gradients. */
static void find_tables(TrainWorkers *t, const Model *m)
{
    const Params *g = &m->grads;
    float *tables[2] = {g->tgt_emb, g->src_emb};
    long rows[2] = {m->dims.tgt_vocab, m->dims.src_vocab};
    for (int k = 0; k < 2; k++) {
        if (!tables[k] || tables[k] == g->out_w || (k == 1 && tables[1] == tables[0])) continue;
        SparseTable *e = &t->table[t->n_tables++];
        e->at = tables[k] - m->grad_mem;
        e->rows = rows[k];
        e->cols = m->dims.embed;
        e->src_ids = k == 1 || tables[1] == tables[0];
        e->tgt_ids = k == 0;
        e->used = xcalloc(rows[k], 1);
    }
    if (g->out_w && g->out_w != tables[0] && g->out_w != tables[1]) {
        TensorShape shape[MAX_TENSORS];
        float *tensor[MAX_TENSORS];
        int n = params_shapes(&m->dims, shape);
        params_tensors(g, &m->dims, tensor);
        for (int i = 0; i < n; i++)
            if (tensor[i] == g->out_w) {
                t->table[t->n_tables++] = (SparseTable){.at = g->out_w - m->grad_mem, .rows = shape[i].rows,
                                                        .cols = shape[i].cols};
                t->defer_output = 1;
            }
    }
    for (int k = 1; k < t->n_tables; k++)  /* insertion sort by place */
        for (int j = k; j > 0 && t->table[j].at < t->table[j - 1].at; j--) {
            SparseTable e = t->table[j];
            t->table[j] = t->table[j - 1];
            t->table[j - 1] = e;
        }
}

TrainWorkers *train_workers_new(int workers, const Model *m, int shard_cap, int S, int T, Error *err)
{
    if (workers < 1) workers = 1;
    if (workers > 1 && blas_check_memory_limit(workers, err)) return NULL;
    TrainWorkers *t = xcalloc(1, sizeof *t);
    t->n = workers;
    t->w = xcalloc(workers, sizeof(Worker));
    for (int w = 1; w < workers; w++) {
        model_view(&t->w[w].view, m);
        runstate_ensure(&t->w[w].rs, &m->dims, RUN_TRAIN, shard_cap, S, T);
    }
    t->blocks = (m->n_params + GRAD_NORM_BLOCK - 1) / GRAD_NORM_BLOCK;
    t->block_sums = xmalloc(sizeof(float) * (t->blocks ? t->blocks : 1));
    t->pool = workers > 1 ? threadpool_new(workers - 1) : NULL;
    t->family = model_family(&m->dims);
    if (workers > 1) find_tables(t, m);
    if (workers > 1 && t->family->repack && packed_matches_blas()) t->packs = t->family->prepare(m, COMPUTE_FLOAT32);
    return t;
}

void train_workers_free(TrainWorkers *t)
{
    if (!t) return;
    threadpool_free(t->pool);
    for (int w = 1; w < t->n; w++) {
        model_free_view(&t->w[w].view);
        runstate_free(&t->w[w].rs);
        batch_free(&t->w[w].batch);
    }
    free(t->w);
    free(t->block_sums);
    if (t->packs) t->family->prepared_free(t->packs);
    for (int k = 0; k < t->n_tables; k++)
        free(t->table[k].used);
    free(t);
}

int train_workers_count(const TrainWorkers *t) { return t->n; }

/* ---------------------------------------------------------------- the passes */

/* What every worker's pass of a step (or a scoring) reads. */
typedef struct {
    TrainWorkers *t;
    Model *m;
    RunState *rs;           /* worker 0's, whose options the others take */
    Batch *batch;           /* worker 0's */
    const Example *ex;
    const int *idx;
    int n;
    const Ranks *ranks;     /* NULL: scoring, split among this process's workers only */
    long seed, step;
    const void *packs;      /* the step's packed weights (RunState.packs), or NULL */
} Pass;

static void worker_pass(void *ctx, int w)
{
    Pass *p = ctx;
    Worker *k = &p->t->w[w];
    Model *m = w ? &k->view : p->m;
    RunState *rs = w ? &k->rs : p->rs;
    Batch *batch = w ? &k->batch : p->batch;
    int W = p->t->n, lo, hi, training = p->ranks != NULL;
    if (w) runstate_copy_options(rs, p->rs);
    rs->packs = p->packs;
    if (training) {
        ranks_shard(p->ranks, W, w, p->n, &lo, &hi);
        ranks_shard_stream(&rs->rng, p->seed, p->ranks->rank * W + w, p->step);
    } else {
        lo = (int)((long)p->n * w / W);
        hi = (int)((long)p->n * (w + 1) / W);
    }
    k->loss = 0;
    k->tokens = k->right = 0;
    k->deferred = 1;  /* an empty shard leaves nothing in its buffer */
    rs->output.rows = 0;
    if (hi <= lo) return;  /* a batch smaller than the shards leaves some nothing to do */
    model_fill_batch(m, batch, p->ex, p->idx + lo, hi - lo);
    if (!training) runstate_ensure(rs, &m->dims, RUN_TRAIN, hi - lo, batch->S, batch->T);
    k->loss = model_forward(m, rs, batch, training);
    if (training) {
        /* Several workers leave the output layer's weight gradient to the step. */
        rs->defer_output = p->t->defer_output;
        model_backward(m, rs, batch);
        rs->defer_output = 0;
        k->deferred = rs->output.rows > 0;
    }
    k->tokens = batch->n_tokens;
    if (!training && model_classifies(&m->dims)) {
        int C = model_classes(&m->dims);
        for (int b = 0; b < hi - lo; b++) {
            const float *x = rs->logits + (long)b * C;
            int best = 0;
            for (int c = 1; c < C; c++)
                if (x[c] > x[best]) best = c;
            k->right += best == batch->label[b];
        }
    }
}

/* Slice s of the gradients: worker 0's (the model's) plus worker 1's, plus worker 2's,
 * ..., in that order for every element; the others' zeroed for the next step. With
 * sparse, only the marked rows of the embedding tables; with deferred, nothing of the
 * output layer's weight: the workers' buffers hold zeros there, which would add
 * nothing (and which the sum leaves as they are). */
typedef struct {
    TrainWorkers *t;
    float *sum;
    long n;
    int sparse, deferred;
} GradSum;

static void sum_range(const TrainWorkers *t, float *sum, long lo, long hi)
{
    for (int w = 1; w < t->n; w++) {
        float *mine = t->w[w].view.grad_mem;
#pragma omp simd
        for (long i = lo; i < hi; i++) {
            sum[i] += mine[i];
            mine[i] = 0.0f;
        }
    }
}

static void sum_slice(void *ctx, int s)
{
    GradSum *g = ctx;
    const TrainWorkers *t = g->t;
    long lo = (long)s * SLICE, hi = lo + SLICE < g->n ? lo + SLICE : g->n;
    for (int k = 0; k < t->n_tables; k++) {
        const SparseTable *e = &t->table[k];
        long end = e->at + e->rows * e->cols;
        if (!(e->used ? g->sparse : g->deferred) || hi <= e->at || end <= lo) continue;
        if (lo < e->at) sum_range(t, g->sum, lo, e->at);  /* what comes before the table */
        long from = lo > e->at ? lo : e->at, to = hi < end ? hi : end;
        for (long row = (from - e->at) / e->cols; e->used && e->at + row * e->cols < to; row++) {
            if (!e->used[row]) continue;
            long first = e->at + row * e->cols, last = first + e->cols;
            sum_range(t, g->sum, first > from ? first : from, last < to ? last : to);
        }
        lo = to;
    }
    if (lo < hi) sum_range(t, g->sum, lo, hi);
}

static void mark(const SparseTable *e, const int *ids, long n, unsigned char value)
{
    for (long i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < e->rows) e->used[ids[i]] = value;
}

/* Sets (value 1) or clears (0) in each table the rows of the words of every worker's
 * batch: the rows that the step's backward passes, without sampled inputs, can have
 * written (a worker that had no shard this step holds an older batch: rows more). */
static void mark_rows(TrainWorkers *t, const Batch *first, unsigned char value)
{
    for (int w = 0; w < t->n; w++) {
        const Batch *b = w ? &t->w[w].batch : first;
        long n_src = (long)b->S * b->B, n_tgt = b->tgt_off ? b->tgt_off[b->T] : (long)b->T * b->B;
        for (int k = 0; k < t->n_tables; k++) {
            if (!t->table[k].used) continue;
            if (t->table[k].src_ids && b->src) mark(&t->table[k], b->src, n_src, value);
            if (t->table[k].tgt_ids && b->tgt_in) mark(&t->table[k], b->tgt_in, n_tgt, value);
        }
    }
}

/* The output layer's weight gradient that the workers left (RunState.output): slice s
 * of its rows, every worker's product added in worker order. */
typedef struct {
    const TrainWorkers *t;
    float *gw;
    const RunState *first;  /* worker 0's run state */
    int n;                  /* the weight's rows */
} OutputGrads;

static const DeferredGrads *deferred_of(const OutputGrads *o, int w)
{
    return w ? &o->t->w[w].rs.output : &o->first->output;
}

static void output_slice(void *ctx, int s)
{
    OutputGrads *o = ctx;
    int lo = s * TRAIN_OUTPUT_ROWS, hi = lo + TRAIN_OUTPUT_ROWS < o->n ? lo + TRAIN_OUTPUT_ROWS : o->n;
    for (int w = 0; w < o->t->n; w++) {
        const DeferredGrads *d = deferred_of(o, w);
        if (d->rows > 0)
            linear_grads(o->gw + (long)lo * d->k, NULL, d->dy + lo, d->n, d->x, d->k, d->rows, hi - lo, d->k);
    }
}

/* Whether some worker's shard of this step is small enough for the packed products:
 * at most PACKED_MAX_ROWS source or target positions (the rows of a Transformer's
 * pass; each product decides for itself whether it reads the packs). */
static int shards_small(const TrainWorkers *t, const Example *ex, const int *idx, int n, const Ranks *ranks)
{
    for (int w = 0; w < t->n; w++) {
        int lo, hi;
        long src = 0, tgt = 0;
        ranks_shard(ranks, t->n, w, n, &lo, &hi);
        for (int i = lo; i < hi; i++)
            src += ex[idx[i]].src_len + 1, tgt += ex[idx[i]].tgt_len + 1;
        if (hi > lo && (src <= PACKED_MAX_ROWS || tgt <= PACKED_MAX_ROWS)) return 1;
    }
    return 0;
}

typedef struct {
    TrainWorkers *t;
    const Model *m;
} Repack;

static void repack_part(void *ctx, int part)
{
    Repack *r = ctx;
    r->t->family->repack(r->m, r->t->packs, part, r->t->n);
}

double train_workers_gradients(TrainWorkers *t, Model *m, RunState *rs, Batch *batch, const Example *ex,
                               const int *idx, int n, const Ranks *ranks, long seed, long step)
{
    /* The weights are packed again at every step that uses them: whatever changed
     * them since (an update, a resumed or rolled-back run), the packs are theirs. */
    const void *packs = NULL;
    if (t->packs && shards_small(t, ex, idx, n, ranks)) {
        Repack r = {t, m};
        threadpool_for(t->pool, t->n, repack_part, &r);
        packs = t->packs;
    }
    Pass p = {t, m, rs, batch, ex, idx, n, ranks, seed, step, packs};
    threadpool_for(t->pool, t->n, worker_pass, &p);
    rs->packs = NULL;  /* the caller's run state: nothing else may read them stale */
    double loss = 0;
    for (int w = 0; w < t->n; w++)
        loss += t->w[w].loss;
    if (t->n > 1) {
        /* Sampled decoder inputs embed words of no batch: then every row is summed. The
         * output layer's weight is not if every worker left its product to the step. */
        GradSum g = {t, m->grad_mem, m->n_params, rs->sample_prob == 0, 1};
        for (int w = 0; w < t->n; w++)
            g.deferred &= t->w[w].deferred;
        if (g.sparse) mark_rows(t, batch, 1);
        threadpool_for(t->pool, (int)((m->n_params + SLICE - 1) / SLICE), sum_slice, &g);
        if (g.sparse) mark_rows(t, batch, 0);
        OutputGrads o = {t, m->grads.out_w, rs, 0};
        for (int w = 0; w < t->n; w++)
            if (deferred_of(&o, w)->rows > 0) o.n = deferred_of(&o, w)->n;
        if (o.n > 0) threadpool_for(t->pool, (o.n + TRAIN_OUTPUT_ROWS - 1) / TRAIN_OUTPUT_ROWS, output_slice, &o);
    }
    return loss;
}

double train_workers_score(TrainWorkers *t, Model *m, RunState *rs, Batch *batch, const Example *ex,
                           const int *idx, int n, long *tokens, long *right)
{
    /* Held-out loss is never smoothed. Set here, before the workers start: each of them
     * copies rs's options, so worker 0 writing rs while they read would be a race. */
    rs->label_smoothing = 0;
    Pass p = {t, m, rs, batch, ex, idx, n, NULL, 0, 0, NULL};
    threadpool_for(t->pool, t->n, worker_pass, &p);
    double loss = 0;
    *tokens = *right = 0;
    for (int w = 0; w < t->n; w++) {
        loss += t->w[w].loss;
        *tokens += t->w[w].tokens;
        *right += t->w[w].right;
    }
    return loss;
}

/* ---------------------------------------------------------------- norm and update */

typedef struct {
    TrainWorkers *t;
    const float *grad;
    long n;
} NormBlocks;

/* The blocks of slice s (SLICE / GRAD_NORM_BLOCK of them). */
static void norm_slice(void *ctx, int s)
{
    NormBlocks *b = ctx;
    long per = SLICE / GRAD_NORM_BLOCK, first = (long)s * per, last = first + per < b->t->blocks ? first + per
                                                                                                     : b->t->blocks;
    grad_norm_blocks(b->grad, b->n, first, last, b->t->block_sums + first);
}

double train_workers_grad_norm(TrainWorkers *t, const float *grad, long n)
{
    if (t->n == 1) return grad_norm(grad, n);
    NormBlocks b = {t, grad, n};
    long per = SLICE / GRAD_NORM_BLOCK;
    threadpool_for(t->pool, (int)((t->blocks + per - 1) / per), norm_slice, &b);
    return grad_norm_of_blocks(t->block_sums, t->blocks);
}

typedef struct {
    const Adam *opt;
    float *params, *grad, scale;
} AdamSlices;

static void adam_slice(void *ctx, int s)
{
    AdamSlices *a = ctx;
    long lo = (long)s * SLICE, hi = lo + SLICE < a->opt->n ? lo + SLICE : a->opt->n;
    adam_update_range(a->opt, a->params, a->grad, a->scale, lo, hi);
}

void train_workers_adam(TrainWorkers *t, Adam *opt, float *params, float *grad, float grad_scale)
{
    if (t->n == 1) {
        adam_update(opt, params, grad, grad_scale);
        return;
    }
    adam_begin_update(opt);
    AdamSlices a = {opt, params, grad, grad_scale};
    threadpool_for(t->pool, (int)((opt->n + SLICE - 1) / SLICE), adam_slice, &a);
}
