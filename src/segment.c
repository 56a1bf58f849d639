/* segment.c — word tokens to the model's units and back; see segment.h. */
#include "segment.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"word", "bpe", "char"};

int tokenizer_kind(const char *name)
{
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, names[k])) return k;
    return -1;
}

const char *tokenizer_name(TokenizerKind kind) { return kind >= 0 && kind <= TOKENIZER_CHAR ? names[kind] : "?"; }

void segmenter_learn_bpe(Bpe *b, const VocabCounter *words, int n_merges)
{
    int n = vocab_counter_size(words);
    char **word = xmalloc(sizeof(char *) * (n ? n : 1));
    long *count = xmalloc(sizeof(long) * (n ? n : 1));
    vocab_counter_items(words, word, count);
    bpe_learn(b, word, count, n, n_merges);
    free(word);
    free(count);
}

static void copy_tokens(char *const *tokens, int n, TokenList *out)
{
    out->n = n;
    out->tokens = xmalloc(sizeof(char *) * (n ? n : 1));
    for (int i = 0; i < n; i++)
        out->tokens[i] = xstrdup(tokens[i]);
}

void segmenter_apply(const Segmenter *s, Side side, const TokenList *words, TokenList *pieces)
{
    switch (s->kind) {
    case TOKENIZER_BPE:
        subword_segment(side == SIDE_SOURCE ? &s->src : &s->tgt, words->tokens, words->n, pieces);
        break;
    case TOKENIZER_CHAR:
        subword_segment(NULL, words->tokens, words->n, pieces);
        break;
    default:
        copy_tokens(words->tokens, words->n, pieces);
    }
}

void segmenter_join(const Segmenter *s, char *const *pieces, int n, TokenList *words)
{
    if (s->kind == TOKENIZER_WORD) copy_tokens(pieces, n, words);
    else subword_join(pieces, n, words);
}

void segmenter_free(Segmenter *s)
{
    bpe_free(&s->src);
    bpe_free(&s->tgt);
}
