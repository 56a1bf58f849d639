/* weights_int8.c — section QWTS: a model's weights as int8 rows (weights_int8.h). */
#include "files/weights_int8.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/matmul_int8.h" /* defines: int8_quantize_rows */

enum { FORM_FLOAT32 = 0, FORM_INT8_ROWS = 1 };

int weights_int8_stored(long rows, long cols) { return cols >= 2 && rows >= 1; }

static uint64_t tensor_bytes(const TensorShape *s)
{
    uint64_t n = (uint64_t)s->rows * (uint64_t)s->cols;
    return 4 + (weights_int8_stored(s->rows, s->cols) ? 4 * (uint64_t)s->rows + n : 4 * n);
}

uint64_t weights_int8_bytes(const ModelDims *d)
{
    TensorShape shapes[MAX_TENSORS];
    int n = params_shapes(d, shapes);
    uint64_t bytes = 4;
    for (int t = 0; t < n; t++)
        bytes += tensor_bytes(&shapes[t]);
    return bytes;
}

unsigned char *weights_int8_encode(const Model *m, size_t *len, const char *path, Error *err)
{
    TensorShape shapes[MAX_TENSORS];
    float *w[MAX_TENSORS];
    int n = params_shapes(&m->dims, shapes);
    params_tensors(&m->params, &m->dims, w);
    *len = (size_t)weights_int8_bytes(&m->dims);
    unsigned char *out = xmalloc(*len), *at = out;
    uint32_t count = (uint32_t)n;
    memcpy(at, &count, 4), at += 4;
    for (int t = 0; t < n; t++) {
        long rows = shapes[t].rows, cols = shapes[t].cols;
        uint32_t form = weights_int8_stored(rows, cols) ? FORM_INT8_ROWS : FORM_FLOAT32;
        memcpy(at, &form, 4), at += 4;
        if (form == FORM_FLOAT32) {
            memcpy(at, w[t], sizeof(float) * (size_t)(rows * cols)), at += sizeof(float) * (size_t)(rows * cols);
            continue;
        }
        float *scale = xmalloc(sizeof(float) * (size_t)rows);
        int8_quantize_rows((int8_t *)(at + 4 * rows), scale, w[t], (int)cols, (int)rows, (int)cols);
        memcpy(at, scale, sizeof(float) * (size_t)rows);
        /* 127 * scale rounds above FLT_MAX for a row whose largest weight is within a
         * rounding of it: such a row would read back infinite. */
        long r = 0;
        while (r < rows && fabsf(127.0f * scale[r]) <= FLT_MAX &&
               (scale[r] == 0.0f || (127.0f * scale[r]) / 127.0f == scale[r]))
            r++;
        free(scale);
        if (r < rows) {
            free(out);
            error_set(err, "%s: not written: tensor %s, row %ld: a weight within a rounding of the largest float "
                           "(or a scale without an exact round trip) has no int8 form",
                      path, shapes[t].name, r);
            return NULL;
        }
        at += 4 * rows + rows * cols;
    }
    return out;
}

/* Tensor t's float32 values (n of them) from p into w: each finite. */
static int read_floats(float *w, const unsigned char *p, long n, const TensorShape *s, const char *path, Error *err)
{
    memcpy(w, p, sizeof(float) * (size_t)n);
    for (long i = 0; i < n; i++)
        if (!(fabsf(w[i]) <= FLT_MAX))
            return error_set(err, "%s: section QWTS: tensor %s, weight %ld is not finite", path, s->name, i);
    return 0;
}

/* Tensor t's int8 rows: scales then values, checked and dequantized into w (rows x cols;
 * NULL: checked only). */
static int read_int8_rows(float *w, const unsigned char *p, const TensorShape *s, const char *path, Error *err)
{
    long rows = s->rows, cols = s->cols;
    const int8_t *q = (const int8_t *)(p + 4 * rows);
    for (long r = 0; r < rows; r++) {
        float scale;
        memcpy(&scale, p + 4 * r, 4);
        if (!(scale >= 0.0f && scale <= FLT_MAX))
            return error_set(err, "%s: section QWTS: tensor %s, row %ld: scale %g (a scale is finite, not negative)",
                             path, s->name, r, (double)scale);

        int qmax = 0;
        for (long c = 0; c < cols; c++) {
            int8_t v = q[r * cols + c];
            if (v == -128)
                return error_set(err, "%s: section QWTS: tensor %s, row %ld, column %ld is -128 (nmt writes -127..127)",
                                 path, s->name, r, c);
            qmax = abs(v) > qmax ? abs(v) : qmax;
            if (w) w[r * cols + c] = scale * (float)v;
        }
        if (!(127.0f * scale <= FLT_MAX))
            return error_set(err, "%s: section QWTS: tensor %s, row %ld: scale %g makes weights of 127 x %g, beyond "
                                  "the largest float",
                             path, s->name, r, (double)scale, (double)scale);
        /* A row as int8_quantize_rows makes it, so that writing what was read gives it
         * again: its largest value 127 (or all zeros) and a scale that 127 x scale / 127
         * gives back, not below INT8_MIN_AMAX / 127. */
        if (qmax != 0 && (qmax != 127 || !(127.0f * scale >= INT8_MIN_AMAX * 0.99f) ||
                          (127.0f * scale) / 127.0f != scale))
            return error_set(err, "%s: section QWTS: tensor %s, row %ld: largest value %d, scale %g: not a row nmt "
                                  "writes (its largest value is 127, its scale the largest weight / 127)",
                             path, s->name, r, qmax, (double)scale);
    }
    return 0;
}

/* Whether tensor w is one that int8 decoding reads only as int8 (ModelFamily.int8_only). */
static int decode_only(float *w, float **const *slot, int n_slots)
{
    for (int i = 0; i < n_slots; i++)
        if (*slot[i] == w) return 1;
    return 0;
}

/* Keeps tensor s's int8 rows (scales, then values, at p) in m->stored_int8. */
static void keep_rows(Model *m, float *w, const unsigned char *p, const TensorShape *s, int lookup)
{
    if (!m->stored_int8) m->stored_int8 = xcalloc(1, sizeof *m->stored_int8);
    StoredInt8 *t = &m->stored_int8->t[m->stored_int8->n++];
    t->at = w, t->rows = s->rows, t->cols = s->cols, t->lookup = lookup;
    t->scale = xmalloc(sizeof(float) * (size_t)s->rows);
    t->q = xmalloc((size_t)(s->rows * s->cols));
    memcpy(t->scale, p, sizeof(float) * (size_t)s->rows);
    memcpy(t->q, p + 4 * s->rows, (size_t)(s->rows * s->cols));
}

int weights_int8_decode(unsigned char *p, uint64_t len, Model *m, int for_decoding, const char *path, Error *err)
{
    TensorShape shapes[MAX_TENSORS];
    float *w[MAX_TENSORS];
    int n = params_shapes(&m->dims, shapes);
    params_tensors(&m->params, &m->dims, w);
    float **slot[MAX_TENSORS];
    long slot_n[MAX_TENSORS];
    const ModelFamily *f = model_family(&m->dims);
    int n_slots = for_decoding && f && f->int8_only ? f->int8_only(m, slot, slot_n) : 0;
    uint32_t count;
    if (len < 4) return error_set(err, "%s: section QWTS: truncated (%llu bytes)", path, (unsigned long long)len);
    memcpy(&count, p, 4);
    if (count != (uint32_t)n)
        return error_set(err, "%s: section QWTS holds %u tensors, the dimensions have %d", path, count, n);
    uint64_t at = 4;
    for (int t = 0; t < n; t++) {
        const TensorShape *s = &shapes[t];
        uint32_t form;
        if (len - at < 4) return error_set(err, "%s: section QWTS: truncated at tensor %s", path, s->name);
        memcpy(&form, p + at, 4);
        at += 4;
        int int8_rows = weights_int8_stored(s->rows, s->cols);
        if (form != (int8_rows ? FORM_INT8_ROWS : FORM_FLOAT32))
            return error_set(err, "%s: section QWTS: tensor %s has form %u, nmt stores it as %s", path, s->name, form,
                             int8_rows ? "int8 rows (1)" : "float32 (0)");
        uint64_t need = tensor_bytes(s) - 4;
        if (len - at < need)
            return error_set(err, "%s: section QWTS: truncated in tensor %s (%llu bytes left, %llu needed)", path,
                             s->name, (unsigned long long)(len - at), (unsigned long long)need);
        /* A weight decoding reads only as int8: kept as the file's rows, its float
         * weights left unwritten. */
        /* The embeddings too, looked up row by row from the int8 rows (model_embed), where
         * the family decodes with int8 products (it has int8_only). */
        int lookup = n_slots > 0 && w[t] && (w[t] == m->params.src_emb || w[t] == m->params.tgt_emb);
        int keep = int8_rows && (decode_only(w[t], slot, n_slots) || lookup);
        if (int8_rows ? read_int8_rows(keep ? NULL : w[t], p + at, s, path, err)
                      : read_floats(w[t], p + at, s->rows * s->cols, s, path, err))
            return -1;
        if (keep) keep_rows(m, w[t], p + at, s, lookup);
        memory_give_back(p + at, (size_t)need);  /* read: the float weights hold it now */
        at += need;
    }
    if (at != len)
        return error_set(err, "%s: section QWTS: %llu bytes after the last tensor", path,
                         (unsigned long long)(len - at));
    return 0;
}
