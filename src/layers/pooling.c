/* pooling.c — the classifier's pooling layers; see pooling.h. */
#include "layers/pooling.h"

#include <math.h>
#include <string.h>

static const char *const names[POOL_KINDS] = {"attention", "last", "mean", "max"};

const char *pooling_name(int kind) { return kind >= 0 && kind < POOL_KINDS ? names[kind] : "?"; }

int pooling_kind(const char *name)
{
    for (int k = 0; k < POOL_KINDS; k++)
        if (!strcmp(name, names[k])) return k;
    return -1;
}

/* Row (t, b) of h. */
static const float *state(const float *h, int t, int b, int B, int H) { return h + ((long)t * B + b) * H; }

/* ---------------------------------------------------------------- attention */

void pooling_attention_forward(float *out, float *attn, float *score, const float *h, const int *len, int S, int B,
                               int H, const float *w, const float *b)
{
    for (int i = 0; i < B; i++) {
        float *e = score + (long)i * S, *a = attn + (long)i * S, *o = out + (long)i * H;
        float top = -INFINITY;
        for (int t = 0; t < len[i]; t++) {
            const float *x = state(h, t, i, B, H);
            float z = b[0];
            for (int k = 0; k < H; k++)
                z += w[k] * x[k];
            e[t] = tanhf(z);
            if (e[t] > top) top = e[t];
        }
        float sum = 0;
        for (int t = 0; t < len[i]; t++)
            sum += a[t] = expf(e[t] - top);
        memset(o, 0, sizeof(float) * H);
        for (int t = 0; t < S; t++) {
            if (t >= len[i]) {
                a[t] = e[t] = 0;
                continue;
            }
            a[t] /= sum;
            const float *x = state(h, t, i, B, H);
            for (int k = 0; k < H; k++)
                o[k] += a[t] * x[k];
        }
    }
}

/* out = sum_t a_t h_t: dh_t += a_t dout, da_t = dout . h_t; through the softmax
 * de_t = a_t (da_t - sum_u a_u da_u); through tanh dz_t = de_t (1 - e_t^2); then
 * dw += dz_t h_t, db += dz_t, dh_t += dz_t w. */
void pooling_attention_backward(float *dh, float *dw, float *db, const float *dout, const float *h, const float *attn,
                                const float *score, const int *len, int S, int B, int H, const float *w)
{
    for (int i = 0; i < B; i++) {
        const float *a = attn + (long)i * S, *e = score + (long)i * S, *g = dout + (long)i * H;
        float mean = 0;  /* sum_u a_u da_u */
        for (int t = 0; t < len[i]; t++) {
            const float *x = state(h, t, i, B, H);
            float da = 0;
            for (int k = 0; k < H; k++)
                da += g[k] * x[k];
            mean += a[t] * da;
        }
        for (int t = 0; t < len[i]; t++) {
            const float *x = state(h, t, i, B, H);
            float *dx = dh + ((long)t * B + i) * H;
            float da = 0;
            for (int k = 0; k < H; k++)
                da += g[k] * x[k];
            float dz = a[t] * (da - mean) * (1.0f - e[t] * e[t]);
            db[0] += dz;
            for (int k = 0; k < H; k++) {
                dw[k] += dz * x[k];
                dx[k] += a[t] * g[k] + dz * w[k];
            }
        }
    }
}

/* ---------------------------------------------------------------- last */

void pooling_last_forward(float *out, const float *h, const int *len, int S, int B, int H, int bidirectional)
{
    (void)S;
    int U = bidirectional ? H / 2 : H;
    for (int i = 0; i < B; i++) {
        float *o = out + (long)i * H;
        memcpy(o, state(h, len[i] - 1, i, B, H), sizeof(float) * U);
        if (bidirectional) memcpy(o + U, state(h, 0, i, B, H) + U, sizeof(float) * U);
    }
}

void pooling_last_backward(float *dh, const float *dout, const int *len, int S, int B, int H, int bidirectional)
{
    (void)S;
    int U = bidirectional ? H / 2 : H;
    for (int i = 0; i < B; i++) {
        const float *g = dout + (long)i * H;
        float *fwd = dh + ((long)(len[i] - 1) * B + i) * H, *rev = dh + (long)i * H;
        for (int k = 0; k < U; k++)
            fwd[k] += g[k];
        if (bidirectional)
            for (int k = U; k < H; k++)
                rev[k] += g[k];
    }
}

/* ---------------------------------------------------------------- mean */

void pooling_mean_forward(float *out, const float *h, const int *len, int S, int B, int H)
{
    (void)S;
    for (int i = 0; i < B; i++) {
        float *o = out + (long)i * H;
        memset(o, 0, sizeof(float) * H);
        for (int t = 0; t < len[i]; t++) {
            const float *x = state(h, t, i, B, H);
            for (int k = 0; k < H; k++)
                o[k] += x[k];
        }
        for (int k = 0; k < H; k++)
            o[k] /= (float)len[i];
    }
}

void pooling_mean_backward(float *dh, const float *dout, const int *len, int S, int B, int H)
{
    (void)S;
    for (int i = 0; i < B; i++) {
        const float *g = dout + (long)i * H;
        for (int t = 0; t < len[i]; t++) {
            float *dx = dh + ((long)t * B + i) * H;
            for (int k = 0; k < H; k++)
                dx[k] += g[k] / (float)len[i];
        }
    }
}

/* ---------------------------------------------------------------- max */

void pooling_max_forward(float *out, int *arg, const float *h, const int *len, int S, int B, int H)
{
    (void)S;
    for (int i = 0; i < B; i++) {
        float *o = out + (long)i * H;
        int *at = arg + (long)i * H;
        memcpy(o, state(h, 0, i, B, H), sizeof(float) * H);
        memset(at, 0, sizeof(int) * H);
        for (int t = 1; t < len[i]; t++) {
            const float *x = state(h, t, i, B, H);
            for (int k = 0; k < H; k++)
                if (x[k] > o[k]) {
                    o[k] = x[k];
                    at[k] = t;
                }
        }
    }
}

void pooling_max_backward(float *dh, const float *dout, const int *arg, int B, int H)
{
    for (int i = 0; i < B; i++)
        for (int k = 0; k < H; k++)
            dh[((long)arg[(long)i * H + k] * B + i) * H + k] += dout[(long)i * H + k];
}
