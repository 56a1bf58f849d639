#include "decode/translate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/corpus.h"  /* defines: encode_tokens */
#include "decode/decode.h"  /* defines: decode_greedy, decode_beam, Hypothesis */
#include "decode/heatmap.h" /* defines: heatmap_write_svg */
#include "text/segment.h" /* defines: segmenter_apply, segmenter_detokenize */
#include "io/lines.h"       /* defines: lines_read_batches, line_read */

/* Most output words for a source of src_len tokens. */
static int output_limit(const TranslateOptions *opt, int src_len)
{
    return opt->max_len > 0 ? opt->max_len : 2 * src_len + 10;
}

void translation_free(Translation *t)
{
    free(t->text);
    for (int i = 0; t->src_tokens && i < t->n_src; i++)
        free(t->src_tokens[i]);
    for (int i = 0; t->out_tokens && i < t->n_out; i++)
        free(t->out_tokens[i]);
    free(t->src_tokens);
    free(t->out_tokens);
    free(t->attn);
    free(t->head_attn);
    free(t->unit_logp);
    for (int i = 0; t->words && i < t->n_words; i++)
        free(t->words[i]);
    free(t->words);
    free(t->word_qe);
    memset(t, 0, sizeof *t);
}

/* DIR/LINE.svg: the attention heatmap of a line's best translation; with its heads'
 * maps, DIR/LINE.hK.svg for head K = 1, 2, ... too. */
static int write_heatmap(const char *dir, long number, const Translation *t, const TranslateOptions *opt,
                         Error *err)
{
    size_t len = strlen(dir) + 40;
    char *path = xmalloc(len), title[96];
    snprintf(path, len, "%s/%06ld.svg", dir, number);
    snprintf(title, sizeof title, "line %ld", number);
    int status = heatmap_write_svg(path, title, (const char *const *)t->src_tokens, t->n_src,
                                   (const char *const *)t->out_tokens, t->n_out, t->attn, err);
    for (int h = 0; status == 0 && h < t->heads; h++) {
        snprintf(path, len, "%s/%06ld.h%d.svg", dir, number, h + 1);
        if (opt->align_layer) snprintf(title, sizeof title, "line %ld, layer %d, head %d", number, opt->align_layer, h + 1);
        else snprintf(title, sizeof title, "line %ld, last layer, head %d", number, h + 1);
        status = heatmap_write_svg(path, title, (const char *const *)t->src_tokens, t->n_src,
                                   (const char *const *)t->out_tokens, t->n_out,
                                   t->head_attn + (long)h * t->n_out * t->n_src, err);
    }
    free(path);
    return status;
}

static int wants_attention(const TranslateOptions *opt)
{
    return opt->attention || opt->align || opt->attention_json || opt->attention_svg || opt->replace_unk;
}

/* The source position row `row` of attn (n_src wide) attends to most. */
static int most_attended(const float *attn, int row, int n_src)
{
    const float *a = attn + (long)row * n_src;
    int best = 0;
    for (int j = 1; j < n_src; j++)
        if (a[j] > a[best]) best = j;
    return best;
}

/* ---------------------------------------------------------------- scores and quality estimates */

float quality_estimates(const float *unit_logp, const unsigned char *word_ends, int n, int finished, float *word_qe,
                        int *n_words)
{
    double sentence = 0;
    *n_words = 0;
    for (int start = 0, i = 0; i < n; i++) {
        if (!word_ends[i]) continue;
        double sum = 0;
        for (int j = start; j <= i; j++)
            sum += unit_logp[j];
        word_qe[*n_words] = (float)(sum / (i + 1 - start));
        sentence += word_qe[(*n_words)++];
        start = i + 1;
    }
    return *n_words ? (float)(sentence / *n_words) : finished ? unit_logp[n] : 0.0f;
}

/* t's scores from h (translate.h): each unit's log-probability, and the quality
 * estimates of the words (the model's units up to one that ends a word) and of the
 * sentence. */
static void add_scores(Translation *t, const ModelFile *mf, Hypothesis *h)
{
    t->n_units = h->len + h->finished;
    t->unit_logp = h->unit_logp;
    h->unit_logp = NULL;
    char **units = xmalloc(sizeof(char *) * (h->len + 1));
    unsigned char *ends = xmalloc(h->len + 1);
    for (int i = 0; i < h->len; i++)
        units[i] = (char *)vocab_word(&mf->tgt_vocab, h->words[i]);
    t->words = xmalloc(sizeof(char *) * (h->len + 1));
    for (int start = 0, i = 0; i < h->len; i++) {
        ends[i] = (unsigned char)segmenter_word_ends(&mf->seg, units, h->len, i);
        if (!ends[i]) continue;
        t->words[t->n_words++] = segmenter_detokenize(&mf->seg, units + start, i + 1 - start);
        start = i + 1;
    }
    t->word_qe = xmalloc(sizeof(float) * (h->len + 1));
    t->qe = quality_estimates(t->unit_logp, ends, h->len, h->finished, t->word_qe, &t->n_words);
    free(ends);
    free(units);
}

/* A hypothesis as text (and, with attention, as tokens), for a source of tokens src. */
static Translation make_translation(const ModelFile *mf, Hypothesis *h, const TokenList *src, const TranslateOptions *opt)
{
    Translation t = {.score = h->score, .logprob = h->logprob};
    int with_attn = h->attn != NULL;
    char **words = xmalloc(sizeof(char *) * (h->len + 1));
    for (int i = 0; i < h->len; i++) {
        const char *w = vocab_word(&mf->tgt_vocab, h->words[i]);
        if (opt->replace_unk && with_attn && h->words[i] == VOCAB_UNK && src->n > 0) {
            const char *from = src->tokens[most_attended(h->attn, i, src->n)];
            const char *entry = unkdict_lookup(opt->unk_dict, from);
            w = entry ? entry : from;
        }
        words[i] = (char *)w;
    }
    /* The model's units (pieces under bpe/char) back into a sentence. */
    t.text = segmenter_detokenize(&mf->seg, words, h->len);
    if (opt->scores && h->unit_logp) add_scores(&t, mf, h);
    if (with_attn) {
        t.n_src = src->n;
        t.src_tokens = xmalloc(sizeof(char *) * (src->n ? src->n : 1));
        for (int j = 0; j < src->n; j++)
            t.src_tokens[j] = xstrdup(src->tokens[j]);
        t.n_out = h->len + h->finished;
        t.out_tokens = xmalloc(sizeof(char *) * (t.n_out ? t.n_out : 1));
        for (int i = 0; i < h->len; i++)
            t.out_tokens[i] = xstrdup(words[i]);
        if (h->finished) t.out_tokens[h->len] = xstrdup(vocab_word(&mf->tgt_vocab, VOCAB_EOS));
        t.finished = h->finished;
        t.attn = h->attn;
        h->attn = NULL;
    }
    free(words);
    return t;
}

int source_units(const ModelFile *mf, const char *line, TokenList *out, Error *err)
{
    if (text_tokenize(line, strlen(line), &mf->text, out, err) != 0) {
        *out = (TokenList){0};
        return -1;
    }
    if (mf->seg.kind != TOKENIZER_WORD) {
        TokenList pieces;
        segmenter_apply(&mf->seg, SIDE_SOURCE, out, &pieces);
        token_list_free(out);
        *out = pieces;
    }
    return 0;
}

/* A prefix line as target ids (malloc'd, *len of them): tokenised and segmented as the
 * model's target side, cut to TRANSLATE_MAX_SOURCE units; the reserved ids a unit may
 * spell (<pad>, <sos>, <eos>) become <unk>, so that the search follows it to its end.
 * Returns the TRANSLATE_* bits of what went wrong. */
static int prefix_ids(const ModelFile *mf, const char *line, int **ids, int *len)
{
    TokenList words, units;
    Error err;
    *ids = NULL;
    *len = 0;
    if (text_tokenize(line, strlen(line), &mf->text, &words, &err) != 0) return TRANSLATE_BAD_PREFIX;
    segmenter_apply(&mf->seg, SIDE_TARGET, &words, &units);
    token_list_free(&words);
    int bad = 0;
    if (units.n > TRANSLATE_MAX_SOURCE) {
        for (int j = TRANSLATE_MAX_SOURCE; j < units.n; j++)
            free(units.tokens[j]);
        units.n = TRANSLATE_MAX_SOURCE;
        bad = TRANSLATE_PREFIX_CUT;
    }
    *ids = encode_tokens(&units, &mf->tgt_vocab);
    *len = units.n;
    for (int j = 0; j < units.n; j++)
        if ((*ids)[j] != VOCAB_UNK && (*ids)[j] < VOCAB_SPECIALS) (*ids)[j] = VOCAB_UNK;
    token_list_free(&units);
    return bad;
}

/* The engine under worker_translate and worker_translate_ordered: models[0..nm-1]
 * (models[0] reads and writes the text), each decoding with its own states[e]; line i is
 * line line_index[i] (0-based) of the whole input, whose sampling stream it draws from
 * (line_index NULL: line i), and prefix[i] (prefix NULL: none) begins its translation. */
static void translate_batch(ModelFile *const *files, RunState *const *states, int nm, char *const *lines,
                            char *const *prefix, const long *line_index, int n, const TranslateOptions *opt,
                            Translation *out, int *count, int *bad)
{
    ModelFile *mf = files[0];
    int k = opt->nbest > 1 ? opt->nbest : 1, beam = opt->beam > k ? opt->beam : k;
    int want_attn = wants_attention(opt);
    TokenList *tok = xcalloc(n, sizeof(TokenList));
    int **src = xcalloc(n, sizeof(int *)), *src_len = xcalloc(n, sizeof(int)), *limit = xcalloc(n, sizeof(int));
    int *live = xmalloc(sizeof(int) * n), n_live = 0;
    /* Prefixes and sentence indices, for the live lines (SearchSpec). */
    int **pre = prefix ? xcalloc(n, sizeof(int *)) : NULL, *pre_len = prefix ? xcalloc(n, sizeof(int)) : NULL;
    long *index = xmalloc(sizeof(long) * n);
    for (int i = 0; i < n; i++) {
        Error err;
        if (bad) bad[i] = 0;
        if (count) count[i] = 1;
        for (int j = 0; j < k; j++)
            out[(long)i * k + j] = (Translation){0};
        if (source_units(mf, lines[i], &tok[i], &err) != 0) {
            if (bad) bad[i] = TRANSLATE_BAD_UTF8;
            continue;
        }
        if (tok[i].n > TRANSLATE_MAX_SOURCE) {
            for (int j = TRANSLATE_MAX_SOURCE; j < tok[i].n; j++)
                free(tok[i].tokens[j]);
            tok[i].n = TRANSLATE_MAX_SOURCE;
            if (bad) bad[i] = TRANSLATE_CUT;
        }
        if (tok[i].n > 0) {
            src[n_live] = encode_tokens(&tok[i], &mf->src_vocab);
            src_len[n_live] = tok[i].n;
            limit[n_live] = output_limit(opt, tok[i].n);
            index[n_live] = line_index ? line_index[i] : i;
            if (pre && prefix[i]) {
                int why = prefix_ids(mf, prefix[i], &pre[n_live], &pre_len[n_live]);
                if (bad) bad[i] |= why;
                limit[n_live] += pre_len[n_live];
            }
            live[n_live++] = i;
        }
    }
    if (n_live > 0) {
        Hypothesis *hyp = xcalloc((long)n_live * k, sizeof(Hypothesis));
        int *got = xmalloc(sizeof(int) * n_live);
        Model **models = xmalloc(sizeof(Model *) * nm);
        for (int e = 0; e < nm; e++)
            models[e] = &files[e]->model;
        for (int e = 0; e < nm; e++)
            states[e]->attn_layer = opt->align_layer;
        Batch batch = {0};
        batch_fill_source(&batch, src, src_len, n_live);
        SearchSpec spec = {.beam = beam > 1 || opt->nbest >= 1 ? beam : 0, .nbest = k, .limit = limit,
                           .alpha = opt->length_penalty, .want_attn = want_attn, .want_scores = opt->scores,
                           .prefix = pre, .prefix_len = pre_len, .sample = opt->sampling ? &opt->sample : NULL,
                           .sentence = index};
        decode_search(models, states, nm, &batch, &spec, hyp, got);
        batch_free(&batch);
        const ModelFamily *family = model_family(&mf->model.dims);  /* its attention_heads, if any */
        for (int s = 0; s < n_live; s++) {
            int i = live[s];
            if (count) count[i] = got[s];
            for (int j = 0; j < got[s]; j++) {
                Hypothesis *h = &hyp[(long)s * k + j];
                Translation *t = &out[(long)i * k + j];
                *t = make_translation(mf, h, &tok[i], opt);
                if (j == 0 && opt->attention_heads && family->attention_heads && t->n_out > 0) {
                    /* The words again through the whole decoder, for each head's map. */
                    int *words = xmalloc(sizeof(int) * t->n_out);
                    memcpy(words, h->words, sizeof(int) * h->len);
                    if (h->finished) words[h->len] = VOCAB_EOS;
                    t->heads = mf->model.dims.heads;
                    t->head_attn = xmalloc(sizeof(float) * t->heads * t->n_out * src_len[s]);
                    family->attention_heads(&mf->model, src[s], src_len[s], words, t->n_out, opt->align_layer,
                                            t->head_attn);
                    free(words);
                }
                hypothesis_free(h);
            }
            free(src[s]);
            if (pre) free(pre[s]);
        }
        free(hyp);
        free(got);
        free(models);
    }
    for (int i = 0; i < n; i++) {
        if (!out[(long)i * k].text) out[(long)i * k].text = xstrdup("");
        token_list_free(&tok[i]);
    }
    free(tok);
    free(src);
    free(src_len);
    free(limit);
    free(live);
    free(pre);
    free(pre_len);
    free(index);
}

void translate_models(Worker *k, const TranslateOptions *opt, ModelFile ***files, RunState ***states, int *n_models)
{
    int all = worker_models(k), nm = opt->ensemble ? all : 1, first = opt->ensemble ? 0 : opt->model;
    *files = xmalloc(sizeof(ModelFile *) * nm);
    *states = xmalloc(sizeof(RunState *) * nm);
    for (int e = 0; e < nm; e++) {
        (*files)[e] = worker_model(k, first + e);
        (*states)[e] = worker_state(k, first + e);
    }
    *n_models = nm;
}

void worker_translate(Worker *k, char *const *lines, int n, const TranslateOptions *opt, Translation *out,
                      int *count, int *bad)
{
    ModelFile **files;
    RunState **states;
    int nm;
    translate_models(k, opt, &files, &states, &nm);
    translate_batch(files, states, nm, lines, NULL, NULL, n, opt, out, count, bad);
    free(files);
    free(states);
}

void worker_translate_lines(Worker *k, char *const *lines, int n, const TranslateOptions *opt, char **out, int *bad)
{
    TranslateOptions one = *opt;
    one.nbest = 0;
    one.align = one.attention_json = one.replace_unk = one.attention = one.attention_heads = one.scores = 0;
    one.attention_svg = NULL;
    Translation *t = xmalloc(sizeof(Translation) * (n ? n : 1));
    worker_translate(k, lines, n, &one, t, NULL, bad);
    for (int i = 0; i < n; i++) {
        out[i] = t[i].text;
        t[i].text = NULL;
        translation_free(&t[i]);
    }
    free(t);
}

/* workers_translate_lines' batches: batch b is lines [b * size, (b + 1) * size). */
typedef struct {
    Workers *w;
    char *const *lines;
    int n, size;
    const TranslateOptions *opt;
    char **out;
    int *bad;
} LineBatches;

static void translate_lines_batch(void *ctx, int b)
{
    LineBatches *l = ctx;
    int start = b * l->size, n = l->n - start < l->size ? l->n - start : l->size;
    Worker *k = workers_borrow(l->w);
    worker_translate_lines(k, l->lines + start, n, l->opt, l->out + start, l->bad ? l->bad + start : NULL);
    workers_return(l->w, k);
}

void workers_translate_lines(Workers *w, char *const *lines, int n, int batch, const TranslateOptions *opt,
                             char **out, int *bad)
{
    if (batch < 1) batch = 1;
    LineBatches l = {w, lines, n, batch, opt, out, bad};
    threadpool_for(workers_threads(w), (n + batch - 1) / batch, translate_lines_batch, &l);
}

/* " ||| j-i j-i ...": for each output word i the source token j it attends to most. */
static void put_alignment(FILE *out, const Translation *t)
{
    fputs(" |||", out);
    int words = t->n_out - t->finished;
    for (int i = 0; t->n_src > 0 && i < words; i++)
        fprintf(out, " %d-%d", most_attended(t->attn, i, t->n_src), i);
}

static cJSON *string_array(char **s, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
    return a;
}

/* A JSON array of n numbers, each with six significant digits (floats, kept readable). */
static cJSON *number_array(const float *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%.6g", v[i]);
        cJSON_AddItemToArray(a, cJSON_CreateRaw(buf));
    }
    return a;
}

/* One JSON object: the line (1-based), tokens, translation, score and attention; with
 * scores, the log-probabilities and quality estimates too. */
static void put_json(FILE *out, long number, const Translation *t, int scores)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "line", (double)number);
    cJSON_AddItemToObject(o, "source", string_array(t->src_tokens, t->n_src));
    cJSON_AddItemToObject(o, "output", string_array(t->out_tokens, t->n_out));
    cJSON_AddStringToObject(o, "translation", t->text);
    cJSON_AddNumberToObject(o, "score", t->score);
    cJSON *rows = cJSON_AddArrayToObject(o, "attention");
    for (int i = 0; i < t->n_out; i++) {
        cJSON *row = cJSON_CreateArray();
        for (int j = 0; j < t->n_src; j++) {
            /* Six significant digits: the weights are floats, and the file stays readable. */
            char buf[32];
            snprintf(buf, sizeof buf, "%.6g", t->attn[(long)i * t->n_src + j]);
            cJSON_AddItemToArray(row, cJSON_CreateRaw(buf));
        }
        cJSON_AddItemToArray(rows, row);
    }
    if (scores) {
        cJSON_AddNumberToObject(o, "logprob", t->logprob);
        cJSON_AddItemToObject(o, "unit_scores", number_array(t->unit_logp, t->n_units));
        cJSON_AddItemToObject(o, "words", string_array(t->words, t->n_words));
        cJSON_AddItemToObject(o, "word_qe", number_array(t->word_qe, t->n_words));
        cJSON_AddNumberToObject(o, "qe", t->qe);
    }
    char *text = cJSON_PrintUnformatted(o);
    fputs(text, out);
    fputc('\n', out);
    free(text);
    cJSON_Delete(o);
}

/* " NAME= v1 v2 ...": a dense feature of n-best lines. */
static void put_feature(FILE *out, const char *name, const float *v, int n)
{
    fprintf(out, " %s=", name);
    for (int i = 0; i < n; i++)
        fprintf(out, " %.6f", v[i]);
}

/* What --scores adds to a plain line: TAB LOGPROB TAB UNITS (TAB the units'). */
static void put_scores(FILE *out, const Translation *t, const TranslateOptions *opt)
{
    fprintf(out, "\t%.6f\t%d", t->logprob, t->n_units);
    if (!opt->word_scores) return;
    fputc('\t', out);
    for (int i = 0; i < t->n_units; i++)
        fprintf(out, i ? " %.6f" : "%.6f", t->unit_logp[i]);
}

/* The next n lines of the --prefix file into prefix[0..n) (malloc'd, without their line
 * ends), for input lines first_number.. of in_name. 0, or -1 with err when it cannot be
 * read or ends first. */
static int read_prefixes(const TranslateOptions *opt, int n, long first_number, const char *in_name, char **prefix,
                         Error *err)
{
    for (int i = 0; i < n; i++) {
        size_t cap = 0;
        ssize_t len = line_read(opt->prefix, &prefix[i], &cap, 0);
        if (len == LINE_EOF)
            return error_set(err, "%s: ends after line %ld, before the one for %s line %ld: --prefix needs a line for "
                                  "each input line (an empty one for none)",
                             opt->prefix_name, opt->prefix->number, in_name, first_number + i);
        if (len == LINE_ERROR) return lines_read_error(err, opt->prefix_name);
        if (len == LINE_TOO_LONG) return lines_too_long(err, opt->prefix_name, opt->prefix->number, &opt->lines);
        while (len > 0 && (prefix[i][len - 1] == '\n' || prefix[i][len - 1] == '\r'))
            prefix[i][--len] = '\0';
    }
    return 0;
}

/* The warnings of a line's TRANSLATE_* bits. */
static void warn_line(int bad, const char *in_name, long number, const TranslateOptions *opt)
{
    if (bad & TRANSLATE_BAD_UTF8)
        fprintf(stderr, "nmt: warning: %s line %ld: invalid UTF-8; translated as empty\n", in_name, number);
    if (bad & TRANSLATE_CUT)
        fprintf(stderr, "nmt: warning: %s line %ld: longer than %d tokens; only the first %d translated\n",
                in_name, number, TRANSLATE_MAX_SOURCE, TRANSLATE_MAX_SOURCE);
    if (bad & TRANSLATE_BAD_PREFIX)
        fprintf(stderr, "nmt: warning: %s: the prefix of line %ld is not valid UTF-8; translated without one\n",
                opt->prefix_name, number);
    if (bad & TRANSLATE_PREFIX_CUT)
        fprintf(stderr, "nmt: warning: %s: the prefix of line %ld is longer than %d units; only its first %d kept\n",
                opt->prefix_name, number, TRANSLATE_MAX_SOURCE, TRANSLATE_MAX_SOURCE);
}

/* Line `number` of in_name (its record numbered base + number): the warnings a bad line
 * earned, its heatmaps, and its record(s) from result (count of them). 0, or -1 with err
 * when a heatmap cannot be written. */
static int write_record(FILE *out, const Translation *result, int count, int bad, long number, long base,
                        const char *in_name, const TranslateOptions *opt, Error *err)
{
    const Translation *best = &result[0];
    warn_line(bad, in_name, number, opt);
    if (opt->attention_svg && write_heatmap(opt->attention_svg, base + number, best, opt, err) != 0) return -1;
    if (opt->attention_json) {
        put_json(out, base + number, best, opt->scores);
    } else if (opt->nbest >= 1) {
        for (int j = 0; j < count; j++) {
            const Translation *t = &result[j];
            fprintf(out, "%ld ||| %s", base + number - 1, t->text);
            if (opt->nbest_format == NBEST_NMT) {
                fprintf(out, " ||| %.6f", t->score);
                if (opt->align) put_alignment(out, t);
            } else {
                if (opt->align) put_alignment(out, t);
                fprintf(out, " ||| F0= %.6f", t->logprob);
                if (opt->scores) {
                    fprintf(out, " QE= %.6f", t->qe);
                    put_feature(out, "WordQE", t->word_qe, t->n_words);
                    if (opt->word_scores) put_feature(out, "UnitLogProbs", t->unit_logp, t->n_units);
                }
                fprintf(out, " ||| %.6f", t->score);
            }
            fputc('\n', out);
        }
    } else {
        fputs(best->text, out);
        if (opt->align) put_alignment(out, best);
        if (opt->scores) put_scores(out, best, opt);
        fputc('\n', out);
    }
    return 0;
}

static int flushed(FILE *out, Error *err)
{
    if (ferror(out) || fflush(out) != 0) return error_set(err, "writing the translation: %s", strerror(errno));
    return 0;
}

/* A window of lines on its way through the workers: the lines (its own copy when the
 * workers read ahead: the reader reuses its buffers) and their --prefix lines, their
 * order of translation (by length, or as read), and the translations, each written once
 * it and every line before it are done. Its batches translate into their own lines'
 * slots of result, count and bad; only the batches' finish (one at a time, in order)
 * reads done and next. */
typedef struct {
    char **lines;
    char **prefix;         /* (n) with --prefix, read on the reader's thread in input order; else NULL */
    int n, copied;
    long first_number;
    int *order;            /* (n) the lines in their batches' order */
    Translation *result;   /* (n * k), line i's at i * k */
    int *count, *bad;      /* (n) */
    int *done;             /* (n) 1 once line i's batch is finished */
    int next;              /* the first line not yet written */
    int batches_left;      /* batches not yet finished: the last frees the window */
    int failed;            /* a write failed: write nothing more */
} LineWindow;

/* One batch of a window: lines order[from .. from + n - 1]. */
typedef struct {
    LineWindow *win;
    int from, n;
    struct StreamJob *j;
} WindowBatch;

/* What the stream's batches need besides their lines. */
typedef struct StreamJob {
    Workers *w;
    OrderedQueue *queue;  /* several workers: the batches in flight; NULL: one at a time */
    long base;
    FILE *out;
    const char *in_name;
    const TranslateOptions *opt;
    int batch;            /* lines decoded together */
} StreamJob;

/* Byte length, then input order: the sort of a window's lines into batches. */
typedef struct {
    size_t bytes;
    int index;
} LineKey;

static int by_length(const void *a, const void *b)
{
    const LineKey *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

int translate_sorts(const TranslateOptions *opt) { return opt->batch > 1 && !wants_attention(opt); }

int translate_window(const TranslateOptions *opt)
{
    int batch = opt->batch > 0 ? opt->batch : 1;
    return translate_sorts(opt) && batch < TRANSLATE_WINDOW ? TRANSLATE_WINDOW : batch;
}

void translate_order(const TranslateOptions *opt, char *const *lines, int n, int *order)
{
    if (!translate_sorts(opt)) {
        for (int i = 0; i < n; i++)
            order[i] = i;
        return;
    }
    LineKey *keys = xmalloc(sizeof(LineKey) * (n ? n : 1));
    for (int i = 0; i < n; i++)
        keys[i] = (LineKey){strlen(lines[i]), i};
    qsort(keys, n, sizeof(LineKey), by_length);
    for (int i = 0; i < n; i++)
        order[i] = keys[i].index;
    free(keys);
}

void worker_translate_ordered(Worker *k, char *const *lines, char *const *prefix, long first_index, const int *order,
                              int n, int batch, const TranslateOptions *opt, Translation *out, int *count, int *bad)
{
    int per_line = opt->nbest > 1 ? opt->nbest : 1, m = n < batch ? n : batch;
    char **group = xmalloc(sizeof(char *) * (m ? m : 1));
    char **group_prefix = prefix ? xmalloc(sizeof(char *) * (m ? m : 1)) : NULL;
    long *index = xmalloc(sizeof(long) * (m ? m : 1));
    Translation *part = xmalloc(sizeof(Translation) * (m ? m : 1) * per_line);
    int *part_count = xmalloc(sizeof(int) * (m ? m : 1)), *part_bad = xmalloc(sizeof(int) * (m ? m : 1));
    ModelFile **files;
    RunState **states;
    int nm;
    translate_models(k, opt, &files, &states, &nm);
    for (int from = 0; from < n; from += batch) {
        int len = n - from < batch ? n - from : batch;
        for (int i = 0; i < len; i++) {
            group[i] = lines[order[from + i]];
            if (prefix) group_prefix[i] = prefix[order[from + i]];
            index[i] = first_index + order[from + i];
        }
        translate_batch(files, states, nm, group, group_prefix, index, len, opt, part, part_count, part_bad);
        for (int i = 0; i < len; i++) {
            int at = order[from + i];
            memcpy(&out[(long)at * per_line], &part[(long)i * per_line], sizeof(Translation) * per_line);
            if (count) count[at] = part_count[i];
            if (bad) bad[at] = part_bad[i];
        }
    }
    free(files);
    free(states);
    free(group);
    free(group_prefix);
    free(index);
    free(part);
    free(part_count);
    free(part_bad);
}

static LineWindow *window_new(char **lines, int n, long first_number, int copy, const StreamJob *j)
{
    int k = j->opt->nbest > 1 ? j->opt->nbest : 1;
    LineWindow *win = xcalloc(1, sizeof *win);
    win->n = n;
    win->first_number = first_number;
    win->copied = copy;
    win->lines = lines;
    if (copy) {
        win->lines = xmalloc(sizeof(char *) * (n ? n : 1));
        for (int i = 0; i < n; i++)
            win->lines[i] = xstrdup(lines[i]);
    }
    win->order = xmalloc(sizeof(int) * (n ? n : 1));
    translate_order(j->opt, lines, n, win->order);
    win->result = xmalloc(sizeof(Translation) * (n ? n : 1) * k);
    /* Zero translations until translated: a batch that an earlier write error keeps from
     * being translated is finished with nothing to free. */
    win->count = xcalloc(n ? n : 1, sizeof(int));
    win->bad = xcalloc(n ? n : 1, sizeof(int));
    win->done = xcalloc(n ? n : 1, sizeof(int));
    win->batches_left = (n + j->batch - 1) / j->batch;
    return win;
}

/* Frees win's translations not written (after an error), its lines if copied, its
 * prefixes, and win. */
static void window_free(LineWindow *win, int k)
{
    for (int i = win->next; i < win->n; i++)
        for (int c = 0; win->done[i] && c < win->count[i]; c++)
            translation_free(&win->result[(long)i * k + c]);
    for (int i = 0; win->copied && i < win->n; i++)
        free(win->lines[i]);
    if (win->copied) free(win->lines);
    for (int i = 0; win->prefix && i < win->n; i++)
        free(win->prefix[i]);
    free(win->prefix);
    free(win->order);
    free(win->result);
    free(win->count);
    free(win->bad);
    free(win->done);
    free(win);
}

/* Translates batch b on a borrowed worker into its lines' slots of the window (any
 * number of batches at once: each writes only its own lines' slots). Sampling's streams
 * are by the line's index in the whole input: the same draws whatever the batch, the
 * order or the worker. */
static void batch_run(void *job)
{
    WindowBatch *b = job;
    LineWindow *win = b->win;
    Worker *w = workers_borrow(b->j->w);
    worker_translate_ordered(w, win->lines, win->prefix, b->j->base + win->first_number - 1, win->order + b->from,
                             b->n, b->n, b->j->opt, win->result, win->count, win->bad);
    workers_return(b->j->w, w);
}

/* Batch b is translated (or, failed, dropped): its lines are done; the window's lines
 * from next on are written and flushed, in input order, while done; the window's last
 * batch frees it. Batches of a stream finish one at a time, in the order submitted. */
static int batch_finish(void *ctx, void *job, int failed, Error *err)
{
    (void)ctx;
    WindowBatch *b = job;
    LineWindow *win = b->win;
    StreamJob *j = b->j;
    int k = j->opt->nbest > 1 ? j->opt->nbest : 1, status = 0;
    for (int i = 0; i < b->n; i++)
        win->done[win->order[b->from + i]] = 1;
    if (failed) win->failed = 1;
    for (; !win->failed && win->next < win->n && win->done[win->next]; win->next++) {
        int i = win->next;
        status = write_record(j->out, &win->result[(long)i * k], win->count[i], win->bad[i], win->first_number + i,
                              j->base, j->in_name, j->opt, err);
        if (status == 0) status = flushed(j->out, err);
        for (int c = 0; c < win->count[i]; c++)
            translation_free(&win->result[(long)i * k + c]);
        if (status != 0) {
            win->failed = 1;
            win->next++;
            break;
        }
    }
    if (--win->batches_left == 0) window_free(win, k);
    free(b);
    return status;
}

/* lines_read_batches' and lines_read_windows' callback: lines[0..n-1] (lines
 * first_number... of in_name) in batches of j->batch, sorted by length when
 * translate_sorts (sentences of a batch then need about as many steps, and the padding
 * of the short ones costs little), else as read: with several workers, each batch
 * queued (translated concurrently, finished in order); else each translated and written
 * in turn. Each line is written, in input order, as soon as it and every line before it
 * are translated, and flushed. Every batch is finished, after an error too: the last
 * frees the window. With --prefix, the lines' prefixes are read first, on the reader's
 * thread, in input order. (A line passed empty is translated as empty, as the reader's
 * warning said.) */
static int flush_lines(void *ctx, char **lines, const char *warned, int n, long first_number, Error *err)
{
    (void)warned;
    StreamJob *j = ctx;
    if (n == 0) return 0;
    LineWindow *win = window_new(lines, n, first_number, j->queue != NULL, j);
    if (j->opt->prefix) {
        win->prefix = xcalloc(n, sizeof(char *));
        if (read_prefixes(j->opt, n, first_number, j->in_name, win->prefix, err)) {
            window_free(win, 1);
            return -1;
        }
    }
    int status = 0;
    for (int from = 0; from < n; from += j->batch) {
        WindowBatch *b = xmalloc(sizeof *b);
        *b = (WindowBatch){win, from, n - from < j->batch ? n - from : j->batch, j};
        if (j->queue) {
            int s = ordered_submit(j->queue, b, err);
            if (status == 0) status = s;
        } else {
            if (status == 0) batch_run(b);
            int s = batch_finish(NULL, b, status != 0, err);
            if (status == 0) status = s;
        }
    }
    return status;
}

int translate_stream(Workers *w, FILE *in, FILE *out, const char *in_name, const TranslateOptions *opt,
                     long *lines_before, Error *err)
{
    int batch = opt->batch > 0 ? opt->batch : 1;
    StreamJob job = {w, NULL, *lines_before, out, in_name, opt, batch};
    if (workers_threads(w)) {
        OrderedJobs jobs = {.run = batch_run, .finish = batch_finish, .ctx = &job};
        job.queue = ordered_new(workers_threads(w), 2 * workers_count(w), &jobs);
    }
    long count = 0;
    int status;
    if (!translate_sorts(opt)) {
        /* One line at a time; or the lines' attention matrices, which are large, a
         * batch at a time, as read. */
        status = lines_read_batches(in, in_name, batch, "translate", &opt->lines, "translated as empty",
                                    "translated as empty", flush_lines, &job, &count, err);
    } else {
        status = lines_read_windows(in, in_name, translate_window(opt), TRANSLATE_WINDOW_BYTES, "translate",
                                    &opt->lines, "translated as empty", "translated as empty", flush_lines, &job,
                                    &count, err);
    }
    /* Whatever was read is written (or, after a write error, dropped) before returning. */
    status = ordered_close(job.queue, status, err);
    *lines_before += count;
    return status;
}
