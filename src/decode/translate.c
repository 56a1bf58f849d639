#include "decode/translate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "data/corpus.h"  /* defines: encode_tokens */
#include "decode/decode.h"  /* defines: decode_greedy, decode_beam, Hypothesis */
#include "decode/heatmap.h" /* defines: heatmap_write_svg */
#include "text/segment.h" /* defines: segmenter_apply, segmenter_detokenize */
#include "io/lines.h"       /* defines: lines_read_batches */

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
    return opt->align || opt->attention_json || opt->attention_svg || opt->replace_unk;
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

void translate_batch(ModelFile *mf, RunState *rs, char *const *lines, int n, const TranslateOptions *opt,
                     Translation *out, int *count, int *bad)
{
    int k = opt->nbest > 1 ? opt->nbest : 1, beam = opt->beam > k ? opt->beam : k;
    int want_attn = wants_attention(opt);
    TokenList *tok = xcalloc(n, sizeof(TokenList));
    int **src = xcalloc(n, sizeof(int *)), *src_len = xcalloc(n, sizeof(int)), *limit = xcalloc(n, sizeof(int));
    int *live = xmalloc(sizeof(int) * n), n_live = 0;
    for (int i = 0; i < n; i++) {
        Error err;
        if (bad) bad[i] = 0;
        if (count) count[i] = 1;
        for (int j = 0; j < k; j++)
            out[(long)i * k + j] = (Translation){0};
        if (source_units(mf, lines[i], &tok[i], &err) != 0) {
            if (bad) bad[i] = 1;
            continue;
        }
        if (tok[i].n > TRANSLATE_MAX_SOURCE) {
            for (int j = TRANSLATE_MAX_SOURCE; j < tok[i].n; j++)
                free(tok[i].tokens[j]);
            tok[i].n = TRANSLATE_MAX_SOURCE;
            if (bad) bad[i] = 2;
        }
        if (tok[i].n > 0) {
            src[n_live] = encode_tokens(&tok[i], &mf->src_vocab);
            src_len[n_live] = tok[i].n;
            limit[n_live] = output_limit(opt, tok[i].n);
            live[n_live++] = i;
        }
    }
    if (n_live > 0) {
        Hypothesis *hyp = xcalloc((long)n_live * k, sizeof(Hypothesis));
        int *got = xmalloc(sizeof(int) * n_live), nm = 1 + opt->n_more;
        Model **models = xmalloc(sizeof(Model *) * nm);
        RunState **states = xmalloc(sizeof(RunState *) * nm);
        models[0] = &mf->model;
        states[0] = rs;
        for (int e = 0; e < opt->n_more; e++) {
            models[1 + e] = &opt->more_models[e]->model;
            states[1 + e] = &opt->more_rs[e];
        }
        for (int e = 0; e < nm; e++)
            states[e]->attn_layer = opt->align_layer;
        if (beam > 1 || opt->nbest >= 1) {
            decode_beam(models, states, nm, src, src_len, n_live, beam, k, limit, opt->length_penalty, want_attn, hyp,
                        got);
        } else {
            Batch batch = {0};
            batch_fill_source(&batch, src, src_len, n_live);
            decode_greedy(models, states, nm, &batch, limit, want_attn, hyp);
            for (int s = 0; s < n_live; s++)
                got[s] = 1;
            batch_free(&batch);
        }
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
        }
        free(hyp);
        free(got);
        free(models);
        free(states);
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
}

void translate_lines(ModelFile *mf, RunState *rs, char *const *lines, int n, const TranslateOptions *opt,
                     char **out, int *bad)
{
    TranslateOptions one = *opt;
    one.nbest = 0;
    one.align = one.attention_json = one.replace_unk = 0;
    one.attention_svg = NULL;
    Translation *t = xmalloc(sizeof(Translation) * (n ? n : 1));
    translate_batch(mf, rs, lines, n, &one, t, NULL, bad);
    for (int i = 0; i < n; i++) {
        out[i] = t[i].text;
        t[i].text = NULL;
        translation_free(&t[i]);
    }
    free(t);
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

/* One JSON object: the line (1-based), tokens, translation, score and attention. */
static void put_json(FILE *out, long number, const Translation *t)
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
    char *text = cJSON_PrintUnformatted(o);
    fputs(text, out);
    fputc('\n', out);
    free(text);
    cJSON_Delete(o);
}

/* Translates and writes lines[0..n-1] (lines first_number... of in_name, the records
 * numbered from base + first_number), warning about bad ones. */
static int flush_lines(ModelFile *mf, RunState *rs, char **lines, int n, long first_number, long base, FILE *out,
                       const char *in_name, const TranslateOptions *opt, Error *err)
{
    int k = opt->nbest > 1 ? opt->nbest : 1, status = 0;
    Translation *result = xmalloc(sizeof(Translation) * n * k);
    int *bad = xmalloc(sizeof(int) * n), *count = xmalloc(sizeof(int) * n);
    translate_batch(mf, rs, lines, n, opt, result, count, bad);
    for (int i = 0; i < n; i++) {
        long number = first_number + i;
        Translation *best = &result[(long)i * k];
        if (bad[i] == 1)
            fprintf(stderr, "nmt: warning: %s line %ld: invalid UTF-8; translated as empty\n", in_name, number);
        if (bad[i] == 2)
            fprintf(stderr, "nmt: warning: %s line %ld: longer than %d tokens; only the first %d translated\n",
                    in_name, number, TRANSLATE_MAX_SOURCE, TRANSLATE_MAX_SOURCE);
        if (status == 0 && opt->attention_svg) status = write_heatmap(opt->attention_svg, base + number, best, opt, err);
        if (opt->attention_json) {
            put_json(out, base + number, best);
        } else if (opt->nbest >= 1) {
            for (int j = 0; j < count[i]; j++) {
                const Translation *t = &result[(long)i * k + j];
                fprintf(out, "%ld ||| %s", base + number - 1, t->text);
                if (opt->nbest_format == NBEST_NMT) {
                    fprintf(out, " ||| %.6f", t->score);
                    if (opt->align) put_alignment(out, t);
                } else {
                    if (opt->align) put_alignment(out, t);
                    fprintf(out, " ||| F0= %.6f ||| %.6f", t->logprob, t->score);
                }
                fputc('\n', out);
            }
        } else {
            fputs(best->text, out);
            if (opt->align) put_alignment(out, best);
            fputc('\n', out);
        }
        for (int j = 0; j < count[i]; j++)
            translation_free(&result[(long)i * k + j]);
    }
    if (status == 0 && (ferror(out) || fflush(out) != 0))
        status = error_set(err, "writing the translation: %s", strerror(errno));
    free(result);
    free(bad);
    free(count);
    return status;
}

/* flush_lines' arguments besides the lines, for lines_read_batches. */
typedef struct {
    ModelFile *mf;
    RunState *rs;
    long base;
    FILE *out;
    const char *in_name;
    const TranslateOptions *opt;
} StreamJob;

static int flush_job(void *ctx, char **lines, const char *warned, int n, long first_number, Error *err)
{
    (void)warned; /* a line passed empty is translated as empty, as the warning said */
    StreamJob *j = ctx;
    return flush_lines(j->mf, j->rs, lines, n, first_number, j->base, j->out, j->in_name, j->opt, err);
}

int translate_stream(ModelFile *mf, FILE *in, FILE *out, const char *in_name, const TranslateOptions *opt,
                     long *lines_before, Error *err)
{
    RunState rs = {0};
    StreamJob job = {mf, &rs, *lines_before, out, in_name, opt};
    long count = 0;
    int status = lines_read_batches(in, in_name, opt->batch > 0 ? opt->batch : 1, "translate", &opt->lines,
                                    "translated as empty", "translated as empty", flush_job, &job, &count, err);
    *lines_before += count;
    runstate_free(&rs);
    return status;
}
