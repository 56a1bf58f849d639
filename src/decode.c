#include "decode.h"

#include <stdlib.h>
#include <string.h>

#include "linalg.h" /* defines: matmul_bias */
#include "util.h"   /* defines: xmalloc */
#include "vocab.h"  /* defines: VOCAB_SOS, VOCAB_EOS */

void decode_greedy(Model *m, RunState *rs, const Batch *batch, int max_len, int **out, int *out_len)
{
    int B = batch->B, H = m->dims.hidden, V = m->dims.tgt_vocab;
    runstate_ensure(rs, &m->dims, RUN_DECODE, B, batch->S, max_len > 0 ? max_len : 1);
    model_encode(m, rs, batch);
    int *prev = xmalloc(sizeof(int) * B), *done = xcalloc(B, sizeof(int));
    for (int b = 0; b < B; b++) {
        prev[b] = VOCAB_SOS;
        out_len[b] = 0;
    }
    int remaining = B;
    /* Step t emits word t+1; a sentence without <eos> by max_len words is cut there. */
    for (int t = 0; t < max_len && remaining > 0; t++) {
        model_decoder_input(m, rs, t, prev, B);
        model_decoder_step(m, rs, batch, t);
        float *logits = rs->logits; /* (B, V) for this step */
        matmul_bias(logits, V, rs->dec_h + (long)(t + 1) * B * H, H, m->params.out_w, H, m->params.out_b, B, V, H);
        for (int b = 0; b < B; b++) {
            const float *row = logits + (long)b * V;
            /* <pad> and <sos> are never predicted. */
            int best = VOCAB_UNK;
            for (int k = VOCAB_UNK + 1; k < V; k++)
                if (k != VOCAB_SOS && row[k] > row[best]) best = k;
            prev[b] = best;
            if (done[b]) continue;
            if (best == VOCAB_EOS) {
                done[b] = 1;
                remaining--;
            } else {
                out[b][out_len[b]++] = best;
            }
        }
    }
    free(prev);
    free(done);
}
