/* train.h — the training run: `nmt train CONFIG.json`.
 *
 * Reads and tokenises the data, splits off validation pairs, builds vocabularies,
 * initialises the model and trains it with Adam under teacher forcing, logging to
 * stderr and to OUTPUT_DIR/train.log (one JSON object per line), writing
 * OUTPUT_DIR/checkpoint.bin every train.checkpoint_every steps and at each epoch end,
 * and OUTPUT_DIR/model.bin at the end. OUTPUT_DIR/config.json records every setting.
 */
#ifndef TRAIN_H
#define TRAIN_H

#include "config.h" /* defines: Config */
#include "util.h"   /* defines: Error */

typedef struct {
    int quiet;   /* no progress lines on stderr */
} TrainOptions;

int train_run(const Config *cfg, const TrainOptions *opt, Error *err);
#endif
