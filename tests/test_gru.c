/* test_gru.c — the GRU's gates and its padded-sequence pass, against central finite
 * differences of L = sum_i w_i * out_i (so the incoming gradient is w).
 *
 *   gates:    dgi, dgh, dh_prev of gru_gates_backward, with every row stride different
 *             from 3H so that a stride mix-up reads or writes the wrong columns;
 *   sequence: dx, dh0 and the four weight gradients of gru_sequence_backward on a batch
 *             whose rows end in padding, with a gradient arriving at every step.
 */
#include <string.h>

#include "check.h"     /* defines: CHECK, check_report */
#include "gradcheck.h" /* defines: check_grad, fill_uniform, weighted_sum */
#include "gru.h"       /* defines: GruWeights, gru_gates_*, gru_sequence_* */
#include "util.h"      /* defines: Rng */

static const GradCheckOpts opts = {.eps = 1e-2f, .rtol = 1e-2};
#define GAP 777.0f /* fills the gaps of strided outputs; backward must leave it there */

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

static int gaps_hold(const float *m, int rows, int cols, int ld)
{
    int ok = 1;
    for (int r = 0; r < rows; r++)
        for (int k = cols; k < ld; k++)
            ok &= m[r * ld + k] == GAP;
    return ok;
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
    float h[(S + 1) * B * H];     /* h[0] is the initial state, an input */
    float gi[S * B * G], gh[S * B * G], rzn[S * B * G];
    float wt[S * B * H];          /* the objective's weights on h[1..S] */
} SeqCtx;

static double seq_objective(void *p)
{
    SeqCtx *c = p;
    gru_sequence_forward(&c->w, c->x, c->mask, c->h, c->gi, c->gh, c->rzn, S, B);
    return weighted_sum(c->wt, c->h + B * H, S * B, H, H);
}

static void test_sequence(Rng *rng)
{
    static SeqCtx c;
    c.w = (GruWeights){c.w_ih, c.w_hh, c.b_ih, c.b_hh, IN, H};
    fill_uniform(c.w_ih, G * IN, 0.5f, rng);
    fill_uniform(c.w_hh, G * H, 0.5f, rng);
    fill_uniform(c.b_ih, G, 0.5f, rng);
    fill_uniform(c.b_hh, G, 0.5f, rng);
    fill_uniform(c.x, S * B * IN, 1.0f, rng);
    fill_uniform(c.h, B * H, 0.5f, rng);   /* non-zero h0 so that dh0 is non-trivial */
    fill_uniform(c.wt, S * B * H, 1.0f, rng);
    int len[B] = {5, 3, 1};                /* rows 1 and 2 end in padding */
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            c.mask[t * B + b] = t < len[b];
    seq_objective(&c);

    int carried = 1;
    for (int b = 1; b < B; b++)
        for (int t = len[b]; t < S; t++)
            carried &= memcmp(c.h + ((t + 1) * B + b) * H, c.h + (len[b] * B + b) * H, sizeof(float) * H) == 0;
    CHECK(carried, "padding carries the last real state through unchanged");

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
    GruWeights g = {gw_ih, gw_hh, gb_ih, gb_hh, IN, H};
    memcpy(dh, c.wt, sizeof dh);
    gru_sequence_backward(&c.w, &g, c.x, c.mask, c.h, c.gh, c.rzn, dh, dx, dh0, dgi, dgh, S, B);
    for (int i = 0; i < 4; i++)
        for (long k = 0; k < count[i]; k++)
            acc[i][k] -= before[i][k];

    int pad_dx_zero = 1;
    for (int b = 1; b < B; b++)
        for (int t = len[b]; t < S; t++)
            for (int k = 0; k < IN; k++)
                pad_dx_zero &= dx[(t * B + b) * IN + k] == 0.0f;
    CHECK(pad_dx_zero, "dx is exactly 0 at padded steps");

    check_grad("seq dx", seq_objective, &c, c.x, IN, dx, IN, S * B, IN, &opts);
    check_grad("seq dh0", seq_objective, &c, c.h, H, dh0, H, B, H, &opts);
    check_grad("seq dw_ih", seq_objective, &c, c.w_ih, IN, gw_ih, IN, G, IN, &opts);
    check_grad("seq dw_hh", seq_objective, &c, c.w_hh, H, gw_hh, H, G, H, &opts);
    check_grad("seq db_ih", seq_objective, &c, c.b_ih, G, gb_ih, G, 1, G, &opts);
    check_grad("seq db_hh", seq_objective, &c, c.b_hh, G, gb_hh, G, 1, G, &opts);
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 7);
    test_gates(&rng);
    test_sequence(&rng);
    return check_report("test_gru");
}
