/* test_bleu.c — 13a tokenisation, corpus / sentence BLEU and chrF2.
 *
 * Every expected value below is HAND-COMPUTED from the rules in sacreBLEU 2.x's
 * source (metrics/bleu.py compute_bleu, metrics/chrf.py _compute_f_score and
 * _get_match_statistics, tokenizers/tokenizer_13a.py and tokenizer_re.py); the
 * arithmetic is written next to each case. sacreBLEU itself is not installable here,
 * so none of these numbers comes from running it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"    /* defines: bleu_tokenize_13a, bleu_stats_add, bleu_compute, ... */
#include "check.h"   /* defines: CHECK, check_report */

/* |got - want| <= 1e-6 on a 0..100 scale. */
static void near(double got, double want, const char *what)
{
    int ok = fabs(got - want) <= 1e-6;
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "     got %.12f, want %.12f\n", got, want);
}

static void tok_is(const char *line, const char *want)
{
    char *got = bleu_tokenize_13a(line);
    int ok = strcmp(got, want) == 0;
    CHECK(ok, line);
    if (!ok) fprintf(stderr, "     got [%s], want [%s]\n", got, want);
    free(got);
}

static BleuScore corpus1(const char *hyp, const char *ref)
{
    BleuStats s = {0};
    bleu_stats_add(&s, hyp, ref, NULL);
    return bleu_compute(&s);
}

/* ---- 13a ------------------------------------------------------------------- */

static void test_tokenize_13a(void)
{
    /* '!' is split off by the punctuation class; ',' after the non-digit 'o' by rule 2. */
    tok_is("Hello, world!", "Hello , world !");
    /* "3.5" and "1,000": the '.' / ',' has a digit on both sides, so neither rule 2
     * (needs a non-digit before) nor rule 3 (needs a non-digit after) fires. The final
     * '.' sees the padding space after it. */
    tok_is("It costs 3.5 dollars, or 1,000 cents.", "It costs 3.5 dollars , or 1,000 cents .");
    /* A digit before and a space after: only rule 3 fires. */
    tok_is("version 2.", "version 2 .");
    /* ".5": the padding space before '.' is a non-digit, so rule 2 splits it. */
    tok_is(".5", ". 5");
    /* "e.g.": rule 2 matches "e." then "g." (re.sub's left-to-right scan). */
    tok_is("e.g.", "e . g .");
    /* Entities are unescaped, then '"', '&', '<', '>' are punctuation to split off. */
    tok_is("&quot;Yes&quot; &amp; no &lt;b&gt;", "\" Yes \" & no < b >");
    /* Replacements run in order, once each: "&amp;quot;" -> "&quot;" stays literal
     * because the &quot; pass already ran; then '&' and ';' are split off. */
    tok_is("&amp;quot;", "& quot ;");
    /* '-' is not in the punctuation class: kept inside words, split only after a
     * digit ("2-3" -> "2 - 3"; "x-" stays). The apostrophe is never split. */
    tok_is("well-known 2-3 x- don't", "well-known 2 - 3 x- don't");
    tok_is("$5 (hi) a/b", "$ 5 ( hi ) a / b");
    /* "<skipped>" vanishes; "-\n" joins a hyphenated line break; other '\n' -> ' '. */
    tok_is("a<skipped>b hy-\nphen two\nlines", "ab hyphen two lines");
    /* Non-ASCII letters are ordinary characters; U+00A0 (no-break space) is
     * whitespace to Python's str.split(), so it separates tokens. */
    tok_is("caf\xc3\xa9. a\xc2\xa0" "b", "caf\xc3\xa9 . a b");
    tok_is("   ", "");
    tok_is("", "");
}

/* ---- corpus BLEU ------------------------------------------------------------ */

static void test_bleu_identical(void)
{
    /* 6 tokens; every n-gram matches: 6/6 5/5 4/4 3/3 -> all precisions 100, bp 1. */
    BleuScore b = corpus1("the cat sat on the mat", "the cat sat on the mat");
    near(b.score, 100.0, "identical -> 100");
    for (int n = 0; n < 4; n++) near(b.precisions[n], 100.0, "identical precision");
    near(b.bp, 1.0, "identical bp");
    near(b.ratio, 1.0, "identical ratio");
}

static void test_bleu_no_overlap(void)
{
    /* No match of any order -> early stop: score 0, precisions 0; bp 1 (4 vs 4). */
    BleuScore b = corpus1("a b c d", "e f g h");
    near(b.score, 0.0, "no overlap -> 0");
    near(b.precisions[0], 0.0, "no overlap p1");
    near(b.bp, 1.0, "no overlap bp");
}

static void test_bleu_brevity(void)
{
    /* hyp "the cat sat on" (4 tokens) is a prefix of the 6-token reference: matches
     * 4/4 3/3 2/2 1/1, all precisions 100. bp = exp(1 - 6/4) = exp(-0.5).
     * score = 100 exp(-0.5) = 60.653065971263... */
    BleuScore b = corpus1("the cat sat on", "the cat sat on the mat");
    near(b.bp, exp(-0.5), "brevity bp");
    near(b.score, 60.653065971263345, "brevity score");
    near(b.ratio, 4.0 / 6.0, "brevity ratio");
    near(b.hyp_len, 4, "brevity hyp_len");
    near(b.ref_len, 6, "brevity ref_len");

    /* An empty hypothesis: hyp_len 0 < ref_len -> bp 0, and no matches -> score 0. */
    b = corpus1("", "the cat");
    near(b.bp, 0.0, "empty hyp bp");
    near(b.score, 0.0, "empty hyp score");
}

static void test_bleu_exp_smoothing(void)
{
    /* hyp "a b c x d", ref "a b c y d" (5 tokens each, bp 1).
     *   1-grams: a b c d match            4/5 -> 80
     *   2-grams: ab bc match (cx xd don't) 2/4 -> 50
     *   3-grams: abc                      1/3 -> 33.333...
     *   4-grams: abcx bcxd                0/2 -> first zero order: smooth 2,
     *                                             p4 = 100 / (2 * 2) = 25
     * score = (80 * 50 * 100/3 * 25)^(1/4) = 3333333.33^(1/4) = 42.728700639623 */
    BleuScore b = corpus1("a b c x d", "a b c y d");
    near(b.precisions[3], 25.0, "exp smoothing p4");
    near(b.score, 42.728700639623405, "exp smoothing score");

    /* Three zero orders, so the smoothing doubles each time. hyp "a x b y c",
     * ref "a b c z w" (5 tokens each, bp 1):
     *   1-grams: a b c        3/5 -> 60
     *   2-grams: none of 4        -> 100 / (2 * 4) = 12.5
     *   3-grams: none of 3        -> 100 / (4 * 3) = 8.3333...
     *   4-grams: none of 2        -> 100 / (8 * 2) = 6.25
     * score = (60 * 12.5 * 100/12 * 6.25)^(1/4) = 39062.5^(1/4) = 14.058533129759 */
    b = corpus1("a x b y c", "a b c z w");
    near(b.precisions[1], 12.5, "doubling p2");
    near(b.precisions[2], 100.0 / 12.0, "doubling p3");
    near(b.precisions[3], 6.25, "doubling p4");
    near(b.score, 14.058533129758727, "doubling score");
}

static void test_bleu_tokenised_and_clipped(void)
{
    /* 13a matters: "Hello, world!" -> Hello , world ! (4); "Hello world!" -> 3 tokens.
     *   1: Hello world !             3/4 -> 75
     *   2: "world !" only            1/3 -> 33.333...
     *   3: 0/2 -> 100 / (2 * 2) = 25;  4: 0/1 -> 100 / (4 * 1) = 25
     * bp 1 (4 > 3). score = (75 * 100/3 * 25 * 25)^(1/4) = 1562500^(1/4)
     *                     = sqrt(1250) = 35.355339059327 */
    BleuScore b = corpus1("Hello, world!", "Hello world!");
    near(b.score, 35.35533905932738, "tokenised score");

    /* Clipping: "the" x4 against one "the" in the reference counts 1/4.
     *   1: 1/4 -> 25;  2: 0/3 -> 100/(2*3);  3: 0/2 -> 100/(4*2);  4: 0/1 -> 100/(8*1)
     * bp 1 (4 > 2). score = (25 * 16.667 * 12.5 * 12.5)^(1/4) = 15.973577606157 */
    b = corpus1("the the the the", "the cat");
    near(b.precisions[0], 25.0, "clipped p1");
    near(b.score, 15.973577606156812, "clipped score");
}

static void test_bleu_two_sentences(void)
{
    /* Segment 1: identical 6 tokens: matches 6 5 4 3 / totals 6 5 4 3.
     * Segment 2: hyp "a dog ran" (3), ref "the dog ran away fast" (5):
     *   1: dog ran 2/3;  2: "dog ran" 1/2;  3: 0/1;  4: 0/0.
     * Summed: matches 8 6 4 3, totals 9 7 5 3, hyp_len 9, ref_len 11.
     * p = 800/9, 600/7, 80, 100 (no zero-match order, so no smoothing);
     * bp = exp(1 - 11/9) = 0.800737402917.
     * score = bp * (800/9 * 600/7 * 80 * 100)^(1/4) = 70.751847345039
     * (not the mean of the two sentence scores). */
    BleuStats s = {0};
    bleu_stats_add(&s, "the cat sat on the mat", "the cat sat on the mat", NULL);
    bleu_stats_add(&s, "a dog ran", "the dog ran away fast", NULL);
    near(s.matches[0], 8, "corpus m1");
    near(s.matches[3], 3, "corpus m4");
    near(s.totals[1], 7, "corpus t2");
    near(s.totals[3], 3, "corpus t4");
    BleuScore b = bleu_compute(&s);
    near(b.bp, exp(1.0 - 11.0 / 9.0), "corpus bp");
    near(b.score, 70.75184734503891, "corpus score");
}

static void test_bleu_sentence(void)
{
    /* "a dog ran" vs "the dog ran away fast": matches 2 1 0 0, totals 3 2 1 0.
     * Corpus mode (effective_order off): the loop stops at order 4 (no 4-grams),
     * p4 stays 0, log(0) is floored to -9999999999 -> score 0. */
    near(corpus1("a dog ran", "the dog ran away fast").score, 0.0, "short hyp, corpus mode");

    /* sentence_bleu (effective order on, exp smoothing): orders 1..3 only.
     *   p1 = 200/3, p2 = 50, p3 = 0/1 -> 100 / (2 * 1) = 50
     *   bp = exp(1 - 5/3) = 0.513417119033
     *   score = bp * (200/3 * 50 * 50)^(1/3) = 28.254432923045 */
    BleuScore b = bleu_sentence("a dog ran", "the dog ran away fast", NULL);
    near(b.precisions[2], 50.0, "sentence p3");
    near(b.score, 28.254432923044856, "sentence score");
    near(bleu_sentence("the cat sat on the mat", "the cat sat on the mat", NULL).score, 100.0,
         "sentence identical");
}

/* sacreBLEU's fields; "compat:" where sacreBLEU names the release that computed it. */
static void test_signatures(void)
{
    char sig[METRIC_SIGNATURE_MAX];
    CHECK(strcmp(bleu_signature(NULL, 0, sig), "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|compat:sacrebleu-2.5.1") ==
              0,
          "bleu signature, defaults");
    MetricOptions lc_zh = {.tokenize = BLEU_TOKENIZE_ZH, .lowercase = 1};
    CHECK(strcmp(bleu_signature(&lc_zh, 0, sig), "nrefs:1|case:lc|eff:no|tok:zh|smooth:exp|compat:sacrebleu-2.5.1") ==
              0,
          "bleu signature, lowercased zh");
    MetricOptions chr = {.tokenize = BLEU_TOKENIZE_CHAR};
    CHECK(strcmp(bleu_signature(&chr, 1, sig), "nrefs:1|case:mixed|eff:yes|tok:char|smooth:exp|compat:sacrebleu-2.5.1") ==
              0,
          "sentence bleu signature, char");
    CHECK(strcmp(chrf_signature(NULL, sig), "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|compat:sacrebleu-2.5.1") == 0,
          "chrf signature");
    CHECK(strcmp(chrf_signature(&lc_zh, sig), "nrefs:1|case:lc|eff:yes|nc:6|nw:0|space:no|compat:sacrebleu-2.5.1") == 0,
          "chrf signature, lowercased");
    CHECK(strstr(bleu_signature(NULL, 0, sig), "version:") == NULL, "no sacreBLEU version claimed");
}

/* Names of the tokenisers both ways, and sacreBLEU's choice per target language. */
static void test_tokenizer_names(void)
{
    const char *names[] = {"13a", "zh", "char", "none"};
    for (int i = 0; i < 4; i++) {
        BleuTokenize t;
        CHECK(bleu_tokenize_parse(names[i], &t) == 0 && strcmp(bleu_tokenize_name(t), names[i]) == 0,
              "tokeniser name round trip");
    }
    BleuTokenize t = BLEU_TOKENIZE_ZH;
    CHECK(bleu_tokenize_parse("intl", &t) == -1 && t == BLEU_TOKENIZE_ZH, "unknown tokeniser refused, untouched");
    int substitute = -1;
    CHECK(bleu_tokenize_for_language("zh", &substitute) == BLEU_TOKENIZE_ZH && substitute == 0, "zh target: zh");
    CHECK(bleu_tokenize_for_language("de", &substitute) == BLEU_TOKENIZE_13A && substitute == 0, "de target: 13a");
    CHECK(bleu_tokenize_for_language("ja", &substitute) == BLEU_TOKENIZE_CHAR && substitute == 1,
          "ja target: char instead of MeCab, said");
}

/* Python's str.lower(): the special cases, and bytes that are not UTF-8 kept. */
static void test_lowercase(void)
{
    struct { const char *in, *out; } cases[] = {
        {"ABC def", "abc def"},
        {"\xc4\xb0", "i\xcc\x87"},                                  /* İ -> i + combining dot */
        {"\xce\x9f\xce\xa3", "\xce\xbf\xcf\x82"},                   /* ΟΣ -> ος: final */
        {"\xce\xa3\xce\x9f", "\xcf\x83\xce\xbf"},                   /* ΣΟ -> σο: not final */
        {"\xce\xa3", "\xcf\x83"},                                    /* Σ alone: no cased before */
        {"\xce\x9f\xce\xa3\xce\x9f", "\xce\xbf\xcf\x83\xce\xbf"},     /* ΟΣΟ: inside a word */
        {"\xce\x9f\xce\xa3'", "\xce\xbf\xcf\x82'"},                 /* ΟΣ': apostrophe ignorable */
        {"\xc3\x9f", "\xc3\x9f"},                                    /* ß has no one-letter lowercase */
        {"A\xff\xfe" "B", "a\xff\xfe" "b"},                        /* invalid bytes as they were */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = bleu_lowercase(cases[i].in);
        CHECK(strcmp(got, cases[i].out) == 0, "bleu_lowercase");
        if (strcmp(got, cases[i].out)) fprintf(stderr, "     case %zu: got [%s], want [%s]\n", i, got, cases[i].out);
        free(got);
    }
}

/* ---- chrF ------------------------------------------------------------------- */

static void test_chrf(void)
{
    near(chrf_sentence("the cat sat", "the cat sat", NULL), 100.0, "chrF identical");
    /* No shared character: P = R = 0 at every counted order -> 0. */
    near(chrf_sentence("abc", "xyz", NULL), 0.0, "chrF disjoint");
    /* Whitespace is removed before counting: "a b" and "ab" are the same string,
     * and so is "a<U+00A0>b". */
    near(chrf_sentence("a b", "ab", NULL), 100.0, "chrF ignores spaces");
    near(chrf_sentence("a\xc2\xa0" "b", "ab", NULL), 100.0, "chrF ignores no-break space");

    /* hyp "ab", ref "abc":
     *   order 1: hyp a b (2), ref a b c (3), match 2 -> P 1,   R 2/3
     *   order 2: hyp ab  (1), ref ab bc (2), match 1 -> P 1,   R 1/2
     *   order 3: hyp none, ref abc -> n_hyp 0, left out; orders 4-6 have no n-grams.
     * P = (1 + 1)/2 = 1, R = (2/3 + 1/2)/2 = 7/12.
     * chrF2 = 100 * 5 P R / (4 P + R) = 100 * (35/12) / (55/12) = 700/11 = 63.6363... */
    near(chrf_sentence("ab", "abc", NULL), 700.0 / 11.0, "chrF small case");

    /* Characters are code points: "ç à" vs "çb" (c-cedilla C3 A7, a-grave C3 A0 share
     * the lead byte C3, which a byte count would wrongly match).
     *   order 1: ç à vs ç b -> match 1: P 1/2, R 1/2;  order 2: "çà" vs "çb" -> 0.
     * P = R = 1/4 -> chrF2 = 25. */
    near(chrf_sentence("\xc3\xa7 \xc3\xa0", "\xc3\xa7" "b", NULL), 25.0, "chrF code points");

    /* Corpus aggregation, with a reference shorter than some orders.
     * Segment 1: hyp "abcd", ref "ab":
     *   o1 hyp 4 ref 2 match 2;  o2 hyp 3 ref 1 match 1;
     *   o3, o4: the reference has no n-grams, so the hypothesis's 2 and 1 n-grams
     *   are NOT counted (sacreBLEU: "hyp_count if ref_ngrams else 0").
     * Segment 2: hyp = ref = "abc": o1 3/3/3, o2 2/2/2, o3 1/1/1.
     * Sums: o1 (7, 5, 5), o2 (5, 3, 3), o3 (1, 1, 1), o4 (0, 0, 0).
     * P = (5/7 + 3/5 + 1)/3 = 27/35, R = (1 + 1 + 1)/3 = 1.
     * chrF2 = 100 * 5 (27/35) / (4 (27/35) + 1) = 100 * 135/143 = 94.4055944... */
    ChrfStats s = {0};
    chrf_stats_add(&s, "abcd", "ab", NULL);
    chrf_stats_add(&s, "abc", "abc", NULL);
    near(s.hyp[2], 1, "chrF o3 hyp count skips ref-less segment");
    near(s.hyp[3], 0, "chrF o4 hyp count skips ref-less segment");
    near(s.hyp[0], 7, "chrF o1 hyp count");
    near(s.match[1], 3, "chrF o2 matches");
    near(chrf_compute(&s), 13500.0 / 143.0, "chrF corpus");

    ChrfStats empty = {0};
    near(chrf_compute(&empty), 0.0, "chrF no statistics");
}

/* Invalid UTF-8 (sacreBLEU would refuse to read it) is kept, one character per bad
 * byte, rather than crashing or merging bytes: 0xFF and 0xFE stay distinct. */
static void test_invalid_utf8(void)
{
    tok_is("a\xff" "b.", "a\xff" "b .");
    near(chrf_sentence("\xff\xfe", "\xff\xfe", NULL), 100.0, "chrF invalid bytes identical");
    near(chrf_sentence("\xff", "\xfe", NULL), 0.0, "chrF invalid bytes distinct");
    near(corpus1("x \xff y", "x \xff y").score, 0.0, "BLEU 3 tokens, corpus mode -> 0");
    near(bleu_sentence("x \xff y", "x \xff y", NULL).score, 100.0, "BLEU invalid bytes identical");
}

int main(void)
{
    test_tokenize_13a();
    test_bleu_identical();
    test_bleu_no_overlap();
    test_bleu_brevity();
    test_bleu_exp_smoothing();
    test_bleu_tokenised_and_clipped();
    test_bleu_two_sentences();
    test_bleu_sentence();
    test_signatures();
    test_tokenizer_names();
    test_lowercase();
    test_chrf();
    test_invalid_utf8();
    return check_report("test_bleu");
}
