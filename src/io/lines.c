/* lines.c — bounded line reading and batches of lines; see lines.h. */
#include "io/lines.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


size_t lines_max(const LineLimit *limit)
{
    return limit && limit->max_bytes > 0 ? (size_t)limit->max_bytes : (size_t)LINES_MAX_BYTES;
}

static const char *limit_option(const LineLimit *limit)
{
    return limit && limit->option ? limit->option : "--max-line-bytes";
}

int lines_too_long(Error *err, const char *name, long number, const LineLimit *limit)
{
    return error_set(err, "%s line %ld: longer than %zu bytes (the limit; %s raises it)", name, number,
                     lines_max(limit), limit_option(limit));
}

int lines_read_error(Error *err, const char *name)
{
    return error_set(err, "%s: read error: %s", name, strerror(errno ? errno : EIO));
}

/* ------------------------------------------------------------------------- */
/* One line                                                                   */
/* ------------------------------------------------------------------------- */

enum { BLOCK_BYTES = 1 << 16 };

void line_reader_init(LineReader *r, FILE *in, const LineLimit *limit)
{
    memset(r, 0, sizeof *r);
    r->in = in;
    r->max = lines_max(limit);
    r->block = xmalloc(BLOCK_BYTES);
    /* fread would wait for a whole block from a pipe or a terminal; read(2) returns what
     * has arrived. (An in-memory stream has no descriptor: a block at a time.) */
    struct stat st;
    r->by_line = fstat(fileno(in), &st) == 0 &&
                 (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode));
}

void line_reader_free(LineReader *r)
{
    free(r->block);
    r->block = NULL;
}

/* Refills the (used up) block: 1 if it now holds bytes, 0 at the end of the input, -1
 * on a read error. */
static int fill(LineReader *r)
{
    size_t got = 0;
    if (r->by_line) {
        ssize_t n;
        do
            n = read(fileno(r->in), r->block, BLOCK_BYTES);
        while (n < 0 && errno == EINTR);
        if (n < 0) return -1;  /* errno says why */
        got = (size_t)n;
    } else {
        got = fread(r->block, 1, BLOCK_BYTES, r->in);
    }
    r->at = 0;
    r->end = got;
    if (!r->by_line && ferror(r->in)) return -1;  /* even after some bytes: a line cut by an error is no line */
    if (got > 0) return 1;
    r->eof = 1;   /* a terminal is not asked twice */
    return 0;
}

int line_reader_ready(const LineReader *r)
{
    if (!r->by_line || r->eof || memchr(r->block + r->at, '\n', r->end - r->at)) return 1;
    struct pollfd p = {.fd = fileno(r->in), .events = POLLIN};
    return poll(&p, 1, 0) > 0; /* bytes, the end of the input, or an error: no waiting */
}

/* *buf with room for `need` bytes, growing by doubling up to max + 3 (the limit, a CR,
 * the LF, the NUL; need never exceeds it). */
static void reserve(char **buf, size_t *cap, size_t need, size_t max)
{
    if (need <= *cap) return;
    size_t grown = *cap < 64 ? 128 : 2 * *cap;
    if (grown < need) grown = need;
    *cap = grown < max + 3 ? grown : max + 3;
    *buf = xrealloc(*buf, *cap);
}

ssize_t line_read(LineReader *r, char **buf, size_t *cap, int skip)
{
    size_t n = 0, max = r->max;
    int too_long = 0;
    for (;;) {
        if (r->at == r->end) {
            int got = r->eof ? 0 : fill(r);
            if (got < 0) return LINE_ERROR;
            if (got == 0) break;
        }
        const char *from = r->block + r->at;
        const char *nl = memchr(from, '\n', r->end - r->at);
        size_t take = nl ? (size_t)(nl - from) + 1 : r->end - r->at;
        r->at += take;
        if (!too_long) {
            size_t bytes = n + take - (nl != NULL); /* the line's so far, without the LF */
            /* Byte max + 1 may be the CR of a CR LF (or of the input's very end). */
            too_long = bytes > max + 1 || (bytes == max + 1 && (max >= n ? from[max - n] : (*buf)[max]) != '\r');
            if (too_long && !skip) break;
            if (!too_long) {
                reserve(buf, cap, n + take + 1, max);
                memcpy(*buf + n, from, take);
                n += take;
            }
        }
        if (nl) break;
    }
    if (too_long) {
        reserve(buf, cap, 1, max);
        (*buf)[0] = 0;
        r->number++;
        return LINE_TOO_LONG;
    }
    if (n == 0) return LINE_EOF;
    (*buf)[n] = 0;
    r->number++;
    return (ssize_t)n;
}

int lines_check_file(const char *path, const LineLimit *limit, Error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return error_set(err, "%s: %s", path, strerror(errno));
    struct stat st;
    if (isatty(fileno(f)) || (fstat(fileno(f), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))) {
        fclose(f);
        return 0;
    }
    LineReader r;
    line_reader_init(&r, f, limit);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = line_read(&r, &line, &cap, 0)) >= 0) {}
    int status = len == LINE_TOO_LONG ? lines_too_long(err, path, r.number, limit)
               : len == LINE_ERROR    ? lines_read_error(err, path)
                                      : 0;
    line_reader_free(&r);
    free(line);
    fclose(f);
    return status;
}

/* ------------------------------------------------------------------------- */
/* Batches                                                                    */
/* ------------------------------------------------------------------------- */

/* lines_read_batches and lines_read_windows: up to `most` lines at a time, and with
 * idle_bytes > 0 fewer when they hold that many bytes or when no further line has
 * arrived yet. */
static int read_groups(FILE *in, const char *in_name, int most, size_t idle_bytes, const char *what,
                       const LineLimit *limit, const char *empty_note, const char *nul_note, LineBatchFn fn, void *ctx,
                       long *count, Error *err)
{
    char **lines = xcalloc(most, sizeof(char *));
    size_t *caps = xcalloc(most, sizeof(size_t)), bytes = 0;
    char *warned = xcalloc(most, 1);
    LineReader r;
    line_reader_init(&r, in, limit);
    int n = 0, status = 0;
    ssize_t len;
    long number = 0;
    while (status == 0) {
        if (n > 0 && idle_bytes > 0 && (bytes >= idle_bytes || !line_reader_ready(&r))) {
            status = fn(ctx, lines, warned, n, number - n + 1, err);
            n = 0;
            bytes = 0;
            continue;
        }
        len = line_read(&r, &lines[n], &caps[n], 1);
        if (len == LINE_EOF) break;
        if (len == LINE_ERROR) {
            status = lines_read_error(err, in_name);
            break;
        }
        number = r.number;
        char *line = lines[n];
        warned[n] = 0;
        if (len == LINE_TOO_LONG) {
            Error why;
            lines_too_long(&why, in_name, number, limit);
            fprintf(stderr, "nmt: warning: %s; %s\n", why.msg, empty_note);
            warned[n] = 1;
            len = 0;
        }
        if (number == 1 && len >= 8 && memcmp(line, MODELFILE_MAGIC, 8) == 0) {
            status = error_set(err, "%s: an nmt model file, not text to %s (one MODEL.bin comes first; the other "
                                    "arguments are text files)", in_name, what);
            break;
        }
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (len > 0 && line[len - 1] == '\r') line[--len] = 0;
        if ((size_t)len != strlen(line)) {
            if (nul_note) fprintf(stderr, "nmt: warning: %s line %ld: NUL byte; %s\n", in_name, number, nul_note);
            warned[n] = nul_note != NULL;
            line[0] = 0;
        }
        bytes += (size_t)len;
        if (++n == most) {
            status = fn(ctx, lines, warned, n, number - n + 1, err);
            n = 0;
            bytes = 0;
        }
    }
    if (status == 0 && n > 0) status = fn(ctx, lines, warned, n, number - n + 1, err);
    *count = number;
    line_reader_free(&r);
    for (int i = 0; i < most; i++)
        free(lines[i]);
    free(lines);
    free(caps);
    free(warned);
    return status;
}

int lines_read_batches(FILE *in, const char *in_name, int batch, const char *what, const LineLimit *limit,
                       const char *empty_note, const char *nul_note, LineBatchFn fn, void *ctx, long *count,
                       Error *err)
{
    return read_groups(in, in_name, batch, 0, what, limit, empty_note, nul_note, fn, ctx, count, err);
}

int lines_read_windows(FILE *in, const char *in_name, int window, size_t window_bytes, const char *what,
                       const LineLimit *limit, const char *empty_note, const char *nul_note, LineBatchFn fn,
                       void *ctx, long *count, Error *err)
{
    return read_groups(in, in_name, window, window_bytes > 0 ? window_bytes : 1, what, limit, empty_note, nul_note,
                       fn, ctx, count, err);
}
