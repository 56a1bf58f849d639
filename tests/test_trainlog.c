/* test_trainlog.c — train.log's lines (src/files/trainlog.c).
 *
 * Each kind of line must be written exactly as train.log has always had it (the bytes are
 * pinned here: scripts and `nmt plot` read them), and read back field for field by the
 * same code; optional fields appear only when put; a non-finite loss is a string; a
 * line of another type or an unknown event is handled as trainlog.h says; resuming
 * cuts the log back to a checkpoint's length; and a line a full disk cannot take is
 * left out whole.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "files/trainlog.h" /* defines: LogLine, TrainLog, trainlog_format, trainlog_write, trainlog_parse, trainlog_reopen */

/* l as trainlog_write writes it (malloc'd). */
static char *written(const LogLine *l)
{
    char *buf = xmalloc(TRAINLOG_LINE_MAX);
    size_t n = trainlog_format(l, buf, TRAINLOG_LINE_MAX);
    CHECK(n < TRAINLOG_LINE_MAX && strlen(buf) == n, "a line fits TRAINLOG_LINE_MAX");
    return buf;
}

/* l written must be exactly `want`, and read back must give l's written fields. */
static void check_line(const LogLine *l, const char *want, const char *what)
{
    char *got = written(l);
    int same = !strcmp(got, want);
    CHECK(same, what);
    if (!same) fprintf(stderr, "    got  %s    want %s", got, want);
    LogLine back;
    CHECK(trainlog_parse(got, &back) == 0 && back.kind == l->kind, "read back: the same kind");
    int fields_equal = 1;
    for (int f = 0; f < LF_FIELDS; f++) {
        if (!(back.has & log_bit((LogField)f))) continue;
        double a = back.v[f], b = l->v[f];
        /* The written number is rounded to its format (the text is pinned above); a field
         * read into another's place would be off by far more. */
        fields_equal &= (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= 1e-4 * fabs(b) + 0.005;
    }
    CHECK(fields_equal, "read back: every field as written");
    free(got);
}

static void test_lines(void)
{
    LogLine step = {LOG_STEP, .v = {[LF_STEP] = 100, [LF_EPOCH] = 2, [LF_LOSS] = 3.14159265, [LF_TOKENS_PER_S] = 5123.46,
                                    [LF_LEARNING_RATE] = 0.002f, [LF_GRAD_NORM] = 1.234567, [LF_TEACHER_FORCING] = 1}};
    check_line(&step, "{\"step\":100,\"epoch\":2,\"loss\":3.141593,\"tokens_per_s\":5123.5,\"learning_rate\":0.002,"
                      "\"grad_norm\":1.2346,\"teacher_forcing\":1.0000}\n", "step line");
    log_put(&step, LF_RANKS, 2);
    log_put(&step, LF_ALLREDUCE_S, 0.0171234);
    check_line(&step, "{\"step\":100,\"epoch\":2,\"loss\":3.141593,\"tokens_per_s\":5123.5,\"learning_rate\":0.002,"
                      "\"grad_norm\":1.2346,\"teacher_forcing\":1.0000,\"ranks\":2,\"allreduce_s\":0.01712}\n",
               "step line of a data-parallel job: ranks and allreduce_s at the end");
    LogLine start = {LOG_START, .v = {[LF_TRAIN_PAIRS] = 30352, [LF_VALID_PAIRS] = 3373, [LF_SRC_VOCAB] = 4919,
                                      [LF_TGT_VOCAB] = 10000, [LF_PARAMETERS] = 8802546,
                                      [LF_UNIGRAM_VALID_LOSS] = 6.1234567}};
    check_line(&start, "{\"event\":\"start\",\"train_pairs\":30352,\"valid_pairs\":3373,\"src_vocab\":4919,"
                       "\"tgt_vocab\":10000,\"parameters\":8802546,\"unigram_valid_loss\":6.123457}\n", "start line");
    LogLine valid = {LOG_VALIDATION, .v = {[LF_STEP] = 500, [LF_EPOCH] = 1, [LF_VALID_LOSS] = 0.5,
                                           [LF_LEARNING_RATE] = 0.001, [LF_BEST] = 1, [LF_SECONDS] = 3.456,
                                           [LF_ELAPSED] = 61.254}};
    log_put(&valid, LF_VALID_ACCURACY, 0.8125);
    check_line(&valid, "{\"event\":\"validation\",\"step\":500,\"epoch\":1,\"valid_loss\":0.500000,"
                       "\"valid_accuracy\":0.812500,\"learning_rate\":0.001,\"best\":true,\"seconds\":3.46,"
                       "\"elapsed\":61.25}\n", "a classifier's validation line: accuracy, no perplexity");
    valid = (LogLine){LOG_VALIDATION, .v = {[LF_STEP] = 500, [LF_EPOCH] = 1, [LF_VALID_LOSS] = 2.5,
                                            [LF_LEARNING_RATE] = 0.001, [LF_BEST] = 1, [LF_SECONDS] = 3.456,
                                            [LF_ELAPSED] = 61.254}};
    log_put(&valid, LF_VALID_PPL, 12.18249);
    check_line(&valid, "{\"event\":\"validation\",\"step\":500,\"epoch\":1,\"valid_loss\":2.500000,\"valid_ppl\":12.1825,"
                       "\"learning_rate\":0.001,\"best\":true,\"seconds\":3.46,\"elapsed\":61.25}\n",
               "validation line without BLEU");
    log_put(&valid, LF_VALID_BLEU, 21.54321);
    log_put(&valid, LF_BLEU_PAIRS, 500);
    valid.v[LF_BEST] = 0;
    check_line(&valid, "{\"event\":\"validation\",\"step\":500,\"epoch\":1,\"valid_loss\":2.500000,\"valid_ppl\":12.1825,"
                       "\"valid_bleu\":21.5432,\"bleu_pairs\":500,\"learning_rate\":0.001,\"best\":false,"
                       "\"seconds\":3.46,\"elapsed\":61.25}\n", "validation line with BLEU, in its place");
    check_line(&(LogLine){LOG_LR_DECAY, .v = {[LF_STEP] = 700, [LF_LEARNING_RATE] = 0.0005}},
               "{\"event\":\"lr_decay\",\"step\":700,\"learning_rate\":0.0005}\n", "lr_decay line");
    LogLine early = {LOG_EARLY_STOP, .v = {[LF_STEP] = 900, [LF_EPOCH] = 3, [LF_BEST_STEP] = 600}};
    log_put(&early, LF_BEST_BLEU, 30.5);
    check_line(&early, "{\"event\":\"early_stop\",\"step\":900,\"epoch\":3,\"best_step\":600,\"best_bleu\":30.500000}\n",
               "early_stop line by BLEU");
    LogLine bad = {LOG_NONFINITE, .v = {[LF_STEP] = 12, [LF_EPOCH] = 1, [LF_BATCH] = 13, [LF_LOSS] = NAN,
                                        [LF_GRAD_NORM] = INFINITY, [LF_IN_A_ROW] = 2}};
    check_line(&bad, "{\"event\":\"nonfinite\",\"step\":12,\"epoch\":1,\"batch\":13,\"loss\":\"nan\",\"grad_norm\":\"inf\","
                     "\"in_a_row\":2}\n", "nonfinite line: non-finite numbers as strings");
    bad.v[LF_LOSS] = 1234567.8;
    bad.v[LF_GRAD_NORM] = -INFINITY;
    check_line(&bad, "{\"event\":\"nonfinite\",\"step\":12,\"epoch\":1,\"batch\":13,\"loss\":1.23457e+06,"
                     "\"grad_norm\":\"-inf\",\"in_a_row\":2}\n", "nonfinite line: a finite loss as %.6g");
    check_line(&(LogLine){LOG_EPOCH, .v = {[LF_EPOCH] = 1, [LF_STEP] = 475, [LF_TARGET_TOKENS] = 180000,
                                           [LF_TARGET_SLOTS] = 300000, [LF_TARGET_PADDING] = 0.4}},
               "{\"event\":\"epoch\",\"epoch\":1,\"step\":475,\"target_tokens\":180000,\"target_slots\":300000,"
               "\"target_padding\":0.4000}\n", "epoch line");
    LogLine stop = {LOG_INTERRUPTED, .v = {[LF_STEP] = 30, [LF_EPOCH] = 1}, .text = "SIGTERM"};
    check_line(&stop, "{\"event\":\"interrupted\",\"step\":30,\"epoch\":1,\"signal\":\"SIGTERM\"}\n", "interrupted line");
    LogLine back;
    trainlog_parse("{\"event\":\"interrupted\",\"step\":30,\"epoch\":1,\"signal\":\"SIGTERM\"}", &back);
    CHECK(!strcmp(back.text, "SIGTERM") && (back.has & log_bit(LF_SIGNAL)), "interrupted line: the signal read back");
    check_line(&(LogLine){LOG_RESUME, .v = {[LF_STEP] = 60, [LF_EPOCH] = 1, [LF_BATCH] = 5, [LF_LINES_CUT] = 3}},
               "{\"event\":\"resume\",\"step\":60,\"epoch\":1,\"batch\":5,\"lines_cut\":3}\n", "resume line");
    char *none = written(&(LogLine){LOG_OTHER, .v = {0}});
    CHECK(none[0] == 0, "a LOG_OTHER line is never written");
    free(none);
}

static void test_reading(void)
{
    LogLine l;
    CHECK(trainlog_parse("[1,2]", &l) == -1, "an array is not a line");
    CHECK(trainlog_parse("not json", &l) == -1, "text is not a line");
    CHECK(trainlog_parse("{\"event\":3}", &l) == -1, "a numeric event is not a line");
    CHECK(trainlog_parse("{\"event\":\"from_the_future\",\"step\":3}", &l) == 0 && l.kind == LOG_OTHER && l.has == 0,
          "an unknown event: LOG_OTHER, no fields");
    CHECK(trainlog_parse("{\"step\":\"ten\",\"loss\":2}", &l) == 0 && l.kind == LOG_STEP &&
              !(l.has & log_bit(LF_STEP)) && (l.has & log_bit(LF_LOSS)) && l.v[LF_LOSS] == 2,
          "a field of the wrong type is left out, the rest read");
    CHECK(trainlog_parse("{\"step\":5,\"loss\":1e999}", &l) == 0 && !(l.has & log_bit(LF_LOSS)),
          "a step line's loss must be finite");
    CHECK(trainlog_parse("{\"event\":\"validation\",\"step\":5,\"valid_loss\":2,\"best\":1}", &l) == 0 &&
              !(l.has & log_bit(LF_BEST)) && (l.has & log_bit(LF_VALID_LOSS)),
          "best must be a boolean");
}

/* The whole text of path (malloc'd; "" if unreadable). */
static char *file_text(const char *path)
{
    char *buf = xcalloc(4096, 1);
    FILE *r = fopen(path, "r");
    if (r) {
        size_t n = fread(buf, 1, 4095, r);
        buf[n] = 0;
        fclose(r);
    }
    return buf;
}

static void test_reopen(void)
{
    char path[] = "/tmp/nmt-test-trainlog-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "a temporary file");
    if (fd < 0) return;
    const char *text = "{\"step\":10}\n{\"step\":20}\n{\"step\":30}\n{\"step\":40}\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "the log written");
    close(fd);
    long cut = -1;
    char warning[256];
    Error err;
    TrainLog log;
    int opened = trainlog_reopen(&log, path, 24, &cut, warning, sizeof warning, &err) == 0;
    CHECK(opened && cut == 2 && warning[0] == 0 && log.bytes == 24,
          "reopen at a checkpoint's length: the 2 lines after it cut");
    if (opened) {
        trainlog_write(&log, &(LogLine){LOG_LR_DECAY, .v = {[LF_STEP] = 20, [LF_LEARNING_RATE] = 0.5}});
        trainlog_close(&log);
    }
    char *buf = file_text(path);
    CHECK(!strcmp(buf, "{\"step\":10}\n{\"step\":20}\n{\"event\":\"lr_decay\",\"step\":20,\"learning_rate\":0.5}\n"),
          "reopen: new lines follow the kept ones");
    free(buf);
    opened = trainlog_reopen(&log, path, 100000, &cut, warning, sizeof warning, &err) == 0;
    CHECK(opened && cut == 0 && strstr(warning, "is shorter") && strstr(warning, path), "a log shorter than the "
          "checkpoint says: appended to, with a warning naming it");
    if (opened) trainlog_close(&log);
    unlink(path);
    CHECK(trainlog_reopen(&log, "/nonexistent-dir/train.log", 0, &cut, warning, sizeof warning, &err) == -1 &&
              strstr(err.msg, "/nonexistent-dir/train.log"),
          "an unwritable log: an error naming it");
}

/* A disk that fills while a line is written (the hook's full_at, as
 * NMT_FULL_DISK_AT=train.log@BYTES sets it): the line is left out whole, counted as
 * lost with its step and reason, and the lines after the disk has room again follow
 * the last whole one. */
static void test_full_disk(void)
{
    char path[] = "/tmp/nmt-test-trainlog-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "a temporary file");
    if (fd < 0) return;
    close(fd);
    TrainLog log;
    Error err;
    if (trainlog_create(&log, path, &err)) {
        CHECK(0, "trainlog_create");
        return;
    }
    LogLine step = {LOG_STEP, .v = {[LF_STEP] = 1, [LF_EPOCH] = 1, [LF_LOSS] = 2}};
    CHECK(trainlog_write(&log, &step) == 0, "a line written");
    long one = log.bytes;
    log.full_at = one + 10;  /* the next line fills the disk in its middle */
    step.v[LF_STEP] = 2;
    CHECK(trainlog_write(&log, &step) == -1 && log.lost == 1 && log.first_step == 2 && log.first_errno == ENOSPC &&
              log.bytes == one,
          "a line the disk cannot take: -1, lost 1 (step 2, ENOSPC), the length unchanged");
    char *text = file_text(path);
    CHECK(strlen(text) == (size_t)one && text[one - 1] == '\n', "... the file ends with the last whole line");
    free(text);
    step.v[LF_STEP] = 3;
    CHECK(trainlog_write(&log, &step) == -1 && log.lost == 2 && log.first_step == 2, "the next: lost too, counted");
    log.full_at = -1;  /* room again */
    step.v[LF_STEP] = 4;
    CHECK(trainlog_write(&log, &step) == 0 && log.lost == 2, "room again: written");
    trainlog_close(&log);
    text = file_text(path);
    CHECK(strstr(text, "\"step\":1,") && !strstr(text, "\"step\":2,") && !strstr(text, "\"step\":3,") &&
              strstr(text, "}\n{\"step\":4,"),
          "the log: steps 1 and 4, whole, one after the other");
    free(text);
    unlink(path);
}

int main(void)
{
    test_lines();
    test_reading();
    test_reopen();
    test_full_disk();
    return check_report("test_trainlog");
}
