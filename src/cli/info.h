/* info.h — `nmt info MODEL.bin`: what a model or checkpoint file holds.
 *
 * The file format version, whether it is a model or a resumable checkpoint, the
 * architecture (as its family describes it: ModelFamily.describe and .facts), vocabulary sizes, parameter count, text options,
 * training progress (updates and epochs), the best validation so far when the file is a
 * checkpoint, and the config it was trained with. As readable text, or with json as one JSON object for tools.
 */
#ifndef INFO_H
#define INFO_H

#include <stdio.h>

#include "files/modelfile.h" /* defines: ModelFile */

void info_print(const char *path, const ModelFile *mf, int json, FILE *out);
#endif
