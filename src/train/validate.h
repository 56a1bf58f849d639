/* validate.h — the held-out measures of a training run, on its validation pairs: the
 * plain loss per target token, and corpus BLEU of greedy translations, computed as
 * `nmt eval` computes it.
 */
#ifndef VALIDATE_H
#define VALIDATE_H

#include "data/batch.h"     /* defines: Batch */
#include "train/dataset.h"   /* defines: Dataset */
#include "files/modelfile.h" /* defines: ModelFile */
#include "models/model.h"     /* defines: Model, RunState */
#include "decode/workers.h"   /* defines: Workers */
#include "train/parallel.h"   /* defines: TrainWorkers */

/* Teacher-forced cross-entropy per target token over ds's validation pairs, in batches
 * of batch_size sorted by length, without label smoothing (comparable across runs),
 * each batch split among the training workers t as a step splits it (parallel.h's
 * train_workers_score; with one worker, the batch whole). rs (RUN_TRAIN) and batch are
 * worker 0's and grow as needed; rs.label_smoothing is set to 0. A classifier's: the
 * cross-entropy per example (no class weights), and with accuracy the share of examples
 * whose most likely class is their label. */
double validate_loss(TrainWorkers *t, Model *m, RunState *rs, Batch *batch, const Dataset *ds, int batch_size,
                     double *accuracy);

/* Corpus BLEU of the greedy translations of ds's BLEU pairs (Dataset.bleu_src against
 * bleu_ref) by the workers' model 0, their batches spread over the workers. */
double validate_bleu(Workers *w, const Dataset *ds);
#endif
