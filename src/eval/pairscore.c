/* pairscore.c — forced decoding of given pairs (pairscore.h). */
#include "eval/pairscore.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "data/corpus.h"    /* defines: corpus_tokenize, corpus_segment, encode_tokens */
#include "data/tsv.h"       /* defines: TsvCorpus, tsv_parse */
#include "decode/decode.h"  /* defines: decode_search, SearchSpec, Hypothesis */
#include "io/lines.h"       /* defines: LineReader, line_read */

#define PAIRSCORE_BATCH 64

/* Forced decoding of n pairs (src[i], tgt[i] ids) through the models opt chooses on
 * worker k: out[i]. */
static void force_pairs(Worker *k, const TranslateOptions *opt, int *const *src, const int *src_len, int *const *tgt,
                        const int *tgt_len, int n, Hypothesis *out)
{
    ModelFile **files;
    RunState **states;
    int nm, *limit = xmalloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        limit[i] = tgt_len[i] + 1;
    translate_models(k, opt, &files, &states, &nm);
    Model **models = xmalloc(sizeof(Model *) * nm);
    for (int e = 0; e < nm; e++)
        models[e] = &files[e]->model;
    Batch batch = {0};
    batch_fill_source(&batch, src, src_len, n);
    SearchSpec spec = {.limit = limit, .want_scores = 1, .prefix = tgt, .prefix_len = tgt_len, .force_end = 1};
    decode_search(models, states, nm, &batch, &spec, out, NULL);
    batch_free(&batch);
    free(models);
    free(files);
    free(states);
    free(limit);
}

double pairscore_examples(Worker *k, const TranslateOptions *opt, const Example *ex, int n, long *units)
{
    int *src[PAIRSCORE_BATCH], *tgt[PAIRSCORE_BATCH], src_len[PAIRSCORE_BATCH], tgt_len[PAIRSCORE_BATCH];
    Hypothesis h[PAIRSCORE_BATCH];
    double total = 0;
    *units = 0;
    for (int start = 0; start < n; start += PAIRSCORE_BATCH) {
        int m = n - start < PAIRSCORE_BATCH ? n - start : PAIRSCORE_BATCH;
        for (int i = 0; i < m; i++) {
            src[i] = ex[start + i].src;
            src_len[i] = ex[start + i].src_len;
            tgt[i] = ex[start + i].tgt;
            tgt_len[i] = ex[start + i].tgt_len;
        }
        force_pairs(k, opt, src, src_len, tgt, tgt_len, m, h);
        for (int i = 0; i < m; i++) {
            total -= h[i].logprob;
            *units += tgt_len[i] + 1;
            hypothesis_free(&h[i]);
        }
    }
    return total;
}

/* ---------------------------------------------------------------- --per-line */

/* A batch of lines being scored: each line's pair (index into tsv) or why it has none. */
typedef struct {
    TsvCorpus tsv;                 /* the batch's pairs */
    long number[PAIRSCORE_BATCH];  /* each line's number in the file */
    int pair[PAIRSCORE_BATCH];     /* its pair in tsv, or -1 */
    const char *why[PAIRSCORE_BATCH];  /* no pair: why (NULL: a blank line, said nothing) */
    int n;
} Lines;

/* Why nmt eval leaves out a pair that corpus_tokenize dropped, into why[len]. */
static void dropped_why(const ModelFile *mf, const TsvPair *pair, char *why, size_t len)
{
    TokenList s = {0}, t = {0};
    Error err;
    snprintf(why, len, "a side has no token after normalising (nmt eval leaves it out)");
    if (text_tokenize(pair->src, strlen(pair->src), &mf->text, &s, &err) == 0 &&
        text_tokenize(pair->tgt, strlen(pair->tgt), &mf->text, &t, &err) == 0 && s.n > 0 && t.n > 0)
        snprintf(why, len, "a side longer than %d tokens (nmt eval leaves it out)", TRANSLATE_MAX_SOURCE);
    token_list_free(&s);
    token_list_free(&t);
}

/* Scores the batch's pairs and writes one line per line. */
static int score_lines(Worker *k, const TranslateOptions *opt, Lines *b, const char *path, int word_scores,
                       FILE *out)
{
    ModelFile *mf = worker_model(k, opt->ensemble ? 0 : opt->model);
    PairTokens pairs;
    corpus_tokenize(&b->tsv, &mf->text, TRANSLATE_MAX_SOURCE, &pairs);
    corpus_segment(&pairs, &mf->seg);
    int *src[PAIRSCORE_BATCH], *tgt[PAIRSCORE_BATCH], src_len[PAIRSCORE_BATCH], tgt_len[PAIRSCORE_BATCH];
    int scored[PAIRSCORE_BATCH];  /* by pair of tsv: its row in the forced batch, or -1 */
    Hypothesis h[PAIRSCORE_BATCH];
    for (int i = 0; i < b->tsv.n; i++)
        scored[i] = -1;
    for (int i = 0; i < pairs.n; i++) {
        src[i] = encode_tokens(&pairs.src[i], &mf->src_vocab);
        tgt[i] = encode_tokens(&pairs.tgt[i], &mf->tgt_vocab);
        src_len[i] = pairs.src[i].n;
        tgt_len[i] = pairs.tgt[i].n;
        scored[pairs.index[i]] = i;
    }
    if (pairs.n > 0) force_pairs(k, opt, src, src_len, tgt, tgt_len, pairs.n, h);
    for (int l = 0; l < b->n; l++) {
        int p = b->pair[l], row = p >= 0 ? scored[p] : -1;
        char dropped[128];
        const char *why = b->why[l];
        if (p >= 0 && row < 0) {
            dropped_why(mf, &b->tsv.pairs[p], dropped, sizeof dropped);
            why = dropped;
        }
        if (why) fprintf(stderr, "nmt: warning: %s line %ld: %s; an empty line written\n", path, b->number[l], why);
        if (row >= 0) {
            const Hypothesis *x = &h[row];
            fprintf(out, "%.6f\t%d", x->logprob, x->len + 1);
            for (int u = 0; word_scores && u <= x->len; u++)
                fprintf(out, u ? " %.6f" : "\t%.6f", x->unit_logp[u]);
        }
        fputc('\n', out);
    }
    for (int i = 0; i < pairs.n; i++) {
        free(src[i]);
        free(tgt[i]);
        hypothesis_free(&h[i]);
    }
    pair_tokens_free(&pairs);
    tsv_free(&b->tsv);
    b->n = 0;
    return ferror(out) ? -1 : 0;
}

/* Line `number` (its line end removed) into the batch: its pair, or why there is none. */
static void add_line(Lines *b, char *line, size_t len, long number)
{
    TsvCorpus one;
    tsv_parse(line, len, &one);
    int l = b->n++;
    b->number[l] = number;
    b->pair[l] = -1;
    b->why[l] = one.n_malformed ? one.bad_reasons[0] : NULL;
    if (one.n == 1) {
        if (b->tsv.n == b->tsv.cap) {
            b->tsv.cap = PAIRSCORE_BATCH;
            b->tsv.pairs = xrealloc(b->tsv.pairs, sizeof(TsvPair) * PAIRSCORE_BATCH);
        }
        b->pair[l] = b->tsv.n;
        one.pairs[0].line = (int)number;
        b->tsv.pairs[b->tsv.n++] = one.pairs[0];
        one.n = 0;
    }
    tsv_free(&one);
}

int pairscore_file(Workers *w, const TranslateOptions *opt, const char *tsv_path, int word_scores, FILE *out,
                   Error *err)
{
    FILE *f = fopen(tsv_path, "rb");
    if (!f) return error_set(err, "%s: %s", tsv_path, strerror(errno));
    LineReader r;
    line_reader_init(&r, f, &opt->lines);
    Lines *b = xcalloc(1, sizeof(Lines));
    Worker *k = workers_borrow(w);
    char *buf = NULL;
    size_t cap = 0;
    int status = 0;
    for (;;) {
        ssize_t len = line_read(&r, &buf, &cap, 0);
        if (len == LINE_EOF) break;
        if (len == LINE_ERROR) status = lines_read_error(err, tsv_path);
        if (len == LINE_TOO_LONG) status = lines_too_long(err, tsv_path, r.number, &opt->lines);
        if (status) break;
        size_t n = (size_t)len;
        if (n > 0 && buf[n - 1] == '\n') n--;  /* tsv_parse takes a CR before it off */
        add_line(b, buf, n, r.number);
        if (b->n == PAIRSCORE_BATCH && score_lines(k, opt, b, tsv_path, word_scores, out)) break;
    }
    if (status == 0 && b->n > 0) score_lines(k, opt, b, tsv_path, word_scores, out);
    if (status == 0 && (ferror(out) || fflush(out) != 0)) status = error_set(err, "writing the scores: %s",
                                                                             strerror(errno));
    tsv_free(&b->tsv);
    free(b);
    free(buf);
    workers_return(w, k);
    line_reader_free(&r);
    fclose(f);
    return status;
}
