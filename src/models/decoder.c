/* decoder.c — what the searches and the models share: the greedy choice of a word
 * (decoder.h). */
#include "models/decoder.h"

#include <math.h>

#include "text/vocab.h" /* defines: VOCAB_UNK, VOCAB_EOS */

int best_word(const float *logits, int V)
{
    float maxv = -INFINITY;
#pragma omp simd reduction(max : maxv)
    for (int k = VOCAB_EOS; k < V; k++)
        maxv = logits[k] > maxv ? logits[k] : maxv;
    if (logits[VOCAB_UNK] >= maxv) return VOCAB_UNK;
    int best = VOCAB_EOS;
    while (best < V - 1 && logits[best] != maxv)
        best++;
    return best;
}
