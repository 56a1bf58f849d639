#include "files/trainstate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h" // defines: fnv1a, FNV1A_BASIS

/* ---------------------------------------------------------------- the fields */

/* One row per 8-byte field: where it lives in TrainState, how it is stored, and its
 * range. Encoding, decoding and every check of a field's range read this table, so a
 * field cannot be written and forgotten by the reader. The order is the file's. */
typedef enum { F_INT, F_LONG, F_U64, F_DOUBLE } FieldType;
typedef struct {
    const char *name;
    FieldType type;
    size_t offset;
    double min, max;   /* integers and reals; NaN is always refused */
} Field;

#define F(name, type, lo, hi) {#name, type, offsetof(TrainState, name), lo, hi}
#define R(name, field, type) {#name, type, offsetof(TrainState, field), 0, 0}
static const Field fields[] = {
    F(step, F_LONG, 0, 1e15),
    F(epoch, F_INT, 1, 1e6 + 1),
    F(next, F_INT, 0, 2147483647.0),
    F(order_ready, F_INT, 0, 1),
    F(done, F_INT, 0, 1),
    F(n_train, F_INT, 1, 2147483647.0),
    R(shuffle_rng.state, shuffle_rng.state, F_U64),
    R(shuffle_rng.inc, shuffle_rng.inc, F_U64),
    R(model_rng.state, model_rng.state, F_U64),
    R(model_rng.inc, model_rng.inc, F_U64),
    F(learning_rate, F_DOUBLE, 0, 1e3),
    F(lr_factor, F_DOUBLE, 0, 1),
    F(lr_best_loss, F_DOUBLE, 0, INFINITY),
    F(lr_bad, F_INT, 0, 1e6),
    F(lr_decays, F_INT, 0, 1e9),
    F(best, F_DOUBLE, -INFINITY, INFINITY),
    F(best_step, F_LONG, 0, 1e15),
    F(last_validated, F_LONG, 0, 1e15),
    F(since_best, F_INT, 0, 1e9),
    F(nonfinite_in_a_row, F_INT, 0, 1e9),
    F(epoch_tokens, F_LONG, 0, 1e18),
    F(epoch_slots, F_LONG, 0, 1e18),
    F(window_loss, F_DOUBLE, -1e300, 1e300),
    F(window_seconds, F_DOUBLE, 0, 1e300),
    F(window_tokens, F_LONG, 0, 1e18),
    F(window_steps, F_LONG, 0, 1e15),
    F(elapsed_seconds, F_DOUBLE, 0, 1e300),
    F(log_bytes, F_LONG, 0, 1e18),
    F(n_valid, F_INT, 0, 2147483647.0),
    R(train_fingerprint, train_fingerprint, F_U64),
    R(valid_fingerprint, valid_fingerprint, F_U64),
    F(threads, F_INT, 1, 65536),
    /* Added after the first files were written: a payload with only the fields above
     * (FIRST_FIELDS) is read with the defaults of trainstate_decode. */
    F(ranks, F_INT, 1, 1048576),
    F(workers, F_INT, 1, 1024),
};
#undef F
#undef R
#define N_FIELDS (int)(sizeof fields / sizeof fields[0])
#define FIRST_FIELDS 32
#define HEADER_BYTES 8
#define KERNEL_BYTES 32

/* ---------------------------------------------------------------- writing */

unsigned char *trainstate_encode(const TrainState *s, size_t *len)
{
    size_t n = HEADER_BYTES + 8 * (size_t)N_FIELDS + KERNEL_BYTES + 4 * (size_t)s->n_train;
    unsigned char *p = xcalloc(n, 1), *at = p;
    uint32_t header[2] = {TRAINSTATE_VERSION, N_FIELDS};
    memcpy(at, header, sizeof header);
    at += sizeof header;
    for (int i = 0; i < N_FIELDS; i++, at += 8) {
        const char *field = (const char *)s + fields[i].offset;
        int64_t v;
        switch (fields[i].type) {
        case F_INT: v = *(const int *)field; memcpy(at, &v, 8); break;
        case F_LONG: v = *(const long *)field; memcpy(at, &v, 8); break;
        case F_U64: memcpy(at, field, 8); break;
        case F_DOUBLE: memcpy(at, field, 8); break;
        }
    }
    /* A fixed 32-byte field, NUL-padded (p is zeroed). */
    size_t name_len = strnlen(s->blas_kernel, KERNEL_BYTES - 1);
    memcpy(at, s->blas_kernel, name_len);
    at += KERNEL_BYTES;
    for (int i = 0; i < s->n_train; i++, at += 4) {
        int32_t v = s->order[i];
        memcpy(at, &v, 4);
    }
    *len = n;
    return p;
}

/* ---------------------------------------------------------------- reading */

/* The value of fields[i] as text, for messages. */
static void field_text(const Field *f, const unsigned char *at, char *out, size_t len)
{
    if (f->type == F_DOUBLE) {
        double v;
        memcpy(&v, at, 8);
        snprintf(out, len, "%g", v);
    } else {
        int64_t v;
        memcpy(&v, at, 8);
        snprintf(out, len, "%lld", (long long)v);
    }
}

int trainstate_decode(const unsigned char *payload, size_t len, const char *path, TrainState *s, Error *err)
{
    memset(s, 0, sizeof *s);
    uint32_t header[2];
    if (len < HEADER_BYTES) return error_set(err, "%s: section TRST: %zu bytes, too short for its header", path, len);
    memcpy(header, payload, sizeof header);
    if (header[0] != TRAINSTATE_VERSION)
        return error_set(err, "%s: section TRST: version %u, this nmt reads version %d", path, header[0],
                         TRAINSTATE_VERSION);
    if (header[1] < FIRST_FIELDS || header[1] > N_FIELDS)
        return error_set(err, "%s: section TRST: %u fields, version %d has %d to %d", path, header[1],
                         TRAINSTATE_VERSION, FIRST_FIELDS, N_FIELDS);
    int n_fields = (int)header[1];
    s->ranks = 1;  /* the defaults of the fields an older file lacks: one process, */
    s->workers = 1;  /* one worker */
    size_t fixed = HEADER_BYTES + 8 * (size_t)n_fields + KERNEL_BYTES;
    if (len < fixed) return error_set(err, "%s: section TRST: %zu bytes, the fields alone need %zu", path, len, fixed);

    const unsigned char *at = payload + HEADER_BYTES;
    char text[64];
    for (int i = 0; i < n_fields; i++, at += 8) {
        const Field *f = &fields[i];
        char *field = (char *)s + f->offset;
        if (f->type == F_U64) {
            memcpy(field, at, 8);
            continue;
        }
        double v;
        int64_t iv = 0;
        if (f->type == F_DOUBLE) {
            memcpy(&v, at, 8);
        } else {
            memcpy(&iv, at, 8);
            v = (double)iv;
        }
        if (!(v >= f->min && v <= f->max)) {
            field_text(f, at, text, sizeof text);
            return error_set(err, "%s: section TRST: field %s is %s, outside %g .. %g", path, f->name, text, f->min,
                             f->max);
        }
        if (f->type == F_DOUBLE) *(double *)field = v;
        else if (f->type == F_INT) *(int *)field = (int)iv;
        else *(long *)field = (long)iv;
    }
    if (memchr(at, 0, KERNEL_BYTES) == NULL)
        return error_set(err, "%s: section TRST: field blas_kernel is not NUL-terminated", path);
    memcpy(s->blas_kernel, at, KERNEL_BYTES);
    for (const char *c = s->blas_kernel; *c; c++)
        if (*c < 0x21 || *c > 0x7e)
            return error_set(err, "%s: section TRST: field blas_kernel holds a byte 0x%02x", path,
                             (unsigned char)*c);
    at += KERNEL_BYTES;

    /* The order's length follows from n_train, so compare before trusting n_train. */
    if ((len - fixed) / 4 != (size_t)s->n_train || (len - fixed) % 4)
        return error_set(err, "%s: section TRST: %zu bytes of order, n_train %d needs %zu", path, len - fixed,
                         s->n_train, 4 * (size_t)s->n_train);
    if (s->next > s->n_train)
        return error_set(err, "%s: section TRST: field next is %d, beyond n_train %d", path, s->next, s->n_train);
    if (!s->order_ready && s->next != 0)
        return error_set(err, "%s: section TRST: field next is %d before the epoch's order is drawn", path, s->next);
    if (s->best_step > s->step || s->last_validated > s->step || s->window_steps > s->step)
        return error_set(err, "%s: section TRST: best_step %ld, last_validated %ld or window_steps %ld beyond "
                              "step %ld", path, s->best_step, s->last_validated, s->window_steps, s->step);
    if (!(s->shuffle_rng.inc & 1) || !(s->model_rng.inc & 1))
        return error_set(err, "%s: section TRST: field %s.inc is even, which no seeded PCG stream has", path,
                         s->shuffle_rng.inc & 1 ? "model_rng" : "shuffle_rng");

    /* A permutation: every index once. */
    int n = s->n_train;
    int *order = xmalloc(sizeof(int) * n);
    unsigned char *seen = xcalloc(n, 1);
    for (int i = 0; i < n; i++, at += 4) {
        int32_t v;
        memcpy(&v, at, 4);
        if (v < 0 || v >= n || seen[v]) {
            error_set(err, "%s: section TRST: field order is not a permutation of 0..%d (entry %d is %d%s)", path,
                      n - 1, i, (int)v, v >= 0 && v < n ? ", a repeat" : "");
            free(order);
            free(seen);
            return -1;
        }
        seen[v] = 1;
        order[i] = v;
    }
    free(seen);
    s->order = order;
    return 0;
}

void trainstate_free(TrainState *s)
{
    free(s->order);
    s->order = NULL;
}

/* ---------------------------------------------------------------- fingerprints */

/* Both are FNV-1a (hash.h), whose values checkpoints store: they must not change
 * (tests/test_hash.c pins them). */

uint64_t floats_fingerprint(const float *x, long n)
{
    return fnv1a(FNV1A_BASIS, x, sizeof(float) * (size_t)n);
}

uint64_t examples_fingerprint(const Example *ex, int n)
{
    uint64_t h = FNV1A_BASIS;
    for (int i = 0; i < n; i++) {
        int32_t lens[2] = {ex[i].src_len, ex[i].tgt_len};
        h = fnv1a(h, lens, sizeof lens);
        for (int j = 0; j < ex[i].src_len; j++) {
            int32_t v = ex[i].src[j];
            h = fnv1a(h, &v, 4);
        }
        for (int j = 0; j < ex[i].tgt_len; j++) {
            int32_t v = ex[i].tgt[j];
            h = fnv1a(h, &v, 4);
        }
        if (ex[i].tgt_len == 0) {  /* a classifier's example: its class (a translation pair has a target) */
            int32_t v = ex[i].label;
            h = fnv1a(h, &v, 4);
        }
    }
    return h;
}
