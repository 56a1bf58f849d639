/* shortlist.c — the output layer restricted to a batch's likely words (shortlist.h). */
#include "models/shortlist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"      /* defines: xmalloc, xcalloc, xrealloc */
#include "kernels/linalg.h" /* defines: matmul_bias */
#include "text/vocab.h"     /* defines: VOCAB_UNK, VOCAB_EOS */

typedef struct {
    int s, t;
} IdPair;

static int by_source_then_target(const void *a, const void *b)
{
    const IdPair *x = a, *y = b;
    return x->s != y->s ? (x->s > y->s) - (x->s < y->s) : (x->t > y->t) - (x->t < y->t);
}

void shortlist_init(Shortlist *sl, int src_vocab, int tgt_vocab, const int *src, const int *tgt, long n,
                    const int *always, int n_always)
{
    memset(sl, 0, sizeof *sl);
    sl->src_vocab = src_vocab;
    sl->tgt_vocab = tgt_vocab;
    IdPair *p = xmalloc(sizeof(IdPair) * (size_t)(n + 1));
    for (long i = 0; i < n; i++)
        p[i] = (IdPair){src[i], tgt[i]};
    qsort(p, (size_t)n, sizeof *p, by_source_then_target);
    sl->start = xcalloc((size_t)src_vocab + 1, sizeof(int));
    sl->ids = xmalloc(sizeof(int) * (size_t)(n + 1));
    long kept = 0;
    for (long i = 0; i < n; i++) {
        if (i > 0 && p[i].s == p[i - 1].s && p[i].t == p[i - 1].t) continue;
        sl->ids[kept++] = p[i].t;
        sl->start[p[i].s + 1]++;
    }
    for (int s = 0; s < src_vocab; s++)
        sl->start[s + 1] += sl->start[s];
    free(p);
    sl->always = xmalloc(sizeof(int) * (size_t)(n_always + 2));
    sl->always[0] = VOCAB_UNK;
    sl->always[1] = VOCAB_EOS;
    if (n_always > 0) memcpy(sl->always + 2, always, sizeof(int) * (size_t)n_always);
    sl->n_always = n_always + 2;
}

void shortlist_free(Shortlist *sl)
{
    free(sl->start);
    free(sl->ids);
    free(sl->always);
    memset(sl, 0, sizeof *sl);
}

/* Marks t kept; adds it to ids the first time. */
static void keep(ShortlistOutput *so, int t)
{
    if (so->mark[t]) return;
    so->mark[t] = 1;
    so->ids[so->n++] = t;
}

static int ascending(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void shortlist_output_start(ShortlistOutput *so, const Shortlist *sl, const Batch *src, const float *out_w,
                            const float *out_b, const PreparedWeight *pw, int D, int V)
{
    if (so->V != V) {  /* at most V words are kept: the id and bias buffers once */
        free(so->mark);
        free(so->ids);
        free(so->b);
        so->mark = xcalloc((size_t)V, 1);
        so->ids = xmalloc(sizeof(int) * (size_t)V);
        so->b = xmalloc(sizeof(float) * (size_t)V);
        so->V = V;
    }
    so->n = 0;
    for (int i = 0; i < sl->n_always; i++)
        keep(so, sl->always[i]);
    long cells = (long)src->S * src->B;
    for (long i = 0; i < cells; i++) {
        int s = src->src[i];
        if (src->mask[i] == 0.0f || s < 0 || s >= sl->src_vocab) continue;
        for (int k = sl->start[s]; k < sl->start[s + 1]; k++)
            keep(so, sl->ids[k]);
    }
    qsort(so->ids, (size_t)so->n, sizeof(int), ascending);
    for (int i = 0; i < so->n; i++)
        so->mark[so->ids[i]] = 0;   /* cleared for the next batch */
    so->int8 = pw && pw->type == COMPUTE_INT8;
    if (!so->int8 && so->w_cap < (long)so->n * D) {  /* float32's rows: grown, never per batch */
        free(so->w);
        so->w_cap = (long)so->n * D;
        so->w = xmalloc(sizeof(float) * (size_t)so->w_cap);
    }
    for (int i = 0; i < so->n; i++) {
        so->b[i] = out_b ? out_b[so->ids[i]] : 0.0f;
        if (!so->int8) memcpy(so->w + (long)i * D, out_w + (long)so->ids[i] * D, sizeof(float) * (size_t)D);
    }
    if (so->int8) int8_matrix_gather(&so->q8, &pw->q8, so->ids, so->n);
}

void shortlist_output_logits(ShortlistOutput *so, float *logits, int ld, const float *x, int ld_x, int rows, int D)
{
    int n = so->n;
    if ((long)rows * n > so->sub_cap) {
        free(so->sub);
        so->sub_cap = (long)rows * n;
        so->sub = xmalloc(sizeof(float) * (size_t)(so->sub_cap + 1));
    }
    if (so->int8) {
        int8_rows_quantize(&so->xq, x, ld_x, rows, D);
        int8_matmul(so->sub, n, &so->xq, &so->q8, so->b);
    } else
        matmul_bias(so->sub, n, x, ld_x, so->w, D, so->b, rows, n, D);
    for (int r = 0; r < rows; r++) {
        float *row = logits + (long)r * ld;
        const float *kept = so->sub + (long)r * n;
        for (int v = 0; v < so->V; v++)
            row[v] = -INFINITY;
        for (int i = 0; i < n; i++)
            row[so->ids[i]] = kept[i];
    }
}

void shortlist_output_free(ShortlistOutput *so)
{
    free(so->ids);
    free(so->mark);
    free(so->w);
    free(so->b);
    free(so->sub);
    int8_matrix_free(&so->q8);
    int8_rows_free(&so->xq);
    memset(so, 0, sizeof *so);
}
