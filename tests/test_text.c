/* test_text.c — normalisation, tokenising and detokenising (src/text/text.c). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "text/text.h"   // defines: text_tokenize, text_detokenize, text_normalize_line

static const TextOptions NFC = {.lowercase = 0, .nfkc = 0};
static const TextOptions NFKC = {.lowercase = 0, .nfkc = 1};
static const TextOptions FOLD = {.lowercase = 1, .nfkc = 0};

/* Tokenizes `line` (strlen bytes) and checks the tokens equal the NULL-terminated
 * list `want`; prints both on a mismatch. */
static void check_tokens(const char *line, const TextOptions *opt, const char *const *want, const char *what)
{
    TokenList t;
    Error err = {{0}};
    int rc = text_tokenize(line, strlen(line), opt, &t, &err);
    int n_want = 0;
    while (want[n_want])
        n_want++;
    int ok = rc == 0 && t.n == n_want;
    for (int i = 0; ok && i < n_want; i++)
        ok = strcmp(t.tokens[i], want[i]) == 0;
    CHECK(ok, what);
    if (!ok) {
        fprintf(stderr, "  rc %d (%s), got %d tokens:", rc, err.msg, t.n);
        for (int i = 0; i < t.n; i++)
            fprintf(stderr, " [%s]", t.tokens[i]);
        fprintf(stderr, "\n  want %d:", n_want);
        for (int i = 0; i < n_want; i++)
            fprintf(stderr, " [%s]", want[i]);
        fprintf(stderr, "\n");
    }
    token_list_free(&t);
}

#define TOKENS(line, opt, what, ...) \
    check_tokens(line, opt, (const char *const[]){__VA_ARGS__, NULL}, what)

/* text_normalize_line(line) == want. */
static void check_normalized(const char *line, const TextOptions *opt, const char *want, const char *what)
{
    char *got = text_normalize_line(line, strlen(line), opt);
    int ok = got && strcmp(got, want) == 0;
    CHECK(ok, what);
    if (!ok)
        fprintf(stderr, "  got [%s]\n  want [%s]\n", got ? got : "(NULL)", want);
    free(got);
}

/* The line must be rejected, with the byte offset of the bad sequence in the message. */
static void check_invalid(const char *line, size_t len, const char *offset_msg, const char *what)
{
    TokenList t = {(char **)1, 99};   /* garbage: must be reset on failure */
    Error err = {{0}};
    int rc = text_tokenize(line, len, &NFC, &t, &err);
    CHECK(rc == -1, what);
    CHECK(t.n == 0 && t.tokens == NULL, "output left empty on invalid UTF-8");
    CHECK(strstr(err.msg, offset_msg) != NULL, offset_msg);
    if (!strstr(err.msg, offset_msg))
        fprintf(stderr, "  message was [%s]\n", err.msg);
    CHECK(text_normalize_line(line, len, &NFC) == NULL, "text_normalize_line: NULL on invalid UTF-8");
}

static void test_devanagari(void)
{
    /* Vowel signs (Mn/Mc) and the virama must stay with their letters. */
    TOKENS("तू कुठे आहेस?", &NFC, "Marathi: marks stay attached, ? splits", "तू", "कुठे", "आहेस", "?");
    TOKENS("नमस्ते", &NFC, "नमस्ते is one token", "नमस्ते");
    TOKENS("नमस्ते। कसे आहात॥", &NFC, "danda and double danda split", "नमस्ते", "।", "कसे", "आहात", "॥");
    /* Even with no space after it: a danda never joins two words. */
    TOKENS("ठीक।चला", &NFC, "danda between letters splits", "ठीक", "।", "चला");
    check_normalized("तू कुठे आहेस ?", &NFC, "तू कुठे आहेस?", "Devanagari round trip");
    check_normalized("नमस्ते ।", &NFC, "नमस्ते।", "no space before a danda");
}

static void test_normalisation(void)
{
    /* "e" + U+0301 COMBINING ACUTE composes to U+00E9 under NFC. */
    TOKENS("caf" "e\xCC\x81", &NFC, "NFC composes e + combining acute", "caf\xC3\xA9");
    TOKENS("caf\xC3\xA9", &NFC, "precomposed é unchanged", "caf\xC3\xA9");
    /* NFKC folds the ligature U+FB01; NFC must not. */
    TOKENS("\xEF\xAC\x81ne", &NFKC, "NFKC folds the fi ligature", "fine");
    TOKENS("\xEF\xAC\x81ne", &NFC, "NFC keeps the fi ligature", "\xEF\xAC\x81ne");
    /* Full-width letters become ASCII under NFKC. */
    TOKENS("\xEF\xBC\xA1\xEF\xBC\xA2", &NFKC, "NFKC folds full-width AB", "AB");
    /* Case folding: full folding turns ß into ss (Unicode CaseFolding.txt, status F). */
    TOKENS("Straße ÉCOLE", &FOLD, "case folding", "strasse", "école");
    TOKENS("Straße ÉCOLE", &NFC, "no case folding when lowercase = 0", "Straße", "ÉCOLE");
    TOKENS("E\xCC\x81" "COLE", &FOLD, "case folding of decomposed É", "école");
}

static void test_whitespace(void)
{
    TOKENS("  a\t\tb \r\n c  ", &NFC, "tabs, CR, LF collapse; ends trimmed", "a", "b", "c");
    TOKENS("a\xC2\xA0" "b", &NFC, "NBSP U+00A0 (Zs) separates", "a", "b");
    TOKENS("a\xE3\x80\x80" "b", &NFC, "ideographic space U+3000 separates", "a", "b");
    TOKENS("a\xE2\x80\xA8" "b\xE2\x80\xA9" "c", &NFC, "line/paragraph separators separate", "a", "b", "c");
    TOKENS("a\xC2\x85" "b", &NFC, "NEL U+0085 (Cc) separates", "a", "b");
    /* ZWNJ (U+200C, Cf) is part of the Persian word "می‌خواهم". */
    TOKENS("\xD9\x85\xDB\x8C\xE2\x80\x8C\xD8\xAE\xD9\x88\xD8\xA7\xD9\x87\xD9\x85", &NFC,
           "ZWNJ stays inside a word",
           "\xD9\x85\xDB\x8C\xE2\x80\x8C\xD8\xAE\xD9\x88\xD8\xA7\xD9\x87\xD9\x85");
    TOKENS("\xEF\xBB\xBFHello", &NFC, "stray BOM dropped", "Hello");

    /* A NUL byte inside the given length is a control character: whitespace. */
    TokenList t;
    Error err;
    CHECK(text_tokenize("ab\0cd", 5, &NFC, &t, &err) == 0 && t.n == 2 &&
          strcmp(t.tokens[0], "ab") == 0 && strcmp(t.tokens[1], "cd") == 0, "embedded NUL separates");
    token_list_free(&t);
    /* Only `len` bytes are read. */
    CHECK(text_tokenize("hello world", 5, &NFC, &t, &err) == 0 && t.n == 1 &&
          strcmp(t.tokens[0], "hello") == 0, "reads exactly len bytes");
    token_list_free(&t);

    CHECK(text_tokenize("", 0, &NFC, &t, &err) == 0 && t.n == 0, "empty line: 0 tokens");
    token_list_free(&t);
    CHECK(text_tokenize(NULL, 0, &NFC, &t, &err) == 0 && t.n == 0, "NULL with len 0: 0 tokens");
    token_list_free(&t);
    CHECK(text_tokenize(" \t\xC2\xA0\r\n", 6, &NFC, &t, &err) == 0 && t.n == 0, "all whitespace: 0 tokens");
    token_list_free(&t);
    check_normalized("   ", &NFC, "", "all whitespace normalises to \"\"");
}

static void test_punctuation(void)
{
    TOKENS("Hello, world!", &NFC, "comma and ! split", "Hello", ",", "world", "!");
    TOKENS("don't well-known 3.5 e-mail 1,000 10:30", &NFC, "intra-word punctuation stays",
           "don't", "well-known", "3.5", "e-mail", "1,000", "10:30");
    TOKENS("don\xE2\x80\x99t", &NFC, "curly apostrophe (Pf) stays inside", "don\xE2\x80\x99t");
    TOKENS("'tis the dogs' end-", &NFC, "punctuation at word edges splits",
           "'", "tis", "the", "dogs", "'", "end", "-");
    TOKENS("a--b", &NFC, "a double hyphen is not between letters", "a", "-", "-", "b");
    TOKENS("Wait...what?!", &NFC, "each punctuation code point is a token",
           "Wait", ".", ".", ".", "what", "?", "!");
    TOKENS("yes?no (f(x))", &NFC, "? and brackets split even between letters",
           "yes", "?", "no", "(", "f", "(", "x", ")", ")");
    TOKENS("$5 a+b <unk>", &NFC, "symbols (S*) are not punctuation", "$5", "a+b", "<unk>");
    TOKENS("\"Hi\"", &NFC, "straight quotes split", "\"", "Hi", "\"");
    TOKENS("¿Qué? ¡Hola!", &NFC, "Spanish inverted marks", "¿", "Qué", "?", "¡", "Hola", "!");
    /* CJK stays inside words for now; the ideographic full stop still splits. */
    TOKENS("我爱你。你好", &NFC, "CJK kept as words", "我爱你", "。", "你好");
    TOKENS("東京タワー", &NFC, "CJK/katakana word kept whole", "東京タワー");
}

/* whitespace_only (data.tokenizer none and spm): the runs between whitespace are the
 * tokens, punctuation and subword marks untouched; normalisation and case folding as
 * ever. */
static void test_whitespace_only(void)
{
    static const TextOptions SPLIT = {.whitespace_only = 1}, SPLIT_FOLD = {.lowercase = 1, .whitespace_only = 1};
    TOKENS("Hello, world!", &SPLIT, "whitespace only: punctuation stays in its token", "Hello,", "world!");
    TOKENS("low@@ er new@@ est .", &SPLIT, "whitespace only: subword-nmt's @@ pieces are the tokens",
           "low@@", "er", "new@@", "est", ".");
    TOKENS("\xE2\x96\x81He llo \xE2\x96\x81world .", &SPLIT, "whitespace only: SentencePiece's pieces are the tokens",
           "\xE2\x96\x81He", "llo", "\xE2\x96\x81world", ".");
    TOKENS(" a\t\xC2\xA0(b)  c ", &SPLIT, "whitespace only: tab, NBSP and runs of spaces separate", "a", "(b)", "c");
    TOKENS("LOW@@ ER \xC3\x89" "COLE,", &SPLIT_FOLD, "whitespace only: still case-folded", "low@@", "er",
           "\xC3\xA9" "cole,");
    TOKENS("e\xCC\x81t\xC3\xA9", &SPLIT, "whitespace only: still NFC", "\xC3\xA9t\xC3\xA9");
    TOKENS("don't (x)", &NFC, "... and without it punctuation splits as before", "don't", "(", "x", ")");
}

static void test_invalid_utf8(void)
{
    check_invalid("\xC0\xAF", 2, "byte 0", "overlong 2-byte '/' rejected");
    check_invalid("ab\xE0\x80\xAF", 5, "byte 2", "overlong 3-byte rejected");
    check_invalid("abc\xE2\x82", 5, "byte 3", "truncated 3-byte sequence rejected");
    check_invalid("ok \x80 no", 6, "byte 3", "lone continuation byte rejected");
    check_invalid("\xED\xA0\x80", 3, "byte 0", "UTF-16 surrogate rejected");
    check_invalid("x\xF4\x90\x80\x80", 5, "byte 1", "code point above U+10FFFF rejected");
    check_invalid("\xFF", 1, "byte 0", "0xFF rejected");
    /* Truncation by `len`: the bytes are fine, but the sequence is cut. */
    check_invalid("\xC3\xA9", 1, "byte 0", "sequence cut by len rejected");
}

/* detokenize(tokens) == want */
static void check_detok(const char *const *tokens, int n, const char *want, const char *what)
{
    char *got = text_detokenize((char *const *)tokens, n);
    int ok = strcmp(got, want) == 0;
    CHECK(ok, what);
    if (!ok)
        fprintf(stderr, "  got [%s]\n  want [%s]\n", got, want);
    free(got);
}

static void test_detokenize(void)
{
    /* Round trips: tokenising then detokenising gives the original back. */
    const char *exact[] = {
        "Hello, world!",
        "He said \"hi\" (twice).",
        "¿Qué? ¡Hola!",
        "Wait... what?!",
        "It costs 3.5% more: don't.",
        "«Bonjour», dit-il.",
        "a - b",
        "नमस्ते। कसे आहात?",
        "[1] {x}",
        "She said 'no' and \"yes\" and 'maybe'.",
        "我爱你。他很好，谢谢！",
        "東京は「大きい」です。",
        "ภาษาไทย ง่าย",
        "I love 東京。",
    };
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        char *got = text_normalize_line(exact[i], strlen(exact[i]), &NFC);
        int ok = got && strcmp(got, exact[i]) == 0;
        CHECK(ok, exact[i]);
        if (!ok)
            fprintf(stderr, "  round trip gave [%s]\n", got ? got : "(NULL)");
        free(got);
    }

    /* Messy spacing is repaired. */
    check_normalized(" Hello ,world ! ", &NFC, "Hello, world!", "spacing repaired");
    check_normalized("( a ) \" b \" \" c \"", &NFC, "(a) \"b\" \"c\"", "brackets and alternating quotes");
    check_normalized("ÉCOLE , Straße .", &FOLD, "école, strasse.", "normalise with case folding");

    check_detok((const char *[]){"x"}, 0, "", "no tokens: empty string");
    check_detok((const char *[]){".", "a"}, 2, ". a", "leading closing punctuation: no crash, no leading space");
    check_detok((const char *[]){"a", "-", "b", "\xE2\x80\x94", "c"}, 5, "a - b \xE2\x80\x94 c",
                "dashes keep spaces on both sides");
    check_detok((const char *[]){"'", "a", "'", "'", "b", "'"}, 6, "'a' 'b'", "single quotes alternate");
    check_detok((const char *[]){"\"", "'", "a", "'", "\""}, 5, "\"'a'\"", "quote kinds counted separately");
    check_detok((const char *[]){"a", "..."}, 2, "a ...", "multi-char punctuation token is a word");
    check_detok((const char *[]){"a", "\xE2\x80\xA6", "b"}, 3, "a\xE2\x80\xA6 b", "ellipsis closes");
    check_detok((const char *[]){"x", "\xE2\x80\x9C", "y", "\xE2\x80\x9D", "z"}, 5,
                "x \xE2\x80\x9Cy\xE2\x80\x9D z", "curly quotes (Pi/Pf)");
    check_detok((const char *[]){"我", "爱", "你", "。", "他"}, 5, "我爱你。他", "no spaces between Han characters");
    check_detok((const char *[]){"カタ", "かな"}, 2, "カタかな", "Kana glues too");
    check_detok((const char *[]){"ภาษาไทย", "ง่าย"}, 2, "ภาษาไทย ง่าย", "Thai keeps the spaces between its phrases");
    check_detok((const char *[]){"我", "love", "东京"}, 3, "我 love 东京", "Han next to Latin keeps its space");
    check_detok((const char *[]){"한국어", "문장"}, 2, "한국어 문장", "Hangul is written with spaces");
    CHECK(text_is_unspaced(0x4E00) && text_is_unspaced(0x3042) && text_is_unspaced(0x30A2) &&
              text_is_unspaced(0x0E01) && text_is_unspaced(0x20000) && text_is_unspaced(0xFF0C),
          "Han, Hiragana, Katakana, Thai, extension B, full-width comma are unspaced");
    CHECK(!text_is_unspaced('a') && !text_is_unspaced(0xAC00) && !text_is_unspaced(0x0915) && !text_is_unspaced(-1),
          "Latin, Hangul, Devanagari and -1 are not");
}

int main(void)
{
    test_devanagari();
    test_normalisation();
    test_whitespace();
    test_punctuation();
    test_whitespace_only();
    test_invalid_utf8();
    test_detokenize();
    return check_report("test_text");
}
