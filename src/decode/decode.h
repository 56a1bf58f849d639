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
#include "decode/sample.h"  /* defines: Sampling */

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
    float *unit_logp;  /* when asked for (SearchSpec.want_scores): (len + finished) the
                        log-probability of each word as the search chose it, <eos> last
                        when emitted, summing to logprob; else NULL */
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

/* ---------------------------------------------------------------- a search with options */

/* What a search is asked for: which search, and the options that apply to all of them.
 *
 * Prefixes: sentence n's output begins with the words prefix[n][0..prefix_len[n]) (ids
 *   of the target vocabulary, none of them <pad>, <sos> or <eos>): the search feeds
 *   them one a step whatever the model prefers, counts their log-probabilities in the
 *   hypothesis's (they are log P(y | x)'s first factors) and goes on from there; limit
 *   counts them. Beam search keeps one beam while it follows the prefix. An empty
 *   prefix (prefix_len 0) changes nothing.
 * Forced decoding (force_end): the prefix is the whole output, <eos> follows it, and
 *   the hypothesis holds the log-probability of that given target (scoring pairs). Only
 *   with beam 0 and no sampling; limit[n] must be at least prefix_len[n] + 1.
 * Sampling (sample): instead of the likeliest word, each step draws one (sample.h)
 *   from the row's own stream, keyed by sentence[n] (the sentence's index in the whole
 *   input; NULL: n) and the sample's number. With beam 0 one sample per sentence, with
 *   beam K >= 1 K independent samples, of which the nbest best by score (as beam
 *   search ranks) are returned. A sample's logprob is the model's (untempered,
 *   over the whole vocabulary) log-probability of the words drawn.
 * want_scores: each hypothesis's unit_logp. */
typedef struct {
    int beam;                /* 0: greedy search (or one sample); K >= 1: beam search with K beams
                                (or K samples) */
    int nbest;               /* with beam K: hypotheses returned per sentence, 1..K (0: 1) */
    const int *limit;        /* (N) words at most per sentence, prefix included */
    float alpha;             /* beam search's length penalty (above) */
    int want_attn, want_scores;
    int *const *prefix;      /* (N) each sentence's prefix, or NULL: none */
    const int *prefix_len;   /* (N) */
    int force_end;           /* forced decoding: <eos> after the prefix */
    const Sampling *sample;  /* draw instead of search (sample.h), or NULL */
    const long *sentence;    /* (N) with sample: each sentence's index in the input, or NULL */
} SearchSpec;

/* The search spec asks for over the N sentences of src (batch_fill_source): out[n *
 * nbest + i], count[n] as beam_search gives them (nbest 1 for greedy search and a
 * single sample; count may be NULL when nbest is 1). greedy_search and beam_search
 * are this with no prefix, no sampling and no scores. */
void search_run(const Decoder *dec, const Batch *src, const SearchSpec *spec, Hypothesis *out, int *count);

/* Forced decoding: the log-probability of the given targets, tgt[n][0..tgt_len[n])
 * followed by <eos>, word by word (out[n].unit_logp, tgt_len[n] + 1 of them, and their
 * sum out[n].logprob = out[n].score; words the target, finished 1). */
void forced_search(const Decoder *dec, const Batch *src, int *const *tgt, const int *tgt_len, int want_attn,
                   Hypothesis *out);

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
/* search_run over the models. */
void decode_search(Model *const *m, RunState *const *rs, int n_models, const Batch *batch, const SearchSpec *spec,
                   Hypothesis *out, int *count);
#endif
