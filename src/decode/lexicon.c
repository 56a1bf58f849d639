/* lexicon.c — the shortlist's file, learnt and read (lexicon.h). */
#include "decode/lexicon.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"        /* defines: HashTable, hash_find_or_add, hash_mix64 */
#include "data/corpus.h"      /* defines: PairTokens, corpus_tokenize, corpus_segment, corpus_encode */
#include "data/tsv.h"         /* defines: TsvCorpus, tsv_read_pairs */
#include "decode/translate.h" /* defines: TRANSLATE_MAX_SOURCE */
#include "io/outfile.h"       /* defines: OutFile, outfile_open, outfile_commit, outfile_discard */

/* ---------------------------------------------------------------- learning */

/* The distinct (source, target) pairs seen, with the sentence pairs that had both. */
typedef struct {
    int *s, *t;
    long *count;
    int n, cap;
    HashTable index;
    int tgt_vocab;
} CoCounts;

static int same_pair(const void *ctx, int id, const void *key)
{
    const CoCounts *c = ctx;
    const int *st = key;
    return c->s[id] == st[0] && c->t[id] == st[1];
}

static void co_add(CoCounts *c, int s, int t)
{
    int key[2] = {s, t};
    uint64_t h = hash_mix64((uint64_t)s * (uint64_t)c->tgt_vocab + (uint64_t)t);
    int id = hash_find_or_add(&c->index, h, same_pair, c, key, c->n);
    if (id < c->n) {
        c->count[id]++;
        return;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 4096;
        c->s = xrealloc(c->s, sizeof(int) * (size_t)c->cap);
        c->t = xrealloc(c->t, sizeof(int) * (size_t)c->cap);
        c->count = xrealloc(c->count, sizeof(long) * (size_t)c->cap);
    }
    c->s[c->n] = s, c->t[c->n] = t, c->count[c->n] = 1;
    c->n++;
}

/* For sorting the pairs: by source, then the more frequent together first, then the
 * target more frequent on its own, then the lower id. */
static const CoCounts *sort_counts;
static const long *sort_tgt;
static int by_source_best_first(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    const CoCounts *c = sort_counts;
    if (c->s[i] != c->s[j]) return c->s[i] < c->s[j] ? -1 : 1;
    if (c->count[i] != c->count[j]) return c->count[i] > c->count[j] ? -1 : 1;
    if (sort_tgt[c->t[i]] != sort_tgt[c->t[j]]) return sort_tgt[c->t[i]] > sort_tgt[c->t[j]] ? -1 : 1;
    return c->t[i] < c->t[j] ? -1 : c->t[i] > c->t[j];
}
static int by_frequency(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    if (sort_tgt[i] != sort_tgt[j]) return sort_tgt[i] > sort_tgt[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

/* Each distinct id of ids[0..n) once (stamp[id] == mark: seen in this pair). */
static int distinct(const int *ids, int n, int *stamp, int mark, int *out)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (stamp[ids[i]] != mark) stamp[ids[i]] = mark, out[k++] = ids[i];
    return k;
}

static void write_lines(FILE *f, const ModelFile *mf, const CoCounts *c, const long *src_pairs, const long *tgt_pairs,
                        int per_word, int frequent, LexiconStats *stats)
{
    int Vt = mf->tgt_vocab.size;
    int *order = xmalloc(sizeof(int) * (size_t)(Vt > c->n ? Vt : c->n) + sizeof(int));
    for (int i = 0; i < Vt; i++)
        order[i] = i;
    sort_tgt = tgt_pairs;
    qsort(order, (size_t)Vt, sizeof(int), by_frequency);
    for (int i = 0, kept = 0; i < Vt && kept < frequent; i++)
        if (order[i] >= VOCAB_SPECIALS && tgt_pairs[order[i]] > 0) {
            fprintf(f, "\t%s\t%ld\n", mf->tgt_vocab.words[order[i]], tgt_pairs[order[i]]);
            kept++, stats->lines++;
        }
    for (int i = 0; i < c->n; i++)
        order[i] = i;
    sort_counts = c;
    qsort(order, (size_t)c->n, sizeof(int), by_source_best_first);
    for (int i = 0; i < c->n;) {
        int s = c->s[order[i]], j = i;
        while (j < c->n && c->s[order[j]] == s) j++;
        {
            stats->sources++;
            for (int k = i; k < j && k < i + per_word; k++) {
                int p = order[k];
                fprintf(f, "%s\t%s\t%.4g\n", mf->src_vocab.words[s], mf->tgt_vocab.words[c->t[p]],
                        (double)c->count[p] / (double)src_pairs[s]);
                stats->lines++;
            }
        }
        i = j;
    }
    free(order);
}

int lexicon_learn(const ModelFile *mf, const char *tsv_path, const LineLimit *limit, int per_word, int frequent,
                  const char *out, LexiconStats *stats, Error *err)
{
    memset(stats, 0, sizeof *stats);
    TsvCorpus tsv;
    if (tsv_read_pairs(tsv_path, limit, &tsv, err)) return -1;
    if (tsv.n == 0) {
        char why[256];
        tsv_describe_skipped(&tsv, tsv_path, why, sizeof why);
        tsv_free(&tsv);
        return error_set(err, "%s: no sentence pairs (lines SOURCE<TAB>TARGET)%s%s", tsv_path, why[0] ? ": " : "", why);
    }
    PairTokens pairs;
    corpus_tokenize(&tsv, &mf->text, TRANSLATE_MAX_SOURCE, &pairs);
    corpus_segment(&pairs, &mf->seg);
    Example *ex = corpus_encode(&pairs, NULL, pairs.n, &mf->src_vocab, &mf->tgt_vocab);
    int Vs = mf->src_vocab.size, Vt = mf->tgt_vocab.size, longest = 1;
    for (int i = 0; i < pairs.n; i++) {
        longest = ex[i].src_len > longest ? ex[i].src_len : longest;
        longest = ex[i].tgt_len > longest ? ex[i].tgt_len : longest;
    }
    long *src_pairs = xcalloc((size_t)Vs, sizeof(long)), *tgt_pairs = xcalloc((size_t)Vt, sizeof(long));
    int *src_stamp = xmalloc(sizeof(int) * (size_t)Vs), *tgt_stamp = xmalloc(sizeof(int) * (size_t)Vt);
    for (int i = 0; i < Vs; i++)
        src_stamp[i] = -1;
    for (int i = 0; i < Vt; i++)
        tgt_stamp[i] = -1;
    int *s_ids = xmalloc(sizeof(int) * (size_t)longest), *t_ids = xmalloc(sizeof(int) * (size_t)longest);
    CoCounts c = {.tgt_vocab = Vt};
    for (int i = 0; i < pairs.n; i++) {
        int ns = distinct(ex[i].src, ex[i].src_len, src_stamp, i, s_ids);
        int nt = distinct(ex[i].tgt, ex[i].tgt_len, tgt_stamp, i, t_ids);
        for (int a = 0; a < ns; a++)
            src_pairs[s_ids[a]]++;
        for (int b = 0; b < nt; b++) {
            tgt_pairs[t_ids[b]]++;
            if (t_ids[b] == VOCAB_UNK) continue;  /* kept always */
            for (int a = 0; a < ns; a++)
                co_add(&c, s_ids[a], t_ids[b]);
        }
    }
    stats->pairs = pairs.n;
    OutFile o;
    int status = outfile_open(&o, out, err);
    if (status == 0) {
        write_lines(o.f, mf, &c, src_pairs, tgt_pairs, per_word, frequent, stats);
        if (ferror(o.f)) {
            int saved = errno ? errno : EIO;
            outfile_discard(&o);
            status = error_set(err, "%s: write failed: %s", out, strerror(saved));
        } else
            status = outfile_commit(&o, err);
    }
    free(c.s);
    free(c.t);
    free(c.count);
    hash_free(&c.index);
    free(s_ids);
    free(t_ids);
    free(src_stamp);
    free(tgt_stamp);
    free(src_pairs);
    free(tgt_pairs);
    examples_free(ex, pairs.n);
    pair_tokens_free(&pairs);
    tsv_free(&tsv);
    return status;
}

/* ---------------------------------------------------------------- reading */

typedef struct {
    int *v;
    long n, cap;
} Ids;

static void ids_push(Ids *a, int id)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1024;
        a->v = xrealloc(a->v, sizeof(int) * (size_t)a->cap);
    }
    a->v[a->n++] = id;
}

/* word's id in v, or -1 if v has no such unit (<unk> itself is one). */
static int unit_id(const Vocab *v, const char *word)
{
    int id = vocab_lookup(v, word);
    return id == VOCAB_UNK && strcmp(word, v->words[VOCAB_UNK]) ? -1 : id;
}

/* Splits line (its LF and CR gone) into its three fields; 0, or -1 if it is not
 * SOURCE<TAB>TARGET<TAB>NUMBER (the target not empty, the number finite). */
static int split_line(char *line, char **field)
{
    field[0] = line;
    for (int k = 1; k < 3; k++) {
        char *tab = strchr(field[k - 1], '\t');
        if (!tab) return -1;
        *tab = 0;
        field[k] = tab + 1;
    }
    if (strchr(field[2], '\t') || !field[1][0]) return -1;
    char *end;
    double v = strtod(field[2], &end);
    return end == field[2] || *end || !isfinite(v) ? -1 : 0;
}

int lexicon_read(const char *path, const ModelFile *mf, const LineLimit *limit, Shortlist *sl, long *unknown,
                 Error *err)
{
    *unknown = 0;
    FILE *f = fopen(path, "r");
    if (!f) return error_set(err, "%s: %s", path, strerror(errno));
    LineReader r;
    line_reader_init(&r, f, limit);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    Ids src = {0}, tgt = {0}, always = {0};
    int status = 0;
    while (status == 0 && (len = line_read(&r, &line, &cap, 0)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (len == 0) continue;
        char *field[3];
        if ((long)strlen(line) != (long)len || split_line(line, field)) {
            status = error_set(err, "%s line %ld: not SOURCE<TAB>TARGET<TAB>NUMBER (nmt shortlist's lines; an empty "
                                    "SOURCE: a unit every batch keeps)",
                               path, r.number);
            break;
        }
        int t = unit_id(&mf->tgt_vocab, field[1]), s = field[0][0] ? unit_id(&mf->src_vocab, field[0]) : 0;
        if (t < 0 || s < 0) {
            (*unknown)++;
            continue;
        }
        if (!field[0][0])
            ids_push(&always, t);
        else
            ids_push(&src, s), ids_push(&tgt, t);
    }
    if (status == 0 && len == LINE_TOO_LONG) status = lines_too_long(err, path, r.number, limit);
    if (status == 0 && len == LINE_ERROR) status = lines_read_error(err, path);
    line_reader_free(&r);
    free(line);
    fclose(f);
    if (status == 0)
        shortlist_init(sl, mf->src_vocab.size, mf->tgt_vocab.size, src.v, tgt.v, src.n, always.v, (int)always.n);
    free(src.v);
    free(tgt.v);
    free(always.v);
    return status;
}
