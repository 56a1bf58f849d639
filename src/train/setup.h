/* setup.h — what a training run works out from its config, data and model size before
 * it trains, with no state of the run's own: the checks that may refuse it before
 * anything is written (its input files, train.init_from's place, the memory training
 * needs), the settings taken from the config (Adam's constants, scheduled sampling's
 * rate, the class weights) and the figures its messages report. train.c calls them. */
#ifndef TRAIN_SETUP_H
#define TRAIN_SETUP_H

#include <stddef.h>

#include "base/console.h"   /* defines: Console */
#include "base/util.h"      /* defines: Error */
#include "files/config.h"   /* defines: Config */
#include "layers/adam.h"    /* defines: Adam */
#include "models/model.h"   /* defines: ModelDims */
#include "train/dataset.h"  /* defines: Dataset */

/* train.class_weights "balanced", as scikit-learn's: class c weighs
 * n / (classes * n_c) over the n training examples, n_c of them in class c. */
float *setup_balanced_weights(const Dataset *ds, int classes);

/* train.init_from must not be a file this run may delete or write over: one in
 * output.dir (a finished run's checkpoints are deleted when a new one starts there, and
 * model.bin and best.bin are rewritten). The file, not the spelling of its path: by
 * device and inode, so a symbolic or hard link to a file there is refused too. (The
 * model has been read already, train_adopt_init_model: this keeps the run from deleting
 * or replacing what the user means to keep.) */
int setup_check_init_from(const Config *cfg, Error *err);

/* The share of the training examples' units (source, target) that are <unk>: under a
 * vocabulary from train.init_from, how much of the new data the model cannot read. */
void setup_unk_shares(const Dataset *ds, double share[2]);

/* Training keeps four floats of every parameter (weights, gradients and Adam's two
 * moments) before any activation. A model whose four copies are more than the memory
 * this machine allows cannot train here: refused before anything is allocated, naming
 * the limit and by how much it is passed (it used to end in "out of memory allocating
 * N bytes", N the weights alone, or in the kernel's OOM killer). */
int setup_check_memory(const ModelDims *d, Error *err);

/* Tries the data files before anything is written: a missing one is refused naming
 * its key, and so are a sentence-pair file that cannot be read (a directory) and one
 * with a line over data.max_line_bytes (lines_check_file reads it through once; a
 * small part of the time parsing it takes). */
int setup_check_inputs(const Config *cfg, Error *err);

/* " (train.max_minutes M)" in out when the config sets that limit, for the messages
 * that name the limits a resumed run goes by; "" otherwise. */
const char *setup_minutes_limit(const Config *cfg, char *out, size_t len);

/* The probability of feeding the gold previous word at update `step` (0-based) of
 * `planned`: constant, or falling linearly to teacher_forcing_final by the last update
 * (scheduled sampling, Bengio et al. 2015). */
double setup_teacher_forcing(const Config *cfg, long step, long planned);

/* Adam's constants (train.adam_beta1, adam_beta2, adam_eps). A checkpoint's optimizer
 * section holds the moments and the step, not these: a resumed run sets them again. */
void setup_adam(Adam *opt, const Config *cfg);

/* What the run's validation set of n pairs (none, or fewer than 100, too few to trust)
 * means for it: a message on con for none, a warning for too few (a classifier's:
 * lines, accuracy). */
void setup_say_validation_set(Console *con, const Config *cfg, int n, int classifies);

#endif
