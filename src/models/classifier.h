/* classifier.h — the sentence classifier family (model.type "classifier", issue 18):
 * the recurrent encoder (rnn.h), a pooling layer (pooling.h) and a softmax over the
 * label set.
 *
 *   h       = the recurrent encoder over src_emb[x]       (S, B, H), rnn_encoder.c
 *   pooled  = attention, last, mean or max pooling of h   (B, H), pooling.h
 *   logits  = pooled out_w^T + out_b                      (B, C)
 *   loss    = cross-entropy of each example's class (weighted by rs->class_weight in
 *             training; label-smoothed), summed over the batch
 *
 * The labels are the target vocabulary after its four reserved ids (model_classes):
 * class c is label id c + VOCAB_SPECIALS. scripts/reference/reference_classifier.py is the same
 * model in PyTorch, and the specification. The family's operations are all in its
 * table: the tests and generic code reach it through model.h.
 */
#ifndef CLASSIFIER_H
#define CLASSIFIER_H

#include "models/model.h" /* defines: ModelFamily */

extern const ModelFamily classifier_family;

#endif
