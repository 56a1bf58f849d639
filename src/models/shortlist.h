/* shortlist.h — a vocabulary shortlist (Marian's lexical shortlist): decoding scores only
 * the target words likely for a batch's source words, so that the output layer, the
 * largest product of a decoder step, multiplies a few hundred rows instead of the whole
 * vocabulary.
 *
 * A Shortlist says, for each source unit, the target units to keep (learnt from
 * co-occurrence in training pairs: decode/shortlist_learn.h), and the units every batch
 * keeps (the specials and the most frequent). A model decodes with one when
 * Model.shortlist points at it (set by the command; shared read-only by the workers):
 * each family's Decoder keeps, in a ShortlistOutput of its own, the output layer's rows
 * of the batch's words (shortlist_output_start, once per batch) and computes the logits
 * of those words only (shortlist_output_logits, every step); every other word gets
 * -infinity, so that the searches, which take the log-softmax over the whole row, never
 * choose it and normalise over the kept words.
 *
 * With int8 products the kept rows are the prepared matrix's own (int8_matrix_gather):
 * a kept word's logit has the very bits of the unrestricted product. In float32 they are
 * multiplied by sgemm on the gathered rows (equal to the full product's to rounding).
 */
#ifndef SHORTLIST_H
#define SHORTLIST_H

#include "data/batch.h"       /* defines: Batch */
#include "kernels/prepared.h" /* defines: PreparedWeight, Int8Matrix, Int8Rows */

typedef struct {
    int src_vocab, tgt_vocab;
    int *start;      /* (src_vocab + 1): source unit s keeps ids[start[s] .. start[s + 1]) */
    int *ids;        /* target ids, each below tgt_vocab */
    int *always;     /* (n_always) what every batch keeps: <unk>, <eos>, the most frequent */
    int n_always;
} Shortlist;

/* A shortlist from n (source, target) id pairs, grouped by source (any order; repeats
 * kept once), and the always-kept targets always[0..n_always) (<unk> and <eos> are
 * added). Ids must be in range (the reader has checked them). */
void shortlist_init(Shortlist *sl, int src_vocab, int tgt_vocab, const int *src, const int *tgt, long n,
                    const int *always, int n_always);
void shortlist_free(Shortlist *sl);

/* A Decoder's output layer restricted to its batch's words; zero-initialise. */
typedef struct {
    int n;               /* the words kept, ids[0..n) ascending */
    int *ids;
    float *w, *b;        /* float32: the kept rows of the output weight (n, D); the kept bias (n) */
    Int8Matrix q8;       /* int8: the kept rows of the prepared output weight */
    int int8;
    Int8Rows xq;
    float *sub;          /* (rows, n) the kept words' logits */
    long w_cap, sub_cap;    /* floats allocated in w and sub */
    unsigned char *mark; /* (V) */
    int V;
} ShortlistOutput;

/* The words the sources of src (src->src, (S, B) ids; mask 0 past each end) keep, and
 * the output layer's rows of those words: out_w (V, D) with out_b (V), or pw's when it
 * holds int8 products (out_w may then be NULL: model_drop_prepared_floats). */
void shortlist_output_start(ShortlistOutput *so, const Shortlist *sl, const Batch *src, const float *out_w,
                            const float *out_b, const PreparedWeight *pw, int D, int V);
/* logits (rows, V), row stride ld = x (rows, D) · the kept rows^T + their bias at the
 * kept words, -infinity elsewhere. */
void shortlist_output_logits(ShortlistOutput *so, float *logits, int ld, const float *x, int ld_x, int rows, int D);
void shortlist_output_free(ShortlistOutput *so);
#endif
