/* transformer.h — the Transformer encoder-decoder (model.type "transformer", Vaswani et
 * al. 2017): scripts/reference/reference_transformer.py is its specification.
 *
 * The forward passes as inference uses them (nothing kept for a backward pass), the
 * training pass with its backward pass, and a Decoder for search, in three files:
 * transformer.c (the family's operations, inference, the Decoder), transformer_train.c
 * (training) and transformer_layer.c (the encoder and decoder layers all three run).
 * The encoder:
 *
 *   x_0    = src_emb[src] * sqrt(d) + PE                         (posenc.h)
 *   pre:   x = x + SelfAttn(LN1(x)); x = x + FFN(LN2(x)); memory = LN_enc(x_L)
 *   post:  x = LN1(x + SelfAttn(x)); x = LN2(x + FFN(x));  memory = x_L
 *
 * Self-attention masks the padding keys of each sentence (j >= len[b]); the rows of
 * padding positions come out as the kernels leave them (mha.h: attention output 0
 * there) and are never read by a real row. Time-major: row (t*B + b).
 *
 * Example:
 *   float *work = xmalloc(sizeof(float) * transformer_encode_floats(&m.dims, S, B));
 *   transformer_encode(&m, src, len, S, B, work, memory);    // memory (S, B, d)
 */
#ifndef TRANSFORMER_H
#define TRANSFORMER_H

#include "models/decoder.h" /* defines: Decoder */
#include "models/model.h"   /* defines: Model, ModelDims, ModelFamily */
#include "models/transformer_layer.h" /* defines: PreparedTLayer */

/* The family's table of operations (model.h), which the registry lists. */
extern const ModelFamily transformer_family;

/* The decoder over teacher-forced inputs and the output layer:
 *   y_0 = tgt_emb[tgt_in] * sqrt(d) + PE
 *   pre:  y = y + CausalSelf(LN1(y)); y = y + Cross(LN2(y), memory); y = y + FFN(LN3(y));
 *         out = LN_dec(y_L)
 *   post: y = LN1(y + CausalSelf(y)); y = LN2(y + Cross(y, memory)); y = LN3(y + FFN(y))
 *   logits = out W_out^T + b_out
 * Self-attention masks future and padding target positions, cross-attention padding
 * source positions. */
long transformer_decode_floats(const ModelDims *d, int S, int T, int B);
/* Which cross-attention transformer_decode reports: decoder layer `layer` (1-based; 0:
 * the last), into attn: per_head, (B, heads, T, S); else averaged over heads, (B, T, S). */
typedef struct {
    int layer, per_head;
    float *attn;
} TCrossOut;
/*   memory (S, B, d) and src_len (B) from the encoder; tgt_in (T, B), tgt_len (B);
 *   writes logits (T, B, Vt), and with cross not NULL the cross-attention it asks for. */
void transformer_decode(const Model *m, const float *memory, const int *src_len, int S, const int *tgt_in,
                        const int *tgt_len, int T, int B, float *work, float *logits, const TCrossOut *cross);

/* Each head's cross-attention of decoder layer `layer` (1-based; 0: the last) while the
 * model reads src (S ids) and emits words (n ids; fed <sos>, words[0], ..., words[n-2]):
 * writes attn (heads, n, S). The heatmaps of translate --attention-heads; equal to what
 * incremental decoding computed for the same words (the mean over heads is its
 * alignment). Allocates its scratch (per call: a sentence, not a step). */
void transformer_attention_heads(const Model *m, const int *src, int S, const int *words, int n, int layer,
                                 float *attn);

/* ---------------------------------------------------------------- training
 * The same passes keeping what the backward pass needs, and the backward pass: the
 * gradient of the loss (from dLoss/dlogits) added into m->grads. A TRun holds the activations of batches up to
 * (S, T, B), allocated once. */
typedef struct TRun TRun;
/* Model.prepared of a Transformer: every product's weight of the inference passes
 * (encoder, decoder, output layer), prepared once (kernels/prepared.h); in training,
 * the float32 form is RunState.packs (ModelFamily.repack). */
typedef struct {
    PreparedTLayer enc[MAX_LAYERS], dec[MAX_LAYERS];
    PreparedWeight out;                /* (Vt, D) */
} TPrepared;
/* train: with room for the dropout masks. */
TRun *trun_new(const ModelDims *d, int S, int T, int B, int train);
void trun_free(TRun *r);
/* src (S, B), tgt_in (T, B), lengths (B); packs: m's weights packed as they are now
 * (RunState.packs), which the forward products then read, or NULL. Every tensor of the pass holds the real
 * positions only (no row for padding: trun_targets). Returns the logits (rows, Vt), in r: the
 * caller turns them into the loss and, in place, into dLoss/dlogits (loss.h's
 * softmax_xent) before transformer_backward.
 * With dropout (a TRun made for training): inverted dropout, its masks drawn from rng,
 * where nn.Transformer has it, each place with its own probability (0: none there):
 * drop.residual on the embeddings (after the positions are added) and on each
 * sub-layer's output before its residual sum, drop.attention on the attention
 * probabilities, drop.activation after the feed-forward block's activation (fairseq's
 * dropout, attention_dropout and activation_dropout). Equal probabilities draw the
 * masks of one rate for all three places. */
typedef struct {
    float residual, attention, activation;
} TDropout;
float *transformer_forward_train(const Model *m, TRun *r, const int *src, const int *src_len, int S,
                                 const int *tgt_in, const int *tgt_len, int T, int B, TDropout drop, Rng *rng,
                                 const TPrepared *packs);
/* The logits' rows are the real target positions only, sentence after sentence: the
 * targets (T, B) of the batch as those rows, in r, and their number. */
const int *trun_targets(TRun *r, const int *tgt_out, long *rows);
/* After transformer_forward_train with the same model, the logits holding dLoss/dlogits:
 * accumulates the gradients; with defer, all but the output layer's weight's, whose
 * product it records there (model.h's model_output_grads). */
void transformer_backward(Model *m, TRun *r, DeferredGrads *defer);
/* A TRun fits batches up to these sizes. */
int trun_fits(const TRun *r, int S, int T, int B);

/* ---------------------------------------------------------------- decoding
 * A Decoder (decoder.h) over a Transformer: start encodes each source once, gives each
 * of its K rows the memory and projects every decoder layer's cross-attention keys and
 * values once; a step embeds one position per row and runs each layer on it with the
 * layer's self-attention keys and values of the earlier positions cached (mha.h's step
 * kernels), so a step costs one position, not the prefix; reorder copies cache rows
 * (beam search). The attention it reports is a chosen layer's cross-attention (the last
 * by default) averaged over heads, as OpenNMT-py's and Marian's alignments. Buffers grow in start (per batch), never in a step. */
typedef struct TDecoder TDecoder;
/* attn_layer: the decoder layer (1-based; 0: the last) whose cross-attention is the
 * alignment. */
TDecoder *tdecoder_new(const Model *m, int attn_layer);
Decoder tdecoder_decoder(TDecoder *d);
void tdecoder_free(TDecoder *d);

/* Floats of scratch transformer_encode needs for S positions of B sentences. */
long transformer_encode_floats(const ModelDims *d, int S, int B);
/*   src (S, B) token ids, len (B) real lengths (1 <= len[b] <= S); writes memory (S, B, d). */
void transformer_encode(const Model *m, const int *src, const int *len, int S, int B, float *work, float *memory);
#endif
