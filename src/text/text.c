/* text.c — normalisation, tokenising and detokenising; see text.h for the rules. */
#include "text/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ------------------------------------------------------------------------- */
/* Character classes                                                          */
/* ------------------------------------------------------------------------- */

/* Besides whitespace, punctuation and letters/numbers/marks, everything else
 * (symbols, Cf, private use, unassigned) stays in the current word but is not a
 * neighbour that keeps punctuation inside a word. */
int text_is_space(int32_t cp)
{
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_CC:
        return 1;
    default:
        return 0;
    }
}

/* 1 if cp lies in one of the n inclusive ranges. */
static int in_blocks(int32_t cp, const int32_t (*blocks)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cp >= blocks[i][0] && cp <= blocks[i][1]) return 1;
    return 0;
}

/* Chinese and Japanese: no spaces even between sentences or phrases. */
static int is_cjk(int32_t cp)
{
    static const int32_t blocks[][2] = {
        {0x2E80, 0x2FDF},   /* CJK radicals, Kangxi radicals */
        {0x3000, 0x303F},   /* CJK symbols and punctuation (U+3000, a space, never gets here) */
        {0x3040, 0x31FF},   /* Hiragana, Katakana, Bopomofo, Kanbun, CJK strokes */
        {0x3400, 0x4DBF},   /* CJK extension A */
        {0x4E00, 0x9FFF},   /* CJK unified ideographs */
        {0xF900, 0xFAFF},   /* CJK compatibility ideographs */
        {0xFE30, 0xFE4F},   /* CJK compatibility forms */
        {0xFF00, 0xFFEF},   /* half-width and full-width forms */
        {0x20000, 0x323AF}, /* CJK extensions B to H */
    };
    return in_blocks(cp, blocks, sizeof blocks / sizeof blocks[0]);
}

/* Southeast Asian scripts: no spaces between words, but spaces between phrases. */
int text_is_unspaced(int32_t cp)
{
    static const int32_t blocks[][2] = {
        {0x0E00, 0x0EFF},   /* Thai, Lao */
        {0x1000, 0x109F},   /* Myanmar */
        {0x1780, 0x17FF},   /* Khmer */
        {0x1980, 0x19FF},   /* New Tai Lue, Khmer symbols */
        {0x1A20, 0x1AAF},   /* Tai Tham */
    };
    return in_blocks(cp, blocks, sizeof blocks / sizeof blocks[0]) || is_cjk(cp);
}

static int is_punct(utf8proc_int32_t cp)
{
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE: case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO:
        return 1;
    default:
        return 0;
    }
}

static int is_mark(utf8proc_int32_t cp)
{
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_ME;
}

/* Letter, number or mark: the neighbours that let punctuation stay inside a word. */
static int is_word_char(utf8proc_int32_t cp)
{
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
        return 1;
    default:
        return 0;
    }
}

/* Other punctuation (Po) that closes a phrase: never preceded by a space when
 * detokenising. */
static int is_closing_po(utf8proc_int32_t cp)
{
    switch (cp) {
    case '.': case ',': case '!': case '?': case ':': case ';': case '%':
    case 0x2026: /* … */            case 0x2030: /* ‰ */
    case 0x0964: /* । danda */      case 0x0965: /* ॥ double danda */
    case 0x060C: /* ، */            case 0x061B: /* ؛ */          case 0x061F: /* ؟ */
    case 0x3001: /* 、 */           case 0x3002: /* 。 */
    case 0xFF01: /* ！ */           case 0xFF0C: /* ， */         case 0xFF0E: /* ． */
    case 0xFF1A: /* ： */           case 0xFF1B: /* ； */         case 0xFF1F: /* ？ */
        return 1;
    default:
        return 0;
    }
}

/* Punctuation that splits even between two letters (see text.h): brackets, and
 * marks that end a clause. ". , : %" are not here: "3.5", "1,000", "10:30". */
static int always_splits(utf8proc_int32_t cp)
{
    utf8proc_category_t c = utf8proc_category(cp);
    if (c == UTF8PROC_CATEGORY_PS || c == UTF8PROC_CATEGORY_PE)
        return 1;
    switch (cp) {
    case '!': case '?': case ';':
    case 0x00A1: /* ¡ */            case 0x00BF: /* ¿ */          case 0x2026: /* … */
    case 0x0964: /* । */            case 0x0965: /* ॥ */
    case 0x060C: /* ، */            case 0x061B: /* ؛ */          case 0x061F: /* ؟ */
    case 0x3001: /* 、 */           case 0x3002: /* 。 */
    case 0xFF01: /* ！ */           case 0xFF1B: /* ； */         case 0xFF1F: /* ？ */
        return 1;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------------------- */
/* Tokenising                                                                 */
/* ------------------------------------------------------------------------- */

/* Growing byte buffer for the word being built. */
typedef struct {
    char *bytes;
    size_t len, cap;
} WordBuf;

static void word_append(WordBuf *w, utf8proc_int32_t cp)
{
    if (w->len + 5 > w->cap) {
        w->cap = w->cap ? 2 * w->cap : 64;
        w->bytes = xrealloc(w->bytes, w->cap);
    }
    w->len += (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)w->bytes + w->len);
}

/* Moves the word (if any) into the token list and empties the buffer. */
static void word_flush(WordBuf *w, TokenList *out, int *cap)
{
    if (w->len == 0)
        return;
    if (out->n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        out->tokens = xrealloc(out->tokens, (size_t)*cap * sizeof *out->tokens);
    }
    char *tok = xmalloc(w->len + 1);
    memcpy(tok, w->bytes, w->len);
    tok[w->len] = '\0';
    out->tokens[out->n++] = tok;
    w->len = 0;
}

/* A copy of valid UTF-8 without its U+FEFF characters (malloc'd, *len updated), or
 * NULL if it has none. In valid UTF-8 the bytes EF BB BF can only be U+FEFF. */
static utf8proc_uint8_t *without_bom(const utf8proc_uint8_t *s, size_t *len)
{
    size_t n = *len, k = 0;
    utf8proc_uint8_t *out = NULL;
    for (size_t i = 0; i < n; i++) {
        if (i + 2 < n && s[i] == 0xEF && s[i + 1] == 0xBB && s[i + 2] == 0xBF) {
            if (!out) {
                out = xmalloc(n);
                memcpy(out, s, i);
                k = i;
            }
            i += 2;
        } else if (out) {
            out[k++] = s[i];
        }
    }
    if (out)
        *len = k;
    return out;
}

/* Decodes and normalises `len` bytes into code points (malloc'd into *cps).
 * Returns the number of code points, or -1 with a message. Validation is done
 * first with utf8proc_iterate because utf8proc_decompose reports only *that* the
 * input is invalid, not where.
 *
 * U+FEFF is dropped before normalising, not after: between a letter and its
 * combining mark ("g", U+FEFF, U+0301) it would otherwise keep NFC from composing
 * them, and the token would not be in NFC (found by tests/fuzz/fuzz_tokenize.c). */
static long normalize_to_codepoints(const char *line, size_t len, const TextOptions *opt,
                                    utf8proc_int32_t **cps, Error *err)
{
    const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)line;
    for (size_t at = 0; at < len;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate(s + at, (utf8proc_ssize_t)(len - at), &cp);
        if (step < 0)
            return error_set(err, "invalid UTF-8 at byte %zu", at);
        at += (size_t)step;
    }
    utf8proc_uint8_t *filtered = without_bom(s, &len);
    if (filtered)
        s = filtered;

    utf8proc_option_t flags = UTF8PROC_STABLE | UTF8PROC_COMPOSE;
    if (opt && opt->nfkc)
        flags |= UTF8PROC_COMPAT;
    if (opt && opt->lowercase)
        flags |= UTF8PROC_CASEFOLD;

    /* Two passes, as utf8proc_map does: the first returns the decomposed length. */
    utf8proc_ssize_t need = utf8proc_decompose(s, (utf8proc_ssize_t)len, NULL, 0, flags);
    if (need < 0) {
        free(filtered);
        return error_set(err, "cannot normalise text: %s", utf8proc_errmsg(need));
    }
    utf8proc_int32_t *buf = xmalloc(((size_t)need + 1) * sizeof *buf);
    utf8proc_ssize_t got = utf8proc_decompose(s, (utf8proc_ssize_t)len, buf, need, flags);
    free(filtered);
    if (got >= 0)
        got = utf8proc_normalize_utf32(buf, got, flags);
    if (got < 0) {
        free(buf);
        return error_set(err, "cannot normalise text: %s", utf8proc_errmsg(got));
    }
    *cps = buf;
    return (long)got;
}

long text_normalize_codepoints(const char *s, size_t len, const TextOptions *opt, int32_t **cps, Error *err)
{
    return normalize_to_codepoints(s, len, opt, cps, err);
}

int text_tokenize(const char *line, size_t len, const TextOptions *opt, TokenList *out, Error *err)
{
    out->tokens = NULL;
    out->n = 0;
    utf8proc_int32_t *cp = NULL;
    long n = normalize_to_codepoints(line, len, opt, &cp, err);
    if (n < 0)
        return -1;

    WordBuf word = {0};
    int cap = 0;
    const UserSymbols *symbols = opt ? opt->symbols : NULL;
    for (long i = 0; i < n; i++) {
        if (text_is_space(cp[i])) {
            word_flush(&word, out, &cap);
            continue;
        }
        int symbol = symbols ? user_symbols_match(symbols, cp + i, n - i) : 0;
        if (symbol) {  /* a protected symbol: a token of its own, whatever is around it */
            word_flush(&word, out, &cap);
            for (int k = 0; k < symbol; k++)
                word_append(&word, cp[i + k]);
            word_flush(&word, out, &cap);
            i += symbol - 1;
            continue;
        }
        if (!is_punct(cp[i]) || (opt && opt->whitespace_only)) {  /* letters, numbers, marks, symbols, Cf */
            word_append(&word, cp[i]);
            continue;
        }
        int inside = i > 0 && i + 1 < n && is_word_char(cp[i - 1]) && is_word_char(cp[i + 1])
                     && !always_splits(cp[i]);
        if (inside) {
            word_append(&word, cp[i]);
            continue;
        }
        /* A token of its own: the punctuation plus any marks combining with it. */
        word_flush(&word, out, &cap);
        word_append(&word, cp[i]);
        while (i + 1 < n && is_mark(cp[i + 1]))
            word_append(&word, cp[++i]);
        word_flush(&word, out, &cap);
    }
    word_flush(&word, out, &cap);
    free(word.bytes);
    free(cp);
    return 0;
}

void token_list_free(TokenList *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->tokens[i]);
    free(t->tokens);
    t->tokens = NULL;
    t->n = 0;
}

/* ------------------------------------------------------------------------- */
/* Detokenising                                                               */
/* ------------------------------------------------------------------------- */

/* The code point of a token that is one character (plus optional combining
 * marks), or -1 for anything longer. */
static utf8proc_int32_t single_char(const char *tok)
{
    const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)tok;
    utf8proc_ssize_t len = (utf8proc_ssize_t)strlen(tok);
    utf8proc_int32_t first;
    utf8proc_ssize_t at = utf8proc_iterate(s, len, &first);
    if (at <= 0)
        return -1;
    while (at < len) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate(s + at, len - at, &cp);
        if (step <= 0 || !is_mark(cp))
            return -1;
        at += step;
    }
    return first;
}

/* The first and last code points of a token (-1 if it is empty or not UTF-8). */
static utf8proc_int32_t first_char(const char *tok)
{
    utf8proc_int32_t cp;
    return utf8proc_iterate((const utf8proc_uint8_t *)tok, (utf8proc_ssize_t)strlen(tok), &cp) > 0 ? cp : -1;
}

static utf8proc_int32_t last_char(const char *tok)
{
    size_t len = strlen(tok), at = len;
    while (at > 0 && ((unsigned char)tok[at - 1] & 0xC0) == 0x80)
        at--;
    if (at == 0) return -1;
    utf8proc_int32_t cp;
    return utf8proc_iterate((const utf8proc_uint8_t *)tok + at - 1, (utf8proc_ssize_t)(len - at + 1), &cp) > 0
               ? cp : -1;
}

static int is_opening(utf8proc_int32_t cp)
{
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_PS || c == UTF8PROC_CATEGORY_PI || cp == 0x00A1 || cp == 0x00BF;
}

static int is_closing(utf8proc_int32_t cp)
{
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_PE || c == UTF8PROC_CATEGORY_PF || is_closing_po(cp);
}

char *text_detokenize(char *const *tokens, int n)
{
    size_t total = 1;
    for (int i = 0; i < n; i++)
        total += strlen(tokens[i]) + 1;
    char *out = xmalloc(total);
    size_t len = 0;

    int n_double = 0, n_single = 0;   /* straight quotes seen so far, per kind */
    int glue_next = 1;                /* no space before the next token */
    for (int i = 0; i < n; i++) {
        utf8proc_int32_t c = single_char(tokens[i]);
        int opens = 0, closes = 0;
        if (c == '"' || c == '\'') {
            int *count = c == '"' ? &n_double : &n_single;
            opens = *count % 2 == 0;
            closes = !opens;
            (*count)++;
        } else if (c >= 0) {
            opens = is_opening(c);
            closes = is_closing(c);
        }
        /* Chinese and Japanese put no space between their characters. */
        int unspaced = i > 0 && is_cjk(last_char(tokens[i - 1])) && is_cjk(first_char(tokens[i]));
        /* A token that starts with a combining mark (an orphan mark, after
         * whitespace in the input) always gets its space: glued to an opening token
         * it would combine with that token's marks, and NFC would reorder or compose
         * them when the sentence is read again (found by tests/fuzz/fuzz_tokenize.c). */
        int orphan_mark = i > 0 && is_mark(first_char(tokens[i]));
        if ((!glue_next && !closes && !unspaced) || orphan_mark)
            out[len++] = ' ';
        size_t tl = strlen(tokens[i]);
        memcpy(out + len, tokens[i], tl);
        len += tl;
        glue_next = opens;
    }
    out[len] = '\0';
    return out;
}

char *text_normalize_line(const char *line, size_t len, const TextOptions *opt)
{
    TokenList t;
    Error err;
    if (text_tokenize(line, len, opt, &t, &err) != 0)
        return NULL;
    char *s = text_detokenize(t.tokens, t.n);
    token_list_free(&t);
    return s;
}

char *text_join(char *const *tokens, int n)
{
    size_t total = 1;
    for (int i = 0; i < n; i++)
        total += strlen(tokens[i]) + 1;
    char *out = xmalloc(total), *at = out;
    for (int i = 0; i < n; i++) {
        if (i > 0) *at++ = ' ';
        size_t len = strlen(tokens[i]);
        memcpy(at, tokens[i], len);
        at += len;
    }
    *at = 0;
    return out;
}

/* ------------------------------------------------------------------------- */
/* Protected symbols                                                          */
/* ------------------------------------------------------------------------- */

/* printf into why[len]; -1. */
static int problem(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int problem(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

int user_symbol_problem(const char *s, char *why, size_t len)
{
    size_t n = strlen(s);
    static const char *const reserved[] = {"<pad>", "<unk>", "<sos>", "<eos>"};  /* vocab.h's specials */
    if (n == 0) return problem(why, len, "an empty string");
    if (n > USER_SYMBOL_MAX_BYTES)
        return problem(why, len, "\"%.40s...\" is longer than %d bytes", s, USER_SYMBOL_MAX_BYTES);
    for (size_t at = 0; at < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t step = utf8proc_iterate((const utf8proc_uint8_t *)s + at, (utf8proc_ssize_t)(n - at), &cp);
        if (step < 0) return problem(why, len, "\"%s\" is not valid UTF-8", s);
        if (text_is_space(cp))
            return problem(why, len, "\"%s\" holds whitespace or a control character (U+%04X)", s, (unsigned)cp);
        if (cp == 0x2581) return problem(why, len, "\"%s\" holds U+2581, SentencePiece's space", s);
        at += (size_t)step;
    }
    for (size_t i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (!strcmp(s, reserved[i])) return problem(why, len, "\"%s\" is a reserved name", s);
    if (n >= 2 && !strcmp(s + n - 2, "@@")) return problem(why, len, "\"%s\" ends in \"@@\", BPE's joiner", s);
    if (strchr(s, ','))
        return problem(why, len, "\"%s\" holds a comma, which SentencePiece's list of symbols cannot", s);
    return 0;
}

int user_symbols_init(UserSymbols *u, char *const *given, int n, const TextOptions *text, Error *err)
{
    memset(u, 0, sizeof *u);
    if (n > USER_SYMBOLS_MAX) return error_set(err, "%d symbols, more than %d", n, USER_SYMBOLS_MAX);
    TextOptions plain = text ? *text : (TextOptions){0};
    plain.symbols = NULL;
    u->given = xcalloc(n ? n : 1, sizeof(char *));
    u->norm = xcalloc(n ? n : 1, sizeof(char *));
    u->cps = xcalloc(n ? n : 1, sizeof(int32_t *));
    u->cps_len = xcalloc(n ? n : 1, sizeof(int));
    for (int i = 0; i < n; i++) {
        char why[ERROR_LEN / 2];
        if (user_symbol_problem(given[i], why, sizeof why)) {
            user_symbols_free(u);
            return error_set(err, "symbol %d: %s", i + 1, why);
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(given[i], given[j])) {
                user_symbols_free(u);
                return error_set(err, "symbol %d: \"%s\" is given twice", i + 1, given[i]);
            }
        u->given[i] = xstrdup(given[i]);
        u->n = i + 1;
        long m = text_normalize_codepoints(given[i], strlen(given[i]), &plain, &u->cps[i], err);
        if (m <= 0) {  /* valid UTF-8 was checked: only normalising to nothing is left */
            user_symbols_free(u);
            return error_set(err, "symbol %d: \"%s\" normalises to nothing", i + 1, given[i]);
        }
        u->cps_len[i] = (int)m;
        char *s = xmalloc((size_t)m * 4 + 1);
        size_t at = 0;
        for (long k = 0; k < m; k++)
            at += (size_t)utf8proc_encode_char(u->cps[i][k], (utf8proc_uint8_t *)s + at);
        s[at] = '\0';
        u->norm[i] = s;
    }
    return 0;
}

void user_symbols_free(UserSymbols *u)
{
    for (int i = 0; i < u->n; i++) {
        free(u->given[i]);
        free(u->norm[i]);
        free(u->cps[i]);
    }
    free(u->given);
    free(u->norm);
    free(u->cps);
    free(u->cps_len);
    memset(u, 0, sizeof *u);
}

int user_symbols_match(const UserSymbols *u, const int32_t *cp, long n)
{
    int best = 0;
    for (int i = 0; i < u->n; i++) {
        int m = u->cps_len[i];
        if (m > best && m <= n && u->cps[i][0] == cp[0] && !memcmp(u->cps[i], cp, sizeof(int32_t) * (size_t)m))
            best = m;
    }
    return best;
}

int user_symbols_is(const UserSymbols *u, const char *token)
{
    for (int i = 0; u && i < u->n; i++)
        if (!strcmp(u->norm[i], token)) return 1;
    return 0;
}
