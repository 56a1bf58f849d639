/* test_modelfile_damage.c — damaged model files (src/files/modelfile.c).
 *
 * Every damaged file — truncated anywhere, any byte flipped, a crafted field with a
 * recomputed checksum, a field out of its range, weights that are NaN or infinite — must
 * be refused with -1 and a message that names the file, never a crash or a huge
 * allocation; what the reader would refuse, the writer does not write.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modelfile_checks.h"  /* defines: make_model_file, check_same, refused, sections_of, fix_crc, flip_every_byte, dir, path, bad */

/* ---------------------------------------------------------------- damage */

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

int main(void)
{
    modelfile_checks_begin("nmt_test_modelfile_damage");
    test_truncated();
    test_flipped();
    test_crafted();
    test_field_ranges();
    test_write_refuses_out_of_range();
    test_nonfinite();
    modelfile_checks_end();
    return check_report("test_modelfile_damage");
}
