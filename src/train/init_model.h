/* init_model.h — train.init_from: the model file a new run starts from, read and
 * checked before the run begins (train.h says what such a run is).
 */
#ifndef INIT_MODEL_H
#define INIT_MODEL_H

#include "files/config.h"    /* defines: Config */
#include "files/modelfile.h" /* defines: ModelFile */
#include "base/util.h"       /* defines: Error */

/* train.init_from (nmt train --init-from MODEL.bin): reads the model file it names into
 * *init, once, before anything of the run is written or deleted (it may be a file of a
 * finished run that the new one clears away), checks that its stored config (section
 * CONF) describes the model of its architecture sections (the ones nmt info and
 * translate read), and gives cfg the model's architecture and text options
 * (config_adopt_model). Returns 0; -1 with err (an unreadable model, sections that
 * disagree, a key the config file gives otherwise); -2 when a --set does (a usage
 * error). *init is empty unless 0 is returned. */
int train_adopt_init_model(Config *cfg, const char *config_name, ModelFile *init, Error *err);
#endif
