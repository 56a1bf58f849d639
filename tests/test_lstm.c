/* test_lstm.c — the LSTM's gates and its padded-sequence pass in both directions.
 *
 *   by hand:  one step with H = 1 whose gate values are exact fractions, forward and
 *             backward, and the same step inside a reverse sequence with padding (so
 *             the gate order i, f, g, o, the weight layout and the reverse layout are
 *             pinned to numbers, not only to self-consistency);
 *   gates:    dgates and dc_prev of lstm_gates_backward against central finite
 *             differences of L = sum w_h * h_out + sum w_c * c_out, every row stride
 *             different from 4H; dc = NULL, and dc_prev == dc in place;
 *   sequence: dx, dh0, dc0 and the four weight gradients of lstm_sequence_backward on a
 *             batch whose rows end in padding, with a gradient arriving at every output
 *             and at the final c, forward and reverse; dc_final = NULL and dc0 ==
 *             dc_final;
 *   reverse:  the reverse direction on a padded batch equals the forward direction on
 *             each sentence's real tokens reversed (pack_padded_sequence semantics).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"     /* defines: CHECK, check_close, check_report */
#include "gradcheck.h" /* defines: check_grad, fill_uniform, weighted_sum */
#include "layers/lstm.h"      /* defines: LstmWeights, lstm_gates_*, lstm_sequence_* */
#include "base/util.h"      /* defines: Rng */

static const GradCheckOpts opts = {.eps = 1e-2f, .rtol = 1e-2};

/* ---------------------------------------------------------------- by hand, H = 1 */

/* Pre-activations (ln 3, -ln 3, ln 2, ln 3) give exact gates, using
 * sigmoid(ln 3) = 3/4, sigmoid(-ln 3) = 1/4, tanh(ln 2) = 3/5, tanh(ln 3) = 4/5:
 *     i = 3/4, f = 1/4, g = 3/5, o = 3/4.
 * With c_prev = 4 ln 3 - 1.8:  c' = c_prev / 4 + 9/20 = ln 3,  h' = 3/4 * 4/5 = 0.6.
 * Backward with dh = 1, dc = 0.5:
 *     dc' total = 0.5 + 1 * o * (1 - tanh(c')^2) = 0.5 + 0.75 * 0.36 = 0.77
 *     d pre_i = 0.77 * g * i(1-i)          = 0.77 * 0.6 * 0.1875   = 0.086625
 *     d pre_f = 0.77 * c_prev * f(1-f)     = 0.144375 * c_prev     = 0.5775 ln 3 - 0.259875
 *     d pre_g = 0.77 * i * (1 - g^2)       = 0.77 * 0.75 * 0.64    = 0.3696
 *     d pre_o = 1 * tanh(c') * o(1-o)      = 0.8 * 0.1875          = 0.15
 *     dc_prev = 0.77 * f                                           = 0.1925
 * and with dc = NULL the total is 0.27, so dc_prev = 0.0675. */
static const double LN2 = 0.69314718055994531, LN3 = 1.0986122886681098;

static void test_by_hand(void)
{
    float pre[4] = {(float)LN3, (float)-LN3, (float)LN2, (float)LN3};
    float gi[4], gh[4] = {0.5f, -0.25f, 0.125f, -1.0f};   /* any split of pre */
    for (int k = 0; k < 4; k++)
        gi[k] = pre[k] - gh[k];
    float c_prev = (float)(4 * LN3 - 1.8), h, c, ifgo[4];
    lstm_gates_forward(gi, 4, gh, 4, &c_prev, &h, &c, ifgo, 1, 1);
    float want_gates[4] = {0.75f, 0.25f, 0.6f, 0.75f}, want_c = (float)LN3, want_h = 0.6f;
    check_close(ifgo, want_gates, 4, 1e-6, "by hand: gates i, f, g, o");
    check_close(&c, &want_c, 1, 1e-6, "by hand: c'");
    check_close(&h, &want_h, 1, 1e-6, "by hand: h'");

    float dh = 1.0f, dc = 0.5f, dg[4], dcp;
    lstm_gates_backward(&dh, &dc, ifgo, &c_prev, &c, dg, 4, &dcp, 1, 1);
    float want_dg[4] = {0.086625f, (float)(0.5775 * LN3 - 0.259875), 0.3696f, 0.15f}, want_dcp = 0.1925f;
    check_close(dg, want_dg, 4, 1e-6, "by hand: d pre-activations");
    check_close(&dcp, &want_dcp, 1, 1e-6, "by hand: dc_prev");
    lstm_gates_backward(&dh, NULL, ifgo, &c_prev, &c, dg, 4, &dcp, 1, 1);
    want_dcp = 0.0675f;
    check_close(&dcp, &want_dcp, 1, 1e-6, "by hand: dc_prev, dc = NULL");

    /* The same step as position 0 of a reverse sequence of S = 2 whose position 1 is
     * padding: position 1 carries the initial state h[2] = -1, c[2] = c_prev, then
     * position 0 sees x = 2 and h = -1, with
     *     gi = 2 * w_ih + b_ih = pre + (0.1, 0.2, 0.3, 0.4),  gh = -w_hh + b_hh = -(0.1, 0.2, 0.3, 0.4).
     * Row k of w_ih / w_hh / the biases is gate k in the order i, f, g, o. */
    float w_ih[4], w_hh[4] = {0.1f, 0.2f, 0.3f, 0.4f}, b_ih[4], b_hh[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; k++) {
        w_ih[k] = pre[k] / 2;
        b_ih[k] = w_hh[k];
    }
    LstmWeights w = {w_ih, w_hh, b_ih, b_hh, 1, 1, NULL, NULL, NULL, NULL};
    float x[2] = {2.0f, 5.0f}, mask[2] = {1, 0};
    float hs[3] = {9, 9, -1}, cs[3] = {9, 9, c_prev}, sgi[8], sgh[8], sifgo[8];
    lstm_sequence_forward(&w, x, mask, hs, cs, sgi, sgh, sifgo, 2, 1, 1, 1);
    float want_hs[3] = {0.6f, -1, -1}, want_cs[3] = {(float)LN3, c_prev, c_prev};
    check_close(hs, want_hs, 3, 1e-6, "by hand: reverse sequence h");
    check_close(cs, want_cs, 3, 1e-6, "by hand: reverse sequence c");
    check_close(sifgo, want_gates, 4, 1e-6, "by hand: reverse sequence gates");
}

/* ---------------------------------------------------------------- one step's gates */

enum { GB = 3, GH = 4, LD_GI = 4 * GH + 1, LD_GH = 4 * GH + 3, LD_DG = 4 * GH + 2 };

typedef struct {
    float gi[GB * LD_GI], gh[GB * LD_GH], c_prev[GB * GH];
    float h_out[GB * GH], c_out[GB * GH], ifgo[GB * 4 * GH];
    float wh[GB * GH], wc[GB * GH];   /* the objective's weights on h_out and c_out */
} GatesCtx;

static double gates_objective(void *p)
{
    GatesCtx *c = p;
    lstm_gates_forward(c->gi, LD_GI, c->gh, LD_GH, c->c_prev, c->h_out, c->c_out, c->ifgo, GB, GH);
    return weighted_sum(c->wh, c->h_out, GB, GH, GH) + weighted_sum(c->wc, c->c_out, GB, GH, GH);
}

static void test_gates(Rng *rng)
{
    static GatesCtx c;
    fill_uniform(c.gi, GB * LD_GI, 1.0f, rng);
    fill_uniform(c.gh, GB * LD_GH, 1.0f, rng);
    fill_uniform(c.c_prev, GB * GH, 1.5f, rng);
    fill_uniform(c.wh, GB * GH, 1.0f, rng);
    fill_uniform(c.wc, GB * GH, 1.0f, rng);
    gates_objective(&c);

    float dg[GB * LD_DG], dc_prev[GB * GH];
    for (int i = 0; i < GB * LD_DG; i++) dg[i] = GAP;
    lstm_gates_backward(c.wh, c.wc, c.ifgo, c.c_prev, c.c_out, dg, LD_DG, dc_prev, GB, GH);
    CHECK(gaps_hold(dg, GB, 4 * GH, LD_DG), "gates backward leaves dgates' stride gaps alone");

    check_grad("gates d gi", gates_objective, &c, c.gi, LD_GI, dg, LD_DG, GB, 4 * GH, &opts);
    check_grad("gates d gh", gates_objective, &c, c.gh, LD_GH, dg, LD_DG, GB, 4 * GH, &opts);
    /* With gi and gh held fixed, c_prev reaches the loss only through c' = f c + i g. */
    check_grad("gates dc_prev", gates_objective, &c, c.c_prev, GH, dc_prev, GH, GB, GH, &opts);

    /* check_grad leaves the caches of its last perturbed evaluation: refresh them. */
    gates_objective(&c);
    lstm_gates_backward(c.wh, c.wc, c.ifgo, c.c_prev, c.c_out, dg, LD_DG, dc_prev, GB, GH);

    /* In place: dc_prev written over dc gives the same numbers. */
    float dc[GB * GH], dg2[GB * LD_DG];
    memcpy(dc, c.wc, sizeof dc);
    lstm_gates_backward(c.wh, dc, c.ifgo, c.c_prev, c.c_out, dg2, LD_DG, dc, GB, GH);
    CHECK(memcmp(dc, dc_prev, sizeof dc) == 0, "gates backward: dc_prev == dc in place");

    /* dc = NULL is dc = 0: against finite differences of the h part alone. */
    memset(c.wc, 0, sizeof c.wc);
    lstm_gates_backward(c.wh, NULL, c.ifgo, c.c_prev, c.c_out, dg, LD_DG, dc_prev, GB, GH);
    check_grad("gates d gi, dc NULL", gates_objective, &c, c.gi, LD_GI, dg, LD_DG, GB, 4 * GH, &opts);
    check_grad("gates dc_prev, dc NULL", gates_objective, &c, c.c_prev, GH, dc_prev, GH, GB, GH, &opts);
}

/* ---------------------------------------------------------------- a padded sequence */

enum { S = 5, B = 3, IN = 3, H = 4, G = 4 * H };

typedef struct {
    float w_ih[G * IN], w_hh[G * H], b_ih[G], b_hh[G];
    LstmWeights w;
    float x[S * B * IN], mask[S * B];
    float h[(S + 1) * B * H], c[(S + 1) * B * H];  /* the initial state is an input */
    float gi[S * B * G], gh[S * B * G], ifgo[S * B * G];
    float wt[S * B * H];   /* the objective's weights on the outputs */
    float wc[B * H];       /* ... and on the final c */
    int reverse;
} SeqCtx;

/* Block t of a (S+1, B, H) state array; where the outputs, the initial and the final
 * state live (see lstm.h). */
static float *block(float *a, int t) { return a + (long)t * B * H; }
static float *outputs(SeqCtx *c) { return block(c->h, c->reverse ? 0 : 1); }
static int initial_at(const SeqCtx *c) { return c->reverse ? S : 0; }
static int final_at(const SeqCtx *c) { return c->reverse ? 0 : S; }

static double seq_objective(void *p)
{
    SeqCtx *c = p;
    lstm_sequence_forward(&c->w, c->x, c->mask, c->h, c->c, c->gi, c->gh, c->ifgo, S, B, c->reverse, 1);
    return weighted_sum(c->wt, outputs(c), S * B, H, H) + weighted_sum(c->wc, block(c->c, final_at(c)), B, H, H);
}

/* The backward pass's outputs for one call. */
typedef struct {
    float dx[S * B * IN], dh0[B * H], dc0[B * H];
    float w_ih[G * IN], w_hh[G * H], b_ih[G], b_hh[G];
} SeqGrads;

/* Runs backward with the objective's incoming gradients (dh = wt, copied since it is
 * consumed), weight gradients starting at zero. dc_final: the c gradient to pass, or
 * NULL; alias_dc0: pass the dc0 buffer itself as dc_final, filled with wc. */
static void seq_backward(SeqCtx *c, float *dc_final, int alias_dc0, SeqGrads *r)
{
    static float dh[S * B * H], dgates[S * B * G];
    memset(r, 0, sizeof *r);
    memcpy(dh, c->wt, sizeof dh);
    if (alias_dc0) {
        memcpy(r->dc0, c->wc, sizeof r->dc0);
        dc_final = r->dc0;
    }
    LstmWeights g = {r->w_ih, r->w_hh, r->b_ih, r->b_hh, IN, H, NULL, NULL, NULL, NULL};
    lstm_sequence_backward(&c->w, &g, c->x, c->mask, c->h, c->c, c->ifgo, dh, dc_final,
                           r->dx, r->dh0, r->dc0, dgates, S, B, c->reverse);
}

static void test_sequence(Rng *rng, int reverse)
{
    static SeqCtx c;
    const char *dir = reverse ? "rev" : "fwd";
    char label[80];
    c.reverse = reverse;
    c.w = (LstmWeights){c.w_ih, c.w_hh, c.b_ih, c.b_hh, IN, H, NULL, NULL, NULL, NULL};
    fill_uniform(c.w_ih, G * IN, 0.5f, rng);
    fill_uniform(c.w_hh, G * H, 0.5f, rng);
    fill_uniform(c.b_ih, G, 0.5f, rng);
    fill_uniform(c.b_hh, G, 0.5f, rng);
    fill_uniform(c.x, S * B * IN, 1.0f, rng);
    /* non-zero initial state so that dh0 and dc0 are non-trivial */
    fill_uniform(block(c.h, initial_at(&c)), B * H, 0.5f, rng);
    fill_uniform(block(c.c, initial_at(&c)), B * H, 1.0f, rng);
    fill_uniform(c.wt, S * B * H, 1.0f, rng);
    fill_uniform(c.wc, B * H, 1.0f, rng);
    int len[B] = {5, 3, 1};                        /* rows 1 and 2 end in padding */
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            c.mask[t * B + b] = t < len[b];
    seq_objective(&c);

    /* Forward, the states at padded positions repeat the state after the last real
     * token (block len); reverse, they repeat the initial state (block S). */
    int carried = 1;
    for (int b = 1; b < B; b++) {
        int from = reverse ? S : len[b];
        for (int t = len[b]; t < S; t++) {
            int at = reverse ? t : t + 1;
            carried &= memcmp(block(c.h, at) + b * H, block(c.h, from) + b * H, sizeof(float) * H) == 0;
            carried &= memcmp(block(c.c, at) + b * H, block(c.c, from) + b * H, sizeof(float) * H) == 0;
        }
    }
    snprintf(label, sizeof label, "seq %s: padding carries h and c through unchanged", dir);
    CHECK(carried, label);

    static SeqGrads r;
    seq_backward(&c, c.wc, 0, &r);

    int pad_dx_zero = 1;
    for (int b = 1; b < B; b++)
        for (int t = len[b]; t < S; t++)
            for (int k = 0; k < IN; k++)
                pad_dx_zero &= r.dx[(t * B + b) * IN + k] == 0.0f;
    snprintf(label, sizeof label, "seq %s: dx is exactly 0 at padded steps", dir);
    CHECK(pad_dx_zero, label);

    /* Weight gradients accumulate: a second call adds the same again. */
    {
        static SeqGrads twice;
        float dh[S * B * H], dgates[S * B * G];
        memcpy(&twice, &r, sizeof twice);
        memcpy(dh, c.wt, sizeof dh);
        LstmWeights g = {twice.w_ih, twice.w_hh, twice.b_ih, twice.b_hh, IN, H, NULL, NULL, NULL, NULL};
        lstm_sequence_backward(&c.w, &g, c.x, c.mask, c.h, c.c, c.ifgo, dh, c.wc,
                               twice.dx, twice.dh0, twice.dc0, dgates, S, B, reverse);
        float doubled[G * H];
        for (int i = 0; i < G * H; i++)
            doubled[i] = 2 * r.w_hh[i];
        snprintf(label, sizeof label, "seq %s: weight gradients accumulate", dir);
        check_close(twice.w_hh, doubled, G * H, 1e-6, label);
    }

    const char *names[7] = {"dx", "dh0", "dc0", "dw_ih", "dw_hh", "db_ih", "db_hh"};
    float *xs[7] = {c.x, block(c.h, initial_at(&c)), block(c.c, initial_at(&c)), c.w_ih, c.w_hh, c.b_ih, c.b_hh};
    float *grads[7] = {r.dx, r.dh0, r.dc0, r.w_ih, r.w_hh, r.b_ih, r.b_hh};
    long rows[7] = {S * B, B, B, G, G, 1, 1}, cols[7] = {IN, H, H, IN, H, G, G};
    for (int i = 0; i < 7; i++) {
        snprintf(label, sizeof label, "seq %s %s", dir, names[i]);
        check_grad(label, seq_objective, &c, xs[i], cols[i], grads[i], cols[i], rows[i], cols[i], &opts);
    }

    /* check_grad leaves the caches of its last perturbed evaluation: refresh them. */
    seq_objective(&c);
    seq_backward(&c, c.wc, 0, &r);

    /* dc0 == dc_final: the same numbers. */
    static SeqGrads alias;
    seq_backward(&c, NULL, 1, &alias);
    snprintf(label, sizeof label, "seq %s: dc0 == dc_final in place", dir);
    CHECK(memcmp(&alias, &r, sizeof r) == 0, label);

    /* dc_final = NULL is a zero final-c gradient: against finite differences of the
     * objective without its c term. */
    static SeqGrads nul;
    memset(c.wc, 0, sizeof c.wc);
    seq_backward(&c, NULL, 0, &nul);
    snprintf(label, sizeof label, "seq %s dc0, dc_final NULL", dir);
    check_grad(label, seq_objective, &c, block(c.c, initial_at(&c)), H, nul.dc0, H, B, H, &opts);
    snprintf(label, sizeof label, "seq %s dw_hh, dc_final NULL", dir);
    check_grad(label, seq_objective, &c, c.w_hh, H, nul.w_hh, H, G, H, &opts);
}

/* ---------------------------------------------------------------- reverse = reversed input */

/* The reverse direction over a padded batch from a zero initial state, as the encoder
 * runs it, must give for each sentence of length n exactly what the forward direction
 * gives on that sentence alone with its n real tokens in reverse order: the state at
 * position t is the forward state after n - t tokens, so the final state (block 0) is
 * the forward final state. Padding values of x are garbage on purpose. */
static void test_reverse_is_reversed_forward(Rng *rng)
{
    static float w_ih[G * IN], w_hh[G * H], b_ih[G], b_hh[G];
    static float x[S * B * IN], mask[S * B], h[(S + 1) * B * H], c[(S + 1) * B * H];
    static float gi[S * B * G], gh[S * B * G], ifgo[S * B * G];
    static float x1[S * IN], mask1[S], h1[(S + 1) * H], c1[(S + 1) * H], gi1[S * G], gh1[S * G], ifgo1[S * G];
    LstmWeights w = {w_ih, w_hh, b_ih, b_hh, IN, H, NULL, NULL, NULL, NULL};
    fill_uniform(w_ih, G * IN, 0.5f, rng);
    fill_uniform(w_hh, G * H, 0.5f, rng);
    fill_uniform(b_ih, G, 0.5f, rng);
    fill_uniform(b_hh, G, 0.5f, rng);
    fill_uniform(x, S * B * IN, 1.0f, rng);
    fill_uniform(h, S * B * H, 9.0f, rng);          /* overwritten everywhere */
    fill_uniform(c, S * B * H, 9.0f, rng);
    memset(h + S * B * H, 0, sizeof(float) * B * H);
    memset(c + S * B * H, 0, sizeof(float) * B * H);
    int len[B] = {2, 5, 4};
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            mask[t * B + b] = t < len[b];
    lstm_sequence_forward(&w, x, mask, h, c, gi, gh, ifgo, S, B, 1, 1);
    /* keep 0 (decoding: no backward) reuses one position's gh and ifgo rows: the same
     * states, bit for bit. */
    static float h0[(S + 1) * B * H], c0[(S + 1) * B * H], gh0[B * G], ifgo0[B * G];
    memset(h0, 0, sizeof h0);
    memset(c0, 0, sizeof c0);
    lstm_sequence_forward(&w, x, mask, h0, c0, gi, gh0, ifgo0, S, B, 1, 0);
    CHECK(memcmp(h0, h, sizeof(float) * S * B * H) == 0 && memcmp(c0, c, sizeof(float) * S * B * H) == 0,
          "keep 0: the states of keep 1, bit for bit, in B rows of gates");

    for (int b = 0; b < B; b++) {
        int n = len[b];
        for (int s = 0; s < n; s++) {
            memcpy(x1 + s * IN, x + ((n - 1 - s) * B + b) * IN, sizeof(float) * IN);
            mask1[s] = 1.0f;
        }
        memset(h1, 0, sizeof(float) * H);
        memset(c1, 0, sizeof(float) * H);
        lstm_sequence_forward(&w, x1, mask1, h1, c1, gi1, gh1, ifgo1, n, 1, 0, 1);
        float got[2 * S * H], want[2 * S * H];
        for (int t = 0; t < n; t++) {
            memcpy(got + t * H, h + (t * B + b) * H, sizeof(float) * H);
            memcpy(got + (S + t) * H, c + (t * B + b) * H, sizeof(float) * H);
            memcpy(want + t * H, h1 + (n - t) * H, sizeof(float) * H);
            memcpy(want + (S + t) * H, c1 + (n - t) * H, sizeof(float) * H);
        }
        /* trailing padding of the batch keeps the zero initial state */
        for (int t = n; t < S; t++) {
            memcpy(got + t * H, h + (t * B + b) * H, sizeof(float) * H);
            memcpy(got + (S + t) * H, c + (t * B + b) * H, sizeof(float) * H);
            memset(want + t * H, 0, sizeof(float) * H);
            memset(want + (S + t) * H, 0, sizeof(float) * H);
        }
        char label[64];
        snprintf(label, sizeof label, "reverse = reversed forward, row %d (h, c)", b);
        check_close(got, want, 2L * S * H, 1e-6, label);
    }
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 11);
    test_by_hand();
    test_gates(&rng);
    test_sequence(&rng, 0);
    test_sequence(&rng, 1);
    test_reverse_is_reversed_forward(&rng);
    return check_report("test_lstm");
}
