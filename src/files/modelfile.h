/* modelfile.h — the versioned, checksummed model and checkpoint file.
 *
 * Everything needed to translate travels in one file: dimensions, text options,
 * both vocabularies, the training config and the weights; a checkpoint adds the Adam
 * state. Layout (all integers little-endian):
 *
 *   "NMTMODEL"                8 bytes magic (MODELFILE_MAGIC)
 *   u32 version               MODELFILE_VERSION (1), or MODELFILE_VERSION_INT8 (2) for a
 *                             file whose weights are int8 (QWTS in place of WGTS)
 *   u32 0x01020304            endianness marker: a big-endian writer would show 04030201
 *   u32 section count
 *   then per section:  4-byte tag, u64 payload bytes, u32 CRC-32 of the payload, payload
 *
 *   "DIMS"  i64 × 10: src_vocab, tgt_vocab, embed, hidden, attention (AttentionKind),
 *                     lowercase, nfkc, step, epoch, n_params (the parameter count)
 *   "ARCH"  i64 × 8: cell, layers, bidirectional, attention, input_feed, window, scaled,
 *                    tie_embeddings (ModelDims); absent in files written before the
 *                    model family, which read as one GRU layer with Bahdanau attention
 *   then at most one model family's own section (ModelFamily.file_section, whose
 *   fields its family's file describes: transformer.c, classifier.c); none: a
 *   recurrent model
 *   "TRFM"  (Transformers) i64 x 8: type, heads, ff, activation, norm, enc_layers,
 *           dec_layers, share_src_emb
 *   "CLSF"  (classifiers) i64 x 2 or 3: type (MODEL_CLASSIFIER), pooling (Pooling),
 *           bag_of_words (written only when 1: a file without it reads as 0, and an nmt
 *           from before it reads a classifier without one); the label set is TVOC
 *           (after its four reserved ids), the classes in id order
 *   "CONF"  the training config as JSON text
 *   "SVOC", "TVOC"  u32 word count, then per word u32 byte length + UTF-8 bytes
 *   "SUBW"  (models with data.tokenizer other than word) i64 kind (TokenizerKind: 1 bpe,
 *           2 char, 3 none, 4 spm), i64 joint, then by kind:
 *             bpe, char  the source's and the target's BPE merges as codes text
 *                        (subword.h), each u64 byte length + bytes
 *             none       i64 format (SubwordFormat: 0 none, 1 bpe_at, 2 spm)
 *             spm        the source's and the target's SentencePiece models, as a
 *                        .model file holds them (a serialized ModelProto), each u64
 *                        byte length + bytes (joint: the same model twice)
 *           absent: word tokens. TextOptions.whitespace_only is not stored: it follows
 *           from the kind (tokenizer_whitespace_only). A kind this nmt does not know is
 *           refused as a newer nmt's.
 *   "USYM"  (models with data.user_symbols) the protected symbols (text/text.h) as
 *           given: u32 count, then per symbol u32 byte length + UTF-8 bytes. Absent: none
 *           (every file before them); a file with it is refused by an nmt before them
 *           as having an unknown section
 *   "WGTS"  float32 × n_params, in params_shapes() order (version 1)
 *   "QWTS"  (version 2, written by nmt quantize, in place of WGTS) the weights as int8
 *           rows with a scale each, the vectors float32: files/weights_int8.h. Such a
 *           file holds no ADAM or TRST
 *   "ADAM"  (checkpoints) i64 step, float32 m × n_params, float32 v × n_params
 *   "TRST"  (checkpoints that can be resumed) where training stands: trainstate.h
 *
 * The i64 fields of DIMS, ARCH and the heads of SUBW and ADAM are described once, in
 * modelfile.c's field tables (name, place in ModelFile, range, value when the section
 * is absent), which both the writer and the reader go through.
 *
 * Reading checks the magic, version, marker, every length against the file size and
 * every CRC before using a byte, then every field against its range and the model's
 * own rules (dims_problem), so a truncated, corrupted or foreign file is refused with
 * a message naming the file and the problem ("section DIMS: field hidden is 0, must be
 * 1..8192"), never a crash or a huge allocation. Writing refuses (before creating
 * anything) a field the reader would refuse, so a written file always reads back.
 * Writing goes to PATH.tmp, fsync, rename over PATH: a crash leaves the old file or the
 * new one, never a torn one.
 */
#ifndef MODELFILE_H
#define MODELFILE_H

#include "layers/adam.h"  /* defines: Adam */
#include "models/model.h" /* defines: Model, ModelDims */
#include "text/segment.h" /* defines: Segmenter */
#include "text/text.h"    /* defines: TextOptions, UserSymbols, USER_SYMBOLS_MAX */
#include "files/trainstate.h" /* defines: TrainState */
#include "base/util.h"  /* defines: Error */
#include "text/vocab.h" /* defines: Vocab */

/* MODELFILE_MAGIC, "NMTMODEL", the first 8 bytes of every model file: base/util.h */
#define MODELFILE_VERSION 1
#define MODELFILE_VERSION_INT8 2

typedef struct {
    Model model;
    Vocab src_vocab, tgt_vocab;
    TextOptions text;     /* its symbols: &symbols when there are some */
    Segmenter seg;        /* word tokens <-> the model's units; its symbols: as text's */
    UserSymbols symbols;  /* protected symbols (data.user_symbols), normalised as text says */
    char *config_json;    /* the config it was trained with */
    int weights_int8;     /* its weights are int8 rows (QWTS, nmt quantize): written and read so */
    long step, epoch;     /* training progress when written */
    int has_optimizer;    /* checkpoints: opt holds Adam's state */
    Adam opt;
    int has_train_state;  /* resumable checkpoints (with has_optimizer): train_state */
    TrainState train_state;
} ModelFile;

/* 0, or -1 with a message naming path (a field out of range, or an I/O error). */
int modelfile_write(const char *path, const ModelFile *mf, Error *err);
/* 0 with mf filled, or -1 with a message naming path and mf empty. */
int modelfile_read(const char *path, ModelFile *mf, Error *err);
/* The same, for a run that will decode with int8 products and nothing else (nmt
 * translate, nmt serve): from a file with int8 weights, the matrices that int8 decoding
 * reads only as int8 stay the file's int8 rows (Model.stored_int8) and cost no float
 * memory; model_prepare_decoding packs them as they are (and writes their float weights
 * first for any other compute type). A float file reads as modelfile_read reads it. */
int modelfile_read_decoding(const char *path, ModelFile *mf, Error *err);
/* The format version mf is written in: 2 with int8 weights, else 1. */
int modelfile_version(const ModelFile *mf);
/* 0 if training may start or go on from mf (read from path); -1 with err if its
 * weights are int8 (train.init_from, resuming, nmt average). */
int modelfile_trainable(const ModelFile *mf, const char *path, Error *err);
/* 1 if path is a regular file (not a symbolic link) that begins with MODELFILE_MAGIC:
 * a file nmt wrote as a model, whole or not. */
int modelfile_has_magic(const char *path);
/* Frees what modelfile_read allocated (the model, vocabularies, config, optimizer,
 * training state, symbols). */
void modelfile_free(ModelFile *mf);

/* mf's protected symbols from the n given (user_symbols_init with mf->text's options),
 * and mf->text and mf->seg pointed at them (at none when n is 0). 0, or -1 with err.
 * A ModelFile moved elsewhere points at its old place: modelfile_point_symbols again. */
int modelfile_set_symbols(ModelFile *mf, char *const *given, int n, Error *err);
void modelfile_point_symbols(ModelFile *mf);

/* Whether a and b read and write text the same way: the same vocabularies, text
 * options and segmenter (BPE merges), and with same_architecture also the same
 * dimensions and architecture, so that their weights line up one to one (the protected
 * symbols count as a way of reading text). 0 if so;
 * else 1 and what differs first in msg[n] ("layers: 1 and 2", "target vocabulary:
 * word 17 is ..."). Training progress (step, epoch) does not count. */
int modelfile_compatible(const ModelFile *a, const ModelFile *b, int same_architecture, char *msg, size_t n);

uint32_t crc32_bytes(const void *data, size_t n);
#endif
