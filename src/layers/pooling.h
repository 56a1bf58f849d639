/* pooling.h — one vector per sentence from the encoder's states: the classifier's
 * (model.type classifier) pooling layers, each a forward/backward pair.
 *
 * h is the encoder's top layer, time-major (S, B, H) in batch order; len (B) the real
 * lengths (>= 1); positions t >= len[b] are padding, never read. out is (B, H).
 *
 *   attention  e_t = tanh(w . h_t + b), a = softmax(e) over the real positions,
 *              out = sum_t a_t h_t        (the attention layer of the classic
 *              attention-pooled sentiment classifier; w (H), b (1))
 *   last       each direction's final state: unidirectional h_{len-1}; bidirectional
 *              (units U = H/2 per direction) [forward half of h_{len-1}; reverse half of h_0]
 *   mean       sum_t h_t / len
 *   max        elementwise max over t (the gradient goes to the first maximum)
 *
 * The backward functions add into dh (S, B, H) and, for attention, into dw and db.
 * scripts/reference/reference_classifier.py is their specification.
 */
#ifndef POOLING_H
#define POOLING_H

typedef enum { POOL_ATTENTION, POOL_LAST, POOL_MEAN, POOL_MAX, POOL_KINDS } Pooling;

const char *pooling_name(int kind);   /* "attention", "last", ... */
int pooling_kind(const char *name);   /* -1 if unknown */

/* score (B, S) keeps e_t and attn (B, S) a_t for backward (0 on padding). */
void pooling_attention_forward(float *out, float *attn, float *score, const float *h, const int *len, int S, int B,
                               int H, const float *w, const float *b);
void pooling_attention_backward(float *dh, float *dw, float *db, const float *dout, const float *h, const float *attn,
                                const float *score, const int *len, int S, int B, int H, const float *w);

/* units: H, or H/2 for a bidirectional encoder. */
void pooling_last_forward(float *out, const float *h, const int *len, int S, int B, int H, int bidirectional);
void pooling_last_backward(float *dh, const float *dout, const int *len, int S, int B, int H, int bidirectional);

void pooling_mean_forward(float *out, const float *h, const int *len, int S, int B, int H);
void pooling_mean_backward(float *dh, const float *dout, const int *len, int S, int B, int H);

/* arg (B, H) receives the position of each maximum, for backward. */
void pooling_max_forward(float *out, int *arg, const float *h, const int *len, int S, int B, int H);
void pooling_max_backward(float *dh, const float *dout, const int *arg, int B, int H);
#endif
