/* weights_int8.h — a model file's weights as 8-bit integers (`nmt quantize`): the
 * payload of section QWTS, which takes the place of WGTS.
 *
 * Every tensor with rows of at least two weights (the matrices: embeddings, recurrent
 * and linear weights, the output layer) is stored as int8, one scale per row, as
 * kernels/matmul_int8.h quantizes a weight for its products (w = scale * q, q in
 * -127..127); the vectors (biases, layer norms' gains and shifts) stay float32. A
 * file is then about a quarter of the float one. Layout, params_shapes() order:
 *
 *   u32 tensor count (the model's)
 *   then per tensor: u32 form (0 float32, 1 int8 rows), then
 *     float32                 rows x cols floats
 *     int8 rows               rows float32 scales, then rows x cols int8 values
 *
 * Reading gives the float weights those integers stand for (scale * q): a model read
 * from such a file is an ordinary model whose weights lie on the int8 grid, so every
 * command that decodes or scores takes it as it is; decoding prepares its products as
 * int8 again (kernels/prepared.h), which finds the very integers and scales stored:
 * the largest of a row's weights read is 127 x scale, and (127 x scale) / 127 rounds
 * back to scale (for every scale of a normal float's range: checked for every float
 * of [1, 2) as the largest weight) while the integers come out within float roundings
 * of whole numbers (tests/test_weights_int8.c). Only a block of a row's columns, which
 * the recurrent decoder's first layer multiplies on its own, is quantized afresh.
 */
#ifndef WEIGHTS_INT8_H
#define WEIGHTS_INT8_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"    /* defines: Error */
#include "models/model.h" /* defines: Model, ModelDims */

/* Whether a (rows, cols) tensor is stored as int8 rows: rows of two or more weights. */
int weights_int8_stored(long rows, long cols);
/* QWTS's payload for m's weights (malloc'd, *len bytes), or NULL with err naming path
 * where a row would not read back: a weight within a rounding of the largest float.
 * The weights must be finite (a model file's always are). */
unsigned char *weights_int8_encode(const Model *m, size_t *len, const char *path, Error *err);
/* Fills m (allocated for its dimensions: model_alloc) from a QWTS payload of len bytes,
 * checking its every count, form and length, that each scale is finite and not
 * negative, every float finite and no value -128 (which nmt never writes). 0, or -1
 * with err naming path, the tensor and the problem. The payload is read once: the
 * whole pages of each tensor read are given back to the system as it goes
 * (memory_give_back; they read as zeros after), so that the file's bytes and the float
 * weights they become are not held at once. for_decoding: the matrices that int8
 * decoding reads only as int8 (ModelFamily.int8_only) are kept as their rows in
 * m->stored_int8 instead, their float weights unwritten (model.h: StoredInt8). */
int weights_int8_decode(unsigned char *p, uint64_t len, Model *m, int for_decoding, const char *path, Error *err);
/* The payload's size for these dimensions: what nmt info reports, and `nmt quantize`. */
uint64_t weights_int8_bytes(const ModelDims *d);
#endif
