/* dataset.h — a training run's data: the config's sentence-pair files read, split into
 * training and validation pairs, segmented (BPE merges or SentencePiece models learned
 * from the training split), turned into vocabularies and encoded as examples; and the
 * batches a run draws from it.
 *
 *   data.train (+ data.valid) --tsv_read_pairs--> pairs --corpus_split--> train / valid
 *     --segmenter_learn_bpe or _spm, corpus_segment--> units --vocab_build--> vocabularies
 *     --corpus_encode--> Dataset.train, Dataset.valid
 *
 * Everything is a function of the files and the config (the seed decides the split), so
 * a resumed run prepares the very same examples; their fingerprints prove it
 * (trainstate.h).
 */
#ifndef DATASET_H
#define DATASET_H

#include <stdint.h>

#include "data/batch.h"     /* defines: Example */
#include "files/config.h"    /* defines: Config */
#include "eval/bleu.h"      /* defines: MetricOptions */
#include "base/console.h"   /* defines: Console */
#include "io/lines.h"     /* defines: LineLimit */
#include "io/outfile.h"   /* defines: OutFile */
#include "files/modelfile.h" /* defines: ModelFile */
#include "base/util.h"      /* defines: Error, Rng */

typedef struct {
    Example *train, *valid;     /* (n_train), (n_valid) encoded pairs */
    int n_train, n_valid;
    /* The validation pairs whose greedy translations are scored by BLEU at each
     * validation (up to train.valid_bleu_max, spread over the set, sorted by length):
     * sources and references as written (references segmented elsewhere read back as
     * the model's output is, segmenter_reference), scored as `nmt eval` scores them, with
     * bleu_metric: the tokeniser guessed from the references (bleu_tokenize_guess), and
     * lowercased when the model is (data.lowercase: it can write nothing else). */
    char **bleu_src, **bleu_ref;
    int n_bleu;
    MetricOptions bleu_metric;
    uint64_t train_fingerprint, valid_fingerprint;  /* examples_fingerprint of each split */
    int max_src, max_tgt;       /* the longest training source and target, in units */
    /* train.extend_vocab: the units added to each side's vocabulary (source, target; a
     * classifier's labels never grow), and the share of the training units that were
     * <unk> under the model's vocabularies before. */
    int vocab_added[2];
    double unk_before[2];
    OutFile valid_out;          /* valid.tsv, written but not yet in place (valid_pending) */
    int valid_pending;
} Dataset;

/* Reads data.train (and data.valid, or splits off train.valid_fraction of data.train),
 * learns the segmenter into mf->seg and builds mf->src_vocab and mf->tgt_vocab from the
 * training split, unless mf already holds vocabularies (train.init_from: the model's,
 * with its segmenter, used as they are, or with train.extend_vocab grown by the
 * training split's units they lack, vocab_extend); mf->text must hold the text options.
 * The held-out pairs are written as they were in the file to valid_tsv (NULL: not
 * written), for `nmt eval`: to its temporary file, put in place by
 * dataset_commit_valid once the run is sure to start (a refused run leaves the old
 * valid.tsv, or none). Says what it did on con. Returns 0, or -1 with err naming the
 * file (data.spm_model's, or data.train's when SentencePiece cannot train on it). */
int dataset_prepare(Dataset *ds, ModelFile *mf, const Config *cfg, const char *valid_tsv, Console *con, Error *err);
/* valid.tsv in place (nothing if dataset_prepare wrote none). 0, or -1 with err. */
int dataset_commit_valid(Dataset *ds, Error *err);
/* Frees ds; a valid.tsv not put in place is discarded. */
void dataset_free(Dataset *ds);

/* The longest line of data.train and data.valid: data.max_line_bytes, named in the
 * message that refuses a longer line. */
LineLimit dataset_line_limit(const Config *cfg);

/* The cross-entropy per target token of a unigram model fitted to the training targets
 * (add-one smoothed), on the validation targets: the loss a model that ignores the
 * source entirely would reach, so the number a real model must beat. */
double dataset_unigram_baseline(const Dataset *ds, int tgt_vocab);
/* A classifier's (its examples have labels, no targets): the baseline above is the
 * training classes' frequencies (add-one) scored on the validation labels, per example.
 * This is the validation accuracy of always answering the most frequent training
 * class, which *majority gets. */
double dataset_majority_accuracy(const Dataset *ds, int classes, int *majority);

/* One epoch's order of the training examples (n_train): length-bucketed
 * (train.bucket) or shuffled, drawn from rng. */
void dataset_epoch_order(const Dataset *ds, const Config *cfg, int *order, Rng *rng);

/* The number of training examples in the batch that starts at order[start], at most
 * end - start: train.batch_size of them, or with train.batch_tokens the longest run of
 * the next ones (at most batch_size, at least one) whose target tokens, <eos> included,
 * come to at most batch_tokens. */
int dataset_batch_at(const Dataset *ds, const Config *cfg, const int *order, int start, int end);

/* About how many batches an epoch has: exact for batches of train.batch_size pairs; with
 * train.batch_tokens the training split's target tokens over batch_tokens, or more when
 * batch_size caps the batches (for the progress line and the planned updates of a
 * teacher-forcing decay: it depends only on the data, never on an epoch's order). */
long dataset_batches_per_epoch(const Dataset *ds, const Config *cfg);

/* Writes the first train.max_steps batches (all epochs' batches when max_steps is 0),
 * drawn as training draws them, and up to 2000 validation sources as token ids, for
 * scripts/bench/bench_torch.py to train and decode on the very same data. The tensor format
 * of scripts/reference/fixture.py: records "dims" [src_vocab, tgt_vocab, batches, test
 * sentences], "batch.K.src" (S, B), "batch.K.tgt_in" (T, B), "batch.K.tgt_out" (T, B),
 * "test.src" (N, S_max) padded with 0, "test.len" (N). Returns 0 or -1 with err. */
int dataset_export(const Dataset *ds, const Config *cfg, const ModelFile *mf, const char *path, Console *con,
                   Error *err);
#endif
