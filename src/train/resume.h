/* resume.h — going on with a run from its checkpoint: which checkpoint, and whether it
 * fits this config, these data and this machine (the lock that keeps two nmt train out
 * of one directory is src/files/rundir.h's).
 *
 * A resumed run must be the run that stopped: the same config apart from the keys that
 * do not change the updates (resume.c's free_keys: where and how often things are
 * written, the thread count, and the limits train.epochs, train.max_steps and
 * train.max_minutes, which may be raised to go on with a run, or lowered to end it
 * sooner, though not behind where it stands), the same examples (by fingerprint) and
 * vocabularies, and with train.deterministic the same OpenBLAS kernel, thread count and
 * number of ranks. Anything else is refused with a message naming both values.
 */
#ifndef RESUME_H
#define RESUME_H

#include <stddef.h>

#include "files/config.h"    /* defines: Config */
#include "base/console.h"   /* defines: Console */
#include "train/dataset.h"   /* defines: Dataset */
#include "files/modelfile.h" /* defines: ModelFile */
#include "base/util.h"      /* defines: Error */

/* Which checkpoint the run goes on from. With `resume`: the newest checkpoint-STEP.bin of
 * dir that reads (or checkpoint.bin when none is left) goes into ck and its path into
 * path (len bytes): returns 1; no checkpoint yet: returns 0 (starting from the
 * beginning). Without `resume`: a directory holding an unfinished run is refused (so
 * that forgetting --resume cannot throw hours away); one holding a finished run's
 * checkpoints returns 2, for the caller to delete them with resume_clear_finished once
 * nothing can refuse the new run any more (a refused run leaves them). -1 with err on a
 * refusal or an unreadable file. */
int resume_find(const char *dir, int resume, ModelFile *ck, char *path, size_t len, Console *con, Error *err);
/* Deletes the checkpoints of the run that finished in dir (resume_find returned 2),
 * saying so. 0, or -1 with err. */
int resume_clear_finished(const char *dir, Console *con, Error *err);

/* The config the checkpoint ck (at path) was trained with must be cfg, apart from
 * resume's free keys; config_name names cfg in messages (--set, where --set gave the
 * key). 0; -1 with err; -2 with err when the key that differs was --set's (a usage
 * error). */
int resume_check_config(const ModelFile *ck, const char *path, const Config *cfg, const char *config_name,
                        Error *err);

/* Whether the run of checkpoint ck has updates left under cfg: it is unfinished, or it
 * finished at a limit (train.epochs, train.max_steps, train.max_minutes: the training
 * clock the checkpoint recorded) that cfg raises. A run that stopped early
 * (train.early_stop) stays finished. */
int resume_more_to_do(const ModelFile *ck, const Config *cfg);

/* ck's config text with cfg's train.epochs, train.max_steps and train.max_minutes
 * (malloc'd), or NULL if the run started with these: what model.bin and
 * OUTPUT_DIR/config.json record when a resume moves the limits. */
char *resume_config_text(const ModelFile *ck, const Config *cfg);

/* The data must be what ck was trained on: the same vocabularies (mf's, just built) and
 * the same examples in the same split (the fingerprints of ds). */
int resume_check_data(const ModelFile *ck, const char *path, const ModelFile *mf, const Dataset *ds,
                      const Config *cfg, Error *err);

/* train.deterministic: the resumed run computes on the thread count and kernel the run
 * started with, since OpenBLAS's sums depend on both, and on as many ranks and workers,
 * since the shards (and so the order of the gradient sums, and the dropout streams)
 * depend on that. A thread count and a worker count can be set here (*threads and
 * *workers are updated, and con told); a rank count is mpirun's, so another one is
 * refused like another kernel. */
int resume_check_machine(const TrainState *s, const char *path, const Config *cfg, int ranks, int *threads,
                         int *workers, Console *con, Error *err);

/* Moves the checkpoint's model, optimizer, config text, step and epoch into mf (ck keeps
 * its vocabularies, segmenter and training state). The config text is the one the run
 * started with, so that model.bin is the uninterrupted run's. */
void resume_adopt(ModelFile *mf, ModelFile *ck);
#endif
