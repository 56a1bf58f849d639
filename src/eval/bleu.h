/* bleu.h — corpus BLEU and chrF exactly as sacreBLEU 2.x computes them, with its
 * defaults or its tokenize/lowercase options, so that the numbers nmt prints can be compared with published ones.
 *
 * What was reimplemented, read from mjpost/sacrebleu (metrics/bleu.py, metrics/chrf.py,
 * metrics/helpers.py, metrics/base.py, compat.py, tokenizers/tokenizer_13a.py,
 * tokenizers/tokenizer_re.py, tokenizer_zh.py, tokenizer_char.py, tokenizer_none.py,
 * utils.py:my_log):
 *
 *   BLEU  = BLEU(tokenize="13a", smooth_method="exp", lowercase=False,
 *               effective_order=False, max_ngram_order=4), one reference per segment;
 *           also tokenize="zh", "char" or "none" and lowercase=True (MetricOptions).
 *   chrF2 = CHRF(char_order=6, word_order=0, beta=2, lowercase=False,
 *               whitespace=False, eps_smoothing=False), one reference per segment;
 *           also lowercase=True.
 *
 * Both are corpus metrics: sufficient statistics are summed over segments and the
 * score is computed once from the sums (it is NOT the mean of sentence scores).
 *
 *     MetricOptions opt = {0};     // 13a, case kept: sacreBLEU's defaults
 *     BleuStats bs = {0};          ChrfStats cs = {0};
 *     for (i = 0; i < n; i++) { bleu_stats_add(&bs, hyp[i], ref[i], &opt);
 *                               chrf_stats_add(&cs, hyp[i], ref[i], &opt); }
 *     BleuScore b = bleu_compute(&bs);     // b.score in 0..100
 *     double c = chrf_compute(&cs);        // 0..100
 *     char sig[METRIC_SIGNATURE_MAX];
 *     printf("BLEU|%s = %.2f\n", bleu_signature(&opt, 0, sig), b.score);
 *
 * Text is UTF-8. Bytes that are not valid UTF-8 (which sacreBLEU, reading files
 * strictly, would refuse) are treated as one character each, like Python's
 * "surrogateescape": they never crash or merge with their neighbours.
 *
 * One deliberate difference: sacreBLEU raises an error for an empty reference string
 * (""); these functions cannot fail and score it as a reference with no tokens, which
 * is what sacreBLEU does for a whitespace-only reference.
 */
#ifndef BLEU_H
#define BLEU_H

#define BLEU_MAX_ORDER 4    /* word n-gram orders 1..4 */

/* ---- options: sacreBLEU's --tokenize and --lowercase ------------------------ */

/* How BLEU splits text into words (sacreBLEU's tokenizers of the same names). */
typedef enum {
    BLEU_TOKENIZE_13A,    /* mteval-v13a: the default (bleu_tokenize_13a) */
    BLEU_TOKENIZE_ZH,     /* every Chinese character a word of its own, then 13a's
                             regular expressions without its other steps (TokenizerZh) */
    BLEU_TOKENIZE_CHAR,   /* every character a word (TokenizerChar) */
    BLEU_TOKENIZE_NONE,   /* the text's own whitespace only (TokenizerNone) */
} BleuTokenize;

/* What a score is computed with; {0} is sacreBLEU's default: 13a, case kept. */
typedef struct {
    BleuTokenize tokenize;   /* BLEU only; chrF does not tokenise */
    int lowercase;           /* sacreBLEU -lc: both sides lowercased first, as Python's
                                str.lower() does (bleu_lowercase), for BLEU and chrF */
} MetricOptions;

/* "13a", "zh", "char", "none" -> *out; -1 for any other name. */
int bleu_tokenize_parse(const char *name, BleuTokenize *out);
const char *bleu_tokenize_name(BleuTokenize t);

/* The tokeniser sacreBLEU picks for a target language (its -l SRC-TGT, given the TGT
 * code): "zh" -> zh, anything else -> 13a. sacreBLEU uses MeCab for "ja" and "ko",
 * which nmt does not have: for those this returns char and sets *substitute to 1 (the
 * caller says so); otherwise *substitute is 0. */
BleuTokenize bleu_tokenize_for_language(const char *target, int *substitute);

/* For callers not told which tokeniser to use (nmt eval, validation): a guess from the
 * n references. When Han characters and kana together make at least a fifth of their
 * characters other than whitespace, the text is Chinese or Japanese, which has no
 * spaces between words: zh, or char if there is any kana (Japanese; sacreBLEU's
 * ja-mecab is not in nmt). Otherwise 13a. */
BleuTokenize bleu_tokenize_guess(char *const *refs, long n);

/* Python's str.lower() on UTF-8 text: each character's lowercase mapping (utf8proc),
 * U+0130 to "i" + U+0307 as Python's special casing, and a capital sigma to the final
 * sigma at the end of a word (Python's Final_Sigma rule; "case-ignorable" taken as the
 * categories Mn, Me, Cf, Lm, Sk and the apostrophes, period, colon and middle dot).
 * Bytes that are not UTF-8 pass unchanged. Returns a malloc'd string. */
char *bleu_lowercase(const char *text);
#define CHRF_CHAR_ORDER 6   /* character n-gram orders 1..6 */
#define CHRF_BETA 2.0       /* recall weighs beta^2 = 4 times as much as precision */

/* ---- 13a tokenisation -------------------------------------------------------- */

/* sacreBLEU's Tokenizer13a (mteval-v13a.pl) on one line: removes "<skipped>", joins
 * "-\n" hyphenations and other newlines, unescapes &quot; &amp; &lt; &gt; (in that
 * order), splits off ASCII punctuation and symbols other than ' , - . ; splits '.'
 * and ',' unless they sit between digits ("3.5", "1,000" stay whole); splits '-'
 * after a digit; then collapses whitespace (Python's str.split(): Unicode spaces such
 * as U+00A0 count) into single spaces with none at either end.
 * Returns a malloc'd string the caller frees. BLEU additionally strips trailing
 * whitespace from each segment before this (see bleu_stats_add). */
char *bleu_tokenize_13a(const char *line);

/* ---- BLEU ------------------------------------------------------------------- */

/* Sufficient statistics of a corpus; zero-initialise, then add segments. */
typedef struct {
    double matches[BLEU_MAX_ORDER];   /* clipped n-gram matches, n = 1..4 */
    double totals[BLEU_MAX_ORDER];    /* n-grams in the hypotheses, n = 1..4 */
    double hyp_len, ref_len;          /* tokens after 13a */
} BleuStats;

/* Add one hypothesis / reference pair of raw (detokenised) text: each side is
 * lowercased if opt says so, right-stripped and tokenised as opt says (NULL: 13a, case
 * kept), then n-grams of orders 1..4 are counted and each hypothesis n-gram's matches
 * are clipped to its count in the reference. */
void bleu_stats_add(BleuStats *s, const char *hyp, const char *ref, const MetricOptions *opt);

/* The words BLEU counts in text under opt (NULL: the defaults), separated by single
 * spaces: lowercased if asked, right-stripped, tokenised. Returns a malloc'd string. */
char *bleu_preprocess(const char *text, const MetricOptions *opt);

typedef struct {
    double score;                         /* 0..100 */
    double precisions[BLEU_MAX_ORDER];    /* 0..100, after smoothing */
    double bp;                            /* brevity penalty */
    double ratio;                         /* hyp_len / ref_len, 0 when ref_len == 0 */
    double hyp_len, ref_len;
} BleuScore;

/* Corpus BLEU from summed statistics, as sacreBLEU's BLEU.compute_bleu with
 * smooth_method="exp", effective_order=False:
 *   bp = 1 if hyp_len >= ref_len, else exp(1 - ref_len/hyp_len), and 0 if hyp_len == 0;
 *   no matches of any order -> score 0 and all precisions 0;
 *   for n = 1..4, stopping at the first order with no hypothesis n-grams:
 *     p_n = 100 m_n / t_n, or, when m_n == 0, 100 / (2^k t_n) where k counts the
 *     zero-match orders so far (mteval's smoothing: 1/2, 1/4, 1/8 of a match);
 *   score = bp * exp(mean over n = 1..4 of log p_n), where an order that was never
 *   reached has p_n = 0 and log 0 is taken as -9999999999 (so the score is 0). */
BleuScore bleu_compute(const BleuStats *s);

/* sacrebleu.sentence_bleu(hyp, [ref]) with its 2.x defaults: smooth_method="exp" and
 * use_effective_order=True. Effective order means the mean of log precisions runs
 * only over the orders the hypothesis has n-grams for (a 3-token hypothesis is
 * scored on orders 1..3); zero-match orders inside that range are still smoothed by
 * exp as above, not dropped. */
BleuScore bleu_sentence(const char *hyp, const char *ref, const MetricOptions *opt);

/* The signature of a BLEU computed with opt (NULL: the defaults), in sacreBLEU's form,
 * written into buf and returned:
 *   "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|compat:sacrebleu-2.5.1"
 * case:lc when lowercased, tok: the tokeniser's name, eff:yes for bleu_sentence
 * (sentence != 0). sacreBLEU ends with "version:2.5.1", the release that computed the
 * score; nmt computed it, so it says which release it follows instead. */
#define METRIC_SIGNATURE_MAX 96
const char *bleu_signature(const MetricOptions *opt, int sentence, char buf[METRIC_SIGNATURE_MAX]);

/* ---- chrF ------------------------------------------------------------------- */

/* Per character n-gram order n = 1..6 (index n-1), summed over segments. */
typedef struct {
    double hyp[CHRF_CHAR_ORDER];     /* hypothesis n-grams (0 for a segment whose
                                        reference has no n-grams of that order) */
    double ref[CHRF_CHAR_ORDER];     /* reference n-grams */
    double match[CHRF_CHAR_ORDER];   /* clipped matches */
} ChrfStats;

/* Add one pair: lowercased if opt says so (NULL: case kept); all whitespace (Python's
 * definition) is removed, the rest is split
 * into Unicode code points, and character n-grams of orders 1..6 are counted. As in
 * sacreBLEU, a segment contributes no hypothesis n-grams of an order for which its
 * reference has none (a reference shorter than n characters). */
void chrf_stats_add(ChrfStats *s, const char *hyp, const char *ref, const MetricOptions *opt);

/* chrF2 from summed statistics, as sacreBLEU's CHRF._compute_f_score without eps
 * smoothing: average precision P and recall R over the orders whose hypothesis AND
 * reference counts are both non-zero (other orders are left out of the average, not
 * counted as 0), then 100 (1 + beta^2) P R / (beta^2 P + R); 0 if no order counts or
 * P + R == 0. */
double chrf_compute(const ChrfStats *s);

/* sacrebleu.sentence_chrf(hyp, [ref]): chrf_compute over this one pair's stats. */
double chrf_sentence(const char *hyp, const char *ref, const MetricOptions *opt);

/* "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|compat:sacrebleu-2.5.1" (case:lc
 * when lowercased; sacreBLEU writes eff:yes when eps_smoothing is off), into buf. */
const char *chrf_signature(const MetricOptions *opt, char buf[METRIC_SIGNATURE_MAX]);

#endif
