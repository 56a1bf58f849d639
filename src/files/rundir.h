/* rundir.h — output.dir as nmt train's own: made if missing, marked, locked, and
 * checked before anything in it is written.
 *
 * nmt train writes a fixed set of names in output.dir (config.json, train.log,
 * valid.tsv, model.bin, best.bin, training.svg, checkpoint.bin, checkpoint-STEP.bin,
 * and train.lock), replacing whatever holds them. So that it never replaces a file it
 * did not write, a directory is taken only when it holds none of those names, or when
 * it holds the mark of an nmt run: train.lock, made by nmt train, which says so in its
 * first line (or is empty, as nmt 0.4 and older left it). Anything else is refused
 * before a byte is written, naming the file:
 *   - a file of those names in an unmarked directory (a user's own config.json when
 *     output.dir is "."), an nmt model file too (a user's model.bin kept there: nmt
 *     0.4 took it, and a run replaced it without a word);
 *   - a symbolic link, or anything not a regular file, at one of those names: nmt
 *     never writes through a link it did not make;
 *   - an input of the run (the config, data.train, data.valid, data.spm_model) that is
 *     one of those files (the same file, by device and inode), which the run would
 *     overwrite while reading it; --resume's own RUN_DIR/config.json excepted.
 * Temporary files left by a run killed while writing (NAME.tmp-XXXXXX, src/io/outfile.h)
 * are removed from a marked directory.
 *
 * The lock: a run directory holds at most one live nmt train (a resume started while
 * the run is still going would cut train.log under the first and delete its
 * checkpoints). train.lock carries an fcntl lock, which the system releases when the
 * process ends, however it ends (SIGKILL included).
 */
#ifndef RUNDIR_H
#define RUNDIR_H

#include "base/util.h" /* defines: Error */

/* A file the run reads: key names it in messages ("data.train", "the config"). */
typedef struct {
    const char *key, *path;
} RunInput;

/* 1 if name is one nmt train writes in output.dir (train.lock included). */
int rundir_is_run_file(const char *name);

/* 1 if the file path leads to (following links) is one of dir's entries (following
 * theirs), by device and inode; 0 if not, or if either is missing. */
int rundir_holds(const char *dir, const char *path);

/* 1 if dir holds the mark of an nmt run directory (a train.lock of nmt's), else 0. */
int rundir_is_marked(const char *dir);

/* The run directory as rundir_open took it, and what it made there. */
typedef struct {
    int lock_fd;      /* the locked train.lock; -1 where the file system offers no locks (the
                         run goes ahead unguarded) */
    char *made_dir;   /* the outermost directory rundir_open made (dir or a parent of it),
                         NULL if dir was there */
    int made_lock;    /* train.lock is new: this run marked the directory */
    /* What it made, outermost first, the new train.lock last: removed by rundir_abandon,
     * and by a signal that ends the process before rundir_close (signals.h). */
    char **made;
    int n_made;
} RunDir;

/* Makes dir (and its parents) if missing, checks it as above against the n inputs
 * (NULL paths skipped; resumed_config: the config is the run's own config.json), marks
 * and locks it. -1 with err on a refusal, naming the file, or when another process
 * holds the lock (rd then holds nothing, and nothing was made). */
int rundir_open(const char *dir, const RunInput *inputs, int n, int resumed_config, RunDir *rd, Error *err);
/* The run has begun writing: what rundir_open made stays, whatever happens next (a
 * signal no longer removes it, rundir_abandon keeps it). */
void rundir_keep(RunDir *rd);
/* Releases the lock; what was made stays, and a signal no longer removes it. */
void rundir_close(RunDir *rd);
/* For a run refused before it wrote anything in its directory: takes away what rundir_open made
 * (train.lock if it is new, the directories it made if they are empty), so that no run
 * directory is left behind; then as rundir_close. Until rundir_close or this, a signal
 * that ends the process (Ctrl-C while the data is read) does the same. */
void rundir_abandon(RunDir *rd);
#endif
