#include "layers/mha.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "kernels/linalg.h"   /* defines: linear_grads */
#include "kernels/prepared.h" /* defines: prepared_matmul_bias, prepared_matmul_nn */

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

/* Inverted dropout on an (nq, nk) block: out (row stride nk) = in (row stride ld_in) *
 * keep / (1 - p), keep's rows of stride ld_keep; out may be in when the strides agree. */
static void drop_block(float *out, const float *in, int ld_in, const unsigned char *keep, int ld_keep, int nq,
                       int nk, float p)
{
    float scale = 1.0f / (1.0f - p);
    for (int i = 0; i < nq; i++)
        for (int j = 0; j < nk; j++)
            out[(long)i * nk + j] = keep[(long)i * ld_keep + j] ? in[(long)i * ld_in + j] * scale : 0.0f;
}

/* Where sentence b's positions are: packed (start given), rows start[b] .. start[b] +
 * len[b] - 1; time-major (start NULL), rows t*B + b. A sentence's rows are a matrix with
 * row stride `ld` floats beginning at `first`. */
typedef struct {
    const int *start, *len;
    int B, rows;   /* rows of the tensor: sum of len (packed) or T*B (time-major) */
} Seqs;

static long first_row(const Seqs *s, int b) { return s->start ? s->start[b] : b; }
static int row_stride(const Seqs *s) { return s->start ? 1 : s->B; }

/* Zeroes the rows no sentence owns (time-major padding), of x (rows, d). */
static void zero_padding_rows(float *x, const Seqs *s, int T, int d)
{
    if (s->start) return;
    for (int t = 0; t < T; t++)
        for (int b = 0; b < s->B; b++)
            if (t >= s->len[b]) memset(x + ((long)t * s->B + b) * d, 0, sizeof(float) * d);
}

/* The attention of every (sentence, head) on its own block: P (len_q, len_k) with row
 * stride Tk inside the (B, heads, Tq, Tk) tensor; queries past len_q are not computed. */
static void attend_forward(const MhaConfig *cfg, const Seqs *q, const Seqs *k, const unsigned char *keep,
                           MhaWorkspace *ws, int Tq, int Tk)
{
    int d = cfg->d, H = cfg->heads, dk = d / H, ldq = row_stride(q) * d, ldk = row_stride(k) * d;
    float alpha = 1.0f / sqrtf((float)dk);
    for (int b = 0; b < q->B; b++)
        for (int h = 0; h < H; h++) {
            int nq = q->len[b], nk = k->len[b];
            long qo = first_row(q, b) * d + h * dk, ko = first_row(k, b) * d + h * dk, n = (long)Tq * Tk;
            float *P = ws->P + ((long)b * H + h) * n;
            if (nq < Tq || nk < Tk) memset(P, 0, sizeof(float) * n);  /* outside the block: 0 */
            if (nq == 0) continue;
            if (nk > 0)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, dk, alpha, ws->Q + qo, ldq,
                            ws->K + ko, ldk, 0.0f, P, Tk);
            for (int i = 0; i < nq; i++)
                softmax_prefix(P + (long)i * Tk, allowed_keys(cfg, i, nk), nk);
            const float *A = P;
            int lda = Tk;
            if (keep) {  /* A = P * keep / (1 - p) on the block */
                drop_block(ws->A, P, Tk, keep + ((long)b * H + h) * n, Tk, nq, nk, cfg->dropout);
                A = ws->A, lda = nk;
            }
            if (nk > 0)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, dk, nk, 1.0f, A, lda, ws->V + ko, ldk,
                            0.0f, ws->ctx + qo, ldq);
            else
                for (int i = 0; i < nq; i++)
                    memset(ws->ctx + qo + (long)i * ldq, 0, sizeof(float) * dk);
        }
}

static void forward(const MhaConfig *cfg, const MhaParams *p, const float *q_in, const float *kv_in, const Seqs *q,
                    const Seqs *k, const unsigned char *keep, float *y, MhaWorkspace *ws, int Tq, int Tk)
{
    int d = cfg->d;
    prepared_matmul_bias(ws->Q, d, q_in, d, p->Wq, d, p->pq, p->bq, q->rows, d, d);
    prepared_matmul_bias(ws->K, d, kv_in, d, p->Wk, d, p->pk, p->bk, k->rows, d, d);
    prepared_matmul_bias(ws->V, d, kv_in, d, p->Wv, d, p->pv, p->bv, k->rows, d, d);
    attend_forward(cfg, q, k, keep, ws, Tq, Tk);
    zero_padding_rows(ws->ctx, q, Tq, d);
    prepared_matmul_bias(y, d, ws->ctx, d, p->Wo, d, p->po, p->bo, q->rows, d, d);
    zero_padding_rows(y, q, Tq, d);
}

void mha_forward(const MhaConfig *cfg, const MhaParams *p, const float *q_in, const float *kv_in,
                 const int *len_q, const int *len_k, const unsigned char *keep, float *y,
                 MhaWorkspace *ws, int Tq, int Tk, int B)
{
    Seqs q = {NULL, len_q, B, Tq * B}, k = {NULL, len_k, B, Tk * B};
    forward(cfg, p, q_in, kv_in, &q, &k, keep, y, ws, Tq, Tk);
}

void mha_forward_packed(const MhaConfig *cfg, const MhaParams *p, const float *q_in, const float *kv_in,
                        const int *start_q, const int *len_q, int rows_q, const int *start_k, const int *len_k,
                        int rows_k, const unsigned char *keep, float *y, MhaWorkspace *ws, int Tq, int Tk, int B)
{
    Seqs q = {start_q, len_q, B, rows_q}, k = {start_k, len_k, B, rows_k};
    forward(cfg, p, q_in, kv_in, &q, &k, keep, y, ws, Tq, Tk);
}

/* dS = P * (dA - rowsum(P * dA)) in place in dA (nq, nk): the softmax's backward, row by
 * row; P's rows have stride ldp. */
static void softmax_backward(float *dA, const float *P, int ldp, int nq, int nk)
{
    for (int i = 0; i < nq; i++) {
        float *g = dA + (long)i * nk;
        const float *pr = P + (long)i * ldp;
        float dot = 0;
        for (int j = 0; j < nk; j++)
            dot += pr[j] * g[j];
        for (int j = 0; j < nk; j++)
            g[j] = pr[j] * (g[j] - dot);
    }
}

/* dx (M, d) += dz (M, d) W (d, d), and the gradients of z = x W^T + b; pw: W prepared
 * (its columns packed: training's packs), or NULL. */
static void projection_backward(float *dx, float *gW, float *gb, const float *dz, const float *x,
                                const float *W, const PreparedWeight *pw, int M, int d)
{
    prepared_matmul_nn(dx, d, dz, d, W, d, pw, 1, M, d, d);
    linear_grads(gW, gb, dz, d, x, d, M, d, d);
}

static void backward(const MhaConfig *cfg, const MhaParams *p, MhaGrads *g, const float *dy, const float *q_in,
                     const float *kv_in, const Seqs *q, const Seqs *k, const unsigned char *keep, float *dq_in,
                     float *dkv_in, MhaWorkspace *ws, int Tq, int Tk)
{
    int d = cfg->d, H = cfg->heads, dk = d / H, ldq = row_stride(q) * d, ldk = row_stride(k) * d;
    float alpha = 1.0f / sqrtf((float)dk);

    /* Output projection, over dy without the padding queries (ws->dQ holds it until the
     * per-head loop overwrites it). */
    float *dy_real = ws->dQ;
    memcpy(dy_real, dy, sizeof(float) * q->rows * d);
    zero_padding_rows(dy_real, q, Tq, d);
    linear_grads(g->Wo, g->bo, dy_real, d, ws->ctx, d, q->rows, d, d);
    prepared_matmul_nn(ws->dctx, d, dy_real, d, p->Wo, d, p->po, 0, q->rows, d, d);
    /* Rows no block writes (padding) must hold zeros. */
    if (!q->start) memset(ws->dQ, 0, sizeof(float) * q->rows * d);
    if (!k->start) {
        memset(ws->dK, 0, sizeof(float) * k->rows * d);
        memset(ws->dV, 0, sizeof(float) * k->rows * d);
    }
    for (int b = 0; b < q->B; b++)
        for (int h = 0; h < H; h++) {
            int nq = q->len[b], nk = k->len[b];
            long qo = first_row(q, b) * d + h * dk, ko = first_row(k, b) * d + h * dk, n = (long)Tq * Tk;
            const float *P = ws->P + ((long)b * H + h) * n;
            const unsigned char *kp = keep ? keep + ((long)b * H + h) * n : NULL;
            if (nk == 0) continue;
            if (nq == 0) {   /* keys nobody reads (packed: no rows to leave as they are) */
                for (int j = 0; j < nk; j++) {
                    memset(ws->dK + ko + (long)j * ldk, 0, sizeof(float) * dk);
                    memset(ws->dV + ko + (long)j * ldk, 0, sizeof(float) * dk);
                }
                continue;
            }
            const float *A = P;
            int lda = Tk;
            if (kp) {
                drop_block(ws->A, P, Tk, kp, Tk, nq, nk, cfg->dropout);
                A = ws->A, lda = nk;
            }
            /* dV_bh = A^T dctx_bh;  dA = dctx_bh V_bh^T */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, dk, nq, 1.0f, A, lda, ws->dctx + qo, ldq, 0.0f,
                        ws->dV + ko, ldk);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, dk, 1.0f, ws->dctx + qo, ldq, ws->V + ko,
                        ldk, 0.0f, ws->dA, nk);
            if (kp) drop_block(ws->dA, ws->dA, nk, kp, Tk, nq, nk, cfg->dropout);
            softmax_backward(ws->dA, P, Tk, nq, nk);
            /* S = alpha Q K^T:  dQ_bh = alpha dS K_bh;  dK_bh = alpha dS^T Q_bh */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, dk, nk, alpha, ws->dA, nk, ws->K + ko, ldk,
                        0.0f, ws->dQ + qo, ldq);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, dk, nq, alpha, ws->dA, nk, ws->Q + qo, ldq,
                        0.0f, ws->dK + ko, ldk);
        }

    projection_backward(dq_in, g->Wq, g->bq, ws->dQ, q_in, p->Wq, p->pq, q->rows, d);
    /* The key bias's gradient is exactly zero (q . bk is the same for every key of a
     * query, and the softmax ignores a constant), so nothing is added: summing dK's
     * rounding noise instead would hand Adam a gradient of ~1e-9 that it scales up to
     * full-size steps in random directions. */
    projection_backward(dkv_in, g->Wk, NULL, ws->dK, kv_in, p->Wk, p->pk, k->rows, d);
    projection_backward(dkv_in, g->Wv, g->bv, ws->dV, kv_in, p->Wv, p->pv, k->rows, d);
}

void mha_backward(const MhaConfig *cfg, const MhaParams *p, MhaGrads *g, const float *dy,
                  const float *q_in, const float *kv_in, const int *len_q, const int *len_k,
                  const unsigned char *keep, float *dq_in, float *dkv_in, MhaWorkspace *ws,
                  int Tq, int Tk, int B)
{
    Seqs q = {NULL, len_q, B, Tq * B}, k = {NULL, len_k, B, Tk * B};
    backward(cfg, p, g, dy, q_in, kv_in, &q, &k, keep, dq_in, dkv_in, ws, Tq, Tk);
}

void mha_backward_packed(const MhaConfig *cfg, const MhaParams *p, MhaGrads *g, const float *dy,
                         const float *q_in, const float *kv_in, const int *start_q, const int *len_q, int rows_q,
                         const int *start_k, const int *len_k, int rows_k, const unsigned char *keep,
                         float *dq_in, float *dkv_in, MhaWorkspace *ws, int Tq, int Tk, int B)
{
    Seqs q = {start_q, len_q, B, rows_q}, k = {start_k, len_k, B, rows_k};
    backward(cfg, p, g, dy, q_in, kv_in, &q, &k, keep, dq_in, dkv_in, ws, Tq, Tk);
}

/* ------------------------------------------------------------ incremental decoding */

long mha_step_work_floats(const MhaConfig *cfg, int B)
{
    return 3 * (long)B * cfg->d;
}

/* One query row per sentence: q (B, d) row b attends to rows 0..n-1 of its keys and
 * values, K, V time-major with `kv_rows` rows per position (row stride kv_rows*d), its
 * own being row kv_row[b] (b when kv_row is NULL); n = n_keys[that row] or n_all when
 * n_keys is NULL. probs (B, heads, stride) gets the weights (0 from n to stride), ctx
 * (B, d) the context. */
static void attend_one_query(const MhaConfig *cfg, const float *q, const float *K, const float *V,
                             const int *kv_row, int kv_rows, const int *n_keys, int n_all, int stride, float *probs,
                             float *ctx, int B)
{
    int d = cfg->d, H = cfg->heads, dk = d / H, ld = kv_rows * d;
    float alpha = 1.0f / sqrtf((float)dk);
    for (int b = 0; b < B; b++) {
        int row = kv_row ? kv_row[b] : b, n = n_keys ? n_keys[row] : n_all;
        for (int h = 0; h < H; h++) {
            long off = (long)row * d + h * dk, qo = (long)b * d + h * dk;
            float *s = probs + ((long)b * H + h) * stride;
            /* s (n) = alpha K_bh (n, dk) q_bh;  ctx_bh (dk) = V_bh^T s */
            if (n > 0)
                cblas_sgemv(CblasRowMajor, CblasNoTrans, n, dk, alpha, K + off, ld, q + qo, 1, 0.0f, s, 1);
            softmax_prefix(s, n, stride);
            if (n > 0)
                cblas_sgemv(CblasRowMajor, CblasTrans, n, dk, 1.0f, V + off, ld, s, 1, 0.0f, ctx + qo, 1);
            else
                memset(ctx + qo, 0, sizeof(float) * dk);
        }
    }
}

void mha_step_forward(const MhaConfig *cfg, const MhaParams *p, const float *x, int t, float *Kc, float *Vc,
                      const int *rows, int R, float *y, float *probs, float *work, int B)
{
    int d = cfg->d;
    long ld = (long)R * d;
    float *q = work, *ctx = work + (long)B * d, *kv = ctx + (long)B * d;
    prepared_matmul_bias(q, d, x, d, p->Wq, d, p->pq, p->bq, B, d, d);
    if (!rows) {
        prepared_matmul_bias(Kc + t * ld, d, x, d, p->Wk, d, p->pk, p->bk, B, d, d);
        prepared_matmul_bias(Vc + t * ld, d, x, d, p->Wv, d, p->pv, p->bv, B, d, d);
    } else {  /* computed together, then each row into its cache row */
        prepared_matmul_bias(kv, d, x, d, p->Wk, d, p->pk, p->bk, B, d, d);
        for (int b = 0; b < B; b++)
            memcpy(Kc + t * ld + (long)rows[b] * d, kv + (long)b * d, sizeof(float) * d);
        prepared_matmul_bias(kv, d, x, d, p->Wv, d, p->pv, p->bv, B, d, d);
        for (int b = 0; b < B; b++)
            memcpy(Vc + t * ld + (long)rows[b] * d, kv + (long)b * d, sizeof(float) * d);
    }
    attend_one_query(cfg, q, Kc, Vc, rows, R, NULL, t + 1, t + 1, probs, ctx, B);
    prepared_matmul_bias(y, d, ctx, d, p->Wo, d, p->po, p->bo, B, d, d);
}

void mha_project_kv(const MhaConfig *cfg, const MhaParams *p, const float *kv_in, float *K, float *V, int Tk, int B)
{
    int d = cfg->d;
    prepared_matmul_bias(K, d, kv_in, d, p->Wk, d, p->pk, p->bk, Tk * B, d, d);
    prepared_matmul_bias(V, d, kv_in, d, p->Wv, d, p->pv, p->bv, Tk * B, d, d);
}

void mha_cross_step_forward(const MhaConfig *cfg, const MhaParams *p, const float *x, const float *K,
                            const float *V, const int *src, int n_src, const int *len_k, float *y, float *probs,
                            float *work, int Tk, int B)
{
    int d = cfg->d;
    float *q = work, *ctx = work + (long)B * d;
    prepared_matmul_bias(q, d, x, d, p->Wq, d, p->pq, p->bq, B, d, d);
    attend_one_query(cfg, q, K, V, src, n_src, len_k, Tk, Tk, probs, ctx, B);
    prepared_matmul_bias(y, d, ctx, d, p->Wo, d, p->po, p->bo, B, d, d);
}
