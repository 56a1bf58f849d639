/* test_gru.c — the GRU's gates and its padded-sequence pass, against central finite
 * differences of L = sum_i w_i * out_i (so the incoming gradient is w).
 *
 *   gates:    dgi, dgh, dh_prev of gru_gates_backward, with every row stride different
 *             from 3H so that a stride mix-up reads or writes the wrong columns;
 *   sequence: dx, dh0 and the four weight gradients of gru_sequence_backward on a batch
 *             whose rows end in padding, with a gradient arriving at every step, in
 *             both directions;
 *   reverse:  the reverse direction on a padded batch equals the forward direction on
 *             each sentence's real tokens reversed, from the same initial state
 *             (pack_padded_sequence semantics).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"     /* defines: CHECK, check_report */
#include "gradcheck.h" /* defines: check_grad, fill_uniform, weighted_sum */
#include "layers/gru.h"       /* defines: GruWeights, gru_gates_*, gru_sequence_* */
#include "base/util.h"      /* defines: Rng */

static const GradCheckOpts opts = {.eps = 1e-2f, .rtol = 1e-2};

/* ---------------------------------------------------------------- one step's gates */

enum { GB = 3, GH = 4, LD_GI = 3 * GH + 1, LD_GH = 3 * GH + 3, LD_DGI = 3 * GH + 2, LD_DGH = 4 * GH };

typedef struct {
    float gi[GB * LD_GI], gh[GB * LD_GH], h_prev[GB * GH];
    float h_out[GB * GH], rzn[GB * 3 * GH], w[GB * GH];
} GatesCtx;

static double gates_objective(void *p)
{
    GatesCtx *c = p;
    gru_gates_forward(c->gi, LD_GI, c->gh, LD_GH, c->h_prev, c->h_out, c->rzn, GB, GH);
    return weighted_sum(c->w, c->h_out, GB, GH, GH);
}

static void test_gates(Rng *rng)
{
    static GatesCtx c;
    fill_uniform(c.gi, GB * LD_GI, 1.0f, rng);
    fill_uniform(c.gh, GB * LD_GH, 1.0f, rng);
    fill_uniform(c.h_prev, GB * GH, 0.8f, rng);
    fill_uniform(c.w, GB * GH, 1.0f, rng);
    gates_objective(&c);

    /* A hand-evaluated entry of the forward: row 1, unit 2, in double. */
    {
        const float *i_ = c.gi + 1 * LD_GI, *h_ = c.gh + 1 * LD_GH;
        int k = 2;
        double r = 1 / (1 + exp(-((double)i_[k] + h_[k])));
        double z = 1 / (1 + exp(-((double)i_[GH + k] + h_[GH + k])));
        double n = tanh((double)i_[2 * GH + k] + r * h_[2 * GH + k]);
        float want = (float)((1 - z) * n + z * c.h_prev[1 * GH + k]);
        check_close(&c.h_out[1 * GH + k], &want, 1, 1e-6, "gates forward, one entry");
    }

    float dgi[GB * LD_DGI], dgh[GB * LD_DGH], dh_prev[GB * GH];
    for (int i = 0; i < GB * LD_DGI; i++) dgi[i] = GAP;
    for (int i = 0; i < GB * LD_DGH; i++) dgh[i] = GAP;
    gru_gates_backward(c.w, c.rzn, c.gh, LD_GH, c.h_prev, dgi, LD_DGI, dgh, LD_DGH, dh_prev, GB, GH);
    CHECK(gaps_hold(dgi, GB, 3 * GH, LD_DGI), "gates backward leaves dgi's stride gaps alone");
    CHECK(gaps_hold(dgh, GB, 3 * GH, LD_DGH), "gates backward leaves dgh's stride gaps alone");

    check_grad("gates dgi", gates_objective, &c, c.gi, LD_GI, dgi, LD_DGI, GB, 3 * GH, &opts);
    check_grad("gates dgh", gates_objective, &c, c.gh, LD_GH, dgh, LD_DGH, GB, 3 * GH, &opts);
    /* With gh held fixed, dL/dh_prev is exactly the direct part dh * z that backward returns. */
    check_grad("gates dh_prev", gates_objective, &c, c.h_prev, GH, dh_prev, GH, GB, GH, &opts);
}

/* ---------------------------------------------------------------- a padded sequence */

enum { S = 5, B = 3, IN = 3, H = 4, G = 3 * H };

typedef struct {
    float w_ih[G * IN], w_hh[G * H], b_ih[G], b_hh[G];
    GruWeights w;
    float x[S * B * IN], mask[S * B];
    float h[(S + 1) * B * H];     /* the initial state (h[0], or h[S] reverse) is an input */
    float gi[S * B * G], gh[S * B * G], rzn[S * B * G];
    float wt[S * B * H];          /* the objective's weights on the outputs */
    int reverse;
} SeqCtx;

/* Where the outputs (S, B, H) and the initial state (B, H) live in h (see gru.h). */
static float *outputs(SeqCtx *c) { return c->h + (c->reverse ? 0 : B * H); }
static float *initial(SeqCtx *c) { return c->h + (c->reverse ? S : 0) * B * H; }

static double seq_objective(void *p)
{
    SeqCtx *c = p;
    gru_sequence_forward(&c->w, c->x, c->mask, c->h, c->gi, c->gh, c->rzn, S, B, c->reverse, 1);
    return weighted_sum(c->wt, outputs(c), S * B, H, H);
}

static void test_sequence(Rng *rng, int reverse)
{
    static SeqCtx c;
    const char *dir = reverse ? "reverse" : "forward";
    char label[64];
    c.reverse = reverse;
    c.w = (GruWeights){c.w_ih, c.w_hh, c.b_ih, c.b_hh, IN, H, NULL, NULL, NULL, NULL};
    fill_uniform(c.w_ih, G * IN, 0.5f, rng);
    fill_uniform(c.w_hh, G * H, 0.5f, rng);
    fill_uniform(c.b_ih, G, 0.5f, rng);
    fill_uniform(c.b_hh, G, 0.5f, rng);
    fill_uniform(c.x, S * B * IN, 1.0f, rng);
    fill_uniform(initial(&c), B * H, 0.5f, rng);   /* non-zero so that dh0 is non-trivial */
    fill_uniform(c.wt, S * B * H, 1.0f, rng);
    int len[B] = {5, 3, 1};                        /* rows 1 and 2 end in padding */
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            c.mask[t * B + b] = t < len[b];
    seq_objective(&c);

    /* Forward, padded outputs repeat the state after the last real token h[len];
     * reverse, they repeat the initial state h[S] (the run has not started yet). */
    int carried = 1;
    const float *out = outputs(&c);
    for (int b = 1; b < B; b++) {
        const float *want = c.h + ((reverse ? S : len[b]) * B + b) * H;
        for (int t = len[b]; t < S; t++)
            carried &= memcmp(out + (t * B + b) * H, want, sizeof(float) * H) == 0;
    }
    snprintf(label, sizeof label, "%s: padding carries the state through unchanged", dir);
    CHECK(carried, label);

    /* Backward: dh is consumed, the weight gradients accumulate (start them non-zero). */
    static float dh[S * B * H], dx[S * B * IN], dh0[B * H], dgi[S * B * G], dgh[S * B * G];
    static float gw_ih[G * IN], gw_hh[G * H], gb_ih[G], gb_hh[G];
    float *acc[4] = {gw_ih, gw_hh, gb_ih, gb_hh};
    static float before[4][G * IN > G * H ? G * IN : G * H];
    long count[4] = {G * IN, G * H, G, G};
    for (int i = 0; i < 4; i++) {
        fill_uniform(acc[i], count[i], 1.0f, rng);
        memcpy(before[i], acc[i], sizeof(float) * count[i]);
    }
    GruWeights g = {gw_ih, gw_hh, gb_ih, gb_hh, IN, H, NULL, NULL, NULL, NULL};
    memcpy(dh, c.wt, sizeof dh);
    gru_sequence_backward(&c.w, &g, c.x, c.mask, c.h, c.gh, c.rzn, dh, dx, dh0, dgi, dgh, S, B, reverse);
    for (int i = 0; i < 4; i++)
        for (long k = 0; k < count[i]; k++)
            acc[i][k] -= before[i][k];

    int pad_dx_zero = 1;
    for (int b = 1; b < B; b++)
        for (int t = len[b]; t < S; t++)
            for (int k = 0; k < IN; k++)
                pad_dx_zero &= dx[(t * B + b) * IN + k] == 0.0f;
    snprintf(label, sizeof label, "%s: dx is exactly 0 at padded steps", dir);
    CHECK(pad_dx_zero, label);

    const char *names[6] = {"dx", "dh0", "dw_ih", "dw_hh", "db_ih", "db_hh"};
    float *xs[6] = {c.x, initial(&c), c.w_ih, c.w_hh, c.b_ih, c.b_hh};
    float *grads[6] = {dx, dh0, gw_ih, gw_hh, gb_ih, gb_hh};
    long rows[6] = {S * B, B, G, G, 1, 1}, cols[6] = {IN, H, IN, H, G, G};
    for (int i = 0; i < 6; i++) {
        snprintf(label, sizeof label, "seq %s %s", reverse ? "rev" : "fwd", names[i]);
        check_grad(label, seq_objective, &c, xs[i], cols[i], grads[i], cols[i], rows[i], cols[i], &opts);
    }
}

/* ---------------------------------------------------------------- reverse = reversed input */

/* The reverse direction over a padded batch (here from a zero initial state, as the
 * encoder runs it) must give, for each sentence of length n, exactly what the forward
 * direction gives on that sentence alone with its n real tokens in reverse order: the
 * output at position t is the forward output after n - t tokens, and the final state
 * h[0] is the forward final state. Padding values of x are garbage on purpose. */
static void test_reverse_is_reversed_forward(Rng *rng)
{
    static float w_ih[G * IN], w_hh[G * H], b_ih[G], b_hh[G];
    static float x[S * B * IN], mask[S * B], h[(S + 1) * B * H], gi[S * B * G], gh[S * B * G], rzn[S * B * G];
    static float x1[S * IN], mask1[S], h1[(S + 1) * H], gi1[S * G], gh1[S * G], rzn1[S * G];
    GruWeights w = {w_ih, w_hh, b_ih, b_hh, IN, H, NULL, NULL, NULL, NULL};
    fill_uniform(w_ih, G * IN, 0.5f, rng);
    fill_uniform(w_hh, G * H, 0.5f, rng);
    fill_uniform(b_ih, G, 0.5f, rng);
    fill_uniform(b_hh, G, 0.5f, rng);
    fill_uniform(x, S * B * IN, 1.0f, rng);
    fill_uniform(h, S * B * H, 9.0f, rng);         /* outputs: overwritten everywhere */
    memset(h + S * B * H, 0, sizeof(float) * B * H);
    int len[B] = {2, 5, 4};
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            mask[t * B + b] = t < len[b];
    gru_sequence_forward(&w, x, mask, h, gi, gh, rzn, S, B, 1, 1);
    /* keep 0 (decoding: no backward) reuses one position's gh and rzn rows: the same
     * states, bit for bit. */
    static float h0[(S + 1) * B * H], gh0[B * G], rzn0[B * G];
    memset(h0, 0, sizeof h0);
    gru_sequence_forward(&w, x, mask, h0, gi, gh0, rzn0, S, B, 1, 0);
    CHECK(memcmp(h0, h, sizeof(float) * S * B * H) == 0, "keep 0: the states of keep 1, bit for bit, in B rows of gates");

    for (int b = 0; b < B; b++) {
        int n = len[b];
        for (int s = 0; s < n; s++) {
            memcpy(x1 + s * IN, x + ((n - 1 - s) * B + b) * IN, sizeof(float) * IN);
            mask1[s] = 1.0f;
        }
        memset(h1, 0, sizeof(float) * H);
        gru_sequence_forward(&w, x1, mask1, h1, gi1, gh1, rzn1, n, 1, 0, 1);
        float got[S * H], want[S * H];
        for (int t = 0; t < n; t++) {
            memcpy(got + t * H, h + (t * B + b) * H, sizeof(float) * H);
            memcpy(want + t * H, h1 + (n - t) * H, sizeof(float) * H);
        }
        char label[64];
        snprintf(label, sizeof label, "reverse = reversed forward, row %d", b);
        check_close(got, want, (long)n * H, 1e-6, label);
    }
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 7);
    test_gates(&rng);
    test_sequence(&rng, 0);
    test_sequence(&rng, 1);
    test_reverse_is_reversed_forward(&rng);
    return check_report("test_gru");
}
