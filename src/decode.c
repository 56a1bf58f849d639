#include "decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastmath.h" /* defines: expf_fast */
#include "linalg.h"   /* defines: matmul_bias */
#include "util.h"   /* defines: xmalloc */
#include "vocab.h"  /* defines: VOCAB_SOS, VOCAB_EOS */

void decode_greedy(Model *m, RunState *rs, const Batch *batch, int max_len, int **out, int *out_len)
{
    int B = batch->B, V = m->dims.tgt_vocab;
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
        model_step_logits(m, rs, t, B, logits);
        for (int b = 0; b < B; b++) {
            float *row = logits + (long)b * V;
            int best = best_word(row, V);
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

/* One sentence's search: its K rows of the batch are rows n*K .. n*K+K-1. */
typedef struct {
    int *hist, *next_hist;   /* (K, max_len) words of each live beam */
    float *score;            /* (K) total log-probability of each live beam */
    int live, finished, done, limit;
    float best_final;
} Search;

void decode_beam(Model *m, RunState *rs, int *const *src, const int *src_len, int N, int K, const int *limit,
                 float alpha, int **out, int *out_len)
{
    int V = m->dims.tgt_vocab, R = N * K, max_len = 1;
    for (int n = 0; n < N; n++)
        if (limit[n] > max_len) max_len = limit[n];
    /* Each source K times: all beams of all sentences decode as one batch of N*K rows. */
    int **srcs = xmalloc(sizeof(int *) * R), *lens = xmalloc(sizeof(int) * R);
    for (int r = 0; r < R; r++) {
        srcs[r] = src[r / K];
        lens[r] = src_len[r / K];
    }
    Batch batch = {0};
    batch_fill_source(&batch, srcs, lens, R);
    runstate_ensure(rs, &m->dims, RUN_DECODE, R, batch.S, max_len);
    model_encode(m, rs, &batch);

    Search *sr = xcalloc(N, sizeof(Search));
    for (int n = 0; n < N; n++) {
        sr[n].hist = xcalloc((long)K * max_len, sizeof(int));
        sr[n].next_hist = xcalloc((long)K * max_len, sizeof(int));
        sr[n].score = xcalloc(K, sizeof(float));
        sr[n].live = 1; /* at t = 0 all K rows hold the same <sos> beam */
        sr[n].limit = limit[n] > 0 ? limit[n] : 1;
        sr[n].best_final = -INFINITY;
        out_len[n] = 0;
    }
    int *prev = xmalloc(sizeof(int) * R), remaining = N;
    float *next_score = xmalloc(sizeof(float) * K);
    int *parent = xmalloc(sizeof(int) * R);
    Candidate *best = xmalloc(sizeof(Candidate) * 2 * K);
    for (int r = 0; r < R; r++)
        prev[r] = VOCAB_SOS;
    for (int t = 0; t < max_len && remaining > 0; t++) {
        model_decoder_input(m, rs, t, prev, R);
        model_decoder_step(m, rs, &batch, t);
        model_step_logits(m, rs, t, R, rs->logits);
        for (int r = 0; r < R; r++)
            parent[r] = r;
        for (int n = 0; n < N; n++) {
            Search *q = &sr[n];
            if (q->done) continue;
            int count = 0;
            for (int k = 0; k < q->live; k++) {
                float *row = rs->logits + (long)(n * K + k) * V, maxv = row[0], sum = 0.0f;
#pragma omp simd reduction(max : maxv)
                for (int w = 1; w < V; w++)
                    maxv = row[w] > maxv ? row[w] : maxv;
#pragma omp simd reduction(+ : sum)
                for (int w = 0; w < V; w++)
                    sum += expf_fast(row[w] - maxv);
                float base = q->score[k] - maxv - logf(sum);
                for (int w = VOCAB_UNK; w < V; w++)
                    if (w != VOCAB_SOS) keep_best(best, &count, 2 * K, (Candidate){base + row[w], k, w});
            }
            /* Best first: an <eos> finishes a hypothesis, anything else continues as a beam. */
            int next = 0;
            for (int c = 0; c < count && next < K && q->finished < K; c++) {
                const Candidate *cd = &best[c];
                const int *words = q->hist + (long)cd->beam * max_len;
                if (cd->word == VOCAB_EOS) {
                    float norm = cd->score / length_penalty(t + 1, alpha);
                    if (norm > q->best_final) {
                        q->best_final = norm;
                        memcpy(out[n], words, sizeof(int) * t);
                        out_len[n] = t;
                    }
                    q->finished++;
                    continue;
                }
                memcpy(q->next_hist + (long)next * max_len, words, sizeof(int) * t);
                q->next_hist[(long)next * max_len + t] = cd->word;
                next_score[next] = cd->score;
                parent[n * K + next] = n * K + cd->beam;
                prev[n * K + next] = cd->word;
                next++;
            }
            for (int k = next; k < K; k++)
                prev[n * K + k] = next > 0 ? prev[n * K] : VOCAB_EOS;
            int *swap = q->hist;
            q->hist = q->next_hist;
            q->next_hist = swap;
            memcpy(q->score, next_score, sizeof(float) * next);
            q->live = next;
            if (q->finished >= K || next == 0 || t + 1 >= q->limit) {
                if (out_len[n] == 0 && q->best_final == -INFINITY && next > 0) {
                    /* Nothing finished within the limit: the best live beam, cut there. */
                    memcpy(out[n], q->hist, sizeof(int) * (t + 1));
                    out_len[n] = t + 1;
                }
                q->done = 1;
                remaining--;
            }
        }
        /* The surviving beams' states, in their new order, feed step t + 1. */
        model_reorder_state(m, rs, t, parent, R);
    }
    for (int n = 0; n < N; n++) {
        free(sr[n].hist);
        free(sr[n].next_hist);
        free(sr[n].score);
    }
    free(sr);
    free(prev);
    free(next_score);
    free(parent);
    free(best);
    free(srcs);
    free(lens);
    batch_free(&batch);
}
