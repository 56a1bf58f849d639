/* bagofwords.h — the classifier's bag-of-words term (model.bag_of_words): each
 * distinct unit of a sentence adds its own row of class scores to the logits.
 *
 *   logits_b += sum of w[v] over the distinct ids v among src[t, b], t < len[b]
 *
 * w is (V, C): a row of C scores per source unit. This is the linear bag-of-words model
 * (logistic regression over the set of a sentence's units, "binarized" as in Wang &
 * Manning 2012) beside the encoder's pooled vector: on a few hundred training sentences
 * a word seen a handful of times moves the scores by itself, which the encoder learns
 * slowly (docs/classification.md has the measurements).
 *
 * src is time-major (S, B) as Batch.src, len (B) the real lengths; positions t >= len[b]
 * are never read. scripts/reference/reference_classifier.py is the specification.
 */
#ifndef BAGOFWORDS_H
#define BAGOFWORDS_H

void bag_of_words_forward(float *logits, const float *w, const int *src, const int *len, int S, int B, int C);
/* dw (V, C) += dlogits_b for each sentence b and each distinct id in it. */
void bag_of_words_backward(float *dw, const float *dlogits, const int *src, const int *len, int S, int B, int C);
#endif
