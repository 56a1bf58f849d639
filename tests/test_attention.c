/* test_attention.c — Bahdanau attention, one decoder step, with padded source rows.
 *
 * Forward: the weights are 0 exactly at masked positions, each row sums to 1, and they
 * match a double-precision evaluation of softmax(v . tanh(k_j + q)).
 * Backward: dkeys, denc, dq, dv against central finite differences of
 * L = sum_i w_i * ctx_i (so dctx = w). A (the attention width) differs from H and every
 * row stride (q, ctx, dctx, dq) is wider than its row, so that mixing up A and H or a
 * stride shows.
 */
#include <string.h>

#include "attention.h" /* defines: attention_bahdanau_forward/_backward */
#include "check.h"     /* defines: CHECK, check_close, check_report */
#include "gradcheck.h" /* defines: check_grad, fill_uniform, weighted_sum */
#include "util.h"      /* defines: Rng */

enum { S = 4, B = 3, A = 4, H = 5, LD_Q = A + 2, LD_CTX = H + 3, LD_DCTX = H + 1, LD_DQ = A + 3 };
#define GAP 777.0f

typedef struct {
    float keys[S * B * A], enc[S * B * H], mask[S * B], q[B * LD_Q], v[A];
    float attn[B * S], ctx[B * LD_CTX], w[B * LD_CTX];
} Ctx;

static double objective(void *p)
{
    Ctx *c = p;
    attention_bahdanau_forward(c->keys, c->enc, c->mask, c->q, LD_Q, c->v, c->attn,
                               c->ctx, LD_CTX, S, B, A, H);
    return weighted_sum(c->w, c->ctx, B, H, LD_CTX);
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 3);
    static Ctx c;
    fill_uniform(c.keys, S * B * A, 1.0f, &rng);
    fill_uniform(c.enc, S * B * H, 1.0f, &rng);
    fill_uniform(c.q, B * LD_Q, 1.0f, &rng);
    fill_uniform(c.v, A, 1.5f, &rng);       /* large enough for uneven weights */
    fill_uniform(c.w, B * LD_CTX, 1.0f, &rng);
    int len[B] = {4, 2, 3};
    for (int j = 0; j < S; j++)
        for (int b = 0; b < B; b++)
            c.mask[j * B + b] = j < len[b];
    for (int i = 0; i < B * LD_CTX; i++)
        c.ctx[i] = GAP;
    objective(&c);

    /* ---------------------------------------------------------------- forward */
    int masked_zero = 1, ctx_gaps = 1;
    for (int b = 0; b < B; b++) {
        double sum = 0, e[S], z = 0, want[S];
        for (int j = 0; j < S; j++)
            sum += c.attn[b * S + j];
        CHECK(fabs(sum - 1) <= 1e-6, "attention weights of a row sum to 1");
        for (int j = len[b]; j < S; j++)
            masked_zero &= c.attn[b * S + j] == 0.0f;
        for (int k = H; k < LD_CTX; k++)
            ctx_gaps &= c.ctx[b * LD_CTX + k] == GAP;
        for (int j = 0; j < len[b]; j++) {
            e[j] = 0;
            for (int i = 0; i < A; i++)
                e[j] += c.v[i] * tanh((double)c.keys[(j * B + b) * A + i] + c.q[b * LD_Q + i]);
            z += exp(e[j]);
        }
        float got[S], wantf[S];
        for (int j = 0; j < len[b]; j++) {
            want[j] = exp(e[j]) / z;
            wantf[j] = (float)want[j];
            got[j] = c.attn[b * S + j];
        }
        check_close(got, wantf, len[b], 1e-6, "weights = softmax(v.tanh(k+q))");
    }
    CHECK(masked_zero, "weights at masked source positions are exactly 0");
    CHECK(ctx_gaps, "forward leaves ctx's stride gaps alone");

    /* ---------------------------------------------------------------- backward */
    /* dv, dkeys, denc accumulate: start them non-zero and subtract. dq is written. */
    static float dv[A], dkeys[S * B * A], denc[S * B * H], dq[B * LD_DQ], work[S + A];
    static float dv0[A], dkeys0[S * B * A], denc0[S * B * H], dctx[B * LD_DCTX];
    fill_uniform(dv0, A, 1.0f, &rng);
    fill_uniform(dkeys0, S * B * A, 1.0f, &rng);
    fill_uniform(denc0, S * B * H, 1.0f, &rng);
    memcpy(dv, dv0, sizeof dv);
    memcpy(dkeys, dkeys0, sizeof dkeys);
    memcpy(denc, denc0, sizeof denc);
    for (int i = 0; i < B * LD_DQ; i++)
        dq[i] = GAP;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < LD_DCTX; k++)   /* gaps of dctx: huge, to show if read */
            dctx[b * LD_DCTX + k] = k < H ? c.w[b * LD_CTX + k] : 1e6f;
    attention_bahdanau_backward(dctx, LD_DCTX, c.keys, c.enc, c.mask, c.q, LD_Q, c.v, c.attn, dv, dkeys,
                                denc, dq, LD_DQ, work, S, B, A, H);
    for (int i = 0; i < A; i++) dv[i] -= dv0[i];
    for (int i = 0; i < S * B * A; i++) dkeys[i] -= dkeys0[i];
    for (int i = 0; i < S * B * H; i++) denc[i] -= denc0[i];

    int dq_gaps = 1, masked_grad_zero = 1;
    for (int b = 0; b < B; b++) {
        for (int i = A; i < LD_DQ; i++)
            dq_gaps &= dq[b * LD_DQ + i] == GAP;
        for (int j = len[b]; j < S; j++) {
            for (int i = 0; i < A; i++)
                masked_grad_zero &= dkeys[(j * B + b) * A + i] == 0.0f;
            for (int k = 0; k < H; k++)
                masked_grad_zero &= denc[(j * B + b) * H + k] == 0.0f;
        }
    }
    CHECK(dq_gaps, "backward leaves dq's stride gaps alone");
    CHECK(masked_grad_zero, "masked positions get exactly 0 in dkeys and denc");

    GradCheckOpts o = {.eps = 1e-2f, .rtol = 1e-2};
    check_grad("dkeys", objective, &c, c.keys, A, dkeys, A, S * B, A, &o);
    check_grad("denc", objective, &c, c.enc, H, denc, H, S * B, H, &o);
    check_grad("dq", objective, &c, c.q, LD_Q, dq, LD_DQ, B, A, &o);
    check_grad("dv", objective, &c, c.v, A, dv, A, 1, A, &o);
    return check_report("test_attention");
}
