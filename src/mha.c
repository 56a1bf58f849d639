#include "mha.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "linalg.h" /* defines: matmul_bias, linear_grads */

long mha_workspace_floats(const MhaConfig *cfg, int Tq, int Tk, int B)
{
    long d = cfg->d;
    return 4 * (long)Tq * B * d + 4 * (long)Tk * B * d + (long)B * cfg->heads * Tq * Tk + 2 * (long)Tq * Tk;
}

void mha_workspace_init(MhaWorkspace *ws, const MhaConfig *cfg, float *buf, int Tq, int Tk, int B)
{
    long nq = (long)Tq * B * cfg->d, nk = (long)Tk * B * cfg->d;
    ws->Tq = Tq; ws->Tk = Tk; ws->B = B;
    ws->Q = buf;          buf += nq;
    ws->ctx = buf;        buf += nq;
    ws->dctx = buf;       buf += nq;
    ws->dQ = buf;         buf += nq;
    ws->K = buf;          buf += nk;
    ws->V = buf;          buf += nk;
    ws->dK = buf;         buf += nk;
    ws->dV = buf;         buf += nk;
    ws->P = buf;          buf += (long)B * cfg->heads * Tq * Tk;
    ws->A = buf;          buf += (long)Tq * Tk;
    ws->dA = buf;
}

/* softmax of row[0..n-1] in place, row[n..total-1] = 0. The allowed keys of a query are
 * always a prefix (padding is at the end, causal cuts at i), so a count says it all. */
static void softmax_prefix(float *row, int n, int total)
{
    float best = -INFINITY, z = 0;
    for (int j = 0; j < n; j++)
        if (row[j] > best) best = row[j];
    for (int j = 0; j < n; j++) {
        row[j] = expf(row[j] - best);
        z += row[j];
    }
    for (int j = 0; j < n; j++)
        row[j] /= z;
    for (int j = n; j < total; j++)
        row[j] = 0;
}

/* How many keys (a prefix) query i of a sentence with len_k keys may see. */
static int allowed_keys(const MhaConfig *cfg, int i, int len_k)
{
    return cfg->causal && i + 1 < len_k ? i + 1 : len_k;
}

/* A = P * keep / (1 - p) for one (sentence, head) into buf, or P itself without dropout. */
static const float *dropped(const MhaConfig *cfg, const float *P, const unsigned char *keep, float *buf, long n)
{
    if (!keep) return P;
    float scale = 1.0f / (1.0f - cfg->dropout);
    for (long i = 0; i < n; i++)
        buf[i] = keep[i] ? P[i] * scale : 0.0f;
    return buf;
}

/* dy with the rows of padding queries zeroed, into out (Tq, B, d). */
static void mask_query_rows(float *out, const float *dy, const int *len_q, int Tq, int B, int d)
{
    for (int i = 0; i < Tq; i++)
        for (int b = 0; b < B; b++) {
            float *o = out + ((long)i * B + b) * d;
            if (i < len_q[b]) memcpy(o, dy + ((long)i * B + b) * d, sizeof(float) * d);
            else memset(o, 0, sizeof(float) * d);
        }
}

void mha_forward(const MhaConfig *cfg, const MhaParams *p, const float *q_in, const float *kv_in,
                 const int *len_q, const int *len_k, const unsigned char *keep, float *y,
                 MhaWorkspace *ws, int Tq, int Tk, int B)
{
    int d = cfg->d, H = cfg->heads, dk = d / H, ld = B * d;
    float alpha = 1.0f / sqrtf((float)dk);
    matmul_bias(ws->Q, d, q_in, d, p->Wq, d, p->bq, Tq * B, d, d);
    matmul_bias(ws->K, d, kv_in, d, p->Wk, d, p->bk, Tk * B, d, d);
    matmul_bias(ws->V, d, kv_in, d, p->Wv, d, p->bv, Tk * B, d, d);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            long off = (long)b * d + h * dk, n = (long)Tq * Tk;
            float *P = ws->P + ((long)b * H + h) * n;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Tq, Tk, dk, alpha, ws->Q + off, ld,
                        ws->K + off, ld, 0.0f, P, Tk);
            for (int i = 0; i < Tq; i++)
                softmax_prefix(P + (long)i * Tk, allowed_keys(cfg, i, len_k[b]), Tk);
            const float *A = dropped(cfg, P, keep ? keep + ((long)b * H + h) * n : NULL, ws->A, n);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Tq, dk, Tk, 1.0f, A, Tk,
                        ws->V + off, ld, 0.0f, ws->ctx + off, ld);
        }
    matmul_bias(y, d, ws->ctx, d, p->Wo, d, p->bo, Tq * B, d, d);
    for (int i = 0; i < Tq; i++)
        for (int b = 0; b < B; b++)
            if (i >= len_q[b]) memset(y + ((long)i * B + b) * d, 0, sizeof(float) * d);
}

/* dS = P * (dA - rowsum(P * dA)) in place in dA: the softmax's backward, row by row.
 * Entries with P = 0 (masked keys) get 0. */
static void softmax_backward(float *dA, const float *P, int Tq, int Tk)
{
    for (int i = 0; i < Tq; i++) {
        float *g = dA + (long)i * Tk;
        const float *pr = P + (long)i * Tk;
        float dot = 0;
        for (int j = 0; j < Tk; j++)
            dot += pr[j] * g[j];
        for (int j = 0; j < Tk; j++)
            g[j] = pr[j] * (g[j] - dot);
    }
}

/* dx (M, d) += dz (M, d) W (d, d), and the gradients of z = x W^T + b. */
static void projection_backward(float *dx, float *gW, float *gb, const float *dz, const float *x,
                                const float *W, int M, int d)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, d, d, 1.0f, dz, d, W, d, 1.0f, dx, d);
    linear_grads(gW, gb, dz, d, x, d, M, d, d);
}

void mha_backward(const MhaConfig *cfg, const MhaParams *p, MhaGrads *g, const float *dy,
                  const float *q_in, const float *kv_in, const int *len_q, const int *len_k,
                  const unsigned char *keep, float *dq_in, float *dkv_in, MhaWorkspace *ws,
                  int Tq, int Tk, int B)
{
    (void)len_k; /* masked keys have P = 0, which carries the mask through backward */
    int d = cfg->d, H = cfg->heads, dk = d / H, ld = B * d;
    float alpha = 1.0f / sqrtf((float)dk);

    /* Output projection, over dy without the padding queries (ws->dQ holds it until the
     * per-head loop overwrites it). */
    float *dy_real = ws->dQ;
    mask_query_rows(dy_real, dy, len_q, Tq, B, d);
    linear_grads(g->Wo, g->bo, dy_real, d, ws->ctx, d, Tq * B, d, d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Tq * B, d, d, 1.0f, dy_real, d, p->Wo, d,
                0.0f, ws->dctx, d);

    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            long off = (long)b * d + h * dk, n = (long)Tq * Tk;
            const float *P = ws->P + ((long)b * H + h) * n;
            const unsigned char *kp = keep ? keep + ((long)b * H + h) * n : NULL;
            const float *A = dropped(cfg, P, kp, ws->A, n);
            /* dV_bh = A^T dctx_bh;  dA = dctx_bh V_bh^T */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Tk, dk, Tq, 1.0f, A, Tk,
                        ws->dctx + off, ld, 0.0f, ws->dV + off, ld);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Tq, Tk, dk, 1.0f, ws->dctx + off, ld,
                        ws->V + off, ld, 0.0f, ws->dA, Tk);
            if (kp) {
                float scale = 1.0f / (1.0f - cfg->dropout);
                for (long i = 0; i < n; i++)
                    ws->dA[i] = kp[i] ? ws->dA[i] * scale : 0.0f;
            }
            softmax_backward(ws->dA, P, Tq, Tk);
            /* S = alpha Q K^T:  dQ_bh = alpha dS K_bh;  dK_bh = alpha dS^T Q_bh */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Tq, dk, Tk, alpha, ws->dA, Tk,
                        ws->K + off, ld, 0.0f, ws->dQ + off, ld);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Tk, dk, Tq, alpha, ws->dA, Tk,
                        ws->Q + off, ld, 0.0f, ws->dK + off, ld);
        }

    projection_backward(dq_in, g->Wq, g->bq, ws->dQ, q_in, p->Wq, Tq * B, d);
    /* The key bias's gradient is exactly zero (q . bk is the same for every key of a
     * query, and the softmax ignores a constant), so nothing is added: summing dK's
     * rounding noise instead would hand Adam a gradient of ~1e-9 that it scales up to
     * full-size steps in random directions. */
    projection_backward(dkv_in, g->Wk, NULL, ws->dK, kv_in, p->Wk, Tk * B, d);
    projection_backward(dkv_in, g->Wv, g->bv, ws->dV, kv_in, p->Wv, Tk * B, d);
}

/* ------------------------------------------------------------ incremental decoding */

long mha_step_work_floats(const MhaConfig *cfg, int B)
{
    return 2 * (long)B * cfg->d;
}

/* One query row per sentence: q (B, d) attends to rows 0..n_b-1 of K, V (time-major,
 * row stride B*d), n_b = n_keys[b] or n_all when n_keys is NULL; probs (B, heads,
 * stride) gets the weights (0 from n_b to stride), ctx (B, d) the context. */
static void attend_one_query(const MhaConfig *cfg, const float *q, const float *K, const float *V,
                             const int *n_keys, int n_all, int stride, float *probs, float *ctx, int B)
{
    int d = cfg->d, H = cfg->heads, dk = d / H, ld = B * d;
    float alpha = 1.0f / sqrtf((float)dk);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            long off = (long)b * d + h * dk;
            int n = n_keys ? n_keys[b] : n_all;
            float *s = probs + ((long)b * H + h) * stride;
            /* s (n) = alpha K_bh (n, dk) q_bh;  ctx_bh (dk) = V_bh^T s */
            if (n > 0)
                cblas_sgemv(CblasRowMajor, CblasNoTrans, n, dk, alpha, K + off, ld, q + off, 1, 0.0f, s, 1);
            softmax_prefix(s, n, stride);
            if (n > 0)
                cblas_sgemv(CblasRowMajor, CblasTrans, n, dk, 1.0f, V + off, ld, s, 1, 0.0f, ctx + off, 1);
            else
                memset(ctx + off, 0, sizeof(float) * dk);
        }
}

void mha_step_forward(const MhaConfig *cfg, const MhaParams *p, const float *x, int t, float *Kc, float *Vc,
                      float *y, float *probs, float *work, int B)
{
    int d = cfg->d, ld = B * d;
    float *q = work, *ctx = work + (long)B * d;
    matmul_bias(q, d, x, d, p->Wq, d, p->bq, B, d, d);
    matmul_bias(Kc + (long)t * ld, d, x, d, p->Wk, d, p->bk, B, d, d);
    matmul_bias(Vc + (long)t * ld, d, x, d, p->Wv, d, p->bv, B, d, d);
    attend_one_query(cfg, q, Kc, Vc, NULL, t + 1, t + 1, probs, ctx, B);
    matmul_bias(y, d, ctx, d, p->Wo, d, p->bo, B, d, d);
}

void mha_project_kv(const MhaConfig *cfg, const MhaParams *p, const float *kv_in, float *K, float *V, int Tk, int B)
{
    int d = cfg->d;
    matmul_bias(K, d, kv_in, d, p->Wk, d, p->bk, Tk * B, d, d);
    matmul_bias(V, d, kv_in, d, p->Wv, d, p->bv, Tk * B, d, d);
}

void mha_cross_step_forward(const MhaConfig *cfg, const MhaParams *p, const float *x, const float *K,
                            const float *V, const int *len_k, float *y, float *probs, float *work, int Tk, int B)
{
    int d = cfg->d;
    float *q = work, *ctx = work + (long)B * d;
    matmul_bias(q, d, x, d, p->Wq, d, p->bq, B, d, d);
    attend_one_query(cfg, q, K, V, len_k, Tk, Tk, probs, ctx, B);
    matmul_bias(y, d, ctx, d, p->Wo, d, p->bo, B, d, d);
}
