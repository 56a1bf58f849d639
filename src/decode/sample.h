/* sample.h — drawing the next word at random from a model's distribution (nmt translate
 * --sample K, --sample-p P, --temperature T, --seed S), for back-translation and
 * diverse outputs.
 *
 * A logits row (V) becomes the distribution the draw is made from in three steps, as
 * fairseq, CTranslate2 and Hugging Face's samplers make it:
 *   1. temperature: p(w) = softmax(logits / T)(w) over every word but <pad> and <sos>
 *      (the searches never emit those); T < 1 sharpens it, T > 1 flattens it;
 *   2. top-k (k > 0): only the k most probable words stay (ties: the lower id first);
 *   3. nucleus (p < 1): of those, only the smallest set of the most probable whose
 *      probability, renormalised over step 2's words, reaches p (the word that crosses
 *      p is in it);
 * and the words left, the support, are renormalised. The draw walks the support in id
 * order (not in probability order), so that two nearly equal logits that swap places
 * between two runs (another batch size, another BLAS thread count) change nothing unless
 * one of them crosses the edge of the support.
 *
 * Each sample has its own random stream (sample_stream), keyed by the seed, the
 * sentence's index in the whole input and the sample's number: not by its place in a
 * batch, so that the same seed gives the same output whatever the batch size, the
 * thread count, or the worker that translates the sentence.
 *
 * Example (a row of V = 7 logits; <pad> and <sos> are ids 0 and 2):
 *   Sampling s = {.top_k = 2, .top_p = 1.0f, .temperature = 1.0f, .seed = 7};
 *   SampleScratch sc = {0};
 *   Rng rng;
 *   sample_stream(&rng, s.seed, 12, 0);          // sentence 12 of the input, sample 0
 *   int w = sample_word(logits, 7, &s, &rng, &sc);  // one of the two likeliest words
 *   sample_scratch_free(&sc);
 */
#ifndef SAMPLE_H
#define SAMPLE_H

#include <stdint.h>

#include "base/util.h" /* defines: Rng */

typedef struct {
    int top_k;          /* the k most probable words only; 0: every word */
    float top_p;        /* the nucleus: 0 < p <= 1; 1: no cut */
    float temperature;  /* > 0; 1: the model's own distribution */
    uint64_t seed;
} Sampling;

/* One candidate word of a row. */
typedef struct {
    float logit;
    int id;
} SampleEntry;

/* Room for one row's support (V entries each), grown as needed: zero-initialise, free
 * with sample_scratch_free. After sample_support: the support's words in ids[0..n),
 * their probabilities in prob[0..n). */
typedef struct {
    SampleEntry *entry;
    int *ids;
    double *prob;
    int cap;
} SampleScratch;

void sample_scratch_free(SampleScratch *sc);

/* The support of one logits row (V) under s (above): its n words in ascending id order
 * in sc->ids[0..n) and their probabilities, summing to 1, in sc->prob[0..n). Returns n
 * (>= 1 when V > 3). */
int sample_support(const float *logits, int V, const Sampling *s, SampleScratch *sc);

/* One draw from the support: the word whose share of [0, 1), the support in id order,
 * holds the next uniform number of rng. */
int sample_word(const float *logits, int V, const Sampling *s, Rng *rng, SampleScratch *sc);

/* rng set to the stream of sample k (0, 1, ...) of the sentence with index `sentence`
 * (0-based, counted over the whole input) under `seed`. */
void sample_stream(Rng *rng, uint64_t seed, long sentence, int k);
#endif
