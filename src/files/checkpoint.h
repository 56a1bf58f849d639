/* checkpoint.h — a run directory's checkpoints: written so that a crash or a full disk
 * at any moment leaves a whole one, kept N deep, found again on resume.
 *
 * Files, in OUTPUT_DIR:
 *   checkpoint-STEP.bin   one per checkpoint (STEP = updates made, in decimal); the newest
 *                         train.keep_checkpoints of them are kept
 *   checkpoint.bin        the newest of them under a stable name: a hard link to it (a
 *                         copy on file systems without hard links), for `nmt translate`
 *                         and scripts; resuming does not rely on it
 *
 * checkpoint_save(dir, mf, keep) does, in this order:
 *   1. modelfile_write(checkpoint-STEP.bin): PATH.tmp, fsync, rename, fsync the directory
 *   2. checkpoint.bin: a hard link made as checkpoint.bin.tmp, renamed over, dir fsync'd
 *   3. only then deletes the checkpoint-STEP.bin files older than the newest `keep`
 *      (and .tmp files that crashed writes left behind)
 * A failure at 1 or 2 returns -1 with a message naming the file, and the earlier
 * checkpoints are as they were. A crash between the steps leaves a complete newest
 * checkpoint-STEP.bin at worst with extra older ones beside it.
 *
 * checkpoint_load_newest reads the checkpoint-STEP.bin files from the highest STEP
 * down and returns the first that reads whole (every CRC, the optimizer and training
 * state present); the ones it skipped are described in a warning.
 */
#ifndef CHECKPOINT_H
#define CHECKPOINT_H

#include <stddef.h>

#include "files/modelfile.h" /* defines: ModelFile */
#include "base/util.h"      /* defines: Error */

/* Writes mf (with optimizer and training state) as dir/checkpoint-STEP.bin, STEP =
 * mf->step, then links checkpoint.bin to it and deletes all but the newest `keep`
 * checkpoint-STEP.bin files (keep 0: none deleted). If path is not NULL, the written
 * file's path goes there (path_len bytes) once it is safely written. Returns 0 or -1. */
int checkpoint_save(const char *dir, const ModelFile *mf, int keep, char *path, size_t path_len, Error *err);

/* The STEPs of dir's checkpoint-STEP.bin files, highest first, in *steps (malloc'd, or
 * NULL when there are none). Returns their number, or -1 if dir cannot be listed. */
int checkpoint_list(const char *dir, long **steps, Error *err);

/* Reads the newest readable checkpoint of dir into mf and its path into path.
 * Returns 1 if one was read; 0 if dir has no checkpoint-STEP.bin file (mf untouched);
 * -1 if it has some but none can be resumed from (the message names the newest and
 * why). When newer files had to be skipped, warning describes them (else it is "").
 * warning and path have `len` bytes each. */
int checkpoint_load_newest(const char *dir, ModelFile *mf, char *path, char *warning, size_t len, Error *err);

/* Deletes every checkpoint-STEP.bin of dir and checkpoint.bin (starting over in a
 * directory whose run has finished). Returns the number deleted, or -1. */
int checkpoint_remove_all(const char *dir, Error *err);
#endif
