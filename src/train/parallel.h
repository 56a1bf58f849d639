/* parallel.h — data-parallel workers inside one training process (train.workers).
 *
 * A step's batch (this rank's share of it, ranks.h) is split again among W workers.
 * Worker w computes the forward and backward passes of its contiguous part of the
 * examples (ranks_shard) on its own thread, with single-threaded matrix products
 * (OpenBLAS set to one thread), into a gradient buffer of its own; then
 *
 *   sum     the workers' gradients into the model's, in parallel over slices of the
 *           parameter vector, each element summed worker 0, 1, ..., W-1 in that order
 *           (and each worker's buffer zeroed for the next step); of an embedding
 *           table (not tied to the output layer) only the rows of the words of the
 *           step's batches: the others hold zeros (unless decoder inputs were sampled,
 *           which may be any word: then every row);
 *   output  the output layer's weight gradient (unless tied to an embedding), which
 *           the workers' backward passes leave to the step (RunState.defer_output):
 *           in parallel over slices of TRAIN_OUTPUT_ROWS of its rows, each slice
 *           adding worker 0's product dy^T x, then worker 1's, ... (linear_grads on
 *           the slice); nothing of it is in the workers' buffers, so the sum skips it.
 *           This is the largest weight (the target vocabulary's rows), which every
 *           worker would otherwise write whole and the sum read back;
 *   norm    the gradient norm, its blocks' sums in parallel, added up in block order
 *           (adam.h's grad_norm, to the bit);
 *   update  Adam, in parallel over slices (element-wise: adam_update, to the bit).
 *
 * Nothing depends on thread timing: a worker's part, its random stream and its buffer
 * are fixed by its index, and every sum has a fixed order. So a run is bit-identical
 * for a given worker count (and resumes exactly), and differs from the one-worker run
 * only by how the float sums of the gradient are grouped. One worker is the run as it
 * was before workers: the caller's thread, the run's RunState, the model's gradients,
 * no thread at all.
 *
 * The batch is the same whatever W: the loss is the mean over the whole batch's target
 * tokens (RunState.loss_tokens), so the gradients sum to the whole batch's; more
 * workers never change the effective batch or the learning-rate recipe (unlike
 * running W processes on their own batches).
 *
 * Random numbers (dropout masks, scheduled sampling): worker 0 of rank 0 draws from the
 * run's stream, which checkpoints keep; every other worker draws step s's from a stream
 * seeded by (train.seed, its shard, s) (ranks_shard_stream), so nothing else needs
 * keeping for an exact resume.
 *
 * With MPI, a job has ranks x workers shards: shard g = rank * W + w of a batch (ranks.h);
 * the workers' sum comes first, then the sum over the ranks, then the norm and update.
 *
 * Packed weights: a worker's products over a small shard (4 pairs of a batch of 64 on
 * 16 workers) cost OpenBLAS more in copying ("packing") each weight than in arithmetic,
 * and every worker would pack every weight again. Where the family reads packed weights
 * (ModelFamily.repack: the Transformer) and the packed products give OpenBLAS's very
 * bits (linalg.h: its SkylakeX kernel, one thread), a step with some shard of at most
 * PACKED_MAX_ROWS positions first packs every weight once, the workers sharing the
 * work, and the workers' forward and backward products read them (RunState.packs).
 * The bits being the same, nothing else changes. They take twice the memory of the
 * weights they pack (rows and columns), made when the workers are.
 *
 * Worker 0 computes in the caller's RunState and Batch and into the model's own
 * gradients (the run's, as before); workers 1 .. W-1 each have a model view (model.h's
 * model_view: the weights shared, gradients their own), a RunState and a Batch. A step
 * in steady state allocates nothing.
 */
#ifndef PARALLEL_H
#define PARALLEL_H

#include "base/threadpool.h" /* defines: ThreadPool */
#include "data/batch.h"      /* defines: Batch, Example */
#include "layers/adam.h"     /* defines: Adam */
#include "models/model.h"    /* defines: Model, RunState */
#include "train/ranks.h"     /* defines: Ranks */

typedef struct TrainWorkers TrainWorkers;

/* The rows of the output layer's weight gradient in one slice of the step's products. */
#define TRAIN_OUTPUT_ROWS 128

/* W workers (1 .. 64) for model m (which must outlive them): W - 1 threads, and for
 * workers 1 .. W-1 their model views and run states (RUN_TRAIN) with room for shards of
 * up to shard_cap examples with sources up to S and targets up to T positions. Returns
 * NULL with err when the memory limit leaves no room for W callers' OpenBLAS buffers
 * (blas.h). Sets nothing of OpenBLAS's: the caller chooses its threads. */
TrainWorkers *train_workers_new(int workers, const Model *m, int shard_cap, int S, int T, Error *err);
void train_workers_free(TrainWorkers *t);
int train_workers_count(const TrainWorkers *t);

/* One step's forward and backward passes over the n examples ex[idx[0..n-1]] (the whole
 * batch: every rank passes the same), this rank's workers each taking their shard, their
 * gradients summed into m->grads (which hold zeros at a step's start) as described
 * above. rs (with its training options set: dropout, label smoothing, sample_prob,
 * loss_tokens, class weights) and batch are worker 0's, the run's own; the other
 * workers take rs's options. seed and step choose the workers' random streams (an
 * update of several batches, train.accumulate, passes each its own step number).
 * Returns this rank's summed loss (the workers' sums added in worker order). */
double train_workers_gradients(TrainWorkers *t, Model *m, RunState *rs, Batch *batch, const Example *ex,
                               const int *idx, int n, const Ranks *ranks, long seed, long step);

/* grad_norm(grad, n), its blocks computed by the workers: the same bits. */
double train_workers_grad_norm(TrainWorkers *t, const float *grad, long n);

/* adam_update(opt, params, grad, grad_scale), its slices by the workers: the same bits. */
void train_workers_adam(TrainWorkers *t, Adam *opt, float *params, float *grad, float grad_scale);

/* Held-out scoring: the n examples ex[idx[0..n-1]] (one batch) split among the workers
 * as a step splits them, forward passes only, without label smoothing (RUN_TRAIN run
 * states, as validate.h scores). Returns the summed loss; *tokens gets the examples'
 * target tokens; *right (classifiers) how many examples' most likely class is their
 * label. rs and batch are worker 0's (rs's label_smoothing is set to 0); every run
 * state grows as needed. */
double train_workers_score(TrainWorkers *t, Model *m, RunState *rs, Batch *batch, const Example *ex,
                           const int *idx, int n, long *tokens, long *right);
#endif
