/* fuzz_modelfile.c — libFuzzer target: modelfile_read on arbitrary bytes (src/files/modelfile.c).
 *
 * modelfile_read takes a path, so the bytes go into an in-memory file (memfd) read
 * through /proc/self/fd/N: no disk traffic, and src/ needs no buffer-reading variant.
 *
 * Almost every random mutation breaks a CRC-32, and the reader stops there. So that
 * the fuzzer also reaches the code behind the checksums (vocabularies, dimensions,
 * ARCH, the weights' size), each input is read twice: as given, and — when that
 * differs — with every section's CRC recomputed over its (possibly damaged) payload,
 * found by walking the section headers the way modelfile.h lays them out.
 *
 * Promises checked (modelfile.h):
 *   - a refusal is -1 with a message naming the file, and leaves the ModelFile empty;
 *   - nothing allocates much more than the file's size (scripts/ci/fuzz.sh runs this target
 *     with -malloc_limit_mb, so a corrupt length that is trusted is a crash);
 *   - an accepted file is consistent: valid dimensions (dims_problem) within the
 *     field tables' ranges, the parameter count those dimensions need, vocabularies of the sizes DIMS gives that start with
 *     the four specials and look every word up at its own id, Adam state of the
 *     model's size;
 *   - an accepted file writes out, reads back equal, and writes out again byte for byte
 *     the same (modelfile_write is deterministic).
 *
 * Built and run by `make fuzz` (scripts/ci/fuzz.sh) with tests/fuzz/modelfile.dict; seeds
 * in tests/fuzz/corpus/modelfile/ (made by tests/fuzz/seed_modelfile.c).
 */
#define _GNU_SOURCE /* memfd_create */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"      // defines: FUZZ_ASSERT
#include "files/modelfile.h" // defines: ModelFile, modelfile_read, modelfile_write, modelfile_free, crc32_bytes

static int memfd = -1;
static char memfd_path[64];
static char out_dir[128], out_a[192], out_b[192];

static void remove_out_dir(void)
{
    char tmp[208];
    unlink(out_a);
    unlink(out_b);
    snprintf(tmp, sizeof tmp, "%s.tmp", out_a);
    unlink(tmp);
    snprintf(tmp, sizeof tmp, "%s.tmp", out_b);
    unlink(tmp);
    rmdir(out_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    memfd = memfd_create("nmt-fuzz-model", 0);
    if (memfd < 0) { perror("memfd_create"); exit(1); }
    snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
    /* Round trips write real files (modelfile_write renames PATH.tmp over PATH).
     * scripts/ci/fuzz.sh names a directory in RAM that it removes however the run ends
     * (NMT_FUZZ_TMPDIR). Run by hand, the target makes its own, in /dev/shm when it
     * can, and removes it at a normal exit; after a crash libFuzzer exits at once,
     * and the directory stays. */
    const char *given = getenv("NMT_FUZZ_TMPDIR");
    if (given && strlen(given) < sizeof out_dir) {
        snprintf(out_dir, sizeof out_dir, "%s", given);
    } else {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(out_dir, sizeof out_dir, "%s/nmt-fuzz-XXXXXX", base);
        if (!mkdtemp(out_dir)) { perror(out_dir); exit(1); }
        atexit(remove_out_dir);
    }
    snprintf(out_a, sizeof out_a, "%s/a.bin", out_dir);
    snprintf(out_b, sizeof out_b, "%s/b.bin", out_dir);
    return 0;
}

static void put_file(const uint8_t *data, size_t size)
{
    FUZZ_ASSERT(ftruncate(memfd, 0) == 0, "ftruncate memfd");
    FUZZ_ASSERT(size == 0 || pwrite(memfd, data, size, 0) == (ssize_t)size, "pwrite memfd");
}

/* Recomputes each section's CRC over its payload, for as many sections as the header
 * announces (at most 16; the reader refuses more than its 9 kinds) and the bytes hold.
 * 1 if anything changed. */
static int repair_crcs(uint8_t *d, size_t size)
{
    if (size < 20) return 0;
    uint32_t count;
    memcpy(&count, d + 16, 4);
    int changed = 0;
    size_t at = 20;
    for (uint32_t i = 0; i < count && i < 16 && size - at >= 16; i++) {
        uint64_t len;
        memcpy(&len, d + at + 4, 8);
        if (len > size - at - 16) break;
        uint32_t crc = crc32_bytes(d + at + 16, (size_t)len), old;
        memcpy(&old, d + at + 12, 4);
        if (crc != old) {
            memcpy(d + at + 12, &crc, 4);
            changed = 1;
        }
        at += 16 + (size_t)len;
    }
    return changed;
}

static int is_empty(const ModelFile *mf)
{
    return !mf->model.param_mem && !mf->model.grad_mem && !mf->src_vocab.words && !mf->tgt_vocab.words &&
           !mf->src_vocab.index.slots && !mf->tgt_vocab.index.slots && !mf->config_json && !mf->opt.m && !mf->opt.v &&
           !mf->has_optimizer;
}

static void check_vocab(const Vocab *v, int size)
{
    static const char *const specials[VOCAB_SPECIALS] = {"<pad>", "<unk>", "<sos>", "<eos>"};
    FUZZ_ASSERT(v->size == size && size >= VOCAB_SPECIALS && v->words, "vocabulary of the size DIMS gives");
    for (int i = 0; i < v->size; i++) {
        FUZZ_ASSERT(v->words[i] && v->words[i][0], "no empty vocabulary word");
        FUZZ_ASSERT(i >= VOCAB_SPECIALS || !strcmp(v->words[i], specials[i]), "ids 0..3 are the specials");
        FUZZ_ASSERT(vocab_lookup(v, v->words[i]) == i, "every word looks up to its own id");
    }
}

static void check_consistent(const ModelFile *mf)
{
    const Model *m = &mf->model;
    FUZZ_ASSERT(dims_problem(&m->dims) == NULL, "accepted dimensions are valid");
    FUZZ_ASSERT(m->dims.layers >= 1 && m->dims.layers <= MAX_LAYERS, "1 to 8 layers");
    FUZZ_ASSERT(m->n_params > 0 && m->n_params == params_count(&m->dims), "the parameter count the dimensions need");
    FUZZ_ASSERT(m->param_mem && m->grad_mem, "weights allocated");
    FUZZ_ASSERT(!m->dims.tie_embeddings || m->params.out_w == m->params.tgt_emb, "a tied output layer is tgt_emb");
    check_vocab(&mf->src_vocab, m->dims.src_vocab);
    check_vocab(&mf->tgt_vocab, m->dims.tgt_vocab);
    FUZZ_ASSERT(mf->config_json != NULL, "the config text is there");
    FUZZ_ASSERT((mf->text.lowercase == 0 || mf->text.lowercase == 1) && (mf->text.nfkc == 0 || mf->text.nfkc == 1),
                "text options are flags");
    FUZZ_ASSERT(mf->has_optimizer == 0 || mf->has_optimizer == 1, "has_optimizer is a flag");
    FUZZ_ASSERT(mf->step >= 0 && mf->epoch >= 0 && (!mf->has_optimizer || mf->opt.step >= 0),
                "step, epoch and Adam's step are not negative");
    FUZZ_ASSERT(m->dims.embed <= 8192 && m->dims.hidden <= 8192, "widths within model.embed/hidden's range");
    FUZZ_ASSERT(mf->seg.kind >= TOKENIZER_WORD && mf->seg.kind < TOKENIZER_KINDS && (mf->seg.joint & ~1) == 0,
                "a known tokenizer kind and a joint flag");
    FUZZ_ASSERT(mf->seg.format >= 0 && mf->seg.format < SUBWORD_FORMATS &&
                    (mf->seg.kind == TOKENIZER_NONE || mf->seg.format == SUBWORD_FORMAT_NONE),
                "a subword format, and only under tokenizer none");
    FUZZ_ASSERT(mf->text.whitespace_only == (mf->seg.kind == TOKENIZER_NONE || mf->seg.kind == TOKENIZER_SPM),
                "text split at whitespace only exactly under tokenizers none and spm");
    FUZZ_ASSERT(mf->seg.kind != TOKENIZER_SPM || (mf->seg.spm_src.spm && mf->seg.spm_tgt.spm),
                "under spm both SentencePiece models are loaded");
    if (mf->has_optimizer)
        FUZZ_ASSERT(mf->opt.n == m->n_params && mf->opt.m && mf->opt.v, "Adam state of the model's size");
}

static int same_vocab(const Vocab *a, const Vocab *b)
{
    if (a->size != b->size) return 0;
    for (int i = 0; i < a->size; i++)
        if (strcmp(a->words[i], b->words[i])) return 0;
    return 1;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    FUZZ_ASSERT(f != NULL, "the written file opens");
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc(*len ? *len : 1);
    FUZZ_ASSERT(fread(d, 1, *len, f) == *len, "the written file reads");
    fclose(f);
    return d;
}

/* Write, read back, compare; write again, compare bytes. */
static void check_round_trip(const ModelFile *mf)
{
    Error err = {{0}};
    ModelFile back;
    FUZZ_ASSERT(modelfile_write(out_a, mf, &err) == 0, "an accepted file writes out");
    int rc = modelfile_read(out_a, &back, &err);
    if (rc) fprintf(stderr, "fuzz: %s\n", err.msg);
    FUZZ_ASSERT(rc == 0, "what was written reads back");
    check_consistent(&back);
    const Model *a = &mf->model, *b = &back.model;
    FUZZ_ASSERT(!memcmp(&a->dims, &b->dims, sizeof a->dims) && a->n_params == b->n_params, "same dimensions");
    FUZZ_ASSERT(!memcmp(a->param_mem, b->param_mem, sizeof(float) * (size_t)a->n_params), "same weights, bit for bit");
    FUZZ_ASSERT(same_vocab(&mf->src_vocab, &back.src_vocab) && same_vocab(&mf->tgt_vocab, &back.tgt_vocab),
                "same vocabularies");
    FUZZ_ASSERT(mf->text.lowercase == back.text.lowercase && mf->text.nfkc == back.text.nfkc, "same text options");
    FUZZ_ASSERT(mf->step == back.step && mf->epoch == back.epoch, "same step and epoch");
    FUZZ_ASSERT(!strcmp(mf->config_json, back.config_json), "same config text");
    FUZZ_ASSERT(mf->has_optimizer == back.has_optimizer, "same has_optimizer");
    if (mf->has_optimizer) {
        size_t bytes = sizeof(float) * (size_t)a->n_params;
        FUZZ_ASSERT(mf->opt.step == back.opt.step && !memcmp(mf->opt.m, back.opt.m, bytes) &&
                    !memcmp(mf->opt.v, back.opt.v, bytes), "same Adam state");
    }
    FUZZ_ASSERT(modelfile_write(out_b, &back, &err) == 0, "the read-back file writes out");
    size_t la, lb;
    unsigned char *da = slurp(out_a, &la), *db = slurp(out_b, &lb);
    FUZZ_ASSERT(la == lb && !memcmp(da, db, la), "writing is deterministic: the same bytes twice");
    free(da);
    free(db);
    modelfile_free(&back);
}

static void read_once(const uint8_t *data, size_t size)
{
    put_file(data, size);
    ModelFile mf;
    Error err = {{0}};
    int rc = modelfile_read(memfd_path, &mf, &err);
    FUZZ_ASSERT(rc == 0 || rc == -1, "modelfile_read returns 0 or -1");
    if (rc != 0) {
        size_t pl = strlen(memfd_path);
        FUZZ_ASSERT(!strncmp(err.msg, memfd_path, pl) && strlen(err.msg) > pl + 4, "a refusal names the file");
        FUZZ_ASSERT(is_empty(&mf), "a refused file leaves the ModelFile empty");
        return;
    }
    check_consistent(&mf);
    check_round_trip(&mf);
    modelfile_free(&mf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_once(data, size);
    uint8_t *fixed = malloc(size ? size : 1);
    memcpy(fixed, data, size);
    if (repair_crcs(fixed, size)) read_once(fixed, size);
    free(fixed);
    return 0;
}
