/* info.h — what a model or checkpoint file holds: `nmt info MODEL.bin`, and `nmt serve`'s
 * GET /models.
 *
 * The file format version, whether it is a model or a resumable checkpoint, the
 * architecture (as its family describes it: ModelFamily.describe and .facts), vocabulary sizes, parameter count, text options,
 * training progress (updates and epochs), the best validation so far when the file is a
 * checkpoint, its quality, and the config it was trained with.
 *
 * Its quality: a model file (model.bin, best.bin) holds no validation figures, its
 * run's train.log does. When the file's directory has a train.log of this model (the
 * start line's vocabulary sizes and parameter count are the file's), info shows the
 * validation at the file's own update (loss, and BLEU or a classifier's accuracy) and
 * the best by train.best_metric up to it, naming the log; a file moved out of its run
 * directory shows neither. As readable text, or with json as one JSON object for tools.
 */
#ifndef INFO_H
#define INFO_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "files/modelfile.h" /* defines: ModelFile */

void info_print(const char *path, const ModelFile *mf, int json, FILE *out);
/* What --json prints, as a cJSON object (the caller deletes it): `nmt serve`'s GET
 * /models answers with it. Reads the train.log beside path, as info_print does. */
cJSON *info_json(const char *path, const ModelFile *mf);
#endif
