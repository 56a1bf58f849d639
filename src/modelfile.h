/* modelfile.h — the versioned, checksummed model and checkpoint file.
 *
 * Everything needed to translate travels in one file: dimensions, text options,
 * both vocabularies, the training config and the weights; a checkpoint adds the Adam
 * state. Layout (all integers little-endian):
 *
 *   "NMTMODEL"                8 bytes magic
 *   u32 version               MODELFILE_VERSION
 *   u32 0x01020304            endianness marker: a big-endian writer would show 04030201
 *   u32 section count
 *   then per section:  4-byte tag, u64 payload bytes, u32 CRC-32 of the payload, payload
 *
 *   "DIMS"  i64 × 10: src_vocab, tgt_vocab, embed, hidden, attention (AttentionKind),
 *                     lowercase, nfkc, step, epoch, parameter count
 *   "ARCH"  i64 × 8: cell, layers, bidirectional, attention, input_feed, window, scaled,
 *                    tie_embeddings (ModelDims); absent in files written before the
 *                    model family, which read as one GRU layer with Bahdanau attention
 *   "CONF"  the training config as JSON text
 *   "SVOC", "TVOC"  u32 word count, then per word u32 byte length + UTF-8 bytes
 *   "SUBW"  (models with data.tokenizer bpe or char) i64 kind (TokenizerKind), i64 joint,
 *           then the source's and the target's BPE merges as codes text (subword.h),
 *           each u64 byte length + bytes; absent: word tokens
 *   "WGTS"  float32 × parameter count, in params_shapes() order
 *   "ADAM"  (checkpoints) i64 step, float32 m × count, float32 v × count
 *   "TRST"  (checkpoints that can be resumed) where training stands: trainstate.h
 *
 * Reading checks the magic, version, marker, every length against the file size and
 * every CRC before using a byte, so a truncated, corrupted or foreign file is refused
 * with a message naming the file and the problem, never a crash or a huge allocation.
 * Writing goes to PATH.tmp, fsync, rename over PATH: a crash leaves the old file or the
 * new one, never a torn one.
 */
#ifndef MODELFILE_H
#define MODELFILE_H

#include "adam.h"  /* defines: Adam */
#include "model.h" /* defines: Model, ModelDims */
#include "segment.h" /* defines: Segmenter */
#include "text.h"  /* defines: TextOptions */
#include "trainstate.h" /* defines: TrainState */
#include "util.h"  /* defines: Error */
#include "vocab.h" /* defines: Vocab */

#define MODELFILE_VERSION 1
#define ARCH_FIELDS 8

typedef struct {
    Model model;
    Vocab src_vocab, tgt_vocab;
    TextOptions text;
    Segmenter seg;        /* word tokens <-> the model's units */
    char *config_json;    /* the config it was trained with */
    long step, epoch;     /* training progress when written */
    int has_optimizer;    /* checkpoints: opt holds Adam's state */
    Adam opt;
    int has_train_state;  /* resumable checkpoints (with has_optimizer): train_state */
    TrainState train_state;
} ModelFile;

int modelfile_write(const char *path, const ModelFile *mf, Error *err);
int modelfile_read(const char *path, ModelFile *mf, Error *err);
/* Frees what modelfile_read allocated (the model, vocabularies, config, optimizer,
 * training state). */
void modelfile_free(ModelFile *mf);

uint32_t crc32_bytes(const void *data, size_t n);
#endif
