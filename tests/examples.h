/* examples.h — random training examples for the tests that run training steps on a
 * model built in memory (test_parallel.c, test_rnn_packs.c).
 *
 *   Example *ex = random_examples(11, V, 6, 3);   // 11 pairs, ids 4 .. V-1, 1 to 6 long
 *   ...
 *   examples_free(ex, 11);
 */
#ifndef EXAMPLES_H
#define EXAMPLES_H
#include <stdint.h>

#include "base/util.h"    /* defines: Rng, rng_seed, rng_below, xcalloc, xmalloc */
#include "data/corpus.h"  /* defines: Example */

/* n pairs whose sources and targets are 1 to max_len ids drawn from 4 .. V-1 (no
 * special ids), from a stream seeded with seed. */
static inline Example *random_examples(int n, int V, int max_len, uint64_t seed)
{
    Example *ex = xcalloc(n, sizeof(Example));
    Rng rng;
    rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) {
        ex[i].src_len = 1 + (int)rng_below(&rng, max_len);
        ex[i].tgt_len = 1 + (int)rng_below(&rng, max_len);
        ex[i].src = xmalloc(sizeof(int) * ex[i].src_len);
        ex[i].tgt = xmalloc(sizeof(int) * ex[i].tgt_len);
        for (int j = 0; j < ex[i].src_len; j++)
            ex[i].src[j] = 4 + (int)rng_below(&rng, V - 4);
        for (int j = 0; j < ex[i].tgt_len; j++)
            ex[i].tgt[j] = 4 + (int)rng_below(&rng, V - 4);
    }
    return ex;
}
#endif
