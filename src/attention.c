#include "attention.h"

#include <math.h>
#include <string.h>

#include "fastmath.h" /* defines: expf_fast, tanhf_fast */

void attention_bahdanau_forward(const float *keys, const float *enc, const float *mask,
                                const float *q, int ld_q, const float *v,
                                float *attn, float *ctx, int ld_ctx,
                                int S, int B, int A, int H)
{
    for (int b = 0; b < B; b++) {
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

void attention_bahdanau_backward(const float *dctx, int ld_dctx, const float *keys, const float *enc,
                                 const float *mask, const float *q, int ld_q, const float *v,
                                 const float *attn, float *dv, float *dkeys, float *denc, float *dq,
                                 int ld_dq, float *work, int S, int B, int A, int H)
{
    float *da = work, *t = work + S; /* (S) dLoss/da_j; (A) tanh(k_j + q) */
    for (int b = 0; b < B; b++) {
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
