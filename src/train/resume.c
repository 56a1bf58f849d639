#include "train/resume.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernels/blas.h"       /* defines: blas_set_threads, blas_thread_count, blas_kernel_name */
#include "files/checkpoint.h" /* defines: checkpoint_load_newest, checkpoint_remove_all */

/* The keys a resumed run may change: they decide where and how often things are
 * written, or (data paths) are checked by the data's fingerprint instead, or
 * (threads, workers) are train.deterministic's to decide, or (the limits) only say when to stop,
 * or (the line limit) whether the data is read at all, never what is read from it.
 * Every other key shapes the updates. */
static const char *const free_keys[] = {"data.train", "data.valid", "data.max_line_bytes", "train.threads",
                                        "train.workers", "train.log_every", "train.checkpoint_every", "train.keep_checkpoints",
                                        "train.deterministic", "train.max_nonfinite", "train.epochs",
                                        "train.max_steps", "train.max_minutes", "output.dir", NULL};

/* No checkpoint-STEP.bin, but a checkpoint.bin: its checkpoint-STEP.bin was deleted, or
 * an nmt from before resuming existed wrote it. Returns 1 if it is there and resumable,
 * 0 if it is not there, -1 if it cannot be resumed from. */
static int find_stable(const char *dir, ModelFile *ck, char *path, size_t len, Error *err)
{
    snprintf(path, len, "%s/checkpoint.bin", dir);
    struct stat st;
    if (stat(path, &st) != 0) {
        path[0] = 0;
        return 0;
    }
    if (modelfile_read(path, ck, err)) return -1;
    if (ck->has_train_state) return 1;
    modelfile_free(ck);
    return error_set(err, "%s: no training state (section TRST): written by an nmt that could not resume; delete it "
                          "to start over", path);
}

int resume_find(const char *dir, int resume, ModelFile *ck, char *path, size_t len, Console *con, Error *err)
{
    char *warning = xmalloc(len);
    int found = checkpoint_load_newest(dir, ck, path, warning, len, err);
    if (resume) {
        if (found >= 0 && warning[0]) console_warn(con, "%s", warning);
        free(warning);
        if (found != 0) return found;
        found = find_stable(dir, ck, path, len, err);
        if (found == 0) console_say(con, "no checkpoint in %s yet: starting from the beginning", dir);
        return found;
    }
    free(warning);
    if (found < 0) {
        char why[ERROR_LEN];
        snprintf(why, sizeof why, "%s", err->msg);
        return error_set(err, "%s holds checkpoints of an earlier run that cannot be read (%s); delete "
                              "%s/checkpoint-*.bin to start over", dir, why, dir);
    }
    if (found == 0) return 0;
    int done = ck->train_state.done;
    long step = ck->step;
    modelfile_free(ck);
    if (!done)
        return error_set(err, "%s holds an unfinished run (%s, step %ld): continue it with --resume, or delete "
                              "%s/checkpoint-*.bin to start over", dir, path, step, dir);
    path[0] = 0;
    return 2;
}

int resume_clear_finished(const char *dir, Console *con, Error *err)
{
    int removed = checkpoint_remove_all(dir, err);
    if (removed < 0) return -1;
    console_say(con, "starting over in %s: deleted the %d checkpoint%s of the run that finished there", dir, removed,
                removed == 1 ? "" : "s");
    return 0;
}

int resume_check_config(const ModelFile *ck, const char *path, const Config *cfg, const char *config_name,
                        Error *err)
{
    const char *config = config_name ? config_name : "the config";
    Config then;
    config_defaults(&then);
    char source[1100];
    snprintf(source, sizeof source, "%s (section CONF)", path);
    if (config_parse(&then, ck->config_json, source, err)) {
        config_free(&then);
        return -1;
    }
    char key[ERROR_LEN / 4], was[ERROR_LEN / 4], now[ERROR_LEN / 4];
    int differ = config_difference(&then, cfg, free_keys, key, was, now, sizeof key);
    config_free(&then);
    if (differ) {
        int by_set = config_given_by(cfg, key) == CONFIG_GIVEN_SET;
        error_set(err, "%s: %s: the checkpoint %s has %s, %s says %s (a run resumes with the settings it started "
                       "with; start a new run in another output.dir to change them)",
                  by_set ? "--set" : config, key, path, was, by_set ? "--set" : "the config", now);
        return by_set ? -2 : -1;
    }
    /* The limits may move, but not behind where an unfinished run already stands. */
    const TrainState *s = &ck->train_state;
    int epochs_set = config_given_by(cfg, "train.epochs") == CONFIG_GIVEN_SET;
    int steps_set = config_given_by(cfg, "train.max_steps") == CONFIG_GIVEN_SET;
    int minutes_set = config_given_by(cfg, "train.max_minutes") == CONFIG_GIVEN_SET;
    if (!s->done && s->epoch > cfg->epochs) {
        error_set(err, "%s: train.epochs: the checkpoint %s is in epoch %d, beyond train.epochs %d",
                  epochs_set ? "--set" : config, path, s->epoch, cfg->epochs);
        return epochs_set ? -2 : -1;
    }
    if (!s->done && cfg->max_steps > 0 && s->step >= cfg->max_steps) {
        error_set(err, "%s: train.max_steps: the checkpoint %s is at step %ld, train.max_steps %ld is not beyond it",
                  steps_set ? "--set" : config, path, s->step, cfg->max_steps);
        return steps_set ? -2 : -1;
    }
    if (!s->done && cfg->max_minutes > 0 && s->elapsed_seconds >= 60 * cfg->max_minutes) {
        error_set(err, "%s: train.max_minutes: the checkpoint %s has trained %.2f minutes, train.max_minutes %g is "
                       "not beyond it", minutes_set ? "--set" : config, path, s->elapsed_seconds / 60, cfg->max_minutes);
        return minutes_set ? -2 : -1;
    }
    return 0;
}

int resume_more_to_do(const ModelFile *ck, const Config *cfg)
{
    const TrainState *s = &ck->train_state;
    if (!s->done) return 1;
    int stopped_early = cfg->early_stop > 0 && s->since_best >= cfg->early_stop;
    return !stopped_early && s->epoch <= cfg->epochs && (cfg->max_steps == 0 || s->step < cfg->max_steps) &&
           (cfg->max_minutes == 0 || s->elapsed_seconds < 60 * cfg->max_minutes);
}

char *resume_config_text(const ModelFile *ck, const Config *cfg)
{
    Config then;
    config_defaults(&then);
    Error ignored;  /* resume_check_config has read it */
    char *text = NULL;
    if (config_parse(&then, ck->config_json, "section CONF", &ignored) == 0 &&
        (then.epochs != cfg->epochs || then.max_steps != cfg->max_steps || then.max_minutes != cfg->max_minutes)) {
        then.epochs = cfg->epochs;
        then.max_steps = cfg->max_steps;
        then.max_minutes = cfg->max_minutes;
        text = config_to_json(&then);
    }
    config_free(&then);
    return text;
}

int resume_check_data(const ModelFile *ck, const char *path, const ModelFile *mf, const Dataset *ds,
                      const Config *cfg, Error *err)
{
    const Vocab *now[2] = {&mf->src_vocab, &mf->tgt_vocab}, *then[2] = {&ck->src_vocab, &ck->tgt_vocab};
    const char *side[2] = {"source", "target"};
    /* From train.init_from the vocabularies are the checkpoint's own (train.c). */
    for (int k = 0; k < 2 && !cfg->init_from; k++) {
        if (now[k]->size != then[k]->size)
            return error_set(err, "%s: %s vocabulary: the checkpoint %s has %d words, the data now gives %d",
                             cfg->train, side[k], path, then[k]->size, now[k]->size);
        for (int i = 0; i < now[k]->size; i++)
            if (strcmp(now[k]->words[i], then[k]->words[i]))
                return error_set(err, "%s: %s vocabulary: word %d is \"%s\" in the checkpoint %s, \"%s\" from the "
                                      "data now", cfg->train, side[k], i, then[k]->words[i], path, now[k]->words[i]);
    }
    const TrainState *s = &ck->train_state;
    if (s->n_train != ds->n_train || s->train_fingerprint != ds->train_fingerprint)
        return error_set(err, "%s: data.train: the checkpoint %s was trained on %d pairs (fingerprint %016llx), "
                              "the data now gives %d (fingerprint %016llx)", cfg->train, path, s->n_train,
                         (unsigned long long)s->train_fingerprint, ds->n_train,
                         (unsigned long long)ds->train_fingerprint);
    if (s->n_valid != ds->n_valid || s->valid_fingerprint != ds->valid_fingerprint)
        return error_set(err, "%s: the validation pairs: the checkpoint %s was validated on %d (fingerprint %016llx), "
                              "the data now gives %d (fingerprint %016llx)", cfg->valid ? cfg->valid : cfg->train,
                         path, s->n_valid, (unsigned long long)s->valid_fingerprint, ds->n_valid,
                         (unsigned long long)ds->valid_fingerprint);
    return 0;
}

int resume_check_machine(const TrainState *s, const char *path, const Config *cfg, int ranks, int *threads,
                         int *workers, Console *con, Error *err)
{
    if (!cfg->deterministic) return 0;
    if (s->ranks != ranks)
        return error_set(err, "%s: train.deterministic: the checkpoint was computed by %d rank%s, this job has %d; "
                              "resume with mpirun -np %d for a bit-identical run, or set train.deterministic to false",
                         path, s->ranks, s->ranks == 1 ? "" : "s", ranks, s->ranks);
    if (strcmp(s->blas_kernel, blas_kernel_name()))
        return error_set(err, "%s: train.deterministic: the checkpoint was computed with the OpenBLAS kernel %s, "
                              "this process runs %s; resume with OPENBLAS_CORETYPE=%s for a bit-identical run, or "
                              "set train.deterministic to false", path, s->blas_kernel, blas_kernel_name(),
                         s->blas_kernel);
    if (s->threads != *threads) {
        console_say(con, "train.deterministic: %d OpenBLAS threads, as the run started with (train.threads now "
                         "gives %d)", s->threads, *threads);
        blas_set_threads(s->threads);
        *threads = blas_thread_count();
    }
    if (s->workers != *workers) {
        console_say(con, "train.deterministic: %d worker%s, as the run started with (train.workers now gives %d)",
                    s->workers, s->workers == 1 ? "" : "s", *workers);
        *workers = s->workers;
    }
    return 0;
}

void resume_adopt(ModelFile *mf, ModelFile *ck)
{
    mf->model = ck->model;
    memset(&ck->model, 0, sizeof ck->model);
    mf->opt = ck->opt;
    memset(&ck->opt, 0, sizeof ck->opt);
    ck->has_optimizer = 0;
    free(mf->config_json);
    mf->config_json = ck->config_json;
    ck->config_json = NULL;
    mf->step = ck->step;
    mf->epoch = ck->epoch;
}
