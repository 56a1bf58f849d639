/* segment.c — word tokens to the model's units and back; see segment.h. */
#include "segment.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[TOKENIZER_KINDS] = {"word", "bpe", "char", "none"};
static const char *const unit_names[TOKENIZER_KINDS] = {"words", "subword pieces", "characters", "tokens"};
static const char *const formats[SUBWORD_FORMATS] = {"none", "bpe_at", "spm"};

/* U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's mark of a space. */
#define SPM_SPACE "\xE2\x96\x81"

/* The index of name in list[0..n), or -1. */
static int find_name(const char *const *list, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(name, list[k])) return k;
    return -1;
}

int tokenizer_kind(const char *name) { return find_name(names, TOKENIZER_KINDS, name); }

const char *tokenizer_name(TokenizerKind kind) { return kind >= 0 && kind < TOKENIZER_KINDS ? names[kind] : "?"; }

int subword_format(const char *name) { return find_name(formats, SUBWORD_FORMATS, name); }

const char *subword_format_name(int format) { return format >= 0 && format < SUBWORD_FORMATS ? formats[format] : "?"; }

const char *tokenizer_units(TokenizerKind kind) { return kind >= 0 && kind < TOKENIZER_KINDS ? unit_names[kind] : "?"; }

int tokenizer_whitespace_only(TokenizerKind kind) { return kind == TOKENIZER_NONE; }

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
    if (s->kind == TOKENIZER_BPE || s->kind == TOKENIZER_CHAR) subword_join(pieces, n, words);
    else copy_tokens(pieces, n, words);
}

/* ---------------------------------------------------------------- back to text */

/* The units joined by single spaces (malloc'd). */
static char *join_spaced(char *const *units, int n)
{
    size_t total = 1;
    for (int i = 0; i < n; i++)
        total += strlen(units[i]) + 1;
    char *out = xmalloc(total), *at = out;
    for (int i = 0; i < n; i++) {
        if (i > 0) *at++ = ' ';
        size_t len = strlen(units[i]);
        memcpy(at, units[i], len);
        at += len;
    }
    *at = 0;
    return out;
}

/* subword-nmt's way back, on the units joined by spaces: every "@@ " removed, and a
 * final "@@" (sed -r 's/(@@ )|(@@ ?$)//g'). */
static char *undo_bpe_at(char *const *units, int n)
{
    char *text = join_spaced(units, n), *to = text;
    for (const char *from = text; *from;) {
        if (from[0] == '@' && from[1] == '@' && (from[2] == ' ' || from[2] == 0)) {
            from += from[2] ? 3 : 2;
            continue;
        }
        *to++ = *from++;
    }
    *to = 0;
    return text;
}

/* SentencePiece's way back: the units concatenated, each U+2581 a space; as nmt's
 * sentences have, single spaces and none at either end (spm_decode drops the first). */
static char *undo_spm(char *const *units, int n)
{
    size_t total = 1;
    for (int i = 0; i < n; i++)
        total += strlen(units[i]);
    char *out = xmalloc(total);
    size_t len = 0;
    for (int i = 0; i < n; i++)
        for (const char *p = units[i]; *p;) {
            int space = !strncmp(p, SPM_SPACE, 3);
            p += space ? 3 : 1;
            if (space && (len == 0 || out[len - 1] == ' ')) continue;
            out[len++] = space ? ' ' : p[-1];
        }
    if (len > 0 && out[len - 1] == ' ') len--;
    out[len] = 0;
    return out;
}

char *segmenter_detokenize(const Segmenter *s, char *const *units, int n)
{
    if (s->kind == TOKENIZER_NONE) {
        if (s->format == SUBWORD_FORMAT_BPE_AT) return undo_bpe_at(units, n);
        if (s->format == SUBWORD_FORMAT_SPM) return undo_spm(units, n);
        return join_spaced(units, n);
    }
    TokenList words;
    segmenter_join(s, units, n, &words);
    char *sentence = text_detokenize(words.tokens, words.n);
    token_list_free(&words);
    return sentence;
}

char *segmenter_reference(const Segmenter *s, const char *line)
{
    if (s->kind != TOKENIZER_NONE || s->format == SUBWORD_FORMAT_NONE) return xstrdup(line);
    const TextOptions split = {.whitespace_only = 1};
    TokenList t;
    Error err;
    if (text_tokenize(line, strlen(line), &split, &t, &err) != 0) return xstrdup(line);
    char *sentence = segmenter_detokenize(s, t.tokens, t.n);
    token_list_free(&t);
    return sentence;
}

/* 1 if unit ends with "@@". */
static int ends_with_at(const char *unit)
{
    size_t len = strlen(unit);
    return len >= 2 && !strcmp(unit + len - 2, "@@");
}

int segmenter_word_ends(const Segmenter *s, char *const *units, int n, int i)
{
    if (i + 1 >= n) return 1;
    switch (s->kind) {
    case TOKENIZER_BPE:
    case TOKENIZER_CHAR:
        return !subword_continues(units[i]);
    case TOKENIZER_NONE:
        if (s->format == SUBWORD_FORMAT_BPE_AT) return !ends_with_at(units[i]);
        if (s->format == SUBWORD_FORMAT_SPM) return !strncmp(units[i + 1], SPM_SPACE, 3);
        return 1;
    default:
        return 1;
    }
}

void segmenter_free(Segmenter *s)
{
    bpe_free(&s->src);
    bpe_free(&s->tgt);
}
