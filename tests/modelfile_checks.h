/* modelfile_checks.h — what the tests of the model file format share (test_modelfile.c,
 * test_modelfile_damage.c, test_modelfile_tokenizers.c): a small model file to write and
 * read back, the comparison of two, where a file's sections sit, and the check that a
 * damaged copy is refused cleanly; a private directory for what a test writes, and a
 * limit on allocations so that a reader trusting a damaged length fails the test.
 *
 *   modelfile_checks_begin("test_modelfile")   limits memory, makes the directory: dir,
 *                                              path (the file under test), bad (damaged)
 *   modelfile_checks_end()                     removes them
 *   make_model_file(&mf, with_adam)            the sample model (8 source, 7 target words)
 *   check_same(a, b, what)                     CHECKs that b read back as a was written
 *   refused(p, want, loud) / expect_refused(p, want, what)
 *                                              modelfile_read(p) fails cleanly, naming p
 *   sections_of, section, fix_crc              a file's sections, parsed independently
 *   flip_every_byte(good, len, mask, what)     every single-byte damage refused
 *   read_message(p, msg, len)                  what the reader says of p
 */
#ifndef MODELFILE_CHECKS_H
#define MODELFILE_CHECKS_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static inline void limit_memory(void)
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
static char bad[160];         /* the damaged copy */

static inline int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* ---------------------------------------------------------------- a small model file */

static const char *src_words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "नमस्ते", "घर", "the", "पानी"};
static const char *tgt_words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "hello", "café", "house"};
#define N_SRC (int)(sizeof src_words / sizeof src_words[0])
#define N_TGT (int)(sizeof tgt_words / sizeof tgt_words[0])

static inline void make_model_file(ModelFile *mf, int with_adam)
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
static inline void free_made(ModelFile *mf) { modelfile_free(mf); }

static inline int same_vocab(const Vocab *a, const Vocab *b)
{
    if (a->size != b->size) return 0;
    for (int i = 0; i < a->size; i++)
        if (strcmp(a->words[i], b->words[i]) || vocab_lookup(b, a->words[i]) != i) return 0;
    return 1;
}

static inline void check_same(const ModelFile *a, const ModelFile *b, const char *what)
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

/* ---------------------------------------------------------------- damaged copies */

/* modelfile_read(p) must fail, leave *mf empty, and say what is wrong (containing
 * `want` if given) in a message that names p. Returns 1 if so; quiet unless asked. */
static inline int refused(const char *p, const char *want, int loud)
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

static inline void expect_refused(const char *p, const char *want, const char *what)
{
    CHECK(refused(p, want, 1), what);
}

/* Where each section of a well-formed file sits (parsed here independently). */
typedef struct {
    char tag[5];
    size_t header, payload;  /* offsets of the tag and of the payload */
    uint64_t len;
} Where;

static inline int sections_of(const unsigned char *data, size_t len, Where *w, int max)
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

static inline const Where *section(const Where *w, int n, const char *tag)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(w[i].tag, tag)) return &w[i];
    fprintf(stderr, "no section %s\n", tag);
    exit(2);
}

/* Rewrites a section's CRC to match its (edited) payload: the damage is then invisible
 * to the checksum, and only the reader's own bounds checks stand between it and a
 * crash. */
static inline void fix_crc(unsigned char *data, const Where *s)
{
    uint32_t crc = crc32_bytes(data + s->payload, s->len);
    memcpy(data + s->header + 12, &crc, 4);
}

/* Flips bits of every byte in turn (mask 0: a different single bit at each offset);
 * each damaged file must be refused. */
static inline void flip_every_byte(const unsigned char *good, size_t len, unsigned mask, const char *what)
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

/* What a field of a file says, after the reader has looked at it. */
static inline int read_message(const char *p, char *msg, size_t len)
{
    ModelFile mf;
    Error err;
    strcpy(err.msg, "");
    int rc = modelfile_read(p, &mf, &err);
    if (rc == 0) modelfile_free(&mf);
    snprintf(msg, len, "%s", err.msg);
    return rc;
}

/* Limits memory and makes the test's private directory, /tmp/NAME_XXXXXX, with path and
 * bad in it; exits the test if it cannot. */
static inline void modelfile_checks_begin(const char *name)
{
    limit_memory();
    snprintf(dir, sizeof dir, "/tmp/%s_XXXXXX", name);
    if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
    snprintf(path, sizeof path, "%s/model.bin", dir);
    snprintf(bad, sizeof bad, "%s/damaged.bin", dir);
}

/* Removes path, bad and the directory (each test removes whatever else it wrote). */
static inline void modelfile_checks_end(void)
{
    unlink(path);
    unlink(bad);
    rmdir(dir);
}
#endif
