/* average.h — `nmt average A.bin B.bin ... -o AVG.bin`: checkpoint averaging.
 *
 * The element-wise mean of the weights of several model or checkpoint files of one
 * model (the same architecture, dimensions, vocabularies, text options and BPE
 * merges: modelfile_compatible), written as a model file: the weights, with the first
 * file's config, vocabularies, segmenter and training progress, and no optimizer or
 * training state (an average is not a point any run passed through, so it cannot be
 * resumed). Averaging the last few checkpoints of a run usually translates a little
 * better than any one of them (Vaswani et al. 2017; Marian's and OpenNMT's average
 * tools). The sums are in double precision; one input file is in memory at a time
 * besides the first.
 *
 * Example:
 *   const char *in[] = {"run/checkpoint-1000.bin", "run/checkpoint-1500.bin"};
 *   Error err;
 *   if (average_models(in, 2, "avg.bin", &err)) ... err.msg
 */
#ifndef AVERAGE_H
#define AVERAGE_H

#include "base/util.h" /* defines: Error */

/* Averages the n >= 1 files into out. -1 with a message naming the file: one that
 * cannot be read, one that is not of the first's model (and what differs), or out
 * being one of the inputs (refused before anything is read). */
int average_models(const char *const *paths, int n, const char *out, Error *err);

#endif
