/* bleu.c — corpus BLEU (13a, exp smoothing) and chrF2 as sacreBLEU 2.x defines them.
 * See bleu.h for what each function promises; the comments here say how the Python
 * behaviour is reproduced in C. */
#include "eval/bleu.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "base/util.h"   /* defines: xmalloc, xrealloc, xstrdup */

/* ============================================================================
 * Characters: UTF-8 decoding and Python's idea of whitespace
 * ============================================================================ */

/* Python's str.isspace(), which str.split() and str.rstrip() use: the ASCII
 * whitespace and separators 0x09-0x0D, 0x1C-0x1F, space, plus the Unicode code points
 * with bidirectional class WS/B/S or category Zs. */
static int py_isspace(int32_t cp)
{
    if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20);
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

/* Decode one character at s (len bytes left, len >= 1) into *cp; returns the bytes
 * it takes. A byte that does not start valid UTF-8 becomes one character of its own,
 * 0xDC00 + byte, as Python's "surrogateescape" would decode it. */
static long utf8_next(const char *s, long len, int32_t *cp)
{
    utf8proc_int32_t c;
    utf8proc_ssize_t n = utf8proc_iterate((const utf8proc_uint8_t *)s, len, &c);
    if (n <= 0) {
        *cp = 0xDC00 + (unsigned char)s[0];
        return 1;
    }
    *cp = c;
    return (long)n;
}

/* Bytes of the whitespace character at s (len bytes left), or 0 if it is not one. */
static long space_at(const char *s, long len)
{
    int32_t cp;
    long n = utf8_next(s, len, &cp);
    return py_isspace(cp) ? n : 0;
}

/* ============================================================================
 * 13a tokenisation
 * ============================================================================ */

/* Python's s.replace(from, to): every non-overlapping occurrence, left to right.
 * Takes ownership of s and returns a new string. */
static char *replace_all(char *s, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to), count = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + nf, from)) count++;
    if (count == 0) return s;
    char *out = xmalloc(strlen(s) - count * nf + count * nt + 1), *o = out;
    const char *p = s, *hit;
    while ((hit = strstr(p, from))) {
        memcpy(o, p, (size_t)(hit - p)); o += hit - p;
        memcpy(o, to, nt); o += nt;
        p = hit + nf;
    }
    strcpy(o, p);
    free(s);
    return out;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_period_comma(char c) { return c == '.' || c == ','; }

/* tokenizer_re's first class, [\{-\~\[-\` -\&\(-\+\:-\@\/]: { | } ~ [ \ ] ^ _ `
 * space ! " # $ % & ( ) * + : ; < = > ? @ / — all ASCII punctuation except ' , - . */
static int is_split_punct(char c)
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

/* The four re.sub passes of tokenizer_re, each a left-to-right scan that consumes a
 * match before looking for the next one, as re.sub does. They can run on bytes
 * rather than code points: every class is ASCII, "[^0-9]" matches any byte of a
 * multi-byte character just as it matches the character, and a match involving such
 * a character only ever inserts spaces next to it. */
static char *pass_split_punct(const char *s)      /* ([{-~[-` -&(-+:-@/]) -> " \1 " */
{
    char *out = xmalloc(3 * strlen(s) + 1), *o = out;
    for (; *s; s++) {
        if (is_split_punct(*s)) { *o++ = ' '; *o++ = *s; *o++ = ' '; }
        else *o++ = *s;
    }
    *o = '\0';
    return out;
}

static char *pass_period_after_nondigit(const char *s)   /* ([^0-9])([\.,]) -> "\1 \2 " */
{
    char *out = xmalloc(2 * strlen(s) + 1), *o = out;
    while (*s) {
        if (!is_digit(s[0]) && is_period_comma(s[1])) {
            *o++ = s[0]; *o++ = ' '; *o++ = s[1]; *o++ = ' ';
            s += 2;
        } else *o++ = *s++;
    }
    *o = '\0';
    return out;
}

static char *pass_period_before_nondigit(const char *s)  /* ([\.,])([^0-9]) -> " \1 \2" */
{
    char *out = xmalloc(2 * strlen(s) + 1), *o = out;
    while (*s) {
        if (is_period_comma(s[0]) && s[1] && !is_digit(s[1])) {
            *o++ = ' '; *o++ = s[0]; *o++ = ' '; *o++ = s[1];
            s += 2;
        } else *o++ = *s++;
    }
    *o = '\0';
    return out;
}

static char *pass_dash_after_digit(const char *s)        /* ([0-9])(-) -> "\1 \2 " */
{
    char *out = xmalloc(2 * strlen(s) + 1), *o = out;
    while (*s) {
        if (is_digit(s[0]) && s[1] == '-') {
            *o++ = s[0]; *o++ = ' '; *o++ = '-'; *o++ = ' ';
            s += 2;
        } else *o++ = *s++;
    }
    *o = '\0';
    return out;
}

/* ' '.join(s.split()): words separated by single spaces, none at either end. */
static char *collapse_whitespace(const char *s)
{
    long len = (long)strlen(s);
    char *out = xmalloc((size_t)len + 1), *o = out;
    long i = 0;
    while (i < len) {
        long sp = space_at(s + i, len - i);
        if (sp) { i += sp; continue; }
        if (o > out) *o++ = ' ';
        while (i < len && !space_at(s + i, len - i)) *o++ = s[i++];
    }
    *o = '\0';
    return out;
}

char *bleu_tokenize_13a(const char *line)
{
    /* Language-independent part, in sacreBLEU's order. */
    char *s = xstrdup(line);
    s = replace_all(s, "<skipped>", "");
    s = replace_all(s, "-\n", "");
    s = replace_all(s, "\n", " ");
    s = replace_all(s, "&quot;", "\"");
    s = replace_all(s, "&amp;", "&");
    s = replace_all(s, "&lt;", "<");
    s = replace_all(s, "&gt;", ">");

    /* The padding lets a final '.' or ',' see a following non-digit. */
    size_t n = strlen(s);
    char *padded = xmalloc(n + 3);
    padded[0] = ' ';
    memcpy(padded + 1, s, n);
    padded[n + 1] = ' ';
    padded[n + 2] = '\0';
    free(s);

    char *(*passes[])(const char *) = {
        pass_split_punct, pass_period_after_nondigit, pass_period_before_nondigit,
        pass_dash_after_digit, collapse_whitespace,
    };
    s = padded;
    for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
        char *next = passes[i](s);
        free(s);
        s = next;
    }
    return s;
}

/* ============================================================================
 * The other tokenisers, lowercasing, and the options
 * ============================================================================ */

/* sacreBLEU's tokenizer_zh._UCODE_RANGES. Two of its entries are written there as
 * '\u20000'..'\u2a6d6' and '\u2f800'..'\u2fa1d', meant as code points beyond
 * U+FFFF; Python reads each as a 4-digit escape and a digit ("\u2000" "0"), and its
 * comparison of one character with such two-character strings makes the ranges
 * U+2001..U+2A6D and U+2F81..U+2FA1. Those are what sacreBLEU computes with (the first
 * takes in general punctuation such as dashes and curly quotes, arrows and math
 * symbols), so those are what is here; Extension B (U+20000..) is not in them. */
static const int32_t zh_ranges[][2] = {
    {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A},
    {0xFA70, 0xFAD9}, {0x2001, 0x2A6D}, {0x2F81, 0x2FA1}, {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF},
    {0x3000, 0x303F}, {0x31C0, 0x31EF}, {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F},
    {0x31A0, 0x31BF}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0x2600, 0x26FF}, {0x2700, 0x27BF},
    {0x3200, 0x32FF}, {0x3300, 0x33FF},
};

static int is_chinese_char(int32_t cp)
{
    for (size_t i = 0; i < sizeof zh_ranges / sizeof zh_ranges[0]; i++) {
        if (cp >= zh_ranges[i][0] && cp <= zh_ranges[i][1]) return 1;
    }
    return 0;
}

/* Python's s.strip(): a copy without whitespace at either end. */
static char *strip_copy(const char *s)
{
    long len = (long)strlen(s), start = -1, end = 0, i = 0;
    while (i < len) {
        long sp = space_at(s + i, len - i);
        if (sp) { i += sp; continue; }
        if (start < 0) start = i;
        int32_t cp;
        i += utf8_next(s + i, len - i, &cp);
        end = i;
    }
    if (start < 0) start = end = 0;
    char *out = xmalloc((size_t)(end - start) + 1);
    memcpy(out, s + start, (size_t)(end - start));
    out[end - start] = '\0';
    return out;
}

/* TokenizerZh: strip; " c " around every Chinese character; then TokenizerRegexp,
 * which is 13a's four substitutions and whitespace collapse without the steps before
 * them and without 13a's padding spaces. */
static char *tokenize_zh(const char *line)
{
    char *stripped = strip_copy(line);
    long len = (long)strlen(stripped), i = 0;
    char *spaced = xmalloc((size_t)len * 3 + 1), *o = spaced;
    while (i < len) {
        int32_t cp;
        long n = utf8_next(stripped + i, len - i, &cp);
        int zh = is_chinese_char(cp);
        if (zh) *o++ = ' ';
        memcpy(o, stripped + i, (size_t)n);
        o += n;
        if (zh) *o++ = ' ';
        i += n;
    }
    *o = '\0';
    free(stripped);
    char *(*passes[])(const char *) = {
        pass_split_punct, pass_period_after_nondigit, pass_period_before_nondigit,
        pass_dash_after_digit, collapse_whitespace,
    };
    char *s = spaced;
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++) {
        char *next = passes[k](s);
        free(s);
        s = next;
    }
    return s;
}

/* TokenizerChar, " ".join(line), then BLEU's split(): every character that is not
 * whitespace a word of its own. */
static char *tokenize_char(const char *line)
{
    long len = (long)strlen(line), i = 0;
    char *out = xmalloc((size_t)len * 2 + 1), *o = out;
    while (i < len) {
        long sp = space_at(line + i, len - i);
        if (sp) { i += sp; continue; }
        int32_t cp;
        long n = utf8_next(line + i, len - i, &cp);
        if (o > out) *o++ = ' ';
        memcpy(o, line + i, (size_t)n);
        o += n;
        i += n;
    }
    *o = '\0';
    return out;
}

int bleu_tokenize_parse(const char *name, BleuTokenize *out)
{
    static const char *names[] = {"13a", "zh", "char", "none"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (BleuTokenize)i;
            return 0;
        }
    }
    return -1;
}

const char *bleu_tokenize_name(BleuTokenize t)
{
    switch (t) {
    case BLEU_TOKENIZE_ZH: return "zh";
    case BLEU_TOKENIZE_CHAR: return "char";
    case BLEU_TOKENIZE_NONE: return "none";
    default: return "13a";
    }
}

BleuTokenize bleu_tokenize_for_language(const char *target, int *substitute)
{
    *substitute = 0;
    if (strcmp(target, "zh") == 0) return BLEU_TOKENIZE_ZH;
    if (strcmp(target, "ja") == 0 || strcmp(target, "ko") == 0) {
        *substitute = 1;
        return BLEU_TOKENIZE_CHAR;
    }
    return BLEU_TOKENIZE_13A;
}

static int is_han(int32_t cp)
{
    return (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
           (cp >= 0x20000 && cp <= 0x2FA1F);
}

static int is_kana(int32_t cp)
{
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x31F0 && cp <= 0x31FF) || (cp >= 0xFF65 && cp <= 0xFF9F);
}

BleuTokenize bleu_tokenize_guess(char *const *refs, long n)
{
    long han = 0, kana = 0, all = 0;
    for (long r = 0; r < n; r++) {
        long len = (long)strlen(refs[r]), i = 0;
        while (i < len) {
            int32_t cp;
            i += utf8_next(refs[r] + i, len - i, &cp);
            if (py_isspace(cp)) continue;
            all++;
            han += is_han(cp);
            kana += is_kana(cp);
        }
    }
    if (all == 0 || 5 * (han + kana) < all) return BLEU_TOKENIZE_13A;
    return kana > 0 ? BLEU_TOKENIZE_CHAR : BLEU_TOKENIZE_ZH;
}

/* Python's _PyUnicode_IsCased, from the categories (and any character with a case
 * mapping, for the few Other_Lowercase/Other_Uppercase ones). */
static int is_cased(int32_t cp)
{
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
           utf8proc_tolower(cp) != cp || utf8proc_toupper(cp) != cp;
}

/* Python's _PyUnicode_IsCaseIgnorable, approximated: see bleu_lowercase in bleu.h. */
static int is_case_ignorable(int32_t cp)
{
    if (cp == '\'' || cp == '.' || cp == ':' || cp == 0xB7 || cp == 0x2018 || cp == 0x2019 || cp == 0x2024 ||
        cp == 0x2027 || cp == 0xFE13 || cp == 0xFE52 || cp == 0xFE55 || cp == 0xFF07 || cp == 0xFF0E ||
        cp == 0xFF1A)
        return 1;
    utf8proc_category_t c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_ME || c == UTF8PROC_CATEGORY_CF ||
           c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_SK;
}

/* Python's handle_capital_sigma: U+03A3 at cps[i] lowercases to final sigma U+03C2
 * when a cased character precedes it and none follows (case-ignorables skipped). */
static int32_t lower_sigma(const int32_t *cps, long n, long i)
{
    long j = i - 1;
    while (j >= 0 && is_case_ignorable(cps[j])) j--;
    if (j < 0 || !is_cased(cps[j])) return 0x3C3;
    j = i + 1;
    while (j < n && is_case_ignorable(cps[j])) j++;
    return j == n || !is_cased(cps[j]) ? 0x3C2 : 0x3C3;
}

char *bleu_lowercase(const char *text)
{
    long len = (long)strlen(text), n = 0, i = 0;
    int32_t *cps = xmalloc((size_t)(len + 1) * sizeof *cps);
    while (i < len) {
        i += utf8_next(text + i, len - i, &cps[n]);
        n++;
    }
    /* U+0130 (2 bytes) becomes 3; every other mapping stays within 4 bytes a
     * character, and an invalid byte stays one. */
    char *out = xmalloc((size_t)n * 4 + 1), *o = out;
    for (long k = 0; k < n; k++) {
        int32_t cp = cps[k];
        if (cp >= 0xDC80 && cp <= 0xDCFF) {         /* an invalid byte: as it was */
            *o++ = (char)(cp - 0xDC00);
            continue;
        }
        if (cp == 0x130) {
            *o++ = 'i';
            o += utf8proc_encode_char(0x307, (utf8proc_uint8_t *)o);
            continue;
        }
        int32_t lc = cp == 0x3A3 ? lower_sigma(cps, n, k) : utf8proc_tolower(cp);
        o += utf8proc_encode_char(lc, (utf8proc_uint8_t *)o);
    }
    *o = '\0';
    free(cps);
    return out;
}

/* Python's s.rstrip(): a copy without trailing whitespace. */
static char *rstrip_copy(const char *s)
{
    long len = (long)strlen(s), end = 0, i = 0;
    while (i < len) {
        long sp = space_at(s + i, len - i);
        if (sp) { i += sp; continue; }
        int32_t cp;
        i += utf8_next(s + i, len - i, &cp);
        end = i;
    }
    char *out = xmalloc((size_t)end + 1);
    memcpy(out, s, (size_t)end);
    out[end] = '\0';
    return out;
}

/* ============================================================================
 * N-gram counting shared by BLEU (word ids) and chrF (code points)
 * ============================================================================ */

/* An n-gram as up to 6 symbols; unused slots hold -1, so n-grams of one order
 * compare equal exactly when their symbols do. */
#define GRAM_MAX 6
typedef struct {
    int32_t sym[GRAM_MAX];
} Gram;

/* Any consistent total order will do: it only has to bring equal n-grams together
 * and order hypothesis and reference the same way for the merge below. */
static int gram_cmp(const void *a, const void *b) { return memcmp(a, b, sizeof(Gram)); }

/* The len - n + 1 n-grams of seq (len symbols) into out; returns how many. */
static long grams_of_order(const int32_t *seq, long len, int n, Gram *out)
{
    long count = len - n + 1 > 0 ? len - n + 1 : 0;
    for (long i = 0; i < count; i++) {
        for (int k = 0; k < GRAM_MAX; k++) out[i].sym[k] = k < n ? seq[i + k] : -1;
    }
    return count;
}

/* sum over distinct n-grams g of min(count of g in hyp, count of g in ref): Python's
 * Counter intersection. Sorts both arrays, then walks them together. */
static long clipped_matches(Gram *hyp, long nh, Gram *ref, long nr)
{
    qsort(hyp, (size_t)nh, sizeof(Gram), gram_cmp);
    qsort(ref, (size_t)nr, sizeof(Gram), gram_cmp);
    long matches = 0, i = 0, j = 0;
    while (i < nh && j < nr) {
        int c = gram_cmp(&hyp[i], &ref[j]);
        if (c < 0) i++;
        else if (c > 0) j++;
        else {
            long ci = 0, cj = 0;
            while (i + ci < nh && gram_cmp(&hyp[i + ci], &hyp[i]) == 0) ci++;
            while (j + cj < nr && gram_cmp(&ref[j + cj], &ref[j]) == 0) cj++;
            matches += ci < cj ? ci : cj;
            i += ci;
            j += cj;
        }
    }
    return matches;
}

/* ============================================================================
 * BLEU
 * ============================================================================ */

/* Split a 13a-tokenised string (single spaces, none at the ends) in place into
 * words; returns the count and a malloc'd array of pointers into s. */
static long split_spaces(char *s, char ***words)
{
    long n = 0, cap = 16;
    char **w = xmalloc((size_t)cap * sizeof *w);
    for (char *p = s; *p;) {
        if (n == cap) w = xrealloc(w, (size_t)(cap *= 2) * sizeof *w);
        w[n++] = p;
        char *sp = strchr(p, ' ');
        if (!sp) break;
        *sp = '\0';
        p = sp + 1;
    }
    *words = w;
    return n;
}

typedef struct {
    const char *word;
    long at;   /* position in the combined hyp+ref word list */
} WordAt;

static int word_at_cmp(const void *a, const void *b)
{
    return strcmp(((const WordAt *)a)->word, ((const WordAt *)b)->word);
}

/* Number the words of hyp (nh) and ref (nr) so that equal strings get equal ids:
 * ids[0..nh) for hyp, ids[nh..nh+nr) for ref. */
static void word_ids(char **hyp, long nh, char **ref, long nr, int32_t *ids)
{
    long n = nh + nr;
    WordAt *all = xmalloc((size_t)(n > 0 ? n : 1) * sizeof *all);
    for (long i = 0; i < n; i++) {
        all[i].word = i < nh ? hyp[i] : ref[i - nh];
        all[i].at = i;
    }
    qsort(all, (size_t)n, sizeof *all, word_at_cmp);
    int32_t id = -1;
    for (long i = 0; i < n; i++) {
        if (i == 0 || strcmp(all[i].word, all[i - 1].word) != 0) id++;
        ids[all[i].at] = id;
    }
    free(all);
}

/* BLEU._preprocess_segment: lower() if asked, rstrip, then the tokeniser. */
char *bleu_preprocess(const char *text, const MetricOptions *opt)
{
    char *lower = opt && opt->lowercase ? bleu_lowercase(text) : NULL;
    char *stripped = rstrip_copy(lower ? lower : text), *tok;
    free(lower);
    switch (opt ? opt->tokenize : BLEU_TOKENIZE_13A) {
    case BLEU_TOKENIZE_ZH: tok = tokenize_zh(stripped); break;
    case BLEU_TOKENIZE_CHAR: tok = tokenize_char(stripped); break;
    case BLEU_TOKENIZE_NONE: tok = collapse_whitespace(stripped); break;
    default: tok = bleu_tokenize_13a(stripped); break;
    }
    free(stripped);
    return tok;
}

void bleu_stats_add(BleuStats *s, const char *hyp, const char *ref, const MetricOptions *opt)
{
    char *th = bleu_preprocess(hyp, opt), *tr = bleu_preprocess(ref, opt);
    char **hw, **rw;
    long nh = split_spaces(th, &hw), nr = split_spaces(tr, &rw);

    /* ids: hyp words then ref words, (nh + nr) */
    int32_t *ids = xmalloc((size_t)(nh + nr + 1) * sizeof *ids);
    word_ids(hw, nh, rw, nr, ids);
    Gram *hg = xmalloc((size_t)(nh + 1) * sizeof *hg);
    Gram *rg = xmalloc((size_t)(nr + 1) * sizeof *rg);
    for (int n = 1; n <= BLEU_MAX_ORDER; n++) {
        long gh = grams_of_order(ids, nh, n, hg);
        long gr = grams_of_order(ids + nh, nr, n, rg);
        s->totals[n - 1] += (double)gh;
        s->matches[n - 1] += (double)clipped_matches(hg, gh, rg, gr);
    }
    s->hyp_len += (double)nh;
    s->ref_len += (double)nr;

    free(hg); free(rg); free(ids);
    free(hw); free(rw);
    free(th); free(tr);
}

/* utils.my_log: log with log(0) floored to -9999999999. */
static double my_log(double x) { return x == 0.0 ? -9999999999.0 : log(x); }

/* BLEU.compute_bleu with smooth_method="exp"; see bleu.h for the rules. */
static BleuScore compute_bleu(const BleuStats *s, int effective_order)
{
    BleuScore r = {0};
    r.hyp_len = s->hyp_len;
    r.ref_len = s->ref_len;
    r.ratio = s->ref_len > 0 ? s->hyp_len / s->ref_len : 0.0;
    if (s->hyp_len < s->ref_len) r.bp = s->hyp_len > 0 ? exp(1.0 - s->ref_len / s->hyp_len) : 0.0;
    else r.bp = 1.0;

    int any_match = 0;
    for (int n = 0; n < BLEU_MAX_ORDER; n++) any_match |= s->matches[n] != 0;
    if (!any_match) return r;   /* score 0, precisions 0 (sacreBLEU issue #141) */

    double smooth_mteval = 1.0;
    int eff_order = BLEU_MAX_ORDER;
    for (int n = 1; n <= BLEU_MAX_ORDER; n++) {
        if (s->totals[n - 1] == 0) break;
        if (effective_order) eff_order = n;
        if (s->matches[n - 1] == 0) {
            smooth_mteval *= 2;
            r.precisions[n - 1] = 100.0 / (smooth_mteval * s->totals[n - 1]);
        } else {
            r.precisions[n - 1] = 100.0 * s->matches[n - 1] / s->totals[n - 1];
        }
    }
    double sum = 0;
    for (int n = 0; n < eff_order; n++) sum += my_log(r.precisions[n]);
    r.score = r.bp * exp(sum / eff_order);
    return r;
}

BleuScore bleu_compute(const BleuStats *s) { return compute_bleu(s, 0); }

BleuScore bleu_sentence(const char *hyp, const char *ref, const MetricOptions *opt)
{
    BleuStats s = {0};
    bleu_stats_add(&s, hyp, ref, opt);
    return compute_bleu(&s, 1);
}

/* The release whose definitions these follow (see bleu.h). */
#define SACREBLEU_COMPAT "compat:sacrebleu-2.5.1"

const char *bleu_signature(const MetricOptions *opt, int sentence, char buf[METRIC_SIGNATURE_MAX])
{
    snprintf(buf, METRIC_SIGNATURE_MAX, "nrefs:1|case:%s|eff:%s|tok:%s|smooth:exp|" SACREBLEU_COMPAT,
             opt && opt->lowercase ? "lc" : "mixed", sentence ? "yes" : "no",
             bleu_tokenize_name(opt ? opt->tokenize : BLEU_TOKENIZE_13A));
    return buf;
}

/* ============================================================================
 * chrF
 * ============================================================================ */

/* ''.join(text.split()) as code points: all whitespace dropped. Returns the count;
 * *cps is malloc'd. */
static long code_points_without_space(const char *text, int32_t **cps)
{
    long len = (long)strlen(text), n = 0, i = 0;
    int32_t *out = xmalloc((size_t)(len + 1) * sizeof *out);   /* <= one per byte */
    while (i < len) {
        int32_t cp;
        i += utf8_next(text + i, len - i, &cp);
        if (!py_isspace(cp)) out[n++] = cp;
    }
    *cps = out;
    return n;
}

void chrf_stats_add(ChrfStats *s, const char *hyp, const char *ref, const MetricOptions *opt)
{
    char *hl = opt && opt->lowercase ? bleu_lowercase(hyp) : NULL;
    char *rl = opt && opt->lowercase ? bleu_lowercase(ref) : NULL;
    int32_t *hc, *rc;
    long nh = code_points_without_space(hl ? hl : hyp, &hc);
    long nr = code_points_without_space(rl ? rl : ref, &rc);
    free(hl);
    free(rl);
    Gram *hg = xmalloc((size_t)(nh + 1) * sizeof *hg);
    Gram *rg = xmalloc((size_t)(nr + 1) * sizeof *rg);
    for (int n = 1; n <= CHRF_CHAR_ORDER; n++) {
        long gh = grams_of_order(hc, nh, n, hg);
        long gr = grams_of_order(rc, nr, n, rg);
        /* CHRF._get_match_statistics: "hyp_count if ref_ngrams else 0" */
        s->hyp[n - 1] += gr > 0 ? (double)gh : 0.0;
        s->ref[n - 1] += (double)gr;
        s->match[n - 1] += (double)clipped_matches(hg, gh, rg, gr);
    }
    free(hg); free(rg); free(hc); free(rc);
}

double chrf_compute(const ChrfStats *s)
{
    double avg_prec = 0, avg_rec = 0;
    int effective_order = 0;
    for (int n = 0; n < CHRF_CHAR_ORDER; n++) {
        if (s->hyp[n] > 0 && s->ref[n] > 0) {
            avg_prec += s->match[n] / s->hyp[n];
            avg_rec += s->match[n] / s->ref[n];
            effective_order++;
        }
    }
    if (effective_order == 0) return 0.0;
    avg_prec /= effective_order;
    avg_rec /= effective_order;
    if (avg_prec + avg_rec == 0) return 0.0;
    /* The operations in sacreBLEU's order, so that the result is the same double:
     * multiplying by 100 first (as this once did) differs in the last bits. */
    double factor = CHRF_BETA * CHRF_BETA;
    double score = (1 + factor) * avg_prec * avg_rec;
    score /= factor * avg_prec + avg_rec;
    return 100 * score;
}

double chrf_sentence(const char *hyp, const char *ref, const MetricOptions *opt)
{
    ChrfStats s = {0};
    chrf_stats_add(&s, hyp, ref, opt);
    return chrf_compute(&s);
}

const char *chrf_signature(const MetricOptions *opt, char buf[METRIC_SIGNATURE_MAX])
{
    snprintf(buf, METRIC_SIGNATURE_MAX, "nrefs:1|case:%s|eff:yes|nc:6|nw:0|space:no|" SACREBLEU_COMPAT,
             opt && opt->lowercase ? "lc" : "mixed");
    return buf;
}
