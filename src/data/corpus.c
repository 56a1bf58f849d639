#include "data/corpus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h" /* defines: xmalloc, Rng */

void corpus_tokenize(const TsvCorpus *tsv, const TextOptions *opt, int max_len, PairTokens *out)
{
    out->src = xcalloc(tsv->n, sizeof(TokenList));
    out->tgt = xcalloc(tsv->n, sizeof(TokenList));
    out->line = xcalloc(tsv->n, sizeof(int));
    out->index = xcalloc(tsv->n, sizeof(int));
    out->n = out->n_too_long = out->n_empty = 0;
    for (int i = 0; i < tsv->n; i++) {
        const TsvPair *pair = &tsv->pairs[i];
        TokenList s, t;
        Error err;
        if (text_tokenize(pair->src, strlen(pair->src), opt, &s, &err) != 0) continue;
        if (text_tokenize(pair->tgt, strlen(pair->tgt), opt, &t, &err) != 0) {
            token_list_free(&s);
            continue;
        }
        if (s.n == 0 || t.n == 0) out->n_empty++;
        else if (max_len > 0 && (s.n > max_len || t.n > max_len)) out->n_too_long++;
        else {
            out->src[out->n] = s;
            out->tgt[out->n] = t;
            out->line[out->n] = pair->line;
            out->index[out->n] = i;
            out->n++;
            continue;
        }
        token_list_free(&s);
        token_list_free(&t);
    }
}

void pair_tokens_free(PairTokens *p)
{
    for (int i = 0; i < p->n; i++) {
        token_list_free(&p->src[i]);
        token_list_free(&p->tgt[i]);
    }
    free(p->src);
    free(p->tgt);
    free(p->line);
    free(p->index);
    p->src = p->tgt = NULL;
    p->line = p->index = NULL;
    p->n = 0;
}

void corpus_segment(PairTokens *p, const Segmenter *s)
{
    if (s->kind == TOKENIZER_WORD || s->kind == TOKENIZER_NONE) return;  /* the tokens are the units */
    for (int i = 0; i < p->n; i++) {
        TokenList src, tgt;
        segmenter_apply(s, SIDE_SOURCE, &p->src[i], &src);
        segmenter_apply(s, SIDE_TARGET, &p->tgt[i], &tgt);
        token_list_free(&p->src[i]);
        token_list_free(&p->tgt[i]);
        p->src[i] = src;
        p->tgt[i] = tgt;
    }
}

void corpus_split(int n, double fraction, uint64_t seed, int **train, int *n_train, int **valid, int *n_valid)
{
    int *order = xmalloc(sizeof(int) * (n ? n : 1));
    for (int i = 0; i < n; i++)
        order[i] = i;
    Rng rng;
    rng_seed(&rng, seed ^ 0x5eed5b1177ULL);
    rng_shuffle(&rng, order, n);
    *n_valid = (int)lround(n * fraction);
    *n_train = n - *n_valid;
    *valid = xmalloc(sizeof(int) * (*n_valid ? *n_valid : 1));
    *train = xmalloc(sizeof(int) * (*n_train ? *n_train : 1));
    for (int i = 0; i < *n_valid; i++)
        (*valid)[i] = order[i];
    for (int i = 0; i < *n_train; i++)
        (*train)[i] = order[*n_valid + i];
    free(order);
}

void corpus_count(const PairTokens *p, const int *idx, int n, VocabCounter *src, VocabCounter *tgt)
{
    for (int i = 0; i < n; i++) {
        int k = idx ? idx[i] : i;
        for (int j = 0; src && j < p->src[k].n; j++)
            vocab_counter_add(src, p->src[k].tokens[j]);
        for (int j = 0; tgt && j < p->tgt[k].n; j++)
            vocab_counter_add(tgt, p->tgt[k].tokens[j]);
    }
}

int *encode_tokens(const TokenList *t, const Vocab *v)
{
    int *ids = xmalloc(sizeof(int) * (t->n ? t->n : 1));
    for (int i = 0; i < t->n; i++)
        ids[i] = vocab_lookup(v, t->tokens[i]);
    return ids;
}

Example *corpus_encode(const PairTokens *p, const int *idx, int n, const Vocab *sv, const Vocab *tv)
{
    Example *ex = xcalloc(n ? n : 1, sizeof(Example));
    for (int i = 0; i < n; i++) {
        int k = idx ? idx[i] : i;
        ex[i].src = encode_tokens(&p->src[k], sv);
        ex[i].src_len = p->src[k].n;
        ex[i].tgt = encode_tokens(&p->tgt[k], tv);
        ex[i].tgt_len = p->tgt[k].n;
    }
    return ex;
}

void examples_free(Example *ex, int n)
{
    for (int i = 0; ex && i < n; i++) {
        free(ex[i].src);
        free(ex[i].tgt);
    }
    free(ex);
}
