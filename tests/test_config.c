/* test_config.c — the JSON training config: defaults, loading, validation messages,
 * the rules of model.c's and config.c's tables (keys that apply only to some setups
 * among them), and the round trip through config_to_json (src/files/config.c). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files/config.h" /* defines: Config, config_defaults, config_parse, config_load, config_to_json, ... */
#include "models/model.h"  /* defines: ModelDims, ModelRule, model_rules, model_rule_broken, dims_problem */
#include "text/segment.h" /* defines: TOKENIZER_NAMES */

static int same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* Every field, whether it applies or not. */
static int config_equal(const Config *a, const Config *b)
{
    return same_str(a->train, b->train) && same_str(a->valid, b->valid) && a->valid_fraction == b->valid_fraction &&
           a->max_len == b->max_len && a->min_count == b->min_count && a->max_vocab == b->max_vocab &&
           a->lowercase == b->lowercase && same_str(a->normalization, b->normalization) &&
           same_str(a->tokenizer, b->tokenizer) && a->bpe_merges == b->bpe_merges && a->joint_vocab == b->joint_vocab &&
           a->embed == b->embed && a->hidden == b->hidden && same_str(a->attention, b->attention) &&
           same_str(a->cell, b->cell) && a->layers == b->layers && a->bidirectional == b->bidirectional &&
           a->input_feed == b->input_feed && a->window == b->window && a->scaled == b->scaled &&
           a->dropout == b->dropout && a->attention_dropout == b->attention_dropout &&
           a->activation_dropout == b->activation_dropout && a->tie_embeddings == b->tie_embeddings && a->batch_size == b->batch_size &&
           a->epochs == b->epochs && a->max_steps == b->max_steps && a->max_minutes == b->max_minutes &&
           a->batch_tokens == b->batch_tokens && a->accumulate == b->accumulate && a->learning_rate == b->learning_rate &&
           a->clip_norm == b->clip_norm && a->adam_beta1 == b->adam_beta1 && a->adam_beta2 == b->adam_beta2 &&
           a->adam_eps == b->adam_eps && a->seed == b->seed && a->threads == b->threads &&
           a->log_every == b->log_every && a->checkpoint_every == b->checkpoint_every &&
           a->label_smoothing == b->label_smoothing && same_str(a->lr_schedule, b->lr_schedule) &&
           a->warmup_steps == b->warmup_steps && a->lr_decay == b->lr_decay && a->patience == b->patience &&
           a->validate_every == b->validate_every && a->valid_bleu_max == b->valid_bleu_max &&
           same_str(a->best_metric, b->best_metric) && a->early_stop == b->early_stop && a->bucket == b->bucket &&
           a->keep_checkpoints == b->keep_checkpoints && a->deterministic == b->deterministic &&
           a->max_nonfinite == b->max_nonfinite && a->teacher_forcing == b->teacher_forcing &&
           same_str(a->teacher_forcing_decay, b->teacher_forcing_decay) &&
           a->teacher_forcing_final == b->teacher_forcing_final && same_str(a->dir, b->dir);
}

/* Every key of config.c's table, in its order. */
static const char *const all_keys[] = {
    "data.train", "data.valid", "data.valid_fraction", "data.max_len", "data.min_count", "data.max_vocab",
    "data.lowercase", "data.normalization", "data.tokenizer", "data.bpe_merges", "data.joint_vocab",
    "model.embed", "model.hidden", "model.attention", "model.cell", "model.layers", "model.bidirectional",
    "model.input_feed", "model.window", "model.scaled", "model.dropout", "model.tie_embeddings",
    "train.batch_size", "train.batch_tokens", "train.accumulate", "train.epochs", "train.max_steps",
    "train.max_minutes", "train.learning_rate", "train.adam_beta1",
    "train.adam_beta2", "train.adam_eps", "train.clip_norm", "train.seed",
    "train.threads", "train.log_every", "train.checkpoint_every", "train.keep_checkpoints", "train.deterministic",
    "train.max_nonfinite", "train.label_smoothing", "train.lr_schedule", "train.warmup_steps", "train.lr_decay",
    "train.patience", "train.validate_every", "train.valid_bleu_max", "train.best_metric", "train.early_stop",
    "train.bucket", "train.teacher_forcing", "train.teacher_forcing_decay", "train.teacher_forcing_final",
    "output.dir",
};
#define N_ALL_KEYS (int)(sizeof all_keys / sizeof all_keys[0])

/* Whether json (config_to_json's output) holds "section.name". */
static int json_has(const char *json, const char *full)
{
    char section[32];
    const char *dot = strchr(full, '.');
    snprintf(section, sizeof section, "%.*s", (int)(dot - full), full);
    cJSON *root = cJSON_Parse(json);
    int has = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, section), dot + 1) != NULL;
    cJSON_Delete(root);
    return has;
}

/* Parses text over fresh defaults; returns config_parse's status, the message in err. */
static int parse(Config *c, const char *text, Error *err)
{
    config_defaults(c);
    strcpy(err->msg, "(no message)");
    return config_parse(c, text, "cfg.json", err);
}

/* Parses text as a person's config (its keys marked as given) over fresh defaults and
 * checks it, as nmt train CONFIG.json does. */
static int written(Config *c, const char *text, Error *err)
{
    config_defaults(c);
    strcpy(err->msg, "(no message)");
    return config_parse_keys(c, text, "cfg.json", CONFIG_WRITTEN, err) || config_check(c, "cfg.json", err) ? -1 : 0;
}

/* text must be refused with a message holding every string in want (NULL-ended). */
static void expect_error(const char *text, const char *const *want, const char *what)
{
    Config c;
    Error err;
    int rc = parse(&c, text, &err);
    int ok = rc == -1 && !strncmp(err.msg, "cfg.json", 8);
    for (int i = 0; want[i]; i++)
        ok = ok && strstr(err.msg, want[i]) != NULL;
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "  rc %d, message: %s\n", rc, err.msg);
    config_free(&c);
}
#define EXPECT_ERROR(text, what, ...) expect_error(text, (const char *const[]){__VA_ARGS__, NULL}, what)

static void test_defaults(void)
{
    Config c;
    config_defaults(&c);
    CHECK(c.train == NULL && c.valid == NULL, "no data files by default");
    CHECK(c.valid_fraction == 0.1 && c.max_len == 20 && c.min_count == 1 && c.max_vocab == 0 && c.lowercase == 0,
          "data defaults (true case: lowercase false)");
    CHECK(!strcmp(c.normalization, "nfc"), "normalization nfc");
    CHECK(!strcmp(c.tokenizer, "word") && c.bpe_merges == 8000 && c.joint_vocab == 0,
          "word tokens by default (bpe: 8000 merges per side)");
    CHECK(c.embed == 256 && c.hidden == 512 && !strcmp(c.attention, "bahdanau"), "model defaults");
    CHECK(!strcmp(c.cell, "gru") && c.layers == 1 && !c.bidirectional && !c.input_feed && c.window == 10 && !c.scaled &&
              c.dropout == 0 && !c.tie_embeddings, "model family defaults: one GRU layer");
    CHECK(c.batch_size == 64 && c.epochs == 10 && c.max_steps == 0 && c.learning_rate == 0.001 &&
          c.clip_norm == 5.0 && c.seed == 1 && c.threads == 2 && c.log_every == 100 && c.checkpoint_every == 1000,
          "train defaults");
    CHECK(c.batch_tokens == 0 && c.accumulate == 1 && c.max_minutes == 0,
          "batches of batch_size pairs, one per update, no time budget");
    CHECK(c.adam_beta1 == 0.9 && c.adam_beta2 == 0.999 && c.adam_eps == 1e-8,
          "Adam's defaults: torch.optim.Adam's betas (0.9, 0.999) and eps 1e-8");
    CHECK(c.label_smoothing == 0 && !strcmp(c.lr_schedule, "constant") && c.warmup_steps == 0 &&
          c.lr_decay == 0.5 && c.patience == 1 && c.validate_every == 0 && c.valid_bleu_max == 1000 &&
          !strcmp(c.best_metric, "loss") && c.early_stop == 0 && c.bucket == 0,
          "training-control defaults: no smoothing, constant rate, shuffled (not bucketed) batches");
    CHECK(c.keep_checkpoints == 3 && c.deterministic == 1 && c.max_nonfinite == 10,
          "checkpoint and robustness defaults: keep 3, deterministic, stop after 10 non-finite steps");
    CHECK(!strcmp(c.dir, "runs/default"), "output.dir default");
    config_free(&c);

    /* Only the required key: everything else keeps its default. */
    Config d;
    Error err;
    CHECK(parse(&d, "{\"data\": {\"train\": \"data/mar.txt\"}}", &err) == 0, "minimal config parses");
    config_defaults(&c);
    c.train = strdup("data/mar.txt");
    CHECK(config_equal(&c, &d), "minimal config = defaults + data.train");
    config_free(&c);
    config_free(&d);
}

/* Every key given, some where they do not apply (data.valid_fraction beside data.valid,
 * lr_decay and patience with inverse_sqrt, window with bahdanau): what a model file's CONF
 * section held before config_to_json left such keys out. */
static const char *full_text =
    "{\n"
    "  \"data\": {\"train\": \"data/मराठी.tsv\", \"valid\": \"v.tsv\", \"valid_fraction\": 0.25,\n"
    "           \"max_len\": 50, \"min_count\": 3, \"max_vocab\": 30000, \"lowercase\": false,\n"
    "           \"normalization\": \"nfkc\", \"tokenizer\": \"bpe\", \"bpe_merges\": 321, \"joint_vocab\": true},\n"
    "  \"model\": {\"embed\": 64, \"hidden\": 128, \"attention\": \"bahdanau\"},\n"
    "  \"train\": {\"batch_size\": 32, \"epochs\": 3, \"max_steps\": 123456789012, \"learning_rate\": 0.0003,\n"
    "            \"clip_norm\": 0, \"seed\": 9007199254740991, \"threads\": 0, \"log_every\": 7,\n"
    "            \"checkpoint_every\": 0, \"label_smoothing\": 0.1, \"lr_schedule\": \"inverse_sqrt\",\n"
    "            \"warmup_steps\": 4000, \"lr_decay\": 0.25, \"patience\": 3, \"validate_every\": 500,\n"
    "            \"valid_bleu_max\": 0, \"best_metric\": \"loss\", \"early_stop\": 5, \"bucket\": false,\n"
    "            \"keep_checkpoints\": 0, \"deterministic\": false, \"max_nonfinite\": 1},\n"
    "  \"output\": {\"dir\": \"runs/x y\"}\n"
    "}\n";

/* Every key but data.valid (whose presence makes data.valid_fraction inapplicable),
 * each one where it applies and away from its default. */
static const char *every_key_text =
    "{\"data\": {\"train\": \"data/मराठी.tsv\", \"valid_fraction\": 0.25, \"max_len\": 50, \"min_count\": 3,"
    "          \"max_vocab\": 30000, \"lowercase\": false, \"normalization\": \"nfkc\", \"tokenizer\": \"bpe\","
    "          \"bpe_merges\": 321, \"joint_vocab\": true},"
    " \"model\": {\"embed\": 64, \"hidden\": 64, \"attention\": \"local_predictive\", \"cell\": \"lstm\", \"layers\": 2,"
    "           \"bidirectional\": true, \"input_feed\": true, \"window\": 3, \"scaled\": true, \"dropout\": 0.25,"
    "           \"tie_embeddings\": true},"
    " \"train\": {\"batch_size\": 32, \"epochs\": 3, \"max_steps\": 123456789012, \"learning_rate\": 0.0003,"
    "           \"adam_beta1\": 0.8, \"adam_beta2\": 0.98, \"adam_eps\": 1e-6, \"batch_tokens\": 500,"
    "           \"accumulate\": 2, \"max_minutes\": 12.5,"
    "           \"clip_norm\": 0, \"seed\": 9007199254740991, \"threads\": 0, \"log_every\": 7,"
    "           \"checkpoint_every\": 0, \"keep_checkpoints\": 0, \"deterministic\": false, \"max_nonfinite\": 1,"
    "           \"label_smoothing\": 0.1, \"lr_schedule\": \"plateau\", \"warmup_steps\": 4000, \"lr_decay\": 0.25,"
    "           \"patience\": 3, \"validate_every\": 500, \"valid_bleu_max\": 7, \"best_metric\": \"bleu\","
    "           \"early_stop\": 5, \"bucket\": false, \"teacher_forcing\": 0.9, \"teacher_forcing_decay\": \"linear\","
    "           \"teacher_forcing_final\": 0.3},"
    " \"output\": {\"dir\": \"runs/x y\"}}";

/* OUTPUT_DIR/config.json as nmt 0.1.0 (commit ec0d794) wrote it for a word-level Bahdanau
 * model with the constant schedule: every key, applicable or not. */
static const char *recorded_0_1_0 =
    "{\n\t\"data\":\t{\n\t\t\"train\":\t\"data/mar.txt\",\n\t\t\"valid_fraction\":\t0.1,\n"
    "\t\t\"max_len\":\t20,\n\t\t\"min_count\":\t1,\n\t\t\"max_vocab\":\t0,\n\t\t\"lowercase\":\ttrue,\n"
    "\t\t\"normalization\":\t\"nfc\",\n\t\t\"tokenizer\":\t\"word\",\n\t\t\"bpe_merges\":\t8000,\n"
    "\t\t\"joint_vocab\":\tfalse\n\t},\n\t\"model\":\t{\n\t\t\"embed\":\t16,\n\t\t\"hidden\":\t32,\n"
    "\t\t\"attention\":\t\"bahdanau\",\n\t\t\"cell\":\t\"gru\",\n\t\t\"layers\":\t1,\n"
    "\t\t\"bidirectional\":\tfalse,\n\t\t\"input_feed\":\tfalse,\n\t\t\"window\":\t10,\n"
    "\t\t\"scaled\":\tfalse,\n\t\t\"dropout\":\t0,\n\t\t\"tie_embeddings\":\tfalse\n\t},\n"
    "\t\"train\":\t{\n\t\t\"batch_size\":\t16,\n\t\t\"epochs\":\t2,\n\t\t\"max_steps\":\t0,\n"
    "\t\t\"learning_rate\":\t0.003,\n\t\t\"clip_norm\":\t5,\n\t\t\"seed\":\t1,\n\t\t\"threads\":\t1,\n"
    "\t\t\"log_every\":\t10,\n\t\t\"checkpoint_every\":\t5,\n\t\t\"keep_checkpoints\":\t0,\n"
    "\t\t\"deterministic\":\ttrue,\n\t\t\"max_nonfinite\":\t10,\n\t\t\"label_smoothing\":\t0,\n"
    "\t\t\"lr_schedule\":\t\"constant\",\n\t\t\"warmup_steps\":\t0,\n\t\t\"lr_decay\":\t0.5,\n"
    "\t\t\"patience\":\t1,\n\t\t\"validate_every\":\t0,\n\t\t\"valid_bleu_max\":\t5,\n"
    "\t\t\"best_metric\":\t\"loss\",\n\t\t\"early_stop\":\t0,\n\t\t\"bucket\":\ttrue,\n"
    "\t\t\"teacher_forcing\":\t1,\n\t\t\"teacher_forcing_decay\":\t\"none\",\n"
    "\t\t\"teacher_forcing_final\":\t0.5\n\t},\n\t\"output\":\t{\n\t\t\"dir\":\t\"runs/old\"\n\t}\n"
    "}";

static void test_full(void)
{
    Config c;
    Error err;
    int rc = parse(&c, full_text, &err);
    CHECK(rc == 0, "full config parses as a recorded config (config_parse)");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    for (int i = 0; i < N_ALL_KEYS; i++)
        if (config_given(&c, all_keys[i]) != 0) {
            CHECK(0, "a recorded config marks no key as given");
            fprintf(stderr, "  %s\n", all_keys[i]);
            break;
        }
    CHECK(!strcmp(c.train, "data/मराठी.tsv") && !strcmp(c.valid, "v.tsv") && c.valid_fraction == 0.25,
          "data files and fraction");
    CHECK(c.max_len == 50 && c.min_count == 3 && c.max_vocab == 30000 && c.lowercase == 0 &&
          !strcmp(c.normalization, "nfkc"), "data options");
    CHECK(!strcmp(c.tokenizer, "bpe") && c.bpe_merges == 321 && c.joint_vocab == 1, "tokenizer options");
    CHECK(c.embed == 64 && c.hidden == 128 && !strcmp(c.attention, "bahdanau"), "model");
    CHECK(c.batch_size == 32 && c.epochs == 3 && c.max_steps == 123456789012L && c.learning_rate == 0.0003 &&
          c.clip_norm == 0 && c.seed == 9007199254740991L && c.threads == 0 && c.log_every == 7 &&
          c.checkpoint_every == 0, "train");
    CHECK(c.label_smoothing == 0.1 && !strcmp(c.lr_schedule, "inverse_sqrt") && c.warmup_steps == 4000 &&
          c.lr_decay == 0.25 && c.patience == 3 && c.validate_every == 500 && c.valid_bleu_max == 0 &&
          !strcmp(c.best_metric, "loss") && c.early_stop == 5 && c.bucket == 0, "training controls");
    CHECK(c.keep_checkpoints == 0 && c.deterministic == 0 && c.max_nonfinite == 1,
          "keep_checkpoints 0 (all), deterministic false, max_nonfinite 1");
    CHECK(!strcmp(c.dir, "runs/x y"), "output.dir");
    config_free(&c);
    /* The same text from a person: its first key that does not apply is refused. */
    CHECK(written(&c, full_text, &err) == -1 && strstr(err.msg, "data.valid_fraction applies only without data.valid"),
          "full config as a person's: refused at data.valid_fraction");
    config_free(&c);

    /* Every key where it applies: a person's config, each key marked as given. */
    rc = written(&c, every_key_text, &err);
    CHECK(rc == 0, "every key, each where it applies: a person's config is accepted");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    int marked = 1;
    for (int i = 0; i < N_ALL_KEYS; i++)
        marked &= config_given(&c, all_keys[i]) == (strcmp(all_keys[i], "data.valid") != 0);
    CHECK(marked, "every key it gives is marked as given, and only those");
    CHECK(!strcmp(c.attention, "local_predictive") && c.window == 3 && c.input_feed && c.scaled &&
          !strcmp(c.lr_schedule, "plateau") && c.lr_decay == 0.25 && c.patience == 3 &&
          !strcmp(c.teacher_forcing_decay, "linear") && c.teacher_forcing_final == 0.3 && c.bpe_merges == 321,
          "the keys that apply only to some setups, read");
    config_free(&c);

    /* A config as nmt 0.1.0 recorded it (every key): parses, and agrees with the config
     * a person would write for it, which gives no key that does not apply (and, since
     * the defaults of train.bucket and data.lowercase became false, says they are true). */
    rc = parse(&c, recorded_0_1_0, &err);
    CHECK(rc == 0, "a config recorded by nmt 0.1.0, with every key, parses");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    Config now;
    rc = written(&now, "{\"data\": {\"train\": \"data/mar.txt\", \"lowercase\": true}, \"model\": {\"embed\": 16, \"hidden\": 32},"
                       " \"train\": {\"batch_size\": 16, \"epochs\": 2, \"learning_rate\": 0.003, \"threads\": 1,"
                       " \"log_every\": 10, \"checkpoint_every\": 5, \"keep_checkpoints\": 0, \"valid_bleu_max\": 5,"
                       " \"bucket\": true},"
                       " \"output\": {\"dir\": \"runs/old\"}}", &err);
    char key[64], va[64], vb[64];
    CHECK(rc == 0 && config_difference(&c, &now, NULL, key, va, vb, sizeof key) == 0,
          "... and config_difference finds it equal to the config that was given");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    config_free(&now);
    config_free(&c);

    /* Range ends are inclusive. */
    CHECK(parse(&c, "{\"data\": {\"train\": \"t\", \"valid_fraction\": 0, \"max_len\": 1000},"
                    " \"train\": {\"batch_size\": 65536, \"seed\": 0}}", &err) == 0 &&
          c.valid_fraction == 0 && c.max_len == 1000 && c.batch_size == 65536 && c.seed == 0, "range ends accepted");
    config_free(&c);
    /* The other schedules and metric; smoothing just below 1, decay just above 0. */
    CHECK(parse(&c, "{\"data\": {\"train\": \"t\"}, \"train\": {\"lr_schedule\": \"plateau\","
                    " \"best_metric\": \"bleu\", \"label_smoothing\": 0.999, \"lr_decay\": 1e-6}}", &err) == 0 &&
          !strcmp(c.lr_schedule, "plateau") && !strcmp(c.best_metric, "bleu") && c.label_smoothing == 0.999 &&
          c.lr_decay == 1e-6, "plateau, bleu, smoothing 0.999, decay 1e-6 accepted");
    config_free(&c);
    /* An integer written as 64.0 is still an integer. */
    CHECK(parse(&c, "{\"data\": {\"train\": \"t\"}, \"train\": {\"batch_size\": 64.0}}", &err) == 0 &&
          c.batch_size == 64, "64.0 accepted for an int key");
    config_free(&c);
}

static void test_errors(void)
{
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"trian\": {}}", "unknown section",
                 "unknown section \"trian\"", "did you mean train?");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"optimizer\": {}}", "unknown section without a close match",
                 "unknown section \"optimizer\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"max_lenn\": 5}}", "unknown key",
                 "unknown key data.max_lenn", "did you mean data.max_len?");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"batchsize\": 5}}", "unknown key, suggestion",
                 "train.batchsize", "did you mean train.batch_size?");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"transformer_heads\": 2}}", "unknown key without a close match",
                 "unknown key model.transformer_heads");
    /* The model family's keys: each bad value names its key. */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"attention\": \"luong\"}}", "unknown attention name",
                 "model.attention must be one of", "luong_general", "\"luong\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"cell\": \"rnn\"}}", "unknown cell", "model.cell",
                 "gru|lstm");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"window\": 0}}", "window < 1", "model.window");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"layers\": 0}}", "layers < 1", "model.layers");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"layers\": 9}}", "layers > 8", "model.layers");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"dropout\": 1}}", "dropout 1", "model.dropout", "< 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"dropout\": -0.1}}", "dropout < 0", "model.dropout");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"batch_tokens\": -1}}", "batch_tokens < 0",
                 "train.batch_tokens must be an integer from 0 to 16777216");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"accumulate\": 0}}", "accumulate 0",
                 "train.accumulate must be an integer from 1 to 1024");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"accumulate\": 2.5}}", "accumulate 2.5",
                 "train.accumulate must be an integer");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"max_minutes\": -1}}", "max_minutes < 0",
                 "train.max_minutes must be a number from 0 to 1e+07");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"max_minutes\": \"5\"}}", "max_minutes a string",
                 "train.max_minutes must be a number");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"adam_beta1\": 1}}", "adam_beta1 1",
                 "train.adam_beta1 must be a number >= 0 and < 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"adam_beta2\": -0.5}}", "adam_beta2 < 0",
                 "train.adam_beta2 must be a number >= 0 and < 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"adam_eps\": 0}}", "adam_eps 0",
                 "train.adam_eps must be a number > 0 and <= 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"adam_beta2\": \"0.98\"}}", "adam_beta2 a string",
                 "train.adam_beta2 must be a number");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"input_feed\": true}}", "input feeding with bahdanau",
                 "model.input_feed", "bahdanau");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"bidirectional\": true, \"hidden\": 7}}",
                 "bidirectional with an odd hidden size", "model.hidden", "even");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"tie_embeddings\": true, \"embed\": 8, \"hidden\": 16}}",
                 "tied embeddings of different sizes", "model.tie_embeddings", "model.embed");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"scaled\": true}}", "scaled additive scores",
                 "model.scaled", "bahdanau");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"teacher_forcing\": 1.5}}", "teacher forcing > 1",
                 "train.teacher_forcing");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"teacher_forcing_decay\": \"exp\"}}",
                 "unknown teacher-forcing decay", "train.teacher_forcing_decay", "none|linear");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"teacher_forcing\": 0.5, \"teacher_forcing_decay\": "
                 "\"linear\", \"teacher_forcing_final\": 0.9}}", "decay upwards", "train.teacher_forcing_final");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"hiden\": 2}}", "misspelt model key",
                 "model.hiden", "did you mean model.hidden?");
    EXPECT_ERROR("{\"data\": 5}", "a section that is not an object", "section data must be an object");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"keep_checkpoints\": -1}}", "keep_checkpoints < 0",
                 "train.keep_checkpoints");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"max_nonfinite\": 0}}", "max_nonfinite 0",
                 "train.max_nonfinite", "from 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"deterministic\": 1}}", "deterministic as a number",
                 "train.deterministic must be true or false");

    /* Wrong types. */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"batch_size\": \"64\"}}", "string for an int",
                 "train.batch_size must be an integer from 1 to 65536");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"lowercase\": 1}}", "number for a bool",
                 "data.lowercase must be true or false");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"valid_fraction\": \"0.1\"}}", "string for a number",
                 "data.valid_fraction must be a number from 0 to 0.5");
    EXPECT_ERROR("{\"data\": {\"train\": 5}}", "number for a string", "data.train must be a non-empty string");
    EXPECT_ERROR("{\"data\": {\"train\": \"\"}}", "empty string", "data.train must be a non-empty string");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"output\": {\"dir\": null}}", "null for a string",
                 "output.dir must be a non-empty string");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"seed\": true}}", "bool for a long",
                 "train.seed must be an integer");

    /* Out of range. */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"batch_size\": 0}}", "batch_size 0",
                 "train.batch_size must be an integer from 1 to 65536");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"batch_size\": 65537}}", "batch_size 65537",
                 "train.batch_size");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"valid_fraction\": 0.6}}", "valid_fraction 0.6",
                 "data.valid_fraction must be a number from 0 to 0.5");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"valid_fraction\": -0.1}}", "valid_fraction -0.1",
                 "data.valid_fraction");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"learning_rate\": 0}}", "learning_rate 0",
                 "train.learning_rate must be a number from 1e-09 to 10");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"hidden\": 1e300}}", "hidden 1e300",
                 "model.hidden must be an integer from 1 to 8192");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"seed\": -1}}", "negative seed", "train.seed");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"max_steps\": 1e16}}", "max_steps 1e16",
                 "train.max_steps must be an integer from 0 to");

    /* Not an integer. */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"epochs\": 2.5}}", "epochs 2.5",
                 "train.epochs must be an integer from 1 to 1000000");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"max_steps\": 10.5}}", "max_steps 10.5 (a long key)",
                 "train.max_steps must be an integer");

    /* Enumerations. */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"normalization\": \"nfd\"}}", "normalization nfd",
                 "data.normalization must be one of nfc|nfkc, not \"nfd\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"tokenizer\": \"sentencepiece\"}}", "tokenizer sentencepiece",
                 "data.tokenizer must be one of " TOKENIZER_NAMES ", not \"sentencepiece\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"tokenizer\": \"none\", \"subword_format\": \"@@\"}}",
                 "subword_format @@", "data.subword_format must be one of none|bpe_at|spm, not \"@@\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"tokenizer\": \"spm\", \"spm_type\": \"char\"}}", "spm_type char",
                 "data.spm_type must be one of unigram|bpe, not \"char\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"tokenizer\": \"spm\", \"spm_vocab_size\": 0}}", "spm_vocab_size 0",
                 "data.spm_vocab_size must be an integer from 1 to 1000000");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"bpe_merges\": -1}}", "bpe_merges -1", "data.bpe_merges must be");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"normalization\": \"nf\"}}", "a prefix of a choice is not a choice",
                 "data.normalization");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"normalization\": \"nfkcx\"}}", "a choice plus more is not a choice",
                 "data.normalization");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"attention\": \"luong\"}}", "attention luong",
                 "model.attention must be one of bahdanau");

    /* Training controls. */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"label_smoothing\": 1.0}}", "label_smoothing 1.0",
                 "train.label_smoothing must be a number >= 0 and < 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"label_smoothing\": -0.1}}", "label_smoothing -0.1",
                 "train.label_smoothing must be a number >= 0 and < 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"label_smoothing\": \"0.1\"}}",
                 "label_smoothing as a string", "train.label_smoothing must be a number");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"lr_schedule\": \"cosine\"}}", "lr_schedule cosine",
                 "train.lr_schedule must be one of constant|plateau|inverse_sqrt, not \"cosine\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"warmup_steps\": -100}}", "negative warmup",
                 "train.warmup_steps must be an integer from 0 to 1000000000");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"warmup_steps\": 10.5}}", "fractional warmup",
                 "train.warmup_steps must be an integer");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"lr_decay\": 1}}", "lr_decay 1",
                 "train.lr_decay must be a number > 0 and < 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"lr_decay\": 0}}", "lr_decay 0",
                 "train.lr_decay must be a number > 0 and < 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"patience\": 0}}", "patience 0",
                 "train.patience must be an integer from 1 to 1000000");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"validate_every\": -1}}", "validate_every -1",
                 "train.validate_every must be an integer from 0");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"valid_bleu_max\": -5}}", "valid_bleu_max -5",
                 "train.valid_bleu_max must be an integer from 0");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"best_metric\": \"chrf\"}}", "best_metric chrf",
                 "train.best_metric must be one of loss|bleu|accuracy, not \"chrf\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"early_stop\": 2.5}}", "early_stop 2.5",
                 "train.early_stop must be an integer from 0 to 1000000");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"bucket\": \"yes\"}}", "bucket as a string",
                 "train.bucket must be true or false");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"best_metric\": \"bleu\", \"valid_bleu_max\": 0}}",
                 "best_metric bleu without validation BLEU", "train.best_metric \"bleu\"", "train.valid_bleu_max 0");
    /* A classifier's text column is not its label column (issue 27). */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"text_column\": 2, \"label_column\": 2}, \"model\": {\"type\": "
                 "\"classifier\"}}", "label_column = text_column", "data.label_column must not be data.text_column",
                 "data.label_column is 2, data.text_column is 2");
    /* data.max_vocab counts the specials: 1 to 4 leaves no word (issue 19). */
    for (int n = 1; n <= 4; n++) {
        char text[96], is[32];
        snprintf(text, sizeof text, "{\"data\": {\"train\": \"t\", \"max_vocab\": %d}}", n);
        snprintf(is, sizeof is, "(data.max_vocab is %d)", n);
        EXPECT_ERROR(text, "max_vocab 1..4: vocabularies of the specials alone",
                     "data.max_vocab counts the 4 special tokens", "can say nothing", "give 5 or more", is);
    }
    {
        Config c;
        Error err;
        CHECK(parse(&c, "{\"data\": {\"train\": \"t\", \"max_vocab\": 5}}", &err) == 0, "max_vocab 5: one word");
        config_free(&c);
        CHECK(parse(&c, "{\"data\": {\"train\": \"t\", \"max_vocab\": 0}}", &err) == 0, "max_vocab 0: no limit");
        config_free(&c);
    }
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"label_smothing\": 0.1}}", "misspelt label_smoothing",
                 "unknown key train.label_smothing", "did you mean train.label_smoothing?");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"warmup\": 10}}", "warmup for warmup_steps",
                 "unknown key train.warmup");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"earlystop\": 3}}", "earlystop",
                 "did you mean train.early_stop?");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"validate_evry\": 3}}", "validate_evry",
                 "did you mean train.validate_every?");

    /* Required and structure. */
    EXPECT_ERROR("{}", "empty object: data.train missing", "data.train is required");
    EXPECT_ERROR("{\"data\": {\"valid\": \"v\"}, \"train\": {\"epochs\": 2}}", "data.train missing",
                 "data.train is required");
    EXPECT_ERROR("[1, 2]", "an array at the top level", "must be a JSON object");
    EXPECT_ERROR("42", "a number at the top level", "must be a JSON object");
    EXPECT_ERROR("\"data\"", "a string at the top level", "must be a JSON object");

    /* Invalid JSON: the message gives line:col. A bad value is reported where it
     * starts; after a trailing comma cJSON stops one past the brace, so column 3 or 4. */
    EXPECT_ERROR("{\n  \"data\": {\n    \"train\": tru\n  }\n}", "bad literal at 3:14", "cfg.json:3:14:",
                 "not valid JSON");
    {
        Config c;
        Error err;
        CHECK(parse(&c, "{\n  \"data\": {\n    \"train\": \"x\",\n  }\n}", &err) == -1 &&
              (strstr(err.msg, "cfg.json:4:3:") || strstr(err.msg, "cfg.json:4:4:")), "trailing comma on line 4");
        if (!strstr(err.msg, "cfg.json:4:")) fprintf(stderr, "  %s\n", err.msg);
        config_free(&c);
    }
    EXPECT_ERROR("", "empty text", "cfg.json:1:1: not valid JSON");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}}\n\n  x", "garbage after the object", "cfg.json:3:3:");
    EXPECT_ERROR("{\"data\": {\"train\": \"t", "unterminated string", "not valid JSON");
}

static void test_round_trip(void)
{
    Error err;
    /* Every key, the full config recorded with keys that do not apply, the minimal one
     * whose data.valid is unset, one with data.valid, and doubles that need 17 digits or
     * an exponent. */
    const char *texts[] = {every_key_text, full_text, "{\"data\": {\"train\": \"only-train.tsv\"}}",
                           "{\"data\": {\"train\": \"t\", \"valid\": \"v\"}}",
                           "{\"data\": {\"train\": \"t\", \"valid_fraction\": 0.30000000000000004},"
                           " \"train\": {\"learning_rate\": 1.2345678901234567e-7, \"clip_norm\": 0.1234567890123456789e9}}"};
    const char *names[] = {"every key", "full config", "minimal config", "data.valid", "17-digit doubles"};
    char label[160], key[64], va[64], vb[64];
    for (int i = 0; i < 5; i++) {
        Config a, b;
        CHECK(parse(&a, texts[i], &err) == 0, "parse before the round trip");
        char *json = config_to_json(&a);
        int rc = written(&b, json, &err);
        snprintf(label, sizeof label, "%s: config_to_json output parses back as a person's config", names[i]);
        CHECK(rc == 0, label);
        if (rc) fprintf(stderr, "  %s\nin:\n%s\n", err.msg, json);
        if (i == 1) {
            /* Written without the keys that do not apply: they come back as defaults,
             * which agree on every key that does. */
            snprintf(label, sizeof label, "%s: round trip agrees on every key that applies", names[i]);
            CHECK(rc == 0 && config_difference(&a, &b, NULL, key, va, vb, sizeof key) == 0, label);
            CHECK(b.valid_fraction == 0.1 && b.lr_decay == 0.5 && b.patience == 1 && b.window == 10,
                  "full config: the keys that did not apply come back as their defaults");
        } else {
            snprintf(label, sizeof label, "%s: round trip gives an equal config", names[i]);
            CHECK(rc == 0 && config_equal(&a, &b), label);
        }
        if (i == 0) CHECK(strstr(json, "9007199254740991") != NULL, "the seed is written with all its digits");
        /* Every key that applies and has a value is written, and no other. */
        int right = 1;
        for (int k = 0; k < N_ALL_KEYS; k++) {
            int unset = !strcmp(all_keys[k], "data.valid") && !a.valid;
            int want = config_applies(&a, all_keys[k]) && !unset;
            if (json_has(json, all_keys[k]) != want) {
                fprintf(stderr, "  %s: %s %s\n", names[i], all_keys[k], want ? "missing" : "written");
                right = 0;
            }
        }
        snprintf(label, sizeof label, "%s: config_to_json writes exactly the keys that apply and have a value",
                 names[i]);
        CHECK(right, label);
        free(json);
        config_free(&a);
        config_free(&b);
    }
}

static void test_load(void)
{
    Config c;
    Error err;
    config_defaults(&c);
    const char *missing = "/nonexistent-dir/nmt-config.json";
    CHECK(config_load(&c, missing, &err) == -1 && strstr(err.msg, missing) && strstr(err.msg, "No such file"),
          "missing file: message names the path");
    config_free(&c);

    char path[] = "/tmp/nmt_test_config_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); exit(2); }
    /* Larger than the loader's first 4096-byte buffer, to exercise its growth. */
    size_t pad = 10000, n = strlen(every_key_text);
    char *text = malloc(pad + n);
    memset(text, ' ', pad);
    memcpy(text + pad, every_key_text, n);
    CHECK(write(fd, text, pad + n) == (ssize_t)(pad + n), "write temp config");
    close(fd);
    config_defaults(&c);
    int rc = config_load(&c, path, &err);
    CHECK(rc == 0 && c.batch_size == 32 && !strcmp(c.train, "data/मराठी.tsv"), "config_load reads a 10 kB file");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    CHECK(config_given(&c, "train.batch_size") == 1, "config_load: a person's config, its keys marked as given");
    config_free(&c);

    /* A file nmt recorded may hold keys that do not apply; one a person wrote may not. */
    FILE *f = fopen(path, "w");
    fputs(full_text, f);
    fclose(f);
    config_defaults(&c);
    CHECK(config_load_keys(&c, path, CONFIG_RECORDED, &err) == 0 && config_check(&c, path, &err) == 0 &&
              config_given(&c, "train.lr_decay") == 0,
          "config_load_keys CONFIG_RECORDED: keys that do not apply are accepted, none marked");
    config_free(&c);
    config_defaults(&c);
    CHECK(config_load(&c, path, &err) == -1 && strstr(err.msg, path) && strstr(err.msg, "data.valid_fraction"),
          "config_load of the same file: refused, naming the file and the key");
    config_free(&c);

    /* Syntax errors name the file, with the line. */
    f = fopen(path, "w");
    fputs("{\n\"data\": {\"train\": \"t\"}\n\"model\": {}\n}\n", f);
    fclose(f);
    config_defaults(&c);
    char want[64];
    snprintf(want, sizeof want, "%s:3:", path);
    CHECK(config_load(&c, path, &err) == -1 && strstr(err.msg, want), "missing comma: path:3: in the message");
    config_free(&c);

    /* A NUL byte would silently cut the text short: refused. */
    f = fopen(path, "wb");
    fwrite("{\"data\": {\"train\": \"t\"}}\0{", 1, 26, f);
    fclose(f);
    config_defaults(&c);
    CHECK(config_load(&c, path, &err) == -1 && strstr(err.msg, path) && strstr(err.msg, "NUL"), "NUL byte refused");
    config_free(&c);
    unlink(path);
    free(text);
}

/* config_difference: the first differing key and both values, as resuming reports them. */
static void test_difference(void)
{
    Config a, b;
    Error err;
    char key[64], va[64], vb[64];
    parse(&a, full_text, &err);
    parse(&b, full_text, &err);
    CHECK(config_difference(&a, &b, NULL, key, va, vb, sizeof key) == 0, "equal configs: no difference");
    free(b.cell);
    b.cell = strdup("lstm");
    b.learning_rate = 0.0003000000000000001;
    CHECK(config_difference(&a, &b, NULL, key, va, vb, sizeof key) == 1 && !strcmp(key, "model.cell") &&
              !strcmp(va, "gru") && !strcmp(vb, "lstm"),
          "model.cell: gru vs lstm (the first difference in config_to_json's order)");
    free(b.cell);
    b.cell = strdup("gru");
    CHECK(config_difference(&a, &b, NULL, key, va, vb, sizeof key) == 1 && !strcmp(key, "train.learning_rate") &&
              !strcmp(va, "0.0003") && !strcmp(vb, "0.0003000000000000001"),
          "train.learning_rate: doubles compared exactly, shown with the digits that tell them apart");
    const char *skip[] = {"train.learning_rate", NULL};
    b.threads = 8;
    free(b.valid);
    b.valid = NULL;
    CHECK(config_difference(&a, &b, skip, key, va, vb, sizeof key) == 1 && !strcmp(key, "data.valid") &&
              !strcmp(va, "v.tsv") && !strcmp(vb, "(none)"),
          "an unset path shows as (none); skipped keys are passed over");
    const char *skip_more[] = {"data.valid", "train.learning_rate", "train.threads", NULL};
    CHECK(config_difference(&a, &b, skip_more, key, va, vb, sizeof key) == 0, "every difference skipped: 0");
    b.deterministic = 1;
    CHECK(config_difference(&a, &b, skip_more, key, va, vb, sizeof key) == 1 && !strcmp(key, "train.deterministic") &&
              !strcmp(va, "false") && !strcmp(vb, "true"), "booleans as false / true");
    config_free(&a);
    config_free(&b);

    /* A key that applies to neither config is passed over (a recorded config may hold
     * it); one that applies to either is compared. */
    parse(&a, "{\"data\": {\"train\": \"t\"}, \"train\": {\"lr_decay\": 0.3}}", &err);
    parse(&b, "{\"data\": {\"train\": \"t\"}}", &err);
    CHECK(config_difference(&a, &b, NULL, key, va, vb, sizeof key) == 0,
          "train.lr_decay 0.3 vs 0.5 with the constant schedule: no difference");
    free(b.lr_schedule);
    b.lr_schedule = strdup("plateau");
    CHECK(config_difference(&a, &b, NULL, key, va, vb, sizeof key) == 1 && !strcmp(key, "train.lr_schedule"),
          "one config on the plateau schedule: the schedule differs first");
    free(a.lr_schedule);
    a.lr_schedule = strdup("plateau");
    CHECK(config_difference(&a, &b, NULL, key, va, vb, sizeof key) == 1 && !strcmp(key, "train.lr_decay") &&
              !strcmp(va, "0.3") && !strcmp(vb, "0.5"),
          "both on the plateau schedule: train.lr_decay compared, 0.3 vs 0.5");
    config_free(&a);
    config_free(&b);
}

/* The keys that apply only to some setups. Each is refused where it does not apply
 * when a person gives it (in the file or with --set), and fine there when left out;
 * fine where it applies; accepted, and then left out of config_to_json, in a recorded
 * config. */
#define CLASSIFIER "\"model\": {\"type\": \"classifier\"}"
#define CLASSIFIER_IS "model.type is \"classifier\""
#define TRANSLATION "set model.type to \"rnn\" or \"transformer\""
#define TRANSFORMER "\"model\": {\"type\": \"transformer\"}"
#define TO_TRANSFORMER "set model.type to \"transformer\""
static void test_applies(void)
{
    static const struct {
        const char *key, *value;  /* "section.name" and a JSON value for it */
        const char *off;          /* the rest of a config where it does not apply */
        const char *on;           /* ... and one where it does */
        const char *because;      /* what the message says of the deciding key */
        const char *remedy;
    } cases[] = {
        {"model.window", "5", "", "\"model\": {\"attention\": \"local_monotonic\"}", "model.attention is \"bahdanau\"",
         "remove it, or choose local_monotonic or local_predictive"},
        {"model.window", "5", "\"model\": {\"attention\": \"luong_dot\"}",
         "\"model\": {\"attention\": \"local_predictive\"}", "model.attention is \"luong_dot\"", "local_monotonic"},
        {"model.input_feed", "true", "", "\"model\": {\"attention\": \"luong_general\"}",
         "model.attention is \"bahdanau\"", "choose luong_dot"},
        {"model.input_feed", "false", "", "\"model\": {\"attention\": \"luong_concat\"}",
         "model.attention is \"bahdanau\"", "choose luong_dot"},
        {"model.scaled", "true", "\"model\": {\"attention\": \"luong_concat\"}",
         "\"model\": {\"attention\": \"luong_general\"}", "model.attention is \"luong_concat\"",
         "choose luong_dot, luong_general, local_monotonic or local_predictive"},
        {"model.scaled", "false", "", "\"model\": {\"attention\": \"local_monotonic\"}", "model.attention is \"bahdanau\"",
         "luong_dot"},
        {"data.bpe_merges", "300", "", "\"data\": {\"tokenizer\": \"bpe\"}", "data.tokenizer is \"word\"",
         "set data.tokenizer to \"bpe\""},
        {"data.bpe_merges", "300", "\"data\": {\"tokenizer\": \"char\"}", "\"data\": {\"tokenizer\": \"bpe\"}",
         "data.tokenizer is \"char\"", "set data.tokenizer to \"bpe\""},
        {"data.subword_format", "\"bpe_at\"", "", "\"data\": {\"tokenizer\": \"none\"}", "data.tokenizer is \"word\"",
         "set data.tokenizer to \"none\""},
        {"data.subword_format", "\"none\"", "\"data\": {\"tokenizer\": \"bpe\"}", "\"data\": {\"tokenizer\": \"none\"}",
         "data.tokenizer is \"bpe\"", "set data.tokenizer to \"none\""},
        {"data.spm_type", "\"bpe\"", "", "\"data\": {\"tokenizer\": \"spm\"}", "data.tokenizer is \"word\"",
         "set data.tokenizer to \"spm\""},
        {"data.spm_type", "\"unigram\"", "\"data\": {\"tokenizer\": \"spm\", \"spm_model\": \"m.model\"}",
         "\"data\": {\"tokenizer\": \"spm\"}", "data.spm_model is \"m.model\"", "remove it, or remove data.spm_model"},
        {"data.spm_vocab_size", "4000", "\"data\": {\"tokenizer\": \"bpe\"}", "\"data\": {\"tokenizer\": \"spm\"}",
         "data.tokenizer is \"bpe\"", "set data.tokenizer to \"spm\""},
        {"data.spm_vocab_size", "4000", "\"data\": {\"tokenizer\": \"spm\", \"spm_model\": \"m.model\"}",
         "\"data\": {\"tokenizer\": \"spm\", \"joint_vocab\": true}", "data.spm_model is \"m.model\"",
         "remove data.spm_model"},
        {"data.spm_model", "\"m.model\"", "\"data\": {\"tokenizer\": \"none\"}", "\"data\": {\"tokenizer\": \"spm\"}",
         "data.tokenizer is \"none\"", "set data.tokenizer to \"spm\""},
        {"data.valid_fraction", "0.2", "\"data\": {\"valid\": \"v.tsv\"}", "", "data.valid is \"v.tsv\"",
         "remove data.valid"},
        {"train.lr_decay", "0.25", "", "\"train\": {\"lr_schedule\": \"plateau\"}", "train.lr_schedule is \"constant\"",
         "set train.lr_schedule to \"plateau\""},
        {"train.patience", "4", "\"train\": {\"lr_schedule\": \"inverse_sqrt\"}",
         "\"train\": {\"lr_schedule\": \"plateau\"}", "train.lr_schedule is \"inverse_sqrt\"", "\"plateau\""},
        {"train.teacher_forcing_final", "0.25", "", "\"train\": {\"teacher_forcing_decay\": \"linear\"}",
         "train.teacher_forcing_decay is \"none\"", "set train.teacher_forcing_decay to \"linear\""},
        /* The Transformer ignored them (its decoder has no scheduled sampling): issue 27. */
        {"train.teacher_forcing", "0.8", "\"model\": {\"type\": \"transformer\"}", "",
         "model.type is \"transformer\"", "set model.type to \"rnn\""},
        {"train.teacher_forcing_decay", "\"linear\"", "\"model\": {\"type\": \"transformer\"}", "",
         "model.type is \"transformer\"", "set model.type to \"rnn\""},
        {"train.validate_every", "50", "\"data\": {\"valid_fraction\": 0}", "\"data\": {\"valid_fraction\": 0.05}",
         "data.valid is unset, data.valid_fraction is 0", "give data.valid or a data.valid_fraction above 0"},
        {"train.valid_bleu_max", "10", "\"data\": {\"valid_fraction\": 0}", "",
         "data.valid is unset, data.valid_fraction is 0", "give data.valid"},
        {"train.best_metric", "\"loss\"", "\"data\": {\"valid_fraction\": 0}",
         "\"data\": {\"valid\": \"v.tsv\"}", "data.valid_fraction is 0", "give data.valid"},
        {"train.early_stop", "3", "\"data\": {\"valid_fraction\": 0}", "", "data.valid is unset", "give data.valid"},
        /* A classifier's keys, and the translation models' that a classifier has no use for. */
        {"model.pooling", "\"mean\"", "", CLASSIFIER, "model.type is \"rnn\"", "set model.type to \"classifier\""},
        {"data.text_column", "2", "\"model\": {\"type\": \"transformer\"}", CLASSIFIER,
         "model.type is \"transformer\"", "set model.type to \"classifier\""},
        {"data.label_column", "2", "", CLASSIFIER, "model.type is \"rnn\"", "set model.type to \"classifier\""},
        {"train.class_weights", "\"balanced\"", "", CLASSIFIER, "model.type is \"rnn\"",
         "set model.type to \"classifier\""},
        {"model.attention", "\"luong_dot\"", CLASSIFIER, "", CLASSIFIER_IS, TRANSLATION},
        {"model.input_feed", "true", CLASSIFIER, "\"model\": {\"attention\": \"luong_dot\"}", CLASSIFIER_IS,
         TRANSLATION},
        {"model.window", "4", CLASSIFIER, "\"model\": {\"attention\": \"local_monotonic\"}", CLASSIFIER_IS,
         TRANSLATION},
        {"model.scaled", "true", CLASSIFIER, "\"model\": {\"attention\": \"luong_dot\"}", CLASSIFIER_IS,
         TRANSLATION},
        {"model.tie_embeddings", "false", CLASSIFIER, "", CLASSIFIER_IS, TRANSLATION},
        {"data.max_len", "30", CLASSIFIER, "", CLASSIFIER_IS, TRANSLATION},
        {"data.joint_vocab", "true", CLASSIFIER, "", CLASSIFIER_IS, TRANSLATION},
        {"data.subword_format", "\"bpe_at\"", "\"model\": {\"type\": \"classifier\"}, \"data\": {\"tokenizer\": \"none\"}",
         "\"data\": {\"tokenizer\": \"none\"}", CLASSIFIER_IS, TRANSLATION},
        {"train.valid_bleu_max", "10", CLASSIFIER, "", CLASSIFIER_IS, TRANSLATION},
        {"train.teacher_forcing", "0.5", CLASSIFIER, "", CLASSIFIER_IS, TRANSLATION},
        {"train.teacher_forcing_decay", "\"linear\"", CLASSIFIER, "", CLASSIFIER_IS, TRANSLATION},
        {"train.teacher_forcing_final", "0.25", CLASSIFIER, "\"train\": {\"teacher_forcing_decay\": \"linear\"}",
         CLASSIFIER_IS, TRANSLATION},
        {"train.batch_tokens", "500", "\"train\": {\"bucket\": true}", "", "train.bucket is true",
         "set train.bucket to false"},
        /* The Transformer's own dropout rates. */
        {"model.attention_dropout", "0.1", "", TRANSFORMER, "model.type is \"rnn\"", TO_TRANSFORMER},
        {"model.activation_dropout", "0", CLASSIFIER, TRANSFORMER, CLASSIFIER_IS, TO_TRANSFORMER},
        /* Growing vocabularies: fine-tuning only. */
        {"train.extend_vocab", "true", "", "\"train\": {\"init_from\": \"m.bin\"}", "train.init_from is unset",
         "give train.init_from (nmt train --init-from MODEL.bin)"},
    };
    char text[600], label[200], set[80];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *key = cases[i].key, *dot = strchr(key, '.');
        char section[16];
        snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
        /* The config: data.train, the setup, and the key in its own section object (JSON
         * allows a section twice; config.c reads both). */
        const char *setups[2] = {cases[i].off, cases[i].on};
        for (int on = 0; on < 2; on++) {
            Config c;
            Error err;
            const char *setup = setups[on];
            snprintf(text, sizeof text, "{\"data\": {\"train\": \"t\"}%s%s, \"%s\": {\"%s\": %s}}", *setup ? ", " : "",
                     setup, section, dot + 1, cases[i].value);
            int rc = written(&c, text, &err);
            if (!on) {
                int ok = rc == -1 && !strncmp(err.msg, "cfg.json: ", 10) && strstr(err.msg, key) &&
                         strstr(err.msg, "applies only") && strstr(err.msg, cases[i].because) &&
                         strstr(err.msg, cases[i].remedy);
                snprintf(label, sizeof label, "%s=%s where it does not apply (%s): refused, naming it, %s and what to do",
                         key, cases[i].value, *setup ? setup : "defaults", cases[i].because);
                CHECK(ok, label);
                if (!ok) fprintf(stderr, "  rc %d: %s\n", rc, err.msg);
            } else {
                snprintf(label, sizeof label, "%s=%s where it applies (%s): accepted and written by config_to_json", key,
                         cases[i].value, *setup ? setup : "defaults");
                char *json = rc == 0 ? config_to_json(&c) : NULL;
                CHECK(rc == 0 && config_applies(&c, key) && json_has(json, key), label);
                if (rc) fprintf(stderr, "  %s\n", err.msg);
                free(json);
            }
            config_free(&c);

            if (on) continue;
            /* Left at its default there: fine. */
            snprintf(text, sizeof text, "{\"data\": {\"train\": \"t\"}%s%s}", *setup ? ", " : "", setup);
            rc = written(&c, text, &err);
            snprintf(label, sizeof label, "%s left out where it does not apply (%s): accepted", key,
                     *setup ? setup : "defaults");
            CHECK(rc == 0, label);
            if (rc) fprintf(stderr, "  %s\n", err.msg);
            /* Given with --set over that config: refused, naming --set. */
            snprintf(set, sizeof set, "%s=%s", key, cases[i].value);
            int set_rc = rc == 0 ? config_set(&c, set, &err) : -1;
            rc = set_rc == 0 ? config_check(&c, "cfg.json", &err) : -2;
            /* -2: the --set's doing (nmt train makes it a usage error, exit 2). */
            snprintf(label, sizeof label, "--set %s where it does not apply: refused (-2), the message starting --set:",
                     set);
            CHECK(rc == -2 && !strncmp(err.msg, "--set: ", 7) && strstr(err.msg, key) && strstr(err.msg, "remove it"),
                  label);
            if (rc != -2) fprintf(stderr, "  rc %d: %s\n", rc, err.msg);
            config_free(&c);

            /* In a recorded config (a model file's CONF section): accepted, and left out
             * of config_to_json, whose output a person's check then accepts; but a model
             * switch on where it does not apply describes no valid model (below). */
            if (!strncmp(key, "model.", 6) && !strcmp(cases[i].value, "true")) continue;
            snprintf(text, sizeof text, "{\"data\": {\"train\": \"t\"}%s%s, \"%s\": {\"%s\": %s}}", *setup ? ", " : "",
                     setup, section, dot + 1, cases[i].value);
            rc = parse(&c, text, &err);
            char *json = rc == 0 ? config_to_json(&c) : NULL;
            Config back;
            int back_rc = json ? written(&back, json, &err) : -1;
            snprintf(label, sizeof label, "%s in a recorded config where it does not apply: accepted, left out of "
                     "config_to_json, whose output loads as a person's", key);
            CHECK(rc == 0 && !config_applies(&c, key) && !json_has(json, key) && back_rc == 0, label);
            if (back_rc) fprintf(stderr, "  %s\n", err.msg);
            if (json) config_free(&back);
            free(json);
            config_free(&c);
        }
    }

    /* An --set that makes a key of the file inapplicable names the key, from the file. */
    Config c;
    Error err;
    CHECK(written(&c, "{\"data\": {\"train\": \"t\", \"tokenizer\": \"bpe\", \"bpe_merges\": 500}}", &err) == 0 &&
              config_set(&c, "data.tokenizer=word", &err) == 0 && config_check(&c, "cfg.json", &err) == -1 &&
              strstr(err.msg, "cfg.json: data.bpe_merges applies only to the bpe tokenizer (data.tokenizer is \"word\")"),
          "--set data.tokenizer=word over a file with data.bpe_merges: refused, naming data.bpe_merges and the file");
    config_free(&c);
    /* The message in full, as docs/configuration.md shows it. */
    CHECK(written(&c, "{\"data\": {\"train\": \"t\"}, \"model\": {\"window\": 5}}", &err) == -1 &&
              !strcmp(err.msg, "cfg.json: model.window applies only to local attention kinds (model.attention is "
                               "\"bahdanau\"): remove it, or choose local_monotonic or local_predictive"),
          "the whole message for model.window with bahdanau");
    config_free(&c);
    /* Keys that apply to every setup: data.joint_vocab with words, warmup with the
     * constant schedule, teacher_forcing without a decay. */
    CHECK(written(&c, "{\"data\": {\"train\": \"t\", \"joint_vocab\": true}, \"train\": {\"warmup_steps\": 100,"
                      " \"teacher_forcing\": 0.8, \"teacher_forcing_decay\": \"none\"}}", &err) == 0,
          "joint_vocab with words, warmup_steps with the constant schedule, teacher_forcing alone: accepted");
    config_free(&c);
    /* A switch of the model on where it does not apply is refused even in a recorded
     * config: it describes no valid model (model.c's rule, in use). */
    CHECK(parse(&c, "{\"data\": {\"train\": \"t\"}, \"model\": {\"input_feed\": true}}", &err) == -1 &&
              strstr(err.msg, "model.input_feed applies only to Luong attention kinds"),
          "recorded config with input_feed on and bahdanau: refused");
    config_free(&c);
    CHECK(parse(&c, "{\"data\": {\"train\": \"t\"}, \"model\": {\"scaled\": true, \"attention\": \"luong_concat\"}}",
                &err) == -1 && strstr(err.msg, "model.scaled applies only to dot-product attention kinds"),
          "recorded config with scaled on and luong_concat: refused");
    config_free(&c);
    /* ... while a size (model.window) or a switch that is off is not in use. */
    CHECK(parse(&c, "{\"data\": {\"train\": \"t\"}, \"model\": {\"window\": 3, \"input_feed\": false}}", &err) == 0,
          "recorded config with window and input_feed false beside bahdanau: accepted");
    config_free(&c);
    /* The keys given are remembered per source. */
    CHECK(written(&c, "{\"data\": {\"train\": \"t\"}}", &err) == 0 && config_given(&c, "data.train") == 1 &&
              config_given(&c, "model.window") == 0 && config_given(&c, "model.no_such_key") == -1,
          "config_given: 1 given, 0 not, -1 no such key");
    CHECK(config_set(&c, "model.hidden=8", &err) == 0 && config_given(&c, "model.hidden") == 1 &&
              config_set(&c, "model.hidden=0", &err) == -1,
          "config_set marks its key; a refused value is an error");
    config_free(&c);
}

/* Each rule of model.c's table names its key, and breaking it is refused with that key,
 * in a config (with the values) and in a ModelDims (dims_problem). */
static void test_model_rules(void)
{
    int n;
    const ModelRule *rules = model_rules(&n);
    Config c;
    config_defaults(&c);
    int named = 1;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(rules[i].key);
        named &= !strncmp(rules[i].text, rules[i].key, len) && rules[i].text[len] == ' ' &&
                 config_given(&c, rules[i].key) == 0;
        for (int j = 0; j < 2 && rules[i].depends[j]; j++)
            named &= config_given(&c, rules[i].depends[j]) == 0;
        named &= rules[i].kind == RULE_VALUE || rules[i].remedy != NULL;
    }
    config_free(&c);
    CHECK(n >= 9 && named, "model rules: each text starts with its key, every key named is a config key, each "
                           "RULE_APPLIES says what to do");

    /* One ModelDims breaking each rule. */
    const ModelDims good = {.src_vocab = 10, .tgt_vocab = 10, .embed = 8, .hidden = 8, .attention = ATT_BAHDANAU,
                            .layers = 1, .window = 10};
    CHECK(model_rule_broken(&good) == NULL && dims_problem(&good) == NULL, "model rules: a valid ModelDims breaks none");
    ModelDims d[9];
    const char *want[9];
    for (int i = 0; i < 9; i++) d[i] = good;
    d[0].cell = 2, want[0] = "model.cell must be";
    d[1].attention = ATT_KINDS, want[1] = "model.attention must be";
    d[2].layers = MAX_LAYERS + 1, want[2] = "model.layers must be from 1 to 8";
    d[3].bidirectional = 1, d[3].hidden = 7, d[3].embed = 7, want[3] = "model.hidden must be even";
    d[4].input_feed = 1, want[4] = "model.input_feed applies only to Luong attention kinds";
    d[5].attention = ATT_LOCAL_MONOTONIC, d[5].window = 0, want[5] = "model.window must be at least 1";
    d[6].scaled = 1, d[6].attention = ATT_LUONG_CONCAT, want[6] = "model.scaled applies only to dot-product";
    d[7].tie_embeddings = 1, d[7].embed = 4, want[7] = "model.tie_embeddings needs model.embed equal to model.hidden";
    d[8].attention = ATT_LUONG_DOT, d[8].window = 0, d[8].layers = 0, want[8] = NULL; /* window unused, 0 layers = 1 */
    char label[160];
    for (int i = 0; i < 9; i++) {
        const char *p = dims_problem(&d[i]);
        snprintf(label, sizeof label, "model rules: dims_problem says \"%s\"", want[i] ? want[i] : "(nothing)");
        CHECK(want[i] ? p && strstr(p, want[i]) : p == NULL, label);
        if (want[i] ? !p || !strstr(p, want[i]) : p != NULL) fprintf(stderr, "  got %s\n", p ? p : "NULL");
    }

    /* The same rules in a config, with the values that break them. */
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"bidirectional\": true, \"hidden\": 7}}",
                 "model rule in a config: hidden odd for a bidirectional encoder",
                 "model.hidden must be even for a bidirectional encoder", "model.hidden is 7",
                 "model.bidirectional is true");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"tie_embeddings\": true, \"embed\": 8, \"hidden\": 16}}",
                 "model rule in a config: tied embeddings of different sizes",
                 "model.tie_embeddings needs model.embed equal to model.hidden", "model.embed is 8",
                 "model.hidden is 16");
}

/* model.attention_dropout and model.activation_dropout: model.dropout's unless given, in
 * training (config_*_dropout), in config_to_json and in comparisons (a resume). */
static void test_dropout_rates(void)
{
    Config c, d;
    Error err;
    config_defaults(&c);
    CHECK(c.attention_dropout < 0 && c.activation_dropout < 0 && config_attention_dropout(&c) == c.dropout &&
              config_activation_dropout(&c) == c.dropout, "dropout rates: unset by default, model.dropout's");
    config_free(&c);
    const char *tr = "{\"data\": {\"train\": \"t\"}, \"model\": {\"type\": \"transformer\", \"dropout\": 0.3}}";
    CHECK(written(&c, tr, &err) == 0 && config_attention_dropout(&c) == 0.3 && config_activation_dropout(&c) == 0.3,
          "dropout rates: a Transformer with model.dropout 0.3 alone drops 0.3 everywhere");
    char *json = config_to_json(&c);
    CHECK(strstr(json, "\"attention_dropout\":\t0.3") && strstr(json, "\"activation_dropout\":\t0.3"),
          "dropout rates: config_to_json records the rates used, 0.3");
    CHECK(written(&d, json, &err) == 0 && config_attention_dropout(&d) == 0.3 && config_activation_dropout(&d) == 0.3,
          "dropout rates: the recorded config reads back with the same rates");
    char key[64], va[64], vb[64];
    CHECK(config_difference(&c, &d, NULL, key, va, vb, sizeof key) == 0,
          "dropout rates: unset and given as model.dropout's value compare equal (a resume may give either)");
    free(json);
    config_free(&d);
    CHECK(written(&d, "{\"data\": {\"train\": \"t\"}, \"model\": {\"type\": \"transformer\", \"dropout\": 0.3, "
                      "\"attention_dropout\": 0, \"activation_dropout\": 0.05}}", &err) == 0 &&
              config_attention_dropout(&d) == 0 && config_activation_dropout(&d) == 0.05,
          "dropout rates: given (0 and 0.05), they are their own, model.dropout 0.3 elsewhere");
    int differ = config_difference(&c, &d, NULL, key, va, vb, sizeof key);
    CHECK(differ && !strcmp(key, "model.attention_dropout") && !strcmp(va, "0.3") && !strcmp(vb, "0"),
          "dropout rates: a different rate is a difference naming the key and both values (0.3, 0)");
    config_free(&c);
    config_free(&d);
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"type\": \"transformer\", \"attention_dropout\": 1}}",
                 "attention_dropout 1", "model.attention_dropout must be a number >= 0 and < 1");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"model\": {\"type\": \"transformer\", \"activation_dropout\": -0.1}}",
                 "activation_dropout < 0", "model.activation_dropout must be a number >= 0 and < 1");
}

/* The configuration reference (docs/configuration.md) says of each key that applies
 * only to some setups what the rule's text says ("applies only to local attention kinds"). */
static void test_readme(void)
{
    FILE *f = fopen("docs/configuration.md", "r");
    CHECK(f != NULL, "docs/configuration.md readable (run from the repository root)");
    if (!f) return;
    static char readme[1 << 20];
    size_t n = fread(readme, 1, sizeof readme - 1, f);
    CHECK(n < sizeof readme - 1, "docs/configuration.md read whole (under 1 MiB)");
    fclose(f);
    readme[n] = 0;
    const char *key, *text;
    int i = 0;
    char row[80], label[200];
    for (; config_applies_only(i, &key, &text); i++) {
        if (strncmp(text, key, strlen(key)) || text[strlen(key)] != ' ') {
            CHECK(0, "a rule's text starts with its key");
            continue;
        }
        snprintf(row, sizeof row, "\n| `%s` |", key);
        const char *at = strstr(readme, row), *end = at ? strchr(at + 1, '\n') : NULL;
        const char *phrase = text + strlen(key) + 1, *found = at ? strstr(at, phrase) : NULL;
        snprintf(label, sizeof label, "docs/configuration.md: the row of %s says \"%s\"", key, phrase);
        CHECK(found && found < end, label);
    }
    CHECK(i == 54, "docs/configuration.md: the 54 rules of keys that apply only to some setups (test_applies has a case for each) checked");
}

/* data.user_symbols: a list of protected symbols, each checked as text/text.h says;
 * left out of config_to_json when empty (configs without it as before), a list when
 * not, and read back equal; --set takes a JSON array; config_difference and
 * config_adopt_model compare lists element by element. */
static void test_user_symbols(void)
{
    Config c, d;
    Error err;
    CHECK(parse(&c, "{\"data\": {\"train\": \"t\", \"user_symbols\": [\"<2da>\", \"{name}\"]}}", &err) == 0 &&
              c.user_symbols.n == 2 && !strcmp(c.user_symbols.v[1], "{name}"),
          "data.user_symbols: a list of strings");
    char *json = config_to_json(&c);
    CHECK(written(&d, json, &err) == 0 && d.user_symbols.n == 2 && !strcmp(d.user_symbols.v[0], "<2da>"),
          "data.user_symbols: config_to_json writes it, and it reads back");
    char key[64], va[64], vb[64];
    CHECK(config_difference(&c, &d, NULL, key, va, vb, sizeof key) == 0, "... equal");
    free(json);
    config_free(&d);
    config_defaults(&d);
    json = config_to_json(&d);
    CHECK(strstr(json, "user_symbols") == NULL, "no symbols: the key is left out (configs read and written as before)");
    free(json);
    d.train = strdup("t");
    CHECK(config_difference(&c, &d, NULL, key, va, vb, sizeof key) == 1 && !strcmp(key, "data.user_symbols") &&
              !strcmp(va, "[\"<2da>\", \"{name}\"]") && !strcmp(vb, "[]"),
          "config_difference names data.user_symbols, the lists as JSON");
    CHECK(config_set(&d, "data.user_symbols=[\"<b>\"]", &err) == 0 && d.user_symbols.n == 1 &&
              !strcmp(d.user_symbols.v[0], "<b>"),
          "--set data.user_symbols=[\"<b>\"]");
    CHECK(config_set(&d, "data.user_symbols=<b>", &err) == -1 && strstr(err.msg, "must be an array of strings"),
          "--set data.user_symbols=<b> (not an array): refused, saying what it takes");
    config_free(&c);
    config_free(&d);
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"user_symbols\": \"<2da>\"}}", "data.user_symbols a string",
                 "data.user_symbols must be an array of strings");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"user_symbols\": [\"<2da>\", 3]}}", "data.user_symbols with a number",
                 "data.user_symbols[1] must be a string");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"user_symbols\": [\"<a b>\"]}}", "data.user_symbols with a space",
                 "data.user_symbols[0]: \"<a b>\" holds whitespace");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"user_symbols\": [\"<unk>\"]}}", "data.user_symbols with <unk>",
                 "data.user_symbols[0]: \"<unk>\" is a reserved name");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\", \"user_symbols\": [\"<b>\", \"<b>\"]}}", "data.user_symbols twice",
                 "data.user_symbols[1]: \"<b>\" is given twice");

    /* train.init_from: the model's symbols are the run's; a config that gives others is refused. */
    Config model, run;
    CHECK(parse(&model, "{\"data\": {\"train\": \"m\", \"user_symbols\": [\"<2da>\"]}}", &err) == 0, "a model's config");
    CHECK(written(&run, "{\"data\": {\"train\": \"new\"}}", &err) == 0 &&
              config_adopt_model(&run, &model, "run.json", "m.bin", &err) == 0 && run.user_symbols.n == 1 &&
              !strcmp(run.user_symbols.v[0], "<2da>"),
          "train.init_from: the model's symbols become the run's");
    config_free(&run);
    CHECK(written(&run, "{\"data\": {\"train\": \"new\", \"user_symbols\": [\"<2sv>\"]}}", &err) == 0 &&
              config_adopt_model(&run, &model, "run.json", "m.bin", &err) == -1 &&
              strstr(err.msg, "data.user_symbols: the model m.bin has other symbols"),
          "train.init_from: other symbols given are refused, naming the key and the model");
    config_free(&run);
    config_free(&model);

    /* data.min_count and data.max_vocab build a vocabulary, which train.init_from takes
     * from the model: refused then, unless train.extend_vocab grows the model's (they
     * choose the units it adds). */
    CHECK(parse(&model, "{\"data\": {\"train\": \"m\"}}", &err) == 0, "a model's config");
    CHECK(written(&run, "{\"data\": {\"train\": \"new\", \"min_count\": 2}, \"train\": {\"init_from\": \"m.bin\"}}",
                  &err) == 0 &&
              config_adopt_model(&run, &model, "run.json", "m.bin", &err) == -1 &&
              strstr(err.msg, "data.min_count 2 builds a vocabulary") && strstr(err.msg, "train.extend_vocab"),
          "train.init_from with data.min_count: refused, naming train.extend_vocab as the way to grow the model's");
    config_free(&run);
    CHECK(written(&run, "{\"data\": {\"train\": \"new\", \"min_count\": 2, \"max_vocab\": 9000}, "
                        "\"train\": {\"init_from\": \"m.bin\", \"extend_vocab\": true}}", &err) == 0 &&
              config_adopt_model(&run, &model, "run.json", "m.bin", &err) == 0 && run.min_count == 2 &&
              run.max_vocab == 9000,
          "train.init_from with train.extend_vocab: data.min_count and data.max_vocab kept, for the units added");
    config_free(&run);
    config_free(&model);
}

int main(void)
{
    test_defaults();
    test_difference();
    test_full();
    test_errors();
    test_round_trip();
    test_load();
    test_applies();
    test_model_rules();
    test_dropout_rates();
    test_readme();
    test_user_symbols();
    return check_report("test_config");
}
