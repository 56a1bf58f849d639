#include "files/info.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "files/trainlog.h" /* defines: LogLine, trainlog_read */
#include "models/model.h" /* defines: model_family, ModelFacts */

/* The JSON members of a model's facts (ModelFacts, model.h): ctx is the object. */
static void fact_text(void *ctx, const char *key, const char *value) { cJSON_AddStringToObject(ctx, key, value); }
static void fact_number(void *ctx, const char *key, double value) { cJSON_AddNumberToObject(ctx, key, value); }
static void fact_flag(void *ctx, const char *key, int value) { cJSON_AddBoolToObject(ctx, key, value); }
static void fact_texts(void *ctx, const char *key, const char *const *values, int n)
{
    cJSON *list = cJSON_AddArrayToObject(ctx, key);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(list, cJSON_CreateString(values[i]));
}

/* train.best_metric of the config the file records ("loss" unless it says otherwise). */
static void best_metric(const ModelFile *mf, char *name, size_t len)
{
    snprintf(name, len, "loss");
    cJSON *cfg = cJSON_Parse(mf->config_json ? mf->config_json : "{}");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cfg, "train"), "best_metric");
    if (cJSON_IsString(m)) snprintf(name, len, "%s", m->valuestring);
    cJSON_Delete(cfg);
}

/* The best validation is in a checkpoint's training state. */
static int has_best(const ModelFile *mf)
{
    return mf->has_train_state && isfinite(mf->train_state.best);
}

/* ---------------------------------------------------------------- the run's train.log */

/* What the train.log beside a file says of its quality: the validation at the file's
 * own update (if one was made there), and the best by train.best_metric up to it (the
 * last validation marked "best" at or before it). A model.bin or best.bin holds no
 * validation figures itself; its run's train.log does, and is taken as the file's only
 * when its start line has the file's vocabulary sizes and parameter count and a
 * validation falls at or before the file's update. */
typedef struct {
    const ModelFile *mf;
    const char *metric;     /* train.best_metric */
    int of_this_model;      /* the start line matched the file */
    int found_at, found_best;
    LogLine at, best;       /* the validation at the file's update; the best up to it */
} RunRecord;

static int take_log_line(void *ctx, const LogLine *l)
{
    RunRecord *r = ctx;
    if (l->kind == LOG_START) {
        uint64_t need = log_bit(LF_SRC_VOCAB) | log_bit(LF_TGT_VOCAB) | log_bit(LF_PARAMETERS);
        r->of_this_model = (l->has & need) == need && l->v[LF_SRC_VOCAB] == r->mf->src_vocab.size &&
                           l->v[LF_TGT_VOCAB] == r->mf->tgt_vocab.size &&
                           l->v[LF_PARAMETERS] == (double)r->mf->model.n_params;
    } else if (l->kind == LOG_VALIDATION && r->of_this_model) {
        uint64_t need = log_bit(LF_STEP) | log_bit(LF_VALID_LOSS);
        if ((l->has & need) != need || l->v[LF_STEP] > (double)r->mf->step) return 1;
        if (l->v[LF_STEP] == (double)r->mf->step) {
            r->at = *l;
            r->found_at = 1;
        }
        if ((l->has & log_bit(LF_BEST)) && l->v[LF_BEST] != 0) {
            r->best = *l;
            r->found_best = 1;
        }
    }
    return 1;
}

/* Reads DIR/train.log for the file at path (DIR its directory). 1 if it has the file's
 * record (r filled), 0 if there is none or it is another model's. */
static int read_run_record(const char *path, const ModelFile *mf, const char *metric, RunRecord *r, char *log_path,
                           size_t len)
{
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(log_path, len, "%.*s/train.log", (int)(slash - path), path);
    else snprintf(log_path, len, "train.log");
    memset(r, 0, sizeof *r);
    r->mf = mf;
    r->metric = metric;
    FILE *f = fopen(log_path, "r");
    if (!f) return 0;
    LogReadStats stats;
    Error err;
    int status = trainlog_read(f, log_path, take_log_line, r, &stats, &err);
    fclose(f);
    return status == 0 && (r->found_at || r->found_best);
}

/* The value of the best metric on validation line l (NAN if it lacks it). */
static double metric_value(const LogLine *l, const char *metric)
{
    LogField f = !strcmp(metric, "bleu") ? LF_VALID_BLEU : !strcmp(metric, "accuracy") ? LF_VALID_ACCURACY
                                                                                       : LF_VALID_LOSS;
    return l->has & log_bit(f) ? l->v[f] : NAN;
}

/* " loss 3.2100, BLEU 12.34" or " loss 0.4800, accuracy 81.55%" */
static void describe_validation(const LogLine *l, char *buf, size_t len)
{
    int n = snprintf(buf, len, "loss %.4f", l->v[LF_VALID_LOSS]);
    if (n > 0 && (size_t)n < len && (l->has & log_bit(LF_VALID_BLEU)))
        snprintf(buf + n, len - (size_t)n, ", BLEU %.2f", l->v[LF_VALID_BLEU]);
    else if (n > 0 && (size_t)n < len && (l->has & log_bit(LF_VALID_ACCURACY)))
        snprintf(buf + n, len - (size_t)n, ", accuracy %.2f%%", 100 * l->v[LF_VALID_ACCURACY]);
}

/* The JSON of validation line l: step, loss, and its bleu or accuracy. */
static cJSON *validation_json(const LogLine *l)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "step", l->v[LF_STEP]);
    cJSON_AddNumberToObject(o, "loss", l->v[LF_VALID_LOSS]);
    if (l->has & log_bit(LF_VALID_BLEU)) cJSON_AddNumberToObject(o, "bleu", l->v[LF_VALID_BLEU]);
    if (l->has & log_bit(LF_VALID_ACCURACY)) cJSON_AddNumberToObject(o, "accuracy", l->v[LF_VALID_ACCURACY]);
    return o;
}

cJSON *info_json(const char *path, const ModelFile *mf)
{
    const ModelDims *d = &mf->model.dims;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", path);
    cJSON_AddNumberToObject(o, "format_version", modelfile_version(mf));
    cJSON_AddStringToObject(o, "weights", mf->weights_int8 ? "int8" : "float32");
    cJSON_AddStringToObject(o, "kind", mf->has_train_state ? "checkpoint" : mf->has_optimizer ? "checkpoint (no training state)" : "model");
    cJSON *a = cJSON_AddObjectToObject(o, "model");
    const ModelFamily *f = model_family(d);
    cJSON_AddStringToObject(a, "type", f->name);
    f->facts(d, &mf->tgt_vocab, &(ModelFacts){a, fact_text, fact_number, fact_flag, fact_texts});
    cJSON_AddNumberToObject(o, "parameters", (double)mf->model.n_params);
    cJSON_AddNumberToObject(o, "src_vocab", mf->src_vocab.size);
    cJSON_AddNumberToObject(o, "tgt_vocab", mf->tgt_vocab.size);
    cJSON_AddBoolToObject(o, "lowercase", mf->text.lowercase);
    cJSON_AddStringToObject(o, "normalization", mf->text.nfkc ? "nfkc" : "nfc");
    cJSON_AddStringToObject(o, "tokenizer", tokenizer_name(mf->seg.kind));
    cJSON_AddBoolToObject(o, "joint_vocab", mf->seg.joint);
    if (mf->seg.kind == TOKENIZER_BPE) {
        cJSON_AddNumberToObject(o, "src_merges", mf->seg.src.n);
        cJSON_AddNumberToObject(o, "tgt_merges", mf->seg.tgt.n);
    }
    if (mf->seg.kind == TOKENIZER_NONE) cJSON_AddStringToObject(o, "subword_format", subword_format_name(mf->seg.format));
    if (mf->seg.kind == TOKENIZER_SPM) {
        cJSON_AddStringToObject(o, "spm_type", segmenter_spm_type(&mf->seg.spm_src));
        cJSON_AddNumberToObject(o, "src_pieces", spm_piece_count(mf->seg.spm_src.spm));
        cJSON_AddNumberToObject(o, "tgt_pieces", spm_piece_count(mf->seg.spm_tgt.spm));
    }
    cJSON_AddNumberToObject(o, "steps", (double)mf->step);
    cJSON_AddNumberToObject(o, "epochs", (double)mf->epoch);
    char metric[32], log_path[4096];
    best_metric(mf, metric, sizeof metric);
    RunRecord r;
    int logged = read_run_record(path, mf, metric, &r, log_path, sizeof log_path);
    if (has_best(mf) || (logged && r.found_best)) {
        cJSON_AddStringToObject(o, "best_metric", metric);
        cJSON_AddNumberToObject(o, "best_validation",
                                has_best(mf) ? mf->train_state.best : metric_value(&r.best, metric));
        cJSON_AddNumberToObject(o, "best_step", has_best(mf) ? (double)mf->train_state.best_step : r.best.v[LF_STEP]);
    }
    if (logged) {
        cJSON_AddStringToObject(o, "train_log", log_path);
        if (r.found_at) cJSON_AddItemToObject(o, "validation", validation_json(&r.at));
        if (r.found_best) cJSON_AddItemToObject(o, "best", validation_json(&r.best));
    }
    cJSON *cfg = cJSON_Parse(mf->config_json ? mf->config_json : "{}");
    cJSON_AddItemToObject(o, "config", cfg ? cfg : cJSON_CreateObject());
    return o;
}

static void print_json(const char *path, const ModelFile *mf, FILE *out)
{
    cJSON *o = info_json(path, mf);
    char *text = cJSON_PrintUnformatted(o);
    fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(o);
}

/* The "tokenizer:" line: the kind and what it learned or how it writes text. */
static void print_tokenizer(const Segmenter *seg, FILE *out)
{
    static const char *const output[SUBWORD_FORMATS] = {
        [SUBWORD_FORMAT_NONE] = "output tokens joined by spaces",
        [SUBWORD_FORMAT_BPE_AT] = "output \"@@ \" joined back, as subword-nmt's",
        [SUBWORD_FORMAT_SPM] = "output U+2581 read as spaces, as SentencePiece's",
    };
    if (seg->kind == TOKENIZER_BPE && seg->joint) fprintf(out, "tokenizer: bpe, %d merges learned from both sides\n", seg->src.n);
    else if (seg->kind == TOKENIZER_BPE)
        fprintf(out, "tokenizer: bpe, %d source and %d target merges\n", seg->src.n, seg->tgt.n);
    else if (seg->kind == TOKENIZER_SPM && seg->joint)
        fprintf(out, "tokenizer: spm, one SentencePiece %s model of %d pieces for both sides\n",
                segmenter_spm_type(&seg->spm_src), spm_piece_count(seg->spm_src.spm));
    else if (seg->kind == TOKENIZER_SPM)
        fprintf(out, "tokenizer: spm, SentencePiece %s models of %d source and %d target pieces\n",
                segmenter_spm_type(&seg->spm_src), spm_piece_count(seg->spm_src.spm), spm_piece_count(seg->spm_tgt.spm));
    else if (seg->kind == TOKENIZER_NONE)
        fprintf(out, "tokenizer: none (text segmented elsewhere, split at whitespace only), subword_format %s: %s\n",
                subword_format_name(seg->format), output[seg->format]);
    else fprintf(out, "tokenizer: %s\n", tokenizer_name(seg->kind));
}

void info_print(const char *path, const ModelFile *mf, int json, FILE *out)
{
    if (json) {
        print_json(path, mf, out);
        return;
    }
    const ModelDims *d = &mf->model.dims;
    fprintf(out, "file: %s (format version %d, %s)\n", path, modelfile_version(mf),
            mf->has_train_state ? "a resumable checkpoint" : mf->has_optimizer ? "a checkpoint" : "a model");
    model_family(d)->describe(d, mf->model.n_params, &mf->tgt_vocab, out);
    const Segmenter *seg = &mf->seg;
    if (model_classifies(d))  /* its target vocabulary is the label set, said above */
        fprintf(out, "vocabulary: %d %s\n", mf->src_vocab.size, tokenizer_units(seg->kind));
    else
        fprintf(out, "vocabularies: %d source, %d target %s%s\n", mf->src_vocab.size, mf->tgt_vocab.size,
                tokenizer_units(seg->kind), seg->joint ? " (one joint vocabulary)" : "");
    print_tokenizer(seg, out);
    if (mf->weights_int8)
        fprintf(out, "weights: int8, one scale per row (nmt quantize); biases and norms float32\n");
    fprintf(out, "text: %s%s\n", mf->text.nfkc ? "NFKC" : "NFC", mf->text.lowercase ? ", case-folded" : "");
    fprintf(out, "trained: %ld updates, %ld epoch%s\n", mf->step, mf->epoch, mf->epoch == 1 ? "" : "s");
    char metric[32], log_path[4096], what[96];
    best_metric(mf, metric, sizeof metric);
    if (has_best(mf))
        fprintf(out, "best validation %s: %.4f at update %ld\n", metric, mf->train_state.best, mf->train_state.best_step);
    RunRecord r;
    if (read_run_record(path, mf, metric, &r, log_path, sizeof log_path)) {
        int best_here = r.found_at && r.found_best && r.best.v[LF_STEP] == r.at.v[LF_STEP];
        if (r.found_at) {
            describe_validation(&r.at, what, sizeof what);
            fprintf(out, "validation at update %ld: %s%s%s (%s)\n", mf->step, what,
                    best_here ? "; the best by " : "", best_here ? metric : "", log_path);
        }
        if (r.found_best && !best_here && !has_best(mf)) {
            describe_validation(&r.best, what, sizeof what);
            fprintf(out, "best validation by %s, at update %.0f: %s (%s)\n", metric, r.best.v[LF_STEP], what, log_path);
        }
    }
    fprintf(out, "config:\n%s\n", mf->config_json ? mf->config_json : "{}");
}
