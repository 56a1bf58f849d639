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

#define CLASSIFY_BATCH 64

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
        model_fill_batch(&mf->model, &batch, ex, idx, n_live);
        runstate_ensure(rs, d, RUN_SCORE, n_live, batch.S, 1);
        model_forward(&mf->model, rs, &batch, 0);
    }
    /* A packed batch keeps the rows in order (every example has the same, empty target). */
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

/* Classifies lines[0..n-1] (lines first_number.. of in_name, numbered from base +
 * first_number across the inputs, as the pictures are) and writes their output lines. */
static int flush_lines(ModelFile *mf, RunState *rs, char **lines, const char *warned, int n, long first_number,
                       long base, FILE *out, const char *in_name, const ClassifyOptions *opt, Error *err)
{
    int C = model_classes(&mf->model.dims), status = 0;
    int *classes = xmalloc(sizeof(int) * n), *cut = xmalloc(sizeof(int) * n);
    float *probs = xmalloc(sizeof(float) * (size_t)n * C), **attn = NULL;
    TokenList *units = NULL;
    if (opt->attention_svg) {
        attn = xcalloc(n, sizeof(float *));
        units = xcalloc(n, sizeof(TokenList));
    }
    classify_lines(mf, rs, lines, n, classes, probs, attn, units, cut);
    for (int i = 0; i < n; i++) {
        int c = classes[i];
        const float *p = probs + (long)i * C;
        if (c < 0) {
            if (!warned[i])
                fprintf(stderr, "nmt: warning: %s line %ld: no text to classify (empty, or not UTF-8): an empty line "
                                "out\n", in_name, first_number + i);
            fputc('\n', out);
            continue;
        }
        if (cut[i])
            fprintf(stderr, "nmt: warning: %s line %ld: %d units, more than the %d a line is classified by; only the "
                            "first %d classified\n", in_name, first_number + i, cut[i], CLASSIFY_MAX_UNITS,
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
        if (status == 0 && attn && attn[i])
            status = write_picture(opt->attention_svg, base + first_number + i, &units[i], attn[i],
                                   vocab_class_label(&mf->tgt_vocab, c), p[c], err);
    }
    if (attn)
        for (int i = 0; i < n; i++) {
            free(attn[i]);
            token_list_free(&units[i]);
        }
    free(attn);
    free(units);
    free(classes);
    free(cut);
    free(probs);
    if (status == 0 && (ferror(out) || fflush(out) != 0))
        status = error_set(err, "writing the labels: %s", strerror(errno));
    return status;
}

/* flush_lines' arguments besides the lines, for lines_read_batches. */
typedef struct {
    ModelFile *mf;
    RunState *rs;
    long base;
    FILE *out;
    const char *in_name;
    const ClassifyOptions *opt;
    int told_columns;  /* the note on lines with tabs is said */
} StreamJob;

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
    char *told = xmalloc((size_t)n);
    memcpy(told, warned, (size_t)n);
    take_text_columns(j, lines, told, n, first_number);
    int status = flush_lines(j->mf, j->rs, lines, told, n, first_number, j->base, j->out, j->in_name, j->opt, err);
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

int classify_stream(ModelFile *mf, FILE *in, FILE *out, const char *in_name, const ClassifyOptions *opt,
                    long *lines_before, Error *err)
{
    RunState rs = {0};
    StreamJob job = {mf, &rs, *lines_before, out, in_name, opt, 0};
    long count = 0;
    /* A NUL byte leaves the line without text, which flush_lines warns about. */
    int status = lines_read_batches(in, in_name, opt->batch > 0 ? opt->batch : CLASSIFY_BATCH, "classify", &opt->lines,
                                    "an empty line out", NULL, flush_job, &job, &count, err);
    *lines_before += count;
    runstate_free(&rs);
    return status;
}
