#include "layers/attention.h"

#include <math.h>
#include <string.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "kernels/fastmath.h" /* defines: expf_fast, tanhf_fast */

KERNEL_CLONES
void attention_bahdanau_forward(const float *keys, const float *enc, const float *mask,
                                const float *q, int ld_q, const float *v,
                                float *attn, float *ctx, int ld_ctx,
                                int S, int B, int rows, int A, int H)
{
    for (int b = 0; b < rows; b++) {
        const float *qb = q + (long)b * ld_q;
        float *a = attn + (long)b * S;
        float best = -INFINITY;
        for (int j = 0; j < S; j++) {
            if (mask[j * B + b] == 0.0f) {
                a[j] = -INFINITY;
                continue;
            }
            const float *k = keys + ((long)j * B + b) * A;
            float e = 0.0f;
#pragma omp simd reduction(+ : e)
            for (int i = 0; i < A; i++)
                e += v[i] * tanhf_fast(k[i] + qb[i]);
            a[j] = e;
            if (e > best) best = e;
        }
        /* Masked softmax; every row has at least one real source token. */
        float sum = 0.0f;
        for (int j = 0; j < S; j++) {
            a[j] = a[j] == -INFINITY ? 0.0f : expf_fast(a[j] - best);
            sum += a[j];
        }
        float *c = ctx + (long)b * ld_ctx;
        memset(c, 0, sizeof(float) * H);
        for (int j = 0; j < S; j++) {
            a[j] /= sum;
            if (a[j] == 0.0f) continue;
            const float *h = enc + ((long)j * B + b) * H;
            for (int k = 0; k < H; k++)
                c[k] += a[j] * h[k];
        }
    }
}

KERNEL_CLONES
void attention_bahdanau_backward(const float *dctx, int ld_dctx, const float *keys, const float *enc,
                                 const float *mask, const float *q, int ld_q, const float *v,
                                 const float *attn, float *dv, float *dkeys, float *denc, float *dq,
                                 int ld_dq, float *work, int S, int B, int rows, int A, int H)
{
    float *da = work, *t = work + S; /* (S) dLoss/da_j; (A) tanh(k_j + q) */
    for (int b = 0; b < rows; b++) {
        const float *dc = dctx + (long)b * ld_dctx, *a = attn + (long)b * S;
        float *dqb = dq + (long)b * ld_dq;
        float dot = 0.0f;
        for (int j = 0; j < S; j++) {
            da[j] = 0.0f;
            if (mask[j * B + b] == 0.0f) continue;
            const float *h = enc + ((long)j * B + b) * H;
            float *dh = denc + ((long)j * B + b) * H;
            for (int k = 0; k < H; k++) {
                da[j] += dc[k] * h[k];
                dh[k] += a[j] * dc[k];
            }
            dot += a[j] * da[j];
        }
        memset(dqb, 0, sizeof(float) * A);
        for (int j = 0; j < S; j++) {
            if (mask[j * B + b] == 0.0f) continue;
            float de = a[j] * (da[j] - dot);   /* softmax backward */
            const float *k = keys + ((long)j * B + b) * A, *qb = q + (long)b * ld_q;
            float *dk = dkeys + ((long)j * B + b) * A;
#pragma omp simd
            for (int i = 0; i < A; i++)
                t[i] = tanhf_fast(k[i] + qb[i]);
#pragma omp simd
            for (int i = 0; i < A; i++) {
                dv[i] += de * t[i];
                float du = de * v[i] * (1.0f - t[i] * t[i]);
                dk[i] += du;
                dqb[i] += du;
            }
        }
    }
}

/* ------------------------------------------------------------------ dot product */

/* The positions [lo, hi) of row b that take part: the real ones (j < len[b]), and in
 * local mode only those with |j - p| <= D. Membership is tested exactly as the contract
 * states it, in float, so a centre p on an integer lands exactly where it should; the
 * set is an interval because (float)j - p is monotonic in j. S is small (<= ~25). */
static void dot_window(const DotAttention *cfg, const int *len, const float *pos, int b, int S,
                       int *lo, int *hi)
{
    int n = len[b] < S ? len[b] : S;   /* never read past the (S, B, H) tensors */
    int l = 0, h = n;
    if (cfg->window > 0) {
        float p = pos[b], D = (float)cfg->window;
        while (l < n && (float)l - p < -D) l++;
        while (h > l && (float)(h - 1) - p > D) h--;
    }
    *lo = l;
    *hi = h;   /* h >= l: an empty window is lo == hi */
}

/* The Gaussian factor exp(-(j - p)^2 / (2 sigma^2)) with sigma = D/2, i.e.
 * exp(-2 (j - p)^2 / D^2). Inside the window |j - p| <= D, so it is >= e^-2. */
static inline float dot_gauss(float d, float D)
{
    return expf_fast(-2.0f * d * d / (D * D));
}

KERNEL_CLONES
void attention_dot_forward(const DotAttention *cfg, const float *keys, const float *enc, const int *len,
                           const float *q, int ld_q, const float *pos, float *attn, float *ctx, int ld_ctx,
                           int S, int B, int rows, int H)
{
    for (int b = 0; b < rows; b++) {
        const float *qb = q + (long)b * ld_q;
        float *a = attn + (long)b * S, *c = ctx + (long)b * ld_ctx;
        int lo, hi;
        dot_window(cfg, len, pos, b, S, &lo, &hi);
        memset(a, 0, sizeof(float) * S);
        memset(c, 0, sizeof(float) * H);
        if (lo == hi) continue;

        float best = -INFINITY;
        for (int j = lo; j < hi; j++) {
            const float *k = keys + ((long)j * B + b) * H;
            float e = 0.0f;
#pragma omp simd reduction(+ : e)
            for (int i = 0; i < H; i++)
                e += qb[i] * k[i];
            a[j] = cfg->scale * e;
            if (a[j] > best) best = a[j];
        }
        float sum = 0.0f;
        for (int j = lo; j < hi; j++) {
            a[j] = expf_fast(a[j] - best);
            sum += a[j];
        }
        for (int j = lo; j < hi; j++) {
            a[j] /= sum;
            if (cfg->window > 0)
                a[j] *= dot_gauss((float)j - pos[b], (float)cfg->window);
            const float *h = enc + ((long)j * B + b) * H;
            float aj = a[j];
#pragma omp simd
            for (int k = 0; k < H; k++)
                c[k] += aj * h[k];
        }
    }
}

/* With s = softmax over the window, g the Gaussian (1 in global mode) and a = s g:
 *   da_j = dctx . h_j                      denc_j += a_j dctx
 *   de_j = s_j (g_j da_j - sum_i s_i g_i da_i) = s_j g_j da_j - s_j sum_i a_i da_i
 *   dk_j += scale de_j q                   dq = scale sum_j de_j k_j
 *   dp   = sum_j da_j a_j 4 (j - p) / D^2  (d/dp of -2 (j - p)^2 / D^2)
 * s_j is recovered as a_j / g_j, safe since g_j >= e^-2 inside the window.
 * dkeys and denc are only ever added to, never read, so they may alias. */
KERNEL_CLONES
void attention_dot_backward(const DotAttention *cfg, const float *dctx, int ld_dctx, const float *keys,
                            const float *enc, const int *len, const float *q, int ld_q, const float *pos,
                            const float *attn, float *dkeys, float *denc, float *dq, int ld_dq, float *dpos,
                            float *work, int S, int B, int rows, int H)
{
    float *da = work; /* (S) dLoss/da_j */
    float D = (float)cfg->window;
    for (int b = 0; b < rows; b++) {
        const float *dc = dctx + (long)b * ld_dctx, *a = attn + (long)b * S, *qb = q + (long)b * ld_q;
        float *dqb = dq + (long)b * ld_dq;
        int lo, hi;
        dot_window(cfg, len, pos, b, S, &lo, &hi);
        memset(dqb, 0, sizeof(float) * H);

        float dot = 0.0f, dp = 0.0f;
        for (int j = lo; j < hi; j++) {
            const float *h = enc + ((long)j * B + b) * H;
            float *dh = denc + ((long)j * B + b) * H;
            float aj = a[j], d = 0.0f;
#pragma omp simd reduction(+ : d)
            for (int k = 0; k < H; k++)
                d += dc[k] * h[k];
#pragma omp simd
            for (int k = 0; k < H; k++)
                dh[k] += aj * dc[k];
            da[j] = d;
            dot += aj * d;
            if (cfg->window > 0)
                dp += d * aj * 4.0f * ((float)j - pos[b]) / (D * D);
        }
        if (dpos) dpos[b] = cfg->window > 0 ? dp : 0.0f;

        for (int j = lo; j < hi; j++) {
            float s = cfg->window > 0 ? a[j] / dot_gauss((float)j - pos[b], D) : a[j];
            float de = cfg->scale * (a[j] * da[j] - s * dot);   /* scale folded in */
            const float *k = keys + ((long)j * B + b) * H;
            float *dk = dkeys + ((long)j * B + b) * H;
#pragma omp simd
            for (int i = 0; i < H; i++) {
                dk[i] += de * qb[i];
                dqb[i] += de * k[i];
            }
        }
    }
}
