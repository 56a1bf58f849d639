/* rules.c — the model options' names and the rules they must keep (model.h): one table
 * that a config (config.c) and a model file (modelfile.c) are both checked against.
 *
 * Why here, apart from every family: the rules are about the options, which a config
 * names whatever family it chooses, and one option's rule often depends on which
 * family reads it ("model.window applies only to recurrent models"). Which family
 * reads which keys is asked of the family (ModelFamily.keys, .task), not of
 * model.type. */
#include "models/model.h"

#include <string.h>

#include "layers/pooling.h" /* defines: POOL_KINDS */

static const char *const attention_names[ATT_KINDS] = {
    "bahdanau", "luong_dot", "luong_general", "luong_concat", "local_monotonic", "local_predictive",
};

const char *attention_name(int kind) { return kind >= 0 && kind < ATT_KINDS ? attention_names[kind] : "?"; }

int attention_kind(const char *name)
{
    for (int k = 0; k < ATT_KINDS; k++)
        if (strcmp(name, attention_names[k]) == 0) return k;
    return -1;
}

int attention_is_luong(int kind) { return kind != ATT_BAHDANAU; }

static int is_local(int kind) { return kind == ATT_LOCAL_MONOTONIC || kind == ATT_LOCAL_PREDICTIVE; }
static int is_additive(int kind) { return kind == ATT_BAHDANAU || kind == ATT_LUONG_CONCAT; }

/* ---------------------------------------------------------------- what d's family reads */

static unsigned family_keys(const ModelDims *d)
{
    const ModelFamily *f = model_family(d);
    return f ? f->keys : 0;
}

static int known_type(const ModelDims *d) { return model_family(d) != NULL; }
/* The models with the recurrent encoder: the translation family and the classifier. */
static int recurrent(const ModelDims *d) { return (family_keys(d) & MODEL_KEYS_RECURRENT) != 0; }
static int transformer(const ModelDims *d) { return (family_keys(d) & MODEL_KEYS_TRANSFORMER) != 0; }
static int pooled(const ModelDims *d) { return (family_keys(d) & MODEL_KEYS_POOLING) != 0; }
static int translator(const ModelDims *d) { return !model_classifies(d); }

/* ---------------------------------------------------------------- the rules */

static int known_cell(const ModelDims *d) { return d->cell == CELL_GRU || d->cell == CELL_LSTM; }
static int known_attention(const ModelDims *d) { return d->attention >= 0 && d->attention < ATT_KINDS; }
/* layers 0 means 1 in a ModelDims (see model.h); a config and a file say 1 to 8. */
static int layers_in_range(const ModelDims *d) { return d->layers >= 0 && d->layers <= MAX_LAYERS; }
static int hidden_splits(const ModelDims *d) { return !d->bidirectional || d->hidden % 2 == 0; }
static int luong(const ModelDims *d) { return attention_is_luong(d->attention); }
static int input_feed_on(const ModelDims *d) { return d->input_feed; }
static int local(const ModelDims *d) { return is_local(d->attention); }
static int window_fits(const ModelDims *d) { return !is_local(d->attention) || d->window >= 1; }
static int dot_product(const ModelDims *d) { return !is_additive(d->attention); }
static int scaled_on(const ModelDims *d) { return d->scaled; }
static int tie_fits(const ModelDims *d) { return !d->tie_embeddings || d->embed == d->hidden; }
static int tie_on(const ModelDims *d) { return d->tie_embeddings; }
static int known_pooling(const ModelDims *d) { return !pooled(d) || (d->pooling >= 0 && d->pooling < POOL_KINDS); }
static int bidirectional_on(const ModelDims *d) { return d->bidirectional; }
static int bag_of_words_on(const ModelDims *d) { return d->bag_of_words; }
static int heads_divide(const ModelDims *d) { return !transformer(d) || (d->heads >= 1 && d->embed % d->heads == 0); }
static int transformer_layers_in_range(const ModelDims *d)
{
    return !transformer(d) || (d->enc_layers >= 1 && d->enc_layers <= MAX_LAYERS && d->dec_layers >= 1 &&
                               d->dec_layers <= MAX_LAYERS);
}

#define STRING(x) #x
#define NUMBER(x) STRING(x)
/* The order matters where one rule reads what an earlier one checks: the attention
 * kind is known before any rule asks which kind it is. */
#define RNN_ONLY(key, in_use) \
    {RULE_APPLIES, key, {"model.type"}, recurrent, in_use, key " applies only to recurrent models", "set model.type to \"rnn\""}
#define TRANSLATION_ONLY(key, in_use) \
    {RULE_APPLIES, key, {"model.type"}, translator, in_use, key " applies only to translation models", \
     "set model.type to \"rnn\" or \"transformer\""}
#define TRANSFORMER_ONLY(key) \
    {RULE_APPLIES, key, {"model.type"}, transformer, NULL, key " applies only to the Transformer", \
     "set model.type to \"transformer\""}
static const ModelRule rules[] = {
    {RULE_VALUE, "model.type", {NULL}, known_type, NULL, "model.type must be rnn, transformer or classifier", NULL},
    /* The keys of one family given for the other: named before any rule of their own. */
    RNN_ONLY("model.hidden", NULL),
    RNN_ONLY("model.cell", NULL),
    RNN_ONLY("model.attention", NULL),
    RNN_ONLY("model.bidirectional", bidirectional_on),
    RNN_ONLY("model.input_feed", input_feed_on),
    RNN_ONLY("model.window", NULL),
    RNN_ONLY("model.scaled", scaled_on),
    TRANSLATION_ONLY("model.attention", NULL),
    TRANSLATION_ONLY("model.input_feed", input_feed_on),
    TRANSLATION_ONLY("model.window", NULL),
    TRANSLATION_ONLY("model.scaled", scaled_on),
    TRANSLATION_ONLY("model.tie_embeddings", tie_on),
    {RULE_APPLIES, "model.pooling", {"model.type"}, pooled, NULL, "model.pooling applies only to classifiers",
     "set model.type to \"classifier\""},
    {RULE_VALUE, "model.pooling", {NULL}, known_pooling, NULL, "model.pooling must be attention, last, mean or max",
     NULL},
    {RULE_APPLIES, "model.bag_of_words", {"model.type"}, pooled, bag_of_words_on,
     "model.bag_of_words applies only to classifiers", "set model.type to \"classifier\""},
    TRANSFORMER_ONLY("model.heads"),
    TRANSFORMER_ONLY("model.ff"),
    TRANSFORMER_ONLY("model.activation"),
    TRANSFORMER_ONLY("model.norm"),
    TRANSFORMER_ONLY("model.encoder_layers"),
    TRANSFORMER_ONLY("model.decoder_layers"),
    {RULE_VALUE, "model.heads", {"model.embed"}, heads_divide, NULL,
     "model.heads must divide model.embed (d_model): each head attends in embed / heads dimensions", NULL},
    {RULE_VALUE, "model.encoder_layers", {"model.decoder_layers"}, transformer_layers_in_range, NULL,
     "model.encoder_layers and model.decoder_layers must be from 1 to 8", NULL},
    {RULE_VALUE, "model.cell", {NULL}, known_cell, NULL, "model.cell must be gru or lstm", NULL},
    {RULE_VALUE, "model.attention", {NULL}, known_attention, NULL,
     "model.attention must be bahdanau, luong_dot, luong_general, luong_concat, local_monotonic or local_predictive",
     NULL},
    {RULE_VALUE, "model.layers", {NULL}, layers_in_range, NULL, "model.layers must be from 1 to " NUMBER(MAX_LAYERS),
     NULL},
    {RULE_VALUE, "model.hidden", {"model.bidirectional"}, hidden_splits, NULL,
     "model.hidden must be even for a bidirectional encoder, which has hidden / 2 units per direction", NULL},
    {RULE_APPLIES, "model.input_feed", {"model.attention"}, luong, input_feed_on,
     "model.input_feed applies only to Luong attention kinds",
     "choose luong_dot, luong_general, luong_concat, local_monotonic or local_predictive"},
    {RULE_APPLIES, "model.window", {"model.attention"}, local, NULL,
     "model.window applies only to local attention kinds", "choose local_monotonic or local_predictive"},
    {RULE_VALUE, "model.window", {"model.attention"}, window_fits, NULL,
     "model.window must be at least 1 for local attention", NULL},
    {RULE_APPLIES, "model.scaled", {"model.attention"}, dot_product, scaled_on,
     "model.scaled applies only to dot-product attention kinds",
     "choose luong_dot, luong_general, local_monotonic or local_predictive"},
    {RULE_VALUE, "model.tie_embeddings", {"model.embed", "model.hidden"}, tie_fits, NULL,
     "model.tie_embeddings needs model.embed equal to model.hidden", NULL},
};
#undef NUMBER
#undef STRING
#undef RNN_ONLY
#undef TRANSFORMER_ONLY
#undef TRANSLATION_ONLY

const ModelRule *model_rules(int *n)
{
    *n = (int)(sizeof rules / sizeof rules[0]);
    return rules;
}

const ModelRule *model_rule_broken(const ModelDims *d)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const ModelRule *r = &rules[i];
        if (r->holds(d)) continue;
        if (r->kind == RULE_VALUE || (r->in_use && r->in_use(d))) return r;
    }
    return NULL;
}

const char *dims_problem(const ModelDims *d)
{
    const ModelRule *r = model_rule_broken(d);
    if (r) return r->text;
    if (model_classifies(d) && model_classes(d) < 2) return "a classifier needs at least two classes";
    /* Not an option of its own (model.tie_embeddings with data.joint_vocab): for a file. */
    if (d->share_src_emb && !(transformer(d) && d->tie_embeddings && d->src_vocab == d->tgt_vocab))
        return "a shared source embedding needs a tied Transformer with one vocabulary for both sides";
    return NULL;
}
