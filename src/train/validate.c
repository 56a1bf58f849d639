#include "train/validate.h"

#include <stdlib.h>

#include "eval/bleu.h"      /* defines: BleuStats, bleu_stats_add, bleu_compute */
#include "decode/translate.h" /* defines: workers_translate_lines, TranslateOptions */

/* Validation sentences translated together for BLEU, as `nmt eval` does. */
#define VALID_DECODE_BATCH 64

double validate_loss(TrainWorkers *t, Model *m, RunState *rs, Batch *batch, const Dataset *ds, int batch_size,
                     double *accuracy)
{
    long right = 0;
    int *order = xmalloc(sizeof(int) * (ds->n_valid ? ds->n_valid : 1));
    for (int i = 0; i < ds->n_valid; i++)
        order[i] = i;
    /* Sorted by length, so that batches carry little padding; the sum does not care. */
    sort_by_length(order, ds->valid, ds->n_valid);
    double total = 0;
    long tokens = 0;
    for (int start = 0; start < ds->n_valid; start += batch_size) {
        int n = ds->n_valid - start < batch_size ? ds->n_valid - start : batch_size;
        long batch_tokens, batch_right;
        total += train_workers_score(t, m, rs, batch, ds->valid, order + start, n, &batch_tokens, &batch_right);
        tokens += batch_tokens;
        right += batch_right;
    }
    if (accuracy) *accuracy = ds->n_valid ? (double)right / ds->n_valid : 0;
    free(order);
    return tokens ? total / tokens : 0;
}

double validate_bleu(Workers *w, const Dataset *ds)
{
    TranslateOptions topt = {0};  /* greedy, at most 2 x source length + 10 words */
    BleuStats stats = {0};
    char **hyp = xmalloc(sizeof(char *) * (ds->n_bleu ? ds->n_bleu : 1));
    workers_translate_lines(w, ds->bleu_src, ds->n_bleu, VALID_DECODE_BATCH, &topt, hyp, NULL);
    for (int i = 0; i < ds->n_bleu; i++) {
        bleu_stats_add(&stats, hyp[i], ds->bleu_ref[i], &ds->bleu_metric);
        free(hyp[i]);
    }
    free(hyp);
    return bleu_compute(&stats).score;
}
