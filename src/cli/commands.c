/* commands.c — what nmt's commands share; see commands.h. */
#include "cli/commands.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/lexicon.h" /* defines: lexicon_read */
#include "kernels/blas.h" /* defines: blas_set_threads, blas_check_memory_limit */

int fail(const Error *err)
{
    fprintf(stderr, "nmt: %s\n", err->msg);
    return 1;
}

void keep_going_without_reader(const char *out_path)
{
    if (out_path && strcmp(out_path, "-")) signal(SIGPIPE, SIG_IGN);
}

int output_done(OutFile *of, int status, Error *err)
{
    if (of->f == stdout && !of->path) return status;  /* no -o */
    if (status) {
        outfile_discard(of);
        return status;
    }
    return outfile_commit(of, err);
}

const char *const compute_type_names[] = {"float32", "int8", NULL};
const int compute_type_values[] = {COMPUTE_FLOAT32, COMPUTE_INT8};

int prepare_model(ModelFile *mf, const char *path, int compute_type, Error *err)
{
    Model *m = &mf->model;
    const ModelFamily *f = model_family(&m->dims);
    if (compute_type == COMPUTE_AS_FILE) compute_type = mf->weights_int8 && f->prepare ? COMPUTE_INT8 : COMPUTE_FLOAT32;
    if (compute_type == COMPUTE_INT8 && !f->prepare)
        return error_set(err, "%s: --compute-type int8: a %s has no int8 products; decode it with float32", path,
                         f->title);
    model_prepare_decoding(m, (ComputeType)compute_type);
    return 0;
}

int use_shortlist(const char *path, ModelFile *const *models, int n, const LineLimit *limit, Shortlist *sl,
                  Error *err)
{
    long unknown;
    if (lexicon_read(path, models[0], limit, sl, &unknown, err)) return -1;
    if (unknown > 0)
        fprintf(stderr, "nmt: note: %s: %ld line%s name%s a unit the model does not have (left out)\n", path,
                unknown, unknown == 1 ? "" : "s", unknown == 1 ? "s" : "");
    for (int k = 0; k < n; k++)
        models[k]->model.shortlist = sl;
    return 0;
}

int too_many_operands(const OptionTable *t, const Parsed *p, int max)
{
    if (p->n_operands <= max) return 0;
    return usage_error(t, "%s: unexpected argument %s", t->name, p->operands[max]);
}

int read_inputs(char *const *inputs, int n_inputs, InputReader read, void *ctx, Error *err)
{
    for (int k = 0; k < n_inputs; k++) {
        int is_stdin = !strcmp(inputs[k], "-");
        FILE *in = is_stdin ? stdin : fopen(inputs[k], "r");
        if (!in) return error_set(err, "%s: %s", inputs[k], strerror(errno));
        int status = read(in, is_stdin ? "stdin" : inputs[k], ctx, err);
        if (!is_stdin) fclose(in);
        if (status) return status;
    }
    return 0;
}

void inputs_or_stdin(char *const **inputs, int *n_inputs)
{
    static char dash[] = "-";
    static char *const standard_input[] = {dash, NULL};
    if (*n_inputs > 0) return;
    *inputs = standard_input;
    *n_inputs = 1;
}

int count_stdin(char *const *inputs, int n)
{
    int stdins = 0;
    for (int k = 0; k < n; k++)
        stdins += !strcmp(inputs[k], "-");
    return stdins;
}

/* ---------------------------------------------------------------- sacreBLEU's options */

int check_tokenizer(const char *value, const char *next, char *why, size_t why_len)
{
    (void)next;
    BleuTokenize t;
    if (bleu_tokenize_parse(value, &t) == 0) return 0;
    snprintf(why, why_len, "unknown tokeniser %.100s (13a, zh, char or none)", value);
    return -1;
}

/* The target's code of SRC-TGT, or NULL if pair is not of that form. */
static const char *target_language(const char *pair)
{
    const char *dash = strchr(pair, '-');
    if (!dash || dash == pair || !dash[1] || strchr(dash + 1, '-') || strlen(dash + 1) > 8) return NULL;
    return dash + 1;
}

int check_language_pair(const char *value, const char *next, char *why, size_t why_len)
{
    (void)next;
    if (target_language(value)) return 0;
    snprintf(why, why_len, "-l %.100s: expected SRC-TGT language codes, such as en-zh", value);
    return -1;
}

void metric_resolve(const MetricArgs *a, MetricOptions *m, int *tokenize_given)
{
    m->lowercase = a->lowercase;
    *tokenize_given = 0;
    if (a->language_pair) {
        const char *target = target_language(a->language_pair);
        int substitute;
        m->tokenize = bleu_tokenize_for_language(target, &substitute);
        if (substitute)
            fprintf(stderr, "nmt: note: sacreBLEU scores a %s target with MeCab (%s-mecab), which nmt does not have; "
                            "tok:char here, not comparable with %s-mecab scores\n",
                    target, target, target);
        *tokenize_given = 1;
    }
    if (a->tokenize) {
        BleuTokenize by_pair = m->tokenize;
        bleu_tokenize_parse(a->tokenize, &m->tokenize);
        if (*tokenize_given == 1 && by_pair != m->tokenize)  /* -l chose otherwise: said, not ignored silently */
            fprintf(stderr, "nmt: note: -tok %s wins over the tokeniser -l %s would choose\n", a->tokenize,
                    a->language_pair);
        *tokenize_given = 2;
    }
}

int read_translator(const char *path, ModelFile *mf, const ModelFile *first, const char *first_path, int compute_type,
                    int decode_only, Error *err)
{
    int lazy = decode_only && compute_type != COMPUTE_FLOAT32;  /* int8, or the file's: int8 if it has int8 weights */
    if ((lazy ? modelfile_read_decoding : modelfile_read)(path, mf, err)) return -1;
    char why[ERROR_LEN / 2];
    if (model_classifies(&mf->model.dims))
        error_set(err, "%s: a classifier (model.type \"classifier\"): label lines with nmt classify %s%s", path, path,
                  first ? "; an ensemble is of translation models only" : "");
    else if (first && modelfile_compatible(first, mf, 0, why, sizeof why))
        error_set(err, "%s: cannot join %s in an ensemble (%s): an ensemble's models must share their vocabularies "
                       "and the way they read text", path, first_path, why);
    else if (prepare_model(mf, path, compute_type, err) == 0)
        return 0;
    modelfile_free(mf);
    return -1;
}

int ensemble_files_open(EnsembleFiles *ef, char *const *models, int n_models, ModelFile *first, int compute_type,
                        int decode_only, Error *err)
{
    ef->more = xcalloc(n_models, sizeof(ModelFile));
    ef->all = xmalloc(sizeof(ModelFile *) * n_models);
    ef->all[0] = first;
    ef->n = 1;
    for (int k = 1; k < n_models; k++) {
        if (read_translator(models[k], &ef->more[ef->n - 1], first, models[0], compute_type, decode_only, err))
            return -1;
        ef->all[ef->n] = &ef->more[ef->n - 1];
        ef->n++;
    }
    return 0;
}

void ensemble_files_close(EnsembleFiles *ef)
{
    for (int k = 0; k < ef->n - 1; k++)
        modelfile_free(&ef->more[k]);
    free(ef->more);
    free(ef->all);
    memset(ef, 0, sizeof *ef);
}

int workers_usage(const OptionTable *t, int workers, int threads)
{
    if (threads > 1 && workers != 1 && workers != WORKERS_DEFAULT)
        return usage_error(t, "%s: --threads %d is OpenBLAS's threads for one worker; with --workers %d each worker "
                              "computes on one thread (choose one of the two)", t->name, threads, workers);
    return 0;
}

/* A worker per core, as many as the memory limit leaves room for their OpenBLAS buffers
 * (blas_check_memory_limit), at least one. */
static int workers_that_fit(void)
{
    int n = threadpool_cores() < WORKERS_MAX ? threadpool_cores() : WORKERS_MAX;
    Error ignored;
    while (n > 1 && blas_check_memory_limit(n, &ignored))
        n--;
    return n;
}

Workers *command_workers(ModelFile *const *models, int n_models, int workers, int threads, Error *err)
{
    if (workers == WORKERS_DEFAULT) workers = threads > 0 ? 1 : workers_that_fit();
    /* One worker computes on one OpenBLAS thread too, unless --threads says otherwise:
     * OpenBLAS shares a product among its threads in blocks, and on some CPUs (its Zen
     * and Haswell kernels) a block's place changes the last bits of what it sums, so
     * that the scores would depend on the number of threads, and --workers N would not
     * write what --workers 1 does. */
    if (workers == 1) blas_set_threads(threads > 0 ? threads : 1);
    return workers_new(models, n_models, workers, err);
}
