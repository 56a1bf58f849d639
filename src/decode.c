#include "decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg.h" /* defines: matmul_bias */
#include "util.h"   /* defines: xmalloc */
#include "vocab.h"  /* defines: VOCAB_SOS, VOCAB_EOS */

void decode_greedy(Model *m, RunState *rs, const Batch *batch, int max_len, int **out, int *out_len)
{
    int B = batch->B, H = m->dims.hidden, V = m->dims.tgt_vocab;
    runstate_ensure(rs, &m->dims, RUN_DECODE, B, batch->S, max_len > 0 ? max_len : 1);
    model_encode(m, rs, batch);
    int *prev = xmalloc(sizeof(int) * B), *done = xcalloc(B, sizeof(int));
    for (int b = 0; b < B; b++) {
        prev[b] = VOCAB_SOS;
        out_len[b] = 0;
    }
    int remaining = B;
    /* Step t emits word t+1; a sentence without <eos> by max_len words is cut there. */
    for (int t = 0; t < max_len && remaining > 0; t++) {
        model_decoder_input(m, rs, t, prev, B);
        model_decoder_step(m, rs, batch, t);
        float *logits = rs->logits; /* (B, V) for this step */
        matmul_bias(logits, V, rs->dec_h + (long)(t + 1) * B * H, H, m->params.out_w, H, m->params.out_b, B, V, H);
        for (int b = 0; b < B; b++) {
            const float *row = logits + (long)b * V;
            /* <pad> and <sos> are never predicted. */
            int best = VOCAB_UNK;
            for (int k = VOCAB_UNK + 1; k < V; k++)
                if (k != VOCAB_SOS && row[k] > row[best]) best = k;
            prev[b] = best;
            if (done[b]) continue;
            if (best == VOCAB_EOS) {
                done[b] = 1;
                remaining--;
            } else {
                out[b][out_len[b]++] = best;
            }
        }
    }
    free(prev);
    free(done);
}

/* ---------------------------------------------------------------- beam search */

typedef struct {
    float score;   /* total log-probability */
    int beam, word;
} Candidate;

/* Keeps the n best candidates seen, best first (n is small: 2K). */
static void keep_best(Candidate *best, int *count, int n, Candidate c)
{
    if (*count == n && c.score <= best[n - 1].score) return;
    int i = *count < n ? (*count)++ : n - 1;
    while (i > 0 && best[i - 1].score < c.score) {
        best[i] = best[i - 1];
        i--;
    }
    best[i] = c;
}

static float length_penalty(int len, float alpha) { return alpha == 0.0f ? 1.0f : powf((5.0f + len) / 6.0f, alpha); }

float decode_beam(Model *m, RunState *rs, const int *src, int src_len, int K, int max_len, float alpha, int *out,
                  int *out_len)
{
    int H = m->dims.hidden, V = m->dims.tgt_vocab;
    Batch batch = {0};
    int **srcs = xmalloc(sizeof(int *) * K), *lens = xmalloc(sizeof(int) * K);
    for (int k = 0; k < K; k++) {
        srcs[k] = (int *)src;
        lens[k] = src_len;
    }
    /* K copies of the source: the beams then decode as an ordinary batch of K rows. */
    batch_fill_source(&batch, srcs, lens, K);
    runstate_ensure(rs, &m->dims, RUN_DECODE, K, batch.S, max_len > 0 ? max_len : 1);
    model_encode(m, rs, &batch);

    int *hist = xcalloc((long)K * (max_len + 1), sizeof(int)), *next_hist = xcalloc((long)K * (max_len + 1), sizeof(int));
    int *prev = xmalloc(sizeof(int) * K);
    float *score = xcalloc(K, sizeof(float)), *next_score = xmalloc(sizeof(float) * K);
    float *state = xmalloc(sizeof(float) * K * H);
    Candidate *best = xmalloc(sizeof(Candidate) * 2 * K);
    float best_final = -INFINITY;
    int finished = 0, live = 1; /* at t = 0 every row holds the same <sos> beam */
    *out_len = 0;
    for (int k = 0; k < K; k++)
        prev[k] = VOCAB_SOS;
    for (int t = 0; t < max_len && finished < K; t++) {
        model_decoder_input(m, rs, t, prev, K);
        model_decoder_step(m, rs, &batch, t);
        float *s_t = rs->dec_h + (long)(t + 1) * K * H;
        matmul_bias(rs->logits, V, s_t, H, m->params.out_w, H, m->params.out_b, live, V, H);
        int count = 0;
        for (int k = 0; k < live; k++) {
            float *row = rs->logits + (long)k * V, maxv = row[0], sum = 0.0f;
            for (int w = 1; w < V; w++)
                maxv = row[w] > maxv ? row[w] : maxv;
            for (int w = 0; w < V; w++)
                sum += expf(row[w] - maxv);
            float base = score[k] - maxv - logf(sum);
            for (int w = VOCAB_UNK; w < V; w++)
                if (w != VOCAB_SOS) keep_best(best, &count, 2 * K, (Candidate){base + row[w], k, w});
        }
        /* Best first: an <eos> finishes a hypothesis, anything else continues as a beam. */
        int next = 0;
        for (int c = 0; c < count && next < K; c++) {
            const Candidate *cd = &best[c];
            if (cd->word == VOCAB_EOS) {
                float norm = cd->score / length_penalty(t + 1, alpha);
                if (norm > best_final) {
                    best_final = norm;
                    memcpy(out, hist + (long)cd->beam * (max_len + 1), sizeof(int) * t);
                    *out_len = t;
                }
                if (++finished >= K) break;
                continue;
            }
            memcpy(next_hist + (long)next * (max_len + 1), hist + (long)cd->beam * (max_len + 1), sizeof(int) * t);
            next_hist[(long)next * (max_len + 1) + t] = cd->word;
            next_score[next] = cd->score;
            memcpy(state + (long)next * H, s_t + (long)cd->beam * H, sizeof(float) * H);
            prev[next] = cd->word;
            next++;
        }
        if (finished >= K || next == 0) break;
        /* The surviving beams' states, in their new order, feed step t + 1. */
        memcpy(s_t, state, sizeof(float) * next * H);
        for (int k = next; k < K; k++)
            prev[k] = prev[0];
        live = next;
        int *swap = hist;
        hist = next_hist;
        next_hist = swap;
        memcpy(score, next_score, sizeof(float) * next);
        if (t + 1 == max_len && *out_len == 0 && best_final == -INFINITY) {
            /* Nothing finished within max_len words: the best live beam, cut there. */
            float norm = score[0] / length_penalty(max_len, alpha);
            memcpy(out, hist, sizeof(int) * max_len);
            *out_len = max_len;
            best_final = norm;
        }
    }
    free(hist);
    free(next_hist);
    free(prev);
    free(score);
    free(next_score);
    free(state);
    free(best);
    free(srcs);
    free(lens);
    batch_free(&batch);
    return best_final;
}
