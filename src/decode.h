/* decode.h — turning source sentences into target sentences with a trained model.
 *
 * Greedy search: at each step feed the most probable word of the previous step, until
 * <eos> or the sentence's word limit. Beam search keeps the K best partial sentences
 * instead. Either way a batch of sentences (and all their beams) is decoded together,
 * one matrix product per step for all of them; each sentence stops on its own.
 *
 * A result is a Hypothesis: the words, whether it ended with <eos>, its score, and
 * optionally the attention weights of every step (for alignments, heatmaps and
 * <unk> replacement).
 */
#ifndef DECODE_H
#define DECODE_H

#include "batch.h" /* defines: Batch */
#include "model.h" /* defines: Model, RunState */

typedef struct {
    int *words;      /* len word ids, <eos> not included */
    int len;
    int finished;    /* 1 if it ended with <eos>, 0 if cut at the word limit */
    float score;     /* beam: log P(y | x) / lp(|y|) (see decode_beam); greedy: 0 */
    float *attn;     /* when asked for: (len + finished, src_len) attention weights of
                        each step, the last row the step that emitted <eos>; else NULL */
} Hypothesis;

void hypothesis_free(Hypothesis *h);

/* batch holds B sources (batch_fill_source); sentence b may emit at most limit[b]
 * words. out[b] receives its translation (with attention if want_attn). rs grows as
 * needed (RUN_DECODE mode). */
void decode_greedy(Model *m, RunState *rs, const Batch *batch, const int *limit, int want_attn, Hypothesis *out);

/* Beam search for N source sentences src[n] (src_len[n] ids) with K beams each; all
 * N*K beams decode together as one batch. Each step extends every live beam by every
 * word (<pad> and <sos> excluded) and keeps a sentence's K best by total
 * log-probability; a beam that emits <eos> is finished. A sentence's search stops when
 * K of its beams have finished or after limit[n] words. Hypotheses are ranked by the
 * length-normalised score
 *     log P(y | x) / lp(|y|),   lp(n) = ((5 + n) / 6)^alpha   (GNMT; n counts <eos>)
 * (alpha = 0: raw log-probability; alpha = LENGTH_AVERAGE: lp(n) = n, the average
 * log-probability per word). out[n * nbest + i] receives sentence n's i-th best
 * finished hypothesis, count[n] how many there are (1 <= count[n] <= nbest <= K): if
 * fewer than nbest finished, the best live beams cut at the limit make up the rest. */
#define LENGTH_AVERAGE (-1.0f)
void decode_beam(Model *m, RunState *rs, int *const *src, const int *src_len, int N, int K, int nbest,
                 const int *limit, float alpha, int want_attn, Hypothesis *out, int *count);
#endif
