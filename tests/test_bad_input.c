/* test_bad_input.c — regression tests for what the fuzz targets (tests/fuzz/) and
 * valgrind (scripts/ci/valgrind.sh) found: each input that once crashed, leaked, hit
 * undefined behaviour or broke a documented promise stays here, inlined, so that the
 * plain `make test` (no clang needed) and `make test-sanitize` keep checking it. Also
 * the few kinds of bad input in docs/bad-input.md's table that no other test pinned.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files/config.h"    /* defines: Config, config_defaults, config_parse */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_write, modelfile_read */
#include "text/text.h"      /* defines: text_tokenize, text_normalize_line */

/* ---------------------------------------------------------------- text.c */

/* fuzz_tokenize, input "g" U+FEFF U+0301: the BOM was dropped after NFC, so the letter
 * and its combining acute stayed two code points — a token not in NFC, which
 * tokenised differently once detokenised (the BOM gone, NFC composed them to U+01F5). */
static void test_bom_between_letter_and_mark(void)
{
    static const TextOptions opts[] = {{.nfkc = 0}, {.lowercase = 1}, {.nfkc = 1}, {.lowercase = 1, .nfkc = 1}};
    for (int o = 0; o < 4; o++) {
        TokenList t;
        Error err;
        const char *in = "g\xEF\xBB\xBF\xCC\x81";
        int rc = text_tokenize(in, strlen(in), &opts[o], &t, &err);
        CHECK(rc == 0 && t.n == 1 && !strcmp(t.tokens[0], "\xC7\xB5"),
              "g, U+FEFF, U+0301: one token, NFC-composed to U+01F5");
        token_list_free(&t);
        char *once = text_normalize_line(in, strlen(in), &opts[o]);
        char *twice = once ? text_normalize_line(once, strlen(once), &opts[o]) : NULL;
        CHECK(once && twice && !strcmp(once, twice), "normalising that line twice changes nothing");
        free(once);
        free(twice);
    }
    /* Between two letters the BOM still just disappears, and a hyphen next to it is
     * between letters. */
    TokenList t;
    Error err;
    const TextOptions nfc = {0};
    CHECK(text_tokenize("a\xEF\xBB\xBF-b", 6, &nfc, &t, &err) == 0 && t.n == 1 && !strcmp(t.tokens[0], "a-b"),
          "a U+FEFF -b: one token a-b");
    token_list_free(&t);
    /* The error offset still counts the bytes of the line as given, BOMs included. */
    CHECK(text_tokenize("\xEF\xBB\xBF\xEF\xBB\xBFx\xFF", 8, &nfc, &t, &err) == -1 &&
          strstr(err.msg, "at byte 7") != NULL, "invalid UTF-8 after BOMs: offset in the original bytes");
}

/* fuzz_tokenize, input '"' U+0301 ' ' U+0326: the tokens '"'+U+0301 (an opening quote
 * with its mark) and U+0326 (an orphan mark) were glued by the detokenizer, and NFC
 * then put U+0326 (class 220) before U+0301 (230): the sentence read back as other
 * characters. A token that starts with a mark now always gets its space. */
static void test_orphan_mark_after_opening_token(void)
{
    const TextOptions nfc = {0};
    const char *in = "\"\xCC\x81 \xCC\xA6";
    char *once = text_normalize_line(in, strlen(in), &nfc);
    CHECK(once && !strcmp(once, in), "an opening quote with a mark, then an orphan mark: spaced as given");
    char *twice = once ? text_normalize_line(once, strlen(once), &nfc) : NULL;
    CHECK(twice && once && !strcmp(once, twice), "and normalising again changes nothing");
    free(once);
    free(twice);
    /* An orphan mark after a word or a closing token keeps its space too. */
    char *toks[] = {"(", "\xCC\x81x", ")", "\xCC\xA6"};
    char *s = text_detokenize(toks, 4);
    CHECK(!strcmp(s, "( \xCC\x81x) \xCC\xA6"), "detokenize: a space before every token that starts with a mark");
    free(s);
}

/* ---------------------------------------------------------------- modelfile.c */

/* fuzz_modelfile: a file whose CONF section is empty read fine, but writing it back
 * (as a checkpoint of a resumed run would) did pointer arithmetic on NULL in the
 * payload buffer (UBSan: "applying zero offset to null pointer"). */
static void test_empty_config_section(void)
{
    static const char *src[] = {"<pad>", "<unk>", "<sos>", "<eos>", "go"};
    static const char *tgt[] = {"<pad>", "<unk>", "<sos>", "<eos>", "जा"};
    ModelFile mf, back;
    Error err;
    memset(&mf, 0, sizeof mf);
    vocab_from_words(&mf.src_vocab, (char *const *)src, 5, &err);
    vocab_from_words(&mf.tgt_vocab, (char *const *)tgt, 5, &err);
    model_alloc(&mf.model, &(ModelDims){.src_vocab = 5, .tgt_vocab = 5, .embed = 2, .hidden = 2, .layers = 1});
    model_init_weights(&mf.model, 1);
    mf.config_json = xstrdup("");

    char dir[] = "/tmp/nmt_test_bad_input_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
    char path[64];
    snprintf(path, sizeof path, "%s/m.bin", dir);
    int rc = modelfile_write(path, &mf, &err);
    CHECK(rc == 0, "a model with an empty config text writes");
    rc = rc || modelfile_read(path, &back, &err);
    CHECK(rc == 0 && back.config_json && back.config_json[0] == '\0', "and reads back with an empty config text");
    if (rc == 0) {
        CHECK(modelfile_write(path, &back, &err) == 0, "and writes again");
        modelfile_free(&back);
    }
    unlink(path);
    rmdir(dir);
    modelfile_free(&mf);
}

/* ---------------------------------------------------------------- config.c */

/* JSON does not forbid a key twice; cJSON keeps both and config_parse applies them in
 * order, so the last one wins (not refused: documented in docs/bad-input.md). */
static void test_duplicate_config_keys(void)
{
    Config c;
    Error err;
    config_defaults(&c);
    int rc = config_parse(&c, "{\"data\": {\"train\": \"a.tsv\", \"train\": \"b.tsv\"},"
                              " \"data\": {\"max_len\": 7}}", "dup.json", &err);
    CHECK(rc == 0 && !strcmp(c.train, "b.tsv") && c.max_len == 7,
          "a repeated key: the last value wins; a repeated section adds its keys");
    config_free(&c);
    /* But a bad value is refused wherever it is, even if a good one follows. */
    config_defaults(&c);
    rc = config_parse(&c, "{\"data\": {\"train\": \"a\", \"max_len\": 0, \"max_len\": 5}}", "dup.json", &err);
    CHECK(rc == -1 && strstr(err.msg, "data.max_len"), "a bad value before a good repeat is still refused");
    config_free(&c);
}

int main(void)
{
    test_bom_between_letter_and_mark();
    test_orphan_mark_after_opening_token();
    test_empty_config_section();
    test_duplicate_config_keys();
    return check_report("test_bad_input");
}
