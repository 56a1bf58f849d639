/* score.h — `nmt score HYP REF`: BLEU and chrF2 of a file of translations against a
 * file of references, one sentence per line, as sacreBLEU 2.x scores them with its
 * defaults (bleu.h has the definitions; tests/fixtures/score/ pins the numbers).
 *
 * Unlike `nmt eval`, nothing is normalised: the two files are scored as they are, as
 * `sacrebleu REF -i HYP -m bleu chrf` would score them. The output is the BLEU and
 * chrF2 lines `nmt eval` prints (same format, same signatures) without the loss:
 *
 *   BLEU = 23.38 60.1/31.9/17.6/10.1 (BP = 0.968 ratio = 0.968 hyp_len = 1713 ref_len = 1769)
 *   chrF2 = 45.23
 *   pairs = 300
 *   BLEU signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1
 *   chrF signature: nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1
 *
 * With `sentence`, first one line per pair, "LINE<TAB>BLEU = ...<TAB>chrF2 = ...",
 * with sacreBLEU's sentence_bleu (effective order, exp smoothing) and sentence chrF2.
 * With `json`, one JSON object instead (keys as nmt eval's; "sentences" holds the
 * per-pair scores).
 *
 * Lines: split at '\n'; a '\r' before it is dropped; a last line without '\n' counts;
 * a line longer than the limit (lines.h: 1 MiB unless --max-line-bytes says otherwise)
 * is an error naming the file and the line.
 * A UTF-8 byte-order mark is kept as a character, as sacreBLEU keeps it (neither metric
 * sees trailing whitespace, so CR or not makes no difference to the scores).
 * A line with invalid UTF-8 or a NUL byte (sacreBLEU would refuse the file) is scored
 * as an empty line, with a warning naming the file and line. An empty reference (which
 * sacreBLEU also refuses) is scored as a reference without words, with a warning.
 *
 * Example:
 *   ScoreOptions opt = {.json = 0, .sentence = 1};
 *   Error err;
 *   if (score_run("hyp.txt", "ref.txt", &opt, stdout, &err) != 0) ... err.msg
 */
#ifndef SCORE_H
#define SCORE_H

#include <stdio.h>

#include "eval/bleu.h"   /* defines: BleuScore */
#include "io/lines.h"  /* defines: LineLimit */
#include "base/util.h"   /* defines: Error */

/* ---- reading ---------------------------------------------------------------- */

#define SCORE_BAD_LINES_KEPT 10
typedef struct {
    char **lines;      /* n lines, without '\n' (and '\r'), each NUL-terminated; "" for a bad line */
    long n;
    long n_bad;        /* lines with invalid UTF-8 or a NUL byte, replaced by "" */
    long bad_lines[SCORE_BAD_LINES_KEPT];           /* the first few, 1-based */
    const char *bad_reasons[SCORE_BAD_LINES_KEPT];  /* "invalid UTF-8" or "NUL byte" */
    long n_blank;      /* good lines that are empty or only whitespace */
    long first_blank;  /* 1-based line number of the first, 0 if none */
} ScoreLines;

/* Every line of `in` (named `name` in messages) into *out, which is overwritten.
 * Returns 0, or -1 with "NAME: read error: <reason>" in err on a read error, or with
 * "NAME line N: longer than MAX bytes (...)" for a line over limit (NULL: the default);
 * *out is then empty and score_lines_free is safe. */
int score_read_stream(FILE *in, const char *name, const LineLimit *limit, ScoreLines *out, Error *err);

/* score_read_stream on the file at path, or on standard input when path is "-".
 * -1 with "PATH: <strerror>" in err if it cannot be opened or is a directory. */
int score_read_file(const char *path, const LineLimit *limit, ScoreLines *out, Error *err);

void score_lines_free(ScoreLines *l);

/* ---- scoring ---------------------------------------------------------------- */

typedef struct {
    BleuScore bleu;         /* corpus BLEU, bleu_compute over all pairs */
    double chrf;            /* corpus chrF2, chrf_compute over all pairs */
    long pairs;
    MetricOptions metric;   /* what they were computed with (the signatures say it) */
} ScoreResult;

typedef struct {
    BleuScore bleu;   /* bleu_sentence: effective order, exp smoothing */
    double chrf;      /* chrf_sentence */
} ScoreSentence;

/* Corpus scores of the n pairs hyp[i] / ref[i], computed as metric says (NULL: the
 * defaults), into *res; when per is not NULL, also each pair's sentence-level scores
 * into per[0..n). */
void score_pairs(char *const *hyp, char *const *ref, long n, const MetricOptions *metric, ScoreResult *res,
                 ScoreSentence *per);

/* Prints as described at the top; per may be NULL (no per-sentence lines). */
void score_print(const ScoreResult *res, const ScoreSentence *per, int json, FILE *out);

/* ---- the command ------------------------------------------------------------- */

typedef struct {
    int json;               /* 1: one JSON object instead of text */
    int sentence;           /* 1: also sentence-level scores, one per pair */
    MetricOptions metric;   /* tokeniser and case ({0}: sacreBLEU's defaults) */
    LineLimit lines;        /* the longest line of either file (--max-line-bytes) */
} ScoreOptions;

/* Reads both files (at most one of them "-", standard input), warns on stderr about
 * bad and empty lines and about files whose roles look swapped (the references hold
 * "<unk>", which only a translator writes, and the hypotheses do not), scores and
 * prints to out. -1 with a message in err if a file cannot be read or has a line over
 * opt->lines, the files have different numbers of lines (the message names both files
 * and both counts), or they have no lines at all. */
int score_run(const char *hyp_path, const char *ref_path, const ScoreOptions *opt, FILE *out, Error *err);

#endif
