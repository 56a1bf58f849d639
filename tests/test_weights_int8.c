/* test_weights_int8.c — model files with int8 weights (`nmt quantize`; files/weights_int8.h,
 * section QWTS of files/modelfile.h): what they hold, that they read back, and that a
 * damaged or foreign one is refused cleanly.
 *
 * - every family's weights (random models): a matrix's weights read back within half a
 *   step (scale / 2) of the float ones, the vectors bit for bit; quantizing what was
 *   read gives the very integers and scales again (so decoding, which quantizes the
 *   weights it reads, finds those stored); the file is at most 0.35 of the float one;
 * - a model file with int8 weights: version 2, read back with weights_int8, the rest
 *   of the file as written; refused as a checkpoint, refused for training
 *   (modelfile_trainable); a weight too close to FLT_MAX for an int8 row is not written;
 * - damage: every single-byte flip refused; crafted payloads with valid checksums (a
 *   wrong form, tensor count, negative, NaN or huge scale, the value -128, a short or
 *   long payload, both weight sections, the wrong version, a row whose largest value is
 *   not 127) refused naming the problem. */
#include <float.h>
#include <math.h>

#include "modelfile_checks.h"
#include "files/weights_int8.h"
#include "kernels/matmul_int8.h"
#include "layers/pooling.h" /* defines: POOL_ATTENTION */

/* Random models of every family, with rows long enough for the scales to matter little. */
static void random_model(Model *m, int family)
{
    ModelDims d = {.type = MODEL_TRANSFORMER, .embed = 64, .hidden = 64, .heads = 4, .ff = 128, .src_vocab = 90,
                   .tgt_vocab = 70, .enc_layers = 2, .dec_layers = 1};
    if (family == 1)
        d = (ModelDims){.type = MODEL_RNN, .embed = 48, .hidden = 64, .src_vocab = 90, .tgt_vocab = 70, .layers = 2,
                        .cell = CELL_LSTM, .attention = ATT_LUONG_CONCAT, .bidirectional = 1};
    if (family == 2)
        d = (ModelDims){.type = MODEL_CLASSIFIER, .embed = 48, .hidden = 64, .src_vocab = 90, .tgt_vocab = 7,
                        .layers = 1, .pooling = POOL_ATTENTION};
    model_alloc(m, &d);
    model_init_weights(m, 5 + family);
}

static void test_families(void)
{
    const char *names[] = {"Transformer", "bidirectional LSTM, Luong concat", "classifier"};
    for (int family = 0; family < 3; family++) {
        Model m, back;
        random_model(&m, family);
        model_alloc(&back, &m.dims);
        size_t len;
        Error err;
        unsigned char *p = weights_int8_encode(&m, &len, "mem", &err);
        CHECK(p && len == weights_int8_bytes(&m.dims), names[family]);
        /* (The decoding gives back the pages it has read: it reads a copy.) */
        unsigned char *copy = xmalloc(len);
        memcpy(copy, p, len);
        int rc = weights_int8_decode(copy, len, &back, 0, "mem", &err);
        free(copy);
        char label[160];
        snprintf(label, sizeof label, "%s: its int8 weights read back", names[family]);
        CHECK(rc == 0, label);
        TensorShape shapes[MAX_TENSORS];
        float *a[MAX_TENSORS], *b[MAX_TENSORS];
        int n = params_shapes(&m.dims, shapes), within = 1, vectors_same = 1, matrices = 0;
        params_tensors(&m.params, &m.dims, a);
        params_tensors(&back.params, &m.dims, b);
        for (int t = 0; t < n; t++) {
            long rows = shapes[t].rows, cols = shapes[t].cols;
            if (!weights_int8_stored(rows, cols)) {
                vectors_same &= !memcmp(a[t], b[t], sizeof(float) * rows * cols);
                continue;
            }
            matrices++;
            for (long r = 0; r < rows; r++) {
                float amax = 0.0f;
                for (long c = 0; c < cols; c++)
                    amax = fmaxf(amax, fabsf(a[t][r * cols + c]));
                for (long c = 0; c < cols; c++)
                    within &= fabsf(a[t][r * cols + c] - b[t][r * cols + c]) <= amax / 127.0f * 0.5f * 1.0001f;
            }
        }
        snprintf(label, sizeof label, "%s: %d matrices' weights within half an int8 step of the float ones",
                 names[family], matrices);
        CHECK(within && matrices > 0, label);
        snprintf(label, sizeof label, "%s: the vectors (biases, norms) bit for bit", names[family]);
        CHECK(vectors_same, label);
        /* Quantizing what was read: the same bytes (integers and scales) again. */
        size_t len2;
        unsigned char *p2 = weights_int8_encode(&back, &len2, "mem", &err);
        snprintf(label, sizeof label, "%s: quantizing the weights read gives the stored integers and scales again",
                 names[family]);
        CHECK(p2 && len2 == len && !memcmp(p, p2, len), label);
        snprintf(label, sizeof label, "%s: %zu bytes, %.3f of the float weights' %ld", names[family], len,
                 (double)len / (4.0 * (double)m.n_params), 4 * m.n_params);
        CHECK(len <= 0.35 * 4.0 * (double)m.n_params, label);
        /* Read for int8 decoding: the int8-only matrices kept as rows, their floats
         * unwritten; written on demand, the very weights read above. */
        Model lazy;
        model_alloc(&lazy, &m.dims);
        copy = xmalloc(len);
        memcpy(copy, p, len);
        rc = weights_int8_decode(copy, len, &lazy, 1, "mem", &err);
        free(copy);
        int kept = lazy.stored_int8 ? lazy.stored_int8->n : 0;
        snprintf(label, sizeof label, "%s, read for decoding: %d matrices kept as int8 rows", names[family], kept);
        CHECK(rc == 0 && kept > 0, label);
        /* The embeddings among them, looked up from the int8 rows (model_embed): the rows
         * of the plain read, bit for bit, also after preparing for int8 and giving the
         * prepared floats back (the lookups keep reading the rows). A classifier has a
         * source embedding only. */
        {
            const ModelDims *d = &m.dims;
            int tables = d->type == MODEL_CLASSIFIER || d->share_src_emb ? 1 : 2;
            int lookups = 0, ids[5] = {0, 3, d->src_vocab - 1, 5, 3}, tids[4] = {0, 3, d->tgt_vocab - 1, 5};
            int E = d->embed;
            for (int i = 0; i < kept; i++)
                lookups += lazy.stored_int8->t[i].lookup;
            float got[5 * MODEL_MAX_WIDTH / 64], want[5 * MODEL_MAX_WIDTH / 64];
            int same = E <= MODEL_MAX_WIDTH / 64, src_unwritten = 1;
            for (long k = 0; k < (long)d->src_vocab * E && lazy.params.src_emb; k++)
                src_unwritten &= lazy.params.src_emb[k] == 0.0f;
            for (int round = 0; round < 2 && same; round++) {
                model_embed(&lazy, got, E, lazy.params.src_emb, ids, 5, E);
                model_embed(&back, want, E, back.params.src_emb, ids, 5, E);
                same &= !memcmp(got, want, sizeof(float) * 5 * E);
                if (tables == 2) {
                    model_embed(&lazy, got, E, lazy.params.tgt_emb, tids, 4, E);
                    model_embed(&back, want, E, back.params.tgt_emb, tids, 4, E);
                    same &= !memcmp(got, want, sizeof(float) * 4 * E);
                }
                if (round == 0) {
                    model_prepare_decoding(&lazy, COMPUTE_INT8);
                    model_drop_prepared_floats(&lazy);
                }
            }
            snprintf(label, sizeof label, "%s: %d embedding tables kept as int8 rows (their floats unwritten); "
                     "looked up, the plain read's rows bit for bit, before and after preparing", names[family],
                     lookups);
            CHECK(lookups == tables && src_unwritten && same, label);
            model_free(&lazy);
            model_alloc(&lazy, &m.dims);
            copy = xmalloc(len);
            memcpy(copy, p, len);
            weights_int8_decode(copy, len, &lazy, 1, "mem", &err);
            free(copy);
        }
        model_materialize(&lazy);
        snprintf(label, sizeof label, "%s: written on demand, the weights read without keeping them", names[family]);
        CHECK(!lazy.stored_int8 && !memcmp(lazy.param_mem, back.param_mem, sizeof(float) * m.n_params), label);
        model_free(&lazy);
        free(p);
        free(p2);
        model_free(&m);
        model_free(&back);
    }
}

/* The sample model file (modelfile_checks.h) with int8 weights, written to path. The
 * sample's weights hold values no int8 row has room for (FLT_MAX, subnormals): those
 * are made ordinary first (test_too_large takes them up). */
static void make_int8_file(ModelFile *mf)
{
    make_model_file(mf, 0);
    float *w = mf->model.param_mem;
    for (int i = 1; i <= 6; i++)
        w[i] = 0.25f * (float)i - 0.8f;
    mf->weights_int8 = 1;
    Error err;
    if (modelfile_write(path, mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
}

static void test_file(void)
{
    ModelFile mf, back;
    make_int8_file(&mf);
    Error err;
    CHECK(modelfile_read(path, &back, &err) == 0, "a model file with int8 weights reads back");
    CHECK(back.weights_int8 == 1 && modelfile_version(&back) == MODELFILE_VERSION_INT8,
          "... as int8 weights, format version 2");
    size_t len;
    unsigned char *data = slurp(path, &len);
    CHECK(data != NULL, "read the file's bytes");
    uint32_t version;
    memcpy(&version, data + 8, 4);
    CHECK(version == 2, "its header says version 2");
    Where w[16];
    int n = sections_of(data, len, w, 16), has_wgts = 0;
    for (int i = 0; i < n; i++)
        has_wgts |= !strcmp(w[i].tag, "WGTS");
    CHECK(!has_wgts && section(w, n, "QWTS")->len == weights_int8_bytes(&mf.model.dims), "QWTS in place of WGTS");
    CHECK(same_vocab(&mf.src_vocab, &back.src_vocab) && same_vocab(&mf.tgt_vocab, &back.tgt_vocab) &&
              !strcmp(mf.config_json, back.config_json) && mf.step == back.step,
          "vocabularies, config and step as written");
    CHECK(modelfile_trainable(&back, path, &err) == -1 && strstr(err.msg, "int8") && strstr(err.msg, path),
          "modelfile_trainable refuses it, naming the file");
    CHECK(modelfile_trainable(&mf, path, &err) == -1, "... and the ModelFile it was written from");
    /* Written again from what was read: the same file, byte for byte. */
    char again[200];
    snprintf(again, sizeof again, "%s/again.bin", dir);
    unsigned char *data2 = NULL;
    size_t len2 = 0;
    CHECK(modelfile_write(again, &back, &err) == 0 && (data2 = slurp(again, &len2)) != NULL && len2 == len &&
              !memcmp(data, data2, len),
          "written again from what was read: byte for byte the same file");
    free(data2);
    remove(again);
    /* A float model is trainable; a checkpoint cannot have int8 weights. */
    ModelFile ck;
    make_model_file(&ck, 1);
    CHECK(modelfile_trainable(&ck, path, &err) == 0, "a float model is trainable");
    ck.weights_int8 = 1;
    CHECK(modelfile_write(again, &ck, &err) == -1 && strstr(err.msg, "checkpoint") && !exists(again),
          "a checkpoint with int8 weights: not written, nothing created");
    free_made(&ck);
    flip_every_byte(data, len, 0, "int8 model file");
    free(data);
    free_made(&mf);
    modelfile_free(&back);
}

/* A row whose largest weight is FLT_MAX: 127 x its scale rounds to infinity. */
static void test_too_large(void)
{
    ModelFile mf;
    make_model_file(&mf, 0);   /* its weights hold +-FLT_MAX */
    mf.weights_int8 = 1;
    char out[200];
    snprintf(out, sizeof out, "%s/huge.bin", dir);
    Error err;
    CHECK(modelfile_write(out, &mf, &err) == -1 && strstr(err.msg, "no int8 form") && strstr(err.msg, "row") &&
              !exists(out),
          "a weight at FLT_MAX: no int8 form, not written, nothing created");
    free_made(&mf);
}

/* The int8 file with its QWTS payload edited by edit (at the first matrix's first
 * scale, its first value, ...) and the checksum fixed; refused with `want`. */
typedef void (*Edit)(unsigned char *payload, uint64_t len, const ModelDims *d);
static const ModelDims *edit_dims;

static size_t first_matrix(const ModelDims *d, long *rows, long *cols)
{
    TensorShape s[MAX_TENSORS];
    int n = params_shapes(d, s);
    size_t at = 4;
    for (int t = 0; t < n; t++) {
        if (weights_int8_stored(s[t].rows, s[t].cols)) {
            *rows = s[t].rows, *cols = s[t].cols;
            return at;   /* its form */
        }
        at += 4 + 4 * (size_t)(s[t].rows * s[t].cols);
    }
    fprintf(stderr, "no matrix\n");
    exit(2);
}

static void set_scale(unsigned char *p, float v)
{
    long rows, cols;
    size_t at = first_matrix(edit_dims, &rows, &cols) + 4;
    memcpy(p + at, &v, 4);
}
static void edit_negative(unsigned char *p, uint64_t len, const ModelDims *d) { (void)len, (void)d, set_scale(p, -0.5f); }
static void edit_nan(unsigned char *p, uint64_t len, const ModelDims *d) { (void)len, (void)d, set_scale(p, NAN); }
static void edit_huge(unsigned char *p, uint64_t len, const ModelDims *d) { (void)len, (void)d, set_scale(p, FLT_MAX / 100.0f); }
static void edit_form(unsigned char *p, uint64_t len, const ModelDims *d)
{
    (void)len;
    long rows, cols;
    uint32_t form = 0;
    memcpy(p + first_matrix(d, &rows, &cols), &form, 4);
}
static void edit_minus128(unsigned char *p, uint64_t len, const ModelDims *d)
{
    (void)len;
    long rows, cols;
    size_t at = first_matrix(d, &rows, &cols) + 4 + 4 * (size_t)rows;
    p[at + 1] = 0x80;
}
/* The first matrix's first row halved: its largest value 63 or 64, not 127. */
static void edit_halved(unsigned char *p, uint64_t len, const ModelDims *d)
{
    (void)len;
    long rows, cols;
    size_t at = first_matrix(d, &rows, &cols) + 4 + 4 * (size_t)rows;
    for (long c = 0; c < cols; c++)
        p[at + c] = (unsigned char)(int8_t)((int8_t)p[at + c] / 2);
}
static void edit_count(unsigned char *p, uint64_t len, const ModelDims *d)
{
    (void)len, (void)d;
    uint32_t count;
    memcpy(&count, p, 4);
    count++;
    memcpy(p, &count, 4);
}

static void expect_edit(const unsigned char *good, size_t len, const Where *q, Edit edit, const char *want,
                        const char *what)
{
    unsigned char *copy = malloc(len);
    memcpy(copy, good, len);
    edit(copy + q->payload, q->len, edit_dims);
    fix_crc(copy, q);
    spit(bad, copy, len);
    free(copy);
    expect_refused(bad, want, what);
}

/* The file with the header's version, or QWTS's length, changed (section list rebuilt). */
static void test_crafted(void)
{
    ModelFile mf;
    make_int8_file(&mf);
    edit_dims = &mf.model.dims;
    size_t len;
    unsigned char *data = slurp(path, &len);
    if (!data) exit(2);
    Where w[16];
    int n = sections_of(data, len, w, 16);
    const Where *q = section(w, n, "QWTS");
    expect_edit(data, len, q, edit_negative, "scale -0.5", "a negative scale: refused, naming it");
    expect_edit(data, len, q, edit_nan, "scale nan", "a NaN scale: refused");
    expect_edit(data, len, q, edit_huge, "beyond the largest float", "a scale whose 127 x overflows: refused");
    expect_edit(data, len, q, edit_form, "has form 0", "a matrix stored as floats: refused (form)");
    expect_edit(data, len, q, edit_minus128, "is -128", "the value -128: refused");
    expect_edit(data, len, q, edit_count, "the dimensions have", "a wrong tensor count: refused");
    expect_edit(data, len, q, edit_halved, "not a row nmt writes",
                "a row whose largest value is not 127 (writing it back would change it): refused");
    /* Version 1 with QWTS; version 2 with WGTS (a float file relabelled). */
    unsigned char *copy = malloc(len);
    memcpy(copy, data, len);
    uint32_t one = 1;
    memcpy(copy + 8, &one, 4);
    spit(bad, copy, len);
    expect_refused(bad, "format version 1 with section QWTS", "version 1 with int8 weights: refused");
    memcpy(copy, data, len);
    memcpy(copy + q->header, "WGTS", 4);
    uint32_t two = 2;
    memcpy(copy + 8, &two, 4);
    spit(bad, copy, len);
    expect_refused(bad, NULL, "a QWTS payload labelled WGTS: refused");
    memcpy(copy + 8, &two, 4);
    uint32_t ninety = 99;
    memcpy(copy + 8, &ninety, 4);
    spit(bad, copy, len);
    expect_refused(bad, "this nmt reads versions 1 and 2", "version 99: refused, naming the versions read");
    /* QWTS one byte short, and one byte long (the payload and its length both). */
    for (int extra = -1; extra <= 1; extra += 2) {
        size_t len2 = len + (size_t)extra;
        unsigned char *c2 = malloc(len2 + 1);
        size_t end = q->payload + q->len;
        memcpy(c2, data, end - (extra < 0 ? 1 : 0));
        if (extra > 0) c2[end] = 0;
        memcpy(c2 + end + extra, data + end, len - end);
        uint64_t qlen = q->len + (uint64_t)(int64_t)extra;
        memcpy(c2 + q->header + 4, &qlen, 8);
        Where q2 = *q;
        q2.len = qlen;
        fix_crc(c2, &q2);
        spit(bad, c2, len2);
        expect_refused(bad, extra < 0 ? "truncated" : "after the last tensor",
                       extra < 0 ? "QWTS a byte short: refused" : "QWTS a byte long: refused");
        free(c2);
    }
    free(copy);
    free(data);
    free_made(&mf);
}

int main(void)
{
    modelfile_checks_begin("test_weights_int8");
    test_families();
    test_file();
    test_too_large();
    test_crafted();
    modelfile_checks_end();
    return check_report("test_weights_int8");
}
