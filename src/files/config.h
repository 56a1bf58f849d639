/* config.h — the training configuration: defaults, JSON loading and validation.
 *
 * A config file is a JSON object with four sections; every key is optional and takes
 * the default below. Unknown keys, wrong types and out-of-range values are errors
 * naming the key ("config.json: train.batch_size must be an integer from 1 to 65536").
 * Paths are relative to the working directory.
 *
 * Some keys apply only to some setups (model.window only to local attention,
 * data.bpe_merges only to the bpe tokenizer, ...: "only" in the list below). The
 * policy is to refuse: a key a person gave (in the file or with --set) where it does
 * not apply is an error naming it, the key that makes it inapplicable and that key's
 * value, and what to do ("config.json: model.window applies only to local attention
 * kinds (model.attention is "bahdanau"): remove it, or choose local_monotonic or
 * local_predictive"). A key left out never is. The rules, these and the ones on
 * values (model.hidden even for a bidirectional encoder, ...), are each stated once:
 * the model's in model.c's table (model.h: ModelRule), the others in config.c's.
 * config_to_json leaves the inapplicable keys out, so that OUTPUT_DIR/config.json can
 * be given back to nmt train as it is. Configs nmt recorded before this policy (a model
 * file's CONF section, OUTPUT_DIR/config.json) hold every key; they are read as
 * recorded configs, which mark no key as given, so they still load.
 *
 *   data.train           TSV of sentence pairs (required)
 *   data.valid           TSV for validation; if absent, data.valid_fraction of train
 *   data.valid_fraction  0.1    only without data.valid: share of the training file held
 *                               out (0 to 0.5; 0 and no data.valid: no validation)
 *   data.max_len         20     pairs longer than this (words, either side, before any
 *                               subword segmentation) are dropped
 *   data.max_line_bytes  1048576  the longest line of data.train and data.valid, in bytes
 *                               (1024 to 2^30; lines.h): a longer line is an error
 *   data.min_count       1      words (pieces, characters) seen fewer times become <unk>
 *   data.max_vocab       0      vocabulary size limit per side incl. specials (0: none)
 *   data.lowercase       false  true: Unicode case folding of both sides (the model then
 *                               writes lowercase; before 0.2 the default)
 *   data.normalization   "nfc"  or "nfkc"
 *   data.tokenizer       "word", "bpe" (subword units learned from the training split),
 *                        "char", "none" (text segmented elsewhere: split at whitespace
 *                        only, the tokens untouched) or "spm" (SentencePiece) (segment.h)
 *   data.subword_format  "none"  only none: how output tokens become a sentence: "none"
 *                               (joined by spaces), "bpe_at" (subword-nmt's "@@ "
 *                               joined back) or "spm" (SentencePiece's U+2581 a space)
 *   data.bpe_merges      8000   only bpe: merges to learn per side (or for both, joint)
 *   data.spm_type        "unigram" only spm, without spm_model: "unigram" or "bpe"
 *   data.spm_vocab_size  8000   only spm, without spm_model: pieces per side (or for both,
 *                               joint), a soft limit
 *   data.spm_model       only spm: a SentencePiece .model file used for both sides
 *                        instead of training one
 *   data.joint_vocab     false  one vocabulary for both sides (bpe: one merge list
 *                               learned from both sides)
 *   data.user_symbols    []     protected symbols (text/text.h): strings such as
 *                               "<2da>" or "{name}" every tokenizer keeps whole
 *   model.embed          256    embedding size
 *   model.hidden         512    recurrent state size (and attention width)
 *   model.attention      "bahdanau", "luong_dot", "luong_general", "luong_concat",
 *                        "local_monotonic" or "local_predictive"
 *   model.cell           "gru"  or "lstm"
 *   model.layers         1      stacked recurrent layers, encoder and decoder (1 to 8)
 *   model.bidirectional  false  encoder with H/2 units per direction, bridged to the decoder
 *   model.input_feed     false  only Luong kinds: o_{t-1} joins the decoder input
 *   model.window         10     only local kinds: D, the half-width of the window
 *   model.scaled         false  only dot-product kinds: divide scores by sqrt(hidden)
 *   model.dropout        0      training only, [0, 1): on embeddings and between layers
 *                               (Transformer: also sub-layer outputs; attention and
 *                               feed-forward too, unless the next two keys are given)
 *   model.attention_dropout  model.dropout  only transformer: on the attention probabilities
 *   model.activation_dropout model.dropout  only transformer: after the feed-forward activation
 *   model.tie_embeddings false  output layer shares the target embeddings (embed = hidden)
 *   model.type           "rnn"  or "transformer" (Vaswani et al. 2017)
 *   model.heads          4      only transformer: attention heads (divide model.embed)
 *   model.ff             1024   only transformer: the feed-forward block's inner width
 *   model.activation     "relu" only transformer: or "gelu", in the feed-forward block
 *   model.norm           "pre"  only transformer: layer norm before each sub-layer (with a
 *                               final one), or "post" (after the residual sum)
 *   model.encoder_layers 0      only transformer: encoder layers (0: model.layers)
 *   model.decoder_layers 0      only transformer: decoder layers (0: model.layers)
 *   model.hidden, cell, attention, bidirectional, input_feed, window, scaled: only rnn
 *   train.batch_size     64     sentence pairs per batch (with batch_tokens: at most)
 *   train.batch_tokens   0      only shuffled batches: a batch is the next pairs of the
 *                               shuffled order up to this many target tokens (<eos>
 *                               included), at least one pair (0: batch_size pairs)
 *   train.accumulate     1      batches per update: their gradients are summed, and the
 *                               loss is the mean over all their target tokens
 *   train.epochs         10
 *   train.max_steps      0      stop after this many updates (0: no limit)
 *   train.max_minutes    0      stop after this many minutes of training, validations
 *                               included (0: no limit); see train.h
 *   train.learning_rate  0.001  Adam
 *   train.adam_beta1     0.9    Adam's first-moment decay, [0, 1)
 *   train.adam_beta2     0.999  Adam's second-moment decay, [0, 1) (Transformers: often 0.98)
 *   train.adam_eps       1e-8   Adam's epsilon, (0, 1]
 *   train.clip_norm      5.0    global gradient-norm clipping (0: off)
 *   train.seed           1      weights, split and shuffling
 *   train.threads        2      OpenBLAS threads (0: all cores), with one worker
 *   train.workers        1      data-parallel workers: each computes its share of every
 *                               batch on its own thread with one OpenBLAS thread
 *                               (train/parallel.h); 0: one per core
 *   train.log_every      100    steps between log lines
 *   train.checkpoint_every 1000 steps between checkpoints (0: only at epoch ends)
 *   train.keep_checkpoints 3    OUTPUT_DIR/checkpoint-STEP.bin files kept, newest first
 *                               (0: all); see checkpoint.h
 *   train.deterministic  true   a resumed run keeps the OpenBLAS thread count and kernel
 *                               it started with, so that it continues bit for bit
 *   train.max_nonfinite  10     stop after this many non-finite steps in a row (each
 *                               is skipped: no update)
 *   train.label_smoothing 0     0 <= eps < 1 (loss.h); validation loss is never smoothed
 *   train.lr_schedule    "constant", "plateau" or "inverse_sqrt" (schedule.h)
 *   train.warmup_steps   0      linear warmup, any schedule (inverse_sqrt's w)
 *   train.lr_decay       0.5    only plateau: factor per decay, 0 < f < 1
 *   train.patience       1      only plateau: validations without a lower loss before a
 *                               decay
 * The next four apply only with validation pairs (data.valid, or data.valid_fraction > 0).
 *   train.validate_every 0      steps between validations (0: only at epoch ends)
 *   train.valid_bleu_max 1000   validation pairs translated for BLEU (0: no BLEU)
 *   train.best_metric    "loss" or "bleu": what makes OUTPUT_DIR/best.bin the best
 *                        ("bleu" needs valid_bleu_max > 0)
 *   train.early_stop     0      stop after this many validations in a row without a
 *                               better best_metric (0: never)
 *   train.bucket         false  plain shuffled batches (true: of similar lengths)
 *   train.init_from      unset  a model file (model.bin, best.bin or a checkpoint) whose
 *                               weights the run starts from (nmt train --init-from);
 *                               see config_adopt_model
 *   train.extend_vocab   false  only with train.init_from: the new training data's units
 *                               the model's vocabularies lack (seen data.min_count
 *                               times, up to data.max_vocab) are added, with fresh
 *                               embedding and output rows; every old unit keeps its id
 *   train.teacher_forcing 1.0   probability of feeding the gold previous word (below 1:
 *                               otherwise the model's own best word, scheduled sampling)
 *   train.teacher_forcing_decay "none" or "linear": from teacher_forcing down to
 *                               teacher_forcing_final over the planned steps
 *   train.teacher_forcing_final 0.5 only linear: where the decay ends (<= teacher_forcing)
 *   output.dir           "runs/default"
 */
#ifndef CONFIG_H
#define CONFIG_H

#include "models/model.h" /* defines: ModelDims, ModelRule */
#include "base/util.h"  /* defines: Error */

/* The largest train.epochs and train.max_steps (a model file's step and epoch fields
 * are checked against them too). */
#define CONFIG_MAX_EPOCHS 1000000
#define CONFIG_MAX_STEPS 1000000000000000L
/* The largest train.max_minutes (about 19 years) and train.batch_tokens. */
#define CONFIG_MAX_MINUTES 1e7
#define CONFIG_MAX_BATCH_TOKENS 16777216
/* The most train.workers: decode/workers.h's WORKERS_MAX (OpenBLAS's buffers). */
#define CONFIG_MAX_WORKERS 64

/* config.c's table of keys has at most this many rows. */
#define CONFIG_MAX_KEYS 96

/* A list of strings (data.user_symbols): v malloc'd, n of them. */
typedef struct {
    char **v;
    int n;
} ConfigStrings;

typedef struct {
    char *train, *valid;
    double valid_fraction;
    int max_len, min_count, max_vocab;
    int max_line_bytes;         /* the longest line of data.train, data.valid (lines.h) */
    int lowercase;
    char *normalization;
    char *tokenizer, *subword_format;
    int bpe_merges, joint_vocab;
    int text_column, label_column;  /* a classifier's columns (1-based; label 0: the last) */
    char *spm_type, *spm_model;
    int spm_vocab_size;
    ConfigStrings user_symbols;
    int embed, hidden;
    char *attention, *cell;
    int layers, bidirectional, input_feed, window, scaled, tie_embeddings;
    double dropout;
    double attention_dropout, activation_dropout;  /* -1: model.dropout's (config_*_dropout) */
    char *type;                 /* model.type: "rnn", "transformer" or "classifier" */
    char *pooling;              /* a classifier's (model.type "classifier") */
    int bag_of_words;           /* a classifier's */
    int heads, ff;              /* the Transformer's (model.type "transformer") */
    char *activation, *norm;
    int encoder_layers, decoder_layers;  /* 0: model.layers */
    int batch_size, epochs;
    int batch_tokens, accumulate;
    long max_steps;
    double max_minutes;
    double learning_rate, clip_norm;
    double adam_beta1, adam_beta2, adam_eps;
    long seed;
    int threads, workers, log_every, checkpoint_every;
    /* training controls */
    double label_smoothing;
    char *lr_schedule;
    int warmup_steps;
    double lr_decay;
    int patience, validate_every, valid_bleu_max;
    char *best_metric;
    char *class_weights;        /* a classifier's: "none" or "balanced" */
    int early_stop, bucket;
    int keep_checkpoints, deterministic, max_nonfinite;
    double teacher_forcing, teacher_forcing_final;
    char *teacher_forcing_decay;
    char *init_from;
    int extend_vocab;
    char *dir;
    /* Per key of config.c's table (in its order): 0 left at its default or read from a
     * recorded config, else how a person gave it (CONFIG_GIVEN_*). */
    unsigned char given[CONFIG_MAX_KEYS];
} Config;

/* Who wrote a config's text decides one check (above): a person's keys are marked as
 * given, and config_check refuses a given key that does not apply. */
typedef enum {
    CONFIG_WRITTEN,   /* by a person: the file given to nmt train */
    CONFIG_RECORDED,  /* by nmt: a model file's CONF section, OUTPUT_DIR/config.json */
} ConfigOrigin;
enum { CONFIG_GIVEN_FILE = 1, CONFIG_GIVEN_SET = 2 };

void config_defaults(Config *c);
/* Parse JSON text over c and check it (config_check); `source` names it in messages (a
 * path). The text is a recorded config: a model file's CONF section. */
int config_parse(Config *c, const char *text, const char *source, Error *err);
/* A config file a person wrote (nmt train CONFIG.json), read over c and checked. */
int config_load(Config *c, const char *path, Error *err);
/* Text or a file of either origin read over c without config_check, for overriding keys
 * with config_set before it. */
int config_parse_keys(Config *c, const char *text, const char *source, ConfigOrigin origin, Error *err);
int config_load_keys(Config *c, const char *path, ConfigOrigin origin, Error *err);
/* One "SECTION.KEY=VALUE" override (nmt train --set), validated like the file's keys
 * ("--set: train.batch_size must be ..."); VALUE is read as JSON when it is JSON (32,
 * 0.5, true, "text"), else taken as a string (gru). The key counts as given. */
int config_set(Config *c, const char *assignment, Error *err);
/* The checks that involve several keys: data.train given, every rule of model.c's
 * table and config.c's (a key given where it does not apply among them). Returns 0;
 * -1 with err naming source; or -2 with err naming "--set" when the broken rule is
 * --set's doing: the key it refuses where it does not apply was given by --set, or a
 * value rule's key or a key it depends on was (nmt train makes that a usage error).
 * config_parse and config_load run it. */
int config_check(const Config *c, const char *source, Error *err);
/* Whether c's key ("model.window") was given by a person (file or --set): 1 or 0, or
 * -1 if there is no such key. */
int config_given(const Config *c, const char *key);
/* How c's key was given: CONFIG_GIVEN_SET (--set, which wins over the file),
 * CONFIG_GIVEN_FILE, or 0 (not given, or no such key). */
int config_given_by(const Config *c, const char *key);
/* Whether c's key applies to the setup c chooses (every RULE_APPLIES about it holds). */
int config_applies(const Config *c, const char *key);
/* The keys that apply only to some setups, for checking the documentation against:
 * the i-th such rule's key and its text ("model.window applies only to local attention
 * kinds"); returns 0 when i is past the last. */
int config_applies_only(int i, const char **key, const char **text);
/* The Transformer's dropout rates as training uses them: model.attention_dropout and
 * model.activation_dropout, each model.dropout's where it was not given. */
static inline double config_attention_dropout(const Config *c)
{
    return c->attention_dropout >= 0 ? c->attention_dropout : c->dropout;
}
static inline double config_activation_dropout(const Config *c)
{
    return c->activation_dropout >= 0 ? c->activation_dropout : c->dropout;
}
/* The model c describes (vocabulary sizes 0: the data decides them). */
void config_model_dims(const Config *c, ModelDims *d);
/* The config as pretty JSON (malloc'd): every key that applies (config_applies) and has
 * a value (an unset data.valid is left out). */
char *config_to_json(const Config *c);
/* The first key, in the order config_to_json writes them, whose value differs between
 * a and b, skipping the keys named in skip ("section.name" strings, NULL-terminated;
 * skip may be NULL) and the keys that apply in neither. Writes the key's "section.name"
 * to key and each config's value as text to a_value and b_value (strings unquoted, an
 * unset path as "(none)"), each of `len` bytes; returns 1, or 0 if every other key
 * agrees. */
int config_difference(const Config *a, const Config *b, const char *const *skip, char *key, char *a_value,
                      char *b_value, size_t len);
/* train.init_from: a run that starts from a model's weights keeps the model's
 * architecture and the way it reads text, so c's model keys and its data keys other
 * than data.train, valid, valid_fraction, max_len and max_line_bytes (which select the
 * new data) take the values of `model`, the config the model was trained with (its CONF
 * section). A key c's person gave with another value is refused, naming the key, both
 * values, model_path and where it was given: `source` (c's file) or --set; so are
 * data.min_count and data.max_vocab given other than their defaults, which build a
 * vocabulary: the run keeps the model's. Returns 0; -1 with err; -2 with err when --set
 * gave the key (a usage error). */
int config_adopt_model(Config *c, const Config *model, const char *source, const char *model_path, Error *err);
void config_free(Config *c);
#endif
