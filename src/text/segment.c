/* segment.c — word tokens to the model's units and back; see segment.h. */
#include "text/segment.h"

#include <stdlib.h>
#include <string.h>

static const char *const names[TOKENIZER_KINDS] = {"word", "bpe", "char", "none", "spm"};
static const char *const unit_names[TOKENIZER_KINDS] = {"words", "subword pieces", "characters", "tokens",
                                                        "SentencePiece pieces"};
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

int tokenizer_whitespace_only(TokenizerKind kind) { return kind == TOKENIZER_NONE || kind == TOKENIZER_SPM; }

long segmenter_learn_bpe(Bpe *b, const VocabCounter *words, int n_merges, BpeFormat format,
                         const UserSymbols *symbols)
{
    int n = vocab_counter_size(words);
    char **word = xmalloc(sizeof(char *) * (n ? n : 1));
    long *count = xmalloc(sizeof(long) * (n ? n : 1));
    vocab_counter_items(words, word, count);
    for (int i = 0; symbols && i < n; i++)
        if (user_symbols_is(symbols, word[i])) count[i] = 0;  /* bpe_learn ignores it */
    BpeLearnReport report;
    bpe_learn_format(b, word, count, n, n_merges, format, &report);
    free(word);
    free(count);
    return report.too_long;
}

/* ---------------------------------------------------------------- SentencePiece */

int segmenter_load_spm(SpmModel *m, const void *proto, size_t n, const char *name, Error *err)
{
    char why[ERROR_LEN / 2];
    memset(m, 0, sizeof *m);
    m->spm = spm_load(proto, n, why, sizeof why);
    if (!m->spm) return error_set(err, "%s: not a SentencePiece model (%s)", name, why);
    m->proto = xmalloc(n ? n : 1);
    memcpy(m->proto, proto, n);
    m->n = n;
    return 0;
}

int segmenter_learn_spm(SpmModel *m, const char *const *lines, long n, const char *model_type, int vocab_size,
                        const UserSymbols *symbols, Error *err)
{
    char why[ERROR_LEN / 2], *proto;
    size_t len;
    memset(m, 0, sizeof *m);
    /* The symbols as SentencePiece takes them: comma-separated (user_symbol_problem keeps
     * commas out of them). */
    char *listed = symbols && symbols->n ? text_join(symbols->norm, symbols->n) : NULL;
    for (char *c = listed; c && *c; c++)
        if (*c == ' ') *c = ',';
    int failed = spm_train(lines, n, model_type, vocab_size, listed, &proto, &len, why, sizeof why);
    free(listed);
    if (failed)
        return error_set(err, "SentencePiece could not train a %s model of %d pieces: %s", model_type, vocab_size, why);
    int status = segmenter_load_spm(m, proto, len, "the model SentencePiece trained", err);
    free(proto);
    return status;
}

const char *segmenter_spm_type(const SpmModel *m) { return spm_model_type(m->proto, m->n); }

void spm_model_free(SpmModel *m)
{
    if (m->spm) spm_free(m->spm);
    free(m->proto);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- joining units */

/* subword-nmt's way back, on the units joined by spaces: every "@@ " removed, and a
 * final "@@" (sed -r 's/(@@ )|(@@ ?$)//g'). */
static char *undo_bpe_at(char *const *units, int n)
{
    char *text = text_join(units, n), *to = text;
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

/* ---------------------------------------------------------------- units */

static void copy_tokens(char *const *tokens, int n, TokenList *out)
{
    out->n = n;
    out->tokens = xmalloc(sizeof(char *) * (n ? n : 1));
    for (int i = 0; i < n; i++)
        out->tokens[i] = xstrdup(tokens[i]);
}

/* The pieces of the sentence the words make, under one side's SentencePiece model. */
static void spm_apply(const SpmModel *m, const TokenList *words, TokenList *pieces)
{
    char *sentence = text_join(words->tokens, words->n);
    /* The library refuses no valid UTF-8 (and text_tokenize lets no other through); were
     * it to, the words themselves are the units, to be looked up as any unknown unit. */
    if (spm_encode(m->spm, sentence, &pieces->tokens, &pieces->n) != 0) copy_tokens(words->tokens, words->n, pieces);
    free(sentence);
}

/* The units of words, with no protected symbol among them. */
static void segmenter_apply_plain(const Segmenter *s, Side side, const TokenList *words, TokenList *pieces)
{
    switch (s->kind) {
    case TOKENIZER_SPM:
        spm_apply(side == SIDE_SOURCE ? &s->spm_src : &s->spm_tgt, words, pieces);
        break;
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

/* segmenter_apply with protected symbols: the runs of other words segmented as they
 * would be, each symbol one unit. */
static void apply_around_symbols(const Segmenter *s, Side side, const TokenList *words, TokenList *pieces)
{
    pieces->n = 0;
    pieces->tokens = NULL;
    int cap = 0;
    for (int start = 0; start < words->n;) {
        int end = start;
        while (end < words->n && !user_symbols_is(s->symbols, words->tokens[end]))
            end++;
        TokenList run = {words->tokens + start, end - start}, got = {0};
        if (end > start) segmenter_apply_plain(s, side, &run, &got);
        int symbol = end < words->n;
        if (pieces->n + got.n + symbol > cap) {
            cap = 2 * (pieces->n + got.n + symbol) + 8;
            pieces->tokens = xrealloc(pieces->tokens, sizeof(char *) * (size_t)cap);
        }
        if (got.n)  /* (got.tokens is NULL when the run was empty) */
            memcpy(pieces->tokens + pieces->n, got.tokens, sizeof(char *) * (size_t)got.n);
        pieces->n += got.n;
        free(got.tokens);
        if (symbol) {
            const char *w = words->tokens[end];
            char *unit = xmalloc(strlen(w) + 4);
            strcpy(unit, s->kind == TOKENIZER_SPM ? SPM_SPACE : "");
            strcat(unit, w);
            pieces->tokens[pieces->n++] = unit;
        }
        start = end + symbol;
    }
}

void segmenter_apply(const Segmenter *s, Side side, const TokenList *words, TokenList *pieces)
{
    if (s->symbols && s->symbols->n > 0 && s->kind != TOKENIZER_WORD && s->kind != TOKENIZER_NONE) {
        apply_around_symbols(s, side, words, pieces);
        return;
    }
    segmenter_apply_plain(s, side, words, pieces);
}


/* The sentence output pieces spell under the target side's SentencePiece model. */
static char *spm_sentence(const Segmenter *s, char *const *pieces, int n)
{
    char *text = spm_decode(s->spm_tgt.spm, pieces, n);
    /* Refused by the library (it refuses no piece strings we know of): the same rule by
     * hand, U+2581 a space. */
    return text ? text : undo_spm(pieces, n);
}

void segmenter_join(const Segmenter *s, char *const *pieces, int n, TokenList *words)
{
    if (s->kind == TOKENIZER_BPE || s->kind == TOKENIZER_CHAR) {
        subword_join(pieces, n, words);
    } else if (s->kind == TOKENIZER_SPM) {
        char *sentence = spm_sentence(s, pieces, n);
        const TextOptions split = {.whitespace_only = 1};
        Error err;
        if (text_tokenize(sentence, strlen(sentence), &split, words, &err) != 0) copy_tokens(pieces, n, words);
        free(sentence);
    } else {
        copy_tokens(pieces, n, words);
    }
}

/* ---------------------------------------------------------------- back to text */

char *segmenter_detokenize(const Segmenter *s, char *const *units, int n)
{
    if (s->kind == TOKENIZER_NONE) {
        if (s->format == SUBWORD_FORMAT_BPE_AT) return undo_bpe_at(units, n);
        if (s->format == SUBWORD_FORMAT_SPM) return undo_spm(units, n);
        return text_join(units, n);
    }
    if (s->kind == TOKENIZER_SPM) return spm_sentence(s, units, n);
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

int segmenter_word_ends(const Segmenter *s, char *const *units, int n, int i)
{
    if (i + 1 >= n) return 1;
    switch (s->kind) {
    case TOKENIZER_BPE:
    case TOKENIZER_CHAR:
        return !subword_continues(units[i]);
    case TOKENIZER_NONE:
        if (s->format == SUBWORD_FORMAT_BPE_AT) return !subword_continues(units[i]);  /* subword-nmt's "@@" too */
        if (s->format == SUBWORD_FORMAT_SPM) return !strncmp(units[i + 1], SPM_SPACE, 3);
        return 1;
    case TOKENIZER_SPM:
        return !strncmp(units[i + 1], SPM_SPACE, 3);
    default:
        return 1;
    }
}

void segmenter_free(Segmenter *s)
{
    bpe_free(&s->src);
    bpe_free(&s->tgt);
    spm_model_free(&s->spm_src);
    spm_model_free(&s->spm_tgt);
}
