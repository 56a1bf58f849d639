/* classeval.c — a classifier's held-out measures; see classeval.h. */
#include "eval/classeval.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode/classify.h" /* defines: worker_classify, classify_trained_columns, CLASSIFY_MAX_UNITS */
#include "eval/eval.h"     /* defines: eval_loss_problem */
#include "data/tsv.h"      /* defines: TsvCorpus, tsv_read_labelled */
#include "text/vocab.h"    /* defines: vocab_label_class, vocab_class_label */

#define CLASSEVAL_BATCH 64

static void note_unseen(ClassEvalResult *r, const char *label)
{
    r->unseen++;
    for (int k = 0; k < r->n_unseen_labels && k < CLASSEVAL_UNSEEN_KEPT; k++)
        if (!strcmp(r->unseen_label[k], label)) {
            r->unseen_count[k]++;
            return;
        }
    if (r->n_unseen_labels < CLASSEVAL_UNSEEN_KEPT) {
        r->unseen_label[r->n_unseen_labels] = xstrdup(label);
        r->unseen_count[r->n_unseen_labels] = 1;
    }
    r->n_unseen_labels++;
}

/* The figures from the counts per label (support: the true labels). */
static void summarise(ClassEvalResult *r, double nll)
{
    int C = r->classes;
    r->accuracy = r->scored ? (double)r->right / r->scored : 0;
    r->loss = r->scored ? nll / r->scored : 0;
    r->macro_f1 = 0;
    for (int c = 0; c < C; c++) {
        long tp = r->true_positive[c], predicted = r->predicted[c], actual = r->support[c];
        r->precision[c] = predicted ? (double)tp / predicted : 0;
        r->recall[c] = actual ? (double)tp / actual : 0;
        double pr = r->precision[c] + r->recall[c];
        r->f1[c] = pr > 0 ? 2 * r->precision[c] * r->recall[c] / pr : 0;
        r->macro_f1 += r->f1[c] / C;
    }
}

/* classeval_run's batches: batch b is lines [b * CLASSEVAL_BATCH, ...), classified into
 * the same places of classes (n), probs (n, C) and cut (n). */
typedef struct {
    Workers *w;
    char **lines;
    int n, C;
    int *classes, *cut;
    float *probs;
} ClassBatches;

static void classify_batch(void *ctx, int b)
{
    ClassBatches *c = ctx;
    int start = b * CLASSEVAL_BATCH, n = c->n - start < CLASSEVAL_BATCH ? c->n - start : CLASSEVAL_BATCH;
    Worker *k = workers_borrow(c->w);
    worker_classify(k, 0, c->lines + start, n, c->classes + start, c->probs + (long)start * c->C, NULL, NULL,
                    c->cut + start);
    workers_return(c->w, k);
}

int classeval_run(Workers *w, const char *model_path, const char *tsv_path, int text_col, int label_col,
                  const LineLimit *limit, ClassEvalResult *res, Error *err)
{
    ModelFile *mf = workers_model(w, 0);
    memset(res, 0, sizeof *res);
    classify_trained_columns(mf, &text_col, &label_col);
    TsvCorpus tsv;
    if (tsv_read_labelled(tsv_path, text_col, label_col, limit, &tsv, err)) return -1;
    char note[ERROR_LEN];
    tsv_describe_skipped(&tsv, tsv_path, note, sizeof note);
    if (note[0]) fprintf(stderr, "nmt: warning: %s\n", note);
    int C = model_classes(&mf->model.dims);
    res->classes = C;
    res->labels = &mf->tgt_vocab;
    if (C <= CLASSEVAL_MATRIX_MAX) res->confusion = xcalloc((size_t)C * C, sizeof(long));
    res->true_positive = xcalloc(C, sizeof(long));
    res->predicted = xcalloc(C, sizeof(long));
    res->precision = xcalloc(C, sizeof(double));
    res->recall = xcalloc(C, sizeof(double));
    res->f1 = xcalloc(C, sizeof(double));
    res->support = xcalloc(C, sizeof(long));
    /* Every line classified first (the batches spread over the workers), then counted in order. */
    int n_lines = tsv.n > 0 ? tsv.n : 1;
    ClassBatches cb = {w, xmalloc(sizeof(char *) * n_lines), tsv.n, C, xmalloc(sizeof(int) * n_lines),
                       xmalloc(sizeof(int) * n_lines), xmalloc(sizeof(float) * (size_t)n_lines * C)};
    for (int i = 0; i < tsv.n; i++)
        cb.lines[i] = tsv.pairs[i].src;
    threadpool_for(workers_threads(w), (tsv.n + CLASSEVAL_BATCH - 1) / CLASSEVAL_BATCH, classify_batch, &cb);
    double nll = 0;
    for (int i = 0; i < tsv.n; i++) {
        if (cb.cut[i])
            fprintf(stderr, "nmt: warning: %s line %d: %d units, more than the %d a line is classified by; only "
                            "the first %d classified\n", tsv_path, tsv.pairs[i].line, cb.cut[i], CLASSIFY_MAX_UNITS,
                    CLASSIFY_MAX_UNITS);
        int truth = vocab_label_class(&mf->tgt_vocab, tsv.pairs[i].tgt);
        res->lines++;
        if (truth < 0) {
            note_unseen(res, tsv.pairs[i].tgt);
            continue;
        }
        int guess = cb.classes[i];
        if (guess < 0) {
            res->no_text++;
            continue;
        }
        res->scored++;
        res->right += guess == truth;
        if (res->confusion) res->confusion[(long)truth * C + guess]++;
        res->support[truth]++;
        res->predicted[guess]++;
        res->true_positive[truth] += guess == truth;
        /* A NaN probability (logits that overflowed) must not pass as a tiny one. */
        float p = cb.probs[(long)i * C + truth];
        nll -= isnan(p) ? p : log(p > 1e-30f ? p : 1e-30f);
    }
    free(cb.lines);
    free(cb.classes);
    free(cb.cut);
    free(cb.probs);
    res->lines += tsv.n_malformed;
    if (res->scored == 0) {
        /* As a translation model's eval: no figure out of nothing (an accuracy of 0). */
        error_set(err, "%s: no line to score: %ld read, %ld with a label the model never saw, %ld without text, %d "
                       "malformed", tsv_path, res->lines, res->unseen, res->no_text, tsv.n_malformed);
        tsv_free(&tsv);
        classeval_free(res);
        return -1;
    }
    summarise(res, nll);
    tsv_free(&tsv);
    if (!isfinite(res->loss)) {
        eval_loss_problem(model_path, tsv_path, "per line", res->loss, err);
        classeval_free(res);
        return -1;
    }
    return 0;
}

void classeval_free(ClassEvalResult *res)
{
    free(res->confusion);
    free(res->true_positive);
    free(res->predicted);
    free(res->precision);
    free(res->recall);
    free(res->f1);
    free(res->support);
    for (int k = 0; k < res->n_unseen_labels && k < CLASSEVAL_UNSEEN_KEPT; k++)
        free(res->unseen_label[k]);
    memset(res, 0, sizeof *res);
}

static void print_json(const ClassEvalResult *r, FILE *out)
{
    int C = r->classes;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "accuracy", r->accuracy);
    cJSON_AddNumberToObject(o, "macro_f1", r->macro_f1);
    cJSON_AddNumberToObject(o, "loss", r->loss);
    cJSON_AddNumberToObject(o, "lines", (double)r->lines);
    cJSON_AddNumberToObject(o, "scored", (double)r->scored);
    cJSON_AddNumberToObject(o, "right", (double)r->right);
    cJSON *classes = cJSON_AddArrayToObject(o, "classes");
    /* null above CLASSEVAL_MATRIX_MAX labels (classeval.h) */
    cJSON *matrix = r->confusion ? cJSON_AddArrayToObject(o, "confusion") : (cJSON_AddNullToObject(o, "confusion"), NULL);
    for (int c = 0; c < C; c++) {
        cJSON *k = cJSON_CreateObject();
        cJSON_AddStringToObject(k, "label", vocab_class_label(r->labels, c));
        cJSON_AddNumberToObject(k, "precision", r->precision[c]);
        cJSON_AddNumberToObject(k, "recall", r->recall[c]);
        cJSON_AddNumberToObject(k, "f1", r->f1[c]);
        cJSON_AddNumberToObject(k, "support", (double)r->support[c]);
        cJSON_AddItemToArray(classes, k);
        if (!matrix) continue;
        cJSON *row = cJSON_CreateArray();
        for (int p = 0; p < C; p++)
            cJSON_AddItemToArray(row, cJSON_CreateNumber((double)r->confusion[(long)c * C + p]));
        cJSON_AddItemToArray(matrix, row);
    }
    cJSON *unseen = cJSON_AddObjectToObject(o, "unseen_labels");
    for (int k = 0; k < r->n_unseen_labels && k < CLASSEVAL_UNSEEN_KEPT; k++)
        cJSON_AddNumberToObject(unseen, r->unseen_label[k], (double)r->unseen_count[k]);
    cJSON_AddNumberToObject(o, "unseen_lines", (double)r->unseen);
    cJSON_AddNumberToObject(o, "no_text_lines", (double)r->no_text);
    char *text = cJSON_PrintUnformatted(o);
    fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(o);
}

void classeval_print(const ClassEvalResult *r, int json, FILE *out)
{
    if (json) {
        print_json(r, out);
        return;
    }
    /* The label column as wide as the longest label, up to 40: a longer one overflows its
     * column rather than pad every row to its length. */
    int C = r->classes, w = 5;
    for (int c = 0; c < C; c++) {
        int len = (int)strlen(vocab_class_label(r->labels, c));
        if (len > w) w = len < 40 ? len : 40;
    }
    fprintf(out, "accuracy %.4f (%ld of %ld lines right)\n", r->accuracy, r->right, r->scored);
    fprintf(out, "macro F1 %.4f\n", r->macro_f1);
    fprintf(out, "loss %.4f per line (cross-entropy of the true label)\n", r->loss);
    fprintf(out, "%-*s  precision  recall  F1      support\n", w, "label");
    for (int c = 0; c < C; c++)
        fprintf(out, "%-*s  %-9.4f  %-6.4f  %-6.4f  %ld\n", w, vocab_class_label(r->labels, c), r->precision[c],
                r->recall[c], r->f1[c], r->support[c]);
    if (!r->confusion) {
        fprintf(out, "confusion matrix: not shown for %d labels (more than %d)\n", C, CLASSEVAL_MATRIX_MAX);
    } else {
        fprintf(out, "confusion matrix (rows: true label, columns: predicted)\n%-*s", w, "");
        for (int c = 0; c < C; c++)
            fprintf(out, "  %*s", w, vocab_class_label(r->labels, c));
        fputc('\n', out);
        for (int c = 0; c < C; c++) {
            fprintf(out, "%-*s", w, vocab_class_label(r->labels, c));
            for (int p = 0; p < C; p++)
                fprintf(out, "  %*ld", w, r->confusion[(long)c * C + p]);
            fputc('\n', out);
        }
    }
    if (r->unseen) {
        fprintf(out, "not scored: %ld line%s with a label the model never saw in training (", r->unseen,
                r->unseen == 1 ? "" : "s");
        for (int k = 0; k < r->n_unseen_labels && k < CLASSEVAL_UNSEEN_KEPT; k++)
            fprintf(out, "%s\"%s\": %ld", k ? ", " : "", r->unseen_label[k], r->unseen_count[k]);
        if (r->n_unseen_labels > CLASSEVAL_UNSEEN_KEPT)
            fprintf(out, ", and %d more labels", r->n_unseen_labels - CLASSEVAL_UNSEEN_KEPT);
        fprintf(out, ")\n");
    }
    if (r->no_text) fprintf(out, "not scored: %ld line%s whose text has no tokens\n", r->no_text, r->no_text == 1 ? "" : "s");
}
