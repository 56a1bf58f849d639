/* bpe_codes.c — a Bpe as codes text, subword-nmt's layout, and back; see subword.h
 * (bpe_to_text, bpe_from_text, bpe_from_text_format). */
#include "text/bpe_core.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ------------------------------------------------------------------------- */
/* Codes text                                                                 */
/* ------------------------------------------------------------------------- */

#define CODES_HEADER "#version: 0.2\n"

/* Copies s to *at and advances it. */
static void put(char **at, const char *s)
{
    size_t n = strlen(s);
    memcpy(*at, s, n);
    *at += n;
}

int bpe_format_from_name(const char *name)
{
    if (!strcmp(name, "nmt")) return BPE_NMT;
    if (!strcmp(name, "subword-nmt")) return BPE_SUBWORD_NMT;
    return -1;
}

char *bpe_to_text(const Bpe *b)
{
    const char *header = b->eow_apart ? "" : CODES_HEADER;   /* version 0.1 has none */
    size_t len = strlen(header);
    for (int i = 0; i < b->n; i++)
        len += strlen(b->left[i]) + 1 + strlen(b->right[i]) + 1;
    char *text = xmalloc(len + 1), *at = text;
    put(&at, header);
    for (int i = 0; i < b->n; i++) {
        put(&at, b->left[i]);
        put(&at, " ");
        put(&at, b->right[i]);
        put(&at, "\n");
    }
    *at = '\0';
    return text;
}

/* The first occurrence of "</w>" in s[0..len), or NULL. */
static const char *find_end_of_word(const char *s, size_t len)
{
    for (size_t i = 0; i + END_OF_WORD_LEN <= len; i++)
        if (memcmp(s + i, END_OF_WORD, END_OF_WORD_LEN) == 0)
            return s + i;
    return NULL;
}

/* The first error in s[0..len): invalid UTF-8 or a NUL byte (also checks whitespace
 * and control characters unless `any_space`). Returns 0 or -1. */
static int check_symbols(const char *s, size_t len, int any_space, const char *name, int line, Error *err)
{
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(len - at), &cp);
        if (step <= 0)
            return error_set(err, "%s:%d: invalid UTF-8", name, line);
        if (cp == 0)
            return error_set(err, "%s:%d: NUL byte", name, line);
        /* Symbols come from tokens, which hold no whitespace or control characters;
         * a CR or tab here would not survive being written out and read back. */
        if (!any_space && cp != ' ' && text_is_space(cp))
            return error_set(err, "%s:%d: whitespace or a control character (U+%04X) in a symbol", name, line,
                             (unsigned)cp);
        at += (size_t)step;
    }
    return 0;
}

/* Checks one merge line s[0..len) (no line end) and adds it to b. */
static int parse_merge(Bpe *b, const char *s, size_t len, const char *name, int line, const int *merge_line, Error *err)
{
    if (check_symbols(s, len, 0, name, line, err))
        return -1;
    const char *space = memchr(s, ' ', len);
    if (!space || memchr(space + 1, ' ', len - (size_t)(space + 1 - s)))
        return error_set(err, "%s:%d: expected two symbols separated by one space", name, line);
    const char *l = s, *r = space + 1;
    size_t ll = (size_t)(space - s), rl = len - ll - 1;
    if (ll == 0 || rl == 0)
        return error_set(err, "%s:%d: empty symbol", name, line);
    if (rl == END_OF_WORD_LEN && memcmp(r, END_OF_WORD, END_OF_WORD_LEN) == 0)
        return error_set(err, "%s:%d: \"</w>\" on its own is subword-nmt 0.1's convention; "
                         "expected version 0.2 codes (\"</w>\" ends the last symbol)", name, line);
    const char *eow = find_end_of_word(r, rl);
    if (find_end_of_word(l, ll) || (eow && eow != r + rl - END_OF_WORD_LEN))
        return error_set(err, "%s:%d: \"</w>\" may only end the right symbol", name, line);
    int id = bpe_add(b, l, ll, r, rl);
    if (id < 0)
        return error_set(err, "%s:%d: repeated merge \"%.*s %.*s\" (first on line %d)", name, line,
                         (int)(ll > 100 ? 100 : ll), l, (int)(rl > 100 ? 100 : rl), r, merge_line[-1 - id]);
    return 0;
}

/* The first line of subword-nmt codes, "#version: V" (n bytes at s): sets b->eow_apart
 * for 0.1. Like subword-nmt, V is the line's last field with trailing ".0" groups
 * dropped ("0.2.0" is 0.2). */
static int subword_nmt_version(Bpe *b, const char *s, size_t n, const char *name, Error *err)
{
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    size_t start = n;
    while (start > 0 && s[start - 1] != ' ' && s[start - 1] != '\t')
        start--;
    const char *v = s + start;
    size_t vn = n - start;
    if (vn == 4 && memcmp(v, "byte", 4) == 0)
        return error_set(err, "%s:1: byte-level codes (subword-nmt learn-bpe --byte) are not supported", name);
    for (;;) {   /* drop a trailing "." followed only by zeros, again and again */
        size_t dot = vn;
        while (dot > 0 && v[dot - 1] == '0')
            dot--;
        if (dot == vn || dot == 0 || v[dot - 1] != '.')
            break;
        vn = dot - 1;
    }
    if (vn == 3 && (memcmp(v, "0.1", 3) == 0 || memcmp(v, "0.2", 3) == 0)) {
        b->eow_apart = v[2] == '1';
        return 0;
    }
    return error_set(err, "%s:1: codes version \"%.*s\"; subword-nmt's codes are version 0.1 or 0.2", name,
                     (int)(vn > 20 ? 20 : vn), v);
}

/* Codes text as subword-nmt's apply_bpe.py reads it (subword.h). */
static int subword_nmt_from_text(Bpe *b, const char *text, size_t len, const char *name, Error *err)
{
    b->format = BPE_SUBWORD_NMT;
    b->eow_apart = 1;   /* without a "#version" line */
    int line = 0, blank_line = 0;   /* the first blank line since the last merge */
    for (size_t at = 0; at < len;) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + (nl ? 1 : 0);
        line++;
        if (line == 1 && n >= 9 && memcmp(s, "#version:", 9) == 0) {
            if (subword_nmt_version(b, s, n, name, err))
                return -1;
            continue;
        }
        while (n > 0 && (*s == ' ' || *s == '\r')) {
            s++;
            n--;
        }
        while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\r'))
            n--;
        if (n == 0) {   /* an error unless only blank lines follow */
            if (!blank_line)
                blank_line = line;
            continue;
        }
        if (blank_line)
            return error_set(err, "%s:%d: expected two symbols separated by one space", name, blank_line);
        if (check_symbols(s, n, 1, name, line, err))
            return -1;
        const char *space = memchr(s, ' ', n);
        if (!space || memchr(space + 1, ' ', n - (size_t)(space + 1 - s)))
            return error_set(err, "%s:%d: expected two symbols separated by one space", name, line);
        size_t ll = (size_t)(space - s);
        bpe_add(b, s, ll, space + 1, n - ll - 1);   /* a repeat keeps its first rank */
    }
    return 0;
}

int bpe_from_text_format(Bpe *b, const char *text, size_t len, BpeFormat format, const char *name, Error *err)
{
    if (format == BPE_NMT)
        return bpe_from_text(b, text, len, name, err);
    *b = (Bpe){0};
    if (subword_nmt_from_text(b, text, len, name, err) == 0)
        return 0;
    bpe_free(b);
    return -1;
}

int bpe_from_text(Bpe *b, const char *text, size_t len, const char *name, Error *err)
{
    *b = (Bpe){0};
    int *merge_line = NULL;   /* merge index -> line number, for repeats */
    int cap_lines = 0;
    int line = 0, blank_line = 0;   /* the first blank line since the last merge */
    for (size_t at = 0; at < len;) {
        const char *s = text + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t n = nl ? (size_t)(nl - s) : len - at;
        at += n + (nl ? 1 : 0);
        line++;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        if (line == 1 && n >= 8 && memcmp(s, "#version", 8) == 0) {
            const char *v = s + 8;
            size_t vn = n - 8;
            if (vn > 0 && *v == ':') { v++; vn--; }
            while (vn > 0 && (*v == ' ' || *v == '\t')) { v++; vn--; }
            while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t')) vn--;
            if (vn != 3 || memcmp(v, "0.2", 3) != 0) {
                error_set(err, "%s:1: codes version \"%.*s\"; only 0.2 is supported", name, (int)(vn > 20 ? 20 : vn), v);
                goto fail;
            }
            continue;
        }
        if (n == 0) {
            if (!blank_line)
                blank_line = line;
            continue;
        }
        if (blank_line) {
            error_set(err, "%s:%d: expected two symbols separated by one space", name, blank_line);
            goto fail;
        }
        if (b->n == cap_lines) {
            cap_lines = cap_lines ? 2 * cap_lines : 256;
            merge_line = xrealloc(merge_line, (size_t)cap_lines * sizeof *merge_line);
        }
        merge_line[b->n] = line;
        if (parse_merge(b, s, n, name, line, merge_line, err) != 0)
            goto fail;
    }
    free(merge_line);
    return 0;
fail:
    free(merge_line);
    bpe_free(b);
    return -1;
}
