/* train.h — the training run: `nmt train CONFIG.json`.
 *
 * Reads and tokenises the data, splits off validation pairs, builds vocabularies,
 * initialises the model and trains it with Adam under teacher forcing (the loss
 * label-smoothed and the learning rate scheduled as the config says), logging to
 * stderr and to OUTPUT_DIR/train.log (one JSON object per line), writing
 * OUTPUT_DIR/checkpoint.bin every train.checkpoint_every steps and at each epoch end,
 * and OUTPUT_DIR/model.bin at the end. OUTPUT_DIR/config.json records every setting.
 *
 * Validation, every train.validate_every steps and at each epoch end: the plain
 * (unsmoothed) loss per target token on the validation pairs, and corpus BLEU of the
 * greedy translations of up to train.valid_bleu_max of them, computed as `nmt eval`
 * computes it. Each validation that beats every earlier one by train.best_metric
 * writes OUTPUT_DIR/best.bin; train.early_stop validations in a row without that end
 * training (model.bin is then the last state, best.bin the best).
 */
#ifndef TRAIN_H
#define TRAIN_H

#include "config.h" /* defines: Config */
#include "util.h"   /* defines: Error */

typedef struct {
    int quiet;                 /* no progress lines on stderr */
    const char *export_path;   /* set: write the batches instead of training (below) */
} TrainOptions;

/* With opt->export_path, train_run prepares the data exactly as for training and then,
 * instead of training, writes the first train.max_steps batches (all epochs' batches
 * when max_steps is 0) and up to 2000 held-out source sentences as token ids, for
 * scripts/bench_torch.py to train and decode on the very same data. The file uses the
 * tensor format of scripts/fixture.py: records "dims" [src_vocab, tgt_vocab, batches,
 * test sentences], "batch.K.src" (S, B), "batch.K.tgt_in" (T, B), "batch.K.tgt_out"
 * (T, B), "test.src" (N, S_max) padded with 0, "test.len" (N). */

int train_run(const Config *cfg, const TrainOptions *opt, Error *err);
#endif
