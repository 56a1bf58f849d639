/* test_transformer_layers.c — the Transformer's building blocks: layer norm, multi-head
 * attention, the position-wise feed-forward layer and sinusoidal positions.
 *
 * Every input and weight of each kernel against central finite differences of
 * L = sum_i w_i * y_i (so dy = w), on small sizes with uneven lengths (d 8, heads 2,
 * Tq 4, Tk 5, B 3):
 *   layer norm                   dx, dgamma, dbeta
 *   feed-forward (relu, gelu)    dx, dW1, db1, dW2, db2
 *   attention, three cases       dq_in, dkv_in, dWq..dbo
 *     cross     Tq 4, Tk 5, key and query padding
 *     self      causal, q_in == kv_in, one gradient buffer for both paths
 *     dropout   cross with a fixed keep mask, p = 0.25
 * and properties that fail on a wrong mask or normalisation: padding keys and future keys
 * get probability exactly 0, rows of P sum to 1, changing a padding key or a future
 * position leaves the (earlier) outputs bit for bit unchanged, padding query rows of y
 * are 0; layer norm rows have mean 0 and variance var/(var+eps) for gamma 1, beta 0;
 * the decoder step with cached K/V equals the full causal forward's row t, and the
 * encoder-decoder step over projected memory equals the forward's real rows; positions
 * against the formula written another way (exp/log), and a hand example.
 *
 * Then PyTorch (tests/fixtures/transformer_layers.bin, scripts/reference/reference_layers.py):
 * nn.MultiheadAttention with key_padding_mask, cross and causal self-attention, its
 * in_proj_weight split into Wq, Wk, Wv as mha.h documents; nn.LayerNorm; Linear, gelu,
 * Linear. Outputs, probabilities and every gradient to 1e-5 of each tensor's largest entry.
 */
#include <string.h>

#include "check.h"     /* defines: CHECK, check_close, check_report */
#include "layers/ffn.h"       /* defines: ffn_forward/_backward, FfnParams, FfnGrads */
#include "fixture.h"   /* defines: fixture_load, fixture_get, fixture_free */
#include "gradcheck.h" /* defines: check_grad, fill_uniform, weighted_sum */
#include "layers/layernorm.h" /* defines: layernorm_forward/_backward, LAYERNORM_EPS */
#include "layers/mha.h"       /* defines: mha_forward/_backward, mha_step_forward, MhaWorkspace */
#include "layers/posenc.h"    /* defines: posenc_add, posenc_value */
#include "base/util.h"      /* defines: Rng, xcalloc */

static const GradCheckOpts opts = {.eps = 1e-2f, .rtol = 1e-2};

/* ================================================================ layer norm */

enum { LN = 6, LD = 8 };

typedef struct {
    float x[LN * LD], gamma[LD], beta[LD], y[LN * LD], mean[LN], rstd[LN], w[LN * LD];
} LnCtx;

static double ln_objective(void *p)
{
    LnCtx *c = p;
    layernorm_forward(c->y, c->mean, c->rstd, c->x, c->gamma, c->beta, LN, LD);
    return weighted_sum(c->w, c->y, LN, LD, LD);
}

static void test_layernorm(Rng *rng)
{
    static LnCtx c;
    fill_uniform(c.x, LN * LD, 2.0f, rng);
    for (int k = 0; k < LD; k++) c.x[k] += 50.0f; /* a row with a large mean */
    fill_uniform(c.gamma, LD, 1.5f, rng);
    fill_uniform(c.beta, LD, 1.0f, rng);
    fill_uniform(c.w, LN * LD, 1.0f, rng);
    ln_objective(&c);
    float dx[LN * LD], dgamma[LD] = {0}, dbeta[LD] = {0};
    layernorm_backward(dx, dgamma, dbeta, c.w, c.x, c.mean, c.rstd, c.gamma, LN, LD);
    check_grad("layernorm dx", ln_objective, &c, c.x, LD, dx, LD, LN, LD, &opts);
    check_grad("layernorm dgamma", ln_objective, &c, c.gamma, LD, dgamma, LD, 1, LD, &opts);
    check_grad("layernorm dbeta", ln_objective, &c, c.beta, LD, dbeta, LD, 1, LD, &opts);

    /* gamma 1, beta 0: each row has mean 0 and variance var / (var + eps). */
    for (int k = 0; k < LD; k++) { c.gamma[k] = 1; c.beta[k] = 0; }
    ln_objective(&c);
    double worst_mean = 0, worst_var = 0;
    for (int r = 0; r < LN; r++) {
        double m = 0, v = 0, xm = 0, xv = 0;
        for (int k = 0; k < LD; k++) { m += c.y[r * LD + k]; xm += c.x[r * LD + k]; }
        m /= LD; xm /= LD;
        for (int k = 0; k < LD; k++) {
            v += (c.y[r * LD + k] - m) * (c.y[r * LD + k] - m);
            xv += (c.x[r * LD + k] - xm) * (c.x[r * LD + k] - xm);
        }
        v /= LD; xv /= LD;
        worst_mean = fmax(worst_mean, fabs(m));
        worst_var = fmax(worst_var, fabs(v - xv / (xv + LAYERNORM_EPS)));
    }
    printf("  layernorm rows: max |mean| %.3g, max |var - var/(var+eps)| %.3g\n", worst_mean, worst_var);
    CHECK(worst_mean <= 1e-6, "layer norm rows have mean 0");
    CHECK(worst_var <= 1e-5, "layer norm rows have variance var/(var+eps)");

    /* Hand example: (1, 2, 3) -> (-1, 0, 1) * sqrt(3/2) * sqrt((2/3) / (2/3 + eps)). */
    float x3[3] = {1, 2, 3}, g3[3] = {1, 1, 1}, b3[3] = {0, 0, 0}, y3[3], m3, s3;
    layernorm_forward(y3, &m3, &s3, x3, g3, b3, 1, 3);
    double a = 1 / sqrt(2.0 / 3 + LAYERNORM_EPS);
    float want[3] = {(float)-a, 0, (float)a};
    check_close(y3, want, 3, 1e-6, "layernorm (1,2,3) by hand");
}

/* ================================================================ feed-forward */

enum { FN = 6, FD = 8, FF = 16 };

typedef struct {
    FfnActivation act;
    float x[FN * FD], W1[FF * FD], b1[FF], W2[FD * FF], b2[FD];
    float h[FN * FF], a[FN * FF], y[FN * FD], w[FN * FD];
    unsigned char keep[FN * FF];
    float dropout;  /* 0: no keep mask */
} FfnCtx;

static FfnParams ffn_params(FfnCtx *c)
{
    return (FfnParams){c->W1, c->b1, c->W2, c->b2, NULL, NULL};
}

static double ffn_objective(void *p)
{
    FfnCtx *c = p;
    FfnParams fp = ffn_params(c);
    ffn_forward(&fp, c->act, c->x, c->h, c->a, c->y, c->dropout > 0 ? c->keep : NULL, c->dropout, FN, FD, FF);
    return weighted_sum(c->w, c->y, FN, FD, FD);
}

/* The smallest |h|: ReLU's kink must stay out of reach of the finite-difference steps. */
static double min_abs(const float *v, int n)
{
    double m = INFINITY;
    for (int i = 0; i < n; i++)
        m = fmin(m, fabs(v[i]));
    return m;
}

/* With dropout > 0, a fixed keep mask of that rate: the gradient through it. */
static void test_ffn(FfnActivation act, const char *name, float dropout, Rng *rng)
{
    static FfnCtx c;
    c.act = act;
    c.dropout = dropout;
    for (int i = 0; i < FN * FF; i++)
        c.keep[i] = rng_uniform(rng) >= dropout;
    /* Redraw until no pre-activation is within 0.05 of ReLU's kink (a step of eps moves
     * h by at most eps * max|x| = 0.01; a handful of draws suffices). */
    for (int tries = 0; tries < 1000; tries++) {
        fill_uniform(c.x, FN * FD, 1.0f, rng);
        fill_uniform(c.W1, FF * FD, 0.5f, rng);
        fill_uniform(c.b1, FF, 0.5f, rng);
        ffn_objective(&c);
        if (min_abs(c.h, FN * FF) > 0.05) break;
    }
    fill_uniform(c.W2, FD * FF, 0.5f, rng);
    fill_uniform(c.b2, FD, 0.5f, rng);
    fill_uniform(c.w, FN * FD, 1.0f, rng);
    ffn_objective(&c);
    CHECK(act != FFN_RELU || min_abs(c.h, FN * FF) > 0.05, "relu pre-activations away from the kink");

    static float dx[FN * FD], work[FN * FF], gW1[FF * FD], gb1[FF], gW2[FD * FF], gb2[FD];
    memset(gW1, 0, sizeof gW1); memset(gb1, 0, sizeof gb1);
    memset(gW2, 0, sizeof gW2); memset(gb2, 0, sizeof gb2);
    FfnParams fp = ffn_params(&c);
    FfnGrads g = {gW1, gb1, gW2, gb2};
    ffn_backward(&fp, act, &g, c.w, c.x, c.h, c.a, dropout > 0 ? c.keep : NULL, dropout, dx, work, FN, FD, FF);
    char label[80];
    struct { const char *n; float *x, *g; int rows, cols; } t[] = {
        {"dx", c.x, dx, FN, FD}, {"dW1", c.W1, gW1, FF, FD}, {"db1", c.b1, gb1, 1, FF},
        {"dW2", c.W2, gW2, FD, FF}, {"db2", c.b2, gb2, 1, FD},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        snprintf(label, sizeof label, "ffn %s %s", name, t[i].n);
        check_grad(label, ffn_objective, &c, t[i].x, t[i].cols, t[i].g, t[i].cols, t[i].rows, t[i].cols, &opts);
    }

    /* The activation against its definition, in double. */
    double worst = 0;
    for (int i = 0; i < FN * FF; i++) {
        double h = c.h[i], want = act == FFN_RELU ? fmax(h, 0) : h * 0.5 * erfc(-h / sqrt(2.0));
        if (dropout > 0) want = c.keep[i] ? want / (1.0 - dropout) : 0.0;
        worst = fmax(worst, fabs(c.a[i] - want));
    }
    snprintf(label, sizeof label, "ffn %s activation matches its definition", name);
    CHECK(worst <= 1e-6, label);
}

/* ================================================================ attention */

enum { D = 8, HEADS = 2, MB = 3, NPAR = 8 };

typedef struct {
    MhaConfig cfg;
    int Tq, Tk, self;
    float *par[NPAR], *grad[NPAR];  /* Wq bq Wk bk Wv bv Wo bo */
    float *q_in, *kv_in, *dq, *dkv; /* kv_in == q_in and dkv == dq for self-attention */
    float *y, *w, *buf;
    unsigned char *keep;
    int len_q[MB], len_k[MB];
    MhaWorkspace ws;
} MhaCtx;

static MhaParams mha_params(const MhaCtx *c)
{
    return (MhaParams){c->par[0], c->par[1], c->par[2], c->par[3], c->par[4], c->par[5], c->par[6], c->par[7],
                       NULL, NULL, NULL, NULL};
}

static double mha_objective(void *p)
{
    MhaCtx *c = p;
    MhaParams mp = mha_params(c);
    mha_forward(&c->cfg, &mp, c->q_in, c->kv_in, c->len_q, c->len_k, c->keep, c->y, &c->ws, c->Tq, c->Tk, MB);
    return weighted_sum(c->w, c->y, (long)c->Tq * MB, D, D);
}

static void mha_setup(MhaCtx *c, int Tq, int Tk, int self, int causal, float dropout, const int *len_q,
                      const int *len_k, Rng *rng)
{
    memset(c, 0, sizeof *c);
    c->cfg = (MhaConfig){.d = D, .heads = HEADS, .causal = causal, .dropout = dropout};
    c->Tq = Tq; c->Tk = Tk; c->self = self;
    for (int i = 0; i < NPAR; i++) {
        int n = i % 2 ? D : D * D;
        c->par[i] = xcalloc(n, sizeof(float));
        c->grad[i] = xcalloc(n, sizeof(float));
        fill_uniform(c->par[i], n, i % 2 ? 0.3f : 0.6f, rng);
    }
    long nq = (long)Tq * MB * D, nk = (long)Tk * MB * D;
    c->q_in = xcalloc(nq, sizeof(float));
    c->dq = xcalloc(nq, sizeof(float));
    c->kv_in = self ? c->q_in : xcalloc(nk, sizeof(float));
    c->dkv = self ? c->dq : xcalloc(nk, sizeof(float));
    fill_uniform(c->q_in, nq, 1.0f, rng);
    if (!self) fill_uniform(c->kv_in, nk, 1.0f, rng);
    c->y = xcalloc(nq, sizeof(float));
    c->w = xcalloc(nq, sizeof(float));
    fill_uniform(c->w, nq, 1.0f, rng);
    memcpy(c->len_q, len_q, sizeof c->len_q);
    memcpy(c->len_k, len_k, sizeof c->len_k);
    c->buf = xcalloc(mha_workspace_floats(&c->cfg, Tq, Tk, MB), sizeof(float));
    mha_workspace_init(&c->ws, &c->cfg, c->buf, Tq, Tk, MB);
    if (dropout > 0) {
        long n = (long)MB * HEADS * Tq * Tk;
        c->keep = xcalloc(n, 1);
        for (long i = 0; i < n; i++)
            c->keep[i] = rng_uniform(rng) >= dropout;
    }
}

static void mha_free(MhaCtx *c)
{
    for (int i = 0; i < NPAR; i++) { free(c->par[i]); free(c->grad[i]); }
    if (!c->self) { free(c->kv_in); free(c->dkv); }
    free(c->q_in); free(c->dq); free(c->y); free(c->w); free(c->buf); free(c->keep);
}

static void mha_gradcheck(MhaCtx *c, const char *name)
{
    static const char *pn[NPAR] = {"dWq", "dbq", "dWk", "dbk", "dWv", "dbv", "dWo", "dbo"};
    mha_objective(c);
    MhaParams mp = mha_params(c);
    MhaGrads g = {c->grad[0], c->grad[1], c->grad[2], c->grad[3], c->grad[4], c->grad[5], c->grad[6], c->grad[7]};
    mha_backward(&c->cfg, &mp, &g, c->w, c->q_in, c->kv_in, c->len_q, c->len_k, c->keep, c->dq, c->dkv, &c->ws,
                 c->Tq, c->Tk, MB);
    char label[96];
    snprintf(label, sizeof label, "mha %s %s", name, c->self ? "dx" : "dq_in");
    check_grad(label, mha_objective, c, c->q_in, D, c->dq, D, (long)c->Tq * MB, D, &opts);
    if (!c->self) {
        snprintf(label, sizeof label, "mha %s dkv_in", name);
        check_grad(label, mha_objective, c, c->kv_in, D, c->dkv, D, (long)c->Tk * MB, D, &opts);
    }
    for (int i = 0; i < NPAR; i++) {
        if (i == 3) {
            /* bk adds q . bk to every score of a row, which the softmax cancels: the true
             * gradient is 0, and mha_backward adds exactly nothing (not dK's rounding,
             * which Adam would magnify). */
            double worst = 0, ref = 0;
            for (int k = 0; k < D; k++) {
                worst = fmax(worst, fabs(c->grad[3][k]));
                ref = fmax(ref, fabs(c->grad[1][k]));
            }
            snprintf(label, sizeof label, "mha %s: dbk is 0 (max %.2g, max dbq %.2g)", name, worst, ref);
            printf("  %s\n", label);
            CHECK(worst == 0.0, label);
            continue;
        }
        snprintf(label, sizeof label, "mha %s %s", name, pn[i]);
        int rows = i % 2 ? 1 : D;
        check_grad(label, mha_objective, c, c->par[i], D, c->grad[i], D, rows, D, &opts);
    }
}

/* P's masks and normalisation: exact zeros at padding keys (and future keys when causal),
 * rows of real queries summing to 1, rows of padding queries 0, y = 0 at padding
 * queries. */
static void mha_check_probs(MhaCtx *c, const char *name)
{
    mha_objective(c);
    int zeros = 1, future = 1, pad_rows = 1;
    double worst_sum = 0;
    for (int b = 0; b < MB; b++)
        for (int h = 0; h < HEADS; h++) {
            const float *P = mha_probs(&c->ws, &c->cfg, b, h);
            for (int i = 0; i < c->Tq; i++) {
                double s = 0;
                for (int j = 0; j < c->Tk; j++) {
                    float v = P[i * c->Tk + j];
                    s += v;
                    if (j >= c->len_k[b]) zeros &= v == 0.0f;
                    if (c->cfg.causal && j > i) future &= v == 0.0f;
                }
                worst_sum = fmax(worst_sum, fabs(s - (i < c->len_q[b] ? 1 : 0)));
            }
        }
    for (int i = 0; i < c->Tq; i++)
        for (int b = 0; b < MB; b++)
            for (int k = 0; k < D; k++)
                if (i >= c->len_q[b]) pad_rows &= c->y[(i * MB + b) * D + k] == 0.0f;
    char label[80];
    snprintf(label, sizeof label, "mha %s: padding keys get probability exactly 0", name);
    CHECK(zeros, label);
    snprintf(label, sizeof label, "mha %s: future keys get probability exactly 0", name);
    CHECK(future, label);
    snprintf(label, sizeof label, "mha %s: rows of P sum to 1, padding queries' to 0 (worst %.2g)", name, worst_sum);
    CHECK(worst_sum <= 1e-6, label);
    snprintf(label, sizeof label, "mha %s: y is 0 at padding query rows", name);
    CHECK(pad_rows, label);
}

/* Changes kv_in at (position t, sentence b) and says whether y rows i < until of sentence
 * b stayed bit for bit the same (and restores kv_in). */
static int mha_unchanged_after_edit(MhaCtx *c, int t, int b, int until)
{
    long nq = (long)c->Tq * MB * D;
    float *before = xmalloc(sizeof(float) * nq);
    mha_objective(c);
    memcpy(before, c->y, sizeof(float) * nq);
    float *row = c->kv_in + ((long)t * MB + b) * D, saved[D];
    memcpy(saved, row, sizeof saved);
    for (int k = 0; k < D; k++)
        row[k] += 3.0f;
    mha_objective(c);
    int same = 1;
    for (int i = 0; i < until; i++)
        same &= !memcmp(before + ((long)i * MB + b) * D, c->y + ((long)i * MB + b) * D, sizeof(float) * D);
    memcpy(row, saved, sizeof saved);
    free(before);
    return same;
}

static void test_mha(Rng *rng)
{
    MhaCtx c;
    int lq[MB] = {4, 2, 3}, lk[MB] = {5, 3, 2};
    mha_setup(&c, 4, 5, 0, 0, 0.0f, lq, lk, rng);
    mha_gradcheck(&c, "cross");
    mha_check_probs(&c, "cross");
    CHECK(mha_unchanged_after_edit(&c, 3, 1, c.Tq), "mha cross: changing a padding key leaves y unchanged");
    CHECK(!mha_unchanged_after_edit(&c, 1, 1, c.len_q[1]), "mha cross: changing a real key changes y");
    mha_free(&c);

    int ls[MB] = {5, 3, 4};
    mha_setup(&c, 5, 5, 1, 1, 0.0f, ls, ls, rng);
    mha_gradcheck(&c, "self causal");
    mha_check_probs(&c, "self causal");
    CHECK(mha_unchanged_after_edit(&c, 3, 0, 3), "mha causal: changing position 3 leaves outputs 0..2 unchanged");
    CHECK(!mha_unchanged_after_edit(&c, 3, 0, 4), "mha causal: changing position 3 changes output 3");
    mha_free(&c);

    mha_setup(&c, 4, 5, 0, 0, 0.25f, lq, lk, rng);
    mha_gradcheck(&c, "dropout");
    long n = (long)MB * HEADS * c.Tq * c.Tk, dropped = 0;
    for (long i = 0; i < n; i++) dropped += !c.keep[i];
    CHECK(dropped > 0 && dropped < n, "dropout case drops some probabilities, not all");
    /* The mask matters, and a keep mask of all ones with p = 0 is no dropout. */
    mha_objective(&c);
    long nq = (long)c.Tq * MB * D;
    float *y_drop = xmalloc(sizeof(float) * nq);
    memcpy(y_drop, c.y, sizeof(float) * nq);
    unsigned char *keep = c.keep;
    c.keep = NULL;
    mha_objective(&c);
    int differs = memcmp(y_drop, c.y, sizeof(float) * nq) != 0;
    CHECK(differs, "mha dropout: the keep mask changes y");
    memset(keep, 1, n);
    c.keep = keep;
    c.cfg.dropout = 0;
    mha_objective(&c);
    float *y_ones = xmalloc(sizeof(float) * nq);
    memcpy(y_ones, c.y, sizeof(float) * nq);
    c.keep = NULL;
    mha_objective(&c);
    check_close(y_ones, c.y, nq, 0, "mha keep all, p 0 == no dropout");
    c.keep = keep;
    free(y_drop); free(y_ones);
    mha_free(&c);
}

/* The decoder step over cached K/V against the full causal forward, row by row. */
static void test_mha_step(Rng *rng)
{
    enum { T = 5 };
    MhaCtx c;
    int len[MB] = {T, T, T};
    mha_setup(&c, T, T, 1, 1, 0.0f, len, len, rng);
    mha_objective(&c);
    MhaParams mp = mha_params(&c);
    float *Kc = xcalloc(T * MB * D, sizeof(float)), *Vc = xcalloc(T * MB * D, sizeof(float));
    float *y = xcalloc(T * MB * D, sizeof(float)), *probs = xcalloc(MB * HEADS * T, sizeof(float));
    float *work = xcalloc(mha_step_work_floats(&c.cfg, MB), sizeof(float));
    double worst_p = 0;
    for (int t = 0; t < T; t++) {
        mha_step_forward(&c.cfg, &mp, c.q_in + (long)t * MB * D, t, Kc, Vc, NULL, MB, y + (long)t * MB * D, probs, work,
                         MB);
        for (int b = 0; b < MB; b++)
            for (int h = 0; h < HEADS; h++)
                for (int j = 0; j < T; j++) {
                    float full = mha_probs(&c.ws, &c.cfg, b, h)[t * T + j];
                    float step = j <= t ? probs[(b * HEADS + h) * (t + 1) + j] : 0.0f;
                    worst_p = fmax(worst_p, fabs(full - step));
                }
    }
    check_close(y, c.y, T * MB * D, 1e-5, "mha step == causal forward row");
    check_close(Kc, c.ws.K, T * MB * D, 1e-6, "mha step's K cache == forward's K");
    printf("  mha step probabilities: max diff %.3g\n", worst_p);
    CHECK(worst_p <= 1e-6, "mha step probabilities == causal forward's");
    free(Kc); free(Vc); free(y); free(probs); free(work);
    mha_free(&c);
}

/* The cross-attention step over projected memory against mha_forward's real query rows. */
static void test_mha_cross_step(Rng *rng)
{
    enum { TQ = 4, TK = 5 };
    MhaCtx c;
    int lq[MB] = {4, 2, 3}, lk[MB] = {5, 3, 2};
    mha_setup(&c, TQ, TK, 0, 0, 0.0f, lq, lk, rng);
    mha_objective(&c);
    MhaParams mp = mha_params(&c);
    float *K = xcalloc(TK * MB * D, sizeof(float)), *V = xcalloc(TK * MB * D, sizeof(float));
    float *y = xcalloc(TQ * MB * D, sizeof(float)), *probs = xcalloc(MB * HEADS * TK, sizeof(float));
    float *work = xcalloc(mha_step_work_floats(&c.cfg, MB), sizeof(float));
    mha_project_kv(&c.cfg, &mp, c.kv_in, K, V, TK, MB);
    double worst_p = 0;
    for (int i = 0; i < TQ; i++) {
        mha_cross_step_forward(&c.cfg, &mp, c.q_in + (long)i * MB * D, K, V, NULL, MB, c.len_k, y + (long)i * MB * D, probs,
                               work, TK, MB);
        for (int b = 0; b < MB; b++) {
            if (i >= c.len_q[b]) { /* mha_forward zeroes padding queries; the step does not */
                memset(y + ((long)i * MB + b) * D, 0, sizeof(float) * D);
                continue;
            }
            for (int h = 0; h < HEADS; h++)
                for (int j = 0; j < TK; j++)
                    worst_p = fmax(worst_p, fabs(mha_probs(&c.ws, &c.cfg, b, h)[i * TK + j] -
                                                 probs[(b * HEADS + h) * TK + j]));
        }
    }
    check_close(y, c.y, TQ * MB * D, 1e-5, "mha cross step == forward rows");
    printf("  mha cross step probabilities: max diff %.3g\n", worst_p);
    CHECK(worst_p <= 1e-6, "mha cross step probabilities == forward's");
    free(K); free(V); free(y); free(probs); free(work);
    mha_free(&c);
}

/* ================================================================ positions */

static void test_posenc(void)
{
    /* The formula written another way: 1/10000^(2i/d) = exp(-2i ln(10000) / d). */
    enum { T = 7, PB = 2, PD = 6 };
    float x[T * PB * PD], want[T * PB * PD];
    for (int i = 0; i < T * PB * PD; i++)
        x[i] = 0.01f * i;
    for (int t = 0; t < T; t++)
        for (int b = 0; b < PB; b++)
            for (int k = 0; k < PD; k++) {
                double f = exp(-(k / 2 * 2) * log(10000.0) / PD), pos = t + 3;
                int i = (t * PB + b) * PD + k;
                want[i] = (float)(2.0 * x[i] + (k % 2 ? cos(pos * f) : sin(pos * f)));
            }
    posenc_add(x, T, PB, PD, 3, 2.0f);
    check_close(x, want, T * PB * PD, 1e-6, "posenc against exp/log form");
    float ex[4] = {0, 0, 0, 0}, ex_want[4] = {0.84147098f, 0.54030231f, 0.0099998333f, 0.99995000f};
    posenc_add(ex, 1, 1, 4, 1, 1.0f);
    check_close(ex, ex_want, 4, 1e-6, "posenc d 4 pos 1 by hand");
}

/* ================================================================ PyTorch fixture */

#define FIXTURE_TOL 1e-5

static float *fx(Fixture *f, const char *prefix, const char *name)
{
    char full[64];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    return fixture_get(f, full)->data;
}

static void fixture_compare(Fixture *f, const char *prefix, const char *name, const float *got, long n)
{
    char full[64], label[80];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    FixtureTensor *t = fixture_get(f, full);
    snprintf(label, sizeof label, "torch %s", full);
    if (t->n != n) {
        check_failed++;
        fprintf(stderr, "FAIL %s: fixture has %ld entries, the kernel %ld\n", label, t->n, n);
        return;
    }
    check_close_scaled(got, t->data, n, FIXTURE_TOL, label);
}

/* One nn.MultiheadAttention case: in_proj_weight (3d, d) is Wq, Wk, Wv stacked. */
static void fixture_mha(Fixture *f, const char *prefix)
{
    const int *dims = fixture_get(f, prefix[0] == 'c' ? "cross_dims" : "self_dims")->data;
    int Tq = dims[0], Tk = dims[1], Bf = dims[2], d = dims[3], heads = dims[4], causal = dims[5];
    int self = causal; /* the causal case is self-attention (no kv_in records) */
    MhaConfig cfg = {.d = d, .heads = heads, .causal = causal};
    const float *W = fx(f, prefix, "in_proj_weight"), *bias = fx(f, prefix, "in_proj_bias");
    MhaParams p = {W, bias, W + d * d, bias + d, W + 2 * d * d, bias + 2 * d,
                   fx(f, prefix, "out_proj_weight"), fx(f, prefix, "out_proj_bias"), NULL, NULL, NULL, NULL};
    const float *q_in = fx(f, prefix, "q_in"), *kv_in = self ? q_in : fx(f, prefix, "kv_in");
    const int *len_q = (const int *)fx(f, prefix, "len_q"), *len_k = (const int *)fx(f, prefix, "len_k");
    long nq = (long)Tq * Bf * d, nk = (long)Tk * Bf * d;
    float *y = xcalloc(nq, sizeof(float)), *dq = xcalloc(nq, sizeof(float));
    float *dkv = self ? dq : xcalloc(nk, sizeof(float));
    float *gW = xcalloc(3 * d * d, sizeof(float)), *gb = xcalloc(3 * d, sizeof(float));
    float *gWo = xcalloc(d * d, sizeof(float)), *gbo = xcalloc(d, sizeof(float));
    float *buf = xcalloc(mha_workspace_floats(&cfg, Tq, Tk, Bf), sizeof(float));
    MhaWorkspace ws;
    mha_workspace_init(&ws, &cfg, buf, Tq, Tk, Bf);
    MhaGrads g = {gW, gb, gW + d * d, gb + d, gW + 2 * d * d, gb + 2 * d, gWo, gbo};
    mha_forward(&cfg, &p, q_in, kv_in, len_q, len_k, NULL, y, &ws, Tq, Tk, Bf);
    mha_backward(&cfg, &p, &g, fx(f, prefix, "w"), q_in, kv_in, len_q, len_k, NULL, dq, dkv, &ws, Tq, Tk, Bf);
    fixture_compare(f, prefix, "y", y, nq);
    /* PyTorch also attends from padding queries; mha does not (P = 0 on those rows). */
    float *P_real = xcalloc((long)Bf * heads * Tq * Tk, sizeof(float));
    memcpy(P_real, ws.P, sizeof(float) * Bf * heads * Tq * Tk);
    FixtureTensor *want = fixture_get(f, prefix[0] == 'c' ? "cross_P" : "self_P");
    int pad_zero = 1;
    for (int b = 0; b < Bf; b++)
        for (int h = 0; h < heads; h++)
            for (int i = len_q[b]; i < Tq; i++)
                for (int j = 0; j < Tk; j++) {
                    long at = (((long)b * heads + h) * Tq + i) * Tk + j;
                    pad_zero &= P_real[at] == 0.0f;
                    P_real[at] = ((const float *)want->data)[at];
                }
    CHECK(pad_zero, prefix[0] == 'c' ? "mha cross: P is 0 on padding queries" : "mha self: P is 0 on padding queries");
    fixture_compare(f, prefix, "P", P_real, (long)Bf * heads * Tq * Tk);
    free(P_real);
    fixture_compare(f, prefix, "dq_in", dq, nq);
    if (!self) fixture_compare(f, prefix, "dkv_in", dkv, nk);
    fixture_compare(f, prefix, "d_in_proj_weight", gW, 3 * d * d);
    fixture_compare(f, prefix, "d_in_proj_bias", gb, 3 * d);
    fixture_compare(f, prefix, "d_out_proj_weight", gWo, d * d);
    fixture_compare(f, prefix, "d_out_proj_bias", gbo, d);
    if (!self) free(dkv);
    free(y); free(dq); free(gW); free(gb); free(gWo); free(gbo); free(buf);
}

static void fixture_layernorm(Fixture *f)
{
    const int *dims = fixture_get(f, "ln_dims")->data;
    int N = dims[0], d = dims[1];
    float *y = xcalloc((long)N * d, sizeof(float)), *dx = xcalloc((long)N * d, sizeof(float));
    float *mean = xcalloc(N, sizeof(float)), *rstd = xcalloc(N, sizeof(float));
    float *dgamma = xcalloc(d, sizeof(float)), *dbeta = xcalloc(d, sizeof(float));
    const float *x = fx(f, "ln_", "x"), *gamma = fx(f, "ln_", "gamma");
    layernorm_forward(y, mean, rstd, x, gamma, fx(f, "ln_", "beta"), N, d);
    layernorm_backward(dx, dgamma, dbeta, fx(f, "ln_", "w"), x, mean, rstd, gamma, N, d);
    fixture_compare(f, "ln_", "y", y, (long)N * d);
    fixture_compare(f, "ln_", "dx", dx, (long)N * d);
    fixture_compare(f, "ln_", "dgamma", dgamma, d);
    fixture_compare(f, "ln_", "dbeta", dbeta, d);
    free(y); free(dx); free(mean); free(rstd); free(dgamma); free(dbeta);
}

static void fixture_ffn(Fixture *f)
{
    const int *dims = fixture_get(f, "ffn_dims")->data;
    int N = dims[0], d = dims[1], ff = dims[2];
    FfnParams p = {fx(f, "ffn_", "W1"), fx(f, "ffn_", "b1"), fx(f, "ffn_", "W2"), fx(f, "ffn_", "b2"), NULL, NULL};
    float *h = xcalloc((long)N * ff, sizeof(float)), *a = xcalloc((long)N * ff, sizeof(float));
    float *work = xcalloc((long)N * ff, sizeof(float));
    float *y = xcalloc((long)N * d, sizeof(float)), *dx = xcalloc((long)N * d, sizeof(float));
    FfnGrads g = {xcalloc((long)ff * d, sizeof(float)), xcalloc(ff, sizeof(float)),
                  xcalloc((long)d * ff, sizeof(float)), xcalloc(d, sizeof(float))};
    const float *x = fx(f, "ffn_", "x");
    ffn_forward(&p, FFN_GELU, x, h, a, y, NULL, 0.0f, N, d, ff);
    ffn_backward(&p, FFN_GELU, &g, fx(f, "ffn_", "w"), x, h, a, NULL, 0.0f, dx, work, N, d, ff);
    fixture_compare(f, "ffn_", "y", y, (long)N * d);
    fixture_compare(f, "ffn_", "dx", dx, (long)N * d);
    fixture_compare(f, "ffn_", "dW1", g.W1, (long)ff * d);
    fixture_compare(f, "ffn_", "db1", g.b1, ff);
    fixture_compare(f, "ffn_", "dW2", g.W2, (long)d * ff);
    fixture_compare(f, "ffn_", "db2", g.b2, d);
    free(h); free(a); free(work); free(y); free(dx);
    free(g.W1); free(g.b1); free(g.W2); free(g.b2);
}

static void test_fixture(void)
{
    Fixture f = fixture_load("tests/fixtures/transformer_layers.bin");
    fixture_mha(&f, "cross_");
    fixture_mha(&f, "self_");
    fixture_layernorm(&f);
    fixture_ffn(&f);
    fixture_free(&f);
}

/* The packed layout (sentence b's rows start[b] .. start[b] + len[b] - 1, no padding
 * rows) computes what the time-major one does on the real rows: y, dq_in, dkv_in and
 * every weight gradient, self (causal) and cross, with an attention dropout mask. */
static void test_mha_packed(int causal, Rng *rng)
{
    enum { B = 3, TQ = 5, TK = 4, d = 8, H = 2 };
    int Tk = causal ? TQ : TK;
    int len_q[B] = {5, 2, 3}, len_k[B] = {4, 1, 3}, start_q[B], start_k[B], rq = 0, rk = 0;
    if (causal) memcpy(len_k, len_q, sizeof len_k);
    for (int b = 0; b < B; b++)
        start_q[b] = rq, rq += len_q[b], start_k[b] = rk, rk += len_k[b];
    MhaConfig cfg = {.d = d, .heads = H, .causal = causal, .dropout = 0.25f};
    static float W[8][d * d], tq[TQ * B * d], tkv[TQ * B * d], dy[TQ * B * d], pq[TQ * B * d], pkv[TQ * B * d],
        pdy[TQ * B * d];
    for (int i = 0; i < 8; i++)
        fill_uniform(W[i], i % 2 ? d : d * d, 0.5f, rng);
    fill_uniform(tq, TQ * B * d, 1.0f, rng);
    fill_uniform(tkv, Tk * B * d, 1.0f, rng);
    fill_uniform(dy, TQ * B * d, 1.0f, rng);
    if (causal) memcpy(tkv, tq, sizeof tq);
    static unsigned char keep[B * H * TQ * TQ];
    for (int i = 0; i < B * H * TQ * Tk; i++)
        keep[i] = rng_uniform(rng) >= 0.25f;
    /* Pack: row t*B + b of the time-major tensors is row start[b] + t. */
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < len_q[b]; t++) {
            memcpy(pq + (long)(start_q[b] + t) * d, tq + ((long)t * B + b) * d, sizeof(float) * d);
            memcpy(pdy + (long)(start_q[b] + t) * d, dy + ((long)t * B + b) * d, sizeof(float) * d);
        }
        for (int t = 0; t < len_k[b]; t++)
            memcpy(pkv + (long)(start_k[b] + t) * d, tkv + ((long)t * B + b) * d, sizeof(float) * d);
    }
    MhaParams p = {W[0], W[1], W[2], W[3], W[4], W[5], W[6], W[7], NULL, NULL, NULL, NULL};
    float *out[2][3], *grads[2][8];  /* [time-major, packed][y, dq, dkv] */
    for (int pk = 0; pk < 2; pk++) {
        for (int i = 0; i < 3; i++)
            out[pk][i] = xcalloc(TQ * B * d, sizeof(float));
        for (int i = 0; i < 8; i++)
            grads[pk][i] = xcalloc(d * d, sizeof(float));
        MhaGrads g = {grads[pk][0], grads[pk][1], grads[pk][2], grads[pk][3], grads[pk][4], grads[pk][5],
                      grads[pk][6], grads[pk][7]};
        float *buf = xcalloc(mha_workspace_floats(&cfg, TQ, Tk, B), sizeof(float));
        MhaWorkspace ws;
        mha_workspace_init(&ws, &cfg, buf, TQ, Tk, B);
        float *dkv = causal ? out[pk][1] : out[pk][2];
        if (!pk) {
            mha_forward(&cfg, &p, tq, causal ? tq : tkv, len_q, len_k, keep, out[0][0], &ws, TQ, Tk, B);
            mha_backward(&cfg, &p, &g, dy, tq, causal ? tq : tkv, len_q, len_k, keep, out[0][1], dkv, &ws, TQ, Tk, B);
        } else {
            const float *kv = causal ? pq : pkv;
            mha_forward_packed(&cfg, &p, pq, kv, start_q, len_q, rq, start_k, len_k, rk, keep, out[1][0], &ws, TQ, Tk,
                               B);
            mha_backward_packed(&cfg, &p, &g, pdy, pq, kv, start_q, len_q, rq, start_k, len_k, rk, keep, out[1][1],
                                dkv, &ws, TQ, Tk, B);
        }
        free(buf);
    }
    double worst = 0;
    for (int b = 0; b < B; b++)
        for (int k = 0; k < d; k++) {
            for (int t = 0; t < len_q[b]; t++)
                for (int i = 0; i < 2; i++)
                    worst = fmax(worst, fabs(out[0][i][((long)t * B + b) * d + k] - out[1][i][(long)(start_q[b] + t) * d + k]));
            for (int t = 0; t < len_k[b] && !causal; t++)
                worst = fmax(worst, fabs(out[0][2][((long)t * B + b) * d + k] - out[1][2][(long)(start_k[b] + t) * d + k]));
        }
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < (i % 2 ? d : d * d); k++)
            worst = fmax(worst, fabs(grads[0][i][k] - grads[1][i][k]));
    char label[120];
    snprintf(label, sizeof label, "mha %s, packed rows = time-major rows (y, dq, dkv, weight gradients; dropout): "
             "max |diff| %.2g", causal ? "self causal" : "cross", worst);
    CHECK(worst <= 1e-5, label);
    for (int pk = 0; pk < 2; pk++) {
        for (int i = 0; i < 3; i++)
            free(out[pk][i]);
        for (int i = 0; i < 8; i++)
            free(grads[pk][i]);
    }
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 17);
    test_layernorm(&rng);
    test_ffn(FFN_RELU, "relu", 0.0f, &rng);
    test_ffn(FFN_GELU, "gelu", 0.0f, &rng);
    test_ffn(FFN_RELU, "relu dropout 0.3", 0.3f, &rng);
    test_ffn(FFN_GELU, "gelu dropout 0.3", 0.3f, &rng);
    test_mha(&rng);
    test_mha_packed(0, &rng);
    test_mha_packed(1, &rng);
    test_mha_step(&rng);
    test_mha_cross_step(&rng);
    test_posenc();
    test_fixture();
    return check_report("test_transformer_layers");
}
