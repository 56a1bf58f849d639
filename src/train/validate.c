#include "train/validate.h"

#include <stdlib.h>

#include "eval/bleu.h"      /* defines: BleuStats, bleu_stats_add, bleu_compute */
#include "decode/translate.h" /* defines: translate_lines, TranslateOptions */

/* Validation sentences translated together for BLEU, as `nmt eval` does. */
#define VALID_DECODE_BATCH 64

/* The first index of the largest of x[0..n-1]. */
static int argmax(const float *x, int n)
{
    int best = 0;
    for (int k = 1; k < n; k++)
        if (x[k] > x[best]) best = k;
    return best;
}

double validate_loss(Model *m, RunState *rs, Batch *batch, const Dataset *ds, int batch_size, double *accuracy)
{
    long right = 0;
    int C = model_classes(&m->dims);
    int *order = xmalloc(sizeof(int) * (ds->n_valid ? ds->n_valid : 1));
    for (int i = 0; i < ds->n_valid; i++)
        order[i] = i;
    /* Sorted by length, so that batches carry little padding; the sum does not care. */
    sort_by_length(order, ds->valid, ds->n_valid);
    double total = 0;
    long tokens = 0;
    for (int start = 0; start < ds->n_valid; start += batch_size) {
        int n = ds->n_valid - start < batch_size ? ds->n_valid - start : batch_size;
        model_fill_batch(m, batch, ds->valid, order + start, n);
        runstate_ensure(rs, &m->dims, RUN_TRAIN, n, batch->S, batch->T);
        rs->label_smoothing = 0;
        total += model_forward(m, rs, batch, 0);
        tokens += batch->n_tokens;
        if (model_classifies(&m->dims))
            for (int b = 0; b < n; b++)
                right += argmax(rs->logits + (long)b * C, C) == batch->label[b];
    }
    if (accuracy) *accuracy = ds->n_valid ? (double)right / ds->n_valid : 0;
    free(order);
    return tokens ? total / tokens : 0;
}

double validate_bleu(ModelFile *mf, RunState *rs, const Dataset *ds)
{
    TranslateOptions topt = {0};  /* greedy, at most 2 x source length + 10 words */
    BleuStats stats = {0};
    char *hyp[VALID_DECODE_BATCH];
    for (int start = 0; start < ds->n_bleu; start += VALID_DECODE_BATCH) {
        int n = ds->n_bleu - start < VALID_DECODE_BATCH ? ds->n_bleu - start : VALID_DECODE_BATCH;
        translate_lines(mf, rs, ds->bleu_src + start, n, &topt, hyp, NULL);
        for (int i = 0; i < n; i++) {
            bleu_stats_add(&stats, hyp[i], ds->bleu_ref[start + i], &ds->bleu_metric);
            free(hyp[i]);
        }
    }
    return bleu_compute(&stats).score;
}
