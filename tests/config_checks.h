/* config_checks.h — what the tests of the training config share (test_config.c,
 * test_config_errors.c, test_config_applies.c): parsing text over fresh defaults, as the
 * config file (parse) or as a person's CONFIG.json, checked as nmt train checks it
 * (written); the check that a text is refused with the words it must say; whether a
 * config_to_json output holds a key.
 *
 *   parse(&c, text, &err) / written(&c, text, &err)   0, or -1 with the message in err
 *   EXPECT_ERROR(text, what, "part", ...)             CHECKs that parse refuses text,
 *                                                     the message naming cfg.json and
 *                                                     holding every part
 *   json_has(json, "section.name")                    1 if json holds the key
 */
#ifndef CONFIG_CHECKS_H
#define CONFIG_CHECKS_H
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "files/config.h" /* defines: Config, config_defaults, config_parse, config_parse_keys, config_check, ... */

/* Whether json (config_to_json's output) holds "section.name". */
static inline int json_has(const char *json, const char *full)
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
static inline int parse(Config *c, const char *text, Error *err)
{
    config_defaults(c);
    strcpy(err->msg, "(no message)");
    return config_parse(c, text, "cfg.json", err);
}

/* Parses text as a person's config (its keys marked as given) over fresh defaults and
 * checks it, as nmt train CONFIG.json does. */
static inline int written(Config *c, const char *text, Error *err)
{
    config_defaults(c);
    strcpy(err->msg, "(no message)");
    return config_parse_keys(c, text, "cfg.json", CONFIG_WRITTEN, err) || config_check(c, "cfg.json", err) ? -1 : 0;
}

/* text must be refused with a message holding every string in want (NULL-ended). */
static inline void expect_error(const char *text, const char *const *want, const char *what)
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
#endif
