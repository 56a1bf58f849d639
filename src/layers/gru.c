#include "layers/gru.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "kernels/fastmath.h" /* defines: sigmoidf_fast, tanhf_fast */
#include "kernels/linalg.h"   /* defines: matmul_bias, matmul_*_prepacked, column_sums_add */
#include "layers/packseq.h"  /* defines: packed_prev, packed_prev_all */


KERNEL_CLONES
void gru_gates_forward(const float *gi, int ld_gi, const float *gh, int ld_gh,
                       const float *h_prev, float *h_out, float *rzn, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const float *i_ = gi + (long)b * ld_gi, *h_ = gh + (long)b * ld_gh;
        const float *hp = h_prev + (long)b * H;
        float *ho = h_out + (long)b * H, *g = rzn + (long)b * 3 * H;
#pragma omp simd
        for (int k = 0; k < H; k++) {
            float r = sigmoidf_fast(i_[k] + h_[k]);
            float z = sigmoidf_fast(i_[H + k] + h_[H + k]);
            float n = tanhf_fast(i_[2 * H + k] + r * h_[2 * H + k]);
            g[k] = r;
            g[H + k] = z;
            g[2 * H + k] = n;
            ho[k] = (1.0f - z) * n + z * hp[k];
        }
    }
}

KERNEL_CLONES
void gru_gates_backward(const float *dh, const float *rzn, const float *gh, int ld_gh,
                        const float *h_prev, float *dgi, int ld_dgi, float *dgh, int ld_dgh,
                        float *dh_prev, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const float *d = dh + (long)b * H, *g = rzn + (long)b * 3 * H;
        const float *hn = gh + (long)b * ld_gh + 2 * H, *hp = h_prev + (long)b * H;
        float *di = dgi + (long)b * ld_dgi, *dg = dgh + (long)b * ld_dgh, *dp = dh_prev + (long)b * H;
        for (int k = 0; k < H; k++) {
            float r = g[k], z = g[H + k], n = g[2 * H + k];
            float dn = d[k] * (1.0f - z) * (1.0f - n * n);   /* through tanh */
            float dz = d[k] * (hp[k] - n) * z * (1.0f - z);
            float dr = dn * hn[k] * r * (1.0f - r);
            di[k] = dr;
            di[H + k] = dz;
            di[2 * H + k] = dn;
            dg[k] = dr;
            dg[H + k] = dz;
            dg[2 * H + k] = dn * r;
            dp[k] = d[k] * z;
        }
    }
}

/* The step for position t reads the state h[t + reverse] and writes h[t + 1 - reverse]
 * (see gru.h for the two layouts); these name the (B, H) blocks. */
static long prev_block(int t, int B, int H, int reverse) { return (long)(t + reverse) * B * H; }
static long next_block(int t, int B, int H, int reverse) { return (long)(t + 1 - reverse) * B * H; }

void gru_sequence_forward(const GruWeights *w, const float *x, const float *mask,
                          float *h, float *gi, float *gh, float *rzn, int S, int B, int reverse, int keep)
{
    int H = w->hidden, G = 3 * H;
    /* All input projections at once: gi (S*B, 3H) = x · w_ih^T + b_ih */
    prepared_matmul_bias(gi, G, x, w->in, w->w_ih, w->in, w->w_ih_int8, w->b_ih, S * B, G, w->in);
    for (int s = 0; s < S; s++) {
        int t = reverse ? S - 1 - s : s;
        const float *hp = h + prev_block(t, B, H, reverse);
        float *hn = h + next_block(t, B, H, reverse);
        float *ght = gh + (long)t * keep * B * G, *g = rzn + (long)t * keep * B * G;
        if (w->w_hh_int8) prepared_matmul_bias(ght, G, hp, H, w->w_hh, H, w->w_hh_int8, w->b_hh, B, G, H);
        else matmul_bias_prepacked(ght, G, hp, H, w->w_hh, H, w->w_hh_packed, w->b_hh, B, G, H);
        gru_gates_forward(gi + (long)t * B * G, G, ght, G, hp, hn, g, B, H);
        /* Padding carries the previous state through unchanged. */
        for (int b = 0; b < B; b++)
            if (mask[t * B + b] == 0.0f)
                memcpy(hn + (long)b * H, hp + (long)b * H, sizeof(float) * H);
    }
}

void gru_sequence_backward(const GruWeights *w, GruWeights *g, const float *x, const float *mask,
                           const float *h, const float *gh, const float *rzn, float *dh,
                           float *dx, float *dh0, float *dgi, float *dgh, int S, int B, int reverse)
{
    int H = w->hidden, G = 3 * H;
    /* dh0 doubles as the running carry: dLoss/d(state before position t), accumulated
     * from the steps processed after it. Steps are undone in the opposite order. */
    memset(dh0, 0, sizeof(float) * B * H);
    for (int s = S - 1; s >= 0; s--) {
        int t = reverse ? S - 1 - s : s;
        float *d = dh + (long)t * B * H;   /* becomes dLoss/d(state after position t) in total */
        for (long i = 0; i < (long)B * H; i++)
            d[i] += dh0[i];
        /* Masked rows: the new state was the old one, so the whole gradient is carried. */
        for (int b = 0; b < B; b++) {
            float m = mask[t * B + b];
            for (int k = 0; k < H; k++) {
                dh0[b * H + k] = (1.0f - m) * d[b * H + k];
                d[b * H + k] *= m;
            }
        }
        float *dgi_t = dgi + (long)t * B * G, *dgh_t = dgh + (long)t * B * G;
        float *direct = d; /* reuse: gru_gates_backward reads d[k] before writing dp[k] */
        gru_gates_backward(d, rzn + (long)t * B * G, gh + (long)t * B * G, G,
                           h + prev_block(t, B, H, reverse), dgi_t, G, dgh_t, G, direct, B, H);
        for (long i = 0; i < (long)B * H; i++)
            dh0[i] += direct[i];
        /* dLoss/d(previous state) += dgh · w_hh */
        matmul_nn_prepacked(dh0, H, dgh_t, G, w->w_hh, H, w->w_hh_columns, 1, B, H, G);
    }
    /* Weight gradients over all steps at once. The previous states of positions 0..S-1
     * are one block too: h[0..S-1] forward, h[1..S] reverse. */
    const float *h_prev = h + prev_block(0, B, H, reverse);
    linear_grads(g->w_ih, NULL, dgi, G, x, w->in, S * B, G, w->in);
    linear_grads(g->w_hh, NULL, dgh, G, h_prev, H, S * B, G, H);
    column_sums_add(g->b_ih, dgi, S * B, G, G);
    column_sums_add(g->b_hh, dgh, S * B, G, G);
    /* dx = dgi · w_ih */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S * B, w->in, G,
                1.0f, dgi, G, w->w_ih, w->in, 0.0f, dx, w->in);
}

void gru_packed_forward(const GruWeights *w, const float *x, float *h, float *gi, float *gh, float *rzn,
                        const int *off, int S, int B, int reverse, float *stage)
{
    int H = w->hidden, G = 3 * H;
    prepared_matmul_bias(gi, G, x, w->in, w->w_ih, w->in, w->w_ih_int8, w->b_ih, off[S], G, w->in);
    for (int s = 0; s < S; s++) {
        int t = reverse ? S - 1 - s : s, n = off[t + 1] - off[t];
        const float *hp = packed_prev(h, stage, off, t, S, B, H, reverse);
        long at = off[t];
        if (w->w_hh_int8) prepared_matmul_bias(gh + at * G, G, hp, H, w->w_hh, H, w->w_hh_int8, w->b_hh, n, G, H);
        else matmul_bias_prepacked(gh + at * G, G, hp, H, w->w_hh, H, w->w_hh_packed, w->b_hh, n, G, H);
        gru_gates_forward(gi + at * G, G, gh + at * G, G, hp, h + (B + at) * H, rzn + at * G, n, H);
    }
}

void gru_packed_backward(const GruWeights *w, GruWeights *g, const float *x, const float *h, const float *gh,
                         const float *rzn, float *dh, const float *dh_final, float *dx, float *dh0, float *dgi,
                         float *dgh, const int *off, int S, int B, int reverse, float *work)
{
    int H = w->hidden, G = 3 * H;
    long N = off[S];
    /* dh0 is the running carry, row by row: dLoss/d(the state before the row's step),
     * starting as the final state's gradient. A row's entry is untouched until its
     * first step is undone (its last position forward, position 0 reverse). */
    if (dh_final) memcpy(dh0, dh_final, sizeof(float) * B * H);
    else memset(dh0, 0, sizeof(float) * B * H);
    for (int s = S - 1; s >= 0; s--) {
        int t = reverse ? S - 1 - s : s, n = off[t + 1] - off[t];
        long at = off[t];
        float *d = dh + at * H;
        for (long i = 0; i < (long)n * H; i++)
            d[i] += dh0[i];
        const float *hp = packed_prev(h, work, off, t, S, B, H, reverse);
        gru_gates_backward(d, rzn + at * G, gh + at * G, G, hp, dgi + at * G, G, dgh + at * G, G, dh0, n, H);
        matmul_nn_prepacked(dh0, H, dgh + at * G, G, w->w_hh, H, w->w_hh_columns, 1, n, H, G);
    }
    packed_prev_all(work, h, off, S, B, H, reverse);
    linear_grads(g->w_ih, NULL, dgi, G, x, w->in, N, G, w->in);
    linear_grads(g->w_hh, NULL, dgh, G, work, H, N, G, H);
    column_sums_add(g->b_ih, dgi, N, G, G);
    column_sums_add(g->b_hh, dgh, N, G, G);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, w->in, G, 1.0f, dgi, G, w->w_ih, w->in, 0.0f, dx,
                w->in);
}
