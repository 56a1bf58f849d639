/* test_config.c — the JSON training config: defaults, loading, validation messages
 * and the round trip through config_to_json (src/config.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h" /* defines: Config, config_defaults, config_parse, config_load, config_to_json */

static int same_str(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

static int config_equal(const Config *a, const Config *b)
{
    return same_str(a->train, b->train) && same_str(a->valid, b->valid) && a->valid_fraction == b->valid_fraction &&
           a->max_len == b->max_len && a->min_count == b->min_count && a->max_vocab == b->max_vocab &&
           a->lowercase == b->lowercase && same_str(a->normalization, b->normalization) &&
           same_str(a->tokenizer, b->tokenizer) && a->bpe_merges == b->bpe_merges && a->joint_vocab == b->joint_vocab &&
           a->embed == b->embed &&
           a->hidden == b->hidden && same_str(a->attention, b->attention) && a->batch_size == b->batch_size &&
           a->epochs == b->epochs && a->max_steps == b->max_steps && a->learning_rate == b->learning_rate &&
           a->clip_norm == b->clip_norm && a->seed == b->seed && a->threads == b->threads &&
           a->log_every == b->log_every && a->checkpoint_every == b->checkpoint_every &&
           a->label_smoothing == b->label_smoothing && same_str(a->lr_schedule, b->lr_schedule) &&
           a->warmup_steps == b->warmup_steps && a->lr_decay == b->lr_decay && a->patience == b->patience &&
           a->validate_every == b->validate_every && a->valid_bleu_max == b->valid_bleu_max &&
           same_str(a->best_metric, b->best_metric) && a->early_stop == b->early_stop && a->bucket == b->bucket &&
           a->keep_checkpoints == b->keep_checkpoints && a->deterministic == b->deterministic &&
           a->max_nonfinite == b->max_nonfinite && same_str(a->dir, b->dir);
}

/* Parses text over fresh defaults; returns config_parse's status, the message in err. */
static int parse(Config *c, const char *text, Error *err)
{
    config_defaults(c);
    strcpy(err->msg, "(no message)");
    return config_parse(c, text, "cfg.json", err);
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
    CHECK(c.valid_fraction == 0.1 && c.max_len == 20 && c.min_count == 1 && c.max_vocab == 0 && c.lowercase == 1,
          "data defaults");
    CHECK(!strcmp(c.normalization, "nfc"), "normalization nfc");
    CHECK(!strcmp(c.tokenizer, "word") && c.bpe_merges == 8000 && c.joint_vocab == 0,
          "word tokens by default (bpe: 8000 merges per side)");
    CHECK(c.embed == 256 && c.hidden == 512 && !strcmp(c.attention, "bahdanau"), "model defaults");
    CHECK(!strcmp(c.cell, "gru") && c.layers == 1 && !c.bidirectional && !c.input_feed && c.window == 10 && !c.scaled &&
              c.dropout == 0 && !c.tie_embeddings, "model family defaults: one GRU layer");
    CHECK(c.batch_size == 64 && c.epochs == 10 && c.max_steps == 0 && c.learning_rate == 0.001 &&
          c.clip_norm == 5.0 && c.seed == 1 && c.threads == 2 && c.log_every == 100 && c.checkpoint_every == 1000,
          "train defaults");
    CHECK(c.label_smoothing == 0 && !strcmp(c.lr_schedule, "constant") && c.warmup_steps == 0 &&
          c.lr_decay == 0.5 && c.patience == 1 && c.validate_every == 0 && c.valid_bleu_max == 1000 &&
          !strcmp(c.best_metric, "loss") && c.early_stop == 0 && c.bucket == 1,
          "training-control defaults: today's behaviour (no smoothing, constant rate, bucketing)");
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

static void test_full(void)
{
    Config c;
    Error err;
    int rc = parse(&c, full_text, &err);
    CHECK(rc == 0, "full config parses");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
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
                 "data.tokenizer must be one of word|bpe|char, not \"sentencepiece\"");
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
                 "train.best_metric must be one of loss|bleu, not \"chrf\"");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"early_stop\": 2.5}}", "early_stop 2.5",
                 "train.early_stop must be an integer from 0 to 1000000");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"bucket\": \"yes\"}}", "bucket as a string",
                 "train.bucket must be true or false");
    EXPECT_ERROR("{\"data\": {\"train\": \"t\"}, \"train\": {\"best_metric\": \"bleu\", \"valid_bleu_max\": 0}}",
                 "best_metric bleu without validation BLEU", "train.best_metric \"bleu\"", "train.valid_bleu_max 0");
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
    /* The full config (its seed 2^53-1 needs 16 digits), the minimal one whose data.valid
     * is unset, and doubles that need 17 digits or an exponent. */
    const char *texts[] = {full_text, "{\"data\": {\"train\": \"only-train.tsv\"}}",
                           "{\"data\": {\"train\": \"t\", \"valid\": \"v\", \"valid_fraction\": 0.30000000000000004},"
                           " \"train\": {\"learning_rate\": 1.2345678901234567e-7, \"clip_norm\": 0.1234567890123456789e9}}"};
    const char *names[] = {"full config", "minimal config", "17-digit doubles"};
    char label[120];
    for (int i = 0; i < 3; i++) {
        Config a, b;
        CHECK(parse(&a, texts[i], &err) == 0, "parse before the round trip");
        char *json = config_to_json(&a);
        int rc = parse(&b, json, &err);
        snprintf(label, sizeof label, "%s: config_to_json output parses back", names[i]);
        CHECK(rc == 0, label);
        if (rc) fprintf(stderr, "  %s\nin:\n%s\n", err.msg, json);
        snprintf(label, sizeof label, "%s: round trip gives an equal config", names[i]);
        CHECK(rc == 0 && config_equal(&a, &b), label);
        if (i == 0) CHECK(strstr(json, "9007199254740991") != NULL, "the seed is written with all its digits");
        /* Every key is written. */
        const char *keys[] = {"train", "valid_fraction", "max_len", "min_count", "max_vocab", "lowercase",
                              "normalization", "embed", "hidden", "attention", "batch_size", "epochs",
                              "max_steps", "learning_rate", "clip_norm", "seed", "threads", "log_every",
                              "checkpoint_every", "label_smoothing", "lr_schedule", "warmup_steps", "lr_decay",
                              "patience", "validate_every", "valid_bleu_max", "best_metric", "early_stop", "bucket",
                              "keep_checkpoints", "deterministic", "max_nonfinite", "dir"};
        int all = 1;
        char quoted[64];
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            snprintf(quoted, sizeof quoted, "\"%s\"", keys[k]);
            all = all && strstr(json, quoted);
        }
        snprintf(label, sizeof label, "%s: config_to_json writes every key that has a value", names[i]);
        CHECK(all, label);
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
    size_t pad = 10000, n = strlen(full_text);
    char *text = malloc(pad + n);
    memset(text, ' ', pad);
    memcpy(text + pad, full_text, n);
    CHECK(write(fd, text, pad + n) == (ssize_t)(pad + n), "write temp config");
    close(fd);
    config_defaults(&c);
    int rc = config_load(&c, path, &err);
    CHECK(rc == 0 && c.batch_size == 32 && !strcmp(c.train, "data/मराठी.tsv"), "config_load reads a 10 kB file");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    config_free(&c);

    /* Syntax errors name the file, with the line. */
    FILE *f = fopen(path, "w");
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
}

int main(void)
{
    test_defaults();
    test_difference();
    test_full();
    test_errors();
    test_round_trip();
    test_load();
    return check_report("test_config");
}
