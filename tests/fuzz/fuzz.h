/* fuzz.h — what the libFuzzer targets in tests/fuzz/ share: a checked assertion and
 * helpers that restate, independently of src/, what the code under test promises.
 *
 *   FUZZ_ASSERT(cond, "what")   on failure prints "fuzz: broken promise: what (file:line)"
 *                               and aborts, which libFuzzer reports as a crash and saves
 *                               the input for
 *   fuzz_utf8_error(s, n)       offset of the first invalid UTF-8 sequence, -1 if none
 *   fuzz_memmem(h, hn, n, nn)   1 if the nn bytes of n occur in the hn bytes of h
 *
 * The UTF-8 rules are RFC 3629's (no overlong forms, no surrogates, nothing above
 * U+10FFFF), written out here rather than asked of utf8proc, so that a target checks
 * the code under test against a second opinion.
 */
#ifndef FUZZ_H
#define FUZZ_H
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond, what) do { \
    if (!(cond)) { \
        fprintf(stderr, "fuzz: broken promise: %s (%s:%d)\n", what, __FILE__, __LINE__); \
        abort(); \
    } \
} while (0)

/* Length of the valid sequence at s[0..n), or 0 if it is not one. */
static inline size_t fuzz_utf8_step(const unsigned char *s, size_t n)
{
    unsigned char b = s[0];
    size_t len;
    unsigned long cp, min;
    if (b < 0x80) return 1;
    else if (b >= 0xC2 && b <= 0xDF) { len = 2; cp = b & 0x1F; min = 0x80; }
    else if (b >= 0xE0 && b <= 0xEF) { len = 3; cp = b & 0x0F; min = 0x800; }
    else if (b >= 0xF0 && b <= 0xF4) { len = 4; cp = b & 0x07; min = 0x10000; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

static inline long fuzz_utf8_error(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t at = 0; at < n;) {
        size_t step = fuzz_utf8_step(u + at, n - at);
        if (!step) return (long)at;
        at += step;
    }
    return -1;
}

static inline int fuzz_memmem(const void *hay, size_t hn, const void *needle, size_t nn)
{
    const char *h = hay;
    if (nn == 0) return 1;
    for (size_t i = 0; i + nn <= hn; i++)
        if (h[i] == *(const char *)needle && !memcmp(h + i, needle, nn)) return 1;
    return 0;
}
#endif
