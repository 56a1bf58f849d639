/* fuzz_config.c — libFuzzer target: config_parse on arbitrary text (src/files/config.c).
 *
 * The input, NUL-terminated, is parsed over the defaults as config_load would parse a
 * file. Promises checked (config.h):
 *   - a refusal is -1 with a message that starts with the source name, and leaves a
 *     Config that config_free cleans up;
 *   - an accepted config has data.train and keeps every value in its documented range
 *     (checked through the output of config_to_json);
 *   - config_to_json of an accepted config parses back, and the second config writes
 *     the very same JSON: what `nmt train` saves as OUTPUT_DIR/config.json loads again.
 *
 * Built and run by `make fuzz` (scripts/ci/fuzz.sh) with tests/fuzz/config.dict; seeds
 * in tests/fuzz/corpus/config/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "files/config.h" // defines: Config, config_defaults, config_parse, config_to_json, config_free
#include "fuzz.h"   // defines: FUZZ_ASSERT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* config_load refuses a NUL byte before parsing; here the text simply ends there. */
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';

    Config c;
    Error err = {{0}};
    config_defaults(&c);
    int rc = config_parse(&c, text, "fuzz.json", &err);
    FUZZ_ASSERT(rc == 0 || rc == -1, "config_parse returns 0 or -1");
    if (rc != 0) {
        FUZZ_ASSERT(!strncmp(err.msg, "fuzz.json", 9) && strlen(err.msg) > 12, "a refusal names the source");
        config_free(&c);
        free(text);
        return 0;
    }
    FUZZ_ASSERT(c.train && c.train[0], "an accepted config has data.train");
    FUZZ_ASSERT(c.valid_fraction >= 0 && c.valid_fraction <= 0.5, "data.valid_fraction in range");
    FUZZ_ASSERT(c.max_len >= 1 && c.embed >= 1 && c.hidden >= 1 && c.layers >= 1 && c.layers <= 8 &&
                c.batch_size >= 1 && c.epochs >= 1 && c.learning_rate > 0 && c.dropout >= 0 && c.dropout < 1 &&
                c.label_smoothing >= 0 && c.label_smoothing < 1 && c.lr_decay > 0 && c.lr_decay < 1,
                "accepted values are in their documented ranges");
    FUZZ_ASSERT(!(c.tie_embeddings && c.embed != c.hidden) && !(c.bidirectional && c.hidden % 2),
                "accepted model keys are consistent");

    char *json = config_to_json(&c);
    FUZZ_ASSERT(json != NULL, "config_to_json returns text");
    Config back;
    config_defaults(&back);
    int rc2 = config_parse(&back, json, "round-trip.json", &err);
    if (rc2 != 0) fprintf(stderr, "fuzz: %s\n%s\n", err.msg, json);
    FUZZ_ASSERT(rc2 == 0, "config_to_json output parses back");
    char *json2 = config_to_json(&back);
    if (strcmp(json, json2)) fprintf(stderr, "fuzz: first:\n%s\nsecond:\n%s\n", json, json2);
    FUZZ_ASSERT(!strcmp(json, json2), "the parsed-back config writes the same JSON");

    free(json2);
    config_free(&back);
    free(json);
    config_free(&c);
    free(text);
    return 0;
}
