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
#include "decode/decode.h" /* defines: Decoder, greedy_search, beam_search, Hypothesis */
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

int main(void)
{
    test_nbest_order();
    test_length_penalty();
    test_ties();
    test_limit();
    test_no_pad_sos();
    test_batching();
    test_greedy();
    printf("  ok scores within %.0g of the hand values: max diff %.3g\n", TOL, worst_score_diff);
    return check_report("test_decode");
}
