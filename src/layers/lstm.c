#include "layers/lstm.h"

#include <cblas.h>
#include <string.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "kernels/fastmath.h" /* defines: sigmoidf_fast, tanhf_fast */
#include "kernels/linalg.h"   /* defines: matmul_bias, matmul_*_prepacked, column_sums_add */
#include "layers/packseq.h"  /* defines: packed_prev, packed_prev_all */


KERNEL_CLONES
void lstm_gates_forward(const float *gi, int ld_gi, const float *gh, int ld_gh, const float *c_prev,
                        float *h_out, float *c_out, float *ifgo, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const float *i_ = gi + (long)b * ld_gi, *h_ = gh + (long)b * ld_gh;
        const float *cp = c_prev + (long)b * H;
        float *ho = h_out + (long)b * H, *co = c_out + (long)b * H, *g = ifgo + (long)b * 4 * H;
#pragma omp simd
        for (int k = 0; k < H; k++) {
            float ig = sigmoidf_fast(i_[k] + h_[k]);
            float fg = sigmoidf_fast(i_[H + k] + h_[H + k]);
            float gg = tanhf_fast(i_[2 * H + k] + h_[2 * H + k]);
            float og = sigmoidf_fast(i_[3 * H + k] + h_[3 * H + k]);
            float cn = fg * cp[k] + ig * gg;
            g[k] = ig;
            g[H + k] = fg;
            g[2 * H + k] = gg;
            g[3 * H + k] = og;
            co[k] = cn;
            ho[k] = og * tanhf_fast(cn);
        }
    }
}

KERNEL_CLONES
void lstm_gates_backward(const float *dh, const float *dc, const float *ifgo, const float *c_prev,
                         const float *c, float *dgates, int ld_dg, float *dc_prev, int B, int H)
{
    for (int b = 0; b < B; b++) {
        const float *d = dh + (long)b * H, *dcn = dc ? dc + (long)b * H : NULL;
        const float *g = ifgo + (long)b * 4 * H, *cp = c_prev + (long)b * H, *cn = c + (long)b * H;
        float *dg = dgates + (long)b * ld_dg, *dp = dc_prev + (long)b * H;
        for (int k = 0; k < H; k++) {
            float ig = g[k], fg = g[H + k], gg = g[2 * H + k], og = g[3 * H + k];
            float tc = tanhf_fast(cn[k]);   /* the forward's tanh(c'), recomputed */
            /* dLoss/dc' in total: from outside plus through h' = o * tanh(c') */
            float dct = (dcn ? dcn[k] : 0.0f) + d[k] * og * (1.0f - tc * tc);
            dg[k] = dct * gg * ig * (1.0f - ig);
            dg[H + k] = dct * cp[k] * fg * (1.0f - fg);
            dg[2 * H + k] = dct * ig * (1.0f - gg * gg);
            dg[3 * H + k] = d[k] * tc * og * (1.0f - og);
            dp[k] = dct * fg;   /* after the last read of dcn[k]: dc_prev may be dc */
        }
    }
}

/* The step for position t reads the state at block t + reverse and writes block
 * t + 1 - reverse of h and c (see lstm.h for the two layouts). */
static long prev_block(int t, int B, int H, int reverse) { return (long)(t + reverse) * B * H; }
static long next_block(int t, int B, int H, int reverse) { return (long)(t + 1 - reverse) * B * H; }

void lstm_sequence_forward(const LstmWeights *w, const float *x, const float *mask, float *h, float *c,
                           float *gi, float *gh, float *ifgo, int S, int B, int reverse, int keep)
{
    int H = w->hidden, G = 4 * H;
    /* All input projections at once: gi (S*B, 4H) = x · w_ih^T + b_ih */
    prepared_matmul_bias(gi, G, x, w->in, w->w_ih, w->in, w->w_ih_int8, w->b_ih, S * B, G, w->in);
    for (int s = 0; s < S; s++) {
        int t = reverse ? S - 1 - s : s;
        const float *hp = h + prev_block(t, B, H, reverse), *cp = c + prev_block(t, B, H, reverse);
        float *hn = h + next_block(t, B, H, reverse), *cn = c + next_block(t, B, H, reverse);
        float *ght = gh + (long)t * keep * B * G;
        if (w->w_hh_int8) prepared_matmul_bias(ght, G, hp, H, w->w_hh, H, w->w_hh_int8, w->b_hh, B, G, H);
        else matmul_bias_prepacked(ght, G, hp, H, w->w_hh, H, w->w_hh_packed, w->b_hh, B, G, H);
        lstm_gates_forward(gi + (long)t * B * G, G, ght, G, cp, hn, cn, ifgo + (long)t * keep * B * G, B, H);
        /* Padding carries the previous state (h and c) through unchanged. */
        for (int b = 0; b < B; b++)
            if (mask[t * B + b] == 0.0f) {
                memcpy(hn + (long)b * H, hp + (long)b * H, sizeof(float) * H);
                memcpy(cn + (long)b * H, cp + (long)b * H, sizeof(float) * H);
            }
    }
}

void lstm_sequence_backward(const LstmWeights *w, LstmWeights *g, const float *x, const float *mask,
                            const float *h, const float *c, const float *ifgo, float *dh, float *dc_final,
                            float *dx, float *dh0, float *dc0, float *dgates, int S, int B, int reverse)
{
    int H = w->hidden, G = 4 * H;
    /* dh0 and dc0 double as the running carries: dLoss/d(h, c before position t),
     * accumulated from the steps processed after it. Steps are undone in the opposite
     * order; before the last one, the carried c gradient is the final state's. */
    memset(dh0, 0, sizeof(float) * B * H);
    if (!dc_final)
        memset(dc0, 0, sizeof(float) * B * H);
    else if (dc0 != dc_final)
        memcpy(dc0, dc_final, sizeof(float) * B * H);
    for (int s = S - 1; s >= 0; s--) {
        int t = reverse ? S - 1 - s : s;
        float *d = dh + (long)t * B * H;   /* becomes dLoss/d(h after position t) in total */
        for (long i = 0; i < (long)B * H; i++)
            d[i] += dh0[i];
        const float *cp = c + prev_block(t, B, H, reverse), *cn = c + next_block(t, B, H, reverse);
        const float *ifgo_t = ifgo + (long)t * B * G;
        float *dg_t = dgates + (long)t * B * G;
        for (int b = 0; b < B; b++) {
            long r = (long)b * H;
            if (mask[t * B + b] != 0.0f) {
                /* A real step: h_prev is reached only through W_hh (added below). */
                lstm_gates_backward(d + r, dc0 + r, ifgo_t + (long)b * G, cp + r, cn + r,
                                    dg_t + (long)b * G, G, dc0 + r, 1, H);
                memset(dh0 + r, 0, sizeof(float) * H);
            } else {
                /* Padding: the new state was the old one, so both gradients are carried
                 * (dc0's row stays as it is) and the gates had no effect. */
                memcpy(dh0 + r, d + r, sizeof(float) * H);
                memset(dg_t + (long)b * G, 0, sizeof(float) * G);
            }
        }
        /* dLoss/d(previous h) += dgates · w_hh */
        matmul_nn_prepacked(dh0, H, dg_t, G, w->w_hh, H, w->w_hh_columns, 1, B, H, G);
    }
    /* Weight gradients over all steps at once. The previous states of positions 0..S-1
     * are one block too: h[0..S-1] forward, h[1..S] reverse. Both biases see dgates. */
    const float *h_prev = h + prev_block(0, B, H, reverse);
    linear_grads(g->w_ih, g->b_ih, dgates, G, x, w->in, S * B, G, w->in);
    linear_grads(g->w_hh, g->b_hh, dgates, G, h_prev, H, S * B, G, H);
    /* dx = dgates · w_ih */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S * B, w->in, G,
                1.0f, dgates, G, w->w_ih, w->in, 0.0f, dx, w->in);
}

void lstm_packed_forward(const LstmWeights *w, const float *x, float *h, float *c, float *gi, float *gh, float *ifgo,
                         const int *off, int S, int B, int reverse, float *stage)
{
    int H = w->hidden, G = 4 * H;
    prepared_matmul_bias(gi, G, x, w->in, w->w_ih, w->in, w->w_ih_int8, w->b_ih, off[S], G, w->in);
    for (int s = 0; s < S; s++) {
        int t = reverse ? S - 1 - s : s, n = off[t + 1] - off[t];
        const float *hp = packed_prev(h, stage, off, t, S, B, H, reverse);
        const float *cp = packed_prev(c, stage + (long)B * H, off, t, S, B, H, reverse);
        long at = off[t];
        if (w->w_hh_int8) prepared_matmul_bias(gh + at * G, G, hp, H, w->w_hh, H, w->w_hh_int8, w->b_hh, n, G, H);
        else matmul_bias_prepacked(gh + at * G, G, hp, H, w->w_hh, H, w->w_hh_packed, w->b_hh, n, G, H);
        lstm_gates_forward(gi + at * G, G, gh + at * G, G, cp, h + (B + at) * H, c + (B + at) * H, ifgo + at * G, n,
                           H);
    }
}

void lstm_packed_backward(const LstmWeights *w, LstmWeights *g, const float *x, const float *h, const float *c,
                          const float *ifgo, float *dh, const float *dh_final, const float *dc_final, float *dx,
                          float *dh0, float *dc0, float *dgates, const int *off, int S, int B, int reverse, float *work)
{
    int H = w->hidden, G = 4 * H;
    long N = off[S];
    /* dh0 and dc0 are the running carries, row by row, starting as the final state's
     * gradients; a row's entries are untouched until its first step is undone. */
    if (dh_final) memcpy(dh0, dh_final, sizeof(float) * B * H);
    else memset(dh0, 0, sizeof(float) * B * H);
    if (dc_final) memcpy(dc0, dc_final, sizeof(float) * B * H);
    else memset(dc0, 0, sizeof(float) * B * H);
    for (int s = S - 1; s >= 0; s--) {
        int t = reverse ? S - 1 - s : s, n = off[t + 1] - off[t];
        long at = off[t];
        float *d = dh + at * H;
        for (long i = 0; i < (long)n * H; i++)
            d[i] += dh0[i];
        const float *cp = packed_prev(c, work, off, t, S, B, H, reverse);
        lstm_gates_backward(d, dc0, ifgo + at * G, cp, c + (B + at) * H, dgates + at * G, G, dc0, n, H);
        /* h_prev is reached only through W_hh. */
        matmul_nn_prepacked(dh0, H, dgates + at * G, G, w->w_hh, H, w->w_hh_columns, 0, n, H, G);
    }
    packed_prev_all(work, h, off, S, B, H, reverse);
    linear_grads(g->w_ih, g->b_ih, dgates, G, x, w->in, N, G, w->in);
    linear_grads(g->w_hh, g->b_hh, dgates, G, work, H, N, G, H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, w->in, G, 1.0f, dgates, G, w->w_ih, w->in, 0.0f, dx,
                w->in);
}
