/* init_model.c — train.init_from's model, read and checked; see init_model.h. */
#include "train/init_model.h"

#include <stdio.h>
#include <string.h>

#include "layers/pooling.h" /* defines: pooling_name */
#include "models/model.h"   /* defines: ModelDims, MODEL_*, attention_name */

/* What value v of one of dims_disagree's fields is, as a config writes it. */
static void dims_value(const char *key, int v, char *out, size_t len)
{
    static const char *const types[] = {"rnn", "transformer", "classifier"};
    if (!strcmp(key, "model.type") && v >= 0 && v < MODEL_TYPES) snprintf(out, len, "\"%s\"", types[v]);
    else if (!strcmp(key, "model.cell")) snprintf(out, len, "\"%s\"", v == CELL_LSTM ? "lstm" : "gru");
    else if (!strcmp(key, "model.attention")) snprintf(out, len, "\"%s\"", attention_name(v));
    else if (!strcmp(key, "model.activation")) snprintf(out, len, "\"%s\"", v == ACT_GELU ? "gelu" : "relu");
    else if (!strcmp(key, "model.norm")) snprintf(out, len, "\"%s\"", v == NORM_POST ? "post" : "pre");
    else if (!strcmp(key, "model.pooling")) snprintf(out, len, "\"%s\"", pooling_name(v));
    else if (!strcmp(key, "model.bidirectional") || !strcmp(key, "model.input_feed") || !strcmp(key, "model.scaled") ||
             !strcmp(key, "model.tie_embeddings") || !strcmp(key, "data.joint_vocab"))
        snprintf(out, len, "%s", v ? "true" : "false");
    else snprintf(out, len, "%d", v);
}

/* The first field in which a (a model file's architecture sections) and b (the model
 * its stored config describes) differ where the model's kind uses it, named as its config
 * key, with both values in the two buffers; NULL if they describe the same model. */
static const char *dims_disagree(const ModelDims *a, const ModelDims *b, char *va, char *vb, size_t len)
{
    int rnn = a->type != MODEL_TRANSFORMER, translator = !model_classifies(a);
    int local = a->attention == ATT_LOCAL_MONOTONIC || a->attention == ATT_LOCAL_PREDICTIVE;
    const struct {
        const char *key;
        int used, x, y;
    } f[] = {
        {"model.type", 1, a->type, b->type},
        {"model.embed", 1, a->embed, b->embed},
        {"model.hidden", rnn, a->hidden, b->hidden},
        {"model.cell", rnn, a->cell, b->cell},
        {"model.layers", rnn, a->layers ? a->layers : 1, b->layers ? b->layers : 1},
        {"model.bidirectional", rnn, a->bidirectional, b->bidirectional},
        {"model.attention", rnn && translator, a->attention, b->attention},
        {"model.input_feed", rnn && translator, a->input_feed, b->input_feed},
        {"model.window", rnn && translator && local, a->window, b->window},
        {"model.scaled", rnn && translator, a->scaled, b->scaled},
        {"model.tie_embeddings", translator, a->tie_embeddings, b->tie_embeddings},
        {"model.heads", !rnn, a->heads, b->heads},
        {"model.ff", !rnn, a->ff, b->ff},
        {"model.activation", !rnn, a->activation, b->activation},
        {"model.norm", !rnn, a->norm, b->norm},
        {"model.encoder_layers", !rnn, a->enc_layers, b->enc_layers},
        {"model.decoder_layers", !rnn, a->dec_layers, b->dec_layers},
        {"data.joint_vocab", !rnn, a->share_src_emb, b->share_src_emb},
        {"model.pooling", !translator, a->pooling, b->pooling},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].used && f[i].x != f[i].y) {
            dims_value(f[i].key, f[i].x, va, len);
            dims_value(f[i].key, f[i].y, vb, len);
            return f[i].key;
        }
    return NULL;
}

int train_adopt_init_model(Config *cfg, const char *config_name, ModelFile *init, Error *err)
{
    char why[ERROR_LEN];
    if (modelfile_read(cfg->init_from, init, err) || modelfile_trainable(init, cfg->init_from, err)) {
        snprintf(why, sizeof why, "%s", err->msg);
        return error_set(err, "train.init_from: %s", why);
    }
    Config model;
    config_defaults(&model);
    char source[1100];
    snprintf(source, sizeof source, "%s (section CONF)", cfg->init_from);
    int status = config_parse(&model, init->config_json, source, err);
    /* One model: the architecture sections say what it is (as for nmt info and
     * translate); the stored config must say the same, or the file is not one nmt
     * wrote as it is. */
    ModelDims said;
    char va[32], vb[32];
    const char *key = NULL;
    if (status == 0) {
        config_model_dims(&model, &said);
        key = dims_disagree(&init->model.dims, &said, va, vb, sizeof va);
    }
    if (key)
        status = error_set(err, "train.init_from: %s: its architecture sections and its stored config (section CONF) "
                                "disagree on %s (%s and %s): a damaged or hand-edited file, which nmt does not "
                                "fine-tune", cfg->init_from, key, va, vb);
    if (status == 0) status = config_adopt_model(cfg, &model, config_name ? config_name : "the config", cfg->init_from, err);
    config_free(&model);
    if (status) modelfile_free(init);
    return status;
}

