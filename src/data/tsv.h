/* tsv.h — reading sentence-pair files: one pair per line, "source<TAB>target".
 *
 * Real corpora are messy (Windows line ends, a BOM from a spreadsheet, an
 * attribution third column in the manythings.org files, the odd broken line), so
 * the reader accepts everything it can and accounts for what it skips, rather than
 * failing on line 51 203 of a download:
 *
 *   - a UTF-8 BOM at the start of the file is skipped;
 *   - lines end in LF; one CR before the LF (or at the very end) is removed; a
 *     missing final newline is fine;
 *   - column 1 is the source, column 2 the target, further columns are ignored;
 *   - leading/trailing ASCII whitespace (space, CR, VT, FF) of each column is trimmed;
 *   - a wholly empty line is skipped silently (counted in n_blank);
 *   - a line is malformed, skipped and counted in n_malformed, when it holds
 *     invalid UTF-8 or a NUL byte, has no tab, or has a source or target that is
 *     empty or only whitespace (Unicode Zs/Zl/Zp/Cc, as text.h counts it).
 *
 * A file is read a line at a time (lines.h): a line longer than the limit (1 MiB by
 * default) is an error naming it, so that memory holds the pairs and never a line
 * without end.
 *
 * The text is kept raw: tokenising is text.h's job.
 *
 * Example:
 *   TsvCorpus c;
 *   Error err;
 *   if (tsv_read_pairs("data/mar.txt", NULL, &c, &err) != 0) ... err.msg
 *   char note[512];
 *   tsv_describe_skipped(&c, "data/mar.txt", note, sizeof note);
 *   if (note[0]) fprintf(stderr, "nmt: warning: %s\n", note);
 *   ... c.pairs[i].src, c.pairs[i].tgt for i < c.n ...
 *   tsv_free(&c);
 */
#ifndef TSV_H
#define TSV_H
#include <stddef.h>

#include "io/lines.h"  // defines: LineLimit
#include "base/util.h"   // defines: Error

typedef struct {
    char *src, *tgt;   /* owned copies, raw text (not tokenised), no trailing CR */
    int line;          /* 1-based line number in the file */
} TsvPair;

#define TSV_BAD_LINES_KEPT 5
typedef struct {
    TsvPair *pairs;
    int n, cap;
    int n_malformed;                      /* lines skipped */
    int bad_lines[TSV_BAD_LINES_KEPT];    /* first few skipped line numbers */
    /* Static strings, one per kept bad line: "invalid UTF-8", "NUL byte", "no tab",
     * "empty source", "empty target" (checked in that order). */
    const char *bad_reasons[TSV_BAD_LINES_KEPT];
    int n_blank;                          /* wholly empty lines: skipped silently, not malformed */
} TsvCorpus;

/* Parse a whole buffer of `len` bytes (no NUL terminator needed, any bytes
 * allowed) into *out, which is overwritten. Never fails on content (bad lines are
 * counted; no line is too long); returns 0. Lines from number INT_MAX on are ignored. */
int tsv_parse(const char *buf, size_t len, TsvCorpus *out);

/* Read a file and parse it as tsv_parse would, a line at a time. -1 with "PATH:
 * <strerror>" in err if it cannot be opened (missing, a directory, unreadable), "PATH:
 * read error: <strerror>" if reading fails, or "PATH line N: longer than MAX bytes
 * (the limit; OPTION raises it)" for a line over limit (NULL: the default, 1 MiB);
 * *out is then empty and tsv_free is safe. */
int tsv_read_pairs(const char *path, const LineLimit *limit, TsvCorpus *out, Error *err);

/* A classifier's file (model.type classifier): each line's column text_col (1-based)
 * is the pair's src, its column label_col (1-based; 0: the last column, of at least
 * two) its tgt, both trimmed. Blank lines and lines with invalid UTF-8, a NUL byte, no
 * such text column or an empty text are skipped and counted as above ("no text
 * column", "empty text"); a line without the label column, with an empty label, or
 * whose label column is its text column (label_col 0 on a line of text_col columns) is
 * an error: -1 with "PATH: line N: no label: ...", "...: empty label (column K)" or
 * "...: the label column (...) is the text column (...)", *out empty; so are the
 * errors of tsv_read_pairs. */
int tsv_read_labelled(const char *path, int text_col, int label_col, const LineLimit *limit, TsvCorpus *out,
                      Error *err);

void tsv_free(TsvCorpus *c);

/* Writes e.g. "data/x.tsv: skipped 3 malformed lines (line 4: no tab, line 9: empty
 * target, line 12: invalid UTF-8)" into buf (truncated to buflen); when more lines
 * were skipped than kept, ends "..., and N more)". Empty string if none. */
void tsv_describe_skipped(const TsvCorpus *c, const char *path, char *buf, size_t buflen);
#endif
