#include "modelfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- CRC-32 */

/* The IEEE 802.3 polynomial (as zlib and PNG), table-driven. crc32_update chains:
 * crc32_update(crc32_update(0, a, n), b, m) is the CRC of a followed by b. */
static uint32_t crc32_update(uint32_t crc, const void *data, size_t n)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const unsigned char *p = data;
    uint32_t c = crc ^ 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

uint32_t crc32_bytes(const void *data, size_t n) { return crc32_update(0, data, n); }

/* ---------------------------------------------------------------- writing */

/* A growable byte buffer for building a section's payload. */
typedef struct {
    unsigned char *p;
    size_t len, cap;
} Bytes;

static void put(Bytes *b, const void *data, size_t n)
{
    if (n == 0) return; /* an empty CONF: b->p may still be NULL, and memcpy must not get it */
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}
static void put_u32(Bytes *b, uint32_t v) { put(b, &v, 4); }

static void put_vocab(Bytes *b, const Vocab *v)
{
    put_u32(b, (uint32_t)v->size);
    for (int i = 0; i < v->size; i++) {
        uint32_t n = (uint32_t)strlen(v->words[i]);
        put_u32(b, n);
        put(b, v->words[i], n);
    }
}

/* i64 kind, i64 joint, then the source's and the target's merges as codes text
 * (subword.h), each u64 length + bytes. */
static void put_segmenter(Bytes *b, const Segmenter *s)
{
    int64_t head[2] = {s->kind, s->joint};
    put(b, head, sizeof head);
    const Bpe *sides[2] = {&s->src, &s->tgt};
    for (int k = 0; k < 2; k++) {
        char *codes = bpe_to_text(sides[k]);
        uint64_t n = strlen(codes);
        put(b, &n, 8);
        put(b, codes, n);
        free(codes);
    }
}

/* n == 0: data may be NULL (an empty CONF), which fwrite must not be given. */
static int write_all(FILE *f, const void *data, size_t n) { return n == 0 || fwrite(data, 1, n, f) == n ? 0 : -1; }

static int write_section(FILE *f, const char tag[4], const void *payload, uint64_t n)
{
    uint32_t crc = crc32_bytes(payload, n);
    if (write_all(f, tag, 4) || write_all(f, &n, 8) || write_all(f, &crc, 4)) return -1;
    return write_all(f, payload, n);
}

int modelfile_write(const char *path, const ModelFile *mf, Error *err)
{
    const Model *m = &mf->model;
    size_t tmp_len = strlen(path) + 5;
    char *tmp = xmalloc(tmp_len);
    snprintf(tmp, tmp_len, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    Bytes dims = {0}, arch = {0}, conf = {0}, svoc = {0}, tvoc = {0};
    int64_t d[10] = {m->dims.src_vocab, m->dims.tgt_vocab, m->dims.embed, m->dims.hidden, m->dims.attention,
                     mf->text.lowercase, mf->text.nfkc, mf->step, mf->epoch, m->n_params};
    put(&dims, d, sizeof d);
    const ModelDims *md = &m->dims;
    int64_t a[ARCH_FIELDS] = {md->cell, md->layers, md->bidirectional, md->attention,
                              md->input_feed, md->window, md->scaled, md->tie_embeddings};
    put(&arch, a, sizeof a);
    const char *cj = mf->config_json ? mf->config_json : "{}";
    put(&conf, cj, strlen(cj));
    put_vocab(&svoc, &mf->src_vocab);
    put_vocab(&tvoc, &mf->tgt_vocab);
    /* Word models have no SUBW, so that their files are what they were before subword units. */
    Bytes subw = {0};
    int with_subw = mf->seg.kind != TOKENIZER_WORD;
    if (with_subw) put_segmenter(&subw, &mf->seg);

    int with_state = mf->has_optimizer && mf->has_train_state;
    uint32_t header[3] = {MODELFILE_VERSION, 0x01020304u,
                          6u + (with_subw ? 1u : 0u) + (mf->has_optimizer ? 1u : 0u) + (with_state ? 1u : 0u)};
    int bad = write_all(f, "NMTMODEL", 8) || write_all(f, header, sizeof header) ||
              write_section(f, "DIMS", dims.p, dims.len) || write_section(f, "ARCH", arch.p, arch.len) ||
              write_section(f, "CONF", conf.p, conf.len) ||
              write_section(f, "SVOC", svoc.p, svoc.len) || write_section(f, "TVOC", tvoc.p, tvoc.len) ||
              (with_subw && write_section(f, "SUBW", subw.p, subw.len)) ||
              write_section(f, "WGTS", m->param_mem, sizeof(float) * m->n_params);
    if (!bad && mf->has_optimizer) {
        uint64_t n = 8 + 2 * sizeof(float) * m->n_params;
        int64_t step = mf->opt.step;
        uint32_t crc = crc32_update(0, &step, 8);
        crc = crc32_update(crc, mf->opt.m, sizeof(float) * m->n_params);
        crc = crc32_update(crc, mf->opt.v, sizeof(float) * m->n_params);
        bad = write_all(f, "ADAM", 4) || write_all(f, &n, 8) || write_all(f, &crc, 4) || write_all(f, &step, 8) ||
              write_all(f, mf->opt.m, sizeof(float) * m->n_params) ||
              write_all(f, mf->opt.v, sizeof(float) * m->n_params);
    }
    if (!bad && with_state) {
        size_t n;
        unsigned char *trst = trainstate_encode(&mf->train_state, &n);
        bad = write_section(f, "TRST", trst, n);
        free(trst);
    }
    free(dims.p);
    free(arch.p);
    free(conf.p);
    free(svoc.p);
    free(tvoc.p);
    free(subw.p);
    if (!bad) bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    int saved = errno;
    if (fclose(f) != 0) bad = 1;
    if (!bad && rename(tmp, path) != 0) {
        saved = errno;
        bad = 1;
    }
    if (bad) {
        error_set(err, "%s: write failed: %s (the previous file, if any, is untouched)", path, strerror(saved));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    /* Make the rename itself durable. */
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    int fd = open(slash ? dir : ".", O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
    return 0;
}

/* ---------------------------------------------------------------- reading */

/* A bounds-checked cursor over a payload. */
typedef struct {
    const unsigned char *p;
    size_t len, at;
} Reader;

static int take(Reader *r, void *out, size_t n)
{
    if (n > r->len - r->at) return -1;
    memcpy(out, r->p + r->at, n);
    r->at += n;
    return 0;
}

static int read_vocab(Reader r, Vocab *v, const char *path, const char *tag, Error *err)
{
    uint32_t count;
    if (take(&r, &count, 4) || count < VOCAB_SPECIALS || count > (r.len - r.at) / 4)
        return error_set(err, "%s: section %s: bad word count", path, tag);
    char **words = xcalloc(count, sizeof(char *));
    int status = 0;
    for (uint32_t i = 0; i < count && status == 0; i++) {
        uint32_t n;
        if (take(&r, &n, 4) || n > r.len - r.at) {
            status = error_set(err, "%s: section %s: word %u runs past the section end", path, tag, i);
            break;
        }
        words[i] = xmalloc(n + 1);
        take(&r, words[i], n);
        words[i][n] = 0;
        if (strlen(words[i]) != n) status = error_set(err, "%s: section %s: word %u has a NUL byte", path, tag, i);
    }
    if (status == 0 && vocab_from_words(v, words, (int)count, err) != 0) {
        char inner[ERROR_LEN];
        snprintf(inner, sizeof inner, "%s", err->msg);
        status = error_set(err, "%s: section %s: %s", path, tag, inner);
    }
    for (uint32_t i = 0; i < count; i++)
        free(words[i]);
    free(words);
    return status;
}

/* The SUBW section (put_segmenter). Each side's codes are parsed by bpe_from_text,
 * so damaged merges are refused with the line they are on. */
static int read_segmenter(Reader r, Segmenter *seg, const char *path, Error *err)
{
    int64_t head[2];
    if (take(&r, head, sizeof head) || head[0] < TOKENIZER_BPE || head[0] > TOKENIZER_CHAR || head[1] < 0 ||
        head[1] > 1)
        return error_set(err, "%s: section SUBW: bad tokenizer kind", path);
    seg->kind = (TokenizerKind)head[0];
    seg->joint = (int)head[1];
    Bpe *sides[2] = {&seg->src, &seg->tgt};
    const char *names[2] = {"model file section SUBW, source merges", "model file section SUBW, target merges"};
    for (int k = 0; k < 2; k++) {
        uint64_t n;
        if (take(&r, &n, 8) || n > r.len - r.at)
            return error_set(err, "%s: section SUBW: merges run past the section end", path);
        Error inner;
        if (bpe_from_text(sides[k], (const char *)r.p + r.at, (size_t)n, names[k], &inner))
            return error_set(err, "%s: %s", path, inner.msg);
        r.at += n;
    }
    if (r.at != r.len) return error_set(err, "%s: section SUBW: %zu unexpected bytes at its end", path, r.len - r.at);
    return 0;
}

typedef struct {
    char tag[5];
    const unsigned char *p;
    uint64_t len;
} Section;

static const Section *find(const Section *s, int n, const char *tag)
{
    for (int i = 0; i < n; i++)
        if (!memcmp(s[i].tag, tag, 4)) return &s[i];
    return NULL;
}

static int known_tag(const char *tag)
{
    static const char *const tags[] = {"DIMS", "ARCH", "CONF", "SVOC", "TVOC", "SUBW", "WGTS", "ADAM", "TRST"};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++)
        if (!memcmp(tag, tags[i], 4)) return 1;
    return 0;
}

int modelfile_read(const char *path, ModelFile *mf, Error *err)
{
    memset(mf, 0, sizeof *mf);
    unsigned char *data = NULL;
    size_t len = 0;
    if (read_whole_file(path, &data, &len, err)) return -1;
    Section sec[16];
    int n_sec = 0, status = -1;
    Reader r = {data, len, 0};
    char magic[8];
    uint32_t header[3];
    if (take(&r, magic, 8) || memcmp(magic, "NMTMODEL", 8)) {
        error_set(err, "%s: not an nmt model file (bad magic)", path);
        goto done;
    }
    if (take(&r, header, sizeof header)) {
        error_set(err, "%s: truncated header", path);
        goto done;
    }
    if (header[1] != 0x01020304u) {
        error_set(err, "%s: written on a machine of the other byte order", path);
        goto done;
    }
    if (header[0] != MODELFILE_VERSION) {
        error_set(err, "%s: format version %u, this nmt reads version %d", path, header[0], MODELFILE_VERSION);
        goto done;
    }
    if (header[2] > 16) {
        error_set(err, "%s: damaged header (%u sections)", path, header[2]);
        goto done;
    }
    for (uint32_t i = 0; i < header[2]; i++) {
        Section *s = &sec[n_sec];
        uint32_t crc;
        memset(s->tag, 0, sizeof s->tag);
        if (take(&r, s->tag, 4) || take(&r, &s->len, 8) || take(&r, &crc, 4)) {
            error_set(err, "%s: truncated (section %u header)", path, i + 1);
            goto done;
        }
        if (s->len > r.len - r.at) {
            error_set(err, "%s: truncated: section %.4s claims %llu bytes, %zu remain", path, s->tag,
                      (unsigned long long)s->len, r.len - r.at);
            goto done;
        }
        s->p = r.p + r.at;
        r.at += s->len;
        if (crc32_bytes(s->p, s->len) != crc) {
            error_set(err, "%s: section %.4s is damaged (checksum mismatch)", path, s->tag);
            goto done;
        }
        /* The CRC covers the payload only, so a damaged tag must be caught here: an
         * unknown tag would otherwise be skipped (a checkpoint's ADAM quietly lost). */
        if (!known_tag(s->tag)) {
            error_set(err, "%s: unknown section \"%.4s\" (damaged file?)", path, s->tag);
            goto done;
        }
        if (find(sec, n_sec, s->tag)) {
            error_set(err, "%s: section %.4s appears twice", path, s->tag);
            goto done;
        }
        n_sec++;
    }
    if (r.at != r.len) {
        error_set(err, "%s: %zu unexpected bytes after the last section", path, r.len - r.at);
        goto done;
    }
    const Section *dims = find(sec, n_sec, "DIMS"), *conf = find(sec, n_sec, "CONF"),
                  *svoc = find(sec, n_sec, "SVOC"), *tvoc = find(sec, n_sec, "TVOC"),
                  *wgts = find(sec, n_sec, "WGTS"), *adam = find(sec, n_sec, "ADAM"), *trst = find(sec, n_sec, "TRST");
    if (!dims || !conf || !svoc || !tvoc || !wgts) {
        error_set(err, "%s: a required section is missing", path);
        goto done;
    }
    int64_t d[10];
    if (dims->len != sizeof d) {
        error_set(err, "%s: section DIMS has %llu bytes, expected %zu", path, (unsigned long long)dims->len, sizeof d);
        goto done;
    }
    memcpy(d, dims->p, sizeof d);
    for (int i = 0; i < 4; i++)
        if (d[i] < 1 || d[i] > 100000000) {
            error_set(err, "%s: implausible dimension %lld in section DIMS", path, (long long)d[i]);
            goto done;
        }
    ModelDims md = {.src_vocab = (int)d[0], .tgt_vocab = (int)d[1], .embed = (int)d[2], .hidden = (int)d[3],
                    .layers = 1};
    const Section *arch = find(sec, n_sec, "ARCH");
    if (arch) {
        /* Files written before the model family have no ARCH: one GRU layer, Bahdanau. */
        int64_t a[ARCH_FIELDS];
        if (arch->len != sizeof a) {
            error_set(err, "%s: section ARCH has %llu bytes, expected %zu", path, (unsigned long long)arch->len,
                      sizeof a);
            goto done;
        }
        memcpy(a, arch->p, sizeof a);
        for (int i = 0; i < ARCH_FIELDS; i++)
            if (a[i] < 0 || a[i] > 1000) {
                error_set(err, "%s: implausible value %lld in section ARCH", path, (long long)a[i]);
                goto done;
            }
        md.cell = (int)a[0];
        md.layers = (int)a[1];
        md.bidirectional = (int)a[2];
        md.attention = (int)a[3];
        md.input_feed = (int)a[4];
        md.window = (int)a[5];
        md.scaled = (int)a[6];
        md.tie_embeddings = (int)a[7];
    }
    if (d[4] != md.attention) {
        error_set(err, "%s: attention kind %lld in DIMS disagrees with ARCH", path, (long long)d[4]);
        goto done;
    }
    const char *problem = md.layers < 1 ? "layers must be between 1 and 8" : dims_problem(&md);
    if (problem) {
        error_set(err, "%s: section ARCH describes no valid model: %s", path, problem);
        goto done;
    }
    long n_params = params_count(&md);
    if (d[9] != n_params || wgts->len != sizeof(float) * (uint64_t)n_params) {
        error_set(err, "%s: weights section holds %llu bytes, the dimensions need %ld", path,
                  (unsigned long long)wgts->len, (long)(sizeof(float) * n_params));
        goto done;
    }
    if (read_vocab((Reader){svoc->p, svoc->len, 0}, &mf->src_vocab, path, "SVOC", err) ||
        read_vocab((Reader){tvoc->p, tvoc->len, 0}, &mf->tgt_vocab, path, "TVOC", err))
        goto done;
    if (mf->src_vocab.size != md.src_vocab || mf->tgt_vocab.size != md.tgt_vocab) {
        error_set(err, "%s: vocabulary sizes %d/%d do not match the dimensions %d/%d", path, mf->src_vocab.size,
                  mf->tgt_vocab.size, md.src_vocab, md.tgt_vocab);
        goto done;
    }
    const Section *subw = find(sec, n_sec, "SUBW");
    if (subw && read_segmenter((Reader){subw->p, subw->len, 0}, &mf->seg, path, err)) goto done;
    model_alloc(&mf->model, &md);
    memcpy(mf->model.param_mem, wgts->p, wgts->len);
    mf->text.lowercase = d[5] != 0;
    mf->text.nfkc = d[6] != 0;
    mf->step = (long)d[7];
    mf->epoch = (long)d[8];
    mf->config_json = xmalloc(conf->len + 1);
    memcpy(mf->config_json, conf->p, conf->len);
    mf->config_json[conf->len] = 0;
    if (adam) {
        if (adam->len != 8 + 2 * sizeof(float) * (uint64_t)n_params) {
            error_set(err, "%s: section ADAM has the wrong size for this model", path);
            goto done;
        }
        adam_init(&mf->opt, n_params, 0.0f);
        int64_t step;
        memcpy(&step, adam->p, 8);
        mf->opt.step = (long)step;
        memcpy(mf->opt.m, adam->p + 8, sizeof(float) * n_params);
        memcpy(mf->opt.v, adam->p + 8 + sizeof(float) * n_params, sizeof(float) * n_params);
        mf->has_optimizer = 1;
    }
    if (trst) {
        if (!adam) {
            error_set(err, "%s: section TRST without ADAM: a training state needs the optimizer's", path);
            goto done;
        }
        if (trainstate_decode(trst->p, trst->len, path, &mf->train_state, err)) goto done;
        mf->has_train_state = 1;
        if (mf->train_state.step != mf->step || mf->train_state.step != mf->opt.step) {
            error_set(err, "%s: section TRST: step %ld disagrees with DIMS (%ld) or ADAM (%ld)", path,
                      mf->train_state.step, mf->step, mf->opt.step);
            goto done;
        }
    }
    status = 0;
done:
    free(data);
    if (status) modelfile_free(mf);
    return status;
}

void modelfile_free(ModelFile *mf)
{
    if (mf->model.param_mem) model_free(&mf->model);
    vocab_free(&mf->src_vocab);
    vocab_free(&mf->tgt_vocab);
    segmenter_free(&mf->seg);
    free(mf->config_json);
    if (mf->has_optimizer) adam_free(&mf->opt);
    if (mf->has_train_state) trainstate_free(&mf->train_state);
    memset(mf, 0, sizeof *mf);
}
