#include "files/trainlog.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "base/testhook.h" /* defines: testhook_full_disk_bytes */
#include "io/lines.h"     /* defines: LineReader, line_read, lines_read_error */

/* ---------------------------------------------------------------- the schema */

/* How a field is written: an integer, a real in the slot's printf format, a real that
 * may be non-finite (then a string, as JSON has no NaN), a boolean, or a string. */
typedef enum { T_INT, T_REAL, T_REAL_OR_STRING, T_BOOL, T_STRING } FieldType;

static const struct {
    const char *key;
    FieldType type;
} fields[LF_FIELDS] = {
    [LF_STEP] = {"step", T_INT},
    [LF_EPOCH] = {"epoch", T_INT},
    [LF_BATCH] = {"batch", T_INT},
    [LF_LOSS] = {"loss", T_REAL},
    [LF_TOKENS_PER_S] = {"tokens_per_s", T_REAL},
    [LF_LEARNING_RATE] = {"learning_rate", T_REAL},
    [LF_GRAD_NORM] = {"grad_norm", T_REAL},
    [LF_TEACHER_FORCING] = {"teacher_forcing", T_REAL},
    [LF_RANKS] = {"ranks", T_INT},
    [LF_ALLREDUCE_S] = {"allreduce_s", T_REAL},
    [LF_TRAIN_PAIRS] = {"train_pairs", T_INT},
    [LF_VALID_PAIRS] = {"valid_pairs", T_INT},
    [LF_SRC_VOCAB] = {"src_vocab", T_INT},
    [LF_TGT_VOCAB] = {"tgt_vocab", T_INT},
    [LF_PARAMETERS] = {"parameters", T_INT},
    [LF_UNIGRAM_VALID_LOSS] = {"unigram_valid_loss", T_REAL},
    [LF_VALID_LOSS] = {"valid_loss", T_REAL},
    [LF_VALID_PPL] = {"valid_ppl", T_REAL},
    [LF_VALID_BLEU] = {"valid_bleu", T_REAL},
    [LF_BLEU_PAIRS] = {"bleu_pairs", T_INT},
    [LF_BEST] = {"best", T_BOOL},
    [LF_SECONDS] = {"seconds", T_REAL},
    [LF_ELAPSED] = {"elapsed", T_REAL},
    [LF_BEST_STEP] = {"best_step", T_INT},
    [LF_BEST_LOSS] = {"best_loss", T_REAL},
    [LF_BEST_BLEU] = {"best_bleu", T_REAL},
    [LF_IN_A_ROW] = {"in_a_row", T_INT},
    [LF_TARGET_TOKENS] = {"target_tokens", T_INT},
    [LF_TARGET_SLOTS] = {"target_slots", T_INT},
    [LF_TARGET_PADDING] = {"target_padding", T_REAL},
    [LF_SIGNAL] = {"signal", T_STRING},
    [LF_LINES_CUT] = {"lines_cut", T_INT},
    [LF_BLEU_SIGNATURE] = {"bleu_signature", T_STRING},
    [LF_VALID_ACCURACY] = {"valid_accuracy", T_REAL},
    [LF_BEST_ACCURACY] = {"best_accuracy", T_REAL},
    [LF_CLASSES] = {"classes", T_INT},
};

/* A field's place in a line: reals need their format; optional fields are written only
 * when the writer asks (LogLine.optional). The lists end at the first empty slot. */
typedef struct {
    LogField f;
    const char *format;
    int optional;
} Slot;

#define MAX_SLOTS 12
#define REQ(f, fmt) {f, fmt, 0}
#define OPT(f, fmt) {f, fmt, 1}
#define END {LF_FIELDS, NULL, 0}

static const struct {
    const char *event;   /* NULL: the step line, which has no "event" key */
    Slot slot[MAX_SLOTS];
} lines[LOG_KINDS] = {
    [LOG_STEP] = {NULL, {REQ(LF_STEP, 0), REQ(LF_EPOCH, 0), REQ(LF_LOSS, "%.6f"), REQ(LF_TOKENS_PER_S, "%.1f"),
                         REQ(LF_LEARNING_RATE, "%g"), REQ(LF_GRAD_NORM, "%.4f"), REQ(LF_TEACHER_FORCING, "%.4f"),
                         OPT(LF_RANKS, 0), OPT(LF_ALLREDUCE_S, "%.5f"), END}},
    [LOG_START] = {"start", {REQ(LF_TRAIN_PAIRS, 0), REQ(LF_VALID_PAIRS, 0), REQ(LF_SRC_VOCAB, 0),
                             REQ(LF_TGT_VOCAB, 0), REQ(LF_PARAMETERS, 0), REQ(LF_UNIGRAM_VALID_LOSS, "%.6f"),
                             OPT(LF_BLEU_SIGNATURE, 0), OPT(LF_CLASSES, 0), END}},
    [LOG_VALIDATION] = {"validation", {REQ(LF_STEP, 0), REQ(LF_EPOCH, 0), REQ(LF_VALID_LOSS, "%.6f"),
                                       OPT(LF_VALID_PPL, "%.4f"), OPT(LF_VALID_BLEU, "%.4f"), OPT(LF_BLEU_PAIRS, 0),
                                       OPT(LF_VALID_ACCURACY, "%.6f"),
                                       REQ(LF_LEARNING_RATE, "%g"), REQ(LF_BEST, 0), REQ(LF_SECONDS, "%.2f"),
                                       REQ(LF_ELAPSED, "%.2f"), END}},
    [LOG_LR_DECAY] = {"lr_decay", {REQ(LF_STEP, 0), REQ(LF_LEARNING_RATE, "%g"), END}},
    [LOG_EARLY_STOP] = {"early_stop", {REQ(LF_STEP, 0), REQ(LF_EPOCH, 0), REQ(LF_BEST_STEP, 0),
                                       OPT(LF_BEST_LOSS, "%.6f"), OPT(LF_BEST_BLEU, "%.6f"),
                                       OPT(LF_BEST_ACCURACY, "%.6f"), END}},
    [LOG_NONFINITE] = {"nonfinite", {REQ(LF_STEP, 0), REQ(LF_EPOCH, 0), REQ(LF_BATCH, 0), REQ(LF_LOSS, "%.6g"),
                                     REQ(LF_GRAD_NORM, "%.6g"), REQ(LF_IN_A_ROW, 0), END}},
    [LOG_EPOCH] = {"epoch", {REQ(LF_EPOCH, 0), REQ(LF_STEP, 0), REQ(LF_TARGET_TOKENS, 0), REQ(LF_TARGET_SLOTS, 0),
                             REQ(LF_TARGET_PADDING, "%.4f"), END}},
    [LOG_INTERRUPTED] = {"interrupted", {REQ(LF_STEP, 0), REQ(LF_EPOCH, 0), REQ(LF_SIGNAL, 0), END}},
    [LOG_RESUME] = {"resume", {REQ(LF_STEP, 0), REQ(LF_EPOCH, 0), REQ(LF_BATCH, 0), REQ(LF_LINES_CUT, 0), END}},
    [LOG_OTHER] = {NULL, {END}},
};

/* The nonfinite line's loss and grad_norm are the values that were not finite. */
static FieldType type_in(LogKind kind, LogField f)
{
    return kind == LOG_NONFINITE && (f == LF_LOSS || f == LF_GRAD_NORM) ? T_REAL_OR_STRING : fields[f].type;
}

/* ---------------------------------------------------------------- writing */

/* snprintf at buf + *at, advancing *at (to cap at most: the caller sees the overflow). */
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
{
    if (*at >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, cap - *at, fmt, ap);
    va_end(ap);
    *at = n < 0 ? cap : *at + (size_t)n;
}

size_t trainlog_format(const LogLine *l, char *buf, size_t cap)
{
    size_t at = 0;
    if (cap) buf[0] = 0;
    if (l->kind >= LOG_OTHER) return 0;
    const char *sep = "";
    put(buf, cap, &at, "{");
    if (lines[l->kind].event) {
        put(buf, cap, &at, "\"event\":\"%s\"", lines[l->kind].event);
        sep = ",";
    }
    for (const Slot *s = lines[l->kind].slot; s->f != LF_FIELDS; s++) {
        if (s->optional && !(l->optional & log_bit(s->f))) continue;
        double v = l->v[s->f];
        put(buf, cap, &at, "%s\"%s\":", sep, fields[s->f].key);
        sep = ",";
        switch (type_in(l->kind, s->f)) {
        case T_INT: put(buf, cap, &at, "%lld", (long long)v); break;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"  /* the table's formats, each of one double */
        case T_REAL: put(buf, cap, &at, s->format, v); break;
        case T_REAL_OR_STRING:
            if (isnan(v)) put(buf, cap, &at, "\"nan\"");
            else if (isinf(v)) put(buf, cap, &at, v > 0 ? "\"inf\"" : "\"-inf\"");
            else put(buf, cap, &at, s->format, v);
            break;
#pragma GCC diagnostic pop
        case T_BOOL: put(buf, cap, &at, v != 0 ? "true" : "false"); break;
        case T_STRING: put(buf, cap, &at, "\"%s\"", l->text); break;
        }
    }
    put(buf, cap, &at, "}\n");
    return at;
}

int trainlog_write(TrainLog *log, const LogLine *l)
{
    char line[TRAINLOG_LINE_MAX];
    size_t n = trainlog_format(l, line, sizeof line);
    if (!log->fd_open || n == 0) return 0;
    int why = 0;
    if (n >= sizeof line) {
        why = EOVERFLOW;  /* cannot happen: the longest line is far shorter */
    } else {
        size_t done = 0, room = n;
        if (log->full_at >= 0 && log->bytes + (long)n > log->full_at)  /* the test hook's full disk */
            room = log->full_at > log->bytes ? (size_t)(log->full_at - log->bytes) : 0;
        while (done < room) {
            ssize_t w = pwrite(log->fd, line + done, room - done, log->bytes + (off_t)done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            done += (size_t)w;
        }
        if (done < n) why = done < room && errno ? errno : ENOSPC;
    }
    if (why == 0) {
        log->bytes += (long)n;
        return 0;
    }
    /* Not a torn line: the file back to its last whole one. */
    if (ftruncate(log->fd, log->bytes) != 0 && log->lost == 0) why = errno;
    if (log->lost++ == 0) {
        log->first_errno = why;
        log->first_step = (long)l->v[LF_STEP];
    }
    return -1;
}

void trainlog_close(TrainLog *log)
{
    if (log->fd_open) close(log->fd);
    log->fd_open = 0;
}

/* ---------------------------------------------------------------- reading */

/* Field f of a line from obj, if it is there with f's type. */
static int read_field(const cJSON *obj, LogKind kind, LogField f, LogLine *l)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, fields[f].key);
    if (!v) return 0;
    switch (type_in(kind, f)) {
    case T_INT:
    case T_REAL:
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return 0;
        l->v[f] = v->valuedouble;
        return 1;
    case T_REAL_OR_STRING:
        if (cJSON_IsNumber(v)) l->v[f] = v->valuedouble;
        else if (cJSON_IsString(v) && !strcmp(v->valuestring, "nan")) l->v[f] = NAN;
        else if (cJSON_IsString(v) && !strcmp(v->valuestring, "inf")) l->v[f] = INFINITY;
        else if (cJSON_IsString(v) && !strcmp(v->valuestring, "-inf")) l->v[f] = -INFINITY;
        else return 0;
        return 1;
    case T_BOOL:
        if (!cJSON_IsBool(v)) return 0;
        l->v[f] = cJSON_IsTrue(v);
        return 1;
    case T_STRING:
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= sizeof l->text) return 0;
        strcpy(l->text, v->valuestring);
        return 1;
    }
    return 0;
}

int trainlog_parse(const char *text, LogLine *l)
{
    memset(l, 0, sizeof *l);
    cJSON *obj = cJSON_Parse(text);
    int status = -1;
    if (!cJSON_IsObject(obj)) goto done;
    const cJSON *event = cJSON_GetObjectItemCaseSensitive(obj, "event");
    if (event && !cJSON_IsString(event)) goto done;
    l->kind = event ? LOG_OTHER : LOG_STEP;
    for (int k = LOG_STEP + 1; event && k < LOG_OTHER; k++)
        if (!strcmp(event->valuestring, lines[k].event)) l->kind = (LogKind)k;
    for (const Slot *s = lines[l->kind].slot; s->f != LF_FIELDS; s++)
        if (read_field(obj, l->kind, s->f, l)) l->has |= log_bit(s->f);
    status = 0;
done:
    cJSON_Delete(obj);
    return status;
}

int trainlog_read(FILE *f, const char *name, int (*each)(void *ctx, const LogLine *l), void *ctx,
                  LogReadStats *stats, Error *err)
{
    memset(stats, 0, sizeof *stats);
    LineReader r;
    line_reader_init(&r, f, NULL);
    char *text = NULL;
    size_t cap = 0;
    ssize_t len;
    LogLine l;
    /* A line over the limit (far beyond any line nmt writes) is dropped as read and
     * counted malformed. */
    while ((len = line_read(&r, &text, &cap, 1)) != LINE_EOF && len != LINE_ERROR) {
        /* A NUL inside the line would hide the rest from cJSON: malformed. */
        int blank = 1, bad = len == LINE_TOO_LONG || (size_t)len != strlen(text);
        for (ssize_t i = 0; i < len && blank; i++)
            blank = strchr(" \t\r\n", text[i]) != NULL;
        if (blank && !bad) continue;
        stats->n_lines++;
        if (bad || trainlog_parse(text, &l) || !each(ctx, &l)) {
            if (!stats->n_malformed) stats->first_malformed = r.number;
            stats->n_malformed++;
        }
    }
    int status = len == LINE_ERROR ? lines_read_error(err, name) : 0;  /* before free can touch errno */
    line_reader_free(&r);
    free(text);
    return status;
}

void trainlog_describe_skipped(const LogReadStats *stats, const char *name, char *buf, size_t cap)
{
    if (cap == 0) return;
    buf[0] = 0;
    if (stats->n_malformed == 1)
        snprintf(buf, cap, "%s: skipped 1 malformed line (line %ld)", name, stats->first_malformed);
    else if (stats->n_malformed > 1)
        snprintf(buf, cap, "%s: skipped %d malformed lines (the first is line %ld)", name, stats->n_malformed,
                 stats->first_malformed);
}

/* ---------------------------------------------------------------- resuming */

/* open(2) with O_NOFOLLOW: a link planted at path is an error (ELOOP), not a way to
 * write somewhere else. The descriptor, or -1 with err. */
static int open_nofollow(const char *path, int flags, Error *err)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0)
        error_set(err, "%s: cannot write: %s", path,
                  errno == ELOOP ? "a symbolic link (nmt does not write through links it did not make)"
                                 : strerror(errno));
    return fd;
}

/* log ready to write at bytes, with the test hook's full disk (testhook.h). */
static void log_init(TrainLog *log, int fd, const char *path, long bytes)
{
    memset(log, 0, sizeof *log);
    log->fd = fd;
    log->fd_open = 1;
    log->bytes = bytes;
    log->full_at = testhook_full_disk_bytes(path);
}

int trainlog_create(TrainLog *log, const char *path, Error *err)
{
    memset(log, 0, sizeof *log);
    int fd = open_nofollow(path, O_WRONLY | O_CREAT | O_TRUNC, err);
    if (fd < 0) return -1;
    log_init(log, fd, path, 0);
    return 0;
}

int trainlog_reopen(TrainLog *log, const char *path, long log_bytes, long *cut, char *warning, size_t cap, Error *err)
{
    memset(log, 0, sizeof *log);
    *cut = 0;
    warning[0] = 0;
    int fd = open_nofollow(path, O_RDWR | O_CREAT, err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        error_set(err, "%s: cannot read: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if ((long)st.st_size < log_bytes) {
        snprintf(warning, cap, "%s is shorter (%ld bytes) than when the checkpoint was written (%ld); appending to it",
                 path, (long)st.st_size, log_bytes);
        log_init(log, fd, path, (long)st.st_size);
        return 0;
    }
    /* The lines after log_bytes: work that will be redone, logged again. */
    char buf[65536];
    for (off_t at = log_bytes;;) {
        ssize_t got = pread(fd, buf, sizeof buf, at);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            error_set(err, "%s: read error: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (got == 0) break;
        for (ssize_t i = 0; i < got; i++)
            *cut += buf[i] == '\n';
        at += got;
    }
    if (ftruncate(fd, log_bytes) != 0) {
        error_set(err, "%s: cannot cut to %ld bytes: %s", path, log_bytes, strerror(errno));
        close(fd);
        return -1;
    }
    log_init(log, fd, path, log_bytes);
    return 0;
}
