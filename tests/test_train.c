/* test_train.c — non-finite steps in the training loop (src/train/train.c).
 *
 * A real divergence to inf or NaN cannot be provoked in a short run: Adam moves each
 * weight by about the learning rate per step whatever the gradient (at most 10, the
 * config's limit), every activation is bounded (tanh, sigmoid) and the softmax is
 * computed stably, so after hundreds of steps at learning rate 10 without clipping the
 * loss is large but finite. The trouble is therefore put into a checkpoint, which a run
 * then resumes from. Not NaN itself (the model file reader refuses NaN and infinite
 * weights), but the largest float in an embedding of a Transformer, whose input layer
 * scales embeddings by sqrt(model.embed) into an infinity that its layer norm turns
 * into NaN: in the embedding of one rare source word it makes exactly the batches
 * holding that word non-finite (the skipped update leaves every other weight as it
 * was), and in the target's <sos>, which starts every decoder input, every batch.
 * train_run must skip each such step with a "nonfinite" event in train.log, count
 * them in a row, stop with an error after train.max_nonfinite in a row, and leave the
 * checkpoints as they were; with two workers too (train.workers).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "files/checkpoint.h" /* defines: checkpoint_list */
#include "files.h"      /* defines: slurp, spit */
#include "files/config.h"     /* defines: Config, config_defaults */
#include "files/modelfile.h"  /* defines: ModelFile, modelfile_read, modelfile_write */
#include "train/train.h"      /* defines: train_run, TrainOptions */

static char dir[64], run_dir[128], tsv[128], ckpt[160];
static int workers = 1;  /* train.workers of the runs (src/train/parallel.h) */

static char *in_run(const char *name)
{
    static char p[2][256];
    static int k;
    k ^= 1;
    snprintf(p[k], sizeof p[k], "%s/%s", run_dir, name);
    return p[k];
}

static int count_lines(const char *p, const char *needle)
{
    FILE *f = fopen(p, "r");
    char line[1024];
    int n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    if (f) fclose(f);
    return n;
}

static void make_config(Config *c, int max_nonfinite)
{
    config_defaults(c);
    c->train = strdup(tsv);
    free(c->dir);
    c->dir = strdup(run_dir);
    c->valid_fraction = 0;  /* every pair trains: the rare word is in the training split */
    free(c->type);
    c->type = strdup("transformer");
    c->embed = 8;
    c->heads = 2;
    c->ff = 16;
    c->batch_size = 4;
    c->epochs = 3;
    c->learning_rate = 0.01;
    c->threads = 1;
    c->workers = workers;
    c->log_every = 1;
    c->checkpoint_every = 2;
    c->keep_checkpoints = 0;
    c->max_nonfinite = max_nonfinite;
}

/* train_run without progress lines. Its warnings (one per skipped step) still go to
 * stderr, where a sanitizer's report would go too. */
static int train_quietly(const Config *c, int resume, Error *err)
{
    TrainOptions opt = {.quiet = 1, .resume = resume};
    return train_run(c, &opt, err);
}

/* The run directory as a fresh run leaves it, then cut back to checkpoint-2.bin with
 * `poison` applied to its weights (and saved with a valid CRC). */
static void run_then_poison(void (*poison)(ModelFile *))
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_dir);
    if (system(cmd) != 0) exit(2);
    Config c;
    Error err = {""};
    make_config(&c, 10);
    int rc = train_quietly(&c, 0, &err);
    CHECK(rc == 0, "a fresh run trains");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    config_free(&c);
    long *steps;
    int n = checkpoint_list(run_dir, &steps, &err);
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "checkpoint-%ld.bin", steps[i]);
        if (steps[i] != 2) unlink(in_run(name));
    }
    free(steps);
    unlink(in_run("model.bin"));
    unlink(in_run("checkpoint.bin"));
    ModelFile mf;
    if (modelfile_read(ckpt, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    poison(&mf);
    if (modelfile_write(ckpt, &mf, &err)) { fprintf(stderr, "%s\n", err.msg); exit(2); }
    modelfile_free(&mf);
}

/* FLT_MAX, which sqrt(model.embed) scales to an infinity. */
#define HUGE_WEIGHT 3.4028235e38f

static void poison_zebra(ModelFile *mf)
{
    int id = vocab_lookup(&mf->src_vocab, "zebra"), E = mf->model.dims.embed;
    for (int k = 0; k < E; k++)
        mf->model.params.src_emb[(long)id * E + k] = HUGE_WEIGHT;
}

static void poison_start(ModelFile *mf)
{
    int E = mf->model.dims.embed;
    for (int k = 0; k < E; k++)
        mf->model.params.tgt_emb[(long)VOCAB_SOS * E + k] = HUGE_WEIGHT;
}

/* A rare word's huge embedding: one non-finite batch an epoch, each skipped, the count
 * starting again after it; training completes. */
static void test_intermittent(void)
{
    fprintf(stderr, "  (the non-finite step warnings below are expected)\n");
    run_then_poison(poison_zebra);
    Config c;
    Error err = {""};
    make_config(&c, 2);
    int rc = train_quietly(&c, 1, &err);
    CHECK(rc == 0, "a rare word's huge embedding: training completes (max_nonfinite 2)");
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    const char *log = in_run("train.log");
    int events = count_lines(log, "\"event\":\"nonfinite\"");
    CHECK(events >= 2 && events == count_lines(log, "\"in_a_row\":1}"),
          "one nonfinite event per epoch still to come, each the first in a row");
    CHECK(count_lines(log, "\"loss\":\"nan\"") == events, "the event's loss is the string \"nan\" (JSON has no NaN)");
    struct stat st;
    CHECK(stat(in_run("model.bin"), &st) == 0, "model.bin written");
    config_free(&c);
}

/* A huge <sos> embedding: every step non-finite; after max_nonfinite in a row training
 * stops with an error naming the step and the checkpoint, which is untouched. */
static void test_diverged(void)
{
    run_then_poison(poison_start);
    size_t before_len, after_len;
    unsigned char *before = slurp(ckpt, &before_len);
    Config c;
    Error err = {""};
    make_config(&c, 3);
    int rc = train_quietly(&c, 1, &err);
    CHECK(rc == -1, "NaN in every step: training stops with an error");
    CHECK(!strncmp(err.msg, "step 3: 3 steps in a row", 24) && strstr(err.msg, "train.max_nonfinite") &&
              strstr(err.msg, "intact") && strstr(err.msg, ckpt),
          "the message: the step, 3 in a row, train.max_nonfinite, the last checkpoint intact, its path");
    if (!strstr(err.msg, ckpt)) fprintf(stderr, "  %s\n", err.msg);
    const char *log = in_run("train.log");
    CHECK(count_lines(log, "\"event\":\"nonfinite\"") == 3 && count_lines(log, "\"in_a_row\":3}") == 1,
          "train.log: three nonfinite events, counting 1, 2, 3");
    unsigned char *after = slurp(ckpt, &after_len);
    CHECK(before_len == after_len && !memcmp(before, after, before_len), "checkpoint-2.bin is untouched");
    long *steps;
    int n = checkpoint_list(run_dir, &steps, &err);
    CHECK(n == 1 && steps[0] == 2, "no other checkpoint written");
    free(steps);
    struct stat st;
    CHECK(stat(in_run("model.bin"), &st) != 0, "no model.bin");
    free(before);
    free(after);
    config_free(&c);
}

int main(void)
{
    strcpy(dir, "/tmp/nmt_test_train_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    snprintf(run_dir, sizeof run_dir, "%s/run", dir);
    snprintf(tsv, sizeof tsv, "%s/pairs.tsv", dir);
    snprintf(ckpt, sizeof ckpt, "%s/checkpoint-2.bin", run_dir);
    /* 40 pairs over a few common words, and one with the rare "zebra". */
    FILE *f = fopen(tsv, "w");
    if (!f) { perror(tsv); return 2; }
    for (int i = 0; i < 40; i++)
        fprintf(f, "w%d w%d w%d\tv%d v%d\n", i % 7, i % 5, i % 3, i % 4, i % 6);
    fprintf(f, "zebra w1\tv1 v2\n");
    fclose(f);

    test_intermittent();
    test_diverged();
    /* Two workers: the non-finite gradient is one worker's share, summed with the other's;
     * the skip must leave every worker's buffer clean for the steps after it. */
    workers = 2;
    test_intermittent();

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_report("test_train");
}
