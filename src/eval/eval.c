#include "eval/eval.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"      /* defines: BleuStats, ChrfStats */
#include "data/corpus.h"    /* defines: PairTokens, corpus_tokenize, corpus_segment, corpus_encode */
#include "text/segment.h"   /* defines: segmenter_word_ends, segmenter_reference */
#include "decode/translate.h" /* defines: workers_translate_lines */
#include "data/tsv.h"       /* defines: TsvCorpus */
#include "eval/pairscore.h" /* defines: pairscore_examples */

#define EVAL_BATCH 64

/* Adds up <unk> coverage over one sentence's model tokens: count[0] words with an
 * <unk> token, count[1] words, count[2] <unk> tokens, count[3] tokens. A word's
 * tokens are the pieces up to one that ends it (segmenter_word_ends); under "word"
 * every token is a word. */
static void count_unknown(const Segmenter *s, const Vocab *v, const TokenList *pieces, long count[4])
{
    int unknown_in_word = 0;
    for (int i = 0; i < pieces->n; i++) {
        int unknown = vocab_lookup(v, pieces->tokens[i]) == VOCAB_UNK;
        unknown_in_word |= unknown;
        count[2] += unknown;
        count[3]++;
        if (segmenter_word_ends(s, pieces->tokens, pieces->n, i)) {
            count[0] += unknown_in_word;
            count[1]++;
            unknown_in_word = 0;
        }
    }
}

int eval_loss_problem(const char *model_path, const char *tsv_path, const char *per, double loss, Error *err)
{
    if (isfinite(loss))
        return error_set(err, "%s: the loss on %s is %.4g %s, too large for a perplexity (e^loss overflows): the "
                              "model's weights are far outside any trained range", model_path, tsv_path, loss, per);
    return error_set(err, "%s: the loss on %s is not finite (%s): the model's outputs overflowed, its weights are far "
                          "outside any trained range", model_path, tsv_path, isnan(loss) ? "NaN" : "infinite");
}

/* The reference loss's batches: batch b is examples [b * EVAL_BATCH, ...), its summed
 * loss in loss[b] and its target tokens in tokens[b]. A single model's batch has a run
 * state of its own (the workers' are for decoding), made and freed per batch; an
 * ensemble's (opt->ensemble) is the loss of the members' mean probability, by forced
 * decoding on a borrowed worker (pairscore.h). */
typedef struct {
    Workers *w;
    const TranslateOptions *opt;
    ModelFile *mf;
    const Example *ex;
    int n;
    double *loss;
    long *tokens;
} LossBatches;

static void batch_loss(void *ctx, int b)
{
    LossBatches *l = ctx;
    int start = b * EVAL_BATCH, n = l->n - start < EVAL_BATCH ? l->n - start : EVAL_BATCH, idx[EVAL_BATCH];
    if (l->opt->ensemble && workers_models(l->w) > 1) {
        Worker *k = workers_borrow(l->w);
        l->loss[b] = pairscore_examples(k, l->opt, l->ex + start, n, &l->tokens[b]);
        workers_return(l->w, k);
        return;
    }
    for (int i = 0; i < n; i++)
        idx[i] = start + i;
    RunState rs = {0};
    Batch batch = {0};
    batch_fill(&batch, l->ex, idx, n);
    runstate_ensure(&rs, &l->mf->model.dims, RUN_SCORE, n, batch.S, batch.T);
    l->loss[b] = model_forward(&l->mf->model, &rs, &batch, 0);
    l->tokens[b] = batch.n_tokens;
    runstate_free(&rs);
    batch_free(&batch);
}

/* Teacher-forced loss of the references, per target token (an ensemble's: that of the
 * members' mean probability); and the <unk> coverage. */
static double reference_loss(Workers *w, const TranslateOptions *opt, const TsvCorpus *tsv, long *tokens,
                             EvalResult *res)
{
    ModelFile *mf = workers_model(w, 0);
    PairTokens pairs;
    corpus_tokenize(tsv, &mf->text, TRANSLATE_MAX_SOURCE, &pairs);
    corpus_segment(&pairs, &mf->seg);
    long count[2][4] = {{0}};
    for (int i = 0; i < pairs.n; i++) {
        count_unknown(&mf->seg, &mf->src_vocab, &pairs.src[i], count[0]);
        count_unknown(&mf->seg, &mf->tgt_vocab, &pairs.tgt[i], count[1]);
    }
    for (int k = 0; k < 2; k++) {
        res->unk_words[k] = count[k][1] ? (double)count[k][0] / count[k][1] : 0;
        res->unk_tokens[k] = count[k][3] ? (double)count[k][2] / count[k][3] : 0;
    }
    Example *ex = corpus_encode(&pairs, NULL, pairs.n, &mf->src_vocab, &mf->tgt_vocab);
    int batches = (pairs.n + EVAL_BATCH - 1) / EVAL_BATCH;
    LossBatches l = {w, opt, mf, ex, pairs.n, xcalloc(batches ? batches : 1, sizeof(double)),
                     xcalloc(batches ? batches : 1, sizeof(long))};
    threadpool_for(workers_threads(w), batches, batch_loss, &l);
    double total = 0;
    *tokens = 0;
    for (int b = 0; b < batches; b++) {  /* in batch order: the same sum for any number of workers */
        total += l.loss[b];
        *tokens += l.tokens[b];
    }
    free(l.loss);
    free(l.tokens);
    examples_free(ex, pairs.n);
    pair_tokens_free(&pairs);
    return *tokens ? total / *tokens : NAN;
}

int eval_run(Workers *w, const char *model_path, const char *tsv_path, const TranslateOptions *opt,
             const EvalScoring *scoring, EvalResult *res, Error *err)
{
    ModelFile *mf = workers_model(w, 0);
    TsvCorpus tsv;
    if (tsv_read_pairs(tsv_path, &opt->lines, &tsv, err)) return -1;
    char note[ERROR_LEN];
    tsv_describe_skipped(&tsv, tsv_path, note, sizeof note);
    if (note[0]) fprintf(stderr, "nmt: warning: %s\n", note);
    if (tsv.n == 0) {
        tsv_free(&tsv);
        return error_set(err, "%s: no sentence pairs to evaluate", tsv_path);
    }
    memset(res, 0, sizeof *res);
    res->pairs = tsv.n;
    res->skipped = tsv.n_malformed;
    res->metric = scoring->metric;
    if (!scoring->tokenize_given) {
        char **refs = xmalloc(sizeof(char *) * (size_t)tsv.n);
        for (int i = 0; i < tsv.n; i++)
            refs[i] = tsv.pairs[i].tgt;
        res->metric.tokenize = bleu_tokenize_guess(refs, tsv.n);
        free(refs);
        if (res->metric.tokenize != BLEU_TOKENIZE_13A)
            fprintf(stderr, "nmt: note: %s: the references are %s text, without spaces between words: BLEU with "
                            "sacreBLEU's %s tokeniser (tok:%s; -tok chooses another)\n",
                    tsv_path, res->metric.tokenize == BLEU_TOKENIZE_ZH ? "Chinese" : "Japanese",
                    bleu_tokenize_name(res->metric.tokenize), bleu_tokenize_name(res->metric.tokenize));
    }
    if (mf->text.lowercase && !res->metric.lowercase)
        fprintf(stderr, "nmt: note: the model writes lowercase (trained with data.lowercase true) and the "
                        "references are scored as written (case:mixed); -lc compares lowercased text\n");

    /* The loss first: a model whose loss is not a number is not worth translating with. */
    res->loss = reference_loss(w, opt, &tsv, &res->target_tokens, res);
    res->perplexity = exp(res->loss);
    if (!isfinite(res->perplexity)) {
        int status = eval_loss_problem(model_path, tsv_path, "per target token", res->loss, err);
        tsv_free(&tsv);
        return status;
    }

    BleuStats bleu = {0};
    ChrfStats chrf;
    memset(&chrf, 0, sizeof chrf);
    /* Every line translated first (the batches spread over the workers), then scored in order. */
    char **src = xmalloc(sizeof(char *) * tsv.n), **hyp = xmalloc(sizeof(char *) * tsv.n);
    for (int i = 0; i < tsv.n; i++)
        src[i] = tsv.pairs[i].src;
    workers_translate_lines(w, src, tsv.n, EVAL_BATCH, opt, hyp, NULL);
    for (int i = 0; i < tsv.n; i++) {
        /* A reference segmented as the training data ("low@@ er") as a sentence. */
        char *ref = segmenter_reference(&mf->seg, tsv.pairs[i].tgt);
        bleu_stats_add(&bleu, hyp[i], ref, &res->metric);
        chrf_stats_add(&chrf, hyp[i], ref, &res->metric);
        free(ref);
        free(hyp[i]);
    }
    free(src);
    free(hyp);
    BleuScore b = bleu_compute(&bleu);
    res->bleu = b.score;
    memcpy(res->bleu_precisions, b.precisions, sizeof b.precisions);
    res->bleu_bp = b.bp;
    res->bleu_ratio = b.ratio;
    res->hyp_len = b.hyp_len;
    res->ref_len = b.ref_len;
    res->chrf = chrf_compute(&chrf);
    tsv_free(&tsv);
    return 0;
}

void eval_print(const EvalResult *r, int json, FILE *out)
{
    char bleu_sig[METRIC_SIGNATURE_MAX], chrf_sig[METRIC_SIGNATURE_MAX];
    bleu_signature(&r->metric, 0, bleu_sig);
    chrf_signature(&r->metric, chrf_sig);
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "bleu", r->bleu);
        cJSON_AddItemToObject(o, "bleu_precisions", cJSON_CreateDoubleArray(r->bleu_precisions, 4));
        cJSON_AddNumberToObject(o, "bleu_bp", r->bleu_bp);
        cJSON_AddNumberToObject(o, "bleu_ratio", r->bleu_ratio);
        cJSON_AddNumberToObject(o, "hyp_len", r->hyp_len);
        cJSON_AddNumberToObject(o, "ref_len", r->ref_len);
        cJSON_AddStringToObject(o, "bleu_signature", bleu_sig);
        cJSON_AddNumberToObject(o, "chrf", r->chrf);
        cJSON_AddStringToObject(o, "chrf_signature", chrf_sig);
        cJSON_AddNumberToObject(o, "loss", r->loss);
        cJSON_AddNumberToObject(o, "perplexity", r->perplexity);
        cJSON_AddNumberToObject(o, "target_tokens", (double)r->target_tokens);
        cJSON_AddItemToObject(o, "unk_words", cJSON_CreateDoubleArray(r->unk_words, 2));
        cJSON_AddItemToObject(o, "unk_tokens", cJSON_CreateDoubleArray(r->unk_tokens, 2));
        cJSON_AddNumberToObject(o, "pairs", r->pairs);
        cJSON_AddNumberToObject(o, "skipped_lines", r->skipped);
        char *s = cJSON_PrintUnformatted(o);
        fprintf(out, "%s\n", s);
        free(s);
        cJSON_Delete(o);
        return;
    }
    fprintf(out, "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %.0f ref_len = %.0f)\n",
            r->bleu, r->bleu_precisions[0], r->bleu_precisions[1], r->bleu_precisions[2], r->bleu_precisions[3],
            r->bleu_bp, r->bleu_ratio, r->hyp_len, r->ref_len);
    fprintf(out, "chrF2 = %.2f\n", r->chrf);
    fprintf(out, "loss = %.4f per target token, perplexity = %.2f (teacher forcing, %ld tokens)\n", r->loss,
            r->perplexity, r->target_tokens);
    fprintf(out, "<unk> = source %.2f%% of words (%.2f%% of tokens), target %.2f%% of words (%.2f%% of tokens)\n",
            100 * r->unk_words[0], 100 * r->unk_tokens[0], 100 * r->unk_words[1], 100 * r->unk_tokens[1]);
    fprintf(out, "pairs = %d (skipped %d malformed lines)\n", r->pairs, r->skipped);
    fprintf(out, "BLEU signature: %s\nchrF signature: %s\n", bleu_sig, chrf_sig);
}
