/* test_score.c — bleu.c's BLEU and chrF2 against pinned expected scores, and score.c's
 * line reading and printing.
 *
 * WHERE THE EXPECTED NUMBERS COME FROM. sacreBLEU cannot be installed here, so
 * tests/fixtures/score/expected.json was NOT made by running sacreBLEU. It was written
 * by scripts/reference/sacrebleu_reference.py, an independent Python re-implementation of
 * sacreBLEU 2.x's defaults (same regular expressions, same floating-point operations
 * in the same order; no code shared with src/eval/bleu.c). That script checks itself
 * (`sacrebleu_reference.py self-test`) against numbers sacreBLEU printed in its README
 * and test suite, and against cases worked by hand; a few of those hand checks are
 * repeated in the comments below. The only numbers here that come from sacreBLEU
 * itself are in test_published(), copied from sacreBLEU's own tests.
 *
 * The fixture holds:
 *   real   300 pairs: hyp.txt is the greedy output of the default mar.txt model
 *          (English -> Marathi, 3 epochs) for the first 300 sources of its valid.tsv,
 *          ref.txt the Marathi references. Corpus BLEU with its counts, totals,
 *          precisions, BP, lengths; corpus chrF2 with its statistics; and sentence
 *          BLEU and chrF2 of every pair.
 *   cases  32 hand-made edge cases (empty and whitespace-only sides, no 4-gram match,
 *          a hypothesis longer than the reference, punctuation only, non-ASCII
 *          punctuation, numbers with commas and periods, HTML entities, Unicode
 *          spaces, astral characters, ...): the 13a tokens of each side and every
 *          score, corpus-mode and sentence-mode; and all cases scored as one corpus.
 * Scores must agree to 1e-9 relative (they are in fact bit-identical today), counts
 * and token strings exactly.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"    /* defines: BleuStats, bleu_stats_add, bleu_compute, bleu_sentence, ... */
#include "check.h"   /* defines: CHECK, check_report */
#include "eval/score.h"   /* defines: score_read_file, score_read_stream, score_pairs, score_print */

#define FIXTURE_DIR "tests/fixtures/score/"
#define TOL 1e-9

/* The largest relative difference seen by near(), reported at the end. */
static double worst_diff;
static long values_compared;

/* |got - want| <= TOL * max(1, |want|): relative on the 0..100 scale, absolute near 0. */
static void close_to(double got, double want, const char *what)
{
    double d = fabs(got - want) / (fabs(want) > 1 ? fabs(want) : 1);
    int ok = d <= TOL;
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "     got %.17g, want %.17g\n", got, want);
}

/* close_to for a value from the fixture, keeping the largest difference seen. */
static void near(double got, double want, const char *what)
{
    double d = fabs(got - want) / (fabs(want) > 1 ? fabs(want) : 1);
    if (!(d <= worst_diff)) worst_diff = d;
    values_compared++;
    close_to(got, want, what);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "test_score: cannot open %s (run from the repository root)\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) exit(2);
    s[n] = '\0';
    fclose(f);
    return s;
}

static cJSON *item(const cJSON *o, const char *key)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) {
        fprintf(stderr, "test_score: fixture has no \"%s\"\n", key);
        exit(2);
    }
    return it;
}

static double num(const cJSON *o, const char *key) { return item(o, key)->valuedouble; }
static double at(const cJSON *array, int i) { return cJSON_GetArrayItem(array, i)->valuedouble; }

/* Compares a BleuScore (and, if s is not NULL, its statistics) with a fixture "bleu" object. */
static void check_bleu(const BleuScore *b, const BleuStats *s, const cJSON *want, const char *label)
{
    char what[256];   /* longer than any label (< 200) and suffix */
    snprintf(what, sizeof what, "%s: BLEU", label);
    near(b->score, num(want, "score"), what);
    snprintf(what, sizeof what, "%s: BP", label);
    near(b->bp, num(want, "bp"), what);
    snprintf(what, sizeof what, "%s: ratio", label);
    near(b->ratio, num(want, "ratio"), what);
    snprintf(what, sizeof what, "%s: hyp_len and ref_len", label);
    CHECK(b->hyp_len == num(want, "hyp_len") && b->ref_len == num(want, "ref_len"), what);
    for (int n = 0; n < BLEU_MAX_ORDER; n++) {
        snprintf(what, sizeof what, "%s: precision %d", label, n + 1);
        near(b->precisions[n], at(item(want, "precisions"), n), what);
        if (!s) continue;
        snprintf(what, sizeof what, "%s: %d-gram matches and totals", label, n + 1);
        CHECK(s->matches[n] == at(item(want, "counts"), n) && s->totals[n] == at(item(want, "totals"), n), what);
    }
}

static void check_chrf_stats(const ChrfStats *s, const cJSON *want, const char *label)
{
    int ok = 1;
    for (int n = 0; n < CHRF_CHAR_ORDER; n++)
        ok &= s->hyp[n] == at(want, 3 * n) && s->ref[n] == at(want, 3 * n + 1) && s->match[n] == at(want, 3 * n + 2);
    char what[256];
    snprintf(what, sizeof what, "%s: chrF statistics (hyp, ref, match per order)", label);
    CHECK(ok, what);
}

/* ---- 300 real pairs ------------------------------------------------------------- */

/* Hand check of line 1, in Marathi. hyp "माझा कुत्रा टॉम." -> 13a: माझा कुत्रा टॉम . (4)
 * ref "माझा कुत्रा टॉमला चावला." -> माझा कुत्रा टॉमला चावला . (5).
 *   1-grams: माझा कुत्रा .  3/4 -> 75;  2-grams: "माझा कुत्रा" 1/3 -> 33.33
 *   3-grams: 0/2 -> exp smoothing 100/(2*2) = 25;  4-grams: 0/1 -> 100/(4*1) = 25
 *   bp = exp(1 - 5/4) = 0.778800783; BLEU = 0.7788 * (75 * 100/3 * 25 * 25)^(1/4)
 *      = 0.778800783 * 35.355339059 = 27.534765745 (the fixture: 27.534765745159184). */
static void test_real_pairs(const cJSON *fx)
{
    const cJSON *real = item(fx, "real");
    ScoreLines hyp, ref;
    Error err;
    CHECK(score_read_file(FIXTURE_DIR "hyp.txt", NULL, &hyp, &err) == 0, "read hyp.txt");
    CHECK(score_read_file(FIXTURE_DIR "ref.txt", NULL, &ref, &err) == 0, "read ref.txt");
    CHECK(hyp.n == 300 && ref.n == 300 && num(real, "pairs") == 300, "300 pairs");
    CHECK(hyp.n_bad == 0 && ref.n_bad == 0, "no bad lines");
    long n = hyp.n < ref.n ? hyp.n : ref.n;

    BleuStats bs = {0};
    ChrfStats cs;
    memset(&cs, 0, sizeof cs);
    for (long i = 0; i < n; i++) {
        bleu_stats_add(&bs, hyp.lines[i], ref.lines[i], NULL);
        chrf_stats_add(&cs, hyp.lines[i], ref.lines[i], NULL);
    }
    BleuScore b = bleu_compute(&bs);
    check_bleu(&b, &bs, item(real, "bleu"), "real corpus");
    near(chrf_compute(&cs), num(real, "chrf"), "real corpus: chrF2");
    check_chrf_stats(&cs, item(real, "chrf_stats"), "real corpus");

    /* score_pairs gives the same corpus scores, and the sentence scores of every pair. */
    ScoreResult res;
    ScoreSentence *per = malloc((size_t)n * sizeof *per);
    score_pairs(hyp.lines, ref.lines, n, NULL, &res, per);
    near(res.bleu.score, num(item(real, "bleu"), "score"), "score_pairs: corpus BLEU");
    near(res.chrf, num(real, "chrf"), "score_pairs: corpus chrF2");
    const cJSON *sentences = item(real, "sentences");
    CHECK(cJSON_GetArraySize(sentences) == n, "a sentence score per pair");
    int sentence_ok = 1;
    double before = worst_diff;
    for (long i = 0; i < n && i < cJSON_GetArraySize(sentences); i++) {
        const cJSON *s = cJSON_GetArrayItem(sentences, (int)i);
        double want_bleu = at(s, 1), want_chrf = at(s, 2);
        double d1 = fabs(per[i].bleu.score - want_bleu) / (want_bleu > 1 ? want_bleu : 1);
        double d2 = fabs(per[i].chrf - want_chrf) / (want_chrf > 1 ? want_chrf : 1);
        if (d1 > worst_diff) worst_diff = d1;
        if (d2 > worst_diff) worst_diff = d2;
        values_compared += 2;
        if (!(d1 <= TOL && d2 <= TOL)) {
            sentence_ok = 0;
            fprintf(stderr, "     line %ld: sentence BLEU %.17g want %.17g, chrF2 %.17g want %.17g\n", i + 1,
                    per[i].bleu.score, want_bleu, per[i].chrf, want_chrf);
        }
    }
    CHECK(sentence_ok, "real: sentence BLEU and chrF2 of all 300 pairs");
    printf("  ok real pairs: 300 sentence scores, max relative difference so far %.3g (before them %.3g)\n",
           worst_diff, before);
    close_to(per[0].bleu.score, 27.534765745159184, "real line 1: the hand-checked sentence BLEU");
    free(per);
    score_lines_free(&hyp);
    score_lines_free(&ref);
}

/* ---- hand-made edge cases ---------------------------------------------------------- */

/* A few of them checked by hand (the rest follow the same rules):
 *  "hypothesis shorter than 4 tokens": "the cat" vs "the cat sat on the mat". Corpus
 *    mode never reaches order 3 -> 0. Sentence mode (effective order 2): p1 = p2 = 100,
 *    bp = exp(1 - 6/2) = exp(-2) -> 13.533528.
 *  "clipped repeats": six "the" against a reference with two: p1 = 2/6; p2 = 0/5 ->
 *    100/(2*5) = 10; p3 = 0/4 -> 100/(4*4) = 6.25; p4 = 0/3 -> 100/(8*3); bp 1.
 *    BLEU = (33.333 * 10 * 6.25 * 4.1667)^(1/4) = 8680.56^(1/4) = 9.652435.
 *  "reference shorter than six characters": chrF2 "abcdefgh" vs "abc": orders 1-3
 *    P = 3/8, 2/7, 1/6 and R = 1; orders 4-6 have no reference n-grams and are left
 *    out. P = 0.2757937, R = 1: 5 P R / (4 P + R) = 0.655660 -> 65.5660.
 *  "numbers at the edges": the reference is the expected 13a output of the hypothesis
 *    ("3." -> "3 .", ".5" -> ". 5", "5," -> "5 ,", "1990-2000" -> "1990 - 2000",
 *    "-5" and "a-1" stay, "5-" -> "5 -"), so everything matches: BLEU 100. */
static void test_cases(const cJSON *fx)
{
    const cJSON *cases = item(fx, "cases"), *c;
    BleuStats all = {0};
    ChrfStats all_chrf;
    memset(&all_chrf, 0, sizeof all_chrf);
    int count = 0;
    cJSON_ArrayForEach(c, cases) {
        const char *name = item(c, "name")->valuestring;
        const char *hyp = item(c, "hyp")->valuestring, *ref = item(c, "ref")->valuestring;
        char what[200];
        char *th = bleu_tokenize_13a(hyp), *tr = bleu_tokenize_13a(ref);
        /* The fixture's tokens are of the right-stripped text, as BLEU uses it; 13a's
         * own whitespace collapsing makes that the same string for every case here. */
        snprintf(what, sizeof what, "%s: 13a tokens of the hypothesis", name);
        CHECK(strcmp(th, item(c, "tok_hyp")->valuestring) == 0, what);
        if (strcmp(th, item(c, "tok_hyp")->valuestring))
            fprintf(stderr, "     got [%s], want [%s]\n", th, item(c, "tok_hyp")->valuestring);
        snprintf(what, sizeof what, "%s: 13a tokens of the reference", name);
        CHECK(strcmp(tr, item(c, "tok_ref")->valuestring) == 0, what);
        free(th);
        free(tr);

        BleuStats s = {0};
        bleu_stats_add(&s, hyp, ref, NULL);
        BleuScore b = bleu_compute(&s);
        snprintf(what, sizeof what, "case %s (corpus mode)", name);
        check_bleu(&b, &s, item(c, "bleu"), what);
        b = bleu_sentence(hyp, ref, NULL);
        snprintf(what, sizeof what, "case %s (sentence)", name);
        check_bleu(&b, NULL, item(c, "sentence_bleu"), what);

        ChrfStats cs;
        memset(&cs, 0, sizeof cs);
        chrf_stats_add(&cs, hyp, ref, NULL);
        snprintf(what, sizeof what, "case %s", name);
        check_chrf_stats(&cs, item(c, "chrf_stats"), what);
        snprintf(what, sizeof what, "case %s: chrF2", name);
        near(chrf_sentence(hyp, ref, NULL), num(c, "chrf"), what);

        bleu_stats_add(&all, hyp, ref, NULL);
        chrf_stats_add(&all_chrf, hyp, ref, NULL);
        count++;
    }
    CHECK(count == 32, "32 edge cases");
    const cJSON *corpus = item(fx, "cases_corpus");
    BleuScore b = bleu_compute(&all);
    check_bleu(&b, &all, item(corpus, "bleu"), "edge cases as one corpus");
    near(chrf_compute(&all_chrf), num(corpus, "chrf"), "edge cases as one corpus: chrF2");
    check_chrf_stats(&all_chrf, item(corpus, "chrf_stats"), "edge cases as one corpus");
}

/* The cases for sacreBLEU's other tokenisers and its lowercasing (the fixture's
 * option_cases, from scripts/reference/sacrebleu_reference.py's OPTION_CASES, whose Python runs
 * sacreBLEU's own regular expressions, ranges and str.lower()): the words BLEU counts,
 * corpus and sentence BLEU, chrF2 and its statistics. */
static void test_option_cases(const cJSON *fx)
{
    const cJSON *c;
    int count = 0;
    cJSON_ArrayForEach(c, item(fx, "option_cases")) {
        const char *name = item(c, "name")->valuestring;
        const char *hyp = item(c, "hyp")->valuestring, *ref = item(c, "ref")->valuestring;
        MetricOptions opt = {.lowercase = cJSON_IsTrue(item(c, "lowercase"))};
        char what[200];
        snprintf(what, sizeof what, "%s: tokeniser name", name);
        CHECK(bleu_tokenize_parse(item(c, "tokenize")->valuestring, &opt.tokenize) == 0, what);
        for (int side = 0; side < 2; side++) {
            char *got = bleu_preprocess(side ? ref : hyp, &opt);
            const char *want = item(c, side ? "tok_ref" : "tok_hyp")->valuestring;
            snprintf(what, sizeof what, "%s: the words of the %s", name, side ? "reference" : "hypothesis");
            CHECK(strcmp(got, want) == 0, what);
            if (strcmp(got, want)) fprintf(stderr, "     got [%s], want [%s]\n", got, want);
            free(got);
        }
        BleuStats s = {0};
        bleu_stats_add(&s, hyp, ref, &opt);
        BleuScore b = bleu_compute(&s);
        snprintf(what, sizeof what, "%s (corpus mode)", name);
        check_bleu(&b, &s, item(c, "bleu"), what);
        b = bleu_sentence(hyp, ref, &opt);
        snprintf(what, sizeof what, "%s (sentence)", name);
        check_bleu(&b, NULL, item(c, "sentence_bleu"), what);
        ChrfStats cs;
        memset(&cs, 0, sizeof cs);
        chrf_stats_add(&cs, hyp, ref, &opt);
        snprintf(what, sizeof what, "%s", name);
        check_chrf_stats(&cs, item(c, "chrf_stats"), what);
        snprintf(what, sizeof what, "%s: chrF2", name);
        near(chrf_sentence(hyp, ref, &opt), num(c, "chrf"), what);
        count++;
    }
    CHECK(count == 17, "17 option cases");
}

/* ---- numbers sacreBLEU itself produced ------------------------------------------- */

/* From sacreBLEU's test suite (test/test_sentence_bleu.py, test_bleu.py, test_chrf.py):
 * the only expected values in this file that come from running sacreBLEU. Only those
 * with one reference and default settings (or settings that do not change the result)
 * can be used. */
static void test_published(void)
{
    /* Issue #98 example: sentence_bleu with exp smoothing and 13a, 8.493 (to 1e-3). */
    BleuScore b = bleu_sentence("Producția de zahăr primă va fi exprimată în ceea ce privește zahărul alb;",
                                "producţia de zahăr brut se exprimă în zahăr alb;", NULL);
    CHECK(fabs(b.score - 8.493) < 1e-3, "sacreBLEU #98: sentence BLEU 8.493");
    /* Issue #141: no match of any order -> 0. */
    CHECK(bleu_sentence("this is a cat", "okay thanks", NULL).score == 0.0, "sacreBLEU #141: 0");
    /* Statistics [4, 2, 1, 0] / [6, 5, 4, 3] (13a changes nothing in these strings). */
    BleuStats s = {0};
    bleu_stats_add(&s, "am I am a character sequence", "I am a symbol string sequence a a", NULL);
    CHECK(s.matches[0] == 4 && s.matches[1] == 2 && s.matches[2] == 1 && s.matches[3] == 0 && s.totals[0] == 6 &&
              s.totals[1] == 5 && s.totals[2] == 4 && s.totals[3] == 3,
          "sacreBLEU test_statistics: matches 4 2 1 0, totals 6 5 4 3");
    /* compute_bleu from statistics: 0.8375922397 (to 1e-8). */
    BleuStats t = {{9, 7, 5, 3}, {10, 8, 6, 4}, 11, 11};
    CHECK(fabs(bleu_compute(&t).score / 100 - 0.8375922397) < 1e-8, "sacreBLEU test_scoring: 0.8375922397");
    /* chrF with effective-order averaging; sacreBLEU tests them with beta 3, but P == R
     * in each, so the F score is the same for beta 2. */
    close_to(chrf_sentence("aa", "ab", NULL), 25.0, "sacreBLEU test_chrf_eff_order: aa / ab 25");
    close_to(chrf_sentence("a b c", "abc", NULL), 100.0, "sacreBLEU test_chrf_eff_order: a b c / abc 100");
    close_to(chrf_sentence("", "reference", NULL), 0.0, "sacreBLEU test_chrf_eff_order: empty 0");
    ChrfStats cs;
    memset(&cs, 0, sizeof cs);
    chrf_stats_add(&cs, "a", "a", NULL);
    chrf_stats_add(&cs, "b", "c", NULL);
    close_to(chrf_compute(&cs), 50.0, "sacreBLEU test_chrf_eff_order: [a, b] / [a, c] 50");
}

/* ---- reading and printing ------------------------------------------------------------ */

static void test_read_stream(void)
{
    /* 1 CRLF line, 2 empty, 3 invalid UTF-8, 4 NUL byte, 5 spaces, 6 a surrogate
     * (ED A0 80, invalid), 7 Devanagari, 8 no final newline. */
    static const char data[] = "one\r\n\n\xff\xfe x\nnul\0byte\n  \t\n\xed\xa0\x80\n\xe0\xa4\xae\xe0\xa5\x80\nlast";
    FILE *f = fmemopen((void *)data, sizeof data - 1, "rb");
    ScoreLines l;
    Error err;
    CHECK(score_read_stream(f, "mem", NULL, &l, &err) == 0, "read_stream: reads");
    fclose(f);
    CHECK(l.n == 8, "read_stream: 8 lines (the last has no newline)");
    if (l.n == 8) {
        CHECK(strcmp(l.lines[0], "one") == 0, "read_stream: CR LF removed");
        CHECK(strcmp(l.lines[1], "") == 0, "read_stream: empty line kept");
        CHECK(strcmp(l.lines[2], "") == 0 && strcmp(l.lines[3], "") == 0 && strcmp(l.lines[5], "") == 0,
              "read_stream: bad lines become empty");
        CHECK(strcmp(l.lines[6], "\xe0\xa4\xae\xe0\xa5\x80") == 0, "read_stream: UTF-8 kept as is");
        CHECK(strcmp(l.lines[7], "last") == 0, "read_stream: last line without newline");
    }
    CHECK(l.n_bad == 3 && l.bad_lines[0] == 3 && l.bad_lines[1] == 4 && l.bad_lines[2] == 6,
          "read_stream: bad lines 3, 4, 6");
    CHECK(l.n_bad == 3 && !strcmp(l.bad_reasons[0], "invalid UTF-8") && !strcmp(l.bad_reasons[1], "NUL byte"),
          "read_stream: reasons");
    CHECK(l.n_blank == 2 && l.first_blank == 2, "read_stream: blank lines 2 and 5");
    score_lines_free(&l);

    /* Many bad lines: all counted, the first SCORE_BAD_LINES_KEPT kept. */
    char many[64];
    for (int i = 0; i < 32; i++) many[2 * i] = '\xff', many[2 * i + 1] = '\n';
    f = fmemopen(many, sizeof many, "rb");
    CHECK(score_read_stream(f, "mem", NULL, &l, &err) == 0 && l.n == 32 && l.n_bad == 32 &&
              l.bad_lines[SCORE_BAD_LINES_KEPT - 1] == SCORE_BAD_LINES_KEPT,
          "read_stream: 32 bad lines counted");
    fclose(f);
    score_lines_free(&l);

    CHECK(score_read_file(FIXTURE_DIR "no-such-file.txt", NULL, &l, &err) == -1 &&
              strncmp(err.msg, FIXTURE_DIR "no-such-file.txt: ", strlen(FIXTURE_DIR) + 18) == 0,
          "read_file: missing file -> error naming it");
    CHECK(score_read_file("tests", NULL, &l, &err) == -1 && strstr(err.msg, "tests: "), "read_file: a directory");
}

static void test_print(void)
{
    char *hyp[] = {"the cat sat on the mat", "a dog ran"};
    char *ref[] = {"the cat sat on the mat", "the dog ran away fast"};
    ScoreResult res;
    ScoreSentence per[2];
    score_pairs(hyp, ref, 2, NULL, &res, per);
    /* Hand-computed in test_bleu.c: corpus 70.751847345039, sentence 2 28.254432923045. */
    close_to(res.bleu.score, 70.75184734503891, "score_pairs: two-sentence corpus BLEU");
    close_to(per[1].bleu.score, 28.254432923044856, "score_pairs: sentence BLEU of pair 2");

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    score_print(&res, per, 0, f);
    fclose(f);
    const char *first = "1\tBLEU = 100.00 100.0/100.0/100.0/100.0 (BP = 1.000 ratio = 1.000 hyp_len = 6 "
                        "ref_len = 6)\tchrF2 = 100.00\n2\tBLEU = 28.25 ";
    CHECK(strncmp(buf, first, strlen(first)) == 0, "print: sentence lines first");
    CHECK(strstr(buf, "\nBLEU = 70.75 88.9/85.7/80.0/100.0 (BP = 0.801 ratio = 0.818 hyp_len = 9 ref_len = 11)\n"
                      "chrF2 = ") != NULL,
          "print: the corpus BLEU line as nmt eval prints it");
    CHECK(strstr(buf, "\npairs = 2\nBLEU signature: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|compat:sacrebleu-2.5.1\n"
                      "sentence BLEU signature: nrefs:1|case:mixed|eff:yes|") != NULL,
          "print: pairs and signatures");
    free(buf);

    f = open_memstream(&buf, &len);
    score_print(&res, per, 1, f);
    fclose(f);
    cJSON *o = cJSON_Parse(buf);
    CHECK(o && cJSON_IsObject(o), "print --json: one JSON object");
    CHECK(o && strchr(buf, '\n') == buf + len - 1, "print --json: one line");
    if (o) {
        close_to(item(o, "bleu")->valuedouble, res.bleu.score, "print --json: bleu");
        close_to(item(o, "chrf")->valuedouble, res.chrf, "print --json: chrf");
        CHECK(cJSON_GetArraySize(item(o, "sentences")) == 2, "print --json: 2 sentences");
        close_to(item(cJSON_GetArrayItem(item(o, "sentences"), 1), "bleu")->valuedouble, per[1].bleu.score,
             "print --json: sentence 2 bleu");
    }
    cJSON_Delete(o);
    free(buf);
}

int main(void)
{
    char *text = read_text(FIXTURE_DIR "expected.json");
    cJSON *fx = cJSON_Parse(text);
    if (!fx) {
        fprintf(stderr, "test_score: %sexpected.json is not JSON\n", FIXTURE_DIR);
        return 2;
    }
    test_real_pairs(fx);
    test_cases(fx);
    test_option_cases(fx);
    test_published();
    test_read_stream();
    test_print();
    printf("  ok %ld scores compared with the fixture, max relative difference %.3g (tolerance %.0e)\n",
           values_compared, worst_diff, TOL);
    cJSON_Delete(fx);
    free(text);
    return check_report("test_score");
}
