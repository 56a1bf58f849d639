/* classify.c — `nmt classify`; see classify.h. */
#include "decode/classify.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/corpus.h"    /* defines: encode_tokens */
#include "files/config.h"   /* defines: Config, config_parse */
#include "io/lines.h"     /* defines: lines_read_batches */
#include "layers/pooling.h"   /* defines: POOL_ATTENTION */
#include "decode/heatmap.h"  /* defines: heatmap_write_row_svg */
#include "decode/translate.h" /* defines: source_units */
#include "text/vocab.h"     /* defines: vocab_class_label */


void classify_lines(ModelFile *mf, RunState *rs, char *const *lines, int n, int *classes, float *probs,
                    float **attn, TokenList *units, int *cut)
{
    const ModelDims *d = &mf->model.dims;
    int C = model_classes(d);
    Example *ex = xcalloc(n ? n : 1, sizeof(Example));
    int *live = xmalloc(sizeof(int) * (n ? n : 1)), n_live = 0;
    for (int i = 0; i < n; i++) {
        TokenList tok;
        Error err;
        classes[i] = -1;
        if (attn) attn[i] = NULL;
        if (cut) cut[i] = 0;
        if (source_units(mf, lines[i], &tok, &err) == 0 && tok.n > 0) {
            if (tok.n > CLASSIFY_MAX_UNITS) {
                if (cut) cut[i] = tok.n;
                for (int j = CLASSIFY_MAX_UNITS; j < tok.n; j++)
                    free(tok.tokens[j]);
                tok.n = CLASSIFY_MAX_UNITS;
            }
            ex[n_live] = (Example){.src = encode_tokens(&tok, &mf->src_vocab), .src_len = tok.n, .label = -1};
            live[n_live++] = i;
        }
        if (units) units[i] = tok;
        else token_list_free(&tok);
    }
    int *idx = xmalloc(sizeof(int) * (n_live ? n_live : 1));
    for (int s = 0; s < n_live; s++)
        idx[s] = s;
    Batch batch = {0};
    if (n_live > 0) {
        /* A model prepared for int8 classifies as it decodes (RUN_DECODE), with its
         * int8 encoder and output layer (classifier.c); float32 scores the batch. */
        const Model *m = &mf->model;
        RunMode mode = m->prepared && m->compute_type == COMPUTE_INT8 ? RUN_DECODE : RUN_SCORE;
        model_fill_batch(&mf->model, &batch, ex, idx, n_live);
        runstate_ensure(rs, d, mode, n_live, batch.S, 1);
        model_forward(&mf->model, rs, &batch, 0);
    }
    /* A batch keeps the rows in order (every example has the same, empty target). */
    for (int s = 0; s < n_live; s++) {
        int i = live[s];
        const float *x = rs->logits + (long)s * C;
        int best = 0;
        float top = x[0];
        for (int k = 1; k < C; k++)
            if (x[k] > top) top = x[best = k];
        classes[i] = best;
        if (probs) {
            double z = 0;
            for (int k = 0; k < C; k++)
                z += exp((double)x[k] - top);
            for (int k = 0; k < C; k++)
                probs[(long)i * C + k] = (float)(exp((double)x[k] - top) / z);
        }
        if (attn && d->pooling == POOL_ATTENTION) {
            attn[i] = xmalloc(sizeof(float) * ex[s].src_len);
            memcpy(attn[i], rs->pool_attn + (long)s * batch.S, sizeof(float) * ex[s].src_len);
        }
        free(ex[s].src);
    }
    batch_free(&batch);
    free(ex);
    free(live);
    free(idx);
}

void worker_classify(Worker *k, int model, char *const *lines, int n, int *classes, float *probs, float **attn,
                     TokenList *units, int *cut)
{
    classify_lines(worker_model(k, model), worker_state(k, model), lines, n, classes, probs, attn, units, cut);
}

/* DIR/LINE.svg: the line's tokens in a row, shaded by their attention weights, the label
 * and its probability as the title (heatmap.h). */
static int write_picture(const char *dir, long number, const TokenList *tok, const float *a, const char *label,
                         double prob, Error *err)
{
    char path[4096], title[512];
    snprintf(path, sizeof path, "%s/%06ld.svg", dir, number);
    snprintf(title, sizeof title, "%s (%.4f)", label, prob);
    return heatmap_write_row_svg(path, title, (const char *const *)tok->tokens, tok->n, a, err);
}

/* A group of lines on its way through the workers: its lines (a copy when queued: the
 * reader reuses its buffers) and warnings, and once classified, the results. */
typedef struct {
    char **lines;
    char *warned;
    int n, copied;
    long first_number;
    int *classes, *cut;
    float *probs, **attn;    /* (n, C); attn with --attention-svg */
    TokenList *units;
} LineGroup;

static LineGroup *group_new(char **lines, const char *warned, int n, long first_number, int C,
                            const ClassifyOptions *opt, int copy)
{
    LineGroup *g = xcalloc(1, sizeof *g);
    g->n = n;
    g->first_number = first_number;
    g->copied = copy;
    g->lines = lines;
    g->warned = (char *)warned;
    if (copy) {
        g->lines = xmalloc(sizeof(char *) * n);
        g->warned = xmalloc(n);
        for (int i = 0; i < n; i++)
            g->lines[i] = xstrdup(lines[i]);
        memcpy(g->warned, warned, n);
    }
    g->classes = xmalloc(sizeof(int) * n);
    g->cut = xmalloc(sizeof(int) * n);
    g->probs = xmalloc(sizeof(float) * (size_t)n * C);
    if (opt->attention_svg) {
        g->attn = xcalloc(n, sizeof(float *));
        g->units = xcalloc(n, sizeof(TokenList));
    }
    return g;
}

static void group_free(LineGroup *g)
{
    for (int i = 0; g->attn && i < g->n; i++) {
        free(g->attn[i]);
        token_list_free(&g->units[i]);
    }
    for (int i = 0; g->copied && i < g->n; i++)
        free(g->lines[i]);
    if (g->copied) {
        free(g->lines);
        free(g->warned);
    }
    free(g->attn);
    free(g->units);
    free(g->classes);
    free(g->cut);
    free(g->probs);
    free(g);
}

/* Writes the output lines of a classified group (lines first_number.. of in_name,
 * numbered from base + first_number across the inputs, as the pictures are). */
static int write_lines(const ModelFile *mf, const LineGroup *g, long base, FILE *out, const char *in_name,
                       const ClassifyOptions *opt, Error *err)
{
    int C = model_classes(&mf->model.dims), status = 0;
    long first_number = g->first_number;
    for (int i = 0; i < g->n; i++) {
        int c = g->classes[i];
        const float *p = g->probs + (long)i * C;
        if (c < 0) {
            if (!g->warned[i])
                fprintf(stderr, "nmt: warning: %s line %ld: no text to classify (empty, or not UTF-8): an empty line "
                                "out\n", in_name, first_number + i);
            fputc('\n', out);
            continue;
        }
        if (g->cut[i])
            fprintf(stderr, "nmt: warning: %s line %ld: %d units, more than the %d a line is classified by; only the "
                            "first %d classified\n", in_name, first_number + i, g->cut[i], CLASSIFY_MAX_UNITS,
                    CLASSIFY_MAX_UNITS);
        if (opt->probs == 2) {
            for (int k = 0; k < C; k++)
                fprintf(out, "%s%s\t%.4f", k ? "\t" : "", vocab_class_label(&mf->tgt_vocab, k), p[k]);
            fputc('\n', out);
        } else if (opt->probs == 1) {
            fprintf(out, "%s\t%.4f\n", vocab_class_label(&mf->tgt_vocab, c), p[c]);
        } else {
            fprintf(out, "%s\n", vocab_class_label(&mf->tgt_vocab, c));
        }
        if (status == 0 && g->attn && g->attn[i])
            status = write_picture(opt->attention_svg, base + first_number + i, &g->units[i], g->attn[i],
                                   vocab_class_label(&mf->tgt_vocab, c), p[c], err);
    }
    if (status == 0 && (ferror(out) || fflush(out) != 0))
        status = error_set(err, "writing the labels: %s", strerror(errno));
    return status;
}

/* What the stream's batches need besides their lines. */
typedef struct {
    Workers *w;
    OrderedQueue *queue;  /* several workers: the batches in flight; NULL: one at a time */
    long base;
    FILE *out;
    const char *in_name;
    const ClassifyOptions *opt;
    int told_columns;  /* the note on lines with tabs is said */
} StreamJob;

typedef struct {
    LineGroup *g;
    StreamJob *j;
} QueuedGroup;

static void classify_group(StreamJob *j, LineGroup *g)
{
    Worker *k = workers_borrow(j->w);
    worker_classify(k, 0, g->lines, g->n, g->classes, g->probs, g->attn, g->units, g->cut);
    workers_return(j->w, k);
}

static void queued_run(void *job)
{
    QueuedGroup *q = job;
    classify_group(q->j, q->g);
}

static int queued_finish(void *ctx, void *job, int failed, Error *err)
{
    (void)ctx;
    QueuedGroup *q = job;
    StreamJob *j = q->j;
    int status = failed ? 0 : write_lines(workers_model(j->w, 0), q->g, j->base, j->out, j->in_name, j->opt, err);
    group_free(q->g);
    free(q);
    return status;
}

/* Each line with a tab cut down to its text column, in place, as training read its
 * data (classify.h); one without it emptied, with a warning (warned[i] set). */
static void take_text_columns(StreamJob *j, char **lines, char *warned, int n, long first_number)
{
    int k = j->opt->text_column > 0 ? j->opt->text_column : 1;
    for (int i = 0; i < n; i++) {
        char *at = lines[i];
        if (!strchr(at, '\t')) continue;
        if (!j->told_columns) {
            fprintf(stderr, "nmt: note: %s line %ld has tabs: such lines are read as the training data was, column %d "
                            "the text (data.text_column), the others left out\n", j->in_name, first_number + i, k);
            j->told_columns = 1;
        }
        for (int c = 1; c < k && at; c++) {
            at = strchr(at, '\t');
            if (at) at++;
        }
        if (!at) {
            fprintf(stderr, "nmt: warning: %s line %ld: no column %d (the text, data.text_column): an empty line "
                            "out\n", j->in_name, first_number + i, k);
            warned[i] = 1;
            lines[i][0] = 0;
            continue;
        }
        size_t len = strcspn(at, "\t");
        memmove(lines[i], at, len);
        lines[i][len] = 0;
    }
}

static int flush_job(void *ctx, char **lines, const char *warned, int n, long first_number, Error *err)
{
    StreamJob *j = ctx;
    int C = model_classes(&workers_model(j->w, 0)->model.dims);
    /* The text columns are cut out here, on the reader's thread, so the note on tabs
     * comes once, before any line it concerns is written. */
    char *told = xmalloc((size_t)(n ? n : 1));
    memcpy(told, warned, (size_t)n);
    take_text_columns(j, lines, told, n, first_number);
    int status;
    if (j->queue) {
        QueuedGroup *q = xmalloc(sizeof *q);
        q->g = group_new(lines, told, n, first_number, C, j->opt, 1);
        q->j = j;
        status = ordered_submit(j->queue, q, err);
    } else {
        LineGroup *g = group_new(lines, told, n, first_number, C, j->opt, 0);
        classify_group(j, g);
        status = write_lines(workers_model(j->w, 0), g, j->base, j->out, j->in_name, j->opt, err);
        group_free(g);
    }
    free(told);
    return status;
}

void classify_trained_columns(const ModelFile *mf, int *text_col, int *label_col)
{
    Config cfg;
    Error err;
    config_defaults(&cfg);
    if (mf->config_json && config_parse(&cfg, mf->config_json, "the model's config", &err) == 0) {
        if (*text_col < 0) *text_col = cfg.text_column;
        if (*label_col < 0) *label_col = cfg.label_column;
    }
    config_free(&cfg);
    if (*text_col < 0) *text_col = 1;
    if (*label_col < 0) *label_col = 0;
}

int classify_stream(Workers *w, FILE *in, FILE *out, const char *in_name, const ClassifyOptions *opt,
                    long *lines_before, Error *err)
{
    StreamJob job = {w, NULL, *lines_before, out, in_name, opt, 0};
    if (workers_threads(w)) {
        OrderedJobs jobs = {.run = queued_run, .finish = queued_finish, .ctx = &job};
        job.queue = ordered_new(workers_threads(w), 2 * workers_count(w), &jobs);
    }
    long count = 0;
    /* A NUL byte leaves the line without text, which write_lines warns about. */
    int status = lines_read_batches(in, in_name, opt->batch > 0 ? opt->batch : CLASSIFY_BATCH, "classify", &opt->lines,
                                    "an empty line out", NULL, flush_job, &job, &count, err);
    /* Whatever was read is written (or, after a write error, dropped) before returning. */
    status = ordered_close(job.queue, status, err);
    *lines_before += count;
    return status;
}
