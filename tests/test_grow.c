/* test_grow.c — a model whose vocabularies grew on fine-tuning (model_grow_from,
 * train.extend_vocab) for every family that has vocabularies: the recurrent model (with
 * and without tied embeddings, an LSTM stack), the Transformer (with its one shared
 * embedding matrix, and without), and the classifier's source side. Every old weight
 * must come over bit for bit, every new vocabulary row must be what the family's own
 * initialisation gives it, and a model that does not fit must be refused.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"          /* defines: CHECK, check_report */
#include "models/model.h"   /* defines: Model, model_alloc, model_init_weights, model_grow_from */
#include "text/vocab.h"     /* defines: VOCAB_SPECIALS */

/* from (seed 1) grown into dims `to_dims`; fresh is the same shape initialised (seed 2)
 * as the run initialises it before the copy. */
static void check_grow(ModelDims from_dims, int more_src, int more_tgt, const char *what)
{
    char label[200];
    ModelDims to_dims = from_dims;
    to_dims.src_vocab += more_src;
    to_dims.tgt_vocab += more_tgt;
    snprintf(label, sizeof label, "%s: the dimensions make models", what);
    CHECK(dims_problem(&from_dims) == NULL && dims_problem(&to_dims) == NULL, label);
    Model from, to, fresh;
    model_alloc(&from, &from_dims);
    model_alloc(&to, &to_dims);
    model_alloc(&fresh, &to_dims);
    model_init_weights(&from, 1);
    model_init_weights(&to, 2);
    model_init_weights(&fresh, 2);
    char why[200];
    int rc = model_grow_from(&to, &from, why, sizeof why);
    snprintf(label, sizeof label, "%s: grown", what);
    CHECK(rc == 0, label);
    if (rc) fprintf(stderr, "     %s\n", why);
    TensorShape old_shape[MAX_TENSORS], new_shape[MAX_TENSORS];
    float *old_t[MAX_TENSORS], *new_t[MAX_TENSORS], *fresh_t[MAX_TENSORS];
    int n = params_shapes(&from.dims, old_shape), grown = 0, old_ok = 1, new_ok = 1;
    params_shapes(&to.dims, new_shape);
    params_tensors(&from.params, &from.dims, old_t);
    params_tensors(&to.params, &to.dims, new_t);
    params_tensors(&fresh.params, &fresh.dims, fresh_t);
    for (int i = 0; i < n; i++) {
        long old_n = old_shape[i].rows * old_shape[i].cols, new_n = new_shape[i].rows * new_shape[i].cols;
        old_ok &= memcmp(new_t[i], old_t[i], sizeof(float) * (size_t)old_n) == 0;
        new_ok &= memcmp(new_t[i] + old_n, fresh_t[i] + old_n, sizeof(float) * (size_t)(new_n - old_n)) == 0;
        grown += new_n > old_n;
    }
    snprintf(label, sizeof label, "%s: every old weight bit for bit (%d tensors, %d of them grown)", what, n, grown);
    CHECK(old_ok, label);
    snprintf(label, sizeof label, "%s: the new rows as the family initialises them", what);
    CHECK(new_ok && grown > 0, label);
    model_free(&from);
    model_free(&to);
    model_free(&fresh);
}

static void test_families(void)
{
    ModelDims rnn = {.src_vocab = 9, .tgt_vocab = 7, .embed = 4, .hidden = 6};
    check_grow(rnn, 3, 5, "recurrent");
    check_grow(rnn, 0, 2, "recurrent, the target side only");
    ModelDims tied = {.src_vocab = 9, .tgt_vocab = 7, .embed = 6, .hidden = 6, .tie_embeddings = 1,
                      .attention = ATT_LUONG_GENERAL};
    check_grow(tied, 2, 3, "recurrent, tied output layer");
    ModelDims lstm = {.src_vocab = 9, .tgt_vocab = 7, .embed = 4, .hidden = 6, .cell = CELL_LSTM, .layers = 2,
                      .bidirectional = 1, .attention = ATT_LUONG_CONCAT, .input_feed = 1};
    check_grow(lstm, 4, 4, "LSTM, 2 layers, bidirectional, input feeding");
    ModelDims shared = {.type = MODEL_TRANSFORMER, .src_vocab = 11, .tgt_vocab = 11, .embed = 8, .hidden = 8,
                        .heads = 2, .ff = 16, .enc_layers = 2, .dec_layers = 1, .tie_embeddings = 1,
                        .share_src_emb = 1};
    check_grow(shared, 6, 6, "Transformer, one embedding for both sides and the output (joint vocabulary)");
    ModelDims trf = {.type = MODEL_TRANSFORMER, .src_vocab = 11, .tgt_vocab = 9, .embed = 8, .hidden = 8, .heads = 2,
                     .ff = 16, .enc_layers = 1, .dec_layers = 2, .norm = NORM_POST};
    check_grow(trf, 3, 1, "Transformer, own embeddings");
    ModelDims cls = {.type = MODEL_CLASSIFIER, .embed = 5, .hidden = 6, .src_vocab = 11, .tgt_vocab = 3 + VOCAB_SPECIALS};
    check_grow(cls, 5, 0, "classifier, the source side");
}

/* A model of another architecture, or larger vocabularies than the target's: refused. */
static void test_refused(void)
{
    ModelDims a = {.src_vocab = 9, .tgt_vocab = 7, .embed = 4, .hidden = 6}, b = a, c = a;
    b.hidden = 8;
    c.src_vocab = 8;
    Model ma, mb, mc;
    model_alloc(&ma, &a);
    model_alloc(&mb, &b);
    model_alloc(&mc, &c);
    char why[200];
    CHECK(model_grow_from(&mb, &ma, why, sizeof why) == -1 && strstr(why, "another architecture"),
          "another hidden size: refused, naming a tensor");
    CHECK(model_grow_from(&mc, &ma, why, sizeof why) == -1 && strstr(why, "smaller vocabularies"),
          "a smaller vocabulary: refused");
    ModelDims t = {.type = MODEL_TRANSFORMER, .src_vocab = 9, .tgt_vocab = 7, .embed = 4, .hidden = 4, .heads = 2,
                   .ff = 8, .enc_layers = 1, .dec_layers = 1};
    Model mt;
    model_alloc(&mt, &t);
    CHECK(model_grow_from(&mt, &ma, why, sizeof why) == -1 && strstr(why, "another kind of model"),
          "another family: refused");
    model_free(&ma);
    model_free(&mb);
    model_free(&mc);
    model_free(&mt);
}

int main(void)
{
    test_families();
    test_refused();
    return check_report("test_grow");
}
