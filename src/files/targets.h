/* targets.h — what a file an option names for output (-o, --export-batches) may replace.
 *
 * An output is written whole and renamed over its target (io/outfile.h), so a job that
 * fails leaves the old file as it was. That leaves the choice of target: an output
 * replaces the file the option names, as sort -o and gcc -o do, and an input that the
 * command transforms may be its own output (nmt translate IN -o IN, nmt bpe apply CODES
 * IN -o IN: read to the end first). It may never replace
 *   - an input of a kind the command reads but does not transform: the model a text is
 *     translated with, a codes file, --unk-dict's dictionary, the train.log a chart is
 *     drawn from, a training run's config and data (the same file by device and inode,
 *     so hard links and symbolic links to it too, or the same directory entry);
 *   - an nmt model file, with an output that is not a model (text, a chart, batches):
 *     `nmt translate A.bin in.txt -o B.bin` is a slip of the fingers, not a wish;
 *   - a file of an nmt run directory (one nmt train marked with its train.lock) at one
 *     of the names nmt train manages there (config.json, train.log, model.bin, ...),
 *     which a resumed or restarted run would replace or take for its own; the command's
 *     own name there excepted (nmt plot's training.svg).
 * Each is refused before anything is written, naming the file and why. "-" is
 * standard output (io/outfile.h), which replaces nothing.
 */
#ifndef TARGETS_H
#define TARGETS_H

#include "base/util.h" /* defines: Error */

/* An input of the command: what it is in a message ("the model", "--unk-dict's
 * dictionary") and its path (NULL: none; skipped). */
typedef struct {
    const char *what, *path;
} TargetInput;

/* What the output is: a model file (nmt average), or anything else. */
typedef enum { TARGET_TEXT, TARGET_MODEL } TargetKind;

/* Checks path, named by option ("-o"), as above, against the n inputs. own_run_file:
 * the name in a run directory the command writes itself (NULL: none). 0, or -1 with err
 * naming path and the reason. */
int target_check(const char *option, const char *path, TargetKind kind, const TargetInput *inputs, int n,
                 const char *own_run_file, Error *err);
#endif
