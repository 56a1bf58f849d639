/* test_tsv.c — reading sentence-pair files (src/data/tsv.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files.h" // defines: spit
#include "data/tsv.h"   // defines: tsv_parse, tsv_read_pairs, tsv_read_labelled, tsv_describe_skipped

/* Parses a string literal (sizeof - 1 keeps embedded NULs). */
#define PARSE(lit, c) tsv_parse(lit, sizeof(lit) - 1, c)

static int pair_is(const TsvCorpus *c, int i, const char *src, const char *tgt, int line)
{
    if (i >= c->n)
        return 0;
    const TsvPair *p = &c->pairs[i];
    int ok = strcmp(p->src, src) == 0 && strcmp(p->tgt, tgt) == 0 && p->line == line;
    if (!ok)
        fprintf(stderr, "  pair %d: [%s] [%s] line %d, want [%s] [%s] line %d\n",
                i, p->src, p->tgt, p->line, src, tgt, line);
    return ok;
}

static void test_line_ends(void)
{
    TsvCorpus c;
    CHECK(PARSE("Go.\tJa.\nHi.\tNamaste.\n", &c) == 0, "LF: returns 0");
    CHECK(c.n == 2 && pair_is(&c, 0, "Go.", "Ja.", 1) && pair_is(&c, 1, "Hi.", "Namaste.", 2), "LF pairs");
    CHECK(c.n_malformed == 0 && c.n_blank == 0, "LF: nothing skipped");
    tsv_free(&c);

    PARSE("Go.\tJa.\r\nHi.\tNamaste.\r\n", &c);
    CHECK(c.n == 2 && pair_is(&c, 0, "Go.", "Ja.", 1) && pair_is(&c, 1, "Hi.", "Namaste.", 2),
          "CRLF: CR removed");
    tsv_free(&c);

    PARSE("Go.\tJa.\nHi.\tNamaste.", &c);
    CHECK(c.n == 2 && pair_is(&c, 1, "Hi.", "Namaste.", 2), "no final newline");
    tsv_free(&c);

    PARSE("Go.\tJa.\r", &c);
    CHECK(c.n == 1 && pair_is(&c, 0, "Go.", "Ja.", 1), "final CR without LF removed");
    tsv_free(&c);

    PARSE("\xEF\xBB\xBFGo.\tJa.\n", &c);
    CHECK(c.n == 1 && pair_is(&c, 0, "Go.", "Ja.", 1), "BOM skipped");
    tsv_free(&c);

    /* Only at the very start is it a BOM; elsewhere it is text (and valid UTF-8). */
    PARSE("a\tb\n\xEF\xBB\xBF" "c\td\n", &c);
    CHECK(c.n == 2 && pair_is(&c, 1, "\xEF\xBB\xBF" "c", "d", 2), "BOM mid-file kept as text");
    tsv_free(&c);

    PARSE("", &c);
    CHECK(c.n == 0 && c.n_malformed == 0 && c.n_blank == 0, "empty buffer");
    tsv_free(&c);
    CHECK(tsv_parse(NULL, 0, &c) == 0 && c.n == 0, "NULL buffer of length 0");
    tsv_free(&c);
}

static void test_columns(void)
{
    TsvCorpus c;
    /* manythings.org: English, translation, attribution. */
    PARSE("Go.\tजा.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272\n", &c);
    CHECK(c.n == 1 && pair_is(&c, 0, "Go.", "जा.", 1), "third column ignored");
    tsv_free(&c);

    PARSE("  Go.  \t Ja. \t\n", &c);
    CHECK(c.n == 1 && pair_is(&c, 0, "Go.", "Ja.", 1), "ASCII spaces trimmed per column");
    tsv_free(&c);

    PARSE("a b\tc  d\n", &c);
    CHECK(c.n == 1 && pair_is(&c, 0, "a b", "c  d", 1), "inner spaces kept");
    tsv_free(&c);
}

static void test_malformed(void)
{
    TsvCorpus c;
    PARSE("ok\tfine\n"                 /* 1 */
          "no tab here\n"              /* 2 */
          "\n"                         /* 3 blank */
          "\tonly target\n"            /* 4 */
          "only source\t\n"            /* 5 */
          "   \t  x\n"                 /* 6 spaces-only source */
          "x\t\xC2\xA0\xE3\x80\x80\n"  /* 7 NBSP + ideographic space target */
          "bad \xC3\x28\tx\n"          /* 8 invalid UTF-8 */
          "\r\n"                       /* 9 blank after CR removal */
          "a\tb\xC0\xAF\n"             /* 10 overlong in target */
          "also\tfine\n",              /* 11 */
          &c);
    CHECK(c.n == 2 && pair_is(&c, 0, "ok", "fine", 1) && pair_is(&c, 1, "also", "fine", 11),
          "good lines kept with their line numbers");
    CHECK(c.n_blank == 2, "blank lines counted apart");
    CHECK(c.n_malformed == 7, "7 malformed lines");
    static const int want_lines[TSV_BAD_LINES_KEPT] = {2, 4, 5, 6, 7};
    static const char *const want_reasons[TSV_BAD_LINES_KEPT] = {
        "no tab", "empty source", "empty target", "empty source", "empty target"};
    for (int i = 0; i < TSV_BAD_LINES_KEPT; i++) {
        int ok = c.bad_lines[i] == want_lines[i] && strcmp(c.bad_reasons[i], want_reasons[i]) == 0;
        CHECK(ok, "first bad lines and reasons kept in order");
        if (!ok)
            fprintf(stderr, "  %d: line %d %s\n", i, c.bad_lines[i], c.bad_reasons[i]);
    }
    char msg[512];
    tsv_describe_skipped(&c, "data/x.tsv", msg, sizeof msg);
    const char *want = "data/x.tsv: skipped 7 malformed lines (line 2: no tab, line 4: empty source, "
                       "line 5: empty target, line 6: empty source, line 7: empty target, and 2 more)";
    CHECK(strcmp(msg, want) == 0, "describe: more lines than kept");
    if (strcmp(msg, want) != 0)
        fprintf(stderr, "  got  [%s]\n  want [%s]\n", msg, want);
    tsv_free(&c);

    PARSE("a\tb\nno tab\nx\t\n\xFF\tb\n", &c);
    tsv_describe_skipped(&c, "data/x.tsv", msg, sizeof msg);
    want = "data/x.tsv: skipped 3 malformed lines (line 2: no tab, line 3: empty target, line 4: invalid UTF-8)";
    CHECK(strcmp(msg, want) == 0, "describe: the brief's example");
    if (strcmp(msg, want) != 0)
        fprintf(stderr, "  got  [%s]\n  want [%s]\n", msg, want);
    tsv_free(&c);

    /* Embedded NUL bytes: valid UTF-8, but never text. */
    PARSE("a\0b\tc\nd\te\n", &c);
    CHECK(c.n == 1 && pair_is(&c, 0, "d", "e", 2), "line with NUL skipped");
    CHECK(c.n_malformed == 1 && c.bad_lines[0] == 1 && strcmp(c.bad_reasons[0], "NUL byte") == 0,
          "NUL byte reason");
    tsv_describe_skipped(&c, "f", msg, sizeof msg);
    CHECK(strcmp(msg, "f: skipped 1 malformed line (line 1: NUL byte)") == 0, "describe: singular");
    tsv_free(&c);

    /* Invalid UTF-8 wins over the other reasons; truncated sequence at end of buffer. */
    PARSE("no tab \xE2\x82", &c);
    CHECK(c.n_malformed == 1 && strcmp(c.bad_reasons[0], "invalid UTF-8") == 0,
          "truncated sequence at end of buffer");
    tsv_free(&c);

    PARSE("a\tb\n\n\n", &c);
    tsv_describe_skipped(&c, "f", msg, sizeof msg);
    CHECK(c.n == 1 && c.n_blank == 2 && c.n_malformed == 0 && msg[0] == '\0',
          "only blank lines skipped: no description");
    tsv_free(&c);

    /* A small buffer truncates, NUL-terminated. */
    PARSE("x\n", &c);
    char tiny[12];
    tsv_describe_skipped(&c, "data/x.tsv", tiny, sizeof tiny);
    CHECK(strlen(tiny) == sizeof tiny - 1 && strncmp(tiny, "data/x.tsv:", 11) == 0, "truncated description");
    tsv_free(&c);
}

/* Arbitrary bytes must neither crash nor read out of bounds (ASan checks the
 * latter): the parser is given exactly `len` heap bytes, no terminator. */
static void test_any_bytes(void)
{
    Rng rng;
    rng_seed(&rng, 7);
    static const char alphabet[] = "a\t\n\r \xC3\xA9\xE0\xA4\xFF\x80\0";
    int ok = 1;
    for (int trial = 0; trial < 300; trial++) {
        size_t len = rng_below(&rng, 64);
        char *buf = xmalloc(len);
        for (size_t i = 0; i < len; i++)
            buf[i] = alphabet[rng_below(&rng, sizeof alphabet - 1)];
        TsvCorpus c;
        tsv_parse(buf, len, &c);
        long lines = 0;
        for (size_t i = 0; i < len; i++)
            lines += buf[i] == '\n';
        lines += len > 0 && buf[len - 1] != '\n';
        if (c.n + c.n_malformed + c.n_blank != lines)
            ok = 0;
        for (int i = 0; i < c.n; i++)
            if (!c.pairs[i].src[0] || !c.pairs[i].tgt[0] || strchr(c.pairs[i].src, '\t'))
                ok = 0;
        tsv_free(&c);
        free(buf);
    }
    CHECK(ok, "random bytes: every line accounted for, kept pairs non-empty");

    /* One huge line. */
    size_t big = 1 << 20;
    char *buf = xmalloc(big);
    memset(buf, 'x', big);
    buf[big / 2] = '\t';
    TsvCorpus c;
    tsv_parse(buf, big, &c);
    CHECK(c.n == 1 && strlen(c.pairs[0].src) == big / 2 && strlen(c.pairs[0].tgt) == big / 2 - 1,
          "1 MiB line");
    tsv_free(&c);
    free(buf);
}

static void test_files(void)
{
    TsvCorpus c;
    Error err = {{0}};
    const char *missing = "/nonexistent-nmt-dir/pairs.tsv";
    CHECK(tsv_read_pairs(missing, NULL, &c, &err) == -1, "missing file: -1");
    CHECK(strstr(err.msg, missing) == err.msg && strstr(err.msg, "No such file"), "missing file: path and reason");
    CHECK(c.n == 0 && c.pairs == NULL, "missing file: corpus empty");
    tsv_free(&c);

    err.msg[0] = '\0';
    CHECK(tsv_read_pairs(".", NULL, &c, &err) == -1, "directory: -1");
    CHECK(strncmp(err.msg, ".: ", 3) == 0 && strstr(err.msg, "directory"), "directory: path in message");
    tsv_free(&c);

    /* A real file larger than the first read buffer (64 KiB). */
    char path[] = "/tmp/nmt_test_tsv_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "wb");
    fputs("\xEF\xBB\xBF", f);
    for (int i = 0; i < 10000; i++)
        fprintf(f, "source %d\ttarget %d\tattribution\r\n", i, i);
    fputs("broken", f);
    fclose(f);
    int rc = tsv_read_pairs(path, NULL, &c, &err);
    CHECK(rc == 0 && c.n == 10000, "file: 10000 pairs read");
    CHECK(c.n == 10000 && pair_is(&c, 9999, "source 9999", "target 9999", 10000), "file: last pair");
    CHECK(c.n_malformed == 1 && c.bad_lines[0] == 10001, "file: unterminated broken last line counted");
    tsv_free(&c);
    unlink(path);
}

/* 1 if a and b hold the same pairs, counts and bad lines. */
static int same_corpus(const TsvCorpus *a, const TsvCorpus *b)
{
    if (a->n != b->n || a->n_malformed != b->n_malformed || a->n_blank != b->n_blank)
        return 0;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->pairs[i].src, b->pairs[i].src) || strcmp(a->pairs[i].tgt, b->pairs[i].tgt) ||
            a->pairs[i].line != b->pairs[i].line)
            return 0;
    for (int i = 0; i < a->n_malformed && i < TSV_BAD_LINES_KEPT; i++)
        if (a->bad_lines[i] != b->bad_lines[i] || strcmp(a->bad_reasons[i], b->bad_reasons[i]))
            return 0;
    return 1;
}

/* A file is read a line at a time (lines.h), a buffer parsed whole: the two must agree
 * on any bytes, BOM, CRs, NULs and a last line without LF included. */
static void test_file_as_buffer(void)
{
    char path[] = "/tmp/nmt_test_tsv_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    close(fd);
    Rng rng;
    rng_seed(&rng, 11);
    static const char alphabet[] = "a\t\n\r \xC3\xA9\xEF\xBB\xBF\xFF\0";
    int ok = 1;
    for (int trial = 0; trial < 300 && ok; trial++) {
        size_t len = rng_below(&rng, 96);
        char *buf = xmalloc(len + 3);
        size_t at = 0;
        if (trial % 3 == 0) {  /* a BOM to skip */
            memcpy(buf, "\xEF\xBB\xBF", 3);
            at = 3;
        }
        for (size_t i = 0; i < len; i++)
            buf[at + i] = alphabet[rng_below(&rng, sizeof alphabet - 1)];
        spit(path, buf, at + len);
        TsvCorpus from_buffer, from_file;
        Error err;
        tsv_parse(buf, at + len, &from_buffer);
        ok = tsv_read_pairs(path, NULL, &from_file, &err) == 0 && same_corpus(&from_buffer, &from_file);
        if (!ok) {
            fprintf(stderr, "  trial %d: %d/%d/%d vs %d/%d/%d:", trial, from_buffer.n, from_buffer.n_malformed,
                    from_buffer.n_blank, from_file.n, from_file.n_malformed, from_file.n_blank);
            for (size_t i = 0; i < at + len; i++)
                fprintf(stderr, " %02x", (unsigned char)buf[i]);
            fprintf(stderr, "\n");
        }
        tsv_free(&from_buffer);
        tsv_free(&from_file);
        free(buf);
    }
    CHECK(ok, "300 random files: read a line at a time, the same pairs, counts and bad lines as tsv_parse");
    unlink(path);
}

/* A line over the limit is an error naming the file, the line and the option; at the
 * limit (a CR LF not counted) it is read. */
static void test_long_lines(void)
{
    char path[] = "/tmp/nmt_test_tsv_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    close(fd);
    size_t max = 2048;
    char *text = xmalloc(2 * max + 64);
    /* Line 2 is exactly max bytes, then CR LF; line 3 is max + 1. */
    size_t n = 0;
    n += (size_t)sprintf(text, "a\tb\n");
    memset(text + n, 'x', max);
    text[n + 10] = '\t';
    n += max;
    n += (size_t)sprintf(text + n, "\r\n");
    size_t line3 = n;
    memset(text + n, 'y', max + 1);
    text[n + 10] = '\t';
    n += max + 1;
    text[n++] = '\n';
    n += (size_t)sprintf(text + n, "c\td\n");

    LineLimit limit = {(long)max, "data.max_line_bytes"};
    TsvCorpus c;
    Error err = {{0}};
    spit(path, text, line3);
    CHECK(tsv_read_pairs(path, &limit, &c, &err) == 0 && c.n == 2 && strlen(c.pairs[1].tgt) == max - 11,
          "a line of exactly the limit, CR LF not counted: read");
    tsv_free(&c);

    spit(path, text, n);
    CHECK(tsv_read_pairs(path, &limit, &c, &err) == -1 && c.n == 0 && c.pairs == NULL, "a line 1 byte over: -1, nothing kept");
    char want[256];
    snprintf(want, sizeof want, "%s line 3: longer than 2048 bytes (the limit; data.max_line_bytes raises it)", path);
    CHECK(!strcmp(err.msg, want), "... naming the file, the line, the limit and the key");
    if (strcmp(err.msg, want)) fprintf(stderr, "  got: %s\n  want: %s\n", err.msg, want);

    CHECK(tsv_read_labelled(path, 1, 0, &limit, &c, &err) == -1 && strstr(err.msg, " line 3: longer than 2048"),
          "labelled: the same error");
    tsv_free(&c);

    limit.max_bytes = (long)max + 1;
    CHECK(tsv_read_pairs(path, &limit, &c, &err) == 0 && c.n == 4 && pair_is(&c, 3, "c", "d", 4),
          "the limit raised by one byte: all four lines read");
    tsv_free(&c);

    /* The default is 1 MiB, with "--max-line-bytes" as what raises it. */
    size_t big = (1 << 20) + 1;
    char *huge = xmalloc(big + 1);
    memset(huge, 'z', big);
    huge[5] = '\t';
    huge[big] = '\n';
    spit(path, huge, big + 1);
    CHECK(tsv_read_pairs(path, NULL, &c, &err) == -1 && strstr(err.msg, "line 1: longer than 1048576 bytes (the "
                                                                        "limit; --max-line-bytes raises it)"),
          "default limit: 1 MiB, --max-line-bytes named");
    tsv_free(&c);
    spit(path, huge, big - 1);
    CHECK(tsv_read_pairs(path, NULL, &c, &err) == 0 && c.n == 1, "default limit: a 1 MiB line without LF read");
    tsv_free(&c);
    free(huge);
    free(text);
    unlink(path);
}

int main(void)
{
    test_line_ends();
    test_columns();
    test_malformed();
    test_any_bytes();
    test_files();
    test_file_as_buffer();
    test_long_lines();
    return check_report("test_tsv");
}
