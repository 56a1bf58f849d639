/* test_modelfile.c — the model / checkpoint file format (src/files/modelfile.c): what is
 * written reads back.
 *
 * A written file must read back bit for bit: weights, vocabularies, text options, the
 * config, the optimizer and the training state of a resumable checkpoint; a file from
 * before the model family (no ARCH) reads as the one model there was. Writing must be
 * atomic: a failed write leaves nothing behind, a good one leaves no .tmp. The section
 * checksum is the standard CRC-32. Damaged files: test_modelfile_damage.c; the tokenizer
 * and symbol sections: test_modelfile_tokenizers.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "modelfile_checks.h"  /* defines: make_model_file, check_same, refused, sections_of, fix_crc, flip_every_byte, dir, path, bad */

/* ---------------------------------------------------------------- round trip */

static void test_round_trip(void)
{
    for (int with_adam = 0; with_adam <= 1; with_adam++) {
        ModelFile mf, back;
        Error err = {""};
        make_model_file(&mf, with_adam);
        int rc = modelfile_write(path, &mf, &err);
        CHECK(rc == 0, with_adam ? "write checkpoint" : "write model");
        if (rc) fprintf(stderr, "  %s\n", err.msg);
        rc = modelfile_read(path, &back, &err);
        CHECK(rc == 0, with_adam ? "read checkpoint" : "read model");
        if (rc) fprintf(stderr, "  %s\n", err.msg);
        else check_same(&mf, &back, with_adam ? "checkpoint" : "model");
        modelfile_free(&back);
        free_made(&mf);
    }

    /* The other text options, and no config: written as "{}". */
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    mf.text.lowercase = 1;
    mf.text.nfkc = 0;
    free(mf.config_json);
    mf.config_json = NULL;
    CHECK(modelfile_write(path, &mf, &err) == 0 && modelfile_read(path, &back, &err) == 0, "write/read without config");
    CHECK(back.text.lowercase == 1 && back.text.nfkc == 0, "lowercase on, nfkc off");
    CHECK(back.config_json && !strcmp(back.config_json, "{}"), "absent config reads back as {}");
    modelfile_free(&back);
    free_made(&mf);

    /* A member of the model family: the architecture travels in ARCH, and the weights
     * section is sized by it. */
    make_model_file(&mf, 1);
    model_free(&mf.model);
    adam_free(&mf.opt);
    ModelDims fam = {.src_vocab = N_SRC, .tgt_vocab = N_TGT, .embed = 4, .hidden = 4, .cell = CELL_LSTM,
                     .layers = 2, .bidirectional = 1, .attention = ATT_LOCAL_PREDICTIVE, .input_feed = 1,
                     .window = 3, .scaled = 1, .tie_embeddings = 1};
    model_alloc(&mf.model, &fam);
    model_init_weights(&mf.model, 5);
    adam_init(&mf.opt, mf.model.n_params, 0.001f);
    int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read an LSTM, 2-layer, bidirectional, local_predictive, tied model");
    if (rc == 0) check_same(&mf, &back, "family member");
    CHECK(rc == 0 && back.model.params.out_w == back.model.params.tgt_emb, "tied output layer after reading");
    if (rc == 0) modelfile_free(&back);
    free_made(&mf);
}


/* A file written before the model family has no ARCH section: it reads as the one
 * model there was then (one GRU layer, Bahdanau). Rebuilt here from a current file by
 * dropping ARCH and fixing the section count. */
static void test_without_arch(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    CHECK(modelfile_write(path, &mf, &err) == 0, "write");
    size_t len;
    unsigned char *data = slurp(path, &len);
    uint32_t count;
    memcpy(&count, data + 16, 4);
    size_t at = 20, out = 20;
    unsigned char *old = malloc(len);
    memcpy(old, data, 20);
    for (uint32_t i = 0; i < count; i++) {
        uint64_t n;
        memcpy(&n, data + at + 4, 8);
        if (memcmp(data + at, "ARCH", 4)) {
            memcpy(old + out, data + at, 16 + n);
            out += 16 + n;
        }
        at += 16 + n;
    }
    count--;
    memcpy(old + 16, &count, 4);
    char p[200];
    snprintf(p, sizeof p, "%s/old.bin", dir);
    spit(p, old, out);
    int rc = modelfile_read(p, &back, &err);
    CHECK(rc == 0 && out < len, "a file without ARCH reads");
    if (rc == 0) {
        ModelDims want = mf.model.dims;
        CHECK(!memcmp(&back.model.dims, &want, sizeof want) && back.model.dims.layers == 1 &&
                  back.model.dims.attention == ATT_BAHDANAU && back.model.dims.cell == CELL_GRU,
              "... as one GRU layer with Bahdanau attention");
        modelfile_free(&back);
    }
    /* Such a file's DIMS can only say Bahdanau (its first section: DIMS at 20, its
     * payload at 36; the CRC recomputed). */
    CHECK(!memcmp(old + 20, "DIMS", 4), "DIMS is the first section");
    int64_t luong = ATT_LUONG_DOT;
    memcpy(old + 36 + 8 * 4, &luong, 8);
    uint32_t crc = crc32_bytes(old + 36, 80);
    memcpy(old + 32, &crc, 4);
    spit(p, old, out);
    CHECK(refused(p, "section DIMS: field attention is 1, section ARCH (absent", 1),
          "a file without ARCH whose DIMS says luong_dot is refused");
    unlink(p);  /* else the test's directory stays behind in /tmp */
    free(data);
    free(old);
    free_made(&mf);
}

/* ---------------------------------------------------------------- training state */

/* A resumable checkpoint: make_model_file's, with a training state over 5 examples. */
static void make_resumable(ModelFile *mf)
{
    static const int order[5] = {4, 1, 3, 0, 2};
    make_model_file(mf, 1);
    mf->step = mf->opt.step;
    mf->has_train_state = 1;
    TrainState *s = &mf->train_state;
    s->step = mf->step;
    s->epoch = 2;
    s->next = 3;
    s->order_ready = 1;
    s->n_train = 5;
    s->order = malloc(sizeof order);
    memcpy(s->order, order, sizeof order);
    rng_seed(&s->shuffle_rng, 11);
    rng_seed(&s->model_rng, 12);
    s->learning_rate = 0.001;
    s->lr_factor = 0.5;
    s->lr_best_loss = 2.5;
    s->best = -INFINITY;
    s->best_step = 7;
    s->last_validated = 7;
    s->threads = 2;
    s->ranks = 2;
    s->workers = 3;
    strcpy(s->blas_kernel, "Haswell");
}

static void test_train_state(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_resumable(&mf);
    int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a checkpoint with a training state");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    if (rc == 0) {
        check_same(&mf, &back, "resumable checkpoint");
        const TrainState *a = &mf.train_state, *b = &back.train_state;
        CHECK(back.has_train_state && b->step == a->step && b->epoch == 2 && b->next == 3 && b->n_train == 5 &&
                  !memcmp(b->order, a->order, sizeof(int) * 5) && b->shuffle_rng.state == a->shuffle_rng.state &&
                  b->model_rng.inc == a->model_rng.inc && b->best == a->best && b->lr_best_loss == 2.5 &&
                  b->ranks == 2 && b->workers == 3 && !strcmp(b->blas_kernel, "Haswell"),
              "the training state reads back (order, random streams, -inf best, ranks and workers)");
        modelfile_free(&back);
    }
    /* A model file (no optimizer) never carries one. */
    mf.has_optimizer = 0;
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0 && !back.has_train_state, "without the optimizer no TRST is written");
    if (rc == 0) modelfile_free(&back);
    mf.has_optimizer = 1;

    /* Every truncation and every single-bit flip of a resumable checkpoint refused. */
    if (modelfile_write(path, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    size_t len;
    unsigned char *good = slurp(path, &len), *d = malloc(len + 8);
    Where w[9];
    int n = sections_of(good, len, w, 9);
    CHECK(n == 8 && !strcmp(w[7].tag, "TRST"), "a resumable checkpoint has 8 sections, TRST last");
    int accepted = 0;
    for (size_t cut = 0; cut < len; cut++) {
        spit(bad, good, cut);
        accepted += !refused(bad, NULL, 0);
    }
    CHECK(accepted == 0, "every truncation of a resumable checkpoint refused");
    flip_every_byte(good, len, 0, "resumable checkpoint");

    /* A TRST field out of range behind a valid CRC: the message names file and field. */
    const Where *trst = section(w, n, "TRST");
    memcpy(d, good, len);
    int64_t zero = 0;
    memcpy(d + trst->payload + 8 + 8 * 1, &zero, 8);  /* epoch */
    fix_crc(d, trst);
    spit(bad, d, len);
    expect_refused(bad, "field epoch", "TRST epoch 0 behind a valid CRC");

    /* TRST's step must be the file's. */
    mf.train_state.step = mf.step + 1;
    if (modelfile_write(path, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    expect_refused(path, "disagrees", "TRST step disagreeing with DIMS and ADAM");
    mf.train_state.step = mf.step;

    /* TRST without ADAM (ADAM dropped, the count adjusted). */
    {
        const Where *adam = section(w, n, "ADAM");
        size_t cut = adam->payload + adam->len - adam->header;
        memcpy(d, good, len);
        memmove(d + adam->header, d + adam->header + cut, len - adam->header - cut);
        uint32_t count = (uint32_t)n - 1;
        memcpy(d + 16, &count, 4);
        spit(bad, d, len - cut);
        expect_refused(bad, "without ADAM", "TRST without ADAM");
    }
    free(d);
    free(good);
    free_made(&mf);
}

/* ---------------------------------------------------------------- atomic writing */

static void test_atomic_write(void)
{
    ModelFile mf, back;
    Error err;
    make_model_file(&mf, 0);
    char p[256];

    /* A directory that does not exist: fails, names the path, creates nothing. */
    snprintf(p, sizeof p, "%s/no-such-dir/model.bin", dir);
    strcpy(err.msg, "");
    CHECK(modelfile_write(p, &mf, &err) == -1, "write into a missing directory fails");
    CHECK(strstr(err.msg, p) != NULL, "and the message names the path");
    CHECK(!exists(p) && count_temporaries(dir) == 0, "and leaves nothing behind");

    /* The target is a directory: refused, nothing left. */
    snprintf(p, sizeof p, "%s/a-directory", dir);
    mkdir(p, 0700);
    strcpy(err.msg, "");
    CHECK(modelfile_write(p, &mf, &err) == -1, "write over a directory fails");
    CHECK(strstr(err.msg, p) != NULL, "and the message names the path");
    CHECK(count_temporaries(dir) == 0, "and leaves no temporary file");
    rmdir(p);

    /* Overwriting a good file with a successful write replaces it, leaving no .tmp. */
    mf.step = 1;
    CHECK(modelfile_write(path, &mf, &err) == 0, "first write");
    mf.step = 2;
    mf.model.param_mem[0] = 0.5f;
    CHECK(modelfile_write(path, &mf, &err) == 0, "overwrite");
    CHECK(count_temporaries(dir) == 0, "no temporary file left after a successful write");
    int rc = modelfile_read(path, &back, &err);
    CHECK(rc == 0 && back.step == 2 && back.model.param_mem[0] == 0.5f, "the file holds the second write");
    if (rc == 0) modelfile_free(&back);

    /* A failed overwrite leaves the old file as it was. */
    size_t before_len, after_len;
    unsigned char *before = slurp(path, &before_len);
    const char *base = strrchr(path, '/');
    setenv("NMT_FULL_DISK_AT", base ? base + 1 : path, 1);  /* src/base/testhook.h: a full disk */
    mf.step = 3;
    CHECK(modelfile_write(path, &mf, &err) == -1, "write fails on a full disk");
    CHECK(strstr(err.msg, path) != NULL && strstr(err.msg, "No space left"), "and names the path and the reason");
    CHECK(count_temporaries(dir) == 0, "and leaves no temporary file");
    unsetenv("NMT_FULL_DISK_AT");
    unsigned char *after = slurp(path, &after_len);
    CHECK(before_len == after_len && !memcmp(before, after, before_len), "the old file is untouched");
    free(before);
    free(after);
    free_made(&mf);
}

/* crc32_bytes (eight bytes a step) against the bit-by-bit definition (reflected
 * polynomial 0xEDB88320), on every length 0..40 at every alignment 0..7, and the
 * standard check value of "123456789". */
static uint32_t crc32_bitwise(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
}

static void test_crc32(void)
{
    CHECK(crc32_bytes("123456789", 9) == 0xCBF43926u, "crc32 of \"123456789\" is cbf43926");
    unsigned char buf[64];
    for (int i = 0; i < 64; i++)
        buf[i] = (unsigned char)(i * 37 + 11);
    int agree = 1;
    for (int at = 0; at < 8; at++)
        for (size_t n = 0; n <= 40; n++)
            agree &= crc32_bytes(buf + at, n) == crc32_bitwise(buf + at, n);
    CHECK(agree, "crc32 equals the bit-by-bit CRC on lengths 0..40 at offsets 0..7");
}

/* ---------------------------------------------------------------- a classifier's section */

/* CLSF holds model.bag_of_words as a third field written only when it is on, so that a
 * classifier without it is the two-field section older nmt reads; both read back. */
static void test_classifier_section(void)
{
    for (int bow = 0; bow <= 1; bow++) {
        ModelFile mf, back;
        Error err = {""};
        make_model_file(&mf, 0);
        model_free(&mf.model);
        ModelDims d = {.src_vocab = N_SRC, .tgt_vocab = N_TGT, .embed = 3, .hidden = 4, .type = MODEL_CLASSIFIER,
                       .pooling = 2, .bag_of_words = bow};
        model_alloc(&mf.model, &d);
        model_init_weights(&mf.model, 42);
        mf.model.params.out_b[0] = 0.25f;
        if (bow) mf.model.params.bow_w[3 * N_SRC - 1] = -1.5f;  /* its last entry (3 classes): the weights end there */
        char what[96];
        snprintf(what, sizeof what, "classifier%s: written and read back", bow ? " with a bag of words" : "");
        int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
        CHECK(rc == 0, what);
        if (rc) fprintf(stderr, "  %s\n", err.msg);
        else check_same(&mf, &back, bow ? "classifier with a bag of words" : "classifier");
        size_t len;
        unsigned char *data = slurp(path, &len);
        Where w[16];
        int n = sections_of(data, len, w, 16);
        const Where *c = section(w, n, "CLSF");
        snprintf(what, sizeof what, "classifier%s: CLSF holds %d fields", bow ? " with a bag of words" : "", 2 + bow);
        CHECK(c->len == 8u * (2 + bow), what);
        if (bow) { /* bag_of_words 2: out of its range, refused naming it */
            int64_t two = 2;
            memcpy(data + c->payload + 16, &two, 8);
            fix_crc(data, c);
            spit(bad, data, len);
            CHECK(refused(bad, "bag_of_words", 0), "CLSF bag_of_words 2: refused, naming the field");
        }
        free(data);
        if (!rc) modelfile_free(&back);
        free_made(&mf);
    }
}

int main(void)
{
    modelfile_checks_begin("nmt_test_modelfile");
    test_crc32();
    test_round_trip();
    test_without_arch();
    test_train_state();
    test_atomic_write();
    test_classifier_section();
    modelfile_checks_end();
    return check_report("test_modelfile");
}
