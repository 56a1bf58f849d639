/* test_attention.c — both attention kernels, one decoder step, with padded source rows.
 *
 * Bahdanau. Forward: the weights are 0 exactly at masked positions, each row sums to 1,
 * and they match a double-precision evaluation of softmax(v . tanh(k_j + q)).
 * Backward: dkeys, denc, dq, dv against central finite differences of
 * L = sum_i w_i * ctx_i (so dctx = w). A (the attention width) differs from H and every
 * row stride (q, ctx, dctx, dq) is wider than its row, so that mixing up A and H or a
 * stride shows.
 *
 * Dot product (Luong), the same way for global, scaled, local windows and keys == enc
 * (luong_dot, where dkeys and denc are one buffer): weights and ctx against a
 * double-precision evaluation of the contract, exact zeros outside the window and at
 * padding, untouched stride gaps, and dkeys, denc, dq, dpos against finite differences.
 * Window centres are >= 0.2 from every window edge so a step of 1e-2 never changes the
 * window. Then exact cases: a window wider than the sentence is global times the
 * Gaussian, integer centres include both edges |j - p| = D, scores near 1000 stay finite,
 * and a tiny example whose forward and backward were worked out by hand.
 */
#include <string.h>

#include "layers/attention.h" /* defines: attention_bahdanau_forward/_backward, DotAttention,
                          attention_dot_forward/_backward */
#include "check.h"     /* defines: CHECK, check_close, check_report */
#include "gradcheck.h" /* defines: check_grad, fill_uniform, weighted_sum */
#include "base/util.h"      /* defines: Rng */

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
                               c->ctx, LD_CTX, S, B, B, A, H);
    return weighted_sum(c->w, c->ctx, B, H, LD_CTX);
}

/* ================================================================ dot product */

enum { DS = 6, DB = 3, DH = 7, DLD_Q = DH + 2, DLD_CTX = DH + 3, DLD_DCTX = DH + 1, DLD_DQ = DH + 2 };

typedef struct {
    DotAttention cfg;
    float *keys;   /* own_keys, or enc itself for luong_dot */
    float own_keys[DS * DB * DH], enc[DS * DB * DH], q[DB * DLD_Q], pos[DB], w[DB * DLD_CTX];
    float attn[DB * DS], ctx[DB * DLD_CTX];
    int len[DB];
} DotCtx;

static double dot_objective(void *p)
{
    DotCtx *c = p;
    attention_dot_forward(&c->cfg, c->keys, c->enc, c->len, c->q, DLD_Q,
                          c->cfg.window > 0 ? c->pos : NULL, c->attn, c->ctx, DLD_CTX, DS, DB, DB, DH);
    return weighted_sum(c->w, c->ctx, DB, DH, DLD_CTX);
}

/* The contract, in double, written independently of the kernel: in[] says which
 * positions take part, a[] the weights (B, S), ctx[] (B, H). */
static void dot_reference(const DotCtx *c, int *in, double *a, double *ctx)
{
    double D = c->cfg.window;
    for (int b = 0; b < DB; b++) {
        double e[DS], best = -INFINITY, z = 0;
        for (int j = 0; j < DS; j++) {
            in[b * DS + j] = j < c->len[b] && (D == 0 || fabs(j - (double)c->pos[b]) <= D);
            if (!in[b * DS + j]) continue;
            e[j] = 0;
            for (int i = 0; i < DH; i++)
                e[j] += (double)c->q[b * DLD_Q + i] * c->keys[(j * DB + b) * DH + i];
            e[j] *= c->cfg.scale;
            if (e[j] > best) best = e[j];
        }
        for (int j = 0; j < DS; j++)
            if (in[b * DS + j]) z += exp(e[j] - best);
        for (int k = 0; k < DH; k++)
            ctx[b * DH + k] = 0;
        for (int j = 0; j < DS; j++) {
            a[b * DS + j] = 0;
            if (!in[b * DS + j]) continue;
            a[b * DS + j] = exp(e[j] - best) / z;
            if (D > 0) {
                double d = j - (double)c->pos[b], sigma = D / 2;
                a[b * DS + j] *= exp(-d * d / (2 * sigma * sigma));
            }
            for (int k = 0; k < DH; k++)
                ctx[b * DH + k] += a[b * DS + j] * c->enc[(j * DB + b) * DH + k];
        }
    }
}

/* One configuration: random inputs (seeded), forward against the reference, backward
 * against finite differences. alias: keys == enc and dkeys == denc (luong_dot). */
static void dot_case(const char *label, DotAttention cfg, int alias, const float *pos, uint64_t seed)
{
    static DotCtx c;
    Rng rng;
    rng_seed(&rng, seed);
    memset(&c, 0, sizeof c);
    c.cfg = cfg;
    c.keys = alias ? c.enc : c.own_keys;
    fill_uniform(c.own_keys, DS * DB * DH, 1.0f, &rng);
    fill_uniform(c.enc, DS * DB * DH, 1.0f, &rng);
    fill_uniform(c.q, DB * DLD_Q, 1.0f, &rng);
    fill_uniform(c.w, DB * DLD_CTX, 1.0f, &rng);
    for (int b = 0; b < DB; b++)
        c.pos[b] = pos ? pos[b] : 0.0f;
    int len[DB] = {6, 3, 5};
    memcpy(c.len, len, sizeof len);
    for (int i = 0; i < DB * DLD_CTX; i++)
        c.ctx[i] = GAP;
    for (int i = 0; i < DB * DS; i++)
        c.attn[i] = GAP;
    dot_objective(&c);
    printf("dot attention: %s\n", label);

    /* ---------------------------------------------------------------- forward */
    static int in[DB * DS];
    static double a_ref[DB * DS], ctx_ref[DB * DH];
    static float a_want[DB * DS], ctx_got[DB * DH], ctx_want[DB * DH];
    dot_reference(&c, in, a_ref, ctx_ref);
    int outside_zero = 1, ctx_gaps = 1, sums_one = 1;
    for (int b = 0; b < DB; b++) {
        double sum = 0;
        for (int j = 0; j < DS; j++) {
            a_want[b * DS + j] = (float)a_ref[b * DS + j];
            sum += c.attn[b * DS + j];
            if (!in[b * DS + j]) outside_zero &= c.attn[b * DS + j] == 0.0f;
        }
        if (cfg.window == 0) sums_one &= fabs(sum - 1) <= 1e-6;
        for (int k = 0; k < DH; k++) {
            ctx_got[b * DH + k] = c.ctx[b * DLD_CTX + k];
            ctx_want[b * DH + k] = (float)ctx_ref[b * DH + k];
        }
        for (int k = DH; k < DLD_CTX; k++)
            ctx_gaps &= c.ctx[b * DLD_CTX + k] == GAP;
    }
    check_close(c.attn, a_want, DB * DS, 1e-6, "weights = the contract");
    check_close(ctx_got, ctx_want, DB * DH, 1e-6, "ctx = sum_j a_j h_j");
    CHECK(outside_zero, "weights outside the window and at padding are exactly 0");
    CHECK(ctx_gaps, "forward leaves ctx's stride gaps alone");
    if (cfg.window == 0) CHECK(sums_one, "global weights of a row sum to 1");

    /* ---------------------------------------------------------------- backward */
    /* dkeys, denc accumulate: start them non-zero and subtract. dq, dpos are written. */
    static float dkeys_buf[DS * DB * DH], denc[DS * DB * DH], dkeys0[DS * DB * DH], denc0[DS * DB * DH];
    static float dq[DB * DLD_DQ], dctx[DB * DLD_DCTX], dpos[DB], work[DS];
    float *dkeys = alias ? denc : dkeys_buf;
    fill_uniform(dkeys0, DS * DB * DH, 1.0f, &rng);
    fill_uniform(denc0, DS * DB * DH, 1.0f, &rng);
    memcpy(dkeys, dkeys0, sizeof dkeys0);
    memcpy(denc, denc0, sizeof denc0);   /* when aliased, the start value is denc0 */
    for (int i = 0; i < DB * DLD_DQ; i++)
        dq[i] = GAP;
    for (int b = 0; b < DB; b++)
        dpos[b] = GAP;
    for (int b = 0; b < DB; b++)
        for (int k = 0; k < DLD_DCTX; k++)   /* gaps of dctx: huge, to show if read */
            dctx[b * DLD_DCTX + k] = k < DH ? c.w[b * DLD_CTX + k] : 1e6f;
    attention_dot_backward(&c.cfg, dctx, DLD_DCTX, c.keys, c.enc, c.len, c.q, DLD_Q,
                           cfg.window > 0 ? c.pos : NULL, c.attn, dkeys, denc, dq, DLD_DQ,
                           dpos, work, DS, DB, DB, DH);
    for (int i = 0; i < DS * DB * DH; i++) {
        denc[i] -= denc0[i];
        if (!alias) dkeys[i] -= dkeys0[i];
    }

    int dq_gaps = 1, outside_grad_zero = 1;
    for (int b = 0; b < DB; b++) {
        for (int i = DH; i < DLD_DQ; i++)
            dq_gaps &= dq[b * DLD_DQ + i] == GAP;
        for (int j = 0; j < DS; j++)
            for (int k = 0; k < DH && !in[b * DS + j]; k++)
                outside_grad_zero &= dkeys[(j * DB + b) * DH + k] == 0.0f &&
                                     denc[(j * DB + b) * DH + k] == 0.0f;
    }
    CHECK(dq_gaps, "backward leaves dq's stride gaps alone");
    CHECK(outside_grad_zero, "positions outside the window and padding get exactly 0 gradient");

    GradCheckOpts o = {.eps = 1e-2f, .rtol = 1e-2};
    if (!alias) check_grad("dkeys", dot_objective, &c, c.keys, DH, dkeys, DH, DS * DB, DH, &o);
    check_grad(alias ? "denc (= dkeys)" : "denc", dot_objective, &c, c.enc, DH, denc, DH, DS * DB, DH, &o);
    check_grad("dq", dot_objective, &c, c.q, DLD_Q, dq, DLD_DQ, DB, DH, &o);
    if (cfg.window > 0) {
        int moves = 1;
        for (int b = 0; b < DB; b++)
            moves &= dpos[b] != 0.0f;
        CHECK(moves, "dpos is non-zero in every row");
        check_grad("dpos", dot_objective, &c, c.pos, DB, dpos, DB, 1, DB, &o);
    } else {
        CHECK(dpos[0] == 0.0f && dpos[1] == 0.0f && dpos[2] == 0.0f, "dpos is 0 in global mode");
    }
}

/* A window wider than every sentence (D = 8 > S): the window is all real positions, so
 * the weights are exactly the global ones times the Gaussian. Integer centres with D = 1
 * (the monotonic case): both edges j = p +- 1 are in, with weight softmax * e^-2. */
static void dot_exact_windows(void)
{
    static DotCtx g, l;
    Rng rng;
    rng_seed(&rng, 11);
    memset(&g, 0, sizeof g);
    g.cfg = (DotAttention){.scale = 1.0f, .window = 0};
    g.keys = g.own_keys;
    fill_uniform(g.own_keys, DS * DB * DH, 1.0f, &rng);
    fill_uniform(g.enc, DS * DB * DH, 1.0f, &rng);
    fill_uniform(g.q, DB * DLD_Q, 1.0f, &rng);
    int len[DB] = {6, 3, 5};
    memcpy(g.len, len, sizeof len);
    float pos[DB] = {2.5f, 0.0f, 4.3f};
    memcpy(g.pos, pos, sizeof pos);
    dot_objective(&g);

    l = g;
    l.keys = l.own_keys;
    l.cfg.window = 8;
    dot_objective(&l);
    static float want[DB * DS];
    for (int b = 0; b < DB; b++)
        for (int j = 0; j < DS; j++) {
            double d = j - (double)pos[b];
            want[b * DS + j] = (float)(g.attn[b * DS + j] * exp(-d * d / (2 * 4.0 * 4.0)));
        }
    check_close(l.attn, want, DB * DS, 1e-6, "wide window = global x Gaussian");

    float ipos[DB] = {0.0f, 2.0f, 4.0f};
    memcpy(l.pos, ipos, sizeof ipos);
    l.cfg.window = 1;
    dot_objective(&l);
    /* row 0 (len 6): {0, 1}; row 1 (len 3): {1, 2}; row 2 (len 5): {3, 4}. */
    int expect_in[DB][DS] = {{1, 1, 0, 0, 0, 0}, {0, 1, 1, 0, 0, 0}, {0, 0, 0, 1, 1, 0}};
    int pattern = 1, edges = 1;
    for (int b = 0; b < DB; b++) {
        double e[DS], z = 0;
        for (int j = 0; j < DS; j++) {
            pattern &= (l.attn[b * DS + j] != 0.0f) == expect_in[b][j];
            if (!expect_in[b][j]) continue;
            e[j] = 0;
            for (int i = 0; i < DH; i++)
                e[j] += (double)l.q[b * DLD_Q + i] * l.keys[(j * DB + b) * DH + i];
            z += exp(e[j]);
        }
        for (int j = 0; j < DS; j++) {
            if (!expect_in[b][j]) continue;
            double want_a = exp(e[j]) / z * (j == (int)ipos[b] ? 1.0 : exp(-2.0));
            edges &= fabs(l.attn[b * DS + j] - want_a) <= 1e-6;
        }
    }
    CHECK(pattern, "integer centre, D = 1: exactly p-1 .. p+1 within the sentence are non-zero");
    CHECK(edges, "integer centre, D = 1: the edges |j - p| = D get softmax * e^-2");
}

/* S = 3, B = 1, H = 2, len 2 (position 2 is padding holding 100s, which must not matter).
 *   q = (1, 0), k_0 = (0, 5), k_1 = (ln 3, -1)  ->  e = (0, ln 3), a = (1/4, 3/4, 0)
 *   h_0 = (4, 0), h_1 = (0, 8)                  ->  ctx = (1, 6)
 * Backward with dctx = (1, 0): da = (4, 0); denc_0 = (1/4, 0), denc_1 = (3/4, 0);
 *   sum a da = 1, de = (1/4 (4 - 1), 3/4 (0 - 1)) = (3/4, -3/4);
 *   dk_0 = 3/4 q = (3/4, 0), dk_1 = (-3/4, 0); dq = 3/4 k_0 - 3/4 k_1 = (-3/4 ln 3, 9/2).
 * Scaled by 1/2 with k_1 = (2 ln 3, -1): the same weights.
 * Local D = 1 at p = 0.5: window {0, 1}, both Gaussian factors e^-1/2: a = e^-1/2 (1/4, 3/4);
 *   dp = sum_j da_j a_j 4 (j - p) / D^2 = 4 * e^-1/2 / 4 * 4 * (-1/2) = -2 e^-1/2.
 * Scores near 1000 (k_0 = (1000, 0), k_1 = (999, 0)): a = (1, e^-1) / (1 + e^-1), finite. */
static void dot_by_hand(void)
{
    float ln3 = logf(3.0f);
    float keys[3 * 2] = {0, 5, ln3, -1, 100, 100}, enc[3 * 2] = {4, 0, 0, 8, 100, 100};
    float q[2] = {1, 0}, attn[3], ctx[2], pos[1] = {0.5f};
    int len[1] = {2};
    DotAttention global = {.scale = 1.0f, .window = 0};
    attention_dot_forward(&global, keys, enc, len, q, 2, NULL, attn, ctx, 2, 3, 1, 1, 2);
    check_close(attn, (float[]){0.25f, 0.75f, 0.0f}, 3, 1e-6, "by hand: weights");
    check_close(ctx, (float[]){1.0f, 6.0f}, 2, 1e-6, "by hand: ctx");

    float dctx[2] = {1, 0}, dkeys[3 * 2] = {0}, denc[3 * 2] = {0}, dq[2], dpos[1], work[3];
    attention_dot_backward(&global, dctx, 2, keys, enc, len, q, 2, NULL, attn, dkeys, denc, dq, 2,
                           dpos, work, 3, 1, 1, 2);
    check_close(denc, (float[]){0.25f, 0, 0.75f, 0, 0, 0}, 6, 1e-6, "by hand: denc");
    check_close(dkeys, (float[]){0.75f, 0, -0.75f, 0, 0, 0}, 6, 1e-6, "by hand: dkeys");
    check_close(dq, (float[]){-0.75f * ln3, 4.5f}, 2, 1e-6, "by hand: dq");

    DotAttention scaled = {.scale = 0.5f, .window = 0};
    float keys2[3 * 2] = {0, 5, 2 * ln3, -1, 100, 100};
    attention_dot_forward(&scaled, keys2, enc, len, q, 2, NULL, attn, ctx, 2, 3, 1, 1, 2);
    check_close(attn, (float[]){0.25f, 0.75f, 0.0f}, 3, 1e-6, "by hand: scaled weights");

    DotAttention local = {.scale = 1.0f, .window = 1};
    float g = expf(-0.5f);
    attention_dot_forward(&local, keys, enc, len, q, 2, pos, attn, ctx, 2, 3, 1, 1, 2);
    check_close(attn, (float[]){0.25f * g, 0.75f * g, 0.0f}, 3, 1e-6, "by hand: local weights");
    check_close(ctx, (float[]){g, 6 * g}, 2, 1e-6, "by hand: local ctx");
    attention_dot_backward(&local, dctx, 2, keys, enc, len, q, 2, pos, attn, dkeys, denc, dq, 2,
                           dpos, work, 3, 1, 1, 2);
    check_close(dpos, (float[]){-2 * g}, 1, 1e-6, "by hand: dpos");

    float big[3 * 2] = {1000, 0, 999, 0, 100, 100}, z = 1 + expf(-1.0f);
    attention_dot_forward(&global, big, enc, len, q, 2, NULL, attn, ctx, 2, 3, 1, 1, 2);
    check_close(attn, (float[]){1 / z, expf(-1.0f) / z, 0.0f}, 3, 1e-6, "by hand: scores ~1000 stay finite");
}

static void test_dot(void)
{
    float pos2[DB] = {2.3f, 1.6f, 4.4f};   /* D = 2: windows [1,5), [0,3) cut by len, [3,5) */
    float pos1[DB] = {2.3f, 0.6f, 4.2f};   /* D = 1: {2,3}, {0,1}, {4} (5 is padding) */
    dot_case("global", (DotAttention){.scale = 1.0f, .window = 0}, 0, NULL, 5);
    dot_case("scaled", (DotAttention){.scale = 1.0f / sqrtf(DH), .window = 0}, 0, NULL, 6);
    dot_case("global, keys == enc", (DotAttention){.scale = 1.0f, .window = 0}, 1, NULL, 7);
    dot_case("local D = 2", (DotAttention){.scale = 1.0f, .window = 2}, 0, pos2, 8);
    dot_case("local D = 1, scaled, keys == enc", (DotAttention){.scale = 1.0f / sqrtf(DH), .window = 1},
             1, pos1, 9);
    dot_exact_windows();
    dot_by_hand();
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
                                denc, dq, LD_DQ, work, S, B, B, A, H);
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

    test_dot();
    return check_report("test_attention");
}
