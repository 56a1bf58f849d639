#include "translate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h" /* defines: encode_tokens */
#include "decode.h" /* defines: decode_greedy, decode_beam */

/* Most output words for a source of src_len tokens. */
static int output_limit(const TranslateOptions *opt, int src_len)
{
    return opt->max_len > 0 ? opt->max_len : 2 * src_len + 10;
}

void translate_lines(ModelFile *mf, RunState *rs, char *const *lines, int n, const TranslateOptions *opt,
                     char **out, int *bad)
{
    int **src = xcalloc(n, sizeof(int *)), *src_len = xcalloc(n, sizeof(int));
    int **hyp = xcalloc(n, sizeof(int *)), *hyp_len = xcalloc(n, sizeof(int));
    int *live = xmalloc(sizeof(int) * n), n_live = 0, max_out = 1;
    for (int i = 0; i < n; i++) {
        TokenList t;
        Error err;
        if (bad) bad[i] = 0;
        if (text_tokenize(lines[i], strlen(lines[i]), &mf->text, &t, &err) != 0) {
            if (bad) bad[i] = 1;
            continue;
        }
        if (t.n > TRANSLATE_MAX_SOURCE) {
            for (int k = TRANSLATE_MAX_SOURCE; k < t.n; k++)
                free(t.tokens[k]);
            t.n = TRANSLATE_MAX_SOURCE;
            if (bad) bad[i] = 2;
        }
        if (t.n > 0) {
            src[n_live] = encode_tokens(&t, &mf->src_vocab);
            src_len[n_live] = t.n;
            int limit = output_limit(opt, t.n);
            if (limit > max_out) max_out = limit;
            live[n_live++] = i;
        }
        token_list_free(&t);
    }
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    if (n_live > 0) {
        Batch batch = {0};
        batch_fill_source(&batch, src, src_len, n_live);
        for (int k = 0; k < n_live; k++)
            hyp[k] = xmalloc(sizeof(int) * max_out);
        if (opt->beam > 1) {
            int *limit = xmalloc(sizeof(int) * n_live);
            for (int k = 0; k < n_live; k++)
                limit[k] = output_limit(opt, src_len[k]);
            decode_beam(&mf->model, rs, src, src_len, n_live, opt->beam, limit, opt->length_penalty, hyp, hyp_len);
            free(limit);
        } else {
            decode_greedy(&mf->model, rs, &batch, max_out, hyp, hyp_len);
        }
        for (int k = 0; k < n_live; k++) {
            /* Sentences decoded together share max_out; each keeps its own limit. */
            int limit = output_limit(opt, src_len[k]);
            int len = hyp_len[k] < limit ? hyp_len[k] : limit;
            char **words = xmalloc(sizeof(char *) * (len ? len : 1));
            for (int j = 0; j < len; j++)
                words[j] = (char *)vocab_word(&mf->tgt_vocab, hyp[k][j]);
            out[live[k]] = text_detokenize(words, len);
            free(words);
            free(hyp[k]);
            free(src[k]);
        }
        batch_free(&batch);
    }
    for (int i = 0; i < n; i++)
        if (!out[i]) out[i] = xstrdup("");
    free(src);
    free(src_len);
    free(hyp);
    free(hyp_len);
    free(live);
}

/* Translates and writes lines[0..n-1] (input lines first_number...), warning about bad ones. */
static int flush_lines(ModelFile *mf, RunState *rs, char **lines, int n, long first_number, FILE *out,
                       const char *in_name, const TranslateOptions *opt, Error *err)
{
    char **result = xmalloc(sizeof(char *) * n);
    int *bad = xmalloc(sizeof(int) * n), status = 0;
    translate_lines(mf, rs, lines, n, opt, result, bad);
    for (int i = 0; i < n; i++) {
        long number = first_number + i;
        if (bad[i] == 1)
            fprintf(stderr, "nmt: warning: %s line %ld: invalid UTF-8; translated as empty\n", in_name, number);
        if (bad[i] == 2)
            fprintf(stderr, "nmt: warning: %s line %ld: longer than %d tokens; only the first %d translated\n",
                    in_name, number, TRANSLATE_MAX_SOURCE, TRANSLATE_MAX_SOURCE);
        if (status == 0 && (fputs(result[i], out) < 0 || fputc('\n', out) < 0))
            status = error_set(err, "writing the translation: %s", strerror(errno));
        free(result[i]);
    }
    if (status == 0 && fflush(out) != 0) status = error_set(err, "writing the translation: %s", strerror(errno));
    free(result);
    free(bad);
    return status;
}

int translate_stream(ModelFile *mf, FILE *in, FILE *out, const char *in_name, const TranslateOptions *opt,
                     Error *err)
{
    RunState rs = {0};
    int batch = opt->batch > 0 ? opt->batch : 1, n = 0, status = 0;
    char **lines = xcalloc(batch, sizeof(char *));
    size_t *caps = xcalloc(batch, sizeof(size_t));
    ssize_t len;
    long number = 0;
    while (status == 0 && (len = getline(&lines[n], &caps[n], in)) >= 0) {
        char *line = lines[n];
        number++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = 0;
        if (len > 0 && line[len - 1] == '\r') line[--len] = 0;
        if ((size_t)len != strlen(line)) {
            fprintf(stderr, "nmt: warning: %s line %ld: NUL byte; translated as empty\n", in_name, number);
            line[0] = 0;
        }
        if (++n == batch) {
            status = flush_lines(mf, &rs, lines, n, number - n + 1, out, in_name, opt, err);
            n = 0;
        }
    }
    if (status == 0 && n > 0) status = flush_lines(mf, &rs, lines, n, number - n + 1, out, in_name, opt, err);
    if (status == 0 && ferror(in)) status = error_set(err, "%s: read error", in_name);
    for (int i = 0; i < batch; i++)
        free(lines[i]);
    free(lines);
    free(caps);
    runstate_free(&rs);
    return status;
}
