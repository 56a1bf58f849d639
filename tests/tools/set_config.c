/* set_config.c — a model file whose stored config (section CONF) says something its
 * architecture sections do not, written with valid checksums, for tests/test_mixups.sh.
 *
 *   set_config IN.bin OUT.bin SECTION.KEY VALUE
 *
 * Reads IN.bin (any model or checkpoint nmt reads), sets SECTION.KEY of its CONF text
 * (a JSON object) to VALUE (JSON: 4, "gelu", true), and writes OUT.bin the way nmt
 * writes model files, so that every CRC holds: only the two descriptions of the model
 * disagree, as in a file edited by hand or by another program. Exit status: 0 written;
 * 1 a file cannot be read or written, or CONF is not an object with that section; 2
 * usage. (Not named tests/test_*.c: those are unit tests that `make test` runs.)
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/modelfile.h" /* defines: ModelFile, modelfile_read, modelfile_write, modelfile_free */

int main(int argc, char **argv)
{
    if (argc != 5 || !strchr(argv[3], '.')) {
        fprintf(stderr, "usage: set_config IN.bin OUT.bin SECTION.KEY VALUE\n");
        return 2;
    }
    cJSON *value = cJSON_Parse(argv[4]);
    if (!value) {
        fprintf(stderr, "set_config: %s is not JSON\n", argv[4]);
        return 2;
    }
    ModelFile mf;
    Error err;
    if (modelfile_read(argv[1], &mf, &err)) {
        fprintf(stderr, "set_config: %s\n", err.msg);
        cJSON_Delete(value);
        return 1;
    }
    char section[64];
    const char *dot = strchr(argv[3], '.');
    snprintf(section, sizeof section, "%.*s", (int)(dot - argv[3]), argv[3]);
    cJSON *conf = cJSON_Parse(mf.config_json);
    cJSON *sec = cJSON_GetObjectItemCaseSensitive(conf, section);
    int status = 0;
    if (!cJSON_IsObject(sec)) {
        fprintf(stderr, "set_config: %s: no section %s in CONF\n", argv[1], section);
        cJSON_Delete(value);
        status = 1;
    } else {
        cJSON_DeleteItemFromObjectCaseSensitive(sec, dot + 1);
        cJSON_AddItemToObject(sec, dot + 1, value);
        free(mf.config_json);
        mf.config_json = cJSON_Print(conf);
        if (modelfile_write(argv[2], &mf, &err)) {
            fprintf(stderr, "set_config: %s\n", err.msg);
            status = 1;
        }
    }
    cJSON_Delete(conf);
    modelfile_free(&mf);
    return status;
}
