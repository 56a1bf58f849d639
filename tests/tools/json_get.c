/* json_get.c — values out of a JSON document, for tests/test_serve.sh (which has no
 * python or jq to count on).
 *
 *   json_get PATH [FORMAT] < FILE.json
 *
 * PATH is keys joined by dots, a number for that element of an array (from 0), "*" for
 * every element of an array (or member of an object), e.g. translations.*.nbest.0.text; "." alone is the whole document. Each
 * value the path reaches is printed on a line of its own: a string as it is, a number
 * with FORMAT (a printf format for one double, default %.9g), true, false or null, an
 * object or array as compact JSON. "count:PATH" prints how many values PATH reaches.
 * Exit status: 0; 1 the input is not JSON; 2 usage. (Not named tests/test_*.c: those
 * are unit tests that `make test` runs.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

static const char *format = "%.9g";
static int count_only, found;

static void print(const cJSON *v)
{
    found++;
    if (count_only) return;
    if (cJSON_IsString(v)) {
        printf("%s\n", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        printf(format, v->valuedouble);
        putchar('\n');
    } else {
        char *s = cJSON_PrintUnformatted(v);
        printf("%s\n", s ? s : "?");
        free(s);
    }
}

/* Walks path (a dot-separated rest, or "" at its end) from v. */
static void walk(const cJSON *v, const char *path)
{
    if (!v) return;
    if (!*path) {
        print(v);
        return;
    }
    const char *dot = strchr(path, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    const char *rest = dot ? dot + 1 : "";
    if (n == 1 && path[0] == '*') {
        for (const cJSON *c = v->child; c && (cJSON_IsArray(v) || cJSON_IsObject(v)); c = c->next)
            walk(c, rest);
        return;
    }
    if (cJSON_IsArray(v)) {  /* a number: that element */
        char *end;
        long k = strtol(path, &end, 10);
        if (end == path + n) walk(cJSON_GetArrayItem(v, (int)k), rest);
        return;
    }
    for (const cJSON *c = cJSON_IsObject(v) ? v->child : NULL; c; c = c->next)
        if (strlen(c->string) == n && !strncmp(c->string, path, n)) walk(c, rest);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: json_get PATH [FORMAT] < FILE.json\n");
        return 2;
    }
    if (argc == 3) format = argv[2];
    const char *path = argv[1];
    if (!strncmp(path, "count:", 6)) {
        count_only = 1;
        path += 6;
    }
    size_t cap = 1 << 16, len = 0, got;
    char *text = malloc(cap);
    while (text && (got = fread(text + len, 1, cap - len, stdin)) > 0)
        if ((len += got) == cap) text = realloc(text, cap *= 2);
    cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    if (!doc) {
        fprintf(stderr, "json_get: the input is not JSON\n");
        return 1;
    }
    walk(doc, strcmp(path, ".") ? path : "");
    if (count_only) printf("%d\n", found);
    cJSON_Delete(doc);
    return 0;
}
