#include "cli/info.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* The best validation is known only to checkpoints (their training state). */
static int has_best(const ModelFile *mf)
{
    return mf->has_train_state && isfinite(mf->train_state.best);
}

static void print_json(const char *path, const ModelFile *mf, FILE *out)
{
    const ModelDims *d = &mf->model.dims;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", path);
    cJSON_AddNumberToObject(o, "format_version", MODELFILE_VERSION);
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
    if (has_best(mf)) {
        char metric[32];
        best_metric(mf, metric, sizeof metric);
        cJSON_AddStringToObject(o, "best_metric", metric);
        cJSON_AddNumberToObject(o, "best_validation", mf->train_state.best);
        cJSON_AddNumberToObject(o, "best_step", (double)mf->train_state.best_step);
    }
    cJSON *cfg = cJSON_Parse(mf->config_json ? mf->config_json : "{}");
    cJSON_AddItemToObject(o, "config", cfg ? cfg : cJSON_CreateObject());
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
    fprintf(out, "file: %s (format version %d, %s)\n", path, MODELFILE_VERSION,
            mf->has_train_state ? "a resumable checkpoint" : mf->has_optimizer ? "a checkpoint" : "a model");
    model_family(d)->describe(d, mf->model.n_params, &mf->tgt_vocab, out);
    const Segmenter *seg = &mf->seg;
    if (model_classifies(d))  /* its target vocabulary is the label set, said above */
        fprintf(out, "vocabulary: %d %s\n", mf->src_vocab.size, tokenizer_units(seg->kind));
    else
        fprintf(out, "vocabularies: %d source, %d target %s%s\n", mf->src_vocab.size, mf->tgt_vocab.size,
                tokenizer_units(seg->kind), seg->joint ? " (one joint vocabulary)" : "");
    print_tokenizer(seg, out);
    fprintf(out, "text: %s%s\n", mf->text.nfkc ? "NFKC" : "NFC", mf->text.lowercase ? ", case-folded" : "");
    fprintf(out, "trained: %ld updates, %ld epoch%s\n", mf->step, mf->epoch, mf->epoch == 1 ? "" : "s");
    if (has_best(mf)) {
        char metric[32];
        best_metric(mf, metric, sizeof metric);
        fprintf(out, "best validation %s: %.4f at update %ld\n", metric, mf->train_state.best, mf->train_state.best_step);
    }
    fprintf(out, "config:\n%s\n", mf->config_json ? mf->config_json : "{}");
}
