#include "decode/decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dispatch.h" /* defines: KERNEL_CLONES */
#include "kernels/logits.h"   /* defines: logits_log_normaliser */
#include "base/util.h"        /* defines: xmalloc */
#include "text/vocab.h"    /* defines: VOCAB_UNK, VOCAB_SOS, VOCAB_EOS */

void hypothesis_free(Hypothesis *h)
{
    free(h->words);
    free(h->attn);
    free(h->unit_logp);
    memset(h, 0, sizeof *h);
}

/* Sentence n's source length: its real (mask 1) positions, which come first. */
static int source_length(const Batch *src, int n)
{
    int len = 0;
    for (int t = 0; t < src->S; t++)
        len += src->mask[(long)t * src->B + n] != 0.0f;
    return len;
}

static float length_penalty(int len, float alpha)
{
    if (alpha == LENGTH_AVERAGE) return (float)len;
    return alpha == 0.0f ? 1.0f : powf((5.0f + len) / 6.0f, alpha);
}

static int prefix_length(const SearchSpec *sp, int n)
{
    return sp->prefix ? sp->prefix_len[n] : 0;
}

/* ---------------------------------------------------------------- greedy search, sampling, forcing */

/* K rows per sentence (row r = n*K + k), each choosing its own word every step and none
 * ever reordered: greedy search (K = 1), K samples, or forced decoding. out[r] receives
 * row r's hypothesis. */
static void greedy_rows(const Decoder *dec, const Batch *src, const SearchSpec *sp, int K, Hypothesis *out)
{
    int N = src->B, S = src->S, V = dec->vocab, R = N * K, max_len = 1;
    for (int n = 0; n < N; n++)
        if (sp->limit[n] > max_len) max_len = sp->limit[n];
    dec->start(dec->ctx, src, K, max_len, sp->want_attn);
    int *prev = xmalloc(sizeof(int) * R), *done = xcalloc(R, sizeof(int)), *src_len = xmalloc(sizeof(int) * N);
    Rng *rng = sp->sample ? xmalloc(sizeof(Rng) * R) : NULL;
    SampleScratch scratch = {0};
    int remaining = R;
    for (int n = 0; n < N; n++)
        src_len[n] = source_length(src, n);
    for (int r = 0; r < R; r++) {
        int n = r / K, rows = sp->limit[n] > 0 ? sp->limit[n] : 1;
        prev[r] = VOCAB_SOS;
        out[r] = (Hypothesis){.words = xmalloc(sizeof(int) * rows)};
        /* Room for every step up to the limit: step t writes row t. */
        if (sp->want_attn) out[r].attn = xmalloc(sizeof(float) * (rows * src_len[n] > 0 ? rows * src_len[n] : 1));
        if (sp->want_scores) out[r].unit_logp = xmalloc(sizeof(float) * rows);
        if (rng) sample_stream(&rng[r], sp->sample->seed, sp->sentence ? sp->sentence[n] : n, r % K);
        done[r] = sp->limit[n] < 1;
        remaining -= done[r];
    }
    /* Step t emits word t+1; a sentence without <eos> by its limit is cut there. */
    for (int t = 0; t < max_len && remaining > 0; t++) {
        const float *attn = NULL; /* (R, S) */
        const float *logits = dec->step(dec->ctx, t, prev, &attn); /* (R, V) */
        for (int r = 0; r < R; r++) {
            if (done[r]) {  /* fed some word; its output is not read */
                prev[r] = VOCAB_EOS;
                continue;
            }
            int n = r / K, plen = prefix_length(sp, n), w;
            const float *row = logits + (long)r * V;
            if (t < plen) w = sp->prefix[n][t];
            else if (sp->force_end) w = VOCAB_EOS;
            else if (rng) w = sample_word(row, V, sp->sample, &rng[r], &scratch);
            else w = best_word(row, V);
            Hypothesis *h = &out[r];
            float unit = row[w] - logits_log_normaliser(row, V);
            prev[r] = w;
            h->score += unit;
            h->logprob = h->score;
            if (h->unit_logp) h->unit_logp[t] = unit;
            if (h->attn) memcpy(h->attn + (long)t * src_len[n], attn + (long)r * S, sizeof(float) * src_len[n]);
            if (w == VOCAB_EOS) h->finished = 1;
            else h->words[h->len++] = w;
            if (h->finished || h->len >= sp->limit[n]) {
                done[r] = 1;
                remaining--;
                if (dec->retire) dec->retire(dec->ctx, r);
            }
        }
    }
    free(prev);
    free(done);
    free(src_len);
    free(rng);
    sample_scratch_free(&scratch);
}

void greedy_search(const Decoder *dec, const Batch *src, const int *limit, int want_attn, Hypothesis *out)
{
    SearchSpec sp = {.limit = limit, .want_attn = want_attn};
    greedy_rows(dec, src, &sp, 1, out);
}

void forced_search(const Decoder *dec, const Batch *src, int *const *tgt, const int *tgt_len, int want_attn,
                   Hypothesis *out)
{
    int N = src->B, *limit = xmalloc(sizeof(int) * (N ? N : 1));
    for (int n = 0; n < N; n++)
        limit[n] = tgt_len[n] + 1;
    SearchSpec sp = {.limit = limit, .want_attn = want_attn, .want_scores = 1, .prefix = tgt, .prefix_len = tgt_len,
                     .force_end = 1};
    greedy_rows(dec, src, &sp, 1, out);
    free(limit);
}

/* K samples of each sentence (rows n*K .. n*K+K-1), ranked by the beam score: the
 * nbest best of sentence n into out[n * nbest ..], count[n] = nbest. */
static void sample_search(const Decoder *dec, const Batch *src, const SearchSpec *sp, int K, int nbest,
                          Hypothesis *out, int *count)
{
    int N = src->B;
    Hypothesis *all = xmalloc(sizeof(Hypothesis) * (size_t)(N * K > 0 ? N * K : 1));
    greedy_rows(dec, src, sp, K, all);
    for (int n = 0; n < N; n++) {
        Hypothesis *h = all + (long)n * K;
        for (int k = 0; k < K; k++) {
            h[k].score = h[k].logprob / length_penalty(h[k].len + h[k].finished, sp->alpha);
            /* Insertion, stable: among equal scores the earlier sample first. */
            Hypothesis x = h[k];
            int i = k;
            while (i > 0 && h[i - 1].score < x.score) {
                h[i] = h[i - 1];
                i--;
            }
            h[i] = x;
        }
        for (int k = 0; k < K; k++) {
            if (k < nbest) out[(long)n * nbest + k] = h[k];
            else hypothesis_free(&h[k]);
        }
        if (count) count[n] = nbest;
    }
    free(all);
}

/* ---------------------------------------------------------------- beam search */

typedef struct {
    float score;   /* total log-probability */
    int beam, word;
} Candidate;

/* Keeps the n best candidates seen, best first (n is small: 2K). One equal to a kept
 * candidate goes after it: candidates are offered beam by beam (best beam first), word
 * by word, which is the tie-break decode.h promises. */
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

enum { SCAN_RUN = 16 };

/* The first w' >= w in steps of SCAN_RUN whose run row[w' .. w' + SCAN_RUN) (cut at V)
 * holds a word scoring above worst (base + row[i] > worst, keep_best's own sum), or V.
 * At the CPU's vector width (KERNEL_CLONES): a comparison is exact. */
KERNEL_CLONES
static int next_run_above(const float *row, int w, int V, float base, float worst)
{
    for (; w < V; w += SCAN_RUN) {
        int end = w + SCAN_RUN < V ? w + SCAN_RUN : V, above = 0;
#pragma omp simd reduction(| : above)
        for (int i = w; i < end; i++)
            above |= base + row[i] > worst;
        if (above) return w;
    }
    return V;
}

/* Beam k's candidates (base + row[w], the words w = VOCAB_UNK .. V - 1 but <sos>)
 * offered to keep_best, word by word; once the n kept are full, a run of SCAN_RUN
 * words none of which scores above the worst kept is skipped whole (keep_best would
 * refuse each of them, the worst kept only rising): the same candidates, found without
 * looking at most words one by one. */
static void offer_row(Candidate *best, int *count, int n, const float *row, int V, float base, int k)
{
    for (int w = VOCAB_UNK; w < V;) {
        if (*count == n) w = next_run_above(row, w, V, base, best[n - 1].score);
        int end = w + SCAN_RUN < V ? w + SCAN_RUN : V;
        for (; w < end; w++)
            if (w != VOCAB_SOS) keep_best(best, count, n, (Candidate){base + row[w], k, w});
    }
}

/* One sentence's search: its K rows of the batch are rows n*K .. n*K+K-1. Each live
 * beam's words (and, when asked for, its attention rows and its words'
 * log-probabilities) are copied forward every step: short sentences and small K make
 * that cheaper than back-pointers. */
typedef struct {
    int *hist, *next_hist;     /* (K, max_len) words of each live beam */
    float *ahist, *next_ahist; /* (K, max_len, src_len) attention rows, or NULL */
    float *lhist, *next_lhist; /* (K, max_len) each word's log-probability, or NULL */
    float *score;              /* (K) total log-probability of each live beam */
    Hypothesis *final;         /* (K) finished hypotheses, best first */
    int live, n_final, done, limit, src_len;
} Search;

/* Sentence q's hypothesis from live beam k's first len words and rows (attention rows,
 * log-probabilities), plus one more of each (the step that emitted <eos>) when finished. */
static Hypothesis make_hypothesis(const Search *q, const int *words, const float *rows, const float *units, int len,
                                  int finished, const float *last_row, float last_unit, float logprob, float alpha)
{
    Hypothesis h = {.len = len, .finished = finished, .logprob = logprob,
                    .score = logprob / length_penalty(len + finished, alpha)};
    h.words = xmalloc(sizeof(int) * (len ? len : 1));
    memcpy(h.words, words, sizeof(int) * len);
    if (rows) {
        long n = q->src_len, r = len + finished;
        h.attn = xmalloc(sizeof(float) * (r * n > 0 ? r * n : 1));
        memcpy(h.attn, rows, sizeof(float) * len * n);
        if (finished) memcpy(h.attn + len * n, last_row, sizeof(float) * n);
    }
    if (units) {
        h.unit_logp = xmalloc(sizeof(float) * (len + finished > 0 ? len + finished : 1));
        memcpy(h.unit_logp, units, sizeof(float) * len);
        if (finished) h.unit_logp[len] = last_unit;
    }
    return h;
}

/* Inserts h among q's finished hypotheses, which stay sorted best first (stable). */
static void add_final(Search *q, Hypothesis h)
{
    int i = q->n_final++;
    while (i > 0 && q->final[i - 1].score < h.score) {
        q->final[i] = q->final[i - 1];
        i--;
    }
    q->final[i] = h;
}

static void swap_floats(float **a, float **b)
{
    float *t = *a;
    *a = *b;
    *b = t;
}

static void beam_rows(const Decoder *dec, const Batch *src, const SearchSpec *sp, Hypothesis *out, int *count)
{
    int K = sp->beam, nbest = sp->nbest, N = src->B, S = src->S, V = dec->vocab, R = N * K, max_len = 1;
    const int *limit = sp->limit;
    float alpha = sp->alpha;
    if (nbest < 1) nbest = 1;
    if (nbest > K) nbest = K;
    for (int n = 0; n < N; n++)
        if (limit[n] > max_len) max_len = limit[n];
    /* All beams of all sentences decode as one batch of N*K rows. */
    dec->start(dec->ctx, src, K, max_len, sp->want_attn);

    Search *sr = xcalloc(N, sizeof(Search));
    for (int n = 0; n < N; n++) {
        Search *q = &sr[n];
        q->hist = xcalloc((long)K * max_len, sizeof(int));
        q->next_hist = xcalloc((long)K * max_len, sizeof(int));
        q->src_len = source_length(src, n);
        if (sp->want_attn) {
            q->ahist = xcalloc((long)K * max_len * q->src_len, sizeof(float));
            q->next_ahist = xcalloc((long)K * max_len * q->src_len, sizeof(float));
        }
        if (sp->want_scores) {
            q->lhist = xcalloc((long)K * max_len, sizeof(float));
            q->next_lhist = xcalloc((long)K * max_len, sizeof(float));
        }
        q->score = xcalloc(K, sizeof(float));
        q->final = xcalloc(K, sizeof(Hypothesis));
        q->live = 1; /* at t = 0 all K rows hold the same <sos> beam */
        q->limit = limit[n] > 0 ? limit[n] : 1;
        if (count) count[n] = 0;
    }
    int *prev = xmalloc(sizeof(int) * R), *parent = xmalloc(sizeof(int) * R), remaining = N;
    float *next_score = xmalloc(sizeof(float) * K), *lse = xmalloc(sizeof(float) * K);
    Candidate *best = xmalloc(sizeof(Candidate) * 2 * K);
    for (int r = 0; r < R; r++)
        prev[r] = VOCAB_SOS;
    for (int t = 0; t < max_len && remaining > 0; t++) {
        const float *attn = NULL; /* (R, S) */
        const float *logits = dec->step(dec->ctx, t, prev, &attn); /* (R, V) */
        for (int r = 0; r < R; r++)
            parent[r] = r;
        for (int n = 0; n < N; n++) {
            Search *q = &sr[n];
            if (q->done) continue;
            long arow = (long)max_len * q->src_len; /* one beam's attention history */
            int n_cand = 0, forced = t < prefix_length(sp, n) ? sp->prefix[n][t] : -1;
            for (int k = 0; k < q->live; k++) {
                const float *row = logits + (long)(n * K + k) * V;
                lse[k] = logits_log_normaliser(row, V);
                float base = q->score[k] - lse[k];
                if (forced >= 0) {  /* following the prefix: its word is the one candidate */
                    keep_best(best, &n_cand, 2 * K, (Candidate){base + row[forced], k, forced});
                    continue;
                }
                offer_row(best, &n_cand, 2 * K, row, V, base, k);
            }
            /* Best first: an <eos> finishes a hypothesis, anything else continues as a beam. */
            int next = 0;
            for (int c = 0; c < n_cand && next < K && q->n_final < K; c++) {
                const Candidate *cd = &best[c];
                const int *words = q->hist + (long)cd->beam * max_len;
                const float *rows = q->ahist ? q->ahist + cd->beam * arow : NULL;
                const float *units = q->lhist ? q->lhist + (long)cd->beam * max_len : NULL;
                const float *now = rows ? attn + (long)(n * K + cd->beam) * S : NULL;
                float unit = logits[(long)(n * K + cd->beam) * V + cd->word] - lse[cd->beam];
                if (cd->word == VOCAB_EOS) {
                    add_final(q, make_hypothesis(q, words, rows, units, t, 1, now, unit, cd->score, alpha));
                    continue;
                }
                memcpy(q->next_hist + (long)next * max_len, words, sizeof(int) * t);
                q->next_hist[(long)next * max_len + t] = cd->word;
                if (rows) {
                    float *dst = q->next_ahist + next * arow;
                    memcpy(dst, rows, sizeof(float) * t * q->src_len);
                    memcpy(dst + (long)t * q->src_len, now, sizeof(float) * q->src_len);
                }
                if (units) {
                    float *dst = q->next_lhist + (long)next * max_len;
                    memcpy(dst, units, sizeof(float) * t);
                    dst[t] = unit;
                }
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
            swap_floats(&q->ahist, &q->next_ahist);
            swap_floats(&q->lhist, &q->next_lhist);
            memcpy(q->score, next_score, sizeof(float) * next);
            q->live = next;
            if (q->n_final >= K || next == 0 || t + 1 >= q->limit) {
                /* Too few finished: the best live beams, cut at the limit, make up the rest. */
                for (int k = 0; k < next && q->n_final < nbest; k++)
                    add_final(q, make_hypothesis(q, q->hist + (long)k * max_len, q->ahist ? q->ahist + k * arow : NULL,
                                                 q->lhist ? q->lhist + (long)k * max_len : NULL, t + 1, 0, NULL, 0,
                                                 q->score[k], alpha));
                q->done = 1;
                remaining--;
                for (int k = 0; dec->retire && k < K; k++)
                    dec->retire(dec->ctx, n * K + k);
            }
        }
        /* The surviving beams' states, in their new order, feed step t + 1. */
        dec->reorder(dec->ctx, t, parent);
    }
    for (int n = 0; n < N; n++) {
        Search *q = &sr[n];
        int got = q->n_final < nbest ? q->n_final : nbest;
        if (count) count[n] = got;
        for (int i = 0; i < q->n_final; i++) {
            if (i < got) out[(long)n * nbest + i] = q->final[i];
            else hypothesis_free(&q->final[i]);
        }
        free(q->hist);
        free(q->next_hist);
        free(q->ahist);
        free(q->next_ahist);
        free(q->lhist);
        free(q->next_lhist);
        free(q->score);
        free(q->final);
    }
    free(sr);
    free(prev);
    free(parent);
    free(next_score);
    free(lse);
    free(best);
}

void beam_search(const Decoder *dec, const Batch *src, int K, int nbest, const int *limit, float alpha,
                 int want_attn, Hypothesis *out, int *count)
{
    SearchSpec sp = {.beam = K, .nbest = nbest, .limit = limit, .alpha = alpha, .want_attn = want_attn};
    beam_rows(dec, src, &sp, out, count);
}

void search_run(const Decoder *dec, const Batch *src, const SearchSpec *spec, Hypothesis *out, int *count)
{
    int K = spec->beam, nbest = spec->nbest < 1 ? 1 : spec->nbest > K ? K : spec->nbest;
    if (spec->sample && K >= 1) {
        sample_search(dec, src, spec, K, nbest, out, count);
    } else if (K >= 1 && !spec->force_end) {
        beam_rows(dec, src, spec, out, count);
    } else {
        greedy_rows(dec, src, spec, 1, out);
        for (int n = 0; count && n < src->B; n++)
            count[n] = 1;
    }
}

/* ---------------------------------------------------------------- ensembles */

static void ensemble_start(void *ctx, const Batch *src, int K, int max_steps, int want_attn)
{
    Ensemble *e = ctx;
    for (int i = 0; i < e->n; i++)
        e->members[i].start(e->members[i].ctx, src, K, max_steps, want_attn);
    e->R = src->B * K;
    e->S = src->S;
    long V = e->members[0].vocab, need = (long)e->R * V, need_attn = (long)e->R * (e->S > 0 ? e->S : 1);
    if (need > e->logp_cap) {
        free(e->logp);
        e->logp = xmalloc(sizeof(float) * need);
        e->logp_cap = need;
    }
    if (need_attn > e->attn_cap) {
        free(e->attn);
        e->attn = xmalloc(sizeof(float) * need_attn);
        e->attn_cap = need_attn;
    }
}

static const float *ensemble_step(void *ctx, int t, const int *prev, const float **attn)
{
    Ensemble *e = ctx;
    int V = e->members[0].vocab, R = e->R, S = e->S, with_attn = 1;
    memset(e->logp, 0, sizeof(float) * (long)R * V);
    memset(e->attn, 0, sizeof(float) * (long)R * S);
    for (int i = 0; i < e->n; i++) {
        const float *a = NULL;
        const float *logits = e->members[i].step(e->members[i].ctx, t, prev, &a);
        for (int r = 0; r < R; r++) {
            const float *row = logits + (long)r * V;
            float *p = e->logp + (long)r * V, lse = logits_log_normaliser(row, V);
            for (int w = 0; w < V; w++)
                p[w] += expf(row[w] - lse);
        }
        if (a) {
            for (long j = 0; j < (long)R * S; j++)
                e->attn[j] += a[j] / e->n;
        } else {
            with_attn = 0;
        }
    }
    for (long j = 0; j < (long)R * V; j++)
        e->logp[j] = logf(e->logp[j] / e->n + 1e-30f);
    *attn = with_attn ? e->attn : NULL;
    return e->logp;
}

static void ensemble_reorder(void *ctx, int t, const int *parent)
{
    Ensemble *e = ctx;
    for (int i = 0; i < e->n; i++)
        e->members[i].reorder(e->members[i].ctx, t, parent);
}

/* The members that can stop computing a row do; the others' rows stay as they were. */
static void ensemble_retire(void *ctx, int row)
{
    Ensemble *e = ctx;
    for (int i = 0; i < e->n; i++)
        if (e->members[i].retire) e->members[i].retire(e->members[i].ctx, row);
}

Decoder ensemble_decoder(Ensemble *e, const Decoder *members, int n)
{
    e->members = members;
    e->n = n;
    return (Decoder){.ctx = e, .vocab = members[0].vocab, .start = ensemble_start, .step = ensemble_step,
                     .reorder = ensemble_reorder, .retire = ensemble_retire};
}

void ensemble_free(Ensemble *e)
{
    free(e->logp);
    free(e->attn);
    memset(e, 0, sizeof *e);
}

/* ---------------------------------------------------------------- searches over models */

/* One Decoder for the n models: the model's own (its family's), or the ensemble of them. */
typedef struct {
    Decoder *members;   /* (n) */
    Ensemble ensemble;
    Decoder dec;
    int n;
} Models;

static void models_open(Models *ms, Model *const *m, RunState *const *rs, int n)
{
    ms->n = n;
    ms->members = xcalloc(n, sizeof(Decoder));
    ms->ensemble = (Ensemble){0};
    for (int i = 0; i < n; i++)
        ms->members[i] = model_family(&m[i]->dims)->decoder(m[i], rs[i]);
    ms->dec = n == 1 ? ms->members[0] : ensemble_decoder(&ms->ensemble, ms->members, n);
}

static void models_close(Models *ms)
{
    for (int i = 0; i < ms->n; i++)
        decoder_close(&ms->members[i]);
    ensemble_free(&ms->ensemble);
    free(ms->members);
}

void decode_greedy(Model *const *m, RunState *const *rs, int n_models, const Batch *batch, const int *limit, int want_attn,
                   Hypothesis *out)
{
    Models ms;
    models_open(&ms, m, rs, n_models);
    greedy_search(&ms.dec, batch, limit, want_attn, out);
    models_close(&ms);
}

void decode_search(Model *const *m, RunState *const *rs, int n_models, const Batch *batch, const SearchSpec *spec,
                   Hypothesis *out, int *count)
{
    Models ms;
    models_open(&ms, m, rs, n_models);
    search_run(&ms.dec, batch, spec, out, count);
    models_close(&ms);
}

void decode_beam(Model *const *m, RunState *const *rs, int n_models, int *const *src, const int *src_len, int N, int K,
                 int nbest, const int *limit, float alpha, int want_attn, Hypothesis *out, int *count)
{
    Batch batch = {0};
    batch_fill_source(&batch, src, src_len, N);
    Models ms;
    models_open(&ms, m, rs, n_models);
    beam_search(&ms.dec, &batch, K, nbest, limit, alpha, want_attn, out, count);
    models_close(&ms);
    batch_free(&batch);
}
