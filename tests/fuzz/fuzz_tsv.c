/* fuzz_tsv.c — libFuzzer target: tsv_parse on arbitrary bytes (src/data/tsv.c).
 *
 * The parser gets exactly the fuzzer's bytes (no terminator, so AddressSanitizer sees
 * any read past the end) and must keep the promises of tsv.h:
 *   - it returns 0 and accounts for every line: pairs + malformed + blank = lines;
 *   - every kept pair has a non-empty source and target, valid UTF-8, no tab, newline
 *     or NUL, no leading or trailing ASCII whitespace, and a line number that grows;
 *   - the first skipped lines are kept in order, each with one of the five reasons;
 *   - tsv_describe_skipped never writes past its buffer, whatever its size.
 * A broken promise aborts, and libFuzzer saves the input.
 *
 * Built and run by `make fuzz` (scripts/ci/fuzz.sh); seeds in tests/fuzz/corpus/tsv/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"  // defines: FUZZ_ASSERT, fuzz_utf8_error
#include "data/tsv.h"   // defines: tsv_parse, tsv_free, tsv_describe_skipped

static int is_trimmed_space(char ch) { return ch == ' ' || ch == '\r' || ch == '\v' || ch == '\f'; }

static int known_reason(const char *r)
{
    static const char *const reasons[] = {"invalid UTF-8", "NUL byte", "no tab", "empty source", "empty target"};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (r == reasons[i] || (r && !strcmp(r, reasons[i]))) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *buf = (const char *)data;
    TsvCorpus c;
    FUZZ_ASSERT(tsv_parse(buf, size, &c) == 0, "tsv_parse returns 0");

    /* Lines as tsv.h defines them: after a leading BOM, LF-terminated, the last one
     * possibly unterminated. */
    size_t at = size >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3) ? 3 : 0;
    long lines = 0;
    for (size_t i = at; i < size; i++) lines += buf[i] == '\n';
    lines += size > at && buf[size - 1] != '\n';
    FUZZ_ASSERT(c.n >= 0 && c.n_malformed >= 0 && c.n_blank >= 0, "counts are non-negative");
    FUZZ_ASSERT((long)c.n + c.n_malformed + c.n_blank == lines, "every line is a pair, malformed or blank");

    int prev_line = 0;
    for (int i = 0; i < c.n; i++) {
        const TsvPair *p = &c.pairs[i];
        FUZZ_ASSERT(p->line > prev_line && p->line <= lines, "pair line numbers grow within the file");
        prev_line = p->line;
        const char *side[2] = {p->src, p->tgt};
        for (int s = 0; s < 2; s++) {
            size_t n = strlen(side[s]);
            FUZZ_ASSERT(n > 0, "kept pairs have both sides");
            FUZZ_ASSERT(!memchr(side[s], '\t', n) && !memchr(side[s], '\n', n), "no tab or newline in a side");
            FUZZ_ASSERT(!is_trimmed_space(side[s][0]) && !is_trimmed_space(side[s][n - 1]), "sides are trimmed");
            FUZZ_ASSERT(fuzz_utf8_error(side[s], n) < 0, "sides are valid UTF-8");
            /* The side's bytes come from the input, on the pair's line. */
            FUZZ_ASSERT(fuzz_memmem(buf, size, side[s], n), "sides are copied from the input");
        }
    }
    int kept = c.n_malformed < TSV_BAD_LINES_KEPT ? c.n_malformed : TSV_BAD_LINES_KEPT;
    for (int i = 0; i < kept; i++) {
        FUZZ_ASSERT(c.bad_lines[i] >= 1 && c.bad_lines[i] <= lines, "bad line numbers within the file");
        FUZZ_ASSERT(i == 0 || c.bad_lines[i] > c.bad_lines[i - 1], "bad lines kept in order");
        FUZZ_ASSERT(known_reason(c.bad_reasons[i]), "each bad line has one of the documented reasons");
    }

    /* Every buffer size, from none to roomy: the description must stay inside. */
    static const size_t sizes[] = {0, 1, 2, 13, 64, 512};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        char *out = malloc(sizes[k] ? sizes[k] : 1);
        if (sizes[k]) memset(out, 'x', sizes[k]);
        tsv_describe_skipped(&c, "fuzz.tsv", out, sizes[k]);
        if (sizes[k])
            FUZZ_ASSERT(memchr(out, '\0', sizes[k]) != NULL, "description is NUL-terminated inside the buffer");
        if (sizes[k] >= 2)
            FUZZ_ASSERT((out[0] == '\0') == (c.n_malformed == 0), "a description exactly when lines were skipped");
        free(out);
    }
    tsv_free(&c);
    return 0;
}
