/* tokens.h — a token list against the tokens it must hold, for the tests of the text
 * layer (test_subword.c, test_segment.c).
 *
 *   list_is(&list, LIST("a", "b"))   1 if the list is exactly a, b; prints both otherwise
 */
#ifndef TOKENS_H
#define TOKENS_H
#include <stdio.h>
#include <string.h>

#include "text/text.h"  /* defines: TokenList */

/* The list equals the NULL-terminated `want`; prints both otherwise. */
static inline int list_is(const TokenList *t, const char *const *want)
{
    int n = 0;
    while (want[n])
        n++;
    int ok = t->n == n;
    for (int i = 0; ok && i < n; i++)
        ok = strcmp(t->tokens[i], want[i]) == 0;
    if (!ok) {
        fprintf(stderr, "  got %d:", t->n);
        for (int i = 0; i < t->n; i++)
            fprintf(stderr, " [%s]", t->tokens[i]);
        fprintf(stderr, "\n  want %d:", n);
        for (int i = 0; i < n; i++)
            fprintf(stderr, " [%s]", want[i]);
        fprintf(stderr, "\n");
    }
    return ok;
}
#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})
#endif
