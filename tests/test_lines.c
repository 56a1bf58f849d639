/* test_lines.c — the bounded line reader and the batches of lines (src/io/lines.c): exact
 * lines, line ends, the limit to the byte, what follows an over-long line, NUL bytes,
 * read errors; from a file (a block at a time) and from a pipe (a line at a time). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "files.h" /* defines: spit */
#include "io/lines.h" /* defines: LineReader, line_read, lines_check_file, lines_read_batches */

static char path[] = "/tmp/nmt_test_lines_XXXXXX";

/* data[0..len) as an input: from a file (pipe 0) or from a pipe a child writes (pipe 1,
 * read a line at a time). *child gets the writer's pid (0 for a file). */
static FILE *input(const char *data, size_t len, int pipe_it, pid_t *child)
{
    *child = 0;
    if (!pipe_it) {
        spit(path, data, len);
        return fopen(path, "rb");
    }
    int fds[2];
    if (pipe(fds) != 0) return NULL;
    *child = fork();
    if (*child == 0) {
        close(fds[0]);
        for (size_t at = 0; at < len;) {
            ssize_t put = write(fds[1], data + at, len - at);
            if (put <= 0) _exit(1);
            at += (size_t)put;
        }
        _exit(0);
    }
    close(fds[1]);
    return fdopen(fds[0], "rb");
}

static void done(FILE *f, pid_t child)
{
    fclose(f);
    if (child > 0) waitpid(child, NULL, 0);
}

/* The lines of data read with limit max, each as "<len:bytes>" (TOO_LONG, EOF,
 * ERROR for the codes), joined by "|", into out. */
static void read_all(const char *data, size_t len, size_t max, int skip, int pipe_it, char *out, size_t cap)
{
    pid_t child;
    FILE *f = input(data, len, pipe_it, &child);
    LineLimit limit = {(long)max, NULL};
    LineReader r;
    line_reader_init(&r, f, &limit);
    char *line = NULL;
    size_t line_cap = 0, used = 0;
    out[0] = 0;
    for (;;) {
        ssize_t n = line_read(&r, &line, &line_cap, skip);
        if (line_cap > max + 3) {
            snprintf(out, cap, "buffer of %zu bytes, limit %zu", line_cap, max);
            break;
        }
        char item[64];
        if (n >= 0) {
            snprintf(item, sizeof item, "%zd:", n);
            used += (size_t)snprintf(out + used, cap - used, "%s", item);
            for (ssize_t i = 0; i < n && used + 4 < cap; i++)
                used += (size_t)snprintf(out + used, cap - used, line[i] == '\n' ? "\\n" : line[i] == '\r' ? "\\r"
                                                                 : line[i] == 0 ? "\\0" : "%c", line[i]);
            used += (size_t)snprintf(out + used, cap - used, "|");
            continue;
        }
        snprintf(item, sizeof item, "%s@%ld", n == LINE_EOF ? "EOF" : n == LINE_ERROR ? "ERROR" : "TOO_LONG", r.number);
        used += (size_t)snprintf(out + used, cap - used, "%s", item);
        if (n != LINE_TOO_LONG || !skip) break;
        used += (size_t)snprintf(out + used, cap - used, "|");
    }
    line_reader_free(&r);
    free(line);
    done(f, child);
}

/* What read_all gives from a file and from a pipe must both be want. */
static void expect(const char *data, size_t len, size_t max, int skip, const char *want, const char *what)
{
    char got[4096], label[256];
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        read_all(data, len, max, skip, pipe_it, got, sizeof got);
        snprintf(label, sizeof label, "%s (%s)", what, pipe_it ? "a pipe" : "a file");
        CHECK(!strcmp(got, want), label);
        if (strcmp(got, want)) fprintf(stderr, "  got  %s\n  want %s\n", got, want);
    }
}
#define EXPECT(lit, max, skip, want, what) expect(lit, sizeof(lit) - 1, max, skip, want, what)

static void test_lines(void)
{
    EXPECT("one\ntwo\n", 100, 0, "4:one\\n|4:two\\n|EOF@2", "two lines, each with its LF");
    EXPECT("one\r\ntwo\r\n", 100, 0, "5:one\\r\\n|5:two\\r\\n|EOF@2", "CR LF kept, as getline keeps it");
    EXPECT("one\ntwo", 100, 0, "4:one\\n|3:two|EOF@2", "a last line without LF is a line");
    EXPECT("", 100, 0, "EOF@0", "empty input: no line");
    EXPECT("\n\n", 100, 0, "1:\\n|1:\\n|EOF@2", "empty lines");
    EXPECT("a\0b\nc\n", 100, 0, "4:a\\0b\\n|2:c\\n|EOF@2", "a NUL byte kept, the length tells it");
    EXPECT("a\rb\n", 100, 0, "4:a\\rb\\n|EOF@1", "a CR inside a line is a byte of it");
}

static void test_limit(void)
{
    /* max 4: four bytes, with a CR LF, a lone CR at the end, or nothing after. */
    EXPECT("abcd\nx\n", 4, 0, "5:abcd\\n|2:x\\n|EOF@2", "exactly the limit");
    EXPECT("abcd\r\nx\n", 4, 0, "6:abcd\\r\\n|2:x\\n|EOF@2", "the limit and a CR LF: the CR is not counted");
    EXPECT("abcd\r", 4, 0, "5:abcd\\r|EOF@1", "the limit and a CR ending the input");
    EXPECT("abcd", 4, 0, "4:abcd|EOF@1", "the limit without a LF");
    EXPECT("abcde\nx\n", 4, 0, "TOO_LONG@1", "one byte over: refused, nothing more read");
    EXPECT("abcde", 4, 0, "TOO_LONG@1", "one byte over, no LF");
    EXPECT("abcd\rx\n", 4, 0, "TOO_LONG@1", "the limit and a CR that ends nothing: over");
    EXPECT("ok\nabcdefgh\nx\n", 4, 0, "3:ok\\n|TOO_LONG@2", "a long second line: its number");
    EXPECT("ok\nabcdefgh\nx\ny", 4, 1, "3:ok\\n|TOO_LONG@2|2:x\\n|1:y|EOF@4",
           "skip: the long line dropped, the next lines read");
    EXPECT("abcdefgh", 4, 1, "TOO_LONG@1|EOF@1", "skip: a long last line without LF");

    /* A line of 300 000 bytes (longer than a block, a pipe's buffer, stdio's) with a 1024
     * limit: the buffer never grows past 1027 bytes (read_all checks every call). */
    size_t big = 300000;
    char *data = xmalloc(big + 16);
    memset(data, 'x', big);
    memcpy(data + big, "\nnext\n", 6);
    expect(data, big + 6, 1024, 1, "TOO_LONG@1|5:next\\n|EOF@2", "a 300 000-byte line then a line: skipped");
    /* ... and at 1024 <= max, the same line read whole. */
    memcpy(data + 1024, "\r\nnext\n", 7);
    char want[1100];
    snprintf(want, sizeof want, "1026:%.*s\\r\\n|5:next\\n|EOF@2", 1024, data);
    expect(data, 1031, 1024, 0, want, "1024 bytes and CR LF under the limit 1024: read whole");
    free(data);
}

static void test_read_error(void)
{
    /* fopen succeeds on a directory (Linux); reading fails with EISDIR. */
    FILE *f = fopen("tests", "rb");
    CHECK(f != NULL, "fopen a directory");
    if (!f) return;
    LineReader r;
    line_reader_init(&r, f, NULL);
    char *line = NULL;
    size_t cap = 0;
    errno = 0;
    ssize_t n = line_read(&r, &line, &cap, 0);
    CHECK(n == LINE_ERROR && errno == EISDIR && ferror(f), "a directory: LINE_ERROR, errno EISDIR, not the end");
    Error err;
    lines_read_error(&err, "tests");
    CHECK(!strcmp(err.msg, "tests: read error: Is a directory"), "lines_read_error: NAME: read error: REASON");
    line_reader_free(&r);
    free(line);
    fclose(f);
}

static void test_check_file(void)
{
    Error err = {{0}};
    LineLimit limit = {1024, "data.max_line_bytes"};
    char *data = xmalloc(3000);
    memset(data, 'x', 3000);
    data[1024] = '\n';            /* line 1: 1024 bytes */
    memcpy(data + 2049, "\r\n", 2); /* line 2: 1024 bytes and CR LF */
    spit(path, data, 2051);
    CHECK(lines_check_file(path, &limit, &err) == 0, "check_file: lines at the limit pass");
    data[2049] = 'x';             /* line 2: 1025 bytes, then a LF */
    spit(path, data, 2051);
    char want[256];
    snprintf(want, sizeof want, "%s line 2: longer than 1024 bytes (the limit; data.max_line_bytes raises it)", path);
    CHECK(lines_check_file(path, &limit, &err) == -1 && !strcmp(err.msg, want),
          "check_file: one byte over, named with the file, line, limit and key");
    spit(path, data, 3000);       /* line 2: 1975 bytes, no LF */
    CHECK(lines_check_file(path, &limit, &err) == -1 && strstr(err.msg, "line 2: longer"), "check_file: no LF");
    CHECK(lines_check_file("tests", &limit, &err) == -1 && !strcmp(err.msg, "tests: read error: Is a directory"),
          "check_file: a directory is a read error");
    CHECK(lines_check_file("/nonexistent-nmt/x", &limit, &err) == -1 && strstr(err.msg, "No such file"),
          "check_file: a missing file");
    free(data);
}

/* lines_read_batches' callback: records each line and its warned flag as "line/flag". */
static int record(void *ctx, char **lines, const char *warned, int n, long first_number, Error *err)
{
    (void)err;
    char *out = ctx;
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), 1024 - strlen(out), "%ld:%s/%d ", first_number + i, lines[i], warned[i]);
    return 0;
}

static void test_batches(void)
{
    /* The warnings go to stderr: to /dev/null for the test. */
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    char got[1024] = "";
    long count = 0;
    Error err;
    LineLimit limit = {1024, NULL};
    char *data = xmalloc(2000);
    memset(data, 'x', 2000);
    memcpy(data, "a\r\n", 3);
    memcpy(data + 1500, "\nb\0c\nd", 6);  /* line 2: 1497 bytes; line 3 a NUL byte; line 4 no LF */
    spit(path, data, 1506);
    FILE *f = fopen(path, "rb");
    int rc = lines_read_batches(f, "x.txt", 3, "translate", &limit, "translated as empty", "translated as empty",
                                record, got, &count, &err);
    fclose(f);
    CHECK(rc == 0 && count == 4 && !strcmp(got, "1:a/0 2:/1 3:/1 4:d/0 "),
          "batches: line ends removed; over the limit and NUL passed empty, flagged as warned");
    if (strcmp(got, "1:a/0 2:/1 3:/1 4:d/0 ")) fprintf(stderr, "  got %s\n", got);

    got[0] = 0;
    f = fopen(path, "rb");
    rc = lines_read_batches(f, "x.txt", 2, "classify", &limit, "an empty line out", NULL, record, got, &count, &err);
    fclose(f);
    CHECK(rc == 0 && !strcmp(got, "1:a/0 2:/1 3:/0 4:d/0 "), "batches: without nul_note, a NUL line is not flagged");

    f = fopen("tests", "rb");
    rc = lines_read_batches(f, "tests", 2, "translate", NULL, "", "", record, got, &count, &err);
    fclose(f);
    CHECK(rc == -1 && !strcmp(err.msg, "tests: read error: Is a directory"), "batches: a read error is an error");
    free(data);
    dup2(saved, 2);
    close(saved);
    close(null);
}

int main(void)
{
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 2;
    }
    close(fd);
    test_lines();
    test_limit();
    test_read_error();
    test_check_file();
    test_batches();
    unlink(path);
    return check_report("test_lines");
}
