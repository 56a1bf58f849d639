#include "cli/info.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "layers/pooling.h" /* defines: pooling_name */
#include "text/vocab.h"   /* defines: vocab_class_label */

static const char *cell_name(int cell) { return cell == CELL_LSTM ? "lstm" : "gru"; }

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
    cJSON_AddStringToObject(a, "type", d->type == MODEL_TRANSFORMER ? "transformer"
                                       : d->type == MODEL_CLASSIFIER ? "classifier"
                                                                     : "rnn");
    if (d->type == MODEL_CLASSIFIER) {
        cJSON_AddStringToObject(a, "cell", cell_name(d->cell));
        cJSON_AddNumberToObject(a, "layers", d->layers);
        cJSON_AddBoolToObject(a, "bidirectional", d->bidirectional);
        cJSON_AddStringToObject(a, "pooling", pooling_name(d->pooling));
        cJSON_AddNumberToObject(a, "embed", d->embed);
        cJSON_AddNumberToObject(a, "hidden", d->hidden);
        cJSON *labels = cJSON_AddArrayToObject(a, "labels");
        for (int c = 0; c < model_classes(d); c++)
            cJSON_AddItemToArray(labels, cJSON_CreateString(vocab_class_label(&mf->tgt_vocab, c)));
    } else if (d->type == MODEL_TRANSFORMER) {
        cJSON_AddNumberToObject(a, "encoder_layers", d->enc_layers);
        cJSON_AddNumberToObject(a, "decoder_layers", d->dec_layers);
        cJSON_AddNumberToObject(a, "heads", d->heads);
        cJSON_AddNumberToObject(a, "ff", d->ff);
        cJSON_AddStringToObject(a, "activation", d->activation == ACT_GELU ? "gelu" : "relu");
        cJSON_AddStringToObject(a, "norm", d->norm == NORM_POST ? "post" : "pre");
        cJSON_AddBoolToObject(a, "tie_embeddings", d->tie_embeddings);
        cJSON_AddBoolToObject(a, "shared_source_embedding", d->share_src_emb);
        cJSON_AddNumberToObject(a, "embed", d->embed);
    } else {
        cJSON_AddStringToObject(a, "cell", cell_name(d->cell));
        cJSON_AddNumberToObject(a, "layers", d->layers);
        cJSON_AddBoolToObject(a, "bidirectional", d->bidirectional);
        cJSON_AddStringToObject(a, "attention", attention_name(d->attention));
        cJSON_AddBoolToObject(a, "input_feed", d->input_feed);
        cJSON_AddNumberToObject(a, "window", d->window);
        cJSON_AddBoolToObject(a, "scaled", d->scaled);
        cJSON_AddBoolToObject(a, "tie_embeddings", d->tie_embeddings);
        cJSON_AddNumberToObject(a, "embed", d->embed);
        cJSON_AddNumberToObject(a, "hidden", d->hidden);
    }
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
    if (d->type == MODEL_TRANSFORMER) {
        fprintf(out, "model: Transformer, %d encoder and %d decoder layers, %d heads, %s-norm, %s%s\n", d->enc_layers,
                d->dec_layers, d->heads, d->norm == NORM_POST ? "post" : "pre", d->activation == ACT_GELU ? "gelu" : "relu",
                d->share_src_emb ? ", one embedding for source, target and output"
                : d->tie_embeddings ? ", tied target embeddings" : "");
        fprintf(out, "sizes: d_model %d, feed-forward %d, %ld parameters\n", d->embed, d->ff, mf->model.n_params);
    } else if (d->type == MODEL_CLASSIFIER) {
        fprintf(out, "model: classifier, %s, %d layer%s%s, %s pooling, %d classes\n", cell_name(d->cell), d->layers,
                d->layers > 1 ? "s" : "", d->bidirectional ? ", bidirectional encoder" : "", pooling_name(d->pooling),
                model_classes(d));
        fprintf(out, "labels: ");
        for (int c = 0; c < model_classes(d); c++)
            fprintf(out, "%s%s", c ? ", " : "", vocab_class_label(&mf->tgt_vocab, c));
        fprintf(out, "\nsizes: embed %d, hidden %d, %ld parameters\n", d->embed, d->hidden, mf->model.n_params);
    } else {
        fprintf(out, "model: %s, %d layer%s%s, %s attention%s%s", cell_name(d->cell), d->layers,
                d->layers > 1 ? "s" : "", d->bidirectional ? ", bidirectional encoder" : "", attention_name(d->attention),
                d->input_feed ? ", input feeding" : "", d->scaled ? ", scaled scores" : "");
        if (d->attention == ATT_LOCAL_MONOTONIC || d->attention == ATT_LOCAL_PREDICTIVE)
            fprintf(out, ", window %d", d->window);
        fprintf(out, "%s\n", d->tie_embeddings ? ", tied target embeddings" : "");
        fprintf(out, "sizes: embed %d, hidden %d, %ld parameters\n", d->embed, d->hidden, mf->model.n_params);
    }
    const Segmenter *seg = &mf->seg;
    if (d->type == MODEL_CLASSIFIER)  /* its target vocabulary is the label set, said above */
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
