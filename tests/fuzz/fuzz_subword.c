/* fuzz_subword.c — libFuzzer target: byte-pair encoding and subword joining
 * (src/text/bpe_core.c, bpe_learn.c, bpe_apply.c, bpe_codes.c).
 *
 * The first byte picks what the rest is:
 *   even: codes text for bpe_from_text. A refusal names the source and leaves the Bpe
 *         empty; accepted codes write out (bpe_to_text) and read back to the same
 *         merges, and segment a few fixed words into pieces that join back to them.
 *   odd:  a line of text. It is tokenised (text.h; invalid UTF-8 is simply refused
 *         there), merges are learned from its own tokens (as many as the byte after
 *         the first says), and the promises of subword.h must hold for those tokens:
 *         with the learned merges, with none, and in character mode every piece is
 *         non-empty valid UTF-8 without "</w>", every piece but the last of a token
 *         ends in "@@" and the last does not, and subword_join gives the tokens back;
 *         the learned merges write out and read back unchanged.
 *
 * Built and run by `make fuzz` (scripts/ci/fuzz.sh); seeds in tests/fuzz/corpus/subword/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"    // defines: FUZZ_ASSERT, fuzz_utf8_error
#include "text/subword.h" // defines: Bpe, bpe_learn, subword_segment, subword_join, bpe_to_text, bpe_from_text
#include "text/text.h"    // defines: text_tokenize, TokenList

static int ends_with(const char *s, const char *end)
{
    size_t n = strlen(s), m = strlen(end);
    return n >= m && !memcmp(s + n - m, end, m);
}

/* Segments tokens with b (NULL: characters), checks the pieces, joins them back. */
static void check_pieces(const Bpe *b, char *const *tokens, int n)
{
    TokenList pieces, back;
    subword_segment(b, tokens, n, &pieces);
    int token = 0;
    for (int i = 0; i < pieces.n; i++) {
        const char *p = pieces.tokens[i];
        FUZZ_ASSERT(p[0] && fuzz_utf8_error(p, strlen(p)) < 0, "a piece is non-empty valid UTF-8");
        FUZZ_ASSERT(!strstr(p, "</w>"), "no end-of-word marker in a piece");
        FUZZ_ASSERT(strcmp(p, "@@") != 0, "no piece is the joiner alone");
        if (!ends_with(p, "@@")) token++;
    }
    FUZZ_ASSERT(token == n, "one piece without @@ per token: the last of each");
    subword_join(pieces.tokens, pieces.n, &back);
    FUZZ_ASSERT(back.n == n, "joining gives as many words as were segmented");
    for (int i = 0; i < n; i++)
        FUZZ_ASSERT(!strcmp(back.tokens[i], tokens[i]), "joining gives the words back");
    token_list_free(&pieces);
    token_list_free(&back);
}

/* Codes text of b, read back, written again: the same text. */
static void check_codes_round_trip(const Bpe *b)
{
    char *text = bpe_to_text(b);
    Bpe again;
    Error err;
    FUZZ_ASSERT(bpe_from_text(&again, text, strlen(text), "round trip", &err) == 0, "written codes read back");
    FUZZ_ASSERT(again.n == b->n, "the same number of merges");
    char *text2 = bpe_to_text(&again);
    FUZZ_ASSERT(!strcmp(text, text2), "the same merges in the same order");
    free(text);
    free(text2);
    bpe_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const char *rest = (const char *)data + 1;
    size_t n = size - 1;
    if (data[0] % 2 == 0) {
        Bpe b;
        Error err;
        if (bpe_from_text(&b, rest, n, "codes", &err) != 0) {
            FUZZ_ASSERT(!strncmp(err.msg, "codes:", 6), "a refusal names the source and line");
            FUZZ_ASSERT(b.n == 0 && b.left == NULL && b.index.slots == NULL, "a refused Bpe is empty");
            return 0;
        }
        check_codes_round_trip(&b);
        char *words[] = {"lower", "newest", "नमस्ते", "我爱Python", "a", "ab"};
        check_pieces(&b, words, 6);
        bpe_free(&b);
        return 0;
    }
    int merges = data[1];
    rest++;
    n--;
    TextOptions opt = {0};
    TokenList tokens;
    Error err;
    if (text_tokenize(rest, n, &opt, &tokens, &err) != 0) return 0;
    long *counts = malloc(sizeof(long) * (tokens.n ? tokens.n : 1));
    for (int i = 0; i < tokens.n; i++)
        counts[i] = 1 + i % 3;
    Bpe b, none = {0};
    bpe_learn(&b, tokens.tokens, counts, tokens.n, merges);
    FUZZ_ASSERT(b.n <= merges, "at most the merges asked for");
    check_pieces(&b, tokens.tokens, tokens.n);
    check_pieces(&none, tokens.tokens, tokens.n);
    check_pieces(NULL, tokens.tokens, tokens.n);
    check_codes_round_trip(&b);
    bpe_free(&b);
    free(counts);
    token_list_free(&tokens);
    return 0;
}
