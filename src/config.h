/* config.h — the training configuration: defaults, JSON loading and validation.
 *
 * A config file is a JSON object with four sections; every key is optional and takes
 * the default below. Unknown keys, wrong types and out-of-range values are errors
 * naming the key ("config.json: train.batch_size must be an integer from 1 to 65536").
 * Paths are relative to the working directory.
 *
 *   data.train           TSV of sentence pairs (required)
 *   data.valid           TSV for validation; if absent, data.valid_fraction of train
 *   data.valid_fraction  0.1    share of the training file held out (0 to 0.5)
 *   data.max_len         20     pairs longer than this (tokens, either side) are dropped
 *   data.min_count       1      words seen fewer times become <unk>
 *   data.max_vocab       0      vocabulary size limit per side incl. specials (0: none)
 *   data.lowercase       true   Unicode case folding
 *   data.normalization   "nfc"  or "nfkc"
 *   model.embed          256    embedding size
 *   model.hidden         512    recurrent state size (and attention width)
 *   model.attention      "bahdanau", "luong_dot", "luong_general", "luong_concat",
 *                        "local_monotonic" or "local_predictive"
 *   model.cell           "gru"  or "lstm"
 *   model.layers         1      stacked recurrent layers, encoder and decoder (1 to 8)
 *   model.bidirectional  false  encoder with H/2 units per direction, bridged to the decoder
 *   model.input_feed     false  Luong kinds: o_{t-1} joins the decoder input
 *   model.window         10     D, the half-width of local attention windows
 *   model.scaled         false  divide dot-product scores by sqrt(hidden)
 *   model.dropout        0      on embeddings and between layers, training only, [0, 1)
 *   model.tie_embeddings false  output layer shares the target embeddings (embed = hidden)
 *   train.batch_size     64     sentence pairs per step
 *   train.epochs         10
 *   train.max_steps      0      stop after this many updates (0: no limit)
 *   train.learning_rate  0.001  Adam
 *   train.clip_norm      5.0    global gradient-norm clipping (0: off)
 *   train.seed           1      weights, split and shuffling
 *   train.threads        2      OpenBLAS threads (0: all cores)
 *   train.log_every      100    steps between log lines
 *   train.checkpoint_every 1000 steps between checkpoints (0: only at epoch ends)
 *   output.dir           "runs/default"
 */
#ifndef CONFIG_H
#define CONFIG_H

#include "util.h" /* defines: Error */

typedef struct {
    char *train, *valid;
    double valid_fraction;
    int max_len, min_count, max_vocab;
    int lowercase;
    char *normalization;
    int embed, hidden;
    char *attention, *cell;
    int layers, bidirectional, input_feed, window, scaled, tie_embeddings;
    double dropout;
    int batch_size, epochs;
    long max_steps;
    double learning_rate, clip_norm;
    long seed;
    int threads, log_every, checkpoint_every;
    char *dir;
} Config;

void config_defaults(Config *c);
/* Parse JSON text; `source` names it in messages (a path). */
int config_parse(Config *c, const char *text, const char *source, Error *err);
int config_load(Config *c, const char *path, Error *err);
/* The whole config, every key, as pretty JSON (malloc'd). */
char *config_to_json(const Config *c);
void config_free(Config *c);
#endif
