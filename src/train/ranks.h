/* ranks.h — data-parallel training: what the ranks of a job (dist.h) share so that
 * they train as one model.
 *
 * Every rank runs the whole of train.c. Each computes the gradient of its contiguous
 * shard of every batch (ranks_shard); one sum over the ranks (ranks_sum_step) gives
 * every rank the whole batch's gradient and loss, and every rank's stop request, so all
 * make the same update and stop after the same step. Rank 0 alone validates and writes
 * files: it tells the others what a validation decided (ranks_share_validation) and
 * which checkpoint a run resumes from (ranks_share_checkpoint), and at each checkpoint
 * all ranks prove they hold the same weights (ranks_check_weights).
 *
 * This file and dist.c are the only places that know there are several ranks; with one
 * rank (./nmt, or ./nmt-mpi without mpirun) every function here is trivial and the run
 * is the single process's, bit for bit. A collective that fails (a rank died, the
 * network broke) comes back as an error saying so, and whether a checkpoint is intact.
 */
#ifndef RANKS_H
#define RANKS_H

#include <stddef.h>

#include "models/model.h"      /* defines: Model */
#include "layers/schedule.h"   /* defines: LrSchedule */
#include "files/trainstate.h" /* defines: TrainState */
#include "base/util.h"       /* defines: Error, Rng */

typedef struct {
    int rank, size;            /* this process: rank of size */
    double allreduce_seconds;  /* spent in the gradient sum since ranks_take_timing */
    long allreduce_steps;
} Ranks;

void ranks_init(Ranks *r);

/* The shards of a batch: each rank's contiguous share of it, split again among the
 * rank's `workers` data-parallel workers (train/parallel.h): shard g = rank * workers + w
 * of size * workers is [n g / G, n (g+1) / G), G = size * workers. Worker w of this
 * rank gets [*lo, *hi); with one worker, the rank's whole share, as before workers. */
void ranks_shard(const Ranks *r, int workers, int w, int n, int *lo, int *hi);

/* Dropout masks and scheduled-sampling draws: shard 0 (rank 0's first worker) draws
 * from the run's stream (RunState.rng, which checkpoints keep), so that one rank with one
 * worker is exactly the single process. Shard g > 0 draws step s's from a stream seeded
 * by (train.seed, g, s): its own, and the same again after a resume without being kept
 * anywhere. So with dropout or sampling, N shards follow the single process's
 * trajectory in distribution, not bit for bit, and a given rank and worker count is
 * bit-identical run after run. Reseeds rng for step `step` for g > 0; leaves it alone
 * for g = 0. (With one worker per rank, g is the rank: the streams ranks had before
 * workers.) */
void ranks_shard_stream(Rng *rng, long seed, int shard, long step);

/* Sums the ranks' gradients (m->grad_mem), loss shares and stop requests in one
 * collective over one buffer (the gradients and MODEL_GRAD_SPARE floats after them).
 * *loss: this rank's share of the batch's mean in, the batch's mean out; signal: the
 * stop signal this rank received (0: none); *agreed: the signal every rank stops for
 * (a rank's own, or SIGTERM if any rank had it, else SIGINT if any had it, else 0);
 * *time_up: in, whether this rank's clock has passed train.max_minutes (rank 0's
 * decides: the others give 0), out, whether any rank's has, so that all stop after the
 * same update. One rank: *loss, signal and *time_up pass through. step names the step
 * in messages, checkpoint the last one written ("" if none). */
int ranks_sum_step(Ranks *r, Model *m, double *loss, int signal, int *agreed, int *time_up, long step,
                   const char *checkpoint, Error *err);

/* The floats one step sums over the ranks: the gradients and the step's own figures. */
long ranks_summed_floats(const Model *m);

/* Rank 0's validation bookkeeping (best, best_step, last_validated, since_best of st),
 * its plateau schedule's state and its early-stop decision, copied to every rank. */
int ranks_share_validation(const Ranks *r, TrainState *st, LrSchedule *schedule, int *stop, long step,
                           const char *checkpoint, Error *err);

/* Which checkpoint the run resumes from: rank 0's *resuming and path (len bytes), copied
 * to every rank. */
int ranks_share_checkpoint(const Ranks *r, int *resuming, char *path, size_t len, Error *err);

/* The ranks' weights must stay equal, since rank 0's checkpoint stands for all of them;
 * that rests on every rank getting the same bits from each sum (dist.h). Checked by the
 * weights' fingerprint (floats_fingerprint, cheap next to writing them), so that a broken
 * assumption ends the job instead of going unnoticed. Returns 0, or -1 with err. */
int ranks_check_weights(const Ranks *r, const Model *m, long step, const char *checkpoint, Error *err);

/* The mean seconds per step spent in the sum since the last call (0 if none), and a new
 * window from here. */
double ranks_take_timing(Ranks *r);
#endif
