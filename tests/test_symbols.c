/* test_symbols.c — protected symbols (text/text.c, data.user_symbols): what a symbol
 * may be, and every tokenizer keeping them whole: the word tokenizer (text_tokenize),
 * BPE learning and application, characters, SentencePiece training (its
 * user_defined_symbols) and application, and the way back to text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"          /* defines: CHECK, check_report */
#include "text/segment.h"   /* defines: Segmenter, segmenter_apply, segmenter_learn_bpe, segmenter_learn_spm */
#include "text/spm.h"       /* defines: spm_encode, spm_pieces_free */
#include "text/text.h"      /* defines: UserSymbols, user_symbols_init, user_symbol_problem, text_tokenize */
#include "text/vocab.h"     /* defines: VocabCounter */

/* The tokens of line under opt, joined by single spaces (malloc'd; "ERROR" on failure). */
static char *tokens_of(const char *line, const TextOptions *opt)
{
    TokenList t;
    Error err;
    if (text_tokenize(line, strlen(line), opt, &t, &err)) return strdup("ERROR");
    char *s = text_join(t.tokens, t.n);
    token_list_free(&t);
    return s;
}

static void expect_tokens(const char *line, const TextOptions *opt, const char *want, const char *what)
{
    char *got = tokens_of(line, opt);
    CHECK(!strcmp(got, want), what);
    if (strcmp(got, want)) fprintf(stderr, "     %s: got \"%s\", want \"%s\"\n", what, got, want);
    free(got);
}

/* The units of the words of `line` (split at spaces) under s, joined by spaces. */
static char *units_of(const Segmenter *s, char *line)
{
    char *words[32];
    int n = 0;
    for (char *w = strtok(line, " "); w && n < 32; w = strtok(NULL, " "))
        words[n++] = w;
    TokenList in = {words, n}, out;
    segmenter_apply(s, SIDE_SOURCE, &in, &out);
    char *joined = text_join(out.tokens, out.n);
    token_list_free(&out);
    return joined;
}

static void expect_units(const Segmenter *s, const char *line, const char *want, const char *what)
{
    char *copy = strdup(line), *got = units_of(s, copy);
    CHECK(!strcmp(got, want), what);
    if (strcmp(got, want)) fprintf(stderr, "     %s: got \"%s\", want \"%s\"\n", what, got, want);
    free(got);
    free(copy);
}

/* ---------------------------------------------------------------- what a symbol may be */

static void test_problems(void)
{
    char why[200];
    const char *good[] = {"<2da>", "<b>", "{name}", "__label__", "<tag:x>", "§1", "@x@"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK(user_symbol_problem(good[i], why, sizeof why) == 0, "a symbol: tags, markup, placeholders");
    struct { const char *s, *why; } bad[] = {
        {"", "an empty string"},
        {"<a b>", "holds whitespace or a control character (U+0020)"},
        {"<a\tb>", "holds whitespace or a control character (U+0009)"},
        {"<unk>", "is a reserved name"},
        {"<eos>", "is a reserved name"},
        {"x@@", "ends in \"@@\", BPE's joiner"},
        {"a,b", "holds a comma"},
        {"\xE2\x96\x81x", "holds U+2581, SentencePiece's space"},
        {"\xFFx", "is not valid UTF-8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = user_symbol_problem(bad[i].s, why, sizeof why);
        CHECK(rc == -1 && strstr(why, bad[i].why), bad[i].why);
    }
    char longest[USER_SYMBOL_MAX_BYTES + 2];
    memset(longest, 'x', sizeof longest - 1);
    longest[sizeof longest - 1] = 0;
    CHECK(user_symbol_problem(longest, why, sizeof why) == -1 && strstr(why, "longer than 256 bytes"),
          "a symbol of more than 256 bytes is refused");
    longest[USER_SYMBOL_MAX_BYTES] = 0;
    CHECK(user_symbol_problem(longest, why, sizeof why) == 0, "one of 256 bytes is not");

    UserSymbols u;
    Error err;
    char *twice[] = {"<a>", "<b>", "<a>"};
    CHECK(user_symbols_init(&u, twice, 3, NULL, &err) == -1 && strstr(err.msg, "symbol 3: \"<a>\" is given twice"),
          "a symbol given twice is refused, naming it");
    CHECK(u.n == 0, "... and the list left empty");
    char *one_bad[] = {"<a>", "<b c>"};
    CHECK(user_symbols_init(&u, one_bad, 2, NULL, &err) == -1 && strstr(err.msg, "symbol 2: \"<b c>\" holds"),
          "a bad symbol is refused, naming its place");
}

/* ---------------------------------------------------------------- the word tokenizer */

/* Without symbols "{" and "}" split off (brackets always do) and "<" ">" (math symbols)
 * stay in the word; with them, each symbol is a token wherever it occurs. */
static void test_word_tokenizer(void)
{
    TextOptions plain = {0};
    expect_tokens("<2da> Hello, {name}!", &plain, "<2da> Hello , { name } !", "without symbols: { } split off");
    expect_tokens("<2da>Hello", &plain, "<2da>Hello", "without symbols: a tag glued to a word stays in it");

    char *given[] = {"<2da>", "{name}", "<b>", "<b>x"};
    UserSymbols u;
    Error err;
    CHECK(user_symbols_init(&u, given, 4, &plain, &err) == 0, "four symbols");
    TextOptions opt = {.symbols = &u};
    expect_tokens("<2da> Hello, {name}!", &opt, "<2da> Hello , {name} !", "symbols: each whole");
    expect_tokens("<2da>Hello {name}'s", &opt, "<2da> Hello {name} ' s", "symbols: split off the text around them");
    expect_tokens("a<b>b <b>xy", &opt, "a <b> b <b>x y", "symbols: the longest that matches");
    expect_tokens("{nam} <2d a>", &opt, "{ nam } <2d a>", "near misses are text");
    TextOptions ws = {.whitespace_only = 1, .symbols = &u};
    expect_tokens("x<2da>y, z", &ws, "x <2da> y, z", "whitespace-only tokenizers: symbols split off too");
    user_symbols_free(&u);

    /* Normalised as the text: under lowercasing "<2DA>" is "<2da>", and matches any case. */
    char *upper[] = {"<2DA>", "{Name}"};
    TextOptions lower = {.lowercase = 1};
    CHECK(user_symbols_init(&u, upper, 2, &lower, &err) == 0 && !strcmp(u.norm[0], "<2da>"),
          "a symbol is normalised as the text is (lowercase)");
    lower.symbols = &u;
    expect_tokens("<2Da>X {NAME}.", &lower, "<2da> x {name} .", "lowercase: a symbol in any case is kept whole");
    CHECK(user_symbols_is(&u, "{name}") && !user_symbols_is(&u, "{Name}") && !user_symbols_is(NULL, "{name}"),
          "user_symbols_is: the normalised forms");
    user_symbols_free(&u);
}

/* ---------------------------------------------------------------- subword units */

/* BPE learned from counts in which "<2da>" is frequent: without protection its merges
 * spend some on the tag; with it the merges are exactly those of the counts without
 * the tag. Applying: the tag one unit, without "@@", the words around it as without. */
static void test_bpe(void)
{
    char *given[] = {"<2da>", "{name}"};
    UserSymbols u;
    Error err;
    CHECK(user_symbols_init(&u, given, 2, NULL, &err) == 0, "two symbols");
    VocabCounter *with = vocab_counter_new(), *without = vocab_counter_new();
    const char *words[] = {"lower", "newest", "widest", "low", "slow", "slower"};
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < 6; i++) {
            vocab_counter_add(with, words[i]);
            vocab_counter_add(without, words[i]);
        }
        for (int k = 0; k < 3; k++)
            vocab_counter_add(with, "<2da>");
        vocab_counter_add(with, "{name}");
    }
    Bpe plain, kept, ref;
    segmenter_learn_bpe(&plain, with, 30, BPE_NMT, NULL);
    segmenter_learn_bpe(&kept, with, 30, BPE_NMT, &u);
    segmenter_learn_bpe(&ref, without, 30, BPE_NMT, NULL);
    char *a = bpe_to_text(&plain), *b = bpe_to_text(&kept), *c = bpe_to_text(&ref);
    CHECK(strstr(a, "2 d") || strstr(a, "< 2") || strstr(a, "d a"), "unprotected, the tag's letters are merged");
    CHECK(!strcmp(b, c), "protected, BPE learns exactly what it learns without the symbols");
    free(a);
    free(b);
    free(c);

    /* Merges learned where the tag is rare (here: absent) cut it into its 5 characters. */
    Segmenter s = {.kind = TOKENIZER_BPE, .src = ref};
    expect_units(&s, "<2da> {name}", "<@@ 2@@ d@@ a@@ > {@@ n@@ a@@ m@@ e@@ }",
                 "without protection, BPE cuts a rare tag into 5 pieces");
    s.symbols = &u;
    s.src = kept;
    char *copy = strdup("lowest slowest"), *alone = NULL;
    {
        Segmenter bare = s;
        bare.symbols = NULL;
        alone = units_of(&bare, copy);
    }
    char want[200];
    snprintf(want, sizeof want, "<2da> %s {name} <2da>", alone);
    expect_units(&s, "<2da> lowest slowest {name} <2da>", want,
                 "protected: each symbol one unit, the words around it as without");
    free(alone);
    free(copy);
    TokenList units = {(char *[]){"<2da>", "lo@@", "west", "{name}"}, 4};
    char *text = segmenter_detokenize(&s, units.tokens, units.n);
    CHECK(!strcmp(text, "<2da> lowest {name}"), "back to text: the symbols as they were");
    free(text);

    Segmenter chars = {.kind = TOKENIZER_CHAR, .symbols = &u};
    expect_units(&chars, "<2da> ab {name}", "<2da> a@@ b {name}", "characters: the symbols whole");
    bpe_free(&plain);
    bpe_free(&kept);
    bpe_free(&ref);
    vocab_counter_free(with);
    vocab_counter_free(without);
    user_symbols_free(&u);
}

/* SentencePiece trained with the symbols as user_defined_symbols: the library itself
 * keeps them whole; nmt's segmentation makes each one unit, U+2581 and the symbol, and
 * the units read back as the text. */
static void test_sentencepiece(void)
{
    char *given[] = {"<2da>", "{name}"};
    UserSymbols u;
    Error err;
    CHECK(user_symbols_init(&u, given, 2, NULL, &err) == 0, "two symbols");
    static const char *const words[] = {"the", "lower", "newest", "widest", "low", "new", "wide", "cat", "sat"};
    char *lines[200];
    for (int i = 0; i < 200; i++) {
        char line[100];
        snprintf(line, sizeof line, "<2da> %s %s {name} %s", words[i % 9], words[(i / 9) % 9], words[(i * 7 + 3) % 9]);
        lines[i] = strdup(line);
    }
    Segmenter s = {.kind = TOKENIZER_SPM, .symbols = &u};
    int rc = segmenter_learn_spm(&s.spm_src, (const char *const *)lines, 200, "unigram", 60, &u, &err);
    CHECK(rc == 0, "spm: trained with user_defined_symbols");
    if (rc) fprintf(stderr, "     %s\n", err.msg);
    for (int i = 0; i < 200; i++)
        free(lines[i]);
    if (rc) {
        user_symbols_free(&u);
        return;
    }
    char **pieces;
    int n, whole = 0;
    CHECK(spm_encode(s.spm_src.spm, "x<2da>y {name}", &pieces, &n) == 0, "spm: encodes");
    for (int i = 0; i < n; i++)
        whole += !strcmp(pieces[i], "<2da>") || !strcmp(pieces[i], "{name}");
    CHECK(whole == 2, "spm: the library keeps its user_defined_symbols whole, even glued to text");
    spm_pieces_free(pieces, n);
    s.spm_tgt = s.spm_src;  /* for the way back */
    char *copy = strdup("<2da> the cat {name}"), *got = units_of(&s, copy);
    CHECK(!strncmp(got, "\xE2\x96\x81<2da> ", 9) && strstr(got, " \xE2\x96\x81{name}"),
          "spm: each symbol one unit, U+2581 and itself");
    free(copy);
    copy = strdup(got);
    char *units[32];
    int k = 0;
    for (char *w = strtok(copy, " "); w && k < 32; w = strtok(NULL, " "))
        units[k++] = w;
    char *text = segmenter_detokenize(&s, units, k);
    CHECK(!strcmp(text, "<2da> the cat {name}"), "spm: the units read back as the text");
    if (strcmp(text, "<2da> the cat {name}")) fprintf(stderr, "     got \"%s\" from \"%s\"\n", text, got);
    free(text);
    free(copy);
    free(got);
    s.spm_tgt = (SpmModel){0};
    spm_model_free(&s.spm_src);
    user_symbols_free(&u);
}

int main(void)
{
    test_problems();
    test_word_tokenizer();
    test_bpe();
    test_sentencepiece();
    return check_report("test_symbols");
}
