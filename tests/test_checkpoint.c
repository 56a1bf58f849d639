/* test_checkpoint.c — a run directory's checkpoints (src/files/checkpoint.c).
 *
 * Saving keeps the newest N checkpoint-STEP.bin files and makes checkpoint.bin the
 * newest; a failed save leaves every earlier file as it was; listing ignores other
 * names; loading skips damaged or unresumable newer files with a warning that names
 * them, and fails with a message when none can be resumed from.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "files.h" /* defines: count_temporaries */
#include "files/checkpoint.h" /* defines: checkpoint_save, checkpoint_list, checkpoint_load_newest, checkpoint_remove_all */

static char dir[64];

static int order[4] = {2, 0, 3, 1};

/* A small model with optimizer and training state at `step`. */
static void make_checkpoint(ModelFile *mf, long step)
{
    memset(mf, 0, sizeof *mf);
    static const char *words[] = {"<pad>", "<unk>", "<sos>", "<eos>", "a", "b"};
    Error err;
    if (vocab_from_words(&mf->src_vocab, (char *const *)words, 6, &err) ||
        vocab_from_words(&mf->tgt_vocab, (char *const *)words, 6, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        exit(2);
    }
    ModelDims d = {.src_vocab = 6, .tgt_vocab = 6, .embed = 2, .hidden = 2};
    model_alloc(&mf->model, &d);
    model_init_weights(&mf->model, (uint64_t)step);
    mf->config_json = strdup("{}");
    mf->step = step;
    mf->epoch = 1;
    mf->has_optimizer = 1;
    adam_init(&mf->opt, mf->model.n_params, 0.001f);
    mf->opt.step = step;
    mf->has_train_state = 1;
    TrainState *s = &mf->train_state;
    s->step = step;
    s->epoch = 1;
    s->next = 2;
    s->order_ready = 1;
    s->n_train = 4;
    s->order = malloc(sizeof order);
    memcpy(s->order, order, sizeof order);
    rng_seed(&s->shuffle_rng, 1);
    rng_seed(&s->model_rng, 2);
    s->learning_rate = 0.001;
    s->lr_factor = 1;
    s->lr_best_loss = INFINITY;
    s->best = INFINITY;
    s->threads = 1;
    s->ranks = 1;
    s->workers = 1;
    strcpy(s->blas_kernel, "Haswell");
}

static char *in_dir(const char *name)
{
    static char p[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static int exists(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0;
}

/* "4 3" for the steps of the checkpoint-STEP.bin files, newest first. */
static const char *listing(void)
{
    static char out[256];
    long *steps;
    Error err;
    int n = checkpoint_list(dir, &steps, &err);
    out[0] = 0;
    for (int i = 0; i < n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%ld", i ? " " : "", steps[i]);
    free(steps);
    return n < 0 ? "(error)" : out;
}

static void save(long step, int keep)
{
    ModelFile mf;
    Error err = {""};
    char path[256];
    make_checkpoint(&mf, step);
    int rc = checkpoint_save(dir, &mf, keep, path, sizeof path, &err);
    char what[96];
    snprintf(what, sizeof what, "save checkpoint-%ld.bin", step);
    CHECK(rc == 0 && !strcmp(path, in_dir(what + 5)), what);
    if (rc) fprintf(stderr, "  %s\n", err.msg);
    modelfile_free(&mf);
}

static void test_keep(void)
{
    for (long step = 7; step <= 35; step += 7)
        save(step, 2);
    CHECK(!strcmp(listing(), "35 28"), "keep 2: the two newest left (35 28)");
    CHECK(same_file(in_dir("checkpoint.bin"), in_dir("checkpoint-35.bin")), "checkpoint.bin is checkpoint-35.bin");
    CHECK(count_temporaries(dir) == 0, "no temporary file left");
    /* The same step saved again (a signal right after a checkpoint): still one file. */
    save(35, 2);
    CHECK(!strcmp(listing(), "35 28") && same_file(in_dir("checkpoint.bin"), in_dir("checkpoint-35.bin")) &&
              count_temporaries(dir) == 0,
          "saving the same step again replaces it and checkpoint.bin follows");
    save(42, 0);
    save(49, 0);
    CHECK(!strcmp(listing(), "49 42 35 28"), "keep 0: none deleted");
    save(56, 1);
    CHECK(!strcmp(listing(), "56"), "keep 1: only the newest");

    /* Other names in the directory are no checkpoints. */
    const char *others[] = {"checkpoint-.bin", "checkpoint-12x.bin", "checkpoint-3.bin.tmp", "checkpoint-4.bak",
                            "xcheckpoint-5.bin", "checkpoint-1234567890123456.bin"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        FILE *f = fopen(in_dir(others[i]), "w");
        if (f) fclose(f);
    }
    CHECK(!strcmp(listing(), "56"), "other names (checkpoint-12x.bin, checkpoint-3.bin.tmp, ...) are ignored");
    save(63, 1);
    int kept = 1;
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        kept &= exists(in_dir(others[i]));
        unlink(in_dir(others[i]));
    }
    CHECK(kept, "and never deleted");
}

static void test_failed_save(void)
{
    /* checkpoint-70.bin cannot be written (a full disk, src/base/testhook.h): the error
     * names it, and the earlier checkpoints and checkpoint.bin are as they were. */
    setenv("NMT_FULL_DISK_AT", "checkpoint-70.bin", 1);
    ModelFile mf;
    Error err = {""};
    make_checkpoint(&mf, 70);
    int rc = checkpoint_save(dir, &mf, 1, NULL, 0, &err);
    CHECK(rc == -1 && strstr(err.msg, in_dir("checkpoint-70.bin")), "a failed save: -1, the message names the file");
    CHECK(!strcmp(listing(), "63") && same_file(in_dir("checkpoint.bin"), in_dir("checkpoint-63.bin")),
          "a failed save: checkpoint-63.bin kept (keep 1 notwithstanding), checkpoint.bin still it");
    unsetenv("NMT_FULL_DISK_AT");
    modelfile_free(&mf);
}

static void damage(const char *p, long at)
{
    FILE *f = fopen(p, "r+b");
    if (!f) { perror(p); exit(2); }
    fseek(f, at, SEEK_SET);
    int c = getc(f);
    fseek(f, at, SEEK_SET);
    putc(c ^ 0x10, f);
    fclose(f);
}

static void test_load(void)
{
    ModelFile mf;
    char path[256], warning[1024];
    Error err = {""};
    int rc = checkpoint_load_newest(dir, &mf, path, warning, sizeof path, &err);
    CHECK(rc == 1 && mf.step == 63 && mf.has_train_state && !strcmp(path, in_dir("checkpoint-63.bin")) && !warning[0],
          "load: the newest checkpoint, no warning");
    if (rc == 1) modelfile_free(&mf);

    save(70, 0);
    save(77, 0);
    damage(in_dir("checkpoint-77.bin"), 100);
    rc = checkpoint_load_newest(dir, &mf, path, warning, sizeof path, &err);
    CHECK(rc == 1 && mf.step == 70 && strstr(warning, in_dir("checkpoint-77.bin")) && strstr(warning, "damaged") &&
              strstr(warning, "resuming from") && strstr(warning, in_dir("checkpoint-70.bin")),
          "load past a damaged newest: the one before, a warning naming both");
    if (rc == 1) modelfile_free(&mf);

    /* A model file without training state under a checkpoint name: skipped too. */
    make_checkpoint(&mf, 84);
    mf.has_train_state = 0;
    modelfile_write(in_dir("checkpoint-84.bin"), &mf, &err);
    mf.has_train_state = 1;
    modelfile_free(&mf);
    rc = checkpoint_load_newest(dir, &mf, path, warning, sizeof path, &err);
    CHECK(rc == 1 && mf.step == 70 && strstr(warning, "2 newer checkpoints") && strstr(warning, "checkpoint-84.bin") &&
              strstr(warning, "training state"),
          "load past a checkpoint without TRST and a damaged one: 'N newer checkpoints', the newest's reason");
    if (rc == 1) modelfile_free(&mf);

    /* A file whose name says another step than its contents. */
    rename(in_dir("checkpoint-84.bin"), in_dir("checkpoint-85.bin"));
    make_checkpoint(&mf, 84);
    modelfile_write(in_dir("checkpoint-91.bin"), &mf, &err);
    modelfile_free(&mf);
    rc = checkpoint_load_newest(dir, &mf, path, warning, sizeof path, &err);
    CHECK(rc == 1 && mf.step == 70 && strstr(warning, "checkpoint-91.bin: its step disagrees"),
          "a checkpoint named for another step: skipped");
    if (rc == 1) modelfile_free(&mf);

    /* None resumable: -1 naming the directory and the newest's problem. */
    damage(in_dir("checkpoint-70.bin"), 100);
    damage(in_dir("checkpoint-63.bin"), 100);
    strcpy(err.msg, "");
    rc = checkpoint_load_newest(dir, &mf, path, warning, sizeof path, &err);
    CHECK(rc == -1 && !strncmp(err.msg, dir, strlen(dir)) && strstr(err.msg, "no checkpoint can be resumed") &&
              strstr(err.msg, "checkpoint-91.bin"),
          "all unresumable: -1, naming the directory and the newest");

    /* Start over: every checkpoint and checkpoint.bin deleted; then nothing to load. */
    rc = checkpoint_remove_all(dir, &err);
    CHECK(rc == 5 && !strcmp(listing(), "") && !exists(in_dir("checkpoint.bin")),
          "remove_all: the 5 checkpoints and checkpoint.bin gone");
    rc = checkpoint_load_newest(dir, &mf, path, warning, sizeof path, &err);
    CHECK(rc == 0 && !path[0], "an empty directory: 0, nothing loaded");
    CHECK(checkpoint_load_newest(in_dir("missing"), &mf, path, warning, sizeof path, &err) == -1 &&
              strstr(err.msg, "missing"), "a missing directory: -1 naming it");
}

int main(void)
{
    strcpy(dir, "/tmp/nmt_test_checkpoint_XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    test_keep();
    test_failed_save();
    test_load();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_report("test_checkpoint");
}
