/* tsv.c — sentence-pair files; see tsv.h for the format and what counts as malformed. */
#include "data/tsv.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <utf8proc.h>

#include "io/lines.h"  // defines: line_read, lines_too_long, lines_read_error
#include "text/text.h"   // defines: text_is_space

/* ------------------------------------------------------------------------- */
/* One line                                                                   */
/* ------------------------------------------------------------------------- */

static void note_malformed(TsvCorpus *c, int line, const char *reason)
{
    if (c->n_malformed < TSV_BAD_LINES_KEPT) {
        c->bad_lines[c->n_malformed] = line;
        c->bad_reasons[c->n_malformed] = reason;
    }
    c->n_malformed++;
}

static int is_ascii_space(char ch)
{
    return ch == ' ' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* Narrows [*s, *s + *n) to drop leading and trailing ASCII whitespace. */
static void trim(const char **s, size_t *n)
{
    while (*n > 0 && is_ascii_space(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && is_ascii_space((*s)[*n - 1]))
        (*n)--;
}

/* 1 if the bytes are not valid UTF-8. */
static int invalid_utf8(const char *s, size_t n)
{
    for (size_t at = 0; at < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at,
                                                 (utf8proc_ssize_t)(n - at), &cp);
        if (step < 0)
            return 1;
        at += (size_t)step;
    }
    return 0;
}

/* 1 if the (valid UTF-8) column has nothing but whitespace, or nothing at all. */
static int blank_column(const char *s, size_t n)
{
    for (size_t at = 0; at < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at,
                                                 (utf8proc_ssize_t)(n - at), &cp);
        if (step < 0 || !text_is_space(cp))
            return 0;
        at += (size_t)step;
    }
    return 1;
}

static char *copy_bytes(const char *s, size_t n)
{
    char *out = xmalloc(n + 1);
    memcpy(out, s, n);
    out[n] = '\0';
    return out;
}

/* Column k (1-based; 0: the last) of the line s (n bytes): 0 with [*col, *col + *col_n),
 * or -1 when the line has fewer columns; *columns gets how many it has. */
static int column(const char *s, size_t n, int k, const char **col, size_t *col_n, int *columns)
{
    int count = 1;
    for (size_t i = 0; i < n; i++)
        count += s[i] == '\t';
    *columns = count;
    if (k == 0) k = count;
    if (k > count) return -1;
    const char *at = s, *end = s + n;
    for (int i = 1; i < k; i++)
        at = (const char *)memchr(at, '\t', (size_t)(end - at)) + 1;
    const char *tab = memchr(at, '\t', (size_t)(end - at));
    *col = at;
    *col_n = (size_t)((tab ? tab : end) - at);
    return 0;
}

static void add_pair(TsvCorpus *c, const char *src, size_t src_n, const char *tgt, size_t tgt_n, int line)
{
    if (c->n == c->cap) {
        c->cap = c->cap == 0 ? 256 : c->cap > INT_MAX / 2 ? INT_MAX : 2 * c->cap;
        c->pairs = xrealloc(c->pairs, (size_t)c->cap * sizeof *c->pairs);
    }
    c->pairs[c->n++] = (TsvPair){copy_bytes(src, src_n), copy_bytes(tgt, tgt_n), line};
}

/* Adds the pair on `s` (n bytes, line terminator already removed) or accounts
 * for why it cannot. */
static void parse_line(TsvCorpus *c, const char *s, size_t n, int line)
{
    if (n == 0) {
        c->n_blank++;
        return;
    }
    if (invalid_utf8(s, n)) {
        note_malformed(c, line, "invalid UTF-8");
        return;
    }
    if (memchr(s, '\0', n)) {
        note_malformed(c, line, "NUL byte");
        return;
    }
    const char *tab = memchr(s, '\t', n);
    if (!tab) {
        note_malformed(c, line, "no tab");
        return;
    }
    const char *src = s, *tgt = tab + 1;
    size_t src_n = (size_t)(tab - s);
    size_t tgt_n = n - src_n - 1;
    const char *tab2 = memchr(tgt, '\t', tgt_n);   /* ignore columns 3.. */
    if (tab2)
        tgt_n = (size_t)(tab2 - tgt);
    trim(&src, &src_n);
    trim(&tgt, &tgt_n);
    if (blank_column(src, src_n)) {
        note_malformed(c, line, "empty source");
        return;
    }
    if (blank_column(tgt, tgt_n)) {
        note_malformed(c, line, "empty target");
        return;
    }
    add_pair(c, src, src_n, tgt, tgt_n, line);
}

/* A labelled line: the text and label columns as a pair (tsv_read_labelled). A line
 * that cannot give a label is an error (-1 with err); one whose text is unusable is
 * skipped and counted like a malformed pair. */
static int parse_labelled_line(TsvCorpus *c, const char *s, size_t n, int line, int text_col, int label_col,
                               const char *path, Error *err)
{
    if (n == 0) {
        c->n_blank++;
        return 0;
    }
    if (invalid_utf8(s, n)) {
        note_malformed(c, line, "invalid UTF-8");
        return 0;
    }
    if (memchr(s, '\0', n)) {
        note_malformed(c, line, "NUL byte");
        return 0;
    }
    const char *text, *label;
    size_t text_n, label_n;
    int columns;
    if (column(s, n, label_col, &label, &label_n, &columns) || (label_col == 0 && columns < 2))
        return error_set(err, "%s: line %d: no label: the line has %d column%s, the label is column %d (%s)", path,
                         line, columns, columns == 1 ? "" : "s", label_col ? label_col : 2,
                         label_col ? "data.label_column" : "the last, of at least 2");
    if ((label_col ? label_col : columns) == text_col)
        return error_set(err, "%s: line %d: the label column (%s%d) is the text column (%d): a classifier would "
                              "learn each label from itself; give the label's own column (data.label_column, "
                              "--label-column)", path, line, label_col ? "" : "the last, ", label_col ? label_col : columns,
                         text_col);
    trim(&label, &label_n);
    if (blank_column(label, label_n))
        return error_set(err, "%s: line %d: empty label (column %d)", path, line, label_col ? label_col : columns);
    if (column(s, n, text_col, &text, &text_n, &columns)) {
        note_malformed(c, line, "no text column");
        return 0;
    }
    trim(&text, &text_n);
    if (blank_column(text, text_n)) {
        note_malformed(c, line, "empty text");
        return 0;
    }
    add_pair(c, text, text_n, label, label_n, line);
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Whole buffers and files                                                    */
/* ------------------------------------------------------------------------- */

/* Line `line` (n bytes, its line end removed) through parse_line, or with labelled
 * (text_col >= 1) through parse_labelled_line, whose error (-1) it returns. */
static int parse_one(TsvCorpus *out, const char *s, size_t n, int line, int text_col, int label_col, const char *path,
                     Error *err)
{
    if (text_col < 1) {
        parse_line(out, s, n, line);
        return 0;
    }
    return parse_labelled_line(out, s, n, line, text_col, label_col, path, err);
}

/* Every line of buf through parse_one; stops at its first error (-1). */
static int parse_buffer(const char *buf, size_t len, TsvCorpus *out, int text_col, int label_col, const char *path,
                        Error *err)
{
    memset(out, 0, sizeof *out);
    size_t at = 0;
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        at = 3;
    /* Every pair has its own line number, so INT_MAX lines is also the most
     * pairs an int-counted corpus can hold. */
    for (int line = 1; at < len && line < INT_MAX; line++) {
        const char *nl = memchr(buf + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - buf) : len;
        size_t stop = end;
        if (stop > at && buf[stop - 1] == '\r')
            stop--;
        if (parse_one(out, buf + at, stop - at, line, text_col, label_col, path, err))
            return -1;
        at = nl ? end + 1 : len;
    }
    return 0;
}

int tsv_parse(const char *buf, size_t len, TsvCorpus *out)
{
    return parse_buffer(buf, len, out, 0, 0, NULL, NULL);
}

/* The file at path parsed as parse_buffer parses a buffer, read a line at a time
 * (lines.h): a line over the limit is an error naming it, and memory holds the pairs,
 * not the file. */
static int read_file(const char *path, const LineLimit *limit, TsvCorpus *out, int text_col, int label_col,
                     Error *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return error_set(err, "%s: %s", path, strerror(errno));

    /* fopen succeeds on a directory on Linux; reading would then fail with EISDIR,
     * but saying so up front gives the clearer message on every platform. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return error_set(err, "%s: %s", path, strerror(EISDIR));
    }

    LineReader r;
    line_reader_init(&r, f, limit);
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    for (int line = 1; rc == 0 && line < INT_MAX; line++) {
        len = line_read(&r, &buf, &cap, 0);
        if (len == LINE_EOF)
            break;
        if (len == LINE_ERROR)
            rc = lines_read_error(err, path);
        else if (len == LINE_TOO_LONG)
            rc = lines_too_long(err, path, line, limit);
        else {
            size_t at = line == 1 && len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0, stop = (size_t)len;
            if (at == stop)  /* a BOM and nothing else: no line, as in a buffer */
                break;
            if (stop > at && buf[stop - 1] == '\n')
                stop--;
            if (stop > at && buf[stop - 1] == '\r')
                stop--;
            rc = parse_one(out, buf + at, stop - at, line, text_col, label_col, path, err);
        }
    }
    line_reader_free(&r);
    free(buf);
    fclose(f);
    if (rc) tsv_free(out);
    return rc;
}

int tsv_read_pairs(const char *path, const LineLimit *limit, TsvCorpus *out, Error *err)
{
    return read_file(path, limit, out, 0, 0, err);
}

int tsv_read_labelled(const char *path, int text_col, int label_col, const LineLimit *limit, TsvCorpus *out,
                      Error *err)
{
    return read_file(path, limit, out, text_col, label_col, err);
}

void tsv_free(TsvCorpus *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->pairs[i].src);
        free(c->pairs[i].tgt);
    }
    free(c->pairs);
    memset(c, 0, sizeof *c);
}

/* ------------------------------------------------------------------------- */
/* Reporting                                                                  */
/* ------------------------------------------------------------------------- */

/* snprintf at buf + *used that never overruns and keeps *used < buflen. */
__attribute__((format(printf, 4, 5)))
static void appendf(char *buf, size_t buflen, size_t *used, const char *fmt, ...)
{
    if (*used + 1 >= buflen)
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf + *used, buflen - *used, fmt, ap);
    va_end(ap);
    if (r > 0)
        *used += (size_t)r < buflen - *used ? (size_t)r : buflen - *used - 1;
}

void tsv_describe_skipped(const TsvCorpus *c, const char *path, char *buf, size_t buflen)
{
    if (buflen == 0)
        return;
    buf[0] = '\0';
    if (c->n_malformed == 0)
        return;
    size_t used = 0;
    appendf(buf, buflen, &used, "%s: skipped %d malformed line%s (", path, c->n_malformed,
            c->n_malformed == 1 ? "" : "s");
    int kept = c->n_malformed < TSV_BAD_LINES_KEPT ? c->n_malformed : TSV_BAD_LINES_KEPT;
    for (int i = 0; i < kept; i++)
        appendf(buf, buflen, &used, "%sline %d: %s", i ? ", " : "", c->bad_lines[i], c->bad_reasons[i]);
    if (c->n_malformed > kept)
        appendf(buf, buflen, &used, ", and %d more", c->n_malformed - kept);
    appendf(buf, buflen, &used, ")");
}
