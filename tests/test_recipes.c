/* test_recipes.c — the shipped configs/default.json against the built-in defaults
 * (src/files/config.c): it is a small, quick recipe, not those defaults, and `nmt train
 * --help` (cli/cmd_train.c's epilogue) lists every key where the two differ, with both
 * values. A change to either that the help does not follow fails here. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cli/commands.h"  /* defines: train_options */
#include "files/config.h"  /* defines: Config, config_defaults, config_load, config_difference */

int main(void)
{
    Config built_in, recipe;
    Error err;
    config_defaults(&built_in);
    config_defaults(&recipe);
    int rc = config_load(&recipe, "configs/default.json", &err);
    CHECK(rc == 0, "configs/default.json loads (run from the repository root)");
    if (rc) fprintf(stderr, "    %s\n", err.msg);
    /* The help's text on one line, so that a phrase may span its line breaks. */
    char help[4096];
    snprintf(help, sizeof help, "%s", train_options.epilogue);
    for (char *p = help; *p; p++)
        if (*p == '\n') *p = ' ';
    /* Every difference but data.train (a recipe names its data), in config order. */
    const char *skip[64] = {"data.train"};
    char keys[64][64], key[64], a[128], b[128], phrase[400];
    int n = 1, listed = 1;
    while (rc == 0 && n < 63 && config_difference(&recipe, &built_in, skip, key, a, b, sizeof a)) {
        snprintf(keys[n], sizeof keys[n], "%s", key);
        skip[n] = keys[n];
        n++;
        snprintf(phrase, sizeof phrase, "%s %s (built-in %s)", key, a, b);
        int found = strstr(help, phrase) != NULL;
        printf("  default.json: %s\n", phrase);
        listed &= found;
        if (!found) fprintf(stderr, "    nmt train --help does not say \"%s\"\n", phrase);
    }
    int differences = n - 1;
    CHECK(rc == 0 && differences > 0 && listed, "nmt train --help lists each key where default.json differs, both values");
    int said = 0;
    for (const char *p = strstr(help, "(built-in "); p; p = strstr(p + 1, "(built-in "))
        said++;
    CHECK(said == differences, "nmt train --help lists no difference default.json does not have");
    if (said != differences) fprintf(stderr, "    %d differences, the help lists %d\n", differences, said);
    config_free(&built_in);
    config_free(&recipe);
    return check_report("test_recipes");
}
