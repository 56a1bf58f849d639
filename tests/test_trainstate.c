/* test_trainstate.c — the TRST payload of a checkpoint (src/files/trainstate.c).
 *
 * A state must read back field for field, the infinities of a run that has not
 * validated yet included. A payload with any field out of its range, a wrong length, an
 * order that is not a permutation or a random stream no seeding makes must be refused
 * with a message naming the file and the field; every truncation must be refused.
 * Fingerprints must tell apart data that differs in any token or in where a sentence
 * ends.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "files/trainstate.h" /* defines: TrainState, trainstate_encode, trainstate_decode, examples_fingerprint */

/* The fields' order in the payload (trainstate.h: the struct's members, in order). */
enum {
    STEP, EPOCH, NEXT, ORDER_READY, DONE, N_TRAIN, SHUFFLE_STATE, SHUFFLE_INC, MODEL_STATE, MODEL_INC,
    LEARNING_RATE, LR_FACTOR, LR_BEST_LOSS, LR_BAD, LR_DECAYS, BEST, BEST_STEP, LAST_VALIDATED, SINCE_BEST,
    NONFINITE, EPOCH_TOKENS, EPOCH_SLOTS, WINDOW_LOSS, WINDOW_SECONDS, WINDOW_TOKENS, WINDOW_STEPS, ELAPSED,
    LOG_BYTES, N_VALID, TRAIN_FP, VALID_FP, THREADS, RANKS, WORKERS, N_FIELDS
};
/* The first version-1 files end their fields before ranks. */
#define FIRST_FIELDS RANKS
#define FIELD_AT(i) (8 + 8 * (size_t)(i))
#define KERNEL_AT FIELD_AT(N_FIELDS)
#define ORDER_AT (KERNEL_AT + 32)

static const char *file = "run/checkpoint-42.bin";
static int order7[7] = {3, 0, 6, 1, 5, 2, 4};

static TrainState sample(void)
{
    TrainState s;
    memset(&s, 0, sizeof s);
    s.step = 42;
    s.epoch = 3;
    s.next = 4;
    s.order_ready = 1;
    s.n_train = 7;
    s.order = order7;
    rng_seed(&s.shuffle_rng, 2);
    rng_seed(&s.model_rng, 3);
    rng_next(&s.model_rng);
    s.learning_rate = 0.00075;
    s.lr_factor = 0.25;
    s.lr_best_loss = INFINITY;  /* no validation yet */
    s.lr_bad = 1;
    s.lr_decays = 2;
    s.best = -INFINITY;         /* best_metric bleu, no validation yet */
    s.best_step = 40;
    s.last_validated = 40;
    s.since_best = 0;
    s.nonfinite_in_a_row = 1;
    s.epoch_tokens = 1711;
    s.epoch_slots = 1770;
    s.window_loss = 12.5;
    s.window_seconds = 0.125;
    s.window_tokens = 300;
    s.window_steps = 2;
    s.elapsed_seconds = 3.5;
    s.log_bytes = 9876;
    s.n_valid = 30;
    s.train_fingerprint = 0xfedcba9876543210ull;
    s.valid_fingerprint = 1;
    s.threads = 2;
    s.ranks = 3;
    s.workers = 4;
    strcpy(s.blas_kernel, "SkylakeX");
    return s;
}

static int same_state(const TrainState *a, const TrainState *b)
{
    return a->step == b->step && a->epoch == b->epoch && a->next == b->next && a->order_ready == b->order_ready &&
           a->done == b->done && a->n_train == b->n_train && b->order &&
           !memcmp(a->order, b->order, sizeof(int) * a->n_train) &&
           !memcmp(&a->shuffle_rng, &b->shuffle_rng, sizeof a->shuffle_rng) &&
           !memcmp(&a->model_rng, &b->model_rng, sizeof a->model_rng) && a->learning_rate == b->learning_rate &&
           a->lr_factor == b->lr_factor && a->lr_best_loss == b->lr_best_loss && a->lr_bad == b->lr_bad &&
           a->lr_decays == b->lr_decays && a->best == b->best && a->best_step == b->best_step &&
           a->last_validated == b->last_validated && a->since_best == b->since_best &&
           a->nonfinite_in_a_row == b->nonfinite_in_a_row && a->epoch_tokens == b->epoch_tokens &&
           a->epoch_slots == b->epoch_slots && a->window_loss == b->window_loss &&
           a->window_seconds == b->window_seconds && a->window_tokens == b->window_tokens &&
           a->window_steps == b->window_steps && a->elapsed_seconds == b->elapsed_seconds &&
           a->log_bytes == b->log_bytes && a->n_valid == b->n_valid &&
           a->train_fingerprint == b->train_fingerprint && a->valid_fingerprint == b->valid_fingerprint &&
           a->threads == b->threads && a->ranks == b->ranks && a->workers == b->workers && !strcmp(a->blas_kernel, b->blas_kernel);
}

static void test_round_trip(void)
{
    TrainState s = sample(), back;
    size_t len;
    unsigned char *p = trainstate_encode(&s, &len);
    CHECK(len == ORDER_AT + 4 * 7, "payload length: header, 34 fields, kernel name, order");
    Error err = {""};
    int rc = trainstate_decode(p, len, file, &back, &err);
    CHECK(rc == 0, "decodes");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    CHECK(rc == 0 && same_state(&s, &back), "every field read back as written (+-inf too)");
    trainstate_free(&back);
    CHECK(back.order == NULL, "trainstate_free clears order");

    /* Before the first epoch's order is drawn, and at the end of training. */
    s.order_ready = 0;
    s.next = 0;
    s.done = 1;
    s.best = 1.25;
    s.lr_best_loss = 1.25;
    free(p);
    p = trainstate_encode(&s, &len);
    rc = trainstate_decode(p, len, file, &back, &err);
    CHECK(rc == 0 && same_state(&s, &back), "a finished state reads back");
    trainstate_free(&back);
    free(p);
}

/* The payload with one 8-byte field replaced must be refused naming `want`. */
static void expect_refused(const unsigned char *good, size_t len, size_t at, const void *value, size_t n,
                           const char *want, const char *what)
{
    unsigned char *d = malloc(len);
    memcpy(d, good, len);
    memcpy(d + at, value, n);
    TrainState s;
    Error err = {"(no message)"};
    int rc = trainstate_decode(d, len, file, &s, &err);
    int ok = rc == -1 && !strncmp(err.msg, file, strlen(file)) && strstr(err.msg, "TRST") && strstr(err.msg, want) &&
             s.order == NULL;
    CHECK(ok, what);
    if (!ok) fprintf(stderr, "  rc %d, message \"%s\" (wanted \"%s\")\n", rc, err.msg, want);
    if (rc == 0) trainstate_free(&s);
    free(d);
}

static void test_refused(void)
{
    TrainState s = sample();
    size_t len;
    unsigned char *good = trainstate_encode(&s, &len);
    int64_t i64;
    double f64;
    uint32_t u32;

    u32 = 2;
    expect_refused(good, len, 0, &u32, 4, "version 2", "a later version");
    u32 = FIRST_FIELDS - 1;
    expect_refused(good, len, 4, &u32, 4, "fields", "fewer fields than the first version-1 files");
    u32 = N_FIELDS + 1;
    expect_refused(good, len, 4, &u32, 4, "fields", "one field more than this nmt knows");

    struct { int field; int64_t value; const char *want; } ints[] = {
        {STEP, -1, "field step"},
        {EPOCH, 0, "field epoch"},
        {EPOCH, 2000000, "field epoch"},
        {NEXT, 8, "field next"},               /* beyond n_train 7 */
        {NEXT, -1, "field next"},
        {ORDER_READY, 2, "field order_ready"},
        {DONE, -1, "field done"},
        {N_TRAIN, 0, "field n_train"},
        {N_TRAIN, 6, "n_train"},               /* the order holds 7 */
        {N_TRAIN, (int64_t)1 << 40, "field n_train"},
        {LR_BAD, -1, "field lr_bad"},
        {BEST_STEP, 43, "best_step"},          /* beyond step 42 */
        {LAST_VALIDATED, 50, "last_validated"},
        {WINDOW_STEPS, 43, "window_steps"},
        {SINCE_BEST, -3, "field since_best"},
        {LOG_BYTES, -1, "field log_bytes"},
        {N_VALID, -1, "field n_valid"},
        {THREADS, 0, "field threads"},
        {RANKS, 0, "field ranks"},
        {WORKERS, 0, "field workers"},
    };
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++) {
        char what[96];
        snprintf(what, sizeof what, "%s = %lld refused", ints[k].want, (long long)ints[k].value);
        i64 = ints[k].value;
        expect_refused(good, len, FIELD_AT(ints[k].field), &i64, 8, ints[k].want, what);
    }
    struct { int field; double value; const char *want; } reals[] = {
        {LR_FACTOR, NAN, "field lr_factor"},
        {LR_FACTOR, 1.5, "field lr_factor"},
        {LR_BEST_LOSS, -1, "field lr_best_loss"},
        {BEST, NAN, "field best"},
        {WINDOW_LOSS, INFINITY, "field window_loss"},
        {ELAPSED, -1, "field elapsed_seconds"},
        {LEARNING_RATE, NAN, "field learning_rate"},
    };
    for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++) {
        char what[96];
        snprintf(what, sizeof what, "%s = %g refused", reals[k].want, reals[k].value);
        f64 = reals[k].value;
        expect_refused(good, len, FIELD_AT(reals[k].field), &f64, 8, reals[k].want, what);
    }

    /* A PCG stream's increment is odd however it was seeded. */
    uint64_t even = s.model_rng.inc ^ 1;
    expect_refused(good, len, FIELD_AT(MODEL_INC), &even, 8, "model_rng.inc", "an even PCG increment");
    /* next > 0 before the epoch's order exists. */
    {
        unsigned char *d = malloc(len);
        memcpy(d, good, len);
        i64 = 0;
        memcpy(d + FIELD_AT(ORDER_READY), &i64, 8);
        i64 = 3;
        expect_refused(d, len, FIELD_AT(NEXT), &i64, 8, "field next", "next 3 with no order drawn");
        free(d);
    }
    /* The kernel name: no NUL in 32 bytes, or a control character. */
    unsigned char name[32];
    memset(name, 'A', sizeof name);
    expect_refused(good, len, KERNEL_AT, name, 32, "blas_kernel", "a kernel name without its NUL");
    expect_refused(good, len, KERNEL_AT, "Sky\nlake", 9, "blas_kernel", "a kernel name with a newline");

    /* order: a repeat, an index out of range, a negative one. */
    int32_t v = 3;
    expect_refused(good, len, ORDER_AT + 4, &v, 4, "permutation", "order with 3 twice");
    v = 7;
    expect_refused(good, len, ORDER_AT + 8, &v, 4, "permutation", "order with 7 of 0..6");
    v = -1;
    expect_refused(good, len, ORDER_AT + 24, &v, 4, "permutation", "order with -1");

    /* Every truncation, and one byte too many. */
    int accepted = 0;
    for (size_t cut = 0; cut < len; cut++) {
        TrainState back;
        Error err = {""};
        if (trainstate_decode(good, cut, file, &back, &err) == 0) {
            accepted++;
            trainstate_free(&back);
        } else if (!strstr(err.msg, file)) {
            accepted++;
        }
    }
    CHECK(accepted == 0, "every truncation refused, naming the file");
    unsigned char *longer = calloc(len + 1, 1);
    memcpy(longer, good, len);
    TrainState back;
    Error err;
    CHECK(trainstate_decode(longer, len + 1, file, &back, &err) == -1, "one byte more than the order: refused");
    free(longer);
    free(good);
}

/* A checkpoint written before the ranks field existed (32 fields) still reads, as the
 * state of one process with one worker; one written before the workers field (33), as
 * its ranks with one worker each. */
static void test_older_files(int fields)
{
    TrainState s = sample(), back;
    size_t len;
    unsigned char *p = trainstate_encode(&s, &len);
    size_t old_len = len - 8 * (size_t)(N_FIELDS - fields);
    unsigned char *old = malloc(old_len);
    uint32_t header[2] = {1, (uint32_t)fields};
    memcpy(old, header, sizeof header);
    memcpy(old + 8, p + 8, 8 * (size_t)fields);                      /* the fields it has */
    memcpy(old + FIELD_AT(fields), p + KERNEL_AT, len - KERNEL_AT);  /* kernel name, order */
    Error err = {""};
    int rc = trainstate_decode(old, old_len, file, &back, &err);
    char what[96];
    snprintf(what, sizeof what, "a %d-field payload (before the %s field) decodes", fields,
             fields == RANKS ? "ranks" : "workers");
    CHECK(rc == 0, what);
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    if (fields <= RANKS) s.ranks = 1;
    s.workers = 1;
    snprintf(what, sizeof what, "... with every field as written, ranks %d and workers 1", s.ranks);
    CHECK(rc == 0 && same_state(&s, &back), what);
    if (rc == 0) trainstate_free(&back);
    free(old);
    free(p);
}

static void test_fingerprint(void)
{
    int a1[] = {5, 6}, a2[] = {7}, b1[] = {5}, b2[] = {6, 7}, c2[] = {8};
    Example a[2] = {{a1, a2, 2, 1}, {a2, a1, 1, 2}};
    Example same[2] = {{(int[]){5, 6}, (int[]){7}, 2, 1}, {(int[]){7}, (int[]){5, 6}, 1, 2}};
    Example shifted[2] = {{b1, b2, 1, 2}, {a2, a1, 1, 2}};   /* the same ids, another boundary */
    Example token[2] = {{a1, c2, 2, 1}, {a2, a1, 1, 2}};     /* one target id changed */
    Example swapped[2] = {{a2, a1, 1, 2}, {a1, a2, 2, 1}};   /* the same examples, another order */
    uint64_t fa = examples_fingerprint(a, 2);
    CHECK(fa == examples_fingerprint(same, 2), "equal examples: equal fingerprints");
    CHECK(fa != examples_fingerprint(shifted, 2), "a sentence boundary moved: another fingerprint");
    CHECK(fa != examples_fingerprint(token, 2), "one token changed: another fingerprint");
    CHECK(fa != examples_fingerprint(swapped, 2), "another order: another fingerprint");
    CHECK(fa != examples_fingerprint(a, 1), "one example fewer: another fingerprint");
}

int main(void)
{
    test_round_trip();
    test_older_files(RANKS);
    test_older_files(WORKERS);
    test_refused();
    test_fingerprint();
    return check_report("test_trainstate");
}
