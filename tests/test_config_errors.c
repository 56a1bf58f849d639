/* test_config_errors.c — the training config's validation (src/files/config.c): every
 * malformed or out-of-range config is refused with a message naming the file, the
 * place in it or the key, and what is wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_checks.h" /* defines: parse, written, EXPECT_ERROR */
#include "text/segment.h" /* defines: TOKENIZER_NAMES */

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

int main(void)
{
    test_errors();
    return check_report("test_config_errors");
}
