/* fuzz_tokenize.c — libFuzzer target: text_tokenize and text_detokenize (src/text/text.c).
 *
 * Every input is tokenised under all four TextOptions (case folding on/off, NFC/NFKC),
 * and the result must keep the promises of text.h:
 *   - it succeeds exactly when the bytes are valid UTF-8 (checked by fuzz.h's own
 *     decoder); on failure the list is empty and the message gives the offset of the
 *     first bad sequence;
 *   - tokens are non-empty valid UTF-8 with no whitespace (text_is_space), no NUL and
 *     no U+FEFF, and together they are exactly the normalised line minus its
 *     whitespace and BOMs (utf8proc_map with the same options): nothing lost, nothing
 *     invented;
 *   - text_detokenize joins the tokens in order with single spaces or nothing between
 *     them, and text_normalize_line gives the same string;
 *   - the detokenised sentence tokenises again to the same characters (token
 *     boundaries aside): what nmt writes, nmt reads back.
 * The input is also split at newlines into arbitrary "tokens" (invalid UTF-8, empty
 * ones) for text_detokenize alone, which must join them without reading or writing
 * out of bounds.
 *
 * Built and run by `make fuzz` (scripts/ci/fuzz.sh); seeds in tests/fuzz/corpus/tokenize/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "fuzz.h"  // defines: FUZZ_ASSERT, fuzz_utf8_error
#include "text/text.h"  // defines: text_tokenize, text_detokenize, text_normalize_line, text_is_space

/* The line as text.h describes it after step 1 (U+FEFF dropped, then NFC/NFKC and
 * case folding), minus the whitespace that steps 2 and 3 remove: malloc'd,
 * NUL-terminated; *len its byte count. */
static char *normalized_without_space(const char *s, size_t n, const TextOptions *opt, size_t *len)
{
    char *kept = malloc(n + 1);
    size_t nk = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 2 < n && !memcmp(s + i, "\xEF\xBB\xBF", 3)) i += 2;
        else kept[nk++] = s[i];
    }
    kept[nk] = '\0';
    utf8proc_option_t flags = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    if (opt->nfkc) flags |= UTF8PROC_COMPAT;
    if (opt->lowercase) flags |= UTF8PROC_CASEFOLD;
    utf8proc_uint8_t *norm = NULL;
    utf8proc_ssize_t got = utf8proc_map((const utf8proc_uint8_t *)kept, (utf8proc_ssize_t)nk, &norm, flags);
    free(kept);
    FUZZ_ASSERT(got >= 0, "utf8proc_map normalises valid UTF-8");
    char *out = malloc((size_t)got + 1);
    size_t k = 0;
    for (utf8proc_ssize_t at = 0; at < got;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate(norm + at, got - at, &cp);
        FUZZ_ASSERT(step > 0, "utf8proc_map output is valid UTF-8");
        if (!text_is_space(cp)) {
            memcpy(out + k, norm + at, (size_t)step);
            k += (size_t)step;
        }
        at += step;
    }
    out[k] = '\0';
    *len = k;
    free(norm);
    return out;
}

/* All tokens concatenated with nothing between them (malloc'd). */
static char *concat(char *const *tokens, int n, size_t *len)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += strlen(tokens[i]);
    char *out = malloc(total + 1), *p = out;
    for (int i = 0; i < n; i++) {
        size_t tl = strlen(tokens[i]);
        memcpy(p, tokens[i], tl);
        p += tl;
    }
    *p = '\0';
    *len = total;
    return out;
}

/* 1 if s is tokens[0] sep tokens[1] sep ... with each sep "" or " ". Tokens may
 * themselves begin with a space (detokenize_any), so this tracks every offset in s
 * that a prefix of the tokens can end at. */
static int is_joined(const char *s, char *const *tokens, int n)
{
    size_t len = strlen(s);
    unsigned char *at = calloc(len + 1, 1), *next = calloc(len + 1, 1);
    at[0] = 1;
    for (int i = 0; i < n; i++) {
        size_t tl = strlen(tokens[i]);
        memset(next, 0, len + 1);
        for (size_t p = 0; p <= len; p++) {
            if (!at[p]) continue;
            if (p + tl <= len && !memcmp(s + p, tokens[i], tl)) next[p + tl] = 1;
            if (i > 0 && p + 1 + tl <= len && s[p] == ' ' && !memcmp(s + p + 1, tokens[i], tl)) next[p + 1 + tl] = 1;
        }
        unsigned char *swap = at;
        at = next;
        next = swap;
    }
    int ok = at[len];
    free(at);
    free(next);
    return ok;
}

static void check_tokens(const TokenList *t)
{
    FUZZ_ASSERT(t->n >= 0 && (t->n == 0 || t->tokens), "a token list of n >= 0 tokens");
    for (int i = 0; i < t->n; i++) {
        const char *tok = t->tokens[i];
        size_t tl = strlen(tok);
        FUZZ_ASSERT(tl > 0, "no empty token");
        FUZZ_ASSERT(fuzz_utf8_error(tok, tl) < 0, "tokens are valid UTF-8");
        for (size_t at = 0; at < tl;) {
            utf8proc_int32_t cp;
            utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)tok + at, (utf8proc_ssize_t)(tl - at), &cp);
            FUZZ_ASSERT(step > 0, "tokens decode");
            FUZZ_ASSERT(!text_is_space(cp), "no whitespace inside a token");
            FUZZ_ASSERT(cp != 0xFEFF, "no U+FEFF inside a token");
            at += (size_t)step;
        }
    }
}

static void round_trip(const char *line, size_t len, const TextOptions *opt)
{
    TokenList t = {(char **)1, 7};   /* garbage: text_tokenize must overwrite it */
    Error err = {{0}};
    int rc = text_tokenize(line, len, opt, &t, &err);
    long bad = fuzz_utf8_error(line, len);
    if (bad >= 0) {
        FUZZ_ASSERT(rc == -1, "invalid UTF-8 is refused");
        FUZZ_ASSERT(t.n == 0 && t.tokens == NULL, "the list is left empty on failure");
        char want[64];
        snprintf(want, sizeof want, "invalid UTF-8 at byte %ld", bad);
        FUZZ_ASSERT(!strcmp(err.msg, want), "the message gives the offset of the first bad sequence");
        FUZZ_ASSERT(text_normalize_line(line, len, opt) == NULL, "text_normalize_line: NULL on invalid UTF-8");
        token_list_free(&t);
        return;
    }
    FUZZ_ASSERT(rc == 0, "valid UTF-8 tokenises");
    check_tokens(&t);

    size_t want_len, got_len;
    char *want = normalized_without_space(line, len, opt, &want_len);
    char *got = concat(t.tokens, t.n, &got_len);
    FUZZ_ASSERT(got_len == want_len && !memcmp(got, want, got_len),
                "the tokens are the normalised line without its whitespace");

    char *sentence = text_detokenize(t.tokens, t.n);
    FUZZ_ASSERT(sentence != NULL, "text_detokenize returns a string");
    FUZZ_ASSERT(is_joined(sentence, t.tokens, t.n), "detokenising joins the tokens with single spaces or nothing");
    char *normalized = text_normalize_line(line, len, opt);
    FUZZ_ASSERT(normalized && !strcmp(normalized, sentence), "text_normalize_line = detokenize(tokenize)");

    /* Read back what was written: the same characters, whatever the boundaries. */
    TokenList again;
    FUZZ_ASSERT(text_tokenize(sentence, strlen(sentence), opt, &again, &err) == 0, "the sentence tokenises again");
    size_t again_len;
    char *again_cat = concat(again.tokens, again.n, &again_len);
    FUZZ_ASSERT(again_len == got_len && !memcmp(again_cat, got, got_len),
                "the detokenised sentence tokenises to the same characters");

    free(again_cat);
    token_list_free(&again);
    free(normalized);
    free(sentence);
    free(got);
    free(want);
    token_list_free(&t);
}

/* The input cut at newlines into up to 64 arbitrary tokens. */
static void detokenize_any(const uint8_t *data, size_t size)
{
    char *copy = malloc(size + 1);
    memcpy(copy, data, size);
    copy[size] = '\0';
    char *tokens[64];
    int n = 0;
    for (char *p = copy; n < 64;) {
        tokens[n++] = p;
        char *nl = memchr(p, '\n', (size_t)(copy + size - p));
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    char *s = text_detokenize(tokens, n);
    FUZZ_ASSERT(is_joined(s, tokens, n), "any tokens: joined with single spaces or nothing");
    free(s);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* libFuzzer's buffer has exactly `size` bytes: a read past it is an ASan report. */
    for (int o = 0; o < 4; o++) {
        TextOptions opt = {.lowercase = o & 1, .nfkc = o >> 1};
        round_trip((const char *)data, size, &opt);
    }
    detokenize_any(data, size);
    return 0;
}
