/* test_transformer_model.c — the Transformer as a whole model against its PyTorch
 * specification (scripts/reference_transformer.py, tests/fixtures/transformer_*.bin).
 *
 * So far: the parameter layout. Each fixture lists the parameters in the order the C
 * model keeps them in memory (model.c's layout()); the names and shapes must agree one
 * to one, for pre- and post-norm, 1 and 2 layers and tied embeddings, so that the
 * forward and backward passes to come read the very tensors PyTorch computed with. */
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "model.h"

/* The model a fixture's "dims" record describes: B, S, T, d, h, ff, Vs, Vt, N_enc,
 * N_dec, norm (0 pre, 1 post), activation (0 relu, 1 gelu), tied. */
static ModelDims fixture_dims(Fixture *f)
{
    const int *v = fixture_get(f, "dims")->data;
    return (ModelDims){.type = MODEL_TRANSFORMER, .embed = v[3], .hidden = v[3], .heads = v[4], .ff = v[5],
                       .src_vocab = v[6], .tgt_vocab = v[7], .enc_layers = v[8], .dec_layers = v[9],
                       .norm = v[10] ? NORM_POST : NORM_PRE, .activation = v[11] ? ACT_GELU : ACT_RELU,
                       .tie_embeddings = v[12]};
}

static void test_layout(const char *path)
{
    Fixture f = fixture_load(path);
    ModelDims d = fixture_dims(&f);
    char label[200];
    snprintf(label, sizeof label, "%s: a valid model (%s)", path, dims_problem(&d) ? dims_problem(&d) : "ok");
    CHECK(dims_problem(&d) == NULL, label);
    TensorShape shapes[MAX_TENSORS];
    int n = params_shapes(&d, shapes), agree = 0;
    long total = 0;
    /* The parameters follow dims, src, tgt_in and tgt_out. */
    for (int i = 0; i < n && 4 + i < f.n; i++) {
        const FixtureTensor *t = &f.t[4 + i];
        long rows = t->dims[0], cols = t->ndim == 2 ? t->dims[1] : 1;
        int same = !strcmp(t->name, shapes[i].name) && t->ndim <= 2 && rows == shapes[i].rows &&
                   cols == shapes[i].cols;
        if (!same)
            fprintf(stderr, "  %s: tensor %d is %s (%ld, %ld) in C, %s in the fixture\n", path, i, shapes[i].name,
                    shapes[i].rows, shapes[i].cols, t->name);
        agree += same;
        total += shapes[i].rows * shapes[i].cols;
    }
    snprintf(label, sizeof label, "%s: the %d parameter tensors in the fixture's order, names and shapes", path, n);
    CHECK(agree == n && 4 + n < f.n && !strcmp(f.t[4 + n].name, "enc_in"), label);
    CHECK(params_count(&d) == total, "params_count is the sum of the shapes");

    /* Initialisation: layer norms start as the identity (gain 1, bias 0); tied output
     * weights are the target embeddings themselves. */
    Model m;
    model_alloc(&m, &d);
    model_init_weights(&m, 7);
    int ln_ok = 1;
    for (int i = 0; i < d.embed; i++)
        ln_ok &= m.params.tenc[0].ln1.g[i] == 1.0f && m.params.tenc[0].ln1.b[i] == 0.0f &&
                 m.params.tdec[d.dec_layers - 1].ln3.g[i] == 1.0f;
    snprintf(label, sizeof label, "%s: layer norms initialised to gain 1, bias 0", path);
    CHECK(ln_ok, label);
    if (d.tie_embeddings) CHECK(m.params.out_w == m.params.tgt_emb, "tied: out_w is tgt_emb");
    model_free(&m);
    fixture_free(&f);
}

int main(void)
{
    const char *fixtures[] = {"tests/fixtures/transformer_pre1.bin", "tests/fixtures/transformer_post1.bin",
                              "tests/fixtures/transformer_pre2_gelu.bin", "tests/fixtures/transformer_tied.bin"};
    for (int i = 0; i < 4; i++)
        test_layout(fixtures[i]);
    return check_report("test_transformer_model");
}
