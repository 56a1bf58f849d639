/* train.h — the training run: `nmt train CONFIG.json [--resume]`.
 *
 * Reads and tokenises the data, splits off validation pairs, builds vocabularies,
 * initialises the model and trains it with Adam under teacher forcing (the loss
 * label-smoothed and the learning rate scheduled as the config says), logging to
 * stderr and to OUTPUT_DIR/train.log (one JSON object per line), writing a checkpoint
 * (checkpoint.h: OUTPUT_DIR/checkpoint-STEP.bin, checkpoint.bin the newest) every
 * train.checkpoint_every steps and at each epoch end, and OUTPUT_DIR/model.bin at the
 * end. OUTPUT_DIR/config.json records every setting.
 *
 * Starting from a model (train.init_from, nmt train --init-from MODEL.bin) is a new run
 * whose weights are the model's (model.bin, best.bin or any checkpoint), with the model's
 * vocabularies, segmenter, text options and architecture: fine-tuning on new data or
 * with a new learning rate. The optimizer, the step count, the schedules and the random
 * streams start afresh; the new data's words outside the model's vocabularies are
 * <unk> (the start says how many). Such a run is resumed like any other.
 *
 * Resuming (opt->resume) goes on from the newest checkpoint that reads (checkpoint.bin
 * when no checkpoint-STEP.bin is left), exactly as the run would have gone on without
 * the interruption: the checkpoint's TrainState (trainstate.h) restores the position
 * in the epoch, its example order, the random streams, the schedule and the
 * best-validation bookkeeping, and with train.deterministic the OpenBLAS thread count
 * and the worker count;
 * the work done after the checkpoint is done again, and train.log is cut back to where
 * it stood at the checkpoint, followed by a "resume" event. The config must be the one the run started with, apart from
 * the keys that do not change the updates (train.log_every, checkpoint_every,
 * keep_checkpoints, threads, workers, deterministic, max_nonfinite, output.dir and the data
 * paths), and the data must tokenise to the same examples (compared by fingerprint);
 * anything else is an error naming both values. train.epochs, train.max_steps and
 * train.max_minutes may change too: a run that finished at a limit a resume raises goes
 * on (one that stopped early does not; a run stopped by max_steps or max_minutes inside
 * an epoch goes on with the rest of that epoch), and config.json and model.bin then
 * record the new limits; a linear
 * teacher-forcing decay is stretched over the new number of updates. A run that has
 * finished and has nothing left to do only gets its model.bin written if that is
 * missing or stale. With no checkpoint in the directory,
 * training starts from the beginning. Without opt->resume, a directory holding an
 * unfinished run is refused (so that forgetting --resume cannot throw hours away); the
 * checkpoints of a finished one are deleted. Either way, a directory another nmt train
 * is working in (it holds an fcntl lock on OUTPUT_DIR/train.lock) is refused.
 *
 * train.max_minutes is a budget of training time: the clock runs from the first update
 * (after the data are read and the vocabularies built) and holds the validations and
 * checkpoints made meanwhile, so that the run ends about when the person who set it
 * expects; a resumed run's clock goes on from the checkpoint's. The update during which
 * the clock passes the budget is the last: the run ends as after its last epoch (a
 * validation, a checkpoint, model.bin, training.svg, and which file to translate with).
 * Under MPI rank 0's clock decides, and the step's sum tells the other ranks.
 *
 * train.batch_tokens makes batches of about equal target tokens instead of equal pairs
 * (dataset.h: dataset_batch_at), and train.accumulate sums the gradients of that many
 * batches into one update, its loss the mean over all their target tokens.
 *
 * SIGINT and SIGTERM stop training between two steps, with a checkpoint and training.svg
 * (no validation, no model.bin: the run is not over): train_run then returns the
 * signal's number and err says where the checkpoint is and which file to translate with
 * meanwhile (best.bin, or before any validation the checkpoint). Non-finite
 * losses or gradients skip the update (a "nonfinite" event in train.log);
 * train.max_nonfinite of them in a row stop training with an error, the checkpoints
 * written so far untouched.
 *
 * Data parallelism (dist.h; ./nmt-mpi under mpirun): every rank runs train_run. Each
 * computes the gradient of its contiguous shard of every batch (train.batch_size is the
 * whole batch; the loss is the mean over the whole batch's tokens), one sum over the
 * ranks carries the gradients, the loss and stop requests, and all ranks make the same
 * update. Rank 0 alone writes the run directory (train.log, checkpoints, best.bin,
 * model.bin, training.svg, valid.tsv, config.json, the lock), prints progress and
 * validates; it broadcasts what a validation decides (best so far, early stopping, the
 * plateau schedule) and which checkpoint a resume starts from. A signal to any rank
 * stops all of them after the same step. With one rank all of this is the single
 * process, bit for bit. docs/distributed.md has the rest.
 *
 * Workers (train.workers, parallel.h): each rank's share of a batch is split again
 * among its workers, threads of the process that compute their parts at once and whose
 * gradients are summed in a fixed order before the sum over the ranks; the batch and
 * the update stay those of one worker, up to float rounding.
 *
 * Where the parts are: dataset.h prepares the data, train.c's train_step is one update
 * (batch in, loss and gradients out, then clipping and Adam) and train_loop the loop
 * around it, parallel.h the workers that share a step out, validate.h the held-out
 * measures, trainlog.h train.log's lines, resume.h everything about going on from a
 * checkpoint, ranks.h what the ranks of a job share, signals.h the stop signals,
 * console.h what is said on stderr.
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

#include "files/config.h" /* defines: Config */
#include "files/modelfile.h" /* defines: ModelFile */
#include "base/util.h"   /* defines: Error */

typedef struct {
    int quiet;                 /* no progress lines on stderr */
    int verbose;               /* the periodic step lines (with learning rate, gradient norm)
                                  even on a terminal, where the progress line replaces them */
    const char *export_path;   /* set: write the batches instead of training (below) */
    int resume;                /* go on from OUTPUT_DIR's newest checkpoint */
    const char *config_path;   /* names the config in messages (may be NULL) */
    ModelFile *init_model;     /* train.init_from's file as train_adopt_init_model read it
                                  (init_model.h): train_run takes its contents (NULL: read
                                  it there) */
} TrainOptions;

/* With opt->export_path, train_run prepares the data exactly as for training and then,
 * instead of training, writes the first train.max_steps batches (all epochs' batches
 * when max_steps is 0) and up to 2000 held-out source sentences as token ids, for
 * scripts/bench/bench_torch.py to train and decode on the very same data. The file uses the
 * tensor format of scripts/reference/fixture.py: records "dims" [src_vocab, tgt_vocab, batches,
 * test sentences], "batch.K.src" (S, B), "batch.K.tgt_in" (T, B), "batch.K.tgt_out"
 * (T, B), "test.src" (N, S_max) padded with 0, "test.len" (N). */

/* Returns 0 when training is over (or there was nothing left to do), -1 on an error,
 * or SIGINT / SIGTERM's number when one of them stopped it (see above). */
int train_run(const Config *cfg, const TrainOptions *opt, Error *err);
#endif
