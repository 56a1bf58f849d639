/* trainlog.h — OUTPUT_DIR/train.log, the record of a training run: its schema, said
 * once, and the code that writes and reads it.
 *
 * One JSON object per line. Step lines have no "event" key; every other line has one.
 * The lines and their fields, in the order they are written ([ ] optional):
 *
 *   (step)       step epoch loss tokens_per_s learning_rate grad_norm teacher_forcing
 *                [ranks allreduce_s]
 *                every train.log_every updates: loss is the mean loss per target token
 *                and tokens_per_s the target tokens per second of the updates since the
 *                last step line; allreduce_s the seconds per step spent in the sum over
 *                the ranks of a data-parallel job
 *   start        train_pairs valid_pairs src_vocab tgt_vocab parameters
 *                unigram_valid_loss [bleu_signature] [classes]
 *                classes: a classifier's number of classes (what tells `nmt plot` that
 *                the losses are per example, not per target token)
 *   validation   step epoch valid_loss [valid_ppl] [valid_bleu bleu_pairs]
 *                [valid_accuracy] learning_rate best seconds elapsed
 *                valid_ppl: a translation model's (a classifier's loss is per line, not
 *                per token; it has valid_accuracy instead)
 *                seconds: the validation's own time; elapsed: the run's clock when it
 *                began (seconds of training and earlier validations since step 0,
 *                across resumes), the x of a quality-against-time curve
 *   lr_decay     step learning_rate
 *   early_stop   step epoch best_step [best_loss | best_bleu]
 *   nonfinite    step epoch batch loss grad_norm in_a_row   (loss and grad_norm may be
 *                the strings "nan", "inf", "-inf": JSON has no such numbers)
 *   epoch        epoch step target_tokens target_slots target_padding
 *   interrupted  step epoch signal ("SIGINT" or "SIGTERM")
 *   resume       step epoch batch lines_cut
 *
 * trainlog.c's table holds each line's fields with their JSON type and the printf
 * format of their numbers, so that writing (trainlog_write) and reading
 * (trainlog_parse, trainlog_read: `nmt plot`, the chart at the end of training) cannot
 * disagree.
 *
 *   LogLine l = {LOG_LR_DECAY, .v = {[LF_STEP] = step, [LF_LEARNING_RATE] = lr}};
 *   trainlog_write(&log, &l);
 */
#ifndef TRAINLOG_H
#define TRAINLOG_H

#include <stdint.h>
#include <stdio.h>

#include "base/util.h" /* defines: Error */

typedef enum {
    LOG_STEP, LOG_START, LOG_VALIDATION, LOG_LR_DECAY, LOG_EARLY_STOP, LOG_NONFINITE, LOG_EPOCH,
    LOG_INTERRUPTED, LOG_RESUME,
    LOG_OTHER,  /* read only: an "event" this nmt does not know (a newer one wrote it) */
    LOG_KINDS
} LogKind;

/* Every field of every line. */
typedef enum {
    LF_STEP, LF_EPOCH, LF_BATCH, LF_LOSS, LF_TOKENS_PER_S, LF_LEARNING_RATE, LF_GRAD_NORM, LF_TEACHER_FORCING,
    LF_RANKS, LF_ALLREDUCE_S,
    LF_TRAIN_PAIRS, LF_VALID_PAIRS, LF_SRC_VOCAB, LF_TGT_VOCAB, LF_PARAMETERS, LF_UNIGRAM_VALID_LOSS,
    LF_VALID_LOSS, LF_VALID_PPL, LF_VALID_BLEU, LF_BLEU_PAIRS, LF_BEST, LF_SECONDS, LF_ELAPSED,
    LF_BEST_STEP, LF_BEST_LOSS, LF_BEST_BLEU,
    LF_IN_A_ROW,
    LF_TARGET_TOKENS, LF_TARGET_SLOTS, LF_TARGET_PADDING,
    LF_SIGNAL, LF_LINES_CUT, LF_BLEU_SIGNATURE,
    LF_VALID_ACCURACY, LF_BEST_ACCURACY, LF_CLASSES,   /* a classifier's */
    LF_FIELDS
} LogField;

/* One line. v[f] holds field f's value (integers and booleans as numbers: exact up to
 * 2^53); the line's string field, if it has one, is text. Writing takes every field
 * of the kind from v, except optional ones whose bit in `optional` is clear; reading
 * sets the bit in `has` of every field found with the right type. */
typedef struct {
    LogKind kind;
    double v[LF_FIELDS];
    char text[96];       /* a string field: the signal's name, the BLEU signature */
    uint64_t optional;   /* writing: the optional fields to write (log_bit) */
    uint64_t has;        /* reading: the fields the line had */
} LogLine;

static inline uint64_t log_bit(LogField f) { return (uint64_t)1 << f; }

/* Sets optional field f of l to value, to be written. */
static inline void log_put(LogLine *l, LogField f, double value)
{
    l->v[f] = value;
    l->optional |= log_bit(f);
}

/* train.log as a run writes it: every record is one line written whole (one pwrite at
 * the end of the last whole one); a record that cannot be written (a full disk, an I/O
 * error) leaves no part of itself: the file is cut back to its last whole line, and the
 * record is counted as lost, so that the run can say so and end with an error while its
 * training goes on. bytes is the file's length, which a checkpoint records. */
typedef struct {
    int fd, fd_open;    /* fd_open 0: no log (the ranks other than 0 keep none) */
    long bytes;         /* the length of the whole lines written */
    long lost;          /* records not written */
    int first_errno;    /* why the first was not */
    long first_step;    /* its step field (0 for lines without one) */
    long full_at;       /* test hook (NMT_FULL_DISK_AT=train.log@BYTES): no byte past it is
                           written, as on a disk full there; -1: off */
} TrainLog;

/* The longest line nmt writes, with room to spare. */
#define TRAINLOG_LINE_MAX 1024

/* l as one line (with its '\n') in buf; its length (cap or more: it did not fit; 0 and
 * "" for LOG_OTHER, which is never written). */
size_t trainlog_format(const LogLine *l, char *buf, size_t cap);
/* Appends l as one line. 0, or -1 when it could not be written whole: the file keeps
 * its whole lines only, and log->lost counts it (the first's reason and step kept).
 * A log that is not open (fd_open 0) takes nothing and returns 0. */
int trainlog_write(TrainLog *log, const LogLine *l);
/* Closes the file (if open). */
void trainlog_close(TrainLog *log);

/* Parses one line. Returns 0 if it is a JSON object with no "event" (a step line) or a
 * string "event" (LOG_OTHER if unknown); -1 if not. Fields of the wrong type are left
 * out of l->has rather than failing the line: the reader decides what it needs. */
int trainlog_parse(const char *text, LogLine *l);

/* What trainlog_read skipped: lines that are not blank, and those among them that were
 * malformed (trainlog_parse refused them, or the caller's each() returned 0). */
typedef struct {
    long n_lines;
    int n_malformed;
    long first_malformed;  /* its line number (from 1), 0 if none */
} LogReadStats;

/* Reads train.log from f line by line (lines.h; a line over the default limit counts as
 * malformed) and calls each(ctx, &line) for every line that parses; each returns 1 if
 * the line is usable (or ignored on purpose), 0 if malformed. Never fails on content;
 * returns -1 with "NAME: read error: REASON" in err only on a read error. */
int trainlog_read(FILE *f, const char *name, int (*each)(void *ctx, const LogLine *l), void *ctx,
                  LogReadStats *stats, Error *err);
/* "NAME: skipped N malformed lines (the first is line L)", or "" if none. */
void trainlog_describe_skipped(const LogReadStats *stats, const char *name, char *buf, size_t cap);

/* Creates (or empties) path for a new run's log; never through a symbolic link. 0, or
 * -1 with err naming path. */
int trainlog_create(TrainLog *log, const char *path, Error *err);

/* Opens path to go on from a checkpoint taken when it was log_bytes long: what was
 * logged after it (work that will be redone) is cut off, so that each step is logged
 * once. A log shorter than that is appended to, with a warning in *warning (else "").
 * The number of lines cut in *cut. 0, or -1 with err (a read error counting them
 * included). Never through a symbolic link. */
int trainlog_reopen(TrainLog *log, const char *path, long log_bytes, long *cut, char *warning, size_t cap,
                    Error *err);
#endif
