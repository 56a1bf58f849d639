/* test_packseq.c — the packed recurrent layers (gru_packed_*, lstm_packed_*) against the
 * padded, masked ones (gru_sequence_*, lstm_sequence_*), which test_gru, test_lstm and
 * the PyTorch fixtures check: the same states at every real position, the same final
 * states, and the same gradients (weights, inputs, initial state), in both directions,
 * with a non-zero initial state and gradients from outside on the final states. The
 * rows have lengths 5, 5, 3, 2, 1 and 1, so a reverse step mixes rows that go on with
 * rows that start, and a forward step ends several rows at once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "layers/gru.h"
#include "layers/lstm.h"
#include "base/util.h"

enum { B = 6, S = 5, IN = 3, H = 4 };
static const int len[B] = {5, 5, 3, 2, 1, 1};   /* longest first, as packseq.h wants */

static int off[S + 1], N;
static Rng rng;

static float *randn(long n, float scale)
{
    float *a = xcalloc(n, sizeof(float));
    for (long i = 0; i < n; i++)
        a[i] = scale * rng_normal(&rng);
    return a;
}

static float *zeros(long n) { return xcalloc(n, sizeof(float)); }

static void make_offsets(void)
{
    off[0] = 0;
    for (int t = 0; t < S; t++) {
        int n = 0;
        for (int b = 0; b < B; b++)
            n += len[b] > t;
        off[t + 1] = off[t] + n;
    }
    N = off[S];
}

/* Packed row of (t, b), or -1 on padding. */
static long packed_row(int t, int b) { return t < len[b] ? off[t] + b : -1; }

/* The padded block of the state after position t (the layouts of gru.h / lstm.h). */
static long padded_after(int t, int reverse) { return (long)(reverse ? t : t + 1) * B * H; }

/* The padded state after each real position, gathered into the packed order. */
static void padded_to_packed(float *out, const float *h, int reverse)
{
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            if (packed_row(t, b) >= 0)
                memcpy(out + packed_row(t, b) * H, h + padded_after(t, reverse) + (long)b * H, sizeof(float) * H);
}

/* Each row's final state: padded h[S] forward (carried through the padding), h[0]
 * reverse; packed at the row's last position forward, at position 0 reverse. */
static void finals(float *pad_out, float *pack_out, const float *hp, const float *hk, int reverse)
{
    for (int b = 0; b < B; b++) {
        memcpy(pad_out + b * H, hp + (reverse ? 0 : (long)S * B * H) + (long)b * H, sizeof(float) * H);
        long r = reverse ? packed_row(0, b) : packed_row(len[b] - 1, b);
        memcpy(pack_out + b * H, hk + (B + r) * H, sizeof(float) * H);
    }
}

/* x and the outside gradient, padded (S, B, ·) with zeros on the padding, and packed. */
typedef struct {
    float *x_pad, *x_pack, *dh_pad, *dh_pack, *dfin, *dcfin, *init_h, *init_c;
} Inputs;

static Inputs make_inputs(void)
{
    Inputs in;
    in.x_pad = zeros((long)S * B * IN);
    in.x_pack = zeros((long)N * IN);
    in.dh_pad = zeros((long)S * B * H);
    in.dh_pack = zeros((long)N * H);
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++) {
            long r = packed_row(t, b);
            if (r < 0) continue;
            for (int k = 0; k < IN; k++)
                in.x_pad[((long)t * B + b) * IN + k] = in.x_pack[r * IN + k] = rng_normal(&rng);
            for (int k = 0; k < H; k++)
                in.dh_pad[((long)t * B + b) * H + k] = in.dh_pack[r * H + k] = rng_normal(&rng);
        }
    in.dfin = randn(B * H, 1);
    in.dcfin = randn(B * H, 1);
    in.init_h = randn(B * H, 0.5f);
    in.init_c = randn(B * H, 0.5f);
    return in;
}

static void free_inputs(Inputs *in)
{
    free(in->x_pad), free(in->x_pack), free(in->dh_pad), free(in->dh_pack);
    free(in->dfin), free(in->dcfin), free(in->init_h), free(in->init_c);
}

static float *mask_of(void)
{
    float *m = zeros((long)S * B);
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            m[t * B + b] = t < len[b];
    return m;
}

/* dx of the padded run gathered into the packed order. */
static void dx_to_packed(float *out, const float *dx)
{
    for (int t = 0; t < S; t++)
        for (int b = 0; b < B; b++)
            if (packed_row(t, b) >= 0)
                memcpy(out + packed_row(t, b) * IN, dx + ((long)t * B + b) * IN, sizeof(float) * IN);
}

static void test_gru(int reverse)
{
    const char *dir = reverse ? "reverse" : "forward";
    char what[128];
    long G = 3 * H;
    float *w_ih = randn(G * IN, 0.5f), *w_hh = randn(G * H, 0.5f), *b_ih = randn(G, 0.5f), *b_hh = randn(G, 0.5f);
    GruWeights w = {w_ih, w_hh, b_ih, b_hh, IN, H, NULL, NULL};
    GruWeights gp = {zeros(G * IN), zeros(G * H), zeros(G), zeros(G), IN, H, NULL, NULL};
    GruWeights gk = {zeros(G * IN), zeros(G * H), zeros(G), zeros(G), IN, H, NULL, NULL};
    Inputs in = make_inputs();
    float *mask = mask_of();

    /* Padded: the initial state in block 0 (forward) or S (reverse). */
    float *hp = zeros((long)(S + 1) * B * H), *gip = zeros(S * B * G), *ghp = zeros(S * B * G), *rp = zeros(S * B * G);
    memcpy(hp + (reverse ? (long)S * B * H : 0), in.init_h, sizeof(float) * B * H);
    gru_sequence_forward(&w, in.x_pad, mask, hp, gip, ghp, rp, S, B, reverse, 1);
    /* Packed. */
    float *hk = zeros((long)(B + N) * H), *gik = zeros(N * G), *ghk = zeros(N * G), *rk = zeros(N * G);
    float *stage = zeros((long)N * H + B * H);
    memcpy(hk, in.init_h, sizeof(float) * B * H);
    gru_packed_forward(&w, in.x_pack, hk, gik, ghk, rk, off, S, B, reverse, stage);

    float *a = zeros((long)N * H), *fa = zeros(B * H), *fb = zeros(B * H);
    padded_to_packed(a, hp, reverse);
    snprintf(what, sizeof what, "gru %s: the state after every real position", dir);
    CHECK(check_close(a, hk + (long)B * H, (long)N * H, 1e-6, what), what);
    finals(fa, fb, hp, hk, reverse);
    snprintf(what, sizeof what, "gru %s: each row's final state", dir);
    CHECK(check_close(fa, fb, B * H, 1e-6, what), what);

    /* Backward: the final states' gradient enters padded at the final position (S-1
     * forward, carried back through the padding; 0 reverse), packed as dh_final. */
    float *dhp = zeros((long)S * B * H);
    memcpy(dhp, in.dh_pad, sizeof(float) * S * B * H);
    float *fin = dhp + (reverse ? 0 : (long)(S - 1) * B * H);
    for (int i = 0; i < B * H; i++)
        fin[i] += in.dfin[i];
    float *dxp = zeros((long)S * B * IN), *dh0p = zeros(B * H), *dgip = zeros(S * B * G), *dghp = zeros(S * B * G);
    gru_sequence_backward(&w, &gp, in.x_pad, mask, hp, ghp, rp, dhp, dxp, dh0p, dgip, dghp, S, B, reverse);
    float *dxk = zeros((long)N * IN), *dh0k = zeros(B * H), *dgik = zeros(N * G), *dghk = zeros(N * G);
    gru_packed_backward(&w, &gk, in.x_pack, hk, ghk, rk, in.dh_pack, in.dfin, dxk, dh0k, dgik, dghk, off, S, B,
                        reverse, stage);
    float *dxa = zeros((long)N * IN);
    dx_to_packed(dxa, dxp);
    snprintf(what, sizeof what, "gru %s: dx at every real position", dir);
    CHECK(check_close(dxa, dxk, (long)N * IN, 1e-5, what), what);
    snprintf(what, sizeof what, "gru %s: the initial state's gradient", dir);
    CHECK(check_close(dh0p, dh0k, B * H, 1e-5, what), what);
    snprintf(what, sizeof what, "gru %s: w_ih, w_hh, b_ih, b_hh gradients", dir);
    CHECK(check_close(gp.w_ih, gk.w_ih, G * IN, 1e-5, what) && check_close(gp.w_hh, gk.w_hh, G * H, 1e-5, what) &&
              check_close(gp.b_ih, gk.b_ih, G, 1e-5, what) && check_close(gp.b_hh, gk.b_hh, G, 1e-5, what),
          what);

    free(w_ih), free(w_hh), free(b_ih), free(b_hh);
    free(gp.w_ih), free(gp.w_hh), free(gp.b_ih), free(gp.b_hh);
    free(gk.w_ih), free(gk.w_hh), free(gk.b_ih), free(gk.b_hh);
    free(hp), free(gip), free(ghp), free(rp), free(hk), free(gik), free(ghk), free(rk), free(stage);
    free(a), free(fa), free(fb), free(dhp), free(dxp), free(dh0p), free(dgip), free(dghp);
    free(dxk), free(dh0k), free(dgik), free(dghk), free(dxa), free(mask);
    free_inputs(&in);
}

static void test_lstm(int reverse)
{
    const char *dir = reverse ? "reverse" : "forward";
    char what[128];
    long G = 4 * H;
    float *w_ih = randn(G * IN, 0.5f), *w_hh = randn(G * H, 0.5f), *b_ih = randn(G, 0.5f), *b_hh = randn(G, 0.5f);
    LstmWeights w = {w_ih, w_hh, b_ih, b_hh, IN, H, NULL, NULL};
    LstmWeights gp = {zeros(G * IN), zeros(G * H), zeros(G), zeros(G), IN, H, NULL, NULL};
    LstmWeights gk = {zeros(G * IN), zeros(G * H), zeros(G), zeros(G), IN, H, NULL, NULL};
    Inputs in = make_inputs();
    float *mask = mask_of();

    long init = reverse ? (long)S * B * H : 0;
    float *hp = zeros((long)(S + 1) * B * H), *cp = zeros((long)(S + 1) * B * H);
    float *gip = zeros(S * B * G), *ghp = zeros(S * B * G), *ifp = zeros(S * B * G);
    memcpy(hp + init, in.init_h, sizeof(float) * B * H);
    memcpy(cp + init, in.init_c, sizeof(float) * B * H);
    lstm_sequence_forward(&w, in.x_pad, mask, hp, cp, gip, ghp, ifp, S, B, reverse, 1);
    float *hk = zeros((long)(B + N) * H), *ck = zeros((long)(B + N) * H);
    float *gik = zeros(N * G), *ghk = zeros(N * G), *ifk = zeros(N * G), *stage = zeros((long)N * H + 2 * B * H);
    memcpy(hk, in.init_h, sizeof(float) * B * H);
    memcpy(ck, in.init_c, sizeof(float) * B * H);
    lstm_packed_forward(&w, in.x_pack, hk, ck, gik, ghk, ifk, off, S, B, reverse, stage);

    float *a = zeros((long)N * H), *fa = zeros(B * H), *fb = zeros(B * H);
    padded_to_packed(a, hp, reverse);
    snprintf(what, sizeof what, "lstm %s: h after every real position", dir);
    CHECK(check_close(a, hk + (long)B * H, (long)N * H, 1e-6, what), what);
    padded_to_packed(a, cp, reverse);
    snprintf(what, sizeof what, "lstm %s: c after every real position", dir);
    CHECK(check_close(a, ck + (long)B * H, (long)N * H, 1e-6, what), what);
    finals(fa, fb, cp, ck, reverse);
    snprintf(what, sizeof what, "lstm %s: each row's final c", dir);
    CHECK(check_close(fa, fb, B * H, 1e-6, what), what);

    float *dhp = zeros((long)S * B * H);
    memcpy(dhp, in.dh_pad, sizeof(float) * S * B * H);
    float *fin = dhp + (reverse ? 0 : (long)(S - 1) * B * H);
    for (int i = 0; i < B * H; i++)
        fin[i] += in.dfin[i];
    float *dxp = zeros((long)S * B * IN), *dh0p = zeros(B * H), *dc0p = zeros(B * H), *dgp = zeros(S * B * G);
    lstm_sequence_backward(&w, &gp, in.x_pad, mask, hp, cp, ifp, dhp, in.dcfin, dxp, dh0p, dc0p, dgp, S, B, reverse);
    float *dxk = zeros((long)N * IN), *dh0k = zeros(B * H), *dc0k = zeros(B * H), *dgk = zeros(N * G);
    lstm_packed_backward(&w, &gk, in.x_pack, hk, ck, ifk, in.dh_pack, in.dfin, in.dcfin, dxk, dh0k, dc0k, dgk, off, S,
                         B, reverse, stage);
    float *dxa = zeros((long)N * IN);
    dx_to_packed(dxa, dxp);
    snprintf(what, sizeof what, "lstm %s: dx at every real position", dir);
    CHECK(check_close(dxa, dxk, (long)N * IN, 1e-5, what), what);
    snprintf(what, sizeof what, "lstm %s: the initial h and c gradients", dir);
    CHECK(check_close(dh0p, dh0k, B * H, 1e-5, what) && check_close(dc0p, dc0k, B * H, 1e-5, what), what);
    snprintf(what, sizeof what, "lstm %s: w_ih, w_hh, b_ih, b_hh gradients", dir);
    CHECK(check_close(gp.w_ih, gk.w_ih, G * IN, 1e-5, what) && check_close(gp.w_hh, gk.w_hh, G * H, 1e-5, what) &&
              check_close(gp.b_ih, gk.b_ih, G, 1e-5, what) && check_close(gp.b_hh, gk.b_hh, G, 1e-5, what),
          what);

    free(w_ih), free(w_hh), free(b_ih), free(b_hh);
    free(gp.w_ih), free(gp.w_hh), free(gp.b_ih), free(gp.b_hh);
    free(gk.w_ih), free(gk.w_hh), free(gk.b_ih), free(gk.b_hh);
    free(hp), free(cp), free(gip), free(ghp), free(ifp), free(hk), free(ck), free(gik), free(ghk), free(ifk);
    free(stage), free(a), free(fa), free(fb), free(dhp), free(dxp), free(dh0p), free(dc0p), free(dgp);
    free(dxk), free(dh0k), free(dc0k), free(dgk), free(dxa), free(mask);
    free_inputs(&in);
}

int main(void)
{
    rng_seed(&rng, 7);
    make_offsets();
    CHECK(N == 17 && off[1] - off[0] == B && off[S] - off[S - 1] == 2, "packed layout: 17 tokens, 6 rows at 0, 2 at 4");
    for (int reverse = 0; reverse < 2; reverse++) {
        test_gru(reverse);
        test_lstm(reverse);
    }
    return check_report("test_packseq");
}
