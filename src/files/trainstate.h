/* trainstate.h — where a training run stands: the TRST section of a checkpoint.
 *
 * The weights and Adam's moments (WGTS, ADAM in modelfile.h) are not enough to go on
 * with a run as if it had never stopped. What happens next also depends on the batches
 * still to come in this epoch, on the two random streams (the one that draws each
 * epoch's example order and the one that draws dropout masks and scheduled-sampling
 * choices), on the learning-rate schedule's plateau count, and on the best validation
 * so far (best.bin, early stopping). TrainState holds all of that; train.c fills one
 * for every checkpoint and restores it on `nmt train --resume`. It also records what
 * the run was computed on (fingerprints of the training and validation examples, the
 * OpenBLAS thread count and kernel), so that a resume on other data or, with
 * train.deterministic, on another BLAS setup is refused rather than silently different.
 *
 * Payload (little-endian):
 *   u32 TRAINSTATE_VERSION, u32 field count (34; the first version-1 files have 32,
 *   without ranks, and read as one rank; later ones 33, without workers, and read as
 *   one worker)
 *   the fields below in trainstate.c's table order, 8 bytes each: i64 for integers,
 *   u64 for random states and fingerprints, IEEE f64 for reals (+-inf where allowed)
 *   32 bytes: the OpenBLAS kernel name, NUL-padded
 *   i32 x n_train: order
 *
 * Reading checks the version, the field count, the length against n_train, every field
 * against its range, the random streams (PCG's increment is odd) and that order is a
 * permutation of 0 .. n_train-1, with a message naming the file and the field.
 */
#ifndef TRAINSTATE_H
#define TRAINSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "data/batch.h" /* defines: Example */
#include "base/util.h"  /* defines: Error, Rng */

#define TRAINSTATE_VERSION 1

typedef struct {
    /* Where the run is. */
    long step;             /* updates made */
    int epoch;             /* the epoch to go on with, from 1 (epochs + 1 once all are done) */
    int next;              /* index in order of the next batch's first example */
    int order_ready;       /* order is this epoch's; else it is drawn from shuffle_rng first */
    int done;              /* training is over: only model.bin remains to be written */
    int n_train;           /* training examples (the length of order) */
    int *order;            /* (n_train) the epoch's example order */
    /* The random streams. */
    Rng shuffle_rng;       /* draws each epoch's order */
    Rng model_rng;         /* RunState.rng: dropout masks, scheduled-sampling draws */
    /* The learning-rate schedule's changing part (LrSchedule in schedule.h). */
    double learning_rate;  /* the rate of the last update (Adam's lr) */
    double lr_factor;      /* decay^k */
    double lr_best_loss;   /* +inf before the first validation */
    int lr_bad, lr_decays;
    /* The best validation by train.best_metric, for best.bin and early stopping. */
    double best;           /* +inf (loss) or -inf (BLEU) before the first validation */
    long best_step, last_validated;
    int since_best;
    /* Running counts, so that train.log goes on as it would have. */
    int nonfinite_in_a_row;
    long epoch_tokens, epoch_slots;     /* this epoch so far: target tokens, T x B slots */
    double window_loss, window_seconds; /* since train.log's last step line */
    long window_tokens, window_steps;
    double elapsed_seconds;             /* training time so far */
    long log_bytes;                     /* train.log's length when this state was taken */
    /* What the run is computed on. */
    int n_valid;
    uint64_t train_fingerprint, valid_fingerprint; /* examples_fingerprint of each split */
    int threads;           /* OpenBLAS threads (per rank) */
    int ranks;             /* processes of a data-parallel job (dist.h); 1 in files from
                              before the field existed */
    int workers;           /* data-parallel workers in each (train/parallel.h); 1 in files
                              from before the field existed */
    char blas_kernel[32];  /* OpenBLAS kernel name, NUL-terminated */
} TrainState;

/* The payload for s (malloc'd); its length in *len. */
unsigned char *trainstate_encode(const TrainState *s, size_t *len);
/* Reads and checks a payload of len bytes; path names the file in messages. On success
 * s->order is allocated (trainstate_free); on failure s holds nothing to free. */
int trainstate_decode(const unsigned char *payload, size_t len, const char *path, TrainState *s, Error *err);
void trainstate_free(TrainState *s);

/* A 64-bit FNV-1a hash of n examples (each one's lengths and token ids, in order): equal
 * data, tokenised and looked up alike, gives an equal fingerprint. */
uint64_t examples_fingerprint(const Example *ex, int n);
/* FNV-1a (64 bit) over n floats' bytes: the weights' fingerprint, which the ranks of a
 * data-parallel job compare to prove they hold the same model (train.c). */
uint64_t floats_fingerprint(const float *x, long n);
#endif
