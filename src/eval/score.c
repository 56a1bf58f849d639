/* score.c — `nmt score HYP REF`: reading two line files, scoring them with bleu.h,
 * printing. See score.h for what each function promises. */
#include "eval/score.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <utf8proc.h>

#include "io/lines.h"  /* defines: LineReader, line_read, lines_too_long, lines_read_error */
#include "text/text.h"   /* defines: text_is_space */

/* ============================================================================
 * Reading
 * ============================================================================ */

/* 1 if the n bytes are not valid UTF-8 (utf8proc's rules: no overlong forms, no
 * surrogates, nothing above U+10FFFF — the ones Python's strict decoder has). */
static int invalid_utf8(const char *s, size_t n)
{
    for (size_t at = 0; at < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(n - at), &cp);
        if (step < 0) return 1;
        at += (size_t)step;
    }
    return 0;
}

/* 1 if the (valid UTF-8) line is empty or only whitespace, as text.h counts it. */
static int blank_line(const char *s, size_t n)
{
    for (size_t at = 0; at < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(n - at), &cp);
        if (step < 0 || !text_is_space(cp)) return 0;
        at += (size_t)step;
    }
    return 1;
}

static void note_bad(ScoreLines *l, long number, const char *reason)
{
    if (l->n_bad < SCORE_BAD_LINES_KEPT) {
        l->bad_lines[l->n_bad] = number;
        l->bad_reasons[l->n_bad] = reason;
    }
    l->n_bad++;
}

int score_read_stream(FILE *in, const char *name, const LineLimit *limit, ScoreLines *out, Error *err)
{
    memset(out, 0, sizeof *out);
    long cap = 64;
    out->lines = xmalloc((size_t)cap * sizeof *out->lines);
    LineReader r;
    line_reader_init(&r, in, limit);
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t len;
    while ((len = line_read(&r, &line, &line_cap, 0)) >= 0) {
        size_t n = (size_t)len;
        if (n > 0 && line[n - 1] == '\n') line[--n] = '\0';
        if (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
        long number = out->n + 1;
        const char *text = line;
        if (invalid_utf8(line, n)) {
            note_bad(out, number, "invalid UTF-8");
            text = "";
        } else if (memchr(line, '\0', n)) {
            note_bad(out, number, "NUL byte");
            text = "";
        } else if (blank_line(line, n)) {
            if (out->n_blank++ == 0) out->first_blank = number;
        }
        if (out->n == cap) out->lines = xrealloc(out->lines, (size_t)(cap *= 2) * sizeof *out->lines);
        out->lines[out->n++] = xstrdup(text);
    }
    int status = len == LINE_TOO_LONG ? lines_too_long(err, name, r.number, limit)
               : len == LINE_ERROR    ? lines_read_error(err, name)
                                      : 0;
    if (status) score_lines_free(out);
    line_reader_free(&r);
    free(line);
    return status;
}

int score_read_file(const char *path, const LineLimit *limit, ScoreLines *out, Error *err)
{
    memset(out, 0, sizeof *out);
    if (strcmp(path, "-") == 0) return score_read_stream(stdin, "stdin", limit, out, err);
    FILE *f = fopen(path, "rb");
    if (!f) return error_set(err, "%s: %s", path, strerror(errno));
    /* fopen succeeds on a directory on Linux; say so rather than "read error". */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return error_set(err, "%s: %s", path, strerror(EISDIR));
    }
    int status = score_read_stream(f, path, limit, out, err);
    fclose(f);
    return status;
}

void score_lines_free(ScoreLines *l)
{
    for (long i = 0; i < l->n; i++)
        free(l->lines[i]);
    free(l->lines);
    memset(l, 0, sizeof *l);
}

/* ============================================================================
 * Scoring and printing
 * ============================================================================ */

void score_pairs(char *const *hyp, char *const *ref, long n, const MetricOptions *metric, ScoreResult *res,
                 ScoreSentence *per)
{
    BleuStats bleu = {0};
    ChrfStats chrf;
    memset(&chrf, 0, sizeof chrf);
    for (long i = 0; i < n; i++) {
        bleu_stats_add(&bleu, hyp[i], ref[i], metric);
        chrf_stats_add(&chrf, hyp[i], ref[i], metric);
        if (per) {
            per[i].bleu = bleu_sentence(hyp[i], ref[i], metric);
            per[i].chrf = chrf_sentence(hyp[i], ref[i], metric);
        }
    }
    res->metric = metric ? *metric : (MetricOptions){0};
    res->bleu = bleu_compute(&bleu);
    res->chrf = chrf_compute(&chrf);
    res->pairs = n;
}

/* sacreBLEU's verbose BLEU line, the format nmt eval prints (eval.c, eval_print). */
static void print_bleu(const BleuScore *b, FILE *out)
{
    fprintf(out, "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %.0f ref_len = %.0f)", b->score,
            b->precisions[0], b->precisions[1], b->precisions[2], b->precisions[3], b->bp, b->ratio, b->hyp_len,
            b->ref_len);
}

static void add_bleu_json(cJSON *o, const BleuScore *b)
{
    cJSON_AddNumberToObject(o, "bleu", b->score);
    cJSON_AddItemToObject(o, "bleu_precisions", cJSON_CreateDoubleArray(b->precisions, BLEU_MAX_ORDER));
    cJSON_AddNumberToObject(o, "bleu_bp", b->bp);
    cJSON_AddNumberToObject(o, "bleu_ratio", b->ratio);
    cJSON_AddNumberToObject(o, "hyp_len", b->hyp_len);
    cJSON_AddNumberToObject(o, "ref_len", b->ref_len);
}

static void print_json(const ScoreResult *r, const ScoreSentence *per, FILE *out)
{
    char sig[METRIC_SIGNATURE_MAX];
    cJSON *o = cJSON_CreateObject();
    add_bleu_json(o, &r->bleu);
    cJSON_AddStringToObject(o, "bleu_signature", bleu_signature(&r->metric, 0, sig));
    cJSON_AddNumberToObject(o, "chrf", r->chrf);
    cJSON_AddStringToObject(o, "chrf_signature", chrf_signature(&r->metric, sig));
    cJSON_AddNumberToObject(o, "pairs", (double)r->pairs);
    if (per) {
        cJSON_AddStringToObject(o, "sentence_bleu_signature", bleu_signature(&r->metric, 1, sig));
        cJSON *list = cJSON_AddArrayToObject(o, "sentences");
        for (long i = 0; i < r->pairs; i++) {
            cJSON *s = cJSON_CreateObject();
            cJSON_AddNumberToObject(s, "line", (double)(i + 1));
            add_bleu_json(s, &per[i].bleu);
            cJSON_AddNumberToObject(s, "chrf", per[i].chrf);
            cJSON_AddItemToArray(list, s);
        }
    }
    char *text = cJSON_PrintUnformatted(o);
    fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(o);
}

void score_print(const ScoreResult *r, const ScoreSentence *per, int json, FILE *out)
{
    if (json) {
        print_json(r, per, out);
        return;
    }
    for (long i = 0; per && i < r->pairs; i++) {
        fprintf(out, "%ld\t", i + 1);
        print_bleu(&per[i].bleu, out);
        fprintf(out, "\tchrF2 = %.2f\n", per[i].chrf);
    }
    print_bleu(&r->bleu, out);
    fprintf(out, "\nchrF2 = %.2f\n", r->chrf);
    fprintf(out, "pairs = %ld\n", r->pairs);
    char sig[METRIC_SIGNATURE_MAX];
    fprintf(out, "BLEU signature: %s\n", bleu_signature(&r->metric, 0, sig));
    if (per) fprintf(out, "sentence BLEU signature: %s\n", bleu_signature(&r->metric, 1, sig));
    fprintf(out, "chrF signature: %s\n", chrf_signature(&r->metric, sig));
}

/* ============================================================================
 * The command
 * ============================================================================ */

/* One warning per kept bad line, then one for the rest. */
static void warn_bad_lines(const ScoreLines *l, const char *name)
{
    long kept = l->n_bad < SCORE_BAD_LINES_KEPT ? l->n_bad : SCORE_BAD_LINES_KEPT;
    for (long i = 0; i < kept; i++)
        fprintf(stderr, "nmt: warning: %s line %ld: %s; scored as empty\n", name, l->bad_lines[i], l->bad_reasons[i]);
    if (l->n_bad > kept)
        fprintf(stderr, "nmt: warning: %s: %ld more lines with invalid UTF-8 or a NUL byte scored as empty\n", name,
                l->n_bad - kept);
}

/* Lines of l that hold "<unk>". */
static long lines_with_unk(const ScoreLines *l)
{
    long n = 0;
    for (long i = 0; i < l->n; i++)
        n += strstr(l->lines[i], "<unk>") != NULL;
    return n;
}

/* "<unk>" is a translator's word: references that have it and hypotheses that do not
 * are most likely the two files the wrong way round. */
static void warn_swapped(const ScoreLines *hyp, const char *hyp_name, const ScoreLines *ref, const char *ref_name)
{
    long in_ref = lines_with_unk(ref);
    if (in_ref > 0 && lines_with_unk(hyp) == 0)
        fprintf(stderr,
                "nmt: warning: the references (%s) have <unk> in %ld line%s and the hypotheses (%s) in none: are "
                "the files the wrong way round? nmt score REF -i HYP, as sacrebleu\n",
                ref_name, in_ref, in_ref == 1 ? "" : "s", hyp_name);
}

int score_run(const char *hyp_path, const char *ref_path, const ScoreOptions *opt, FILE *out, Error *err)
{
    const char *hyp_name = strcmp(hyp_path, "-") ? hyp_path : "stdin";
    const char *ref_name = strcmp(ref_path, "-") ? ref_path : "stdin";
    ScoreLines hyp, ref;
    if (score_read_file(hyp_path, &opt->lines, &hyp, err)) return -1;
    if (score_read_file(ref_path, &opt->lines, &ref, err)) {
        score_lines_free(&hyp);
        return -1;
    }
    int status = 0;
    if (hyp.n != ref.n) {
        status = error_set(err, "%s has %ld lines but %s has %ld: hypotheses and references pair up line by line",
                           hyp_name, hyp.n, ref_name, ref.n);
    } else if (hyp.n == 0) {
        status = error_set(err, "%s and %s are empty: no sentence pairs to score", hyp_name, ref_name);
    } else {
        warn_bad_lines(&hyp, hyp_name);
        warn_bad_lines(&ref, ref_name);
        if (ref.n_blank > 0)
            fprintf(stderr,
                    "nmt: warning: %s: %ld empty reference line%s (the first is line %ld), scored as references "
                    "without words; sacreBLEU refuses them\n",
                    ref_name, ref.n_blank, ref.n_blank == 1 ? "" : "s", ref.first_blank);
        ScoreResult res;
        ScoreSentence *per = opt->sentence ? xmalloc((size_t)hyp.n * sizeof *per) : NULL;
        warn_swapped(&hyp, hyp_name, &ref, ref_name);
        score_pairs(hyp.lines, ref.lines, hyp.n, &opt->metric, &res, per);
        score_print(&res, per, opt->json, out);
        free(per);
        if (fflush(out) != 0 || ferror(out)) status = error_set(err, "writing the scores: %s", strerror(errno));
    }
    score_lines_free(&hyp);
    score_lines_free(&ref);
    return status;
}
