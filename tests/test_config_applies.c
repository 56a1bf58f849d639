/* test_config_applies.c — the keys of the training config that apply only to some
 * setups (config.c's table) and the rules of model.c's table: each refused where it does
 * not apply when a person gives it, and left out of config_to_json; each rule named by
 * its key; and the configuration reference (docs/configuration.md) saying what each rule
 * says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_checks.h" /* defines: parse, written, EXPECT_ERROR, json_has */
#include "models/model.h"  /* defines: ModelDims, ModelRule, model_rules, model_rule_broken, dims_problem */

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
        {"model.bag_of_words", "true", "\"model\": {\"type\": \"transformer\"}", CLASSIFIER,
         "model.type is \"transformer\"", "set model.type to \"classifier\""},
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
    CHECK(i == 55, "docs/configuration.md: the 55 rules of keys that apply only to some setups (test_applies has a case for each) checked");
}

int main(void)
{
    test_applies();
    test_model_rules();
    test_readme();
    return check_report("test_config_applies");
}
