/* mha.h — multi-head scaled dot-product attention (Vaswani et al. 2017, 3.2), the
 * Transformer's self-attention and encoder-decoder attention, forward and backward.
 *
 *   Q = q_in Wq^T + bq        q_in  (Tq, B, d)
 *   K = kv_in Wk^T + bk       kv_in (Tk, B, d)   (the same tensor as q_in for self-attention)
 *   V = kv_in Wv^T + bv
 *   for each sentence b and head h (columns h*dk .. h*dk+dk-1 of Q, K, V; dk = d / heads):
 *     S = Q_bh K_bh^T / sqrt(dk)                   (Tq, Tk)
 *     P = softmax over the allowed keys of each row of S; P = 0 exactly elsewhere
 *     A = P * keep / (1 - dropout)                 (A = P without dropout)
 *     C_bh = A V_bh                                (Tq, dk): columns h*dk.. of the context C
 *   y = C Wo^T + bo           y (Tq, B, d)
 *
 * Allowed keys of query i of sentence b: j < len_k[b], and j <= i when causal.
 *
 * Weight orientation: every W is (d_out, d_in) = (d, d), used as y = x W^T + b, which is
 * PyTorch's nn.Linear and nn.MultiheadAttention: in_proj_weight (3d, d) is Wq, Wk, Wv
 * stacked (rows 0..d-1, d..2d-1, 2d..3d-1), in_proj_bias likewise bq, bk, bv, and
 * out_proj.weight / .bias are Wo / bo. Head h reads columns h*dk.. of Q, K, V, as
 * PyTorch's reshape (T, B*heads, dk) does.
 *
 * Layout: time-major, row (t*B + b). Sentence b's rows are a matrix with row stride B*d
 * starting at row b, head h's slice of it starts at column h*dk, so every per (sentence,
 * head) product is one sgemm with leading dimension B*d and no copies.
 *
 * Query rows at padding (i >= len_q[b]): the forward pass writes y = 0 there (their
 * attention is not computed; P is 0 outside each sentence's len_q x len_k block), so the
 * output does not depend on them and backward ignores dy there. Their Q rows, and so dq_in at
 * those rows, get zero gradient. Padding keys (j >= len_k[b]) get P = 0, dK = dV = 0.
 * A row with no allowed key (only len_k[b] = 0) gets P = 0 and context 0.
 *
 * Example: d 8, heads 2 (dk 4), self-attention over Tq = Tk = 4, B = 3, len (4, 2, 3),
 * causal: P (B, heads, 4, 4) is lower-triangular, and for b = 1 columns 2, 3 are 0.
 */
#ifndef MHA_H
#define MHA_H

#include "kernels/prepared.h" /* defines: PreparedWeight */

typedef struct {
    int d, heads;   /* model width and number of heads; heads divides d */
    int causal;     /* 1: query i attends only to keys j <= i */
    float dropout;  /* attention dropout probability p, used when a keep mask is given */
} MhaConfig;

typedef struct {
    const float *Wq, *bq, *Wk, *bk, *Wv, *bv, *Wo, *bo; /* W (d, d), b (d) */
    /* Decoding: the W prepared once (packed or int8, kernels/prepared.h), or NULL
     * (training): the forward passes' products then use them. */
    const PreparedWeight *pq, *pk, *pv, *po;
} MhaParams;

typedef struct {
    float *Wq, *bq, *Wk, *bk, *Wv, *bv, *Wo, *bo;       /* accumulated (+=); bk gets nothing:
                                                           its true gradient is 0 (mha.c) */
} MhaGrads;

/* What forward keeps for backward, and backward's scratch; carved by mha_workspace_init
 * out of mha_workspace_floats(...) floats for one batch shape. */
typedef struct {
    int Tq, Tk, B;
    float *Q, *ctx, *dctx, *dQ;   /* (Tq, B, d) each */
    float *K, *V, *dK, *dV;       /* (Tk, B, d) each */
    float *P;                     /* (B, heads, Tq, Tk): the probabilities, before dropout */
    float *A, *dA;                /* (Tq, Tk) scratch for one (sentence, head) */
} MhaWorkspace;

/* Floats the workspace needs for queries Tq, keys Tk, batch B. */
long mha_workspace_floats(const MhaConfig *cfg, int Tq, int Tk, int B);
/* Points ws's tensors into buf (mha_workspace_floats floats). */
void mha_workspace_init(MhaWorkspace *ws, const MhaConfig *cfg, float *buf, int Tq, int Tk, int B);

/* The probabilities of sentence b, head h: a (Tq, Tk) matrix, row stride Tk (for
 * alignments: average them over heads). */
static inline const float *mha_probs(const MhaWorkspace *ws, const MhaConfig *cfg, int b, int h)
{
    return ws->P + ((long)b * cfg->heads + h) * ws->Tq * ws->Tk;
}

/*   q_in (Tq, B, d), kv_in (Tk, B, d) (may be q_in); len_q, len_k (B);
 *   keep (B, heads, Tq, Tk) of 0/1 or NULL: NULL = no dropout; otherwise kept
 *   probabilities are scaled by 1 / (1 - cfg->dropout).
 *   writes y (Tq, B, d) and ws's forward tensors (Q, K, V, P, ctx). */
void mha_forward(const MhaConfig *cfg, const MhaParams *p, const float *q_in, const float *kv_in,
                 const int *len_q, const int *len_k, const unsigned char *keep, float *y,
                 MhaWorkspace *ws, int Tq, int Tk, int B);

/* The same over a packed layout: sentence b's positions are rows start[b] ..
 * start[b] + len[b] - 1 of q_in (rows_q, d) and kv_in (rows_k, d) (y likewise), no
 * padding rows at all; Tq, Tk are the longest lengths (the keep mask and P are still
 * (B, heads, Tq, Tk), each sentence's block at its top left). This is how the
 * Transformer trains: nothing is computed for padding. */
void mha_forward_packed(const MhaConfig *cfg, const MhaParams *p, const float *q_in, const float *kv_in,
                        const int *start_q, const int *len_q, int rows_q, const int *start_k, const int *len_k,
                        int rows_k, const unsigned char *keep, float *y, MhaWorkspace *ws, int Tq, int Tk, int B);

/*   dy (Tq, B, d); the rest as given to / left by mha_forward.
 *   accumulates (+=) dq_in (Tq, B, d), dkv_in (Tk, B, d) (may be dq_in: for
 *   self-attention both paths add into it) and g. */
void mha_backward(const MhaConfig *cfg, const MhaParams *p, MhaGrads *g, const float *dy,
                  const float *q_in, const float *kv_in, const int *len_q, const int *len_k,
                  const unsigned char *keep, float *dq_in, float *dkv_in, MhaWorkspace *ws,
                  int Tq, int Tk, int B);
/* The backward pass of mha_forward_packed (dy, dq_in, dkv_in packed as its tensors). */
void mha_backward_packed(const MhaConfig *cfg, const MhaParams *p, MhaGrads *g, const float *dy,
                         const float *q_in, const float *kv_in, const int *start_q, const int *len_q, int rows_q,
                         const int *start_k, const int *len_k, int rows_k, const unsigned char *keep,
                         float *dq_in, float *dkv_in, MhaWorkspace *ws, int Tq, int Tk, int B);

/* ------------------------------------------------------------ incremental decoding
 * One decoder self-attention step at position t with cached keys and values: the new
 * query x (B, d) is position t of B rows, its K and V rows are appended to the caches at
 * position t, and it attends to cache positions 0..t (causal by construction; every
 * position < t of a decoded prefix is real, so no lengths). Equal to row t of the causal
 * mha_forward over positions 0..t (no dropout).
 *
 *   Kc, Vc (Tmax, R, d) time-major caches of R rows, positions 0..t-1 filled by earlier
 *   steps; x's row b is cache row rows[b] (rows NULL: b, and R = B), so a step may run
 *   on some of the rows only (the others' caches stay as they are);
 *   writes position t of those cache rows, y (B, d) and probs (B, heads, t+1) (row
 *   stride t+1); work: mha_step_work_floats(cfg, B) floats. */
long mha_step_work_floats(const MhaConfig *cfg, int B);
void mha_step_forward(const MhaConfig *cfg, const MhaParams *p, const float *x, int t, float *Kc, float *Vc,
                      const int *rows, int R, float *y, float *probs, float *work, int B);

/* Encoder-decoder attention for decoding: the memory's keys and values are projected
 * once per batch (mha_project_kv), then every step attends one query row to them
 * (mha_cross_step_forward). Equal to the rows of mha_forward at real queries
 * (cfg->causal is ignored: a decoder step may see the whole source).
 *
 *   mha_project_kv: kv_in (Tk, B, d) -> writes K, V (Tk, B, d).
 *   mha_cross_step_forward: x (B, d); K, V (Tk, n_src, d) from mha_project_kv over
 *   n_src sources, len_k (n_src) their lengths; query row b reads source src[b] (src
 *   NULL: b, and n_src = B), so the K rows of a beam search share their source's;
 *   writes y (B, d) and probs (B, heads, Tk) (0 at padding keys);
 *   work: mha_step_work_floats(cfg, B) floats. */
void mha_project_kv(const MhaConfig *cfg, const MhaParams *p, const float *kv_in, float *K, float *V, int Tk, int B);
void mha_cross_step_forward(const MhaConfig *cfg, const MhaParams *p, const float *x, const float *K,
                            const float *V, const int *src, int n_src, const int *len_k, float *y, float *probs,
                            float *work, int Tk, int B);
#endif
