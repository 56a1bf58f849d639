/* test_decode.c — greedy and beam search (decode.c) on a toy decoder whose next-word
 * probabilities are a hand-written table, so that every hypothesis and its score can be
 * worked out by hand (the working is in the comments above each case).
 *
 * THE TOY. Target words are the reserved ids plus three letters:
 *     0 <pad>  1 <unk>  2 <sos>  3 <eos>  4 a  5 b  6 c        (V = 7)
 * A sentence is known by its source's first id, its tag. The toy's rows keep the words
 * they were fed (from step 1 on) and the reorders they were told about, nothing else:
 * P(next | tag, prefix) comes from the rule with that tag and prefix (prefix written as
 * letters, "u" for <unk>), or, when there is none, from the default
 *     P(<eos>) = .9, P(a) = .1.
 * The logits are log p, and log p = -30 stands for p = 0 (e^-30 vanishes next to 1 in
 * float, so the log-softmax gives back log p to about 1e-7; a rule with p = 1 gives
 * exactly 0). A hypothesis's score is then the log of the product of its words'
 * probabilities, <eos> included. Every rule gives at least two words p > 0, so with K = 2
 * a step always has 2K real candidates and a p = 0 word never enters a beam.
 *
 * The toy also reports an attention row per step: at a prefix y_1..y_t, source position
 * j < src_len gets code(y) * 16 + j + 1, where code(y) reads the ids as base-8 digits;
 * positions past the source get -1. So a hypothesis's attention row i can only be the
 * one of its own prefix y_1..y_i, and a row shifted, taken from another beam or read
 * past the source would show. The toy counts every break of the Decoder contract it
 * can see (step order, t >= max_steps, <sos> not fed at t = 0, <pad>/<sos> fed later,
 * a parent from another sentence) and the tests require none.
 *
 * Scores must agree with the hand values to TOL; words, finished and counts exactly.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/batch.h"  /* defines: Batch, batch_fill_source, batch_free */
#include "check.h"  /* defines: CHECK, check_report */
#include "decode/decode.h" /* defines: Decoder, greedy_search, beam_search, search_run, forced_search, Hypothesis */
#include "decode/sample.h" /* defines: Sampling, sample_support, sample_word, sample_stream */
#include "decode/translate.h" /* defines: quality_estimates */
#include "text/vocab.h"  /* defines: VOCAB_PAD, VOCAB_UNK, VOCAB_SOS, VOCAB_EOS */

#define TOL 1e-6
enum { A = 4, B, C, V }; /* the toy's words a, b, c and the vocabulary size */
#define MAX_ROWS 64
#define MAX_STEPS 16
#define MAX_SRC 8
#define NO_P (-30.0f) /* the logit of a word the table gives no probability */

/* ---------------------------------------------------------------- the table */

typedef struct {
    int tag;
    const char *prefix;  /* the words so far as letters: "ab" = a b */
    float p[V];          /* P(next word) by id: pad unk sos eos a b c */
} Rule;

/*                 pad  unk  sos  eos   a    b    c */
static const Rule rules[] = {
    /* 1: the n-best order */
    {1, "",   {0,   .05, 0,   .05, .6,  .3,  0}},
    {1, "a",  {0,   0,   0,   .1,  0,   .9,  0}},
    {1, "b",  {0,   0,   0,   .7,  0,   0,   .3}},
    {1, "ab", {0,   0,   0,   .6,  0,   0,   .4}},
    /* 2: the length penalty */
    {2, "",   {0,   .05, 0,   .05, .5,  .4,  0}},
    {2, "a",  {0,   0,   0,   .5,  0,   0,   .5}},
    {2, "b",  {0,   0,   0,   .1,  0,   0,   .9}},
    {2, "ac", {0,   0,   0,   .9,  0,   .1,  0}},
    {2, "bc", {0,   0,   0,   .5,  .5,  0,   0}},
    /* 3, 4, 5, 9: ties */
    {3, "",   {0,   0,   0,   .2,  .4,  .4,  0}},
    {3, "a",  {0,   0,   0,   1,   0,   0,   0}},
    {3, "b",  {0,   0,   0,   1,   0,   0,   0}},
    {4, "",   {0,   .1,  0,   .1,  .4,  .4,  0}},
    {4, "a",  {0,   0,   0,   .5,  0,   0,   .5}},
    {4, "b",  {0,   0,   0,   .5,  0,   0,   .5}},
    {5, "",   {0,   .1,  0,   .1,  .4,  .4,  0}},
    {5, "a",  {0,   0,   0,   .5,  0,   0,   .5}},
    {5, "b",  {0,   0,   0,   0,   0,   0,   1}},
    {5, "bc", {0,   0,   0,   .5,  .5,  0,   0}},
    {5, "ac", {0,   0,   0,   1,   0,   0,   0}},
    {9, "",   {0,   .4,  0,   .2,  .4,  0,   0}},
    {9, "u",  {0,   0,   0,   1,   0,   0,   0}},
    /* 6, 7: the length limit */
    {6, "",   {0,   .05, 0,   .05, .6,  .3,  0}},
    {6, "a",  {0,   0,   0,   .1,  0,   .7,  .2}},
    {6, "b",  {0,   0,   0,   .1,  .1,  0,   .8}},
    {7, "",   {0,   .05, 0,   .05, .6,  .3,  0}},
    {7, "a",  {0,   0,   0,   .5,  0,   .2,  .3}},
    {7, "b",  {0,   0,   0,   .1,  .4,  0,   .5}},
    /* 8: <pad> and <sos> are the likeliest words, and must never be chosen */
    {8, "",   {.3,  0,   .3,  .1,  .2,  .1,  0}},
    {8, "a",  {.5,  0,   .3,  .2,  0,   0,   0}},
    {8, "b",  {.4,  0,   0,   .5,  0,   0,   .1}},
};
static const float default_p[V] = {0, 0, 0, .9f, .1f, 0, 0};

static char letter(int w) { return w == VOCAB_UNK ? 'u' : w == VOCAB_EOS ? 'e' : w >= A ? (char)('a' + w - A) : '?'; }

static const float *rule_for(int tag, const int *words, int len)
{
    char prefix[MAX_STEPS + 1];
    for (int i = 0; i < len; i++)
        prefix[i] = letter(words[i]);
    prefix[len] = '\0';
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (rules[i].tag == tag && strcmp(rules[i].prefix, prefix) == 0) return rules[i].p;
    return default_p;
}

/* The toy's attention weight at source position j after the prefix words[0..len-1]. */
static float toy_weight(const int *words, int len, int j)
{
    long code = 0;
    for (int i = 0; i < len; i++)
        code = code * 8 + words[i];
    return (float)(code * 16 + j + 1);
}

/* ---------------------------------------------------------------- the toy decoder */

typedef struct {
    const Batch *src;
    int K, R, max_steps, want_attn;
    int next_t;                          /* the step expected next: steps taken so far */
    int words[MAX_ROWS][MAX_STEPS];      /* each row's prefix */
    int len[MAX_ROWS];
    float logits[MAX_ROWS * V];          /* (R, V) */
    float attn[MAX_ROWS * MAX_SRC];      /* (R, S) */
    int violations;
} Toy;

static int src_length(const Batch *src, int n)
{
    int len = 0;
    for (int t = 0; t < src->S; t++)
        len += src->mask[t * src->B + n] != 0.0f;
    return len;
}

static void toy_start(void *ctx, const Batch *src, int K, int max_steps, int want_attn)
{
    Toy *toy = ctx;
    toy->src = src;
    toy->K = K;
    toy->R = src->B * K;
    toy->max_steps = max_steps;
    toy->want_attn = want_attn;
    toy->next_t = 0;
    if (toy->R > MAX_ROWS || max_steps > MAX_STEPS || src->S > MAX_SRC) toy->violations++;
    memset(toy->len, 0, sizeof toy->len);
}

static const float *toy_step(void *ctx, int t, const int *prev, const float **attn)
{
    Toy *toy = ctx;
    int S = toy->src->S;
    if (t != toy->next_t++ || t >= toy->max_steps) toy->violations++;
    for (int r = 0; r < toy->R; r++) {
        int n = r / toy->K;
        if (t == 0 ? prev[r] != VOCAB_SOS : prev[r] == VOCAB_PAD || prev[r] == VOCAB_SOS) toy->violations++;
        if (t > 0) toy->words[r][toy->len[r]++] = prev[r];
        if (toy->len[r] != t) toy->violations++;
        const float *p = rule_for(toy->src->src[n], toy->words[r], toy->len[r]);
        for (int w = 0; w < V; w++)
            toy->logits[r * V + w] = p[w] > 0 ? logf(p[w]) : NO_P;
        for (int j = 0; j < S; j++)
            toy->attn[r * S + j] = j < src_length(toy->src, n) ? toy_weight(toy->words[r], toy->len[r], j) : -1.0f;
    }
    *attn = toy->want_attn ? toy->attn : NULL;
    return toy->logits;
}

static void toy_reorder(void *ctx, int t, const int *parent)
{
    Toy *toy = ctx;
    static int words[MAX_ROWS][MAX_STEPS], len[MAX_ROWS];
    if (t != toy->next_t - 1) toy->violations++;
    memcpy(words, toy->words, sizeof words);
    memcpy(len, toy->len, sizeof len);
    for (int r = 0; r < toy->R; r++) {
        if (parent[r] < 0 || parent[r] >= toy->R || parent[r] / toy->K != r / toy->K) {
            toy->violations++;
            continue;
        }
        memcpy(toy->words[r], words[parent[r]], sizeof words[0]);
        toy->len[r] = len[parent[r]];
    }
}

static Decoder toy_decoder(Toy *toy)
{
    return (Decoder){.ctx = toy, .vocab = V, .start = toy_start, .step = toy_step, .reorder = toy_reorder};
}

/* ---------------------------------------------------------------- helpers */

/* A sentence: its tag and source length (the source is tag, 9, 9, ...). */
typedef struct {
    int tag, src_len, limit;
} Sentence;

static void fill_sources(Batch *batch, const Sentence *s, int n)
{
    static int ids[MAX_ROWS][MAX_SRC];
    int *rows[MAX_ROWS], lens[MAX_ROWS];
    for (int i = 0; i < n; i++) {
        ids[i][0] = s[i].tag;
        for (int j = 1; j < MAX_SRC; j++)
            ids[i][j] = 9;
        rows[i] = ids[i];
        lens[i] = s[i].src_len;
    }
    batch_fill_source(batch, rows, lens, n);
}

/* What a hypothesis should be: its words as letters ("u" for <unk>), finished, score. */
typedef struct {
    const char *words;
    int finished;
    double score;
} Expect;

static double worst_score_diff;

/* h against e; its attention rows (when there are some) against the toy's rule. */
static void expect_hypothesis(const Hypothesis *h, Expect e, int src_len, const char *what)
{
    char got[MAX_STEPS + 1];
    for (int i = 0; i < h->len && i < MAX_STEPS; i++)
        got[i] = letter(h->words[i]);
    got[h->len < MAX_STEPS ? h->len : MAX_STEPS] = '\0';
    int words_ok = strcmp(got, e.words) == 0;
    CHECK(words_ok, what);
    CHECK(h->finished == e.finished, what);
    double d = fabs((double)h->score - e.score);
    if (d > worst_score_diff) worst_score_diff = d;
    CHECK(d <= TOL, what);
    if (!words_ok || h->finished != e.finished || d > TOL)
        fprintf(stderr, "     %s: got \"%s\" finished %d score %.7f; want \"%s\" finished %d score %.7f\n", what, got,
                h->finished, h->score, e.words, e.finished, e.score);
    for (int i = 0; i < h->len; i++)
        CHECK(h->words[i] != VOCAB_PAD && h->words[i] != VOCAB_SOS && h->words[i] != VOCAB_EOS, "no special word");
    if (!h->attn) return;
    int bad = 0;
    for (int i = 0; i < h->len + h->finished; i++)
        for (int j = 0; j < src_len; j++)
            bad += h->attn[i * src_len + j] != toy_weight(h->words, i, j);
    CHECK(bad == 0, "attention row i is the step with prefix y_1..y_i");
    if (bad) fprintf(stderr, "     %s: %d attention weights differ\n", what, bad);
}

/* Beam search over sentences s[0..n-1] together; checks each against want[i * nbest + j]
 * (count[i] = want_count[i]) and the toy's contract. Returns the steps taken. */
static int run_beam(const Sentence *s, int n, int K, int nbest, float alpha, int want_attn, const Expect *want,
                    const int *want_count, const char *what)
{
    Toy toy = {0};
    Decoder dec = toy_decoder(&toy);
    Batch batch = {0};
    fill_sources(&batch, s, n);
    int limit[MAX_ROWS], count[MAX_ROWS];
    Hypothesis out[MAX_ROWS];
    for (int i = 0; i < n; i++)
        limit[i] = s[i].limit;
    beam_search(&dec, &batch, K, nbest, limit, alpha, want_attn, out, count);
    CHECK(toy.violations == 0, "the search keeps the Decoder contract");
    for (int i = 0; i < n; i++) {
        CHECK(count[i] == want_count[i], what);
        if (count[i] != want_count[i]) fprintf(stderr, "     %s: sentence %d: %d hypotheses, want %d\n", what, i,
                                                count[i], want_count[i]);
        for (int j = 0; j < count[i] && j < want_count[i]; j++) {
            Hypothesis *h = &out[i * nbest + j];
            CHECK((h->attn != NULL) == want_attn, "attention exactly when asked for");
            expect_hypothesis(h, want[i * nbest + j], s[i].src_len, what);
        }
        for (int j = 0; j < count[i]; j++)
            hypothesis_free(&out[i * nbest + j]);
    }
    batch_free(&batch);
    return toy.next_t;
}

/* One sentence, one expected n-best list. */
static int beam1(Sentence s, int K, int nbest, float alpha, const Expect *want, int want_count, const char *what)
{
    return run_beam(&s, 1, K, nbest, alpha, 1, want, &want_count, what);
}

/* ---------------------------------------------------------------- beam search */

/* Tag 1, K = 2, alpha 0.
 *   t=0  a .6, b .3 (then <unk>, <eos> .05)            -> live a .6, b .3
 *   t=1  a·b .54, b·<eos> .21, b·c .09, a·<eos> .06     -> live "a b" .54; finished "b" .21;
 *                                                          live "b c" .09 (two live: stop)
 *   t=2  a b·<eos> .324, a b·c .216, b c·<eos> .081     -> finished "a b" .324: K finished.
 * "a b" finished later but ranks first: log .324 = -1.1270118, then "b" log .21 = -1.5606477.
 * With K = 3 the <unk> .05 beam lives too, and three hypotheses finish at t=1:
 *   t=1  a·b .54, b·<eos> .21, b·c .09, a·<eos> .06, <unk>·<eos> .045, <unk>·a .005
 * -> "b" .21 (-1.5606477), "a" .06 (-2.8134107), "<unk>" .045 (-3.1010928); "a b" never
 * finishes (the search stops at K finished). At t=0 <unk> and <eos> tie at .05: <unk>,
 * the lower id, comes first and lives; were <eos> first, "" would finish with .05. */
static void test_nbest_order(void)
{
    Sentence s = {1, 2, 6};
    Expect two[] = {{"ab", 1, log(.6 * .9 * .6)}, {"b", 1, log(.3 * .7)}};
    int steps = beam1(s, 2, 2, 0.0f, two, 2, "n-best order, K=2");
    CHECK(steps == 3, "the search stops once K hypotheses have finished (3 steps, not the limit 6)");
    beam1(s, 2, 1, 0.0f, two, 1, "n-best 1 of K=2");
    Expect three[] = {{"b", 1, log(.3 * .7)}, {"a", 1, log(.6 * .1)}, {"u", 1, log(.05 * .9)}};
    steps = beam1(s, 3, 3, 0.0f, three, 3, "n-best order, K=3");
    CHECK(steps == 2, "K=3: K hypotheses finish at t=1, and the search stops there");
}

/* Tag 2, K = 2:
 *   t=0  a .5, b .4                                     -> live a, b
 *   t=1  b·c .36, a·<eos> .25, a·c .25, b·<eos> .04     -> live "b c"; finished "a" .25 (the
 *                                                          tie with a·c goes to <eos>, id 3);
 *                                                          live "a c" .25
 *   t=2  a c·<eos> .225, b c·<eos> .18, b c·a .18       -> finished "a c" .225: K finished.
 * The two hypotheses, log P and length n (with <eos>):
 *   "a"    log .25  = -1.3862944, n = 2      "a c"  log .225 = -1.4916549, n = 3
 * alpha 0:  "a" first.
 * alpha 1:  lp(2) = 7/6, lp(3) = 8/6:  "a" -1.1882523, "a c" -1.1187412   -> "a c" first.
 * average:  "a" -0.6931472, "a c" -0.4972183                            -> "a c" first. */
static void test_length_penalty(void)
{
    Sentence s = {2, 1, 6};
    double a = log(.5 * .5), ac = log(.5 * .5 * .9);
    Expect raw[] = {{"a", 1, a}, {"ac", 1, ac}};
    beam1(s, 2, 2, 0.0f, raw, 2, "length penalty alpha 0");
    Expect gnmt[] = {{"ac", 1, ac / (8.0 / 6.0)}, {"a", 1, a / (7.0 / 6.0)}};
    beam1(s, 2, 2, 1.0f, gnmt, 2, "length penalty alpha 1");
    Expect avg[] = {{"ac", 1, ac / 3}, {"a", 1, a / 2}};
    beam1(s, 2, 2, LENGTH_AVERAGE, avg, 2, "length penalty average");
}

/* Ties (decode.h: the better live beam first, then the lower word id; among finished
 * hypotheses, the one that finished first). The tied scores below are bit-equal: the
 * same row of logits added to the same score.
 * Tag 3, K = 1: a and b tie at .4; a (id 4) is kept. "a" log .4 = -0.9162907.
 * Tag 9, K = 1: <unk> and a tie at .4; <unk> (id 1) is kept: "<unk>" log .4.
 * Tag 4, K = 2: live a .4, b .4 (a first); at t=1 a·<eos>, a·c, b·<eos>, b·c all .2:
 *   a·<eos> finishes, a·c lives, b·<eos> finishes: "a" then "b", both log .2 = -1.6094379.
 * Tag 5, K = 2: live a .4, b .4; t=1: b·c .4 (P(c|b) = 1), a·<eos> .2, a·c .2 -> live "b c",
 *   finished "a" .2, live "a c"; t=2: b c·<eos>, b c·a, a c·<eos> all .2 -> finished "b c".
 *   "a" (finished at t=1) ranks before "b c" (t=2), both log .2. */
static void test_ties(void)
{
    Expect a[] = {{"a", 1, log(.4)}};
    beam1((Sentence){3, 1, 6}, 1, 1, 0.0f, a, 1, "tie between words: the lower id");
    Expect u[] = {{"u", 1, log(.4)}};
    beam1((Sentence){9, 1, 6}, 1, 1, 0.0f, u, 1, "tie with <unk>: the lower id");
    Expect ab[] = {{"a", 1, log(.4 * .5)}, {"b", 1, log(.4 * .5)}};
    beam1((Sentence){4, 1, 6}, 2, 2, 0.0f, ab, 2, "tie between beams: the better beam");
    Expect abc[] = {{"a", 1, log(.4 * .5)}, {"bc", 1, log(.4 * 1 * .5)}};
    beam1((Sentence){5, 1, 6}, 2, 2, 0.0f, abc, 2, "tie between finished: the earlier");
}

/* The limit: after limit words the search stops; if fewer than nbest finished, the
 * best live beams, cut (finished 0, score divided by lp(limit)), fill the list.
 * Tag 6, K = 2, limit 2: live a .6, b .3; t=1: a·b .42, b·c .24, a·c .12, a·<eos> .06
 *   -> live "a b", "b c"; nothing finished: "a b" log .42 = -0.8675006,
 *   "b c" log .24 = -1.4271164 (alpha 1: / lp(2) = 7/6: -0.7435719, -1.2232426).
 * Tag 7, K = 2, limit 2: t=1: a·<eos> .3, a·c .18, b·c .15, a·b .12 -> finished "a" .3,
 *   live "a c", "b c"; one finished, so "a c" cut fills the second place.
 *   alpha 0: "a" log .3 = -1.2039728, "a c" log .18 = -1.7147984; average: both / 2.
 * Tag 1, limit 1: only t=0, live a .6, b .3, cut: "a" log .6, "b" log .3. Limit 0 is 1. */
static void test_limit(void)
{
    Expect cut[] = {{"ab", 0, log(.6 * .7)}, {"bc", 0, log(.3 * .8)}};
    int steps = beam1((Sentence){6, 1, 2}, 2, 2, 0.0f, cut, 2, "limit: none finished");
    CHECK(steps == 2, "limit 2: two steps");
    Expect cut1[] = {{"ab", 0, log(.6 * .7) / (7.0 / 6.0)}, {"bc", 0, log(.3 * .8) / (7.0 / 6.0)}};
    beam1((Sentence){6, 1, 2}, 2, 2, 1.0f, cut1, 2, "limit: cut hypotheses take lp(limit)");
    Expect mixed[] = {{"a", 1, log(.6 * .5)}, {"ac", 0, log(.6 * .3)}};
    beam1((Sentence){7, 1, 2}, 2, 2, 0.0f, mixed, 2, "limit: one finished, one cut");
    Expect mixed_avg[] = {{"a", 1, log(.6 * .5) / 2}, {"ac", 0, log(.6 * .3) / 2}};
    beam1((Sentence){7, 1, 2}, 2, 2, LENGTH_AVERAGE, mixed_avg, 2, "limit: average, one finished, one cut");
    Expect mixed1[] = {{"a", 1, log(.6 * .5)}};
    beam1((Sentence){7, 1, 2}, 2, 1, 0.0f, mixed1, 1, "limit: n-best 1 needs no cut one");
    Expect first[] = {{"a", 0, log(.6)}, {"b", 0, log(.3)}};
    steps = beam1((Sentence){1, 1, 1}, 2, 2, 0.0f, first, 2, "limit 1");
    CHECK(steps == 1, "limit 1: one step");
    beam1((Sentence){1, 1, 0}, 2, 2, 0.0f, first, 2, "limit 0 counts as 1");
}

/* Tag 8 gives <pad> and <sos> the most probability; they are never candidates (but do
 * count in the log-softmax). K = 2:
 *   t=0  a .2, <eos> .1, b .1 (tie: <eos> first)   -> live a; finished "" .1; live b
 *   t=1  b·<eos> .05, a·<eos> .04, b·c .01         -> finished "b" .05: K finished.
 * "" log .1 = -2.3025851 (one attention row, the step of its <eos>), "b" log .05 = -2.9957323. */
static void test_no_pad_sos(void)
{
    Expect want[] = {{"", 1, log(.1)}, {"b", 1, log(.1 * .5)}};
    beam1((Sentence){8, 3, 6}, 2, 2, 0.0f, want, 2, "<pad>, <sos> never emitted");
}

/* Sentences of different tags, source lengths and limits decoded together give exactly
 * what each gives alone (and the hand values above); so does asking for no attention,
 * which then is NULL. */
static void test_batching(void)
{
    Sentence s[] = {{1, 2, 6}, {2, 1, 6}, {6, 4, 2}, {5, 3, 6}, {7, 1, 2}, {1, 2, 1}, {8, 3, 6}, {4, 2, 0}};
    enum { N = sizeof s / sizeof s[0] };
    Expect want[N * 2] = {
        {"ab", 1, log(.6 * .9 * .6)}, {"b", 1, log(.3 * .7)},
        {"a", 1, log(.5 * .5)}, {"ac", 1, log(.5 * .5 * .9)},
        {"ab", 0, log(.6 * .7)}, {"bc", 0, log(.3 * .8)},
        {"a", 1, log(.4 * .5)}, {"bc", 1, log(.4 * 1 * .5)},
        {"a", 1, log(.6 * .5)}, {"ac", 0, log(.6 * .3)},
        {"a", 0, log(.6)}, {"b", 0, log(.3)},
        {"", 1, log(.1)}, {"b", 1, log(.1 * .5)},
        {"a", 0, log(.4)}, {"b", 0, log(.4)}, /* limit 0 = 1: the tie a, b at t=0, cut */
    };
    int count[N];
    for (int i = 0; i < N; i++) {
        count[i] = 2;
        run_beam(&s[i], 1, 2, 2, 0.0f, 1, &want[2 * i], &count[i], "alone");
    }
    int steps = run_beam(s, N, 2, 2, 0.0f, 1, want, count, "batched");
    CHECK(steps == 3, "the batch stops when its last sentence does");
    run_beam(s, N, 2, 2, 0.0f, 0, want, count, "batched, no attention");

    /* Bit-equal, not only within TOL: the same hypotheses, one at a time and together. */
    Toy toy = {0};
    Decoder dec = toy_decoder(&toy);
    Batch batch = {0};
    Hypothesis together[N * 2], alone[2];
    int limit[N], got[N], got1, same = 1;
    for (int i = 0; i < N; i++)
        limit[i] = s[i].limit;
    fill_sources(&batch, s, N);
    beam_search(&dec, &batch, 2, 2, limit, 0.0f, 1, together, got);
    for (int i = 0; i < N; i++) {
        fill_sources(&batch, &s[i], 1);
        beam_search(&dec, &batch, 2, 2, &limit[i], 0.0f, 1, alone, &got1);
        same &= got1 == got[i];
        for (int j = 0; j < got1 && j < got[i]; j++) {
            Hypothesis *x = &together[2 * i + j], *y = &alone[j];
            int rows = x->len + x->finished;
            same &= x->len == y->len && x->finished == y->finished && x->score == y->score &&
                    memcmp(x->words, y->words, sizeof(int) * x->len) == 0 &&
                    memcmp(x->attn, y->attn, sizeof(float) * rows * s[i].src_len) == 0;
        }
        for (int j = 0; j < got1; j++)
            hypothesis_free(&alone[j]);
        for (int j = 0; j < got[i]; j++)
            hypothesis_free(&together[2 * i + j]);
    }
    CHECK(same, "batched results are bit-equal to one sentence at a time");
    CHECK(toy.violations == 0, "the search keeps the Decoder contract");
    batch_free(&batch);
}

/* ---------------------------------------------------------------- greedy search */

/* Greedy takes the likeliest word each step (never <pad> or <sos>; ties: the lower id):
 *   tag 1 limit 6:  a (.6), b (.9), <eos> (.6)         -> "a b" finished
 *   tag 6 limit 2:  a (.6), b (.7), limit              -> "a b" cut
 *   tag 3:          a/b tie -> a, <eos>                -> "a"
 *   tag 9:          <unk>/a tie -> <unk>, <eos>        -> "<unk>"
 *   tag 2:          a (.5), <eos>/c tie -> <eos>       -> "a"
 *   tag 8:          a (.2; <pad>, <sos> .3 skipped), <eos> (.2; <pad> .5 skipped) -> "a"
 *   tag 7 limit 1:  a, limit                           -> "a" cut
 *   tag 1 limit 0:  no step                            -> "" cut
 * A greedy score is log P(y | x): the log of the product of the chosen words'
 * probabilities, <eos> included when emitted, no length penalty (0 for no step).
 * Together and one at a time. */
static void test_greedy(void)
{
    Sentence s[] = {{1, 2, 6}, {6, 4, 2}, {3, 1, 6}, {9, 1, 6}, {2, 3, 6}, {8, 2, 6}, {7, 1, 1}, {1, 1, 0}};
    enum { N = sizeof s / sizeof s[0] };
    Expect want[N] = {{"ab", 1, log(.6 * .9 * .6)}, {"ab", 0, log(.6 * .7)}, {"a", 1, log(.4)},
                      {"u", 1, log(.4)},            {"a", 1, log(.5 * .5)}, {"a", 1, log(.2 * .2)},
                      {"a", 0, log(.6)},            {"", 0, 0}};
    Toy toy = {0};
    Decoder dec = toy_decoder(&toy);
    dec.reorder = NULL; /* greedy never reorders */
    Batch batch = {0};
    Hypothesis out[N];
    int limit[N];
    for (int i = 0; i < N; i++)
        limit[i] = s[i].limit;
    for (int want_attn = 0; want_attn <= 1; want_attn++) {
        fill_sources(&batch, s, N);
        greedy_search(&dec, &batch, limit, want_attn, out);
        CHECK(toy.next_t == 3, "greedy stops when its last sentence does (3 steps)");
        for (int i = 0; i < N; i++) {
            CHECK((out[i].attn != NULL) == want_attn, "greedy: attention exactly when asked for");
            expect_hypothesis(&out[i], want[i], s[i].src_len, want_attn ? "greedy batched" : "greedy, no attention");
            hypothesis_free(&out[i]);
        }
    }
    for (int i = 0; i < N; i++) {
        fill_sources(&batch, &s[i], 1);
        greedy_search(&dec, &batch, &limit[i], 1, out);
        expect_hypothesis(&out[0], want[i], s[i].src_len, "greedy alone");
        hypothesis_free(&out[0]);
    }
    CHECK(toy.violations == 0, "greedy keeps the Decoder contract");
    batch_free(&batch);
}


/* ---------------------------------------------------------------- scores of each word */

/* A hypothesis's unit_logp: each word's log-probability as the search chose it, <eos>
 * last when emitted, summing to its logprob; NULL unless asked for.
 *   greedy, tag 1:          a .6, b .9, <eos> .6
 *   beam K = 2, tag 1:      "a b" .6 .9 .6; "b" .3 .7 (test_nbest_order)
 *   beam, cut (tag 6, limit 2): "a b" .6 .7 (no <eos>); "b c" .3 .8 */
static void expect_units(const Hypothesis *h, const double *p, int n, const char *what)
{
    int ok = h->unit_logp != NULL && h->len + h->finished == n;
    double sum = 0, worst = 0;
    for (int i = 0; ok && i < n; i++) {
        double d = fabs(h->unit_logp[i] - log(p[i]));
        if (d > worst) worst = d;
        sum += h->unit_logp[i];
    }
    CHECK(ok && worst <= TOL, what);
    CHECK(ok && fabs(sum - h->logprob) <= TOL, "the words' log-probabilities sum to the hypothesis's");
    if (!ok || worst > TOL) fprintf(stderr, "     %s: %d units (want %d), worst diff %.3g\n", what,
                                    h->len + h->finished, n, worst);
}

static void test_unit_scores(void)
{
    Toy toy = {0};
    Decoder dec = toy_decoder(&toy);
    Batch batch = {0};
    Sentence s[] = {{1, 2, 6}, {6, 1, 2}};
    int limit[] = {6, 2}, count[2];
    fill_sources(&batch, s, 2);
    Hypothesis out[4];
    SearchSpec greedy = {.limit = limit, .want_scores = 1};
    search_run(&dec, &batch, &greedy, out, count);
    expect_units(&out[0], (double[]){.6, .9, .6}, 3, "greedy: each word's log-probability, <eos> last");
    expect_units(&out[1], (double[]){.6, .7}, 2, "greedy, cut at the limit: no <eos>");
    CHECK(count[0] == 1 && count[1] == 1, "greedy: one hypothesis per sentence");
    for (int i = 0; i < 2; i++)
        hypothesis_free(&out[i]);
    SearchSpec beam = {.beam = 2, .nbest = 2, .limit = limit, .want_scores = 1, .want_attn = 1};
    search_run(&dec, &batch, &beam, out, count);
    expect_units(&out[0], (double[]){.6, .9, .6}, 3, "beam: the best hypothesis's words");
    expect_units(&out[1], (double[]){.3, .7}, 2, "beam: the second's, finished a step earlier");
    expect_units(&out[2], (double[]){.6, .7}, 2, "beam, cut: the first");
    expect_units(&out[3], (double[]){.3, .8}, 2, "beam, cut: the second");
    expect_hypothesis(&out[0], (Expect){"ab", 1, log(.6 * .9 * .6)}, 2, "beam with scores: the same hypothesis");
    for (int i = 0; i < 4; i++)
        hypothesis_free(&out[i]);
    greedy_search(&dec, &batch, limit, 0, out);
    CHECK(out[0].unit_logp == NULL, "no scores unless asked for");
    hypothesis_free(&out[0]);
    hypothesis_free(&out[1]);
    CHECK(toy.violations == 0, "scores: the Decoder contract kept");
    batch_free(&batch);
}

/* Quality estimates (translate.h): a word's is the mean of its units' log-probabilities,
 * <eos> belongs to no word, the sentence's is the mean of its words':
 *   units -1 -2 -4 | -0.5, <eos> -3:   words -7/3 and -0.5, sentence (-7/3 - 0.5) / 2
 *   the toy's greedy "a b" (.6, .9, <eos> .6) as one word of two units, and as two words
 *   no unit, finished (<eos> .05): the sentence's is <eos>'s; not finished: 0 */
static void test_quality_estimates(void)
{
    float word_qe[4];
    int n_words = -1;
    float qe = quality_estimates((float[]){-1, -2, -4, -0.5f, -3}, (unsigned char[]){0, 0, 1, 1}, 4, 1, word_qe,
                                 &n_words);
    CHECK(n_words == 2, "QE: units up to a word's end make one word");
    CHECK(fabs(word_qe[0] + 7.0 / 3) < 1e-6 && fabs(word_qe[1] + 0.5) < 1e-6,
          "QE: each word's is the mean of its units'");
    CHECK(fabs(qe + (7.0 / 3 + 0.5) / 2) < 1e-6, "QE: the sentence's is the mean of its words', <eos> left out");
    float ab[] = {logf(.6f), logf(.9f), logf(.6f)};
    qe = quality_estimates(ab, (unsigned char[]){0, 1}, 2, 1, word_qe, &n_words);
    CHECK(n_words == 1 && fabs(qe - log(.6 * .9) / 2) < 1e-6, "QE: \"a@@ b\" one word: (log .6 + log .9) / 2");
    qe = quality_estimates(ab, (unsigned char[]){1, 1}, 2, 1, word_qe, &n_words);
    CHECK(n_words == 2 && fabs(word_qe[0] - log(.6)) < 1e-6 && fabs(word_qe[1] - log(.9)) < 1e-6 &&
              fabs(qe - log(.6 * .9) / 2) < 1e-6,
          "QE: \"a b\" two words: log .6, log .9, the same sentence mean");
    qe = quality_estimates((float[]){logf(.05f)}, (unsigned char[]){0}, 0, 1, word_qe, &n_words);
    CHECK(n_words == 0 && fabs(qe - log(.05)) < 1e-6, "QE: an empty output: <eos>'s log-probability");
    qe = quality_estimates((float[]){0}, (unsigned char[]){0}, 0, 0, word_qe, &n_words);
    CHECK(n_words == 0 && qe == 0.0f, "QE: nothing at all: 0");
}

/* ---------------------------------------------------------------- forced decoding */

/* forced_search feeds the given words and then <eos>, whatever the model prefers:
 *   tag 2, "b c a":  b .4, c .9 (rule "b"), a .5 (rule "bc"), <eos> .9 (the default)
 *   tag 1, "":       <eos> .05
 *   tag 8, "b":      b .1, <eos> .5
 * and a word the table gives no probability (tag 1, "c": logit -30) scores about -30.
 * Forcing the greedy output gives back greedy's own scores, bit for bit. */
static void test_forced(void)
{
    Toy toy = {0};
    Decoder dec = toy_decoder(&toy);
    Batch batch = {0};
    Sentence s[] = {{2, 1, 6}, {1, 2, 6}, {8, 3, 6}, {1, 1, 6}};
    int t0[] = {B, C, A}, t2[] = {B}, t3[] = {C};
    int *tgt[] = {t0, NULL, t2, t3}, len[] = {3, 0, 1, 1};
    Hypothesis out[4];
    fill_sources(&batch, s, 4);
    forced_search(&dec, &batch, tgt, len, 1, out);
    expect_units(&out[0], (double[]){.4, .9, .5, .9}, 4, "forced: the given words and <eos>");
    expect_hypothesis(&out[0], (Expect){"bca", 1, log(.4 * .9 * .5 * .9)}, 1, "forced: words and score");
    expect_units(&out[1], (double[]){.05}, 1, "forced: an empty target is <eos> alone");
    expect_units(&out[2], (double[]){.1, .5}, 2, "forced, tag 8");
    CHECK(out[3].unit_logp && fabs(out[3].unit_logp[0] - (-30 - log(1 + 4 * exp(-30.0)))) < 1e-5 &&
              out[3].finished && out[3].len == 1,
          "forced: a word of probability ~0 scores its logit's log-softmax (-30)");
    for (int i = 0; i < 4; i++)
        hypothesis_free(&out[i]);

    /* Forced scores of greedy's own output are greedy's scores. */
    Sentence g[] = {{1, 2, 6}, {3, 1, 6}, {9, 1, 6}, {2, 3, 6}, {8, 2, 6}, {5, 1, 6}};
    enum { N = sizeof g / sizeof g[0] };
    int limit[N], *words[N], wlen[N], same = 1;
    Hypothesis greedy[N], forced[N];
    for (int i = 0; i < N; i++)
        limit[i] = g[i].limit;
    fill_sources(&batch, g, N);
    SearchSpec sp = {.limit = limit, .want_scores = 1};
    search_run(&dec, &batch, &sp, greedy, NULL);
    for (int i = 0; i < N; i++) {
        words[i] = greedy[i].words;
        wlen[i] = greedy[i].len;
        same &= greedy[i].finished;
    }
    forced_search(&dec, &batch, words, wlen, 0, forced);
    for (int i = 0; i < N; i++) {
        same &= forced[i].logprob == greedy[i].logprob && forced[i].len == greedy[i].len &&
                memcmp(forced[i].unit_logp, greedy[i].unit_logp, sizeof(float) * (greedy[i].len + 1)) == 0;
        hypothesis_free(&greedy[i]);
        hypothesis_free(&forced[i]);
    }
    CHECK(same, "forced scores of the greedy output equal greedy's, bit for bit");
    CHECK(toy.violations == 0, "forced: the Decoder contract kept");
    batch_free(&batch);
}

/* ---------------------------------------------------------------- prefixes */

/* A prefix's words are fed first, and the search goes on from them:
 *   greedy, tag 1, prefix "b":    b .3, then <eos> .7 (rule "b")     -> "b", log .21
 *   greedy, tag 1, prefix "a c":  a .6, c ~0 (logit -30), <eos> .9   -> "a c", about -30
 *   greedy, tag 1, prefix "a b", limit 2: cut                        -> "a b" cut, log .54
 *   beam K = 2, tag 2, prefix "b": one beam while following it; t=1 b·c .36, b·<eos> .04;
 *     t=2 b c·<eos> .18, b c·a .18 -> finished "b c" .18, "b" .04 (K finished)
 * and an empty prefix changes nothing (bit for bit). */
static void test_prefix(void)
{
    Toy toy = {0};
    Decoder dec = toy_decoder(&toy);
    Batch batch = {0};
    Sentence s[] = {{1, 2, 6}, {1, 2, 6}, {1, 1, 2}};
    int p0[] = {B}, p1[] = {A, C}, p2[] = {A, B};
    int *prefix[] = {p0, p1, p2}, plen[] = {1, 2, 2}, limit[] = {6, 6, 2};
    Hypothesis out[6];
    int count[3];
    fill_sources(&batch, s, 3);
    SearchSpec sp = {.limit = limit, .prefix = prefix, .prefix_len = plen, .want_scores = 1, .want_attn = 1};
    search_run(&dec, &batch, &sp, out, count);
    expect_hypothesis(&out[0], (Expect){"b", 1, log(.3 * .7)}, 2, "greedy prefix: the search goes on after it");
    double ac = log(.6) + (-30 - log(1 + 4 * exp(-30.0))) + log(.9);
    CHECK(strcmp((char[]){letter(out[1].words[0]), letter(out[1].words[1]), 0}, "ac") == 0 && out[1].len == 2 &&
              out[1].finished && fabs(out[1].logprob - ac) < 1e-5,
          "greedy prefix: a word the model gives ~0 is still fed, and scored");
    expect_hypothesis(&out[2], (Expect){"ab", 0, log(.6 * .9)}, 1, "greedy prefix: the limit counts it");
    for (int i = 0; i < 3; i++)
        hypothesis_free(&out[i]);

    Sentence b[] = {{2, 1, 6}};
    int *bprefix[] = {p0}, bplen[] = {1}, blimit[] = {6};
    fill_sources(&batch, b, 1);
    SearchSpec bs = {.beam = 2, .nbest = 2, .limit = blimit, .prefix = bprefix, .prefix_len = bplen, .want_attn = 1};
    search_run(&dec, &batch, &bs, out, count);
    CHECK(count[0] == 2, "beam prefix: two hypotheses");
    expect_hypothesis(&out[0], (Expect){"bc", 1, log(.4 * .9 * .5)}, 1, "beam prefix: the best");
    expect_hypothesis(&out[1], (Expect){"b", 1, log(.4 * .1)}, 1, "beam prefix: the second");
    for (int i = 0; i < count[0]; i++)
        hypothesis_free(&out[i]);

    /* An empty prefix, greedy and beam, batched: what no prefix gives, bit for bit. */
    Sentence m[] = {{1, 2, 6}, {2, 1, 6}, {6, 4, 2}, {5, 3, 6}, {8, 3, 6}};
    enum { N = sizeof m / sizeof m[0] };
    int mlimit[N], zero[N] = {0}, *none[N] = {0}, same = 1, c1[N], c2[N];
    Hypothesis x[2 * N], y[2 * N];
    for (int i = 0; i < N; i++)
        mlimit[i] = m[i].limit;
    fill_sources(&batch, m, N);
    for (int K = 0; K <= 2; K += 2) {
        SearchSpec plain = {.beam = K, .nbest = 2, .limit = mlimit, .alpha = 0.6f, .want_attn = 1};
        SearchSpec empty = plain;
        empty.prefix = none;
        empty.prefix_len = zero;
        search_run(&dec, &batch, &plain, x, c1);
        search_run(&dec, &batch, &empty, y, c2);
        int k = K ? 2 : 1;
        for (int i = 0; i < N; i++) {
            same &= c1[i] == c2[i];
            for (int j = 0; j < c1[i]; j++) {
                Hypothesis *hx = &x[i * k + j], *hy = &y[i * k + j];
                same &= hx->len == hy->len && hx->finished == hy->finished && hx->score == hy->score &&
                        memcmp(hx->words, hy->words, sizeof(int) * hx->len) == 0 &&
                        memcmp(hx->attn, hy->attn, sizeof(float) * (hx->len + hx->finished) * m[i].src_len) == 0;
                hypothesis_free(hx);
                hypothesis_free(hy);
            }
        }
    }
    CHECK(same, "an empty prefix changes nothing (greedy and beam, bit for bit)");
    CHECK(toy.violations == 0, "prefix: the Decoder contract kept");
    batch_free(&batch);
}

/* ---------------------------------------------------------------- sampling */

/* One row, V = 7: <pad> and <sos> have the largest logits (5) and are never in a
 * support; the others' weights e^logit are <unk> 1, <eos> 2, a 4, b 2, c 1 (sum 10). */
static const float sample_row[V] = {5.0f, 0.0f, 5.0f, 0.69314718f, 1.38629436f, 0.69314718f, 0.0f};

/* The support of sample_row under (k, p, T): want_ids[0..n) and their probabilities. */
static void expect_support(int k, float p, float T, const int *want_ids, const double *want_p, int n, const char *what)
{
    Sampling s = {.top_k = k, .top_p = p, .temperature = T};
    SampleScratch sc = {0};
    int got = sample_support(sample_row, V, &s, &sc), ok = got == n;
    double worst = 0;
    for (int i = 0; ok && i < n; i++) {
        ok &= sc.ids[i] == want_ids[i];
        double d = fabs(sc.prob[i] - want_p[i]);
        if (d > worst) worst = d;
    }
    CHECK(ok && worst < 1e-6, what);
    if (!ok || worst >= 1e-6) {
        fprintf(stderr, "     %s: got", what);
        for (int i = 0; i < got; i++)
            fprintf(stderr, " %d:%.6f", sc.ids[i], sc.prob[i]);
        fprintf(stderr, "\n");
    }
    sample_scratch_free(&sc);
}

/* Sorted by probability: a .4, <eos> .2 and b .2 (tie: <eos>, the lower id, first), <unk>
 * .1 and c .1. The support is listed in id order. */
static void test_sample_support(void)
{
    expect_support(0, 1, 1, (int[]){1, 3, 4, 5, 6}, (double[]){.1, .2, .4, .2, .1}, 5,
                   "whole vocabulary: every word but <pad> and <sos>, p = e^logit / 10");
    expect_support(1, 1, 1, (int[]){4}, (double[]){1}, 1, "top-1: the likeliest word alone");
    expect_support(2, 1, 1, (int[]){3, 4}, (double[]){1 / 3.0, 2 / 3.0}, 2,
                   "top-2: a and <eos> (the tie with b goes to the lower id), renormalised");
    expect_support(3, 1, 1, (int[]){3, 4, 5}, (double[]){.25, .5, .25}, 3, "top-3: a, <eos>, b");
    expect_support(100, 1, 1, (int[]){1, 3, 4, 5, 6}, (double[]){.1, .2, .4, .2, .1}, 5, "top-k beyond V: all");
    expect_support(0, .35f, 1, (int[]){4}, (double[]){1}, 1, "nucleus .35: a (.4) reaches it alone");
    expect_support(0, .5f, 1, (int[]){3, 4}, (double[]){1 / 3.0, 2 / 3.0}, 2,
                   "nucleus .5: a .4, then <eos> (before b) crosses it");
    expect_support(0, .85f, 1, (int[]){1, 3, 4, 5}, (double[]){1 / 9.0, 2 / 9.0, 4 / 9.0, 2 / 9.0}, 4,
                   "nucleus .85: a, <eos>, b (.8), then <unk> (before c)");
    expect_support(3, .6f, 1, (int[]){3, 4}, (double[]){1 / 3.0, 2 / 3.0}, 2,
                   "top-3 then nucleus .6 of the renormalised (.5 .25 .25): a, <eos>");
    expect_support(0, 1, .5f, (int[]){1, 3, 4, 5, 6}, (double[]){1 / 26.0, 4 / 26.0, 16 / 26.0, 4 / 26.0, 1 / 26.0}, 5,
                   "temperature .5: the weights squared (1 4 16 4 1)");
    double r2 = sqrt(2.0), z = 1 + r2 + 2 + r2 + 1;
    expect_support(0, 1, 2, (int[]){1, 3, 4, 5, 6}, (double[]){1 / z, r2 / z, 2 / z, r2 / z, 1 / z}, 5,
                   "temperature 2: their square roots");
    expect_support(2, 1, .5f, (int[]){3, 4}, (double[]){.2, .8}, 2, "top-2 at temperature .5: 4 and 16");
}

/* Draws: 200,000 from the whole row under one seed land on each word in proportion
 * (within .005 of p: the seed is fixed, so this is one deterministic check, not a
 * flaky one); top-2's draws never leave its support; the same stream gives the same
 * draws, another sentence's stream others. */
static void test_sample_draws(void)
{
    Sampling s = {.top_k = 0, .top_p = 1, .temperature = 1, .seed = 42};
    SampleScratch sc = {0};
    Rng rng;
    sample_stream(&rng, s.seed, 0, 0);
    long hits[V] = {0};
    enum { DRAWS = 200000 };
    for (int i = 0; i < DRAWS; i++)
        hits[sample_word(sample_row, V, &s, &rng, &sc)]++;
    const double want[V] = {0, .1, 0, .2, .4, .2, .1};
    double worst = 0;
    for (int w = 0; w < V; w++) {
        double d = fabs((double)hits[w] / DRAWS - want[w]);
        if (d > worst) worst = d;
    }
    CHECK(hits[VOCAB_PAD] == 0 && hits[VOCAB_SOS] == 0, "draws never give <pad> or <sos>");
    CHECK(worst < .005, "draws follow the distribution (200,000 of them, within .005)");
    printf("  ok sampling: 200,000 draws, frequencies within %.4f of p\n", worst);
    Sampling k2 = {.top_k = 2, .top_p = 1, .temperature = 1};
    int outside = 0;
    for (int i = 0; i < 10000; i++) {
        int w = sample_word(sample_row, V, &k2, &rng, &sc);
        outside += w != A && w != VOCAB_EOS;
    }
    CHECK(outside == 0, "top-2 draws stay in its support");
    Rng a, b, c;
    sample_stream(&a, 7, 3, 1);
    sample_stream(&b, 7, 3, 1);
    sample_stream(&c, 7, 4, 1);
    int same = 1, differ = 0;
    for (int i = 0; i < 100; i++) {
        int x = sample_word(sample_row, V, &s, &a, &sc), y = sample_word(sample_row, V, &s, &b, &sc);
        same &= x == y;
        differ += x != sample_word(sample_row, V, &s, &c, &sc);
    }
    CHECK(same, "one seed, sentence and sample: one stream of draws");
    CHECK(differ > 0, "another sentence: another stream");
    sample_scratch_free(&sc);
}

/* Sampled searches: the same seed gives the same output whether the sentences are
 * decoded together or one at a time (each draws from its own sentence's stream);
 * top-1 is greedy search; a prefix is followed before the draws; beam K gives K
 * samples ranked by score. */
static void test_sample_search(void)
{
    Toy toy = {0};
    Decoder dec = toy_decoder(&toy);
    Batch batch = {0};
    Sentence s[] = {{1, 2, 6}, {2, 1, 6}, {4, 3, 6}, {7, 1, 6}, {6, 4, 6}, {5, 2, 6}};
    enum { N = sizeof s / sizeof s[0] };
    int limit[N];
    long index[N];
    for (int i = 0; i < N; i++) {
        limit[i] = s[i].limit;
        index[i] = 100 + i;
    }
    Sampling whole = {.top_k = 0, .top_p = 1, .temperature = 1, .seed = 5};
    Hypothesis together[N], alone, top1[N], greedy[N];
    fill_sources(&batch, s, N);
    SearchSpec sp = {.limit = limit, .sample = &whole, .sentence = index, .want_scores = 1};
    search_run(&dec, &batch, &sp, together, NULL);
    int same = 1, differ = 0;
    for (int i = 0; i < N; i++) {
        fill_sources(&batch, &s[i], 1);
        SearchSpec one = sp;
        one.limit = &limit[i];
        one.sentence = &index[i];
        search_run(&dec, &batch, &one, &alone, NULL);
        same &= alone.len == together[i].len && alone.logprob == together[i].logprob &&
                memcmp(alone.words, together[i].words, sizeof(int) * alone.len) == 0;
        hypothesis_free(&alone);
    }
    CHECK(same, "sampling: one sentence at a time gives what the batch gives (streams by sentence index)");
    /* Another seed: some sentence comes out differently (seeds 5 and 6 both fixed). */
    Sampling other = whole;
    other.seed = 6;
    Hypothesis again[N];
    fill_sources(&batch, s, N);
    SearchSpec sp6 = sp;
    sp6.sample = &other;
    search_run(&dec, &batch, &sp6, again, NULL);
    for (int i = 0; i < N; i++) {
        differ += again[i].len != together[i].len || memcmp(again[i].words, together[i].words,
                                                            sizeof(int) * again[i].len) != 0;
        hypothesis_free(&again[i]);
    }
    CHECK(differ > 0, "sampling: another seed, other samples");
    Sampling k1 = {.top_k = 1, .top_p = 1, .temperature = 1, .seed = 5};
    SearchSpec t1 = {.limit = limit, .sample = &k1};
    SearchSpec g = {.limit = limit};
    search_run(&dec, &batch, &t1, top1, NULL);
    search_run(&dec, &batch, &g, greedy, NULL);
    same = 1;
    for (int i = 0; i < N; i++) {
        same &= top1[i].len == greedy[i].len && top1[i].logprob == greedy[i].logprob &&
                memcmp(top1[i].words, greedy[i].words, sizeof(int) * greedy[i].len) == 0;
        hypothesis_free(&top1[i]);
        hypothesis_free(&greedy[i]);
        hypothesis_free(&together[i]);
    }
    CHECK(same, "sampling from the top 1 is greedy search");

    /* A prefix first: tag 1 with prefix "b" and top-1 draws: b, then <eos> (rule "b"). */
    int pb[] = {B}, *prefix[] = {pb}, plen[] = {1}, lim6[] = {6};
    Sentence t[] = {{1, 1, 6}};
    fill_sources(&batch, t, 1);
    SearchSpec sprefix = {.limit = lim6, .sample = &k1, .prefix = prefix, .prefix_len = plen};
    search_run(&dec, &batch, &sprefix, &alone, NULL);
    expect_hypothesis(&alone, (Expect){"b", 1, log(.3 * .7)}, 1, "sampling after a prefix");
    hypothesis_free(&alone);

    /* Beam 4 with sampling: 4 samples, ranked by score (alpha 0: log P), best first. */
    Hypothesis four[4];
    int count = 0;
    SearchSpec s4 = {.beam = 4, .nbest = 4, .limit = lim6, .sample = &whole, .want_scores = 1};
    search_run(&dec, &batch, &s4, four, &count);
    int sorted = count == 4;
    for (int i = 1; i < count; i++)
        sorted &= four[i - 1].score >= four[i].score;
    CHECK(sorted, "beam K with sampling: K samples, best score first");
    for (int i = 0; i < count; i++)
        hypothesis_free(&four[i]);
    CHECK(toy.violations == 0, "sampling: the Decoder contract kept");
    batch_free(&batch);
}

int main(void)
{
    test_nbest_order();
    test_length_penalty();
    test_ties();
    test_limit();
    test_no_pad_sos();
    test_batching();
    test_greedy();
    test_unit_scores();
    test_quality_estimates();
    test_forced();
    test_prefix();
    test_sample_support();
    test_sample_draws();
    test_sample_search();
    printf("  ok scores within %.0g of the hand values: max diff %.3g\n", TOL, worst_score_diff);
    return check_report("test_decode");
}
