/* test_modelfile.c — the model / checkpoint file format (src/files/modelfile.c).
 *
 * A written file must read back bit for bit. Every damaged file — truncated anywhere,
 * any byte flipped, a crafted field with a recomputed checksum — must be refused with
 * -1 and a message that names the file, never a crash or a huge allocation. Writing
 * must be atomic: a failed write leaves nothing behind, a good one leaves no .tmp.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "files.h"  /* defines: slurp, spit, count_temporaries */
#include "files/modelfile.h" /* defines: ModelFile, modelfile_write, modelfile_read, crc32_bytes, TrainState */

/* ---------------------------------------------------------------- no huge allocations */

/* A reader that trusted a damaged length would ask for gigabytes. Make that fatal:
 * under AddressSanitizer, through its allocation limit (it reports and aborts); without
 * it, through an address-space limit a little above what the process already uses (the
 * xmalloc that fails exits the test). Either way the test does not complete. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "max_allocation_size_mb=256:allocator_may_return_null=0"; }

static void limit_memory(void)
{
#ifdef UNDER_ASAN
    return; /* ASan reserves terabytes of shadow memory; its own limit applies instead */
#else
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    int got = f ? fscanf(f, "%lu", &pages) : 0;
    if (f) fclose(f);
    struct rlimit rl;
    if (got != 1 || getrlimit(RLIMIT_AS, &rl) != 0) {
        SKIP("no huge allocations", "cannot read /proc/self/statm or RLIMIT_AS, so no address-space limit is set");
        return;
    }
    rlim_t want = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)256 << 20);
    if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max) want = rl.rlim_max;
    rl.rlim_cur = want;
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        SKIP("no huge allocations", "setrlimit(RLIMIT_AS) failed, so no address-space limit is set");
#endif
}

/* ---------------------------------------------------------------- files */

static char dir[64];          /* a private temp directory for everything this test writes */
static char path[128];        /* the model file under test */

/* Writes in place and then sets the length, rather than truncating to zero first:
 * ext4 flushes a file to disk when it is truncated to zero and rewritten, which would
 * make the thousands of damaged copies below take seconds. */
static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* ---------------------------------------------------------------- a small model file */

static const char *src_words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "नमस्ते", "घर", "the", "पानी"};
static const char *tgt_words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "hello", "café", "house"};
#define N_SRC (int)(sizeof src_words / sizeof src_words[0])
#define N_TGT (int)(sizeof tgt_words / sizeof tgt_words[0])

static void make_model_file(ModelFile *mf, int with_adam)
{
    memset(mf, 0, sizeof *mf);
    Error err;
    int ok = vocab_from_words(&mf->src_vocab, (char *const *)src_words, N_SRC, &err) == 0 &&
             vocab_from_words(&mf->tgt_vocab, (char *const *)tgt_words, N_TGT, &err) == 0;
    if (!ok) { fprintf(stderr, "vocab_from_words: %s\n", err.msg); exit(2); }
    ModelDims d = {.src_vocab = N_SRC, .tgt_vocab = N_TGT, .embed = 3, .hidden = 4};
    model_alloc(&mf->model, &d);
    model_init_weights(&mf->model, 42);
    /* Values a lossy path (text, double rounding, flushing subnormals) would change.
     * (NaN and the infinities are refused: test_nonfinite.) */
    float odd[] = {-0.0f, 1e-42f /* subnormal */, 1.17549435e-38f /* FLT_MIN */, -3.4028235e38f, 3.4028235e38f,
                   0.1f};
    memcpy(mf->model.param_mem + 1, odd, sizeof odd);
    mf->text.lowercase = 0;
    mf->text.nfkc = 1;
    mf->config_json = strdup("{\n\t\"data\": {\"train\": \"data/मराठी.tsv\"}\n}");
    mf->step = 123456789012L;
    mf->epoch = 7;
    mf->has_optimizer = with_adam;
    if (with_adam) {
        adam_init(&mf->opt, mf->model.n_params, 0.001f);
        mf->opt.step = 98765;
        Rng rng;
        rng_seed(&rng, 7);
        for (long i = 0; i < mf->model.n_params; i++) {
            mf->opt.m[i] = rng_normal(&rng);
            mf->opt.v[i] = rng_uniform(&rng) * 1e-3f;
        }
        mf->opt.v[0] = -0.0f;
    }
}

/* The ModelFile this test made (config_json from strdup) is freed like a read one. */
static void free_made(ModelFile *mf) { modelfile_free(mf); }

static int same_vocab(const Vocab *a, const Vocab *b)
{
    if (a->size != b->size) return 0;
    for (int i = 0; i < a->size; i++)
        if (strcmp(a->words[i], b->words[i]) || vocab_lookup(b, a->words[i]) != i) return 0;
    return 1;
}

static void check_same(const ModelFile *a, const ModelFile *b, const char *what)
{
    char label[160];
#define SAME(cond, field) do { snprintf(label, sizeof label, "%s: %s", what, field); CHECK(cond, label); } while (0)
    SAME(!memcmp(&a->model.dims, &b->model.dims, sizeof a->model.dims), "dims");
    SAME(a->model.n_params == b->model.n_params, "parameter count");
    SAME(b->model.param_mem && !memcmp(a->model.param_mem, b->model.param_mem, sizeof(float) * a->model.n_params),
         "every weight bit-identical");
    SAME(same_vocab(&a->src_vocab, &b->src_vocab), "source vocabulary (Devanagari words)");
    SAME(same_vocab(&a->tgt_vocab, &b->tgt_vocab), "target vocabulary");
    SAME(vocab_lookup(&b->src_vocab, "घर") == 5 && vocab_lookup(&b->src_vocab, "पानी") == 7, "lookup after reading");
    SAME(a->text.lowercase == b->text.lowercase && a->text.nfkc == b->text.nfkc, "text options");
    SAME(b->config_json && !strcmp(a->config_json, b->config_json), "config JSON");
    SAME(a->step == b->step && a->epoch == b->epoch, "step and epoch");
    SAME(a->has_optimizer == b->has_optimizer, "has_optimizer");
    if (a->has_optimizer && b->has_optimizer) {
        SAME(b->opt.n == a->opt.n && b->opt.step == a->opt.step, "Adam step and size");
        SAME(!memcmp(a->opt.m, b->opt.m, sizeof(float) * a->opt.n), "Adam m bit-identical");
        SAME(!memcmp(a->opt.v, b->opt.v, sizeof(float) * a->opt.n), "Adam v bit-identical");
    }
#undef SAME
}

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

static int refused(const char *p, const char *want, int loud);

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

/* ---------------------------------------------------------------- damage */

/* modelfile_read(p) must fail, leave *mf empty, and say what is wrong (containing
 * `want` if given) in a message that names p. Returns 1 if so; quiet unless asked. */
static int refused(const char *p, const char *want, int loud)
{
    ModelFile mf;
    Error err;
    strcpy(err.msg, "(no message)");
    int rc = modelfile_read(p, &mf, &err);
    int ok = rc == -1 && strstr(err.msg, p) && strlen(err.msg) > strlen(p) + 4 && (!want || strstr(err.msg, want)) &&
             !mf.model.param_mem && !mf.src_vocab.words && !mf.tgt_vocab.words && !mf.config_json && !mf.opt.m;
    if (rc == 0) modelfile_free(&mf);
    if (!ok && loud) fprintf(stderr, "  rc %d, message \"%s\" (wanted \"%s\")\n", rc, err.msg, want ? want : "");
    return ok;
}

static void expect_refused(const char *p, const char *want, const char *what)
{
    CHECK(refused(p, want, 1), what);
}

/* Where each section of a well-formed file sits (parsed here independently). */
typedef struct {
    char tag[5];
    size_t header, payload;  /* offsets of the tag and of the payload */
    uint64_t len;
} Where;

static int sections_of(const unsigned char *data, size_t len, Where *w, int max)
{
    uint32_t count;
    memcpy(&count, data + 16, 4);
    size_t at = 20;
    int n = 0;
    for (uint32_t i = 0; i < count && n < max && at + 16 <= len; i++, n++) {
        memcpy(w[n].tag, data + at, 4);
        w[n].tag[4] = 0;
        w[n].header = at;
        memcpy(&w[n].len, data + at + 4, 8);
        w[n].payload = at + 16;
        at = w[n].payload + w[n].len;
    }
    return n;
}

static const Where *section(const Where *w, int n, const char *tag)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].tag, tag)) return &w[i];
    fprintf(stderr, "no section %s\n", tag);
    exit(2);
}

/* Rewrites a section's CRC to match its (edited) payload: the damage is then invisible
 * to the checksum, and only the reader's own bounds checks stand between it and a
 * crash. */
static void fix_crc(unsigned char *data, const Where *s)
{
    uint32_t crc = crc32_bytes(data + s->payload, s->len);
    memcpy(data + s->header + 12, &crc, 4);
}

static char bad[160];   /* the damaged copy */

static void test_truncated(void)
{
    ModelFile mf;
    Error err;
    make_model_file(&mf, 1);
    if (modelfile_write(path, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    free_made(&mf);
    size_t len;
    unsigned char *good = slurp(path, &len);
    Where w[8];
    int n = sections_of(good, len, w, 8);
    CHECK(n == 7, "checkpoint has 7 sections");

    /* The named lengths first, each with its own message. */
    size_t named[24] = {0, 7, 8, 12, 19, 20, 27, len - 1};
    int n_named = 8;
    for (int i = 0; i < n; i++) {
        named[n_named++] = w[i].header + 8;            /* inside a section header */
        named[n_named++] = w[i].payload + w[i].len / 2; /* in the middle of its payload */
    }
    for (int i = 0; i < n_named; i++) {
        spit(bad, good, named[i]);
        char what[80];
        snprintf(what, sizeof what, "truncated to %zu of %zu bytes", named[i], len);
        expect_refused(bad, named[i] < 8 ? "bad magic" : "truncated", what);
    }

    /* Then every length. */
    int accepted = 0;
    for (size_t cut = 0; cut < len; cut++) {
        spit(bad, good, cut);
        if (!refused(bad, NULL, 0)) {
            if (accepted++ < 5) fprintf(stderr, "  truncation to %zu bytes not refused cleanly\n", cut);
        }
    }
    CHECK(accepted == 0, "every truncation 0 .. len-1 refused with the path in the message");

    /* Trailing garbage. */
    unsigned char *longer = malloc(len + 3);
    memcpy(longer, good, len);
    memcpy(longer + len, "xyz", 3);
    spit(bad, longer, len + 3);
    expect_refused(bad, "3 unexpected bytes", "trailing garbage");
    free(longer);
    free(good);
}

/* Flips bits of every byte in turn (mask 0: a different single bit at each offset);
 * each damaged file must be refused. */
static void flip_every_byte(const unsigned char *good, size_t len, unsigned mask, const char *what)
{
    unsigned char *copy = malloc(len);
    memcpy(copy, good, len);
    int accepted = 0;
    for (size_t at = 0; at < len; at++) {
        unsigned char m = mask ? (unsigned char)mask : (unsigned char)(1u << (at * 3 % 8));
        copy[at] ^= m;
        spit(bad, copy, len);
        copy[at] ^= m;
        if (!refused(bad, NULL, 0) && accepted++ < 5)
            fprintf(stderr, "  %s: byte %zu ^ 0x%02x not refused cleanly\n", what, at, m);
    }
    char label[120];
    snprintf(label, sizeof label, "%s: all %zu single-byte flips (%s) refused", what, len,
             mask ? "^0xff" : "one bit each");
    CHECK(accepted == 0, label);
    free(copy);
}

static void test_flipped(void)
{
    for (int with_adam = 0; with_adam <= 1; with_adam++) {
        ModelFile mf;
        Error err;
        make_model_file(&mf, with_adam);
        if (modelfile_write(path, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
        free_made(&mf);
        size_t len;
        unsigned char *good = slurp(path, &len);
        const char *what = with_adam ? "checkpoint" : "model";
        flip_every_byte(good, len, 0, what);
        if (!with_adam) flip_every_byte(good, len, 0xff, what);
        free(good);
    }
}

/* Hand-made damage to the header and to single fields, some behind a valid CRC. */
static void test_crafted(void)
{
    ModelFile mf;
    Error err;
    make_model_file(&mf, 1);
    if (modelfile_write(path, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    free_made(&mf);
    size_t len;
    unsigned char *good = slurp(path, &len), *d = malloc(len);
    Where w[8];
    int n = sections_of(good, len, w, 8);
    uint32_t u32;
    uint64_t u64;

    memcpy(d, good, len);
    memcpy(d, "NMTMODEM", 8);
    spit(bad, d, len);
    expect_refused(bad, "bad magic", "wrong magic");

    memcpy(d, good, len);
    u32 = 99;
    memcpy(d + 8, &u32, 4);
    spit(bad, d, len);
    expect_refused(bad, "version 99", "version 99");

    memcpy(d, good, len);
    u32 = 0x04030201u;
    memcpy(d + 12, &u32, 4);
    spit(bad, d, len);
    expect_refused(bad, "byte order", "byte-swapped endianness marker");

    memcpy(d, good, len);
    u32 = 0x01020305u;
    memcpy(d + 12, &u32, 4);
    spit(bad, d, len);
    expect_refused(bad, NULL, "garbled endianness marker");

    memcpy(d, good, len);
    u32 = 0xffffffffu;
    memcpy(d + 16, &u32, 4);
    spit(bad, d, len);
    expect_refused(bad, "sections", "section count 2^32-1");

    /* Each section's length set to 2^63 (and 2^64-1): must not be added to an offset
     * or allocated. */
    for (int i = 0; i < n; i++) {
        uint64_t huge[2] = {(uint64_t)1 << 63, ~(uint64_t)0};
        for (int k = 0; k < 2; k++) {
            memcpy(d, good, len);
            memcpy(d + w[i].header + 4, &huge[k], 8);
            spit(bad, d, len);
            char what[80];
            snprintf(what, sizeof what, "section %.4s length %s", w[i].tag, k ? "2^64-1" : "2^63");
            expect_refused(bad, "truncated", what);
        }
    }

    /* Vocabulary payloads edited with the CRC recomputed. */
    const Where *svoc = section(w, n, "SVOC"), *tvoc = section(w, n, "TVOC");
    uint32_t counts[] = {0xffffffffu, 0x7fffffffu, 0x40000000u, (uint32_t)(svoc->len / 4), 3};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        memcpy(d, good, len);
        memcpy(d + svoc->payload, &counts[k], 4);
        fix_crc(d, svoc);
        spit(bad, d, len);
        char what[80];
        snprintf(what, sizeof what, "SVOC word count %u behind a valid CRC", counts[k]);
        expect_refused(bad, "bad word count", what);
    }
    memcpy(d, good, len);
    u32 = 0xfffffff0u; /* the first word's byte length */
    memcpy(d + tvoc->payload + 4, &u32, 4);
    fix_crc(d, tvoc);
    spit(bad, d, len);
    expect_refused(bad, "runs past the section end", "TVOC word length 2^32-16 behind a valid CRC");

    memcpy(d, good, len);
    u32 = N_SRC - 1; /* one word fewer than the dimensions say */
    memcpy(d + svoc->payload, &u32, 4);
    fix_crc(d, svoc);
    spit(bad, d, len);
    expect_refused(bad, "section SVOC: 16 unexpected bytes after its last word",
                   "SVOC one word short behind a valid CRC (its last word left over)");

    /* SVOC without its last word ("पानी", 12 bytes + its length), consistently: the
     * count, the section length and the CRC agree, DIMS does not. */
    {
        size_t drop = 4 + strlen(src_words[N_SRC - 1]), end = svoc->payload + svoc->len;
        memcpy(d, good, len);
        memcpy(d + svoc->payload, &u32, 4);
        memmove(d + end - drop, d + end, len - end);
        u64 = svoc->len - drop;
        memcpy(d + svoc->header + 4, &u64, 8);
        Where short_v = *svoc;
        short_v.len = u64;
        fix_crc(d, &short_v);
        spit(bad, d, len - drop);
        expect_refused(bad, "section SVOC holds 7 words, section DIMS: field src_vocab says 8",
                       "SVOC without its last word, consistently");
    }

    /* "<unk>" (id 1) renamed to "<unl>": not a valid vocabulary. */
    memcpy(d, good, len);
    {
        size_t at = svoc->payload + 4;
        memcpy(&u32, d + at, 4);
        at += 4 + u32 + 4; /* past "<pad>" and the length of "<unk>" */
        d[at + 3] = 'l';
        fix_crc(d, svoc);
        spit(bad, d, len);
        expect_refused(bad, "SVOC", "SVOC with a bad special behind a valid CRC");
        d[at + 3] = 0; /* a NUL inside a word */
        fix_crc(d, svoc);
        spit(bad, d, len);
        expect_refused(bad, "NUL", "SVOC word with a NUL byte behind a valid CRC");
    }

    /* DIMS fields behind a valid CRC. */
    const Where *dims = section(w, n, "DIMS");
    struct { int field; int64_t value; const char *want, *what; } dim_cases[] = {
        {0, 0, "section DIMS: field src_vocab is 0, must be 4..100000000", "zero source vocabulary"},
        {2, -1, "section DIMS: field embed is -1, must be 1..8192", "negative embedding size"},
        {3, (int64_t)1 << 40, "field hidden is 1099511627776, must be 1..8192", "hidden size 2^40"},
        {3, 100000000, NULL, "hidden size 1e8 (needs more weights than the file holds)"},
        {4, 1, "attention", "DIMS attention kind disagrees with ARCH"},
        {4, 99, "attention", "unknown attention kind"},
        {9, 5, "weights", "parameter count disagrees"},
        {1, N_TGT + 1, NULL, "target vocabulary size disagrees with TVOC"},
    };
    for (size_t k = 0; k < sizeof dim_cases / sizeof dim_cases[0]; k++) {
        memcpy(d, good, len);
        memcpy(d + dims->payload + 8 * dim_cases[k].field, &dim_cases[k].value, 8);
        fix_crc(d, dims);
        spit(bad, d, len);
        expect_refused(bad, dim_cases[k].want, dim_cases[k].what);
    }

    /* ARCH fields behind a valid CRC: out of range, contradicting DIMS, or a valid
     * architecture that needs a different number of weights than WGTS holds. */
    const Where *arch = section(w, n, "ARCH");
    struct { int field; int64_t value; const char *want, *what; } arch_cases[] = {
        {0, 2, "cell", "unknown cell kind"},
        {1, 0, "layers", "0 layers"},
        {1, 9, "layers", "9 layers"},
        {1, -5, "section ARCH: field layers is -5, must be 1..8", "negative layers"},
        {3, 7, "attention", "attention kind 7"},
        {3, 2, "attention", "ARCH attention disagrees with DIMS"},
        {4, 1, "model.input_feed", "input feeding with Bahdanau"},
        {7, 1, "model.tie_embeddings", "tied embeddings with embed != hidden"},
        {2, 1, "weights", "bidirectional: more tensors than WGTS holds"},
        {0, 1, "weights", "LSTM weights in a GRU-sized file"},
        {1, 1000000, "field layers is 1000000", "a million layers"},
    };
    for (size_t k = 0; k < sizeof arch_cases / sizeof arch_cases[0]; k++) {
        memcpy(d, good, len);
        memcpy(d + arch->payload + 8 * arch_cases[k].field, &arch_cases[k].value, 8);
        fix_crc(d, arch);
        spit(bad, d, len);
        expect_refused(bad, arch_cases[k].want, arch_cases[k].what);
    }

    /* A CRC field itself damaged. */
    memcpy(d, good, len);
    d[section(w, n, "WGTS")->header + 12] ^= 0x40;
    spit(bad, d, len);
    expect_refused(bad, "checksum", "damaged CRC field of WGTS");

    /* A section tag damaged: the CRC covers only the payload, so the tag check must. */
    memcpy(d, good, len);
    d[section(w, n, "ADAM")->header] = 'B';
    spit(bad, d, len);
    expect_refused(bad, NULL, "ADAM tag damaged");

    /* ADAM cut short, with its length and CRC and the file size all consistent. */
    {
        const Where *adam = section(w, n, "ADAM");
        memcpy(d, good, len);
        u64 = adam->len - 4;
        memcpy(d + adam->header + 4, &u64, 8);
        Where short_adam = *adam;
        short_adam.len = u64;
        fix_crc(d, &short_adam);
        spit(bad, d, len - 4);
        expect_refused(bad, "ADAM", "ADAM 4 bytes short, consistently");
    }

    /* WGTS 4 bytes short, consistently: the parameter count no longer matches. */
    {
        const Where *wgts = section(w, n, "WGTS");
        size_t cut = wgts->payload + wgts->len - 4;
        memcpy(d, good, len);
        u64 = wgts->len - 4;
        memcpy(d + wgts->header + 4, &u64, 8);
        Where short_w = *wgts;
        short_w.len = u64;
        fix_crc(d, &short_w);
        memmove(d + cut, d + cut + 4, len - cut - 4);
        spit(bad, d, len - 4);
        expect_refused(bad, "weights", "WGTS 4 bytes short, consistently");
    }

    /* The CONF section dropped (count adjusted): a required section is missing. */
    {
        const Where *conf = section(w, n, "CONF");
        size_t cut = conf->payload + conf->len - conf->header;
        memcpy(d, good, len);
        memmove(d + conf->header, d + conf->header + cut, len - conf->header - cut);
        u32 = (uint32_t)n - 1;
        memcpy(d + 16, &u32, 4);
        spit(bad, d, len - cut);
        expect_refused(bad, "required section CONF is missing", "CONF section dropped");
    }

    /* The DIMS section twice (count adjusted): a second copy must not pass silently. */
    {
        size_t dl = dims->payload + dims->len - dims->header;
        unsigned char *two = malloc(len + dl);
        memcpy(two, good, dims->header);
        memcpy(two + dims->header, good + dims->header, dl);
        memcpy(two + dims->header + dl, good + dims->header, len - dims->header);
        u32 = (uint32_t)n + 1;
        memcpy(two + 16, &u32, 4);
        spit(bad, two, len + dl);
        expect_refused(bad, "DIMS", "DIMS section twice");
        free(two);
    }

    /* Not files at all. */
    expect_refused(dir, "not a regular file", "a directory");
    char missing[192];
    snprintf(missing, sizeof missing, "%s/no-such-model.bin", dir);
    expect_refused(missing, "No such file", "a missing path");
    spit(bad, "", 0);
    expect_refused(bad, "bad magic", "an empty file");

    free(d);
    free(good);
}

/* ---------------------------------------------------------------- field ranges */

/* What a field of a file says, after the reader has looked at it. */
static int read_message(const char *p, char *msg, size_t len)
{
    ModelFile mf;
    Error err;
    strcpy(err.msg, "");
    int rc = modelfile_read(p, &mf, &err);
    if (rc == 0) modelfile_free(&mf);
    snprintf(msg, len, "%s", err.msg);
    return rc;
}

/* A checkpoint with every section that has fixed fields: DIMS, ARCH, SUBW, ADAM. */
static void make_bpe_checkpoint(ModelFile *mf)
{
    make_model_file(mf, 1);
    mf->seg.kind = TOKENIZER_BPE;
    const char *codes = "#version: 0.2\ne s\n";
    Error err;
    if (bpe_from_text(&mf->seg.src, codes, strlen(codes), "src", &err) ||
        bpe_from_text(&mf->seg.tgt, codes, strlen(codes), "tgt", &err)) {
        fprintf(stderr, "bpe_from_text: %s\n", err.msg);
        exit(2);
    }
}

/* Each fixed field's range, as modelfile.h and the config promise (stated here
 * independently of modelfile.c's tables). Every value outside it, behind a valid CRC,
 * is refused with a message naming the section, the field, the value and the range;
 * the bounds themselves are not refused for their range. */
static const struct {
    const char *tag;
    int index;
    const char *name;
    int64_t min, max;
} field_ranges[] = {
    {"DIMS", 0, "src_vocab", 4, 100000000}, {"DIMS", 1, "tgt_vocab", 4, 100000000},
    {"DIMS", 2, "embed", 1, 8192},          {"DIMS", 3, "hidden", 1, 8192},
    {"DIMS", 4, "attention", 0, 5},         {"DIMS", 5, "lowercase", 0, 1},
    {"DIMS", 6, "nfkc", 0, 1},              {"DIMS", 7, "step", 0, 1000000000000000},
    {"DIMS", 8, "epoch", 0, 1000001},       {"DIMS", 9, "n_params", 1, 1000000000000000},
    {"ARCH", 0, "cell", 0, 1},              {"ARCH", 1, "layers", 1, 8},
    {"ARCH", 2, "bidirectional", 0, 1},     {"ARCH", 3, "attention", 0, 5},
    {"ARCH", 4, "input_feed", 0, 1},        {"ARCH", 5, "window", 0, 1000},
    {"ARCH", 6, "scaled", 0, 1},            {"ARCH", 7, "tie_embeddings", 0, 1},
    {"SUBW", 0, "kind", 1, TOKENIZER_KINDS - 1},              {"SUBW", 1, "joint", 0, 1},
    {"ADAM", 0, "step", 0, 1000000000000000},
};

static void test_field_ranges(void)
{
    ModelFile mf;
    Error err;
    make_bpe_checkpoint(&mf);
    if (modelfile_write(path, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    free_made(&mf);
    size_t len;
    unsigned char *good = slurp(path, &len), *d = malloc(len);
    Where w[10];
    int n = sections_of(good, len, w, 10);
    char msg[ERROR_LEN], want[200], label[200];
    for (size_t k = 0; k < sizeof field_ranges / sizeof field_ranges[0]; k++) {
        const Where *s = section(w, n, field_ranges[k].tag);
        int64_t lo = field_ranges[k].min, hi = field_ranges[k].max;
        /* Out of range, and for int fields values that an int would wrap into range. */
        int64_t outside[] = {lo - 1, hi + 1, INT64_MIN, INT64_MAX, ((int64_t)1 << 32) + lo, -((int64_t)1 << 32) + hi};
        size_t n_outside = hi < INT32_MAX ? 6 : 4;
        int refused_all = 1;
        for (size_t i = 0; i < n_outside; i++) {
            memcpy(d, good, len);
            memcpy(d + s->payload + 8 * field_ranges[k].index, &outside[i], 8);
            fix_crc(d, s);
            spit(bad, d, len);
            snprintf(want, sizeof want, "%s: section %s: field %s is %lld, must be %lld..%lld", bad,
                     field_ranges[k].tag, field_ranges[k].name, (long long)outside[i], (long long)lo, (long long)hi);
            /* (A kind above the range says more after this: subw_kind_known.) */
            if (read_message(bad, msg, sizeof msg) != -1 || strncmp(msg, want, strlen(want))) {
                fprintf(stderr, "  got \"%s\"\n  wanted \"%s\"\n", msg, want);
                refused_all = 0;
            }
        }
        snprintf(label, sizeof label, "%s %s outside %lld..%lld: refused, naming the field", field_ranges[k].tag,
                 field_ranges[k].name, (long long)lo, (long long)hi);
        CHECK(refused_all, label);
        /* The bounds: other rules may refuse them, the range does not. */
        int64_t inside[] = {lo, hi};
        int in_range = 1;
        for (size_t i = 0; i < 2; i++) {
            memcpy(d, good, len);
            memcpy(d + s->payload + 8 * field_ranges[k].index, &inside[i], 8);
            fix_crc(d, s);
            spit(bad, d, len);
            snprintf(want, sizeof want, "field %s is %lld, must be", field_ranges[k].name, (long long)inside[i]);
            if (read_message(bad, msg, sizeof msg) == -1 && strstr(msg, want)) {
                fprintf(stderr, "  %s\n", msg);
                in_range = 0;
            }
        }
        snprintf(label, sizeof label, "%s %s: %lld and %lld are in range", field_ranges[k].tag, field_ranges[k].name,
                 (long long)lo, (long long)hi);
        CHECK(in_range, label);
    }
    /* A few bounds that make a readable file as they are. */
    struct { const char *tag; int index; int64_t value; } fine[] = {
        {"DIMS", 7, 1000000000000000}, {"DIMS", 8, 1000001}, {"DIMS", 8, 0}, {"DIMS", 5, 1},
        {"ADAM", 0, 0}, {"ADAM", 0, 1000000000000000}, {"SUBW", 0, 2}, {"SUBW", 1, 1}, {"ARCH", 5, 1000},
    };
    for (size_t k = 0; k < sizeof fine / sizeof fine[0]; k++) {
        const Where *s = section(w, n, fine[k].tag);
        memcpy(d, good, len);
        memcpy(d + s->payload + 8 * fine[k].index, &fine[k].value, 8);
        fix_crc(d, s);
        spit(bad, d, len);
        int rc = read_message(bad, msg, sizeof msg);
        if (rc) fprintf(stderr, "  %s\n", msg);
        snprintf(label, sizeof label, "%s field %d = %lld reads", fine[k].tag, fine[k].index, (long long)fine[k].value);
        CHECK(rc == 0, label);
    }
    free(d);
    free(good);
}

/* ---------------------------------------------------------------- NaN and infinity */

/* Weights or Adam moments that are NaN or infinite, in a file whose checksums hold
 * (modelfile_write does not look at the values): refused, naming the section, the
 * first bad index, its tensor, row and column, and how many there are. The make_model_file
 * model's tensors: src_emb (8, 3) first, out_b (7) last. */
static void test_nonfinite(void)
{
    float nan = 0.0f / 0.0f, inf = 1.0f / 0.0f;
    uint32_t nan_payload_bits = 0x7fc12345u;  /* a NaN with a payload, and a negative one */
    float nan_payload, negative_nan = -nan;
    memcpy(&nan_payload, &nan_payload_bits, 4);
    struct {
        int where;        /* 0 WGTS, 1 ADAM m, 2 ADAM v */
        long at[3];       /* set at[0..n-1] */
        int n;
        float value;
        const char *want;
    } cases[] = {
        {0, {10}, 1, nan_payload, "section WGTS: weight 10 (tensor src_emb, row 3, column 1) is NaN; 1 of the "},
        {0, {13, 11, 70}, 3, inf, "section WGTS: weight 11 (tensor src_emb, row 3, column 2) is +inf; 3 of the "},
        {0, {-1}, 1, -inf, "(tensor out_b, row 6, column 0) is -inf; 1 of the "},
        {0, {0}, 1, negative_nan, "section WGTS: weight 0 (tensor src_emb, row 0, column 0) is NaN"},
        {1, {5}, 1, nan, "section ADAM: Adam's first moment m of weight 5 (tensor src_emb, row 1, column 2) is NaN; "
                         "1 of the "},
        {2, {-1}, 1, inf, "section ADAM: Adam's second moment v of weight"},
    };
    char label[200];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ModelFile mf;
        Error err;
        make_model_file(&mf, 1);
        long n = mf.model.n_params;
        float *x = cases[k].where == 0 ? mf.model.param_mem : cases[k].where == 1 ? mf.opt.m : mf.opt.v;
        for (int i = 0; i < cases[k].n; i++)
            x[cases[k].at[i] < 0 ? n - 1 : cases[k].at[i]] = cases[k].value;
        int rc = modelfile_write(path, &mf, &err);
        free_made(&mf);
        snprintf(label, sizeof label, "written with valid checksums: %s", cases[k].want);
        CHECK(rc == 0, label);
        snprintf(label, sizeof label, "refused, naming the section, index and tensor: %s", cases[k].want);
        expect_refused(path, cases[k].want, label);
    }
    /* The count and the rest of the message. */
    ModelFile mf;
    Error err;
    make_model_file(&mf, 0);
    long n = mf.model.n_params;
    for (long i = 0; i < n; i++)
        mf.model.param_mem[i] = nan;
    CHECK(modelfile_write(path, &mf, &err) == 0, "a model of NaN weights written");
    free_made(&mf);
    char msg[ERROR_LEN], want[ERROR_LEN];
    CHECK(read_message(path, msg, sizeof msg) == -1, "a model of NaN weights refused");
    snprintf(want, sizeof want, "%s: section WGTS: weight 0 (tensor src_emb, row 0, column 0) is NaN; %ld of the %ld "
                                "weights are not finite. The checksums hold", path, n, n);
    CHECK(!strncmp(msg, want, strlen(want)), "... saying which weight, how many, and that the checksums hold");
    if (strncmp(msg, want, strlen(want))) fprintf(stderr, "  got \"%s\"\n  wanted \"%s...\"\n", msg, want);
    /* The largest finite values are weights like any other. */
    make_model_file(&mf, 1);
    mf.model.param_mem[0] = 3.4028235e38f;
    mf.opt.m[0] = -3.4028235e38f;
    mf.opt.v[1] = 1e-45f;
    ModelFile back;
    int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "FLT_MAX, -FLT_MAX and the smallest subnormal read back");
    if (rc == 0) check_same(&mf, &back, "largest finite values");
    if (rc == 0) modelfile_free(&back);
    free_made(&mf);
}

/* modelfile_write refuses what modelfile_read would refuse, naming the field, and
 * leaves no file behind. */
static void test_write_refuses_out_of_range(void)
{
    char p[200], tmp[210];
    snprintf(p, sizeof p, "%s/refused.bin", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    for (int k = 0; k < 5; k++) {
        ModelFile mf;
        Error err;
        make_bpe_checkpoint(&mf);
        const char *want = NULL;
        switch (k) {
        case 0: mf.text.lowercase = 2; want = "not written: section DIMS: field lowercase is 2, must be 0..1"; break;
        case 1: mf.epoch = -1; want = "not written: section DIMS: field epoch is -1, must be 0..1000001"; break;
        case 2: mf.model.dims.layers = 9; want = "not written: section ARCH: field layers is 9, must be 1..8"; break;
        case 3: mf.seg.kind = (TokenizerKind)7; want = "not written: section SUBW: field kind is 7, must be 1.."; break;
        case 4: mf.opt.step = -3; want = "not written: section ADAM: field step is -3, must be 0..1000000000000000"; break;
        }
        strcpy(err.msg, "");
        int rc = modelfile_write(p, &mf, &err);
        CHECK(rc == -1 && strstr(err.msg, p) && strstr(err.msg, want), want);
        if (rc == 0 || !strstr(err.msg, want)) fprintf(stderr, "  rc %d, \"%s\"\n", rc, err.msg);
        CHECK(!exists(p) && !exists(tmp), "... and nothing is left behind");
        if (k == 3) mf.seg.kind = TOKENIZER_BPE;  /* for segmenter_free */
        free_made(&mf);
    }
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

/* A model with subword units: the SUBW section carries the tokenizer and both sides'
 * merges; it reads back exactly, and any damage to it is refused. */
static void test_subword_section(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    mf.seg.kind = TOKENIZER_BPE;
    const char *src_codes = "#version: 0.2\ne s\nes t</w>\nl o\nघ र</w>\n", *tgt_codes = "#version: 0.2\nc a\nca f\n";
    int ok = bpe_from_text(&mf.seg.src, src_codes, strlen(src_codes), "src", &err) == 0 &&
             bpe_from_text(&mf.seg.tgt, tgt_codes, strlen(tgt_codes), "tgt", &err) == 0;
    if (!ok) { fprintf(stderr, "bpe_from_text: %s\n", err.msg); exit(2); }
    int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a bpe model");
    if (rc == 0) {
        check_same(&mf, &back, "bpe model");
        char *a = bpe_to_text(&back.seg.src), *b = bpe_to_text(&back.seg.tgt);
        CHECK(back.seg.kind == TOKENIZER_BPE && back.seg.joint == 0, "bpe model: tokenizer kind and joint flag");
        CHECK(back.seg.src.n == 4 && back.seg.tgt.n == 2 && !strcmp(a, src_codes) && !strcmp(b, tgt_codes),
              "bpe model: both sides' merges, in order");
        free(a);
        free(b);
        modelfile_free(&back);
    }
    size_t len;
    unsigned char *good = slurp(path, &len);
    flip_every_byte(good, len, 0, "bpe model");

    /* Damage behind a valid CRC: a word kind in SUBW, a broken merge line. */
    Where w[10];
    int n = sections_of(good, len, w, 10);
    const Where *subw = section(w, n, "SUBW");
    CHECK(subw != NULL, "bpe model: has a SUBW section");
    if (subw) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        int64_t kind = TOKENIZER_WORD;
        memcpy(d + subw->payload, &kind, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: field kind is 0, must be 1..", "SUBW with the word kind");
        kind = 99;
        memcpy(d + subw->payload, &kind, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: field kind is 99, must be 1..", "SUBW with a kind past the last one known");
        expect_refused(bad, "a tokenizer of a newer nmt, or a damaged file", "... said to be a newer nmt's tokenizer");
        memcpy(d, good, len);
        unsigned char *space = memchr(d + subw->payload + 24 + 14, ' ', 8);  /* in "e s", the first merge */
        if (space) *space = 'x';
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "source merges:2: expected two symbols", "SUBW with a merge that is not two symbols");
        free(d);
    }
    free(good);
    mf.seg.kind = TOKENIZER_CHAR;
    bpe_free(&mf.seg.src);
    bpe_free(&mf.seg.tgt);
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0 && back.seg.kind == TOKENIZER_CHAR && back.seg.src.n == 0, "write/read a char model");
    if (rc == 0) modelfile_free(&back);
    free_made(&mf);
}

/* Tokenizer spm: SUBW holds both sides' SentencePiece models as .model files hold
 * them; each is loaded when the file is read, so a damaged one is refused there,
 * naming its side. */
static void test_sentencepiece_section(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    mf.seg.kind = TOKENIZER_SPM;
    mf.text.whitespace_only = 1;
    char *lines[60];
    for (int i = 0; i < 60; i++) {
        char line[64];
        snprintf(line, sizeof line, "the %s sat on the %s", i % 3 ? "cat" : "dog", i % 5 ? "mat" : "log");
        lines[i] = strdup(line);
    }
    int rc = segmenter_learn_spm(&mf.seg.spm_src, (const char *const *)lines, 60, "bpe", 30, NULL, &err) ||
             segmenter_learn_spm(&mf.seg.spm_tgt, (const char *const *)lines, 30, "unigram", 25, NULL, &err);
    for (int i = 0; i < 60; i++)
        free(lines[i]);
    if (rc) { fprintf(stderr, "segmenter_learn_spm: %s\n", err.msg); exit(2); }
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a model of tokenizer spm");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    if (rc == 0) {
        check_same(&mf, &back, "tokenizer spm");
        CHECK(back.seg.kind == TOKENIZER_SPM && back.text.whitespace_only && back.seg.spm_src.spm && back.seg.spm_tgt.spm,
              "tokenizer spm: the kind, text split at whitespace only, both models loaded");
        CHECK(back.seg.spm_src.n == mf.seg.spm_src.n && !memcmp(back.seg.spm_src.proto, mf.seg.spm_src.proto, mf.seg.spm_src.n) &&
                  back.seg.spm_tgt.n == mf.seg.spm_tgt.n &&
                  !memcmp(back.seg.spm_tgt.proto, mf.seg.spm_tgt.proto, mf.seg.spm_tgt.n),
              "tokenizer spm: both models' bytes as written");
        CHECK(!strcmp(segmenter_spm_type(&back.seg.spm_src), "bpe") && !strcmp(segmenter_spm_type(&back.seg.spm_tgt), "unigram"),
              "tokenizer spm: each side's model type");
        char msg[200];
        CHECK(modelfile_compatible(&mf, &back, 1, msg, sizeof msg) == 0, "tokenizer spm: compatible with itself");
        SpmModel other = back.seg.spm_tgt;
        back.seg.spm_tgt = back.seg.spm_src;
        CHECK(modelfile_compatible(&mf, &back, 0, msg, sizeof msg) == 1 && !strcmp(msg, "their SentencePiece models differ"),
              "tokenizer spm: other SentencePiece models are not compatible");
        back.seg.spm_tgt = other;
        modelfile_free(&back);
    }
    size_t len;
    unsigned char *good = slurp(path, &len);
    Where w[10];
    int n = sections_of(good, len, w, 10);
    const Where *subw = section(w, n, "SUBW");
    CHECK(subw != NULL && subw->len == 16 + 8 + mf.seg.spm_src.n + 8 + mf.seg.spm_tgt.n,
          "tokenizer spm: SUBW is kind, joint and the two models with their lengths");
    if (subw) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        memset(d + subw->payload + 24, 0xFF, 8);  /* the source model's first bytes */
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: source SentencePiece model: not a SentencePiece model (",
                       "tokenizer spm: a damaged source model is refused, naming it");
        memcpy(d, good, len);
        uint64_t huge = (uint64_t)1 << 40;
        memcpy(d + subw->payload + 16, &huge, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: SentencePiece models run past the section end",
                       "tokenizer spm: a model length past the section's end");
        free(d);
    }
    free(good);
    free_made(&mf);
}

/* Tokenizer none (text segmented elsewhere): SUBW holds its head and the subword
 * format, no merges; the reader splits text at whitespace only, which the file does
 * not store but the kind implies, so a writer that says otherwise is refused. */
static void test_tokenizer_none(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    mf.seg.kind = TOKENIZER_NONE;
    mf.seg.format = SUBWORD_FORMAT_BPE_AT;
    int rc = modelfile_write(path, &mf, &err);
    CHECK(rc == -1 && strstr(err.msg, "not written: text split at whitespace and punctuation, but tokenizer none"),
          "tokenizer none with text options that split at punctuation: not written");
    mf.text.whitespace_only = 1;
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a model of tokenizer none");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    if (rc == 0) {
        check_same(&mf, &back, "tokenizer none");
        CHECK(back.seg.kind == TOKENIZER_NONE && back.seg.format == SUBWORD_FORMAT_BPE_AT && back.text.whitespace_only,
              "tokenizer none: kind, subword format, and text split at whitespace only");
        char msg[200];
        CHECK(modelfile_compatible(&mf, &back, 1, msg, sizeof msg) == 0, "tokenizer none: compatible with itself");
        back.seg.format = SUBWORD_FORMAT_SPM;
        CHECK(modelfile_compatible(&mf, &back, 0, msg, sizeof msg) == 1 && !strcmp(msg, "format: 1 and 2"),
              "tokenizer none: another subword format is not compatible, named");
        modelfile_free(&back);
    }
    size_t len;
    unsigned char *good = slurp(path, &len);
    Where w[10];
    int n = sections_of(good, len, w, 10);
    const Where *subw = section(w, n, "SUBW");
    CHECK(subw != NULL && subw->len == 24, "tokenizer none: SUBW is kind, joint and format (24 bytes)");
    if (subw && subw->len == 24) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        int64_t format = 3;
        memcpy(d + subw->payload + 16, &format, 8);
        fix_crc(d, subw);
        spit(bad, d, len);
        expect_refused(bad, "section SUBW: field format is 3, must be 0..2", "tokenizer none: a format out of range");
        free(d);
    }
    flip_every_byte(good, len, 0, "tokenizer none");
    free(good);
    free_made(&mf);
}

/* Protected symbols (data.user_symbols) travel in USYM, as given, and come back
 * normalised with the file's text options, text and segmenter pointing at them; a file
 * without symbols has no USYM (as every file before them) and reads with none; damage
 * behind a valid CRC is refused naming the section. */
static void test_symbols_section(void)
{
    ModelFile mf, back;
    Error err = {""};
    make_model_file(&mf, 0);
    int rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0 && back.symbols.n == 0 && back.text.symbols == NULL && back.seg.symbols == NULL,
          "a file without symbols reads with none");
    size_t len;
    unsigned char *plain = slurp(path, &len);
    Where w[12];
    int n = sections_of(plain, len, w, 12), has_usym = 0;
    for (int i = 0; i < n; i++)
        has_usym |= !strcmp(w[i].tag, "USYM");
    CHECK(n > 0 && !has_usym, "a file without symbols has no USYM section (as files before them)");
    free(plain);
    if (rc == 0) modelfile_free(&back);

    char *given[] = {"<2da>", "{NAME}", "<2dB>"};
    mf.text.lowercase = 1;
    rc = modelfile_set_symbols(&mf, given, 3, &err);
    CHECK(rc == 0 && mf.text.symbols == &mf.symbols && mf.seg.symbols == &mf.symbols, "symbols set and pointed at");
    rc = modelfile_write(path, &mf, &err) || modelfile_read(path, &back, &err);
    CHECK(rc == 0, "write/read a model with symbols");
    if (rc) fprintf(stderr, "     %s\n", err.msg);
    if (rc == 0) {
        check_same(&mf, &back, "model with symbols");
        CHECK(back.symbols.n == 3 && !strcmp(back.symbols.given[0], "<2da>") &&
                  !strcmp(back.symbols.given[1], "{NAME}") && !strcmp(back.symbols.given[2], "<2dB>"),
              "symbols read back as given, in order");
        CHECK(!strcmp(back.symbols.norm[1], "{name}"), "... and normalised with the file's text options (lowercase)");
        CHECK(back.text.symbols == &back.symbols && back.seg.symbols == &back.symbols,
              "the text options and the segmenter of the file read point at its symbols");
        TokenList t;
        rc = text_tokenize("<2DA>Hi {Name}!", 15, &back.text, &t, &err);
        CHECK(rc == 0 && t.n == 4 && !strcmp(t.tokens[0], "<2da>") && !strcmp(t.tokens[2], "{name}"),
              "the file's text options keep its symbols whole");
        token_list_free(&t);
        char msg[200];
        ModelFile other;
        make_model_file(&other, 0);
        other.text.lowercase = 1;
        CHECK(modelfile_compatible(&back, &other, 1, msg, sizeof msg) && strstr(msg, "protected symbols"),
              "a model without the symbols is not compatible: what differs is named");
        free_made(&other);
        modelfile_free(&back);
    }
    unsigned char *good = slurp(path, &len);
    flip_every_byte(good, len, 0, "model with symbols");
    n = sections_of(good, len, w, 12);
    const Where *usym = section(w, n, "USYM");
    CHECK(usym != NULL && usym->len == 4 + 3 * 4 + 5 + 6 + 5, "USYM: count, then length and bytes per symbol");
    if (usym) {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        d[usym->payload + 8 + 2] = ' ';  /* "<2 a>" */
        fix_crc(d, usym);
        spit(bad, d, len);
        expect_refused(bad, "section USYM: symbol 1: \"<2 a>\" holds whitespace", "USYM with a symbol nmt would refuse");
        memcpy(d, good, len);
        uint32_t many = 1u << 30;
        memcpy(d + usym->payload, &many, 4);
        fix_crc(d, usym);
        spit(bad, d, len);
        expect_refused(bad, "section USYM: bad symbol count", "USYM with a count past its bytes");
        memcpy(d, good, len);
        memcpy(d + usym->payload + 4 + (4 + 5) + (4 + 6) + 4, "<2da>", 5);  /* symbol 3 spells symbol 1 */
        fix_crc(d, usym);
        spit(bad, d, len);
        expect_refused(bad, "section USYM: symbol 3: \"<2da>\" is given twice", "USYM with a symbol twice");
        free(d);
    }
    free(good);
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

int main(void)
{
    limit_memory();
    test_crc32();
    strcpy(dir, "/tmp/nmt_test_modelfile_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    snprintf(path, sizeof path, "%s/model.bin", dir);
    snprintf(bad, sizeof bad, "%s/damaged.bin", dir);

    test_round_trip();
    test_without_arch();
    test_truncated();
    test_flipped();
    test_crafted();
    test_field_ranges();
    test_write_refuses_out_of_range();
    test_nonfinite();
    test_subword_section();
    test_tokenizer_none();
    test_sentencepiece_section();
    test_train_state();
    test_atomic_write();
    test_symbols_section();

    unlink(path);
    unlink(bad);
    rmdir(dir);
    return check_report("test_modelfile");
}
