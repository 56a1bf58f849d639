/* decode.h — turning source sentences into target sentences with a trained model.
 *
 * Greedy search: at each step feed the most probable word of the previous step, until
 * <eos> or the sentence's word limit. Beam search keeps the K best partial sentences
 * instead. Either way a batch of sentences (and all their beams) is decoded together,
 * one matrix product per step for all of them; each sentence stops on its own.
 *
 * The searches do not know the model: they drive a Decoder (models/decoder.h), a
 * model seen as R rows (partial sentences) that each advance by one word per step.
 * Each translation family implements it (its ModelFamily.decoder: the recurrent
 * model's, the Transformer's with per-layer key/value caches), and a test's
 * hand-written table is another; decode_greedy and decode_beam take the models and
 * ask their families for their Decoders.
 *
 * A result is a Hypothesis: the words, whether it ended with <eos>, its score, and
 * optionally the attention weights of every step (for alignments, heatmaps and
 * <unk> replacement).
 */
#ifndef DECODE_H
#define DECODE_H

#include "data/batch.h"     /* defines: Batch */
#include "models/decoder.h" /* defines: Decoder, best_word */
#include "models/model.h"   /* defines: Model, RunState, model_family */

/* ---------------------------------------------------------------- results */

typedef struct {
    int *words;      /* len word ids, <eos> not included */
    int len;
    int finished;    /* 1 if it ended with <eos>, 0 if cut at the word limit */
    float score;     /* beam: log P(y | x) / lp(|y|) (see beam_search); greedy:
                        log P(y | x), <eos> included when emitted, no length penalty */
    float logprob;   /* log P(y | x), <eos> included when emitted: the score before the
                        length penalty (greedy: the same as score) */
    float *attn;     /* when asked for: (len + finished, src_len) attention weights of
                        each step, the last row the step that emitted <eos>; else NULL */
} Hypothesis;

void hypothesis_free(Hypothesis *h);

/* ---------------------------------------------------------------- the searches */

/* Greedy search for the B sentences of src (batch_fill_source); sentence b may emit at
 * most limit[b] words. Each step takes every row's most likely word (best_word: never
 * <pad> or <sos>; on a tie the lowest id). out[b] receives its translation (with
 * attention if want_attn). */
void greedy_search(const Decoder *dec, const Batch *src, const int *limit, int want_attn, Hypothesis *out);

/* Beam search for the N sentences of src (batch_fill_source) with K beams each; all
 * N*K beams decode together as one batch. Each step extends every live beam by every
 * word (<pad> and <sos> excluded) and keeps a sentence's K best by total
 * log-probability; a beam that emits <eos> is finished. A sentence's search stops when
 * K of its beams have finished or after limit[n] words (limit < 1 counts as 1).
 * Hypotheses are ranked by the length-normalised score
 *     log P(y | x) / lp(|y|),   lp(n) = ((5 + n) / 6)^alpha   (GNMT; n counts <eos>)
 * (alpha = 0: raw log-probability; alpha = LENGTH_AVERAGE: lp(n) = n, the average
 * log-probability per word). out[n * nbest + i] receives sentence n's i-th best
 * finished hypothesis, count[n] how many there are (1 <= count[n] <= nbest <= K): if
 * fewer than nbest finished, the best live beams cut at the limit make up the rest.
 *
 * Ties are broken deterministically. Among a step's candidates with equal total
 * log-probability, the one from the better-ranked live beam comes first, then the
 * lower word id; the live beams keep that order (beam 0 is the best). Among finished
 * hypotheses with equal scores, the one that finished first (earlier step, then
 * earlier candidate) ranks first. */
#define LENGTH_AVERAGE (-1.0f)
void beam_search(const Decoder *dec, const Batch *src, int K, int nbest, const int *limit, float alpha,
                 int want_attn, Hypothesis *out, int *count);

/* ---------------------------------------------------------------- ensembles */

/* A Decoder over n member Decoders of one target vocabulary, for ensemble decoding:
 * every call goes to each member, and a step's next-word distribution is the mean of
 * the members' probabilities, p(w) = (1/n) sum_i softmax(logits_i)(w), returned as
 * log p (so the searches' log-softmax leaves it as it is; a probability below 1e-30
 * counts as 1e-30); the attention weights are the members' mean. The members keep
 * their own states (and may be different architectures). e holds the buffers:
 * zero-initialise it, ensemble_free it after the search. */
typedef struct {
    const Decoder *members;
    int n;
    float *logp, *attn;  /* (R, V), (R, S) */
    long logp_cap, attn_cap;
    int R, S;
} Ensemble;

Decoder ensemble_decoder(Ensemble *e, const Decoder *members, int n);
void ensemble_free(Ensemble *e);

/* ---------------------------------------------------------------- searches over models */

/* The searches over n_models translation models (model.h) of one target vocabulary,
 * each with its own RunState, each decoding through its family's Decoder: one model,
 * or an ensemble of them (ensemble_decoder; the members may be of different
 * families). batch holds B sources (batch_fill_source); each rs grows as needed
 * (RUN_DECODE mode). */
void decode_greedy(Model *const *m, RunState *const *rs, int n_models, const Batch *batch, const int *limit, int want_attn,
                   Hypothesis *out);
/* N source sentences src[n] (src_len[n] ids); the other arguments as for beam_search. */
void decode_beam(Model *const *m, RunState *const *rs, int n_models, int *const *src, const int *src_len, int N, int K,
                 int nbest, const int *limit, float alpha, int want_attn, Hypothesis *out, int *count);
#endif
