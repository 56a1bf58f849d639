/* test_subword.c — BPE learning and applying, character segmentation, joining, codes
 * text (src/text/bpe_core.c, bpe_learn.c, bpe_apply.c, bpe_codes.c), subword-nmt's codes
 * format, and long words (linear costs, counted in steps; the word limit). Against a
 * brute-force reference: test_subword_reference.c; text segmented elsewhere and
 * SentencePiece: test_segment.c. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "check.h"
#include "tokens.h"         // defines: list_is, LIST
#include "text/subword.h"   // defines: Bpe, bpe_learn, bpe_learn_format, BpeLearnReport, BPE_MAX_WORD_BYTES, subword_segment,
                       //          subword_segment_counted, subword_join, bpe_to_text, bpe_from_text

/* The pieces of one token under b (NULL: characters) are `want`. */
static int pieces_are(const Bpe *b, const char *token, const char *const *want)
{
    TokenList p;
    char *tok = (char *)token;
    subword_segment(b, &tok, 1, &p);
    int ok = list_is(&p, want);
    token_list_free(&p);
    return ok;
}

/* Merge i of b is "left right". */
static int merge_is(const Bpe *b, int i, const char *left, const char *right)
{
    int ok = i < b->n && strcmp(b->left[i], left) == 0 && strcmp(b->right[i], right) == 0;
    if (!ok)
        fprintf(stderr, "  merge %d: got [%s %s], want [%s %s]\n", i, i < b->n ? b->left[i] : "-",
                i < b->n ? b->right[i] : "-", left, right);
    return ok;
}

static int same_merges(const Bpe *a, const Bpe *b)
{
    int ok = a->n == b->n;
    for (int i = 0; ok && i < a->n; i++)
        ok = strcmp(a->left[i], b->left[i]) == 0 && strcmp(a->right[i], b->right[i]) == 0;
    return ok;
}

/* join(segment(tokens)) == tokens under b. */
static int round_trips(const Bpe *b, char *const *tokens, int n)
{
    TokenList p, back;
    subword_segment(b, tokens, n, &p);
    subword_join(p.tokens, p.n, &back);
    int ok = back.n == n;
    for (int i = 0; ok && i < n; i++)
        ok = strcmp(back.tokens[i], tokens[i]) == 0;
    if (!ok)
        fprintf(stderr, "  round trip: %d tokens -> %d pieces -> %d tokens\n", n, p.n, back.n);
    token_list_free(&p);
    token_list_free(&back);
    return ok;
}

/* ------------------------------------------------------------------------- */

/* Sennrich et al. 2016's example. Starting pair counts (l o w</w> x5, l o w e r</w> x2,
 * n e w e s t</w> x6, w i d e s t</w> x3):
 *   e s 9, s t</w> 9, w e 8, l o 7, n e 6, e w 6, o w</w> 5, ...
 *  0 e s          9  (ties with "s t</w>": "e" < "s")
 *  1 es t</w>     9
 *  2 l o          7
 *  3 e w          6  (ties with "n e" and "w est</w>": "e" < "n" < "w")
 *  4 ew est</w>   6  ("ew" < "n" of "n ew")
 *  5 n ewest</w>  6
 *  6 lo w</w>     5
 *  7 d est</w>    3  ("d" < "i" of "i d" < "w" of "w i")
 *  8 i dest</w>   3  ("i" < "w")
 *  9 w idest</w>  3
 * 10 e r</w>      2  (lower: "e" < "lo" of "lo w" < "w" of "w e")
 * 11 lo w         2  ("lo" < "w" of "w er</w>")
 * 12 low er</w>   2
 * then no pair occurs twice: 13 merges however many are asked for. */
static void test_sennrich(void)
{
    char *words[] = {"low", "lower", "newest", "widest"};
    long counts[] = {5, 2, 6, 3};
    Bpe b;
    bpe_learn(&b, words, counts, 4, 1000);
    CHECK(b.n == 13, "Sennrich: 13 merges, then every pair occurs once");
    static const char *const want[13][2] = {
        {"e", "s"}, {"es", "t</w>"}, {"l", "o"}, {"e", "w"}, {"ew", "est</w>"}, {"n", "ewest</w>"},
        {"lo", "w</w>"}, {"d", "est</w>"}, {"i", "dest</w>"}, {"w", "idest</w>"}, {"e", "r</w>"},
        {"lo", "w"}, {"low", "er</w>"}};
    int ok = 1;
    for (int i = 0; i < 13; i++)
        ok &= merge_is(&b, i, want[i][0], want[i][1]);
    CHECK(ok, "Sennrich: the merges, in order, ties by byte order");
    CHECK(pieces_are(&b, "lowest", LIST("low@@", "est")), "Sennrich 13 merges: lowest");
    CHECK(pieces_are(&b, "newer", LIST("n@@", "ew@@", "er")), "Sennrich 13 merges: newer");
    for (int i = 0; i < 4; i++)
        CHECK(pieces_are(&b, words[i], (const char *const[]){words[i], NULL}), "Sennrich: training words whole");
    bpe_free(&b);

    /* With the first 10 merges "lo w" (11) and "e r</w>" (10) are missing. */
    bpe_learn(&b, words, counts, 4, 10);
    CHECK(b.n == 10 && merge_is(&b, 9, "w", "idest</w>"), "Sennrich: stops at n_merges");
    CHECK(pieces_are(&b, "lowest", LIST("lo@@", "w@@", "est")), "Sennrich 10 merges: lowest");
    CHECK(pieces_are(&b, "newer", LIST("n@@", "ew@@", "e@@", "r")), "Sennrich 10 merges: newer");
    bpe_free(&b);

    bpe_learn(&b, words, counts, 4, 0);
    CHECK(b.n == 0 && pieces_are(&b, "low", LIST("l@@", "o@@", "w")), "n_merges 0: empty Bpe, characters");
    bpe_free(&b);

    /* Duplicate words add up; counts <= 0 and empty words are ignored. */
    char *dup[] = {"newest", "low", "widest", "lower", "low", "newest", "", "zzzz"};
    long dup_counts[] = {4, 2, 3, 2, 3, 2, 7, 0};
    Bpe a;
    bpe_learn(&b, words, counts, 4, 1000);
    bpe_learn(&a, dup, dup_counts, 8, 1000);
    CHECK(same_merges(&a, &b), "duplicate words add their counts");
    bpe_free(&a);
    bpe_free(&b);
}

static void test_units_and_graphemes(void)
{
    CHECK(pieces_are(NULL, "我爱Python", LIST("我@@", "爱@@", "P@@", "y@@", "t@@", "h@@", "o@@", "n")),
          "char mode: Han characters and Latin letters");
    /* Vowel signs and the virama stay with their consonant. Unicode 15.1 (utf8proc
     * 2.9) also keeps a conjunct (स्ते) together. */
#if UTF8PROC_VERSION_MAJOR > 2 || (UTF8PROC_VERSION_MAJOR == 2 && UTF8PROC_VERSION_MINOR >= 9)
    CHECK(pieces_are(NULL, "नमस्ते", LIST("न@@", "म@@", "स्ते")), "char mode: Devanagari clusters");
#else
    CHECK(pieces_are(NULL, "नमस्ते", LIST("न@@", "म@@", "स्@@", "ते")), "char mode: Devanagari clusters");
#endif
    CHECK(pieces_are(NULL, "e\xcc\x81t\xc3\xa9", LIST("e\xcc\x81@@", "t@@", "\xc3\xa9")),
          "char mode: a combining accent stays with its letter");
    const char *family = "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7";   /* 👨‍👩‍👧 */
    char fx[64], fam_joined[64];
    snprintf(fx, sizeof fx, "%sx", family);
    snprintf(fam_joined, sizeof fam_joined, "%s@@", family);
    CHECK(pieces_are(NULL, fx, (const char *const[]){fam_joined, "x", NULL}), "char mode: a ZWJ emoji sequence is one piece");
    CHECK(pieces_are(NULL, "สวัสดี", LIST("ส@@", "วั@@", "ส@@", "ดี")), "char mode: Thai clusters");
    CHECK(pieces_are(NULL, "a", LIST("a")) && pieces_are(NULL, "", (const char *const[]){NULL}),
          "char mode: one character; an empty token gives no piece");

    /* Learning sees grapheme clusters: the only pair is (family, x</w>). */
    char *fw[] = {fx};
    long fc[] = {3};
    Bpe b;
    bpe_learn(&b, fw, fc, 1, 10);
    CHECK(b.n == 1 && merge_is(&b, 0, family, "x</w>"), "learning: a ZWJ emoji sequence is one symbol");
    CHECK(pieces_are(&b, fx, (const char *const[]){fx, NULL}), "applying: emoji + x merged");
    bpe_free(&b);

    /* Unspaced scripts never merge: Han, Thai, even when frequent. */
    char *cjk[] = {"我爱", "สวัสดี", "ของของ"};
    long cc[] = {50, 50, 50};
    bpe_learn(&b, cjk, cc, 3, 10);
    CHECK(b.n == 0, "learning: no merges inside Han or Thai");
    bpe_free(&b);

    /* Units: "ab" before 我 ends its unit as "b</w>", so "ab我ab" has one pair type. */
    char *mixed[] = {"ab我ab", "Python"};
    long mc[] = {3, 2};
    bpe_learn(&b, mixed, mc, 2, 1);
    CHECK(b.n == 1 && merge_is(&b, 0, "a", "b</w>"), "learning: units end before an unspaced character");
    bpe_free(&b);
    bpe_learn(&b, mixed, mc, 2, 100);
    CHECK(pieces_are(&b, "我爱Python", LIST("我@@", "爱@@", "Python")), "BPE: Han units, then a merged Latin unit");
    CHECK(pieces_are(&b, "ab我ab", LIST("ab@@", "我@@", "ab")), "BPE: a unit before and after Han");
    CHECK(pieces_are(&b, "ดีab", LIST("ดี@@", "ab")), "BPE: Thai units, then a merged Latin unit");
    bpe_free(&b);
}

static void test_round_trips(void)
{
    char *tokens[] = {"lowest", "newer", "wider", "नमस्ते", "दुनिया", "我爱你", "日本語です", "สวัสดีครับ",
                      "我爱Python", "Pythonは", "e\xcc\x81t\xc3\xa9", "a", "我", "x", "don't", "3.5",
                      "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9\xe2\x80\x8d\xf0\x9f\x91\xa7ok", "@", ".", "l@w",
                      "aaaaaaa", "абвгд", "مرحبا"};
    int n = (int)(sizeof tokens / sizeof tokens[0]);
    char *words[] = {"low", "lower", "newest", "widest", "नमस्ते", "aaaaaaa", "python"};
    long counts[] = {5, 2, 6, 3, 4, 3, 2};
    Bpe learned, empty;
    bpe_learn(&learned, words, counts, 7, 1000);
    bpe_learn(&empty, words, counts, 7, 0);
    CHECK(learned.n > 13, "round trips: a learned Bpe with merges");
    CHECK(round_trips(&learned, tokens, n), "join(segment(x)) == x, learned Bpe");
    CHECK(round_trips(&empty, tokens, n), "join(segment(x)) == x, empty Bpe");
    CHECK(round_trips(NULL, tokens, n), "join(segment(x)) == x, characters");
    CHECK(round_trips(&learned, tokens, 0), "join(segment(x)) == x, no tokens");
    CHECK(pieces_are(&learned, "aaaaaaa", LIST("aaaaaaa")) && pieces_are(&learned, "aaaaa", LIST("aaaa@@", "a")),
          "repeated letters merge left to right");

    TokenList p;
    subword_segment(&empty, tokens, 2, &p);
    TokenList q;
    subword_segment(NULL, tokens, 2, &q);
    int same = p.n == q.n;
    for (int i = 0; same && i < p.n; i++)
        same = strcmp(p.tokens[i], q.tokens[i]) == 0;
    CHECK(same && p.n == 11, "an empty Bpe segments into characters, like char mode");
    token_list_free(&p);
    token_list_free(&q);
    bpe_free(&learned);
    bpe_free(&empty);

    TokenList j;
    subword_join((char *[]){"ab@@", "c", "d@@"}, 3, &j);
    CHECK(list_is(&j, LIST("abc", "d")), "join: a trailing @@ on the last piece is dropped");
    token_list_free(&j);
    subword_join((char *[]){"a@@", "@@", "b", "@@", "c", ""}, 6, &j);
    CHECK(list_is(&j, LIST("ab", "c")), "join: a piece that is only @@ (or empty) adds nothing");
    token_list_free(&j);
    subword_join((char *[]){"@@"}, 1, &j);
    CHECK(j.n == 0, "join: only @@ gives no token");
    token_list_free(&j);
}

/* With enough merges, every word seen twice or more is one piece; a word seen once
 * whose pairs occur nowhere else stays in characters. */
static void test_frequent_words_whole(void)
{
    char *words[] = {"the", "then", "them", "cat", "cats", "catalog", "dog", "do", "doge", "zyx", "qj"};
    long counts[] = {9, 2, 3, 4, 2, 2, 5, 7, 3, 1, 1};
    Bpe b;
    bpe_learn(&b, words, counts, 11, 1000);
    for (int i = 0; i < 11; i++) {
        TokenList p;
        subword_segment(&b, &words[i], 1, &p);
        if (counts[i] >= 2)
            CHECK(p.n == 1, words[i]);
        else
            CHECK(p.n == (int)strlen(words[i]), words[i]);
        token_list_free(&p);
    }
    bpe_free(&b);
}

/* The parse of `text` as `format` fails with a message starting with `want`, and
 * leaves b empty. */
static int codes_error_as(BpeFormat format, const char *text, const char *want)
{
    Bpe b;
    Error err = {{0}};
    int rc = bpe_from_text_format(&b, text, strlen(text), format, "codes", &err);
    int ok = rc == -1 && b.n == 0 && strncmp(err.msg, want, strlen(want)) == 0;
    if (!ok)
        fprintf(stderr, "  [%s]: rc %d, n %d, \"%s\"; want \"%s\"\n", text, rc, b.n, err.msg, want);
    bpe_free(&b);
    return ok;
}

static int codes_error(const char *text, const char *want) { return codes_error_as(BPE_NMT, text, want); }

static void test_codes_text(void)
{
    char *words[] = {"low", "lower", "newest", "widest"};
    long counts[] = {5, 2, 6, 3};
    Bpe b, r;
    Error err;
    bpe_learn(&b, words, counts, 4, 3);
    char *text = bpe_to_text(&b);
    CHECK(strcmp(text, "#version: 0.2\ne s\nes t</w>\nl o\n") == 0, "bpe_to_text: subword-nmt's layout");
    free(text);
    bpe_free(&b);

    bpe_learn(&b, words, counts, 4, 1000);
    text = bpe_to_text(&b);
    CHECK(bpe_from_text(&r, text, strlen(text), "codes", &err) == 0 && same_merges(&b, &r),
          "bpe_from_text(bpe_to_text(b)) == b");
    CHECK(pieces_are(&r, "lowest", LIST("low@@", "est")) && pieces_are(&r, "newer", LIST("n@@", "ew@@", "er")),
          "a parsed Bpe segments like the learned one");
    free(text);
    bpe_free(&r);
    bpe_free(&b);

    /* The length is honoured: no NUL needed, trailing bytes ignored. */
    const char *more = "e s\nl oXX";
    CHECK(bpe_from_text(&r, more, 7, "codes", &err) == 0 && r.n == 2 && merge_is(&r, 1, "l", "o"), "reads len bytes");
    bpe_free(&r);
    CHECK(bpe_from_text(&r, "#version: 0.2\r\ne s\r\nes t</w>\r\n\r\n\n", 32, "codes", &err) == 0 && r.n == 2 &&
          merge_is(&r, 1, "es", "t</w>"), "CRLF and blank trailing lines");
    bpe_free(&r);
    CHECK(bpe_from_text(&r, "e s\nes t</w>", 12, "codes", &err) == 0 && r.n == 2, "no #version, no final newline");
    bpe_free(&r);
    CHECK(bpe_from_text(&r, "", 0, "codes", &err) == 0 && r.n == 0 && pieces_are(&r, "ab", LIST("a@@", "b")),
          "empty codes: an empty Bpe");
    bpe_free(&r);

    /* Words that would make unreadable codes are not learned from. */
    char *bad[] = {"a b", "x</w>y", "\xff\xfe", "q\nr", "ok"};
    long bad_counts[] = {5, 5, 5, 5, 1};
    bpe_learn(&b, bad, bad_counts, 5, 100);
    CHECK(b.n == 0, "no merges from words with a space, \"</w>\", invalid UTF-8 or a newline");
    bpe_free(&b);

    CHECK(codes_error("#version: 0.2\ne s\nabc\n", "codes:3: expected two symbols separated by one space"), "one symbol");
    CHECK(codes_error("e s\na b c\n", "codes:2: expected two symbols separated by one space"), "three symbols");
    CHECK(codes_error("e  s\n", "codes:1: expected two symbols separated by one space"), "two spaces");
    CHECK(codes_error("e s\n\nl o\n", "codes:2: expected two symbols separated by one space"), "blank line inside");
    CHECK(codes_error("e s\nl \xff\n", "codes:2: invalid UTF-8"), "invalid UTF-8");
    CHECK(codes_error("e s\nl \xed\xa0\x80\n", "codes:2: invalid UTF-8"), "a surrogate");
    {
        Bpe nb;
        Error e2 = {{0}};
        CHECK(bpe_from_text(&nb, "e s\nl \0o\n", 9, "codes", &e2) == -1 && strcmp(e2.msg, "codes:2: NUL byte") == 0,
              "a NUL byte");
        bpe_free(&nb);
    }
    CHECK(codes_error("e s\na\tb c\n", "codes:2: whitespace or a control character (U+0009) in a symbol"),
          "a tab in a symbol");
    /* Found by tests/fuzz/fuzz_subword.c: a CR kept in a symbol was lost on the way
     * out and back in (written "b\r\n", read as the CRLF line "b"). */
    CHECK(codes_error("e s\r\na b\r\r\n", "codes:2: whitespace or a control character (U+000D) in a symbol"),
          "a CR in a symbol, before a CRLF");
    CHECK(codes_error("e s\n o\n", "codes:2: empty symbol"), "empty left symbol");
    CHECK(codes_error("e s\r\nl \r\n", "codes:2: empty symbol"), "empty right symbol (CRLF)");
    CHECK(codes_error("e</w> s\n", "codes:1: \"</w>\" may only end the right symbol"), "</w> in the left symbol");
    CHECK(codes_error("e s</w>x\n", "codes:1: \"</w>\" may only end the right symbol"), "</w> inside the right");
    CHECK(codes_error("e s</w></w>\n", "codes:1: \"</w>\" may only end the right symbol"), "</w> twice");
    CHECK(codes_error("e </w>\n", "codes:1: \"</w>\" on its own is subword-nmt 0.1's convention"), "0.1 codes");
    CHECK(codes_error("#version: 0.2\ne s\nl o\ne s\n", "codes:4: repeated merge \"e s\" (first on line 2)"),
          "repeated merge");
    CHECK(codes_error("#version: 0.1\ne s\n", "codes:1: codes version \"0.1\"; only 0.2 is supported"), "version");
}

/* Random words over a small alphabet, so that pairs repeat and collide a lot. */
static void random_words(Rng *rng, char **words, long *counts, int n)
{
    for (int i = 0; i < n; i++) {
        int len = 1 + (int)rng_below(rng, 8);
        words[i] = xmalloc((size_t)len + 1);
        for (int j = 0; j < len; j++)
            words[i][j] = "abcd"[rng_below(rng, 4)];
        words[i][len] = '\0';
        counts[i] = 1 + (long)rng_below(rng, 6);
    }
}

static void test_determinism(void)
{
    enum { N = 300 };
    char *words[N], *shuffled[N];
    long counts[N], shuffled_counts[N];
    int order[N];
    Rng rng;
    rng_seed(&rng, 7);
    random_words(&rng, words, counts, N);
    for (int i = 0; i < N; i++)
        order[i] = i;
    rng_shuffle(&rng, order, N);
    for (int i = 0; i < N; i++) {
        shuffled[i] = words[order[i]];
        shuffled_counts[i] = counts[order[i]];
    }
    Bpe a, b, c;
    bpe_learn(&a, words, counts, N, 500);
    bpe_learn(&b, words, counts, N, 500);
    bpe_learn(&c, shuffled, shuffled_counts, N, 500);
    CHECK(a.n > 100, "random words: many merges");
    CHECK(same_merges(&a, &b), "learning twice gives the same merges");
    CHECK(same_merges(&a, &c), "the order of the words does not matter");

    /* Many colliding merges: the codes still parse (no merge listed twice) and
     * every word round-trips. */
    char *text = bpe_to_text(&a);
    Bpe r;
    Error err;
    CHECK(bpe_from_text(&r, text, strlen(text), "codes", &err) == 0 && same_merges(&a, &r),
          "learned codes always parse back");
    CHECK(round_trips(&a, words, N), "random words round-trip");
    free(text);
    bpe_free(&r);
    bpe_free(&a);
    bpe_free(&b);
    bpe_free(&c);
    for (int i = 0; i < N; i++)
        free(words[i]);
}

/* Codes text read as `format` into *b; prints the error if it is refused. */
static int codes_as(Bpe *b, BpeFormat format, const char *text)
{
    Error err = {{0}};
    int rc = bpe_from_text_format(b, text, strlen(text), format, "codes", &err);
    if (rc)
        fprintf(stderr, "  [%s]: %s\n", text, err.msg);
    return rc == 0;
}

/* subword-nmt's format, worked by hand from its apply_bpe.py encode(): a word is its
 * code points with "</w>" glued to the last (0.2) or after it (0.1); the lowest-ranked
 * adjacent pair is merged at every occurrence, left to right, until none is a merge;
 * then "</w>" is cut off, or dropped when it is a symbol of its own. */
static void test_subword_nmt(void)
{
    Bpe b;
    CHECK(bpe_format_from_name("nmt") == BPE_NMT && bpe_format_from_name("subword-nmt") == BPE_SUBWORD_NMT &&
          bpe_format_from_name("sentencepiece") == -1, "format names");

    /* the: t h e</w> -> th e</w> (rank 0) -> the</w> (rank 1). band: b a n d</w> ->
     * b an d</w> (2) -> b and</w> (3). then: t h e n</w> -> th e n</w>, and "th e" is
     * no merge (only "th e</w>" is). */
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, "#version: 0.2\nt h\nth e</w>\na n\nan d</w>\n") && b.n == 4 &&
          b.format == BPE_SUBWORD_NMT && !b.eow_apart, "subword-nmt 0.2 codes read");
    CHECK(pieces_are(&b, "the", LIST("the")) && pieces_are(&b, "band", LIST("b@@", "and")) &&
          pieces_are(&b, "then", LIST("th@@", "e@@", "n")), "subword-nmt: the, band, then");
    CHECK(pieces_are(&b, "a", LIST("a")) && pieces_are(&b, "", (const char *const[]){NULL}),
          "subword-nmt: a word of one character stays; an empty one gives nothing");
    /* One token is one word: no units, and punctuation is a character like any other. */
    CHECK(pieces_are(&b, "the我and.", LIST("th@@", "e@@", "我@@", "an@@", "d@@", ".")),
          "subword-nmt: the whole token is one word, Han included");
    bpe_free(&b);

    /* Merge order decides: "b c</w>" (rank 0) is merged before "a b" (rank 1) in abc;
     * abd has no "b d</w>", so "a b" applies. */
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, "#version: 0.2\nb c</w>\na b\n"), "merge-order codes read");
    CHECK(pieces_are(&b, "abc", LIST("a@@", "bc")) && pieces_are(&b, "abd", LIST("ab@@", "d")),
          "subword-nmt: the lowest rank first, wherever it is");
    bpe_free(&b);
    /* Overlaps, left to right: a a a</w> -> aa a</w>; a a a a</w> -> aa a a</w> (the
     * second "a a" overlaps the first; the last a is a</w>). */
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, "#version: 0.2\na a\n") && pieces_are(&b, "aaa", LIST("aa@@", "a")) &&
          pieces_are(&b, "aaaa", LIST("aa@@", "a@@", "a")), "subword-nmt: overlapping occurrences, left to right");
    bpe_free(&b);

    /* Devanagari: तेथे is त े थ े as code points, ते थे as grapheme clusters. Codes of
     * code points ("े थ" joins a vowel sign to the next consonant) mean nothing to
     * clusters, and codes of clusters ("ते थे</w>") nothing to code points. */
    const char *cp_codes = "#version: 0.2\n\xe0\xa5\x87 \xe0\xa4\xa5\n\xe0\xa4\xa4 \xe0\xa5\x87\xe0\xa4\xa5\n";
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, cp_codes) && pieces_are(&b, "तेथे", LIST("तेथ@@", "े")),
          "subword-nmt: तेथे -> त ेथ े</w> -> तेथ े</w>");
    bpe_free(&b);
    CHECK(codes_as(&b, BPE_NMT, cp_codes) && pieces_are(&b, "तेथे", LIST("ते@@", "थे")),
          "nmt, the same codes: ते and थे are symbols, nothing merges");
    bpe_free(&b);
    const char *cluster_codes = "#version: 0.2\nते थे</w>\n";
    CHECK(codes_as(&b, BPE_NMT, cluster_codes) && pieces_are(&b, "तेथे", LIST("तेथे")), "nmt: ते थे</w> merges");
    bpe_free(&b);
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, cluster_codes) && pieces_are(&b, "तेथे", LIST("त@@", "े@@", "थ@@", "े")),
          "subword-nmt, the same codes: code points, nothing merges");
    bpe_free(&b);

    /* Version 0.1 (no "#version" line, or "#version: 0.1"): "</w>" a symbol of its own.
     * the: t h e </w> -> t h e</w> (0) -> th e</w> (1) -> the</w> (2). tea: t e a </w>,
     * no pair a merge, the bare "</w>" dropped. te: t e </w> -> t e</w>. */
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, "e </w>\nt h\nth e</w>\n") && b.n == 3 && b.eow_apart,
          "no #version line: version 0.1, the first line a merge");
    CHECK(pieces_are(&b, "the", LIST("the")) && pieces_are(&b, "tea", LIST("t@@", "e@@", "a")) &&
          pieces_are(&b, "te", LIST("t@@", "e")) && pieces_are(&b, "e", LIST("e")), "subword-nmt 0.1: the, tea, te, e");
    char *text = bpe_to_text(&b);
    CHECK(strcmp(text, "e </w>\nt h\nth e</w>\n") == 0, "0.1 codes are written without a #version line");
    free(text);
    bpe_free(&b);
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, "#version: 0.1\ne </w>\n") && b.eow_apart && b.n == 1 &&
              pieces_are(&b, "be", LIST("b@@", "e")),
          "#version: 0.1");
    bpe_free(&b);
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, "#version: 0.2.0\r\n  a b \r\nx\ty </w>z\n\n\n") && !b.eow_apart &&
              b.n == 2 && merge_is(&b, 0, "a", "b") && merge_is(&b, 1, "x\ty", "</w>z"),
          "0.2.0 is 0.2; spaces and CRs stripped at the ends; a tab or </w> anywhere in a symbol; blank lines at "
          "the end");
    bpe_free(&b);
    /* A repeated merge keeps its first rank: abcd -> a bc d</w> ("b c", rank 0),
     * not ab c d</w> ("a b", rank 1). */
    CHECK(codes_as(&b, BPE_SUBWORD_NMT, "#version: 0.2\nb c\na b\nb c\n") && b.n == 2 &&
              pieces_are(&b, "abcd", LIST("a@@", "bc@@", "d")),
          "subword-nmt: a repeated merge keeps its first rank");
    bpe_free(&b);

    CHECK(codes_error_as(BPE_SUBWORD_NMT, "#version: 0.3\na b\n",
                         "codes:1: codes version \"0.3\"; subword-nmt's codes are version 0.1 or 0.2"),
          "subword-nmt: version 0.3 refused");
    CHECK(codes_error_as(BPE_SUBWORD_NMT, "#version: 0.2 byte\na b\n",
                         "codes:1: byte-level codes (subword-nmt learn-bpe --byte) are not supported"),
          "subword-nmt: byte-level codes refused");
    CHECK(codes_error_as(BPE_SUBWORD_NMT, "#version: 0.2\na b\nc\n", "codes:3: expected two symbols separated by one space"),
          "subword-nmt: one symbol");
    CHECK(codes_error_as(BPE_SUBWORD_NMT, "#version: 0.2\na  b\n", "codes:2: expected two symbols separated by one space"),
          "subword-nmt: two spaces");
    CHECK(codes_error_as(BPE_SUBWORD_NMT, "a b\n \nc d\n", "codes:2: expected two symbols separated by one space"),
          "subword-nmt: a blank line inside");
    CHECK(codes_error_as(BPE_SUBWORD_NMT, "a b\nc \xff\n", "codes:2: invalid UTF-8"), "subword-nmt: invalid UTF-8");

    /* Learning on code points, ties to the greatest pair (subword-nmt's max over
     * (count, pair)). Sennrich's words: e s 9 and s t</w> 9 tie, "s" > "e"; then
     * e st</w> 9; l o 7; then n e, e w and w est</w> tie at 6, "w" greatest. */
    char *words[] = {"low", "lower", "newest", "widest"};
    long counts[] = {5, 2, 6, 3};
    bpe_learn_format(&b, words, counts, 4, 4, BPE_SUBWORD_NMT, NULL);
    CHECK(b.n == 4 && b.format == BPE_SUBWORD_NMT && merge_is(&b, 0, "s", "t</w>") && merge_is(&b, 1, "e", "st</w>") &&
              merge_is(&b, 2, "l", "o") && merge_is(&b, 3, "w", "est</w>"),
          "subword-nmt learning: Sennrich's words, ties to the greatest pair");
    bpe_free(&b);
    /* ते is one symbol to nmt's learner, two code points to subword-nmt's. */
    char *dev[] = {"ते"};
    long dc[] = {3};
    bpe_learn_format(&b, dev, dc, 1, 10, BPE_NMT, NULL);
    CHECK(b.n == 0, "nmt learning: ते is one symbol, no pair");
    bpe_free(&b);
    bpe_learn_format(&b, dev, dc, 1, 10, BPE_SUBWORD_NMT, NULL);
    CHECK(b.n == 1 && merge_is(&b, 0, "त", "\xe0\xa5\x87</w>"), "subword-nmt learning: त े</w>");
    bpe_free(&b);
    /* A word holding "</w>" is learned from (as subword-nmt does), and the codes read
     * back as subword-nmt's. */
    char *odd[] = {"a</w>b", "x\ty"};
    long oc[] = {4, 4};
    Bpe r = {0};
    bpe_learn_format(&b, odd, oc, 2, 100, BPE_SUBWORD_NMT, NULL);
    text = bpe_to_text(&b);
    CHECK(b.n == 7 && codes_as(&r, BPE_SUBWORD_NMT, text) && same_merges(&b, &r) &&
              pieces_are(&r, "a</w>b", LIST("a</w>b")) && pieces_are(&r, "x\ty", LIST("x\ty")),
          "subword-nmt learning: \"</w>\" and a tab inside words; the codes read back");
    free(text);
    bpe_free(&r);
    bpe_free(&b);
}

/* A word of len letters over "ab" (random) or "a" alone. */
static char *long_word(Rng *rng, int len, const char *alphabet)
{
    char *w = xmalloc((size_t)len + 1);
    int k = (int)strlen(alphabet);
    for (int i = 0; i < len; i++)
        w[i] = alphabet[rng_below(rng, (uint32_t)k)];
    w[len] = '\0';
    return w;
}

/* Long words cost time linear in their length to learn from, and n log n to segment:
 * checked by the steps the learner and the segmenter count (one per heap operation,
 * so linear in both), never by a clock. The old learner rewrote a unit at every merge
 * in it, and the old segmenter looked up every pair of a unit again after every rank
 * it merged: a few hundred passes over the word, where the bounds below allow a few
 * dozen steps per letter. A doubled word must cost about twice as much, not four
 * times. */
static void test_long_words(void)
{
    Rng rng;
    rng_seed(&rng, 19);
    /* Learning from words at the limit: 2,000 and 4,000 letters, seen twice. */
    long work[2];
    int merges[2];
    for (int k = 0; k < 2; k++) {
        int len = 2000 * (k + 1);
        char *w[] = {long_word(&rng, len, "abc"), "cab", "abba"};
        long c[] = {2, 5, 3};
        Bpe b;
        BpeLearnReport r;
        bpe_learn_format(&b, w, c, 3, 100000, BPE_NMT, &r);
        work[k] = r.work;
        merges[k] = b.n;
        CHECK(r.too_long == 0, "long words: a word under BPE_MAX_WORD_BYTES is learned from");
        CHECK(round_trips(&b, w, 3), "long words: the word learned from segments and joins back");
        bpe_free(&b);
        free(w[0]);
    }
    printf("  learning 2000 and 4000 letters: %d and %d merges, %ld and %ld steps\n", merges[0], merges[1], work[0],
           work[1]);
    CHECK(merges[1] > 1000, "long words: a word of 4000 letters seen twice makes over 1000 merges");
    CHECK(work[1] < 40L * 4000, "long words: learning takes under 40 steps per letter");
    CHECK(work[1] < 3 * work[0], "long words: twice the letters, at most about twice the learning steps");

    /* Segmenting 50,000 and 100,000 letters with merges learned from 4,000. */
    char *train[] = {long_word(&rng, 4000, "ab")};
    long tc[] = {2};
    Bpe b;
    bpe_learn(&b, train, tc, 1, 100000);
    CHECK(b.n > 500, "long words: merges to apply");
    long seg_work[2] = {0, 0};
    int pieces[2];
    for (int k = 0; k < 2; k++) {
        int len = 50000 * (k + 1);
        char *w = long_word(&rng, len, "ab");
        TokenList p, back;
        subword_segment_counted(&b, &w, 1, &p, &seg_work[k]);
        pieces[k] = p.n;
        subword_join(p.tokens, p.n, &back);
        CHECK(back.n == 1 && !strcmp(back.tokens[0], w), "long words: a word of 50,000 or 100,000 letters joins back");
        CHECK(p.n > 1 && p.n < len / 4, "long words: merged into pieces of several letters");
        token_list_free(&p);
        token_list_free(&back);
        free(w);
    }
    printf("  segmenting 50,000 and 100,000 letters: %d and %d pieces, %ld and %ld steps\n", pieces[0], pieces[1],
           seg_work[0], seg_work[1]);
    CHECK(seg_work[1] < 20L * 100000, "long words: segmenting takes under 20 steps per letter");
    CHECK(seg_work[1] < 3 * seg_work[0], "long words: twice the letters, at most about twice the segmenting steps");
    /* One letter, 100,000 times: the merges "a a", "aa aa", ... halve it again and again. */
    char *as = long_word(&rng, 100000, "a");
    char *few[] = {"aaaaaaaa"};
    long fc[] = {2};
    Bpe ab;
    bpe_learn(&ab, few, fc, 1, 10);
    long a_work = 0;
    TokenList p;
    subword_segment_counted(&ab, &as, 1, &p, &a_work);
    CHECK(p.n > 1 && p.n < 100000 / 4 && a_work < 20L * 100000, "long words: 100,000 times one letter, few steps");
    token_list_free(&p);
    bpe_free(&ab);
    free(as);
    bpe_free(&b);
    free(train[0]);
}

/* Words longer than BPE_MAX_WORD_BYTES are left out of learning and counted; one of
 * exactly that many bytes is learned from; at apply time any length is segmented. */
static void test_word_limit(void)
{
    Rng rng;
    rng_seed(&rng, 4096);
    char *at_limit = long_word(&rng, BPE_MAX_WORD_BYTES, "abc");
    char *over = long_word(&rng, BPE_MAX_WORD_BYTES + 1, "xyz");
    char *far_over = long_word(&rng, 100000, "xyz");
    char *with[] = {"lower", over, "newest", far_over, at_limit, "widest", over, "low"};
    long wc[] = {2, 3, 6, 1, 2, 3, 0, 5};   /* the second `over` has count 0: not counted */
    char *without[] = {"lower", "newest", at_limit, "widest", "low"};
    long woc[] = {2, 6, 2, 3, 5};
    Bpe a, b;
    BpeLearnReport ra, rb;
    bpe_learn_format(&a, with, wc, 8, 100000, BPE_NMT, &ra);
    bpe_learn_format(&b, without, woc, 5, 100000, BPE_NMT, &rb);
    CHECK(ra.too_long == 2 && rb.too_long == 0, "limit: two words over BPE_MAX_WORD_BYTES counted as left out");
    CHECK(same_merges(&a, &b), "limit: the merges are those learned without them");
    int xyz = 0;
    for (int i = 0; i < a.n; i++)
        xyz |= strchr("xyz", a.left[i][0]) != NULL;
    CHECK(!xyz, "limit: nothing learned from them");
    CHECK(a.n > 100, "limit: a word of exactly BPE_MAX_WORD_BYTES bytes is learned from");
    bpe_free(&b);
    bpe_learn_format(&b, with, wc, 8, 100000, BPE_SUBWORD_NMT, &rb);
    CHECK(rb.too_long == 2, "limit: the same under subword-nmt's symbols");
    bpe_free(&b);
    /* Applying has no limit: the word is segmented with the merges that apply. */
    char *merged_x[] = {"xyxy", "xy"};
    long mc[] = {3, 2};
    bpe_learn(&b, merged_x, mc, 2, 10);
    TokenList p, back;
    subword_segment(&b, &far_over, 1, &p);
    subword_join(p.tokens, p.n, &back);
    CHECK(p.n > 1 && p.n < 100000 && back.n == 1 && !strcmp(back.tokens[0], far_over),
          "limit: a word over it is still segmented at apply time, and joins back");
    token_list_free(&p);
    token_list_free(&back);
    bpe_free(&b);
    bpe_free(&a);
    free(at_limit);
    free(over);
    free(far_over);
}

int main(void)
{
    test_sennrich();
    test_units_and_graphemes();
    test_round_trips();
    test_frequent_words_whole();
    test_codes_text();
    test_determinism();
    test_subword_nmt();
    test_long_words();
    test_word_limit();
    return check_report("test_subword");
}
