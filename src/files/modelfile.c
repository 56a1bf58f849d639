#include "files/modelfile.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/config.h" /* defines: CONFIG_MAX_EPOCHS, CONFIG_MAX_STEPS */
#include "files/weights_int8.h" /* defines: weights_int8_encode, weights_int8_decode */
#include "io/outfile.h" /* defines: OutFile, outfile_open, outfile_commit, outfile_discard */

/* ---------------------------------------------------------------- CRC-32 */

/* The IEEE 802.3 polynomial (as zlib and PNG), table-driven, eight bytes a step
 * ("slicing by 8": table[k][b] is the CRC of byte b followed by k zero bytes), about
 * five times the byte-at-a-time loop's speed: a checkpoint's CRC is computed while
 * training waits. The bytes are read one by one, so any byte order gives the same CRC.
 * crc32_update chains: crc32_update(crc32_update(0, a, n), b, m) is the CRC of a
 * followed by b. */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int k = 1; k < 8; k++)
            crc_table[k][i] = crc_table[0][crc_table[k - 1][i] & 0xFF] ^ (crc_table[k - 1][i] >> 8);
}

static uint32_t crc32_update(uint32_t crc, const void *data, size_t n)
{
    pthread_once(&crc_once, crc_init);
    const unsigned char *p = data;
    uint32_t c = crc ^ 0xFFFFFFFFu;
    for (; n >= 8; n -= 8, p += 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
            crc_table[4][lo >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
    }
    for (; n > 0; n--, p++)
        c = crc_table[0][(c ^ *p) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

uint32_t crc32_bytes(const void *data, size_t n) { return crc32_update(0, data, n); }

/* ---------------------------------------------------------------- the sections */

/* Every section a file may hold, and whether a file without it is readable. A tag
 * outside this list is damage (the CRC covers payloads, not tags), and each tag may
 * appear once, so a reader can index sections by kind. After these come the model
 * families' own sections (ModelFamily.file_section: "TRFM", "CLSF"), kind S_FIXED + the
 * family's type; a file holds at most one of them. */
typedef enum { S_DIMS, S_ARCH, S_CONF, S_SVOC, S_TVOC, S_SUBW, S_WGTS, S_ADAM, S_TRST, S_USYM, S_QWTS, S_FIXED } SectionKind;
#define N_SECTIONS (S_FIXED + MODEL_TYPES)
static const struct {
    char tag[5];
    int required;
} section_kinds[S_FIXED] = {
    [S_DIMS] = {"DIMS", 1}, [S_ARCH] = {"ARCH", 0}, [S_CONF] = {"CONF", 1}, [S_SVOC] = {"SVOC", 1},
    [S_TVOC] = {"TVOC", 1}, [S_SUBW] = {"SUBW", 0}, [S_WGTS] = {"WGTS", 0}, [S_ADAM] = {"ADAM", 0},
    [S_TRST] = {"TRST", 0}, [S_USYM] = {"USYM", 0}, [S_QWTS] = {"QWTS", 0},
};
/* (WGTS or QWTS: exactly one of them, checked by split_sections.) */

/* The family whose section kind k is, or NULL (a fixed kind, or a family without one). */
static const ModelFamily *section_family(int k)
{
    ModelDims d = {.type = k - S_FIXED};
    const ModelFamily *f = k >= S_FIXED ? model_family(&d) : NULL;
    return f && f->file_section ? f : NULL;
}

/* Kind k's tag, or NULL for a kind no section has. */
static const char *section_tag(int k)
{
    if (k < S_FIXED) return section_kinds[k].tag;
    const ModelFamily *f = section_family(k);
    return f ? f->file_section->tag : NULL;
}

/* How many sections a file may hold: the fixed ones and the families'. */
static int max_sections(void)
{
    int n = S_FIXED;
    for (int k = S_FIXED; k < N_SECTIONS; k++)
        n += section_tag(k) != NULL;
    return n;
}

/* ---------------------------------------------------------------- the fixed fields */

/* DIMS, ARCH and the heads of SUBW and ADAM are i64 values in a fixed order. Each is
 * described once, by a row below: its name (for messages), where it lives in a
 * ModelFile, the values a reader accepts, and what a file without the section reads
 * as. modelfile_write encodes through these tables and refuses a value out of range
 * (a file it writes always reads back); modelfile_read decodes and range-checks
 * through them. The rules between fields (a bidirectional encoder needs an even
 * hidden size, ...) are the model's own, dims_problem in model.c; the ranges here are
 * only what keeps a damaged value from sizing anything.
 *
 * The rows are in the file's order. Appending a field to a section would need the
 * reader to accept the shorter payload of older files, reading the field as `absent`
 * (as trainstate.c does for TRST's ranks). */
typedef enum { F_INT, F_LONG } FieldType;
typedef struct {
    const char *name;
    FieldType type;
    size_t offset;      /* in ModelFile */
    int64_t min, max;   /* the values accepted */
    int64_t absent;     /* the value in a file without the section (ARCH, SUBW, ADAM) */
} Field;

/* A section's fixed fields: the whole payload (DIMS, ARCH) or its head (SUBW, ADAM). */
typedef struct {
    SectionKind kind;
    const Field *fields;
    int n;
    int whole;
    int required;       /* whole: the fields every such section holds (0: all n); the
                           later ones read as `absent` where a file ends before them, and
                           are not written while they have that value (ModelSection) */
} Layout;

/* Bounds that are no rule of the model's: what nmt can write (config.c's ranges),
 * wide enough for every file it has written. */
#define MAX_VOCAB 100000000   /* words per vocabulary (data.max_vocab 0 sets no limit) */
#define MAX_EPOCH (CONFIG_MAX_EPOCHS + 1) /* where a finished run stands */
#define MAX_COUNT CONFIG_MAX_STEPS      /* steps, and parameters */

_Static_assert(sizeof(TokenizerKind) == sizeof(int), "Segmenter.kind is read and written as an int");

#define FIELD(name, type, member, lo, hi, absent) {name, type, offsetof(ModelFile, member), lo, hi, absent}

/* DIMS is required: `absent` is never used. attention is ARCH's too (DIMS had it
 * first), and n_params is what the dimensions decide; the reader compares both. */
static const Field dims_fields[] = {
    FIELD("src_vocab", F_INT, model.dims.src_vocab, VOCAB_SPECIALS, MAX_VOCAB, 0),
    FIELD("tgt_vocab", F_INT, model.dims.tgt_vocab, VOCAB_SPECIALS, MAX_VOCAB, 0),
    FIELD("embed", F_INT, model.dims.embed, 1, MODEL_MAX_WIDTH, 0),
    FIELD("hidden", F_INT, model.dims.hidden, 1, MODEL_MAX_WIDTH, 0),
    FIELD("attention", F_INT, model.dims.attention, 0, ATT_KINDS - 1, 0),
    FIELD("lowercase", F_INT, text.lowercase, 0, 1, 0),
    FIELD("nfkc", F_INT, text.nfkc, 0, 1, 0),
    FIELD("step", F_LONG, step, 0, MAX_COUNT, 0),
    FIELD("epoch", F_LONG, epoch, 0, MAX_EPOCH, 0),
    FIELD("n_params", F_LONG, model.n_params, 1, MAX_COUNT, 0),
};

/* Files written before the model family have no ARCH: one GRU layer, Bahdanau. */
static const Field arch_fields[] = {
    FIELD("cell", F_INT, model.dims.cell, CELL_GRU, CELL_LSTM, CELL_GRU),
    FIELD("layers", F_INT, model.dims.layers, 1, MAX_LAYERS, 1),
    FIELD("bidirectional", F_INT, model.dims.bidirectional, 0, 1, 0),
    FIELD("attention", F_INT, model.dims.attention, 0, ATT_KINDS - 1, ATT_BAHDANAU),
    FIELD("input_feed", F_INT, model.dims.input_feed, 0, 1, 0),
    FIELD("window", F_INT, model.dims.window, 0, MODEL_MAX_WINDOW, 0),
    FIELD("scaled", F_INT, model.dims.scaled, 0, 1, 0),
    FIELD("tie_embeddings", F_INT, model.dims.tie_embeddings, 0, 1, 0),
};

/* Then what the kind needs (read_subw_rest). Word models have no SUBW, so that their
 * files are what they were before subword units; the word kind is therefore never
 * stored. A kind past the last this nmt knows (a newer nmt's) is out of range. */
static const Field subw_fields[] = {
    FIELD("kind", F_INT, seg.kind, TOKENIZER_BPE, TOKENIZER_KINDS - 1, TOKENIZER_WORD),
    FIELD("joint", F_INT, seg.joint, 0, 1, 0),
};

/* SUBW's rest under tokenizer none: i64 format and nothing else. */
static const Field format_fields[] = {
    FIELD("format", F_INT, seg.format, 0, SUBWORD_FORMATS - 1, SUBWORD_FORMAT_NONE),
};

/* Then m and v, float32 x n_params each. Absent in model files (no optimizer). */
static const Field adam_fields[] = {
    FIELD("step", F_LONG, opt.step, 0, MAX_COUNT, 0),
};
#undef FIELD

#define LAYOUT(kind, fields, whole) {kind, fields, (int)(sizeof fields / sizeof fields[0]), whole, 0}
static const Layout dims_layout = LAYOUT(S_DIMS, dims_fields, 1), arch_layout = LAYOUT(S_ARCH, arch_fields, 1),
                    subw_layout = LAYOUT(S_SUBW, subw_fields, 0), adam_layout = LAYOUT(S_ADAM, adam_fields, 0),
                    format_layout = LAYOUT(S_SUBW, format_fields, 0);
#undef LAYOUT

/* A family's section (model.h's ModelSection: ints of ModelDims) as this file's
 * Layout, built in place (t points into fields). */
#define MAX_FAMILY_FIELDS 16
typedef struct {
    Layout t;
    Field fields[MAX_FAMILY_FIELDS];
} FamilyLayout;

/* 1 and fl filled if f has a section of its own, else 0. */
static int family_layout(const ModelFamily *f, FamilyLayout *fl)
{
    const ModelSection *sec = f ? f->file_section : NULL;
    if (!sec) return 0;
    if (sec->n > MAX_FAMILY_FIELDS) {  /* a family's table, not a file's content */
        fprintf(stderr, "nmt: internal error: section %s has more than %d fields\n", sec->tag, MAX_FAMILY_FIELDS);
        abort();
    }
    for (int i = 0; i < sec->n; i++) {
        const ModelField *mfld = &sec->fields[i];
        fl->fields[i] = (Field){mfld->name, F_INT, offsetof(ModelFile, model.dims) + mfld->offset, mfld->min, mfld->max,
                                mfld->absent};
    }
    fl->t = (Layout){(SectionKind)(S_FIXED + f->type), fl->fields, sec->n, 1, sec->required};
    return 1;
}

static size_t layout_bytes(const Layout *t) { return 8 * (size_t)t->n; }
static int layout_required(const Layout *t) { return t->required > 0 ? t->required : t->n; }

static int64_t field_get(const Field *f, const ModelFile *mf)
{
    const char *at = (const char *)mf + f->offset;
    return f->type == F_INT ? (int64_t)*(const int *)at : (int64_t)*(const long *)at;
}

static void field_set(const Field *f, ModelFile *mf, int64_t v)
{
    char *at = (char *)mf + f->offset;
    if (f->type == F_INT) *(int *)at = (int)v;
    else *(long *)at = (long)v;
}

/* "section DIMS: field hidden is 0, must be 1..8192" after `prefix`, or 0 if v is in
 * f's range. */
static int field_range(const Layout *t, const Field *f, int64_t v, const char *prefix, Error *err)
{
    if (v >= f->min && v <= f->max) return 0;
    return error_set(err, "%ssection %s: field %s is %lld, must be %lld..%lld", prefix, section_tag(t->kind),
                     f->name, (long long)v, (long long)f->min, (long long)f->max);
}

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

/* t's fields of mf, i64 each (fields_writable has checked their ranges), but the
 * trailing optional ones that have their `absent` value. */
static void put_fields(Bytes *b, const Layout *t, const ModelFile *mf)
{
    int n = t->n;
    while (n > layout_required(t) && field_get(&t->fields[n - 1], mf) == t->fields[n - 1].absent)
        n--;
    for (int i = 0; i < n; i++) {
        int64_t v = field_get(&t->fields[i], mf);
        put(b, &v, 8);
    }
}

/* Refuses, naming the field, a value that modelfile_read would refuse: nmt must not
 * write a file it cannot read back. */
static int fields_writable(const Layout *t, const ModelFile *mf, const char *path, Error *err)
{
    char prefix[ERROR_LEN];
    snprintf(prefix, sizeof prefix, "%s: not written: ", path);
    for (int i = 0; i < t->n; i++)
        if (field_range(t, &t->fields[i], field_get(&t->fields[i], mf), prefix, err)) return -1;
    return 0;
}

/* A list of strings as SVOC, TVOC and USYM hold them: u32 count, then per string u32
 * byte length + bytes. */
static void put_strings(Bytes *b, char *const *s, int count)
{
    put_u32(b, (uint32_t)count);
    for (int i = 0; i < count; i++) {
        uint32_t n = (uint32_t)strlen(s[i]);
        put_u32(b, n);
        put(b, s[i], n);
    }
}

static void put_vocab(Bytes *b, const Vocab *v) { put_strings(b, v->words, v->size); }

/* SUBW after its head: under bpe and char the source's and the target's merges as
 * codes text (subword.h), under spm their SentencePiece models as a .model file holds
 * them, each u64 length + bytes; under none the format. */
static void put_subw_rest(Bytes *b, const ModelFile *mf)
{
    const Segmenter *s = &mf->seg;
    if (s->kind == TOKENIZER_NONE) {
        put_fields(b, &format_layout, mf);
        return;
    }
    if (s->kind == TOKENIZER_SPM) {
        const SpmModel *models[2] = {&s->spm_src, &s->spm_tgt};
        for (int k = 0; k < 2; k++) {
            uint64_t n = models[k]->n;
            put(b, &n, 8);
            put(b, models[k]->proto, n);
        }
        return;
    }
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

static int write_section(FILE *f, SectionKind kind, const void *payload, uint64_t n)
{
    uint32_t crc = crc32_bytes(payload, n);
    if (write_all(f, section_tag(kind), 4) || write_all(f, &n, 8) || write_all(f, &crc, 4)) return -1;
    return write_all(f, payload, n);
}

/* ADAM: its head, then m and v, written from where they are rather than copied into
 * one payload (a checkpoint's moments are twice the weights). */
static int write_adam(FILE *f, const ModelFile *mf)
{
    size_t bytes = sizeof(float) * (size_t)mf->model.n_params;
    Bytes head = {0};
    put_fields(&head, &adam_layout, mf);
    uint64_t n = head.len + 2 * bytes;
    uint32_t crc = crc32_update(0, head.p, head.len);
    crc = crc32_update(crc, mf->opt.m, bytes);
    crc = crc32_update(crc, mf->opt.v, bytes);
    int bad = write_all(f, section_kinds[S_ADAM].tag, 4) || write_all(f, &n, 8) || write_all(f, &crc, 4) ||
              write_all(f, head.p, head.len) || write_all(f, mf->opt.m, bytes) || write_all(f, mf->opt.v, bytes);
    free(head.p);
    return bad ? -1 : 0;
}

int modelfile_write(const char *path, const ModelFile *mf, Error *err)
{
    const Model *m = &mf->model;
    int with_subw = mf->seg.kind != TOKENIZER_WORD;
    int with_state = mf->has_optimizer && mf->has_train_state;
    FamilyLayout fam;  /* the model family's own section, if it has one */
    int with_fam = family_layout(model_family(&m->dims), &fam);
    if (fields_writable(&dims_layout, mf, path, err) || fields_writable(&arch_layout, mf, path, err) ||
        (with_fam && fields_writable(&fam.t, mf, path, err)) ||
        (with_subw && fields_writable(&subw_layout, mf, path, err)) ||
        (mf->seg.kind == TOKENIZER_NONE && fields_writable(&format_layout, mf, path, err)) ||
        (mf->has_optimizer && fields_writable(&adam_layout, mf, path, err)))
        return -1;
    /* The file does not store whitespace_only: the reader takes it from the kind. */
    if (mf->text.whitespace_only != tokenizer_whitespace_only(mf->seg.kind))
        return error_set(err, "%s: not written: text split at whitespace %s, but tokenizer %s splits it %s", path,
                         mf->text.whitespace_only ? "only" : "and punctuation", tokenizer_name(mf->seg.kind),
                         tokenizer_whitespace_only(mf->seg.kind) ? "at whitespace only" : "at punctuation too");

    if (mf->weights_int8 && mf->has_optimizer)
        return error_set(err, "%s: not written: a checkpoint's weights are float32 (int8 weights are for decoding)",
                         path);
    size_t n_qwts = 0;
    unsigned char *qwts = NULL;
    if (mf->weights_int8 && !(qwts = weights_int8_encode(m, &n_qwts, path, err))) return -1;

    OutFile o;
    if (outfile_open(&o, path, err)) {
        free(qwts);
        return -1;
    }
    FILE *f = o.f;
    Bytes dims = {0}, arch = {0}, family = {0}, conf = {0}, svoc = {0}, tvoc = {0}, subw = {0}, usym = {0};
    int with_usym = mf->symbols.n > 0;
    if (with_usym) put_strings(&usym, mf->symbols.given, mf->symbols.n);  /* as given */
    put_fields(&dims, &dims_layout, mf);
    put_fields(&arch, &arch_layout, mf);
    if (with_fam) put_fields(&family, &fam.t, mf);
    const char *cj = mf->config_json ? mf->config_json : "{}";
    put(&conf, cj, strlen(cj));
    put_vocab(&svoc, &mf->src_vocab);
    put_vocab(&tvoc, &mf->tgt_vocab);
    if (with_subw) {
        put_fields(&subw, &subw_layout, mf);
        put_subw_rest(&subw, mf);
    }

    uint32_t header[3] = {(uint32_t)modelfile_version(mf), 0x01020304u,
                          6u + (with_fam ? 1u : 0u) + (with_subw ? 1u : 0u) + (with_usym ? 1u : 0u) +
                              (mf->has_optimizer ? 1u : 0u) + (with_state ? 1u : 0u)};
    int bad = write_all(f, MODELFILE_MAGIC, 8) || write_all(f, header, sizeof header) ||
              write_section(f, S_DIMS, dims.p, dims.len) || write_section(f, S_ARCH, arch.p, arch.len) ||
              (with_fam && write_section(f, fam.t.kind, family.p, family.len)) ||
              write_section(f, S_CONF, conf.p, conf.len) || write_section(f, S_SVOC, svoc.p, svoc.len) ||
              write_section(f, S_TVOC, tvoc.p, tvoc.len) || (with_subw && write_section(f, S_SUBW, subw.p, subw.len)) ||
              (with_usym && write_section(f, S_USYM, usym.p, usym.len)) ||
              (qwts ? write_section(f, S_QWTS, qwts, n_qwts)
                    : write_section(f, S_WGTS, m->param_mem, sizeof(float) * m->n_params)) ||
              (mf->has_optimizer && write_adam(f, mf));
    if (!bad && with_state) {
        size_t n;
        unsigned char *trst = trainstate_encode(&mf->train_state, &n);
        bad = write_section(f, S_TRST, trst, n);
        free(trst);
    }
    int saved = errno ? errno : EIO;
    free(qwts);
    free(dims.p);
    free(arch.p);
    free(family.p);
    free(conf.p);
    free(svoc.p);
    free(tvoc.p);
    free(subw.p);
    free(usym.p);
    if (bad) {
        outfile_discard(&o);
        return error_set(err, "%s: write failed: %s (the previous file, if any, is untouched)", path,
                         strerror(saved));
    }
    return outfile_commit(&o, err);
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

/* One section of the file: its payload, within the file's bytes. */
typedef struct {
    int present;
    const unsigned char *p;
    uint64_t len;
} Section;

/* Checks the header, then every section's length against the bytes left, its CRC and
 * its tag, and files each under its kind in sec (N_SECTIONS entries, zeroed). */
static int split_sections(const unsigned char *data, size_t len, const char *path, Section *sec, Error *err)
{
    Reader r = {data, len, 0};
    char magic[8];
    uint32_t header[3];
    if (take(&r, magic, 8) || memcmp(magic, MODELFILE_MAGIC, 8))
        return error_set(err, "%s: not an nmt model file (bad magic)", path);
    if (take(&r, header, sizeof header)) return error_set(err, "%s: truncated header", path);
    if (header[1] != 0x01020304u) return error_set(err, "%s: written on a machine of the other byte order", path);
    if (header[0] != MODELFILE_VERSION && header[0] != MODELFILE_VERSION_INT8)
        return error_set(err, "%s: format version %u, this nmt reads versions %d and %d", path, header[0],
                         MODELFILE_VERSION, MODELFILE_VERSION_INT8);
    if (header[2] > (uint32_t)max_sections())
        return error_set(err, "%s: damaged header (%u sections, a file has at most %d)", path, header[2],
                         max_sections());
    for (uint32_t i = 0; i < header[2]; i++) {
        char tag[4];
        uint64_t n;
        uint32_t crc;
        if (take(&r, tag, 4) || take(&r, &n, 8) || take(&r, &crc, 4))
            return error_set(err, "%s: truncated (section %u header)", path, i + 1);
        if (n > r.len - r.at)
            return error_set(err, "%s: truncated: section %.4s claims %llu bytes, %zu remain", path, tag,
                             (unsigned long long)n, r.len - r.at);
        const unsigned char *p = r.p + r.at;
        r.at += n;
        if (crc32_bytes(p, n) != crc) return error_set(err, "%s: section %.4s is damaged (checksum mismatch)", path, tag);
        /* The CRC covers the payload only, so a damaged tag must be caught here: an
         * unknown tag would otherwise be skipped (a checkpoint's ADAM quietly lost). */
        int k = 0;
        while (k < N_SECTIONS && (!section_tag(k) || memcmp(tag, section_tag(k), 4))) k++;
        if (k == N_SECTIONS) return error_set(err, "%s: unknown section \"%.4s\" (damaged file?)", path, tag);
        if (sec[k].present) return error_set(err, "%s: section %.4s appears twice", path, tag);
        sec[k] = (Section){1, p, n};
    }
    if (r.at != r.len) return error_set(err, "%s: %zu unexpected bytes after the last section", path, r.len - r.at);
    for (int k = 0; k < S_FIXED; k++)
        if (section_kinds[k].required && !sec[k].present)
            return error_set(err, "%s: required section %s is missing", path, section_kinds[k].tag);
    /* The weights: float32 (WGTS) in a version 1 file, int8 rows (QWTS) in a version 2
     * one, so that an nmt from before int8 weights says "version 2" of such a file. */
    if (sec[S_WGTS].present == sec[S_QWTS].present)
        return error_set(err, "%s: %s", path, sec[S_WGTS].present ? "sections WGTS and QWTS both present: a file holds its weights once"
                                                                 : "required section WGTS (or QWTS) is missing");
    if (sec[S_QWTS].present != (header[0] == MODELFILE_VERSION_INT8))
        return error_set(err, "%s: format version %u with section %s: int8 weights (QWTS) are version %d's, float32 "
                              "(WGTS) version %d's",
                         path, header[0], sec[S_QWTS].present ? "QWTS" : "WGTS", MODELFILE_VERSION_INT8,
                         MODELFILE_VERSION);
    return 0;
}

/* Reads t's fields from s, its section, into mf, each checked against its range; a
 * file without the section reads as each field's `absent`. */
static int get_fields(const Layout *t, const Section *s, ModelFile *mf, const char *path, Error *err)
{
    if (!s->present) {
        for (int i = 0; i < t->n; i++)
            field_set(&t->fields[i], mf, t->fields[i].absent);
        return 0;
    }
    size_t need = layout_bytes(t), least = 8 * (size_t)layout_required(t);
    int held = t->n;
    if (t->whole && least < need && s->len >= least && s->len < need && s->len % 8 == 0)
        held = (int)(s->len / 8);  /* a file from before the later fields */
    else if (t->whole && least < need && s->len != need)
        return error_set(err, "%s: section %s has %llu bytes, expected a multiple of 8 from %zu to %zu", path,
                         section_tag(t->kind), (unsigned long long)s->len, least, need);
    else if (t->whole ? s->len != need : s->len < need)
        return error_set(err, "%s: section %s has %llu bytes, expected %s%zu", path, section_tag(t->kind),
                         (unsigned long long)s->len, t->whole ? "" : "at least ", need);
    char prefix[ERROR_LEN];
    snprintf(prefix, sizeof prefix, "%s: ", path);
    for (int i = held; i < t->n; i++)
        field_set(&t->fields[i], mf, t->fields[i].absent);
    for (int i = 0; i < held; i++) {
        int64_t v;
        memcpy(&v, s->p + 8 * (size_t)i, 8);
        if (field_range(t, &t->fields[i], v, prefix, err)) return -1;
        field_set(&t->fields[i], mf, v);
    }
    return 0;
}

/* The rules between fields, once each is in its range: DIMS's copy of the attention
 * kind agrees with ARCH, the dimensions make a model (dims_problem, the model's own
 * rules), and DIMS's parameter count and WGTS are the weights that model has. */
static int check_dims(const ModelFile *mf, int dims_attention, long dims_params, const Section *sec,
                      const char *path, Error *err)
{
    const ModelDims *md = &mf->model.dims;
    if (dims_attention != md->attention)
        return error_set(err, "%s: section DIMS: field attention is %d, section ARCH%s says %d", path, dims_attention,
                         sec[S_ARCH].present ? "" : " (absent: a file from before the model family)", md->attention);
    const char *problem = dims_problem(md);
    if (problem) return error_set(err, "%s: sections DIMS and ARCH describe no valid model: %s", path, problem);
    long n_params = params_count(md);
    if (dims_params != n_params)
        return error_set(err, "%s: section DIMS: field n_params is %ld, but the dimensions have %ld weights", path,
                         dims_params, n_params);
    if (sec[S_WGTS].present && sec[S_WGTS].len != sizeof(float) * (uint64_t)n_params)
        return error_set(err, "%s: weights section holds %llu bytes, the dimensions need %ld", path,
                         (unsigned long long)sec[S_WGTS].len, (long)(sizeof(float) * n_params));
    return 0;
}

/* A list of strings (put_strings) of section `tag`, of at least `least` strings, each
 * called a `what` in messages: *out (malloc'd, *count strings; free_strings), or -1
 * with err and *out NULL. */
static int read_strings(const Section *s, const char *tag, const char *what, uint32_t least, char ***out,
                        uint32_t *count, const char *path, Error *err)
{
    Reader r = {s->p, s->len, 0};
    *out = NULL;
    if (take(&r, count, 4) || *count < least || *count > (r.len - r.at) / 4)
        return error_set(err, "%s: section %s: bad %s count", path, tag, what);
    char **strings = xcalloc(*count ? *count : 1, sizeof(char *));
    int status = 0;
    for (uint32_t i = 0; i < *count && status == 0; i++) {
        uint32_t n;
        if (take(&r, &n, 4) || n > r.len - r.at) {
            status = error_set(err, "%s: section %s: %s %u runs past the section end", path, tag, what, i);
            break;
        }
        strings[i] = xmalloc(n + 1);
        take(&r, strings[i], n);
        strings[i][n] = 0;
        if (strlen(strings[i]) != n) status = error_set(err, "%s: section %s: %s %u has a NUL byte", path, tag, what, i);
    }
    if (status == 0 && r.at != r.len)
        status = error_set(err, "%s: section %s: %zu unexpected bytes after its last %s", path, tag, r.len - r.at, what);
    if (status == 0) {
        *out = strings;
        return 0;
    }
    for (uint32_t i = 0; i < *count; i++)
        free(strings[i]);
    free(strings);
    return -1;
}

static void free_strings(char **s, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        free(s[i]);
    free(s);
}

/* A vocabulary section (put_vocab) of exactly `size` words, as DIMS's `field` says. */
static int read_vocab(const Section *s, const char *tag, const char *field, int size, Vocab *v, const char *path,
                      Error *err)
{
    char **words;
    uint32_t count;
    if (read_strings(s, tag, "word", VOCAB_SPECIALS, &words, &count, path, err)) return -1;
    int status = 0;
    if (count != (uint32_t)size)
        status = error_set(err, "%s: section %s holds %u words, section DIMS: field %s says %d", path, tag, count,
                           field, size);
    if (status == 0 && vocab_from_words(v, words, (int)count, err) != 0) {
        char inner[ERROR_LEN];
        snprintf(inner, sizeof inner, "%s", err->msg);
        status = error_set(err, "%s: section %s: %s", path, tag, inner);
    }
    free_strings(words, count);
    return status;
}

/* USYM: the symbols as given (put_strings), checked and normalised as a config's are. */
static int read_symbols(const Section *s, ModelFile *mf, const char *path, Error *err)
{
    char **given;
    uint32_t count;
    if (read_strings(s, "USYM", "symbol", 0, &given, &count, path, err)) return -1;
    int status = 0;
    if (count > USER_SYMBOLS_MAX) status = error_set(err, "%s: section USYM: bad symbol count", path);
    if (status == 0 && modelfile_set_symbols(mf, given, (int)count, err)) {
        char inner[ERROR_LEN];
        snprintf(inner, sizeof inner, "%s", err->msg);
        status = error_set(err, "%s: section USYM: %s", path, inner);
    }
    free_strings(given, count);
    return status;
}

/* A SUBW kind past the last this nmt knows is most likely a newer nmt's tokenizer,
 * and is said to be, rather than only out of range (get_fields checks the rest). */
static int subw_kind_known(const Section *s, const char *path, Error *err)
{
    int64_t kind;
    if (!s->present || s->len < 8) return 0;
    memcpy(&kind, s->p, 8);
    if (kind < TOKENIZER_KINDS) return 0;
    char known[200] = "";
    size_t used = 0;
    for (int k = TOKENIZER_BPE; k < TOKENIZER_KINDS && used < sizeof known; k++)
        used += (size_t)snprintf(known + used, sizeof known - used, "%s%d %s", k > TOKENIZER_BPE ? ", " : "", k,
                                 tokenizer_name((TokenizerKind)k));
    return error_set(err, "%s: section SUBW: field kind is %lld, must be %d..%d (%s: a tokenizer of a newer nmt, or "
                          "a damaged file)", path, (long long)kind, TOKENIZER_BPE, TOKENIZER_KINDS - 1, known);
}

/* SUBW's two SentencePiece models (put_subw_rest), each loaded, so that a damaged one
 * is refused here, naming its side, rather than when text first meets it. */
static int read_spm_models(Reader r, Segmenter *seg, const char *path, Error *err)
{
    SpmModel *models[2] = {&seg->spm_src, &seg->spm_tgt};
    const char *names[2] = {"section SUBW: source SentencePiece model", "section SUBW: target SentencePiece model"};
    for (int k = 0; k < 2; k++) {
        uint64_t n;
        if (take(&r, &n, 8) || n > r.len - r.at)
            return error_set(err, "%s: section SUBW: SentencePiece models run past the section end", path);
        Error inner;
        if (segmenter_load_spm(models[k], r.p + r.at, (size_t)n, names[k], &inner))
            return error_set(err, "%s: %s", path, inner.msg);
        r.at += n;
    }
    if (r.at != r.len) return error_set(err, "%s: section SUBW: %zu unexpected bytes at its end", path, r.len - r.at);
    return 0;
}

/* SUBW after its head (put_subw_rest). Each side's codes are parsed by
 * bpe_from_text, so damaged merges are refused with the line they are on. */
static int read_subw_rest(Reader r, ModelFile *mf, const char *path, Error *err)
{
    Segmenter *seg = &mf->seg;
    if (seg->kind == TOKENIZER_NONE) {
        Section rest = {1, r.p + r.at, r.len - r.at};
        if (rest.len != layout_bytes(&format_layout))
            return error_set(err, "%s: section SUBW has %llu bytes, expected %zu for tokenizer none", path,
                             (unsigned long long)r.len, r.at + layout_bytes(&format_layout));
        return get_fields(&format_layout, &rest, mf, path, err);
    }
    if (seg->kind == TOKENIZER_SPM) return read_spm_models(r, seg, path, err);
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

/* How many of x[0..n-1] are NaN or infinite: one pass the compiler vectorises (a NaN
 * fails the comparison too), cheap beside the CRC the same bytes have been through. */
static long count_nonfinite(const float *x, long n)
{
    long count = 0;
#pragma omp simd reduction(+ : count)
    for (long i = 0; i < n; i++)
        count += !(fabsf(x[i]) <= FLT_MAX);
    return count;
}

/* Refuses n floats of a section (WGTS, or one of ADAM's moments: what and whats name
 * one and all) that hold a NaN or an infinity, naming the first and the tensor it
 * falls in (params_shapes order). The checksums cannot catch these: the file was
 * written so, by a run whose weights had already gone bad, or by another program. */
static int check_finite(const float *x, const ModelDims *md, long n, const char *section, const char *what,
                        const char *whats, const char *path, Error *err)
{
    long bad = count_nonfinite(x, n);
    if (bad == 0) return 0;
    long first = 0;
    while (first < n && fabsf(x[first]) <= FLT_MAX) first++;
    TensorShape shapes[MAX_TENSORS];
    int n_tensors = params_shapes(md, shapes), t = 0;
    long at = first;
    for (; t < n_tensors - 1 && at >= shapes[t].rows * shapes[t].cols; t++)
        at -= shapes[t].rows * shapes[t].cols;
    return error_set(err, "%s: section %s: %s %ld (tensor %s, row %ld, column %ld) is %s; %ld of the %ld %s %s not "
                          "finite. The checksums hold, so the file was written so (by a training run that "
                          "diverged?); nmt refuses it",
                     path, section, what, first, shapes[t].name, at / shapes[t].cols, at % shapes[t].cols,
                     isnan(x[first]) ? "NaN" : x[first] > 0 ? "+inf" : "-inf", bad, n, whats, bad == 1 ? "is" : "are");
}

/* ADAM after its head: m and v, n_params floats each. */
static int read_adam(const Section *s, ModelFile *mf, const char *path, Error *err)
{
    long n = mf->model.n_params;
    size_t head = layout_bytes(&adam_layout), bytes = sizeof(float) * (size_t)n;
    if (s->len != head + 2 * (uint64_t)bytes)
        return error_set(err, "%s: section ADAM has the wrong size for this model (%llu bytes, %zu expected)", path,
                         (unsigned long long)s->len, head + 2 * bytes);
    adam_init(&mf->opt, n, 0.0f);
    mf->has_optimizer = 1;
    if (get_fields(&adam_layout, s, mf, path, err)) return -1;
    memcpy(mf->opt.m, s->p + head, bytes);
    memcpy(mf->opt.v, s->p + head + bytes, bytes);
    if (check_finite(mf->opt.m, &mf->model.dims, n, "ADAM", "Adam's first moment m of weight", "first moments", path,
                     err) ||
        check_finite(mf->opt.v, &mf->model.dims, n, "ADAM", "Adam's second moment v of weight", "second moments",
                     path, err))
        return -1;
    return 0;
}

/* TRST (trainstate.h), which goes with ADAM and must stand at the file's step. */
static int read_trst(const Section *s, ModelFile *mf, const char *path, Error *err)
{
    if (!mf->has_optimizer)
        return error_set(err, "%s: section TRST without ADAM: a training state needs the optimizer's", path);
    if (trainstate_decode(s->p, s->len, path, &mf->train_state, err)) return -1;
    mf->has_train_state = 1;
    if (mf->train_state.step != mf->step || mf->train_state.step != mf->opt.step)
        return error_set(err, "%s: section TRST: step %ld disagrees with DIMS (%ld) or ADAM (%ld)", path,
                         mf->train_state.step, mf->step, mf->opt.step);
    return 0;
}

static int read_file(const char *path, ModelFile *mf, int for_decoding, Error *err);

int modelfile_read(const char *path, ModelFile *mf, Error *err) { return read_file(path, mf, 0, err); }
int modelfile_read_decoding(const char *path, ModelFile *mf, Error *err) { return read_file(path, mf, 1, err); }

static int read_file(const char *path, ModelFile *mf, int for_decoding, Error *err)
{
    memset(mf, 0, sizeof *mf);
    unsigned char *data = NULL;
    size_t len = 0;
    if (read_whole_file(path, &data, &len, err)) return -1;
    Section sec[N_SECTIONS] = {{0}};
    int status = -1;
    if (split_sections(data, len, path, sec, err)) goto done;

    /* The fixed fields, each in its range. DIMS's attention and n_params are said
     * again by ARCH and by the dimensions: keep DIMS's word to compare. */
    if (get_fields(&dims_layout, &sec[S_DIMS], mf, path, err)) goto done;
    int dims_attention = mf->model.dims.attention;
    long dims_params = mf->model.n_params;
    /* A model family's own section: at most one (a file without any holds a recurrent
     * model, as files from before the other families do). */
    int fam_kind = -1;
    for (int k = S_FIXED; k < N_SECTIONS; k++) {
        if (!sec[k].present) continue;
        if (fam_kind >= 0) {
            error_set(err, "%s: sections %s and %s both present: a model is a %s or a %s", path, section_tag(fam_kind),
                      section_tag(k), section_family(fam_kind)->title, section_family(k)->title);
            goto done;
        }
        fam_kind = k;
    }
    FamilyLayout fam;
    int with_fam = fam_kind >= 0 && family_layout(section_family(fam_kind), &fam);
    if (get_fields(&arch_layout, &sec[S_ARCH], mf, path, err) ||
        (with_fam && get_fields(&fam.t, &sec[fam_kind], mf, path, err)) ||
        subw_kind_known(&sec[S_SUBW], path, err) ||
        get_fields(&subw_layout, &sec[S_SUBW], mf, path, err) ||
        check_dims(mf, dims_attention, dims_params, sec, path, err))
        goto done;

    /* The variable-length sections, then the model they describe. */
    const ModelDims md = mf->model.dims;
    const Section *subw = &sec[S_SUBW];
    if (read_vocab(&sec[S_SVOC], "SVOC", "src_vocab", md.src_vocab, &mf->src_vocab, path, err) ||
        read_vocab(&sec[S_TVOC], "TVOC", "tgt_vocab", md.tgt_vocab, &mf->tgt_vocab, path, err) ||
        (subw->present && read_subw_rest((Reader){subw->p, subw->len, layout_bytes(&subw_layout)}, mf, path, err)))
        goto done;
    mf->text.whitespace_only = tokenizer_whitespace_only(mf->seg.kind);
    if (sec[S_USYM].present && read_symbols(&sec[S_USYM], mf, path, err)) goto done;
    model_alloc(&mf->model, &md);
    if (sec[S_QWTS].present) {
        mf->weights_int8 = 1;
        /* (data's own bytes: the decoding gives back their pages as it reads them) */
        unsigned char *qwts = data + (sec[S_QWTS].p - data);
        if (weights_int8_decode(qwts, sec[S_QWTS].len, &mf->model, for_decoding, path, err)) goto done;
    } else {
        memcpy(mf->model.param_mem, sec[S_WGTS].p, sec[S_WGTS].len);
        if (check_finite(mf->model.param_mem, &md, mf->model.n_params, "WGTS", "weight", "weights", path, err))
            goto done;
    }
    mf->config_json = xmalloc(sec[S_CONF].len + 1);
    memcpy(mf->config_json, sec[S_CONF].p, sec[S_CONF].len);
    mf->config_json[sec[S_CONF].len] = 0;
    if (mf->weights_int8 && (sec[S_ADAM].present || sec[S_TRST].present)) {
        error_set(err, "%s: section %s beside int8 weights (QWTS): a checkpoint's weights are float32", path,
                  sec[S_ADAM].present ? "ADAM" : "TRST");
        goto done;
    }
    if ((sec[S_ADAM].present && read_adam(&sec[S_ADAM], mf, path, err)) ||
        (sec[S_TRST].present && read_trst(&sec[S_TRST], mf, path, err)))
        goto done;
    status = 0;
done:
    free(data);
    if (status) modelfile_free(mf);
    return status;
}

int modelfile_version(const ModelFile *mf) { return mf->weights_int8 ? MODELFILE_VERSION_INT8 : MODELFILE_VERSION; }

int modelfile_trainable(const ModelFile *mf, const char *path, Error *err)
{
    if (!mf->weights_int8) return 0;
    return error_set(err, "%s: its weights are int8 (nmt quantize): such a file translates, scores and serves, but "
                          "training cannot go on from it; use the float32 model it was quantized from",
                     path);
}

int modelfile_has_magic(const char *path)
{
    return file_begins_with(path, MODELFILE_MAGIC, sizeof MODELFILE_MAGIC - 1);
}

void modelfile_free(ModelFile *mf)
{
    if (mf->model.param_mem) model_free(&mf->model);
    vocab_free(&mf->src_vocab);
    vocab_free(&mf->tgt_vocab);
    segmenter_free(&mf->seg);
    free(mf->config_json);
    user_symbols_free(&mf->symbols);
    if (mf->has_optimizer) adam_free(&mf->opt);
    if (mf->has_train_state) trainstate_free(&mf->train_state);
    memset(mf, 0, sizeof *mf);
}

void modelfile_point_symbols(ModelFile *mf)
{
    const UserSymbols *u = mf->symbols.n > 0 ? &mf->symbols : NULL;
    mf->text.symbols = u;
    mf->seg.symbols = u;
}

int modelfile_set_symbols(ModelFile *mf, char *const *given, int n, Error *err)
{
    user_symbols_free(&mf->symbols);
    int status = user_symbols_init(&mf->symbols, given, n, &mf->text, err);
    modelfile_point_symbols(mf);
    return status;
}

/* ---------------------------------------------------------------- compatibility */

/* Vocabulary a against b: the first word that differs, in msg. */
static int vocab_differs(const Vocab *a, const Vocab *b, const char *side, char *msg, size_t n)
{
    if (a->size != b->size) {
        snprintf(msg, n, "%s vocabulary: %d words and %d", side, a->size, b->size);
        return 1;
    }
    for (int i = 0; i < a->size; i++) {
        if (strcmp(a->words[i], b->words[i])) {
            snprintf(msg, n, "%s vocabulary: word %d is \"%.40s\" and \"%.40s\"", side, i, a->words[i],
                     b->words[i]);
            return 1;
        }
    }
    return 0;
}

static int merges_differ(const Bpe *a, const Bpe *b)
{
    char *ta = bpe_to_text(a), *tb = bpe_to_text(b);
    int differ = strcmp(ta, tb) != 0;
    free(ta);
    free(tb);
    return differ;
}

static int spm_models_differ(const SpmModel *a, const SpmModel *b)
{
    return a->n != b->n || memcmp(a->proto, b->proto, a->n) != 0;
}

int modelfile_compatible(const ModelFile *a, const ModelFile *b, int same_architecture, char *msg, size_t n)
{
    /* DIMS, ARCH, every family's section (a file without one reads as its fields'
     * absent values), SUBW's head and format. */
    FamilyLayout fams[MODEL_TYPES];
    const Layout *layouts[4 + MODEL_TYPES];
    int n_layouts = 0, n_families;
    const ModelFamily *const *families = model_families(&n_families);
    layouts[n_layouts++] = &dims_layout;
    layouts[n_layouts++] = &arch_layout;
    for (int k = 0; k < n_families; k++)
        if (family_layout(families[k], &fams[k])) layouts[n_layouts++] = &fams[k].t;
    layouts[n_layouts++] = &subw_layout;
    layouts[n_layouts++] = &format_layout;
    for (int k = 0; k < n_layouts; k++) {
        const Layout *t = layouts[k];
        for (int i = 0; i < t->n; i++) {
            const Field *f = &t->fields[i];
            if (!strcmp(f->name, "step") || !strcmp(f->name, "epoch")) continue;
            /* Without same_architecture only what the vocabularies and text depend on. */
            if (t == &format_layout && a->seg.kind != TOKENIZER_NONE) continue;
            int about_text = t->kind == S_SUBW || !strcmp(f->name, "src_vocab") || !strcmp(f->name, "tgt_vocab") ||
                             !strcmp(f->name, "lowercase") || !strcmp(f->name, "nfkc");
            if (!same_architecture && !about_text) continue;
            int64_t va = field_get(f, a), vb = field_get(f, b);
            if (va != vb) {
                snprintf(msg, n, "%s: %lld and %lld", f->name, (long long)va, (long long)vb);
                return 1;
            }
        }
    }
    if (vocab_differs(&a->src_vocab, &b->src_vocab, "source", msg, n) ||
        vocab_differs(&a->tgt_vocab, &b->tgt_vocab, "target", msg, n))
        return 1;
    if (a->seg.kind == TOKENIZER_BPE &&
        (merges_differ(&a->seg.src, &b->seg.src) || merges_differ(&a->seg.tgt, &b->seg.tgt))) {
        snprintf(msg, n, "their BPE merges differ");
        return 1;
    }
    if (a->seg.kind == TOKENIZER_SPM &&
        (spm_models_differ(&a->seg.spm_src, &b->seg.spm_src) || spm_models_differ(&a->seg.spm_tgt, &b->seg.spm_tgt))) {
        snprintf(msg, n, "their SentencePiece models differ");
        return 1;
    }
    int same_symbols = a->symbols.n == b->symbols.n;
    for (int i = 0; same_symbols && i < a->symbols.n; i++)
        same_symbols = !strcmp(a->symbols.given[i], b->symbols.given[i]);
    if (!same_symbols) {
        snprintf(msg, n, "their protected symbols (data.user_symbols) differ: %d and %d symbols", a->symbols.n,
                 b->symbols.n);
        return 1;
    }
    return 0;
}
