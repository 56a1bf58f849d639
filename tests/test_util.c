/* test_util.c — src/base/util.c: error messages too long for an Error keep their reason,
 * and the memory limit training is checked against.
 *
 * error_set formats into a fixed ERROR_LEN (512) bytes. A message about a path of
 * 5,000 characters used to lose its end, the reason ("No such file or directory"):
 * now the longest space-free runs (paths) are cut in the middle to "..." until it fits,
 * and only a message without long runs is cut at its end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "base/util.h"

/* 1 if s is whole UTF-8: no sequence cut short, no stray continuation byte. */
static int whole_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int more = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2 : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (more < 0) return 0;
        p++;
        for (int i = 0; i < more; i++, p++)
            if ((*p & 0xC0) != 0x80) return 0;
    }
    return 1;
}

static int ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n >= m && !strcmp(s + n - m, end);
}

/* A path of n bytes: "/tmp/" then directories of 9 letters and a slash. */
static char *long_path(size_t n)
{
    char *p = malloc(n + 1);
    strcpy(p, "/tmp/");
    for (size_t i = 5; i < n; i++)
        p[i] = i % 10 == 4 ? '/' : (char)('a' + i % 10);
    p[n] = 0;
    return p;
}

static void test_short_messages(void)
{
    Error err;
    CHECK(error_set(&err, "%s: %s", "m.bin", "No such file or directory") == -1, "error_set returns -1");
    CHECK(!strcmp(err.msg, "m.bin: No such file or directory"), "a short message as formatted");
    /* Exactly ERROR_LEN - 1 bytes: as it is. */
    char *p = long_path(ERROR_LEN - 1 - strlen(": gone"));
    error_set(&err, "%s: gone", p);
    CHECK(strlen(err.msg) == ERROR_LEN - 1 && !strncmp(err.msg, p, strlen(p)) && ends_with(err.msg, ": gone"),
          "a message of ERROR_LEN - 1 bytes: unchanged");
    free(p);
    CHECK(error_set(NULL, "x") == -1, "error_set(NULL, ...) returns -1");
    /* err->msg as an argument: formatted before err->msg is written. */
    error_set(&err, "inner reason");
    error_set(&err, "outer: %s", err.msg);
    CHECK(!strcmp(err.msg, "outer: inner reason"), "err->msg as an argument of error_set on err");
}

static void test_long_path(void)
{
    Error err;
    char *p = long_path(5000);
    error_set(&err, "%s: No such file or directory", p);
    CHECK(strlen(err.msg) <= ERROR_LEN - 1, "a 5,000-character path: the message fits");
    CHECK(ends_with(err.msg, ": No such file or directory"), "... and keeps its reason");
    CHECK(!strncmp(err.msg, p, 200) && strstr(err.msg, "...") && strlen(err.msg) == ERROR_LEN - 1,
          "... the path's start, \"...\", as much of the path as fits");
    /* The path's end stays too: its last 24 bytes before the reason. */
    char want_end[64];
    snprintf(want_end, sizeof want_end, "%s: No such file or directory", p + 5000 - 24);
    CHECK(ends_with(err.msg, want_end), "... and the path's end");
    if (!ends_with(err.msg, want_end)) fprintf(stderr, "  %s\n", err.msg);

    /* Two long paths and a reason: both cut, the reason whole. */
    char *q = long_path(3000);
    error_set(&err, "cannot rename %s to %s: Permission denied", p, q);
    CHECK(strlen(err.msg) <= ERROR_LEN - 1 && !strncmp(err.msg, "cannot rename /tmp/", 19) &&
              strstr(err.msg, " to /tmp/") && ends_with(err.msg, ": Permission denied"),
          "two long paths: both shortened, the words between and the reason kept");
    free(q);

    /* A path of 3-byte characters (Devanagari): cut between characters. */
    char deva[6000] = "/";
    for (int i = 0; i < 1500; i++)
        strcat(deva, "\xE0\xA4\x98");  /* घ */
    error_set(&err, "%s: File name too long", deva);
    CHECK(strlen(err.msg) <= ERROR_LEN - 1 && ends_with(err.msg, ": File name too long") && whole_utf8(err.msg),
          "a path of multibyte characters: cut between characters, the reason kept");
    free(p);
}

static void test_plain_cut(void)
{
    /* No run long enough to shorten: the end is cut, as before, between characters. */
    char words[3000] = "";
    for (int i = 0; i < 300; i++)
        strcat(words, "w\xC3\xA9rd ");
    Error err;
    error_set(&err, "%s", words);
    CHECK(strlen(err.msg) <= ERROR_LEN - 1 && strlen(err.msg) >= ERROR_LEN - 4 && !strncmp(err.msg, words, 100) &&
              whole_utf8(err.msg),
          "a long message of short words: the plain cut, between characters");
    /* error_shorten directly: a run of exactly the kept length is not cut. */
    char s[200];
    memset(s, 'x', 27);
    strcpy(s + 27, " tail");
    size_t n = error_shorten(s, strlen(s), 20);
    CHECK(n == 20 && !strncmp(s, "xxxxxxxxxxxxxxxxxxxx", 20), "a run of 27 bytes and cap 20: cut at the end");
}

static void test_memory_limit(void)
{
    char what[96];
    double limit = memory_limit_bytes(what, sizeof what);
    CHECK(limit > 1e8 && what[0], "memory_limit_bytes: this machine's limit, named");
#ifdef UNDER_ASAN
    /* (ASan's shadow memory is reserved address space: an RLIMIT_AS would stop it.) */
#else
    struct rlimit old, rl;
    if (getrlimit(RLIMIT_AS, &old) != 0) {
        SKIP("memory_limit_bytes under ulimit -v", "getrlimit failed");
        return;
    }
    rl = old;
    rl.rlim_cur = (rlim_t)6000000 * 1024;  /* ulimit -v 6000000 */
    if (old.rlim_max != RLIM_INFINITY && rl.rlim_cur > old.rlim_max) rl.rlim_cur = old.rlim_max;
    if (setrlimit(RLIMIT_AS, &rl) != 0) {
        SKIP("memory_limit_bytes under ulimit -v", "setrlimit failed");
        return;
    }
    limit = memory_limit_bytes(what, sizeof what);
    char want[64];
    snprintf(want, sizeof want, "ulimit -v %llu", (unsigned long long)(rl.rlim_cur / 1024));
    CHECK(limit == (double)rl.rlim_cur && !strcmp(what, want), "memory_limit_bytes under ulimit -v: that limit");
    if (strcmp(what, want)) fprintf(stderr, "  %g, \"%s\"\n", limit, what);
    setrlimit(RLIMIT_AS, &old);
#endif
}

int main(void)
{
    test_short_messages();
    test_long_path();
    test_plain_cut();
    test_memory_limit();
    return check_report("test_util");
}
