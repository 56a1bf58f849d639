/* test_config.c — the JSON training config: defaults, loading, the differences a
 * resume reports, the round trip through config_to_json (src/files/config.c), the
 * dropout rates and protected symbols. Its validation messages: test_config_errors.c;
 * the keys that apply only to some setups and model.c's rules: test_config_applies.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files/config.h" /* defines: Config, config_defaults, config_parse, config_load, config_to_json, ... */
#include "config_checks.h" /* defines: parse, written, EXPECT_ERROR, json_has */

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
    test_round_trip();
    test_load();
    test_dropout_rates();
    test_user_symbols();
    return check_report("test_config");
}
