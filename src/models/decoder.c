/* decoder.c — what the searches and the models share: closing a Decoder, and the
 * greedy choice of a word (decoder.h). */
#include "models/decoder.h"

#include <math.h>
#include <string.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "text/vocab.h"       /* defines: VOCAB_UNK, VOCAB_EOS */

void decoder_close(Decoder *dec)
{
    if (dec->close) dec->close(dec->ctx);
    memset(dec, 0, sizeof *dec);
}

/* At the CPU's vector width (KERNEL_CLONES): a maximum is the same in any order. */
KERNEL_CLONES
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
