#include "train/train.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layers/adam.h"       /* defines: Adam, grad_norm, clip_scale, adam_update */
#include "data/batch.h"      /* defines: Batch, batch_fill */
#include "kernels/blas.h"       /* defines: blas_set_threads, blas_thread_count, blas_kernel_name */
#include "eval/bleu.h"       /* defines: bleu_signature */
#include "files/checkpoint.h" /* defines: checkpoint_save */
#include "base/console.h"    /* defines: Console, console_* */
#include "train/dataset.h"    /* defines: Dataset, dataset_* */
#include "io/lines.h"      /* defines: LineLimit, lines_check_file */
#include "files/modelfile.h"  /* defines: ModelFile, modelfile_write, modelfile_read */
#include "io/outfile.h"    /* defines: OutFile, outfile_open, outfile_commit */
#include "train/parallel.h"   /* defines: TrainWorkers, train_workers_* */
#include "train/plot.h"       /* defines: plot_training */
#include "train/ranks.h"      /* defines: Ranks, ranks_* */
#include "train/setup.h"      /* defines: setup_* (checks and settings before the run) */
#include "train/resume.h"     /* defines: resume_find, resume_clear_finished, resume_check_*, resume_adopt */
#include "files/rundir.h"     /* defines: RunInput, RunDir, rundir_open, rundir_keep, rundir_close, rundir_abandon,
                                  rundir_holds */
#include "layers/schedule.h"   /* defines: LrSchedule, lr_schedule_* */
#include "text/segment.h"    /* defines: tokenizer_kind, tokenizer_whitespace_only */
#include "base/signals.h"    /* defines: SignalHandlers, signals_catch, signals_pending */
#include "base/testhook.h"   /* defines: testhook_pause_at_step */
#include "files/trainlog.h"   /* defines: LogLine, TrainLog, trainlog_write, trainlog_create, trainlog_reopen */
#include "files/trainstate.h" /* defines: TrainState */
#include "train/progress.h"   /* defines: progress_updates_left */
#include "train/validate.h"   /* defines: validate_loss, validate_bleu */

/* Everything one run holds. */
typedef struct {
    const Config *cfg;
    const TrainOptions *opt;
    Console con;           /* stderr: messages and the progress line (rank 0 alone speaks) */
    Ranks ranks;           /* this process's place in a data-parallel job (ranks.h) */
    ModelFile mf;          /* model, vocabularies, text options, optimizer */
    Dataset data;          /* training and validation examples */
    RunState rs;           /* training and validation loss (RUN_TRAIN) */
    Workers *decoders;     /* greedy decoding of run->mf for validation BLEU */
    Batch batch;
    LrSchedule schedule;
    /* Where training stands: the step, the epoch and the place in its example order
     * (st.order, n_train), the order's random stream, the best validation so far and
     * the counts behind train.log's lines. With the weights, Adam, rs.rng and the
     * schedule, everything a checkpoint records (take_state). */
    TrainState st;
    int agreed_stop;        /* the signal that stops training, as the last sum told every rank */
    int time_up;            /* the training clock passed train.max_minutes, as the last sum told */
    long epoch_batches;     /* dataset_batches_per_epoch */
    double epoch_clock;     /* now_seconds() when this process began its part of the epoch, */
    long epoch_first;       /* at this batch: its pace, for the progress line's ETA */
    int threads;            /* OpenBLAS threads */
    int n_workers;          /* data-parallel workers in this process (train.workers) */
    TrainWorkers *workers;  /* their states and threads (parallel.h) */
    int checkpoint_current; /* nothing has changed since the last checkpoint */
    char checkpoint[1024];  /* the path of the last checkpoint written or resumed from */
    double t_start;         /* now_seconds() at training time 0 */
    TrainLog log;           /* train.log; not open on ranks other than 0 */
    char *path;             /* scratch for OUTPUT_DIR/... paths */
    size_t path_cap;
    float *class_weight;    /* a classifier's loss weight per class (train.class_weights), or NULL */
    RunDir dir;             /* output.dir as rank 0 took it (rundir.h) */
    int clear_finished;     /* output.dir holds a finished run's checkpoints, to delete */
    int claimed;            /* something of this run has been written in output.dir: a
                               refusal from here on no longer takes the directory away */
} Run;

static const char *out_path(Run *run, const char *name)
{
    size_t need = strlen(run->cfg->dir) + strlen(name) + 2;
    if (need > run->path_cap) {
        run->path_cap = need;
        run->path = xrealloc(run->path, need);
    }
    snprintf(run->path, run->path_cap, "%s/%s", run->cfg->dir, name);
    return run->path;
}

/* mkdir -p */
/* model.bin or best.bin: the model without optimizer or training state. */
static int save(Run *run, const char *name, Error *err)
{
    run->mf.has_optimizer = 0;
    run->mf.has_train_state = 0;
    return modelfile_write(out_path(run, name), &run->mf, err);
}


/* Appends l to train.log. A line that cannot be written (a full disk) is left out
 * whole (trainlog.h) and training goes on; the first such says so at once, and the run
 * ends with an error naming the lines lost (lost_log_lines, below). */
static void log_line(Run *run, const LogLine *l)
{
    if (trainlog_write(&run->log, l) == 0 || run->log.lost > 1) return;
    console_warn(&run->con, "%s: cannot write (%s): its lines from step %ld are lost while this lasts; training "
                            "goes on, and nmt train will end with an error saying how many", out_path(run, "train.log"),
                 strerror(run->log.first_errno), run->log.first_step);
}

/* A run that lost train.log lines ends with an error saying so (status 0 becomes -1),
 * or, stopped by a signal, keeps its status with a warning. */
static int lost_log_lines(Run *run, int status, Error *err)
{
    char what[ERROR_LEN];
    snprintf(what, sizeof what, "%s: %ld line%s could not be written (the first at step %ld: %s), and the log misses "
                                "them", out_path(run, "train.log"), run->log.lost, run->log.lost == 1 ? "" : "s",
             run->log.first_step, strerror(run->log.first_errno));
    if (status) {
        console_warn(&run->con, "%s", what);
        return status;
    }
    return error_set(err, "%s; the training itself finished: %s is whole", what, out_path(run, "model.bin"));
}

/* ---------------------------------------------------------------- the step */


/* What one step computed. */
typedef struct {
    long tokens;   /* the update's target tokens (<eos> included), all its batches' */
    long slots;    /* its batches' target slots: each batch's longest target times its pairs */
    double loss;   /* mean loss per target token over the whole update */
    double norm;   /* the gradient's norm before clipping */
} Step;

/* The training clock that train.max_minutes reads, with `steps` updates made: the time
 * since training began (validations and checkpoints in it; a resumed run's clock goes
 * on from its checkpoint's), or the tests' clock (testhook.h). */
static double training_clock(const Run *run, long steps)
{
    return testhook_clock(steps, now_seconds() - run->t_start);
}

/* One update from the examples st.order[start .. start + n): their batches
 * (dataset_batch_at: train.accumulate of them, or fewer at an epoch's end) one after
 * another, forward and backward over this rank's shard of each (the whole batch for one
 * rank), split among its workers (parallel.h), every gradient added into the model's as
 * a part of the update's mean loss over all their target tokens (so that 2 batches of 32
 * make the update one batch of 64 would, up to the order of float sums); the sum over
 * the ranks; then, if the loss and the gradient are finite, the update (clipped, Adam;
 * the workers share out the norm and the update). The gradients are zero when it
 * starts and when it returns. Sets run->time_up when the clock has passed
 * train.max_minutes (rank 0's clock, as the sum tells every rank). Returns 1 if the
 * update was made, 0 if it was skipped because something was not finite, -1 if the
 * ranks lost contact. */
static int train_step(Run *run, int start, int n, double forcing, Step *s, Error *err)
{
    const Config *cfg = run->cfg;
    Model *m = &run->mf.model;
    const int *order = run->st.order;
    /* The update's target tokens: every rank knows them without asking the others, and
     * the loss is a mean over those tokens whichever rank computes a part. */
    s->tokens = s->slots = 0;
    for (int i = 0; i < n; i++)
        s->tokens += run->data.train[order[start + i]].tgt_len + 1;
    run->rs.label_smoothing = (float)cfg->label_smoothing;
    run->rs.sample_prob = 1.0f - (float)forcing;
    run->rs.loss_tokens = s->tokens;
    double sum = 0;
    int a = 0;
    for (int at = start, b; at < start + n; at += b, a++) {
        b = dataset_batch_at(&run->data, cfg, order, at, start + n);
        int T = 1;
        for (int i = 0; i < b; i++)
            if (run->data.train[order[at + i]].tgt_len + 1 > T) T = run->data.train[order[at + i]].tgt_len + 1;
        s->slots += (long)T * b;
        /* This rank's share of batch a, split among its workers, their gradients added
         * to the update's. The run's stream (shard 0's) runs on from batch to batch; the
         * other shards' are reseeded at each call by the number passed, so each batch of
         * the update has its own streams: step * accumulate + a (the step itself with
         * one batch per update; under 2^63 by the keys' limits). */
        sum += train_workers_gradients(run->workers, m, &run->rs, &run->batch, run->data.train, order + at, b,
                                       &run->ranks, cfg->seed, run->st.step * cfg->accumulate + a);
    }
    s->loss = sum / s->tokens;
    run->time_up = run->ranks.rank == 0 && cfg->max_minutes > 0 &&
                   training_clock(run, run->st.step + 1) >= 60 * cfg->max_minutes;
    if (ranks_sum_step(&run->ranks, m, &s->loss, signals_pending(), &run->agreed_stop, &run->time_up,
                       run->st.step + 1, run->checkpoint, err))
        return -1;
    /* From here on every rank holds the same gradient and loss, so the checks and the
     * update below come out alike everywhere. */
    s->norm = train_workers_grad_norm(run->workers, m->grad_mem, m->n_params);
    if (!isfinite(s->loss) || !isfinite(s->norm)) {
        model_zero_grad(m);
        return 0;
    }
    run->mf.opt.lr = (float)lr_schedule_at(&run->schedule, run->st.step + 1);
    train_workers_adam(run->workers, &run->mf.opt, m->param_mem, m->grad_mem,
                       clip_scale(s->norm, cfg->clip_norm));  /* clears grads */
    return 1;
}

/* ---------------------------------------------------------------- around the step */

/* The signal that stops training, as every rank sees it: with one rank the flag itself;
 * with several, what the last step's sum told all of them, so that they stop after the
 * same step and rank 0's checkpoint is every rank's state. */
static int stop_requested(const Run *run)
{
    return run->ranks.size == 1 ? signals_pending() : run->agreed_stop;
}

/* The updates an epoch has (about, with train.batch_tokens: dataset_batches_per_epoch),
 * and how many of them lie before the example at st.order[next]: exact for batches of
 * train.batch_size pairs, in proportion with batch_tokens. For the progress line, the
 * planned updates, and the batch numbers in messages and train.log. */
static long updates_per_epoch(const Run *run)
{
    return (run->epoch_batches + run->cfg->accumulate - 1) / run->cfg->accumulate;
}

static long updates_done(const Run *run, int next)
{
    long per_update = (long)run->cfg->batch_size * run->cfg->accumulate;
    if (run->cfg->batch_tokens <= 0) return (next + per_update - 1) / per_update;
    return (long)((double)next / run->st.n_train * (double)updates_per_epoch(run) + 0.5);
}

/* A step whose loss or gradient was not finite made no update: logged and warned about;
 * train.max_nonfinite of them in a row end training with an error (-1). */
static int skipped_step(Run *run, int start, const Step *s, Error *err)
{
    TrainState *st = &run->st;
    st->nonfinite_in_a_row++;
    LogLine l = {LOG_NONFINITE, .v = {[LF_STEP] = st->step, [LF_EPOCH] = st->epoch,
                                      [LF_BATCH] = updates_done(run, start) + 1, [LF_LOSS] = s->loss,
                                      [LF_GRAD_NORM] = s->norm, [LF_IN_A_ROW] = st->nonfinite_in_a_row}};
    log_line(run, &l);
    if (run->ranks.rank == 0)
        console_warn(&run->con, "step %ld: non-finite loss or gradient, update skipped (%d in a row)", st->step + 1,
                     st->nonfinite_in_a_row);
    if (st->nonfinite_in_a_row < run->cfg->max_nonfinite) return 0;
    return error_set(err, "step %ld: %d steps in a row with a non-finite loss or gradient (train.max_nonfinite): "
                          "training diverged (lower train.learning_rate?); %s%s", st->step + 1, st->nonfinite_in_a_row,
                     run->checkpoint[0] ? "the last checkpoint is intact: " : "no checkpoint was written",
                     run->checkpoint);
}

/* An update made: the step's figures join the window of the next train.log step line,
 * which is written every train.log_every steps (and on the console, unless the
 * progress line shows it). */
static void account_step(Run *run, const Step *s, double seconds)
{
    const Config *cfg = run->cfg;
    TrainState *st = &run->st;
    st->window_seconds += seconds;
    st->window_loss += s->loss;
    st->window_tokens += s->tokens;
    st->window_steps++;
    double mean = st->window_loss / st->window_steps, tps = st->window_tokens / st->window_seconds;
    if (console_live(&run->con)) {
        long per_epoch = updates_per_epoch(run), done = updates_done(run, st->next);
        /* The run's ETA: this epoch's pace so far times the updates left in the run. */
        long left = progress_updates_left(st->epoch, cfg->epochs, done, per_epoch, st->step, cfg->max_steps);
        double eta = done > run->epoch_first && left > 0
                         ? (now_seconds() - run->epoch_clock) / (double)(done - run->epoch_first) * (double)left
                         : -1.0;
        console_progress(&run->con, st->epoch, cfg->epochs, done, per_epoch, st->step, mean, tps,
                         now_seconds() - run->t_start, eta);
    }
    if (st->step % cfg->log_every != 0) return;
    float lr = run->mf.opt.lr;
    double forcing = 1.0 - run->rs.sample_prob;
    LogLine l = {LOG_STEP, .v = {[LF_STEP] = st->step, [LF_EPOCH] = st->epoch, [LF_LOSS] = mean,
                                 [LF_TOKENS_PER_S] = tps, [LF_LEARNING_RATE] = lr, [LF_GRAD_NORM] = s->norm,
                                 [LF_TEACHER_FORCING] = forcing}};
    /* Seconds per step in the gradient sum (the communication, and the wait for the
     * slowest rank), since the last line. */
    long summed = run->ranks.allreduce_steps;
    double allreduce = ranks_take_timing(&run->ranks);
    if (run->ranks.size > 1 && summed > 0) {
        log_put(&l, LF_RANKS, run->ranks.size);
        log_put(&l, LF_ALLREDUCE_S, allreduce);
    }
    log_line(run, &l);
    /* On a terminal the progress line shows this; --verbose prints it too. */
    if (!console_live(&run->con) || run->opt->verbose)
        console_say(&run->con, "step %ld  epoch %d  loss %.4f  %.0f tok/s  %.0fs", st->step, st->epoch, mean, tps,
                    now_seconds() - run->t_start);
    if (run->opt->verbose)
        console_say(&run->con, "  learning rate %g, gradient norm %.4f, teacher forcing %.3f", lr, s->norm, forcing);
    st->window_loss = st->window_seconds = 0;
    st->window_tokens = st->window_steps = 0;
}

/* ---------------------------------------------------------------- validation */

/* One validation at the current step: the loss per token and (unless valid_bleu_max is
 * 0) BLEU on the held-out pairs, logged, by rank 0. A better train.best_metric than
 * every earlier validation writes best.bin; the plateau schedule sees the loss;
 * train.early_stop validations in a row without a better metric set *stop. The other
 * ranks take over what rank 0 decided, so that all go on alike. Returns 0, or -1 if
 * best.bin cannot be written or the ranks lost contact. */
static int validation(Run *run, int at_epoch_end, int *stop, Error *err)
{
    const Config *cfg = run->cfg;
    TrainState *st = &run->st;
    if (run->ranks.rank > 0)
        return ranks_share_validation(&run->ranks, st, &run->schedule, stop, st->step, run->checkpoint, err);
    st->last_validated = st->step;
    double t0 = now_seconds();
    double accuracy = NAN;
    int classifier = model_classifies(&run->mf.model.dims);
    double vloss = validate_loss(run->workers, &run->mf.model, &run->rs, &run->batch, &run->data, cfg->batch_size,
                                 &accuracy);
    /* A loss that is not a number, or whose perplexity is not, is not a figure to log,
     * compare or keep a best.bin by: the run ends here, saying when. */
    if (!isfinite(exp(vloss))) {
        char what[64];
        if (isfinite(vloss))
            snprintf(what, sizeof what, "%.4g per %s, too large for a%s", vloss, classifier ? "line" : "token",
                     classifier ? "n exponent" : " perplexity");
        else snprintf(what, sizeof what, "not finite (%s)", isnan(vloss) ? "NaN" : "infinite");
        return error_set(err, "step %ld: the validation loss is %s: the model's outputs overflow, its weights have "
                              "diverged (lower train.learning_rate?); %s%s", st->step, what,
                         run->checkpoint[0] ? "the last checkpoint: " : "no checkpoint was written", run->checkpoint);
    }
    int with_bleu = run->data.n_bleu > 0;
    double bleu = with_bleu ? validate_bleu(run->decoders, &run->data) : NAN;
    double seconds = now_seconds() - t0;
    int by_bleu = !strcmp(cfg->best_metric, "bleu"), by_accuracy = !strcmp(cfg->best_metric, "accuracy");
    double metric = by_bleu ? bleu : by_accuracy ? accuracy : vloss;
    int improved = by_bleu || by_accuracy ? metric > st->best : metric < st->best;
    if (improved) {
        st->best = metric;
        st->best_step = st->step;
        st->since_best = 0;
        if (save(run, "best.bin", err)) return -1;
    } else {
        st->since_best++;
    }
    LogLine l = {LOG_VALIDATION, .v = {[LF_STEP] = st->step, [LF_EPOCH] = st->epoch, [LF_VALID_LOSS] = vloss,
                                       [LF_LEARNING_RATE] = run->mf.opt.lr, [LF_BEST] = improved,
                                       [LF_SECONDS] = seconds, [LF_ELAPSED] = t0 - run->t_start}};
    if (!classifier) log_put(&l, LF_VALID_PPL, exp(vloss));  /* a perplexity is a language model's */
    if (with_bleu) {
        log_put(&l, LF_VALID_BLEU, bleu);
        log_put(&l, LF_BLEU_PAIRS, run->data.n_bleu);
    }
    if (classifier) log_put(&l, LF_VALID_ACCURACY, accuracy);
    log_line(run, &l);
    /* A classifier's loss is per line, with its accuracy; a translation model's per
     * token, with its perplexity and BLEU. */
    char what[96];
    snprintf(what, sizeof what, " (perplexity %.2f)", exp(vloss));
    if (with_bleu) snprintf(what + strlen(what), sizeof what - strlen(what), ", BLEU %.2f", bleu);
    if (classifier) snprintf(what, sizeof what, " per line, accuracy %.2f%%", 100 * accuracy);
    if (at_epoch_end)
        console_say(&run->con, "epoch %d done at step %ld: validation loss %.4f%s%s, %.0fs", st->epoch, st->step, vloss,
                    what, improved ? ", best so far" : "", now_seconds() - run->t_start);
    else
        console_say(&run->con, "step %ld  validation loss %.4f%s%s, %.0fs", st->step, vloss, what,
                    improved ? ", best so far" : "", now_seconds() - run->t_start);

    if (lr_schedule_validation(&run->schedule, vloss)) {
        double lr = lr_schedule_at(&run->schedule, st->step + 1);
        log_line(run, &(LogLine){LOG_LR_DECAY, .v = {[LF_STEP] = st->step, [LF_LEARNING_RATE] = lr}});
        console_say(&run->con, "validation loss not below its best (%.4f) %d time%s in a row: learning rate now %g",
                    run->schedule.best_loss, cfg->patience, cfg->patience == 1 ? "" : "s", lr);
    }
    if (cfg->early_stop > 0 && st->since_best >= cfg->early_stop) {
        LogLine e = {LOG_EARLY_STOP, .v = {[LF_STEP] = st->step, [LF_EPOCH] = st->epoch,
                                           [LF_BEST_STEP] = st->best_step}};
        log_put(&e, by_bleu ? LF_BEST_BLEU : by_accuracy ? LF_BEST_ACCURACY : LF_BEST_LOSS, st->best);
        log_line(run, &e);
        console_say(&run->con, "stopping early: validation %s not better for %d validation%s (best %.4f at step "
                               "%ld, in best.bin)", cfg->best_metric, st->since_best, st->since_best == 1 ? "" : "s",
                    st->best, st->best_step);
        *stop = 1;
    }
    return ranks_share_validation(&run->ranks, st, &run->schedule, stop, st->step, run->checkpoint, err);
}

/* ---------------------------------------------------------------- checkpoints */

/* The run's state as a checkpoint records it, in run->mf.train_state (whose order is
 * run->st.order's: not to be freed). */
static void take_state(Run *run)
{
    TrainState *s = &run->mf.train_state;
    *s = run->st;
    s->model_rng = run->rs.rng;
    s->learning_rate = run->mf.opt.lr;
    s->lr_factor = run->schedule.factor;
    s->lr_best_loss = run->schedule.best_loss;
    s->lr_bad = run->schedule.bad;
    s->lr_decays = run->schedule.decays;
    s->elapsed_seconds = training_clock(run, run->st.step);
    s->log_bytes = run->log.bytes;
    s->n_valid = run->data.n_valid;
    s->train_fingerprint = run->data.train_fingerprint;
    s->valid_fingerprint = run->data.valid_fingerprint;
    s->threads = run->threads;
    s->ranks = run->ranks.size;
    s->workers = run->n_workers;
    snprintf(s->blas_kernel, sizeof s->blas_kernel, "%s", blas_kernel_name());
}

/* The inverse of take_state: the checkpoint's training state becomes the run's (ck
 * gives up its order), after resume_adopt has taken its model and optimizer. */
static void restore_state(Run *run, ModelFile *ck)
{
    run->st = ck->train_state;
    ck->train_state.order = NULL;
    ck->has_train_state = 0;
    run->rs.rng = run->st.model_rng;
    run->mf.opt.lr = (float)run->st.learning_rate;
    run->schedule.factor = run->st.lr_factor;
    run->schedule.best_loss = run->st.lr_best_loss;
    run->schedule.bad = run->st.lr_bad;
    run->schedule.decays = run->st.lr_decays;
    run->t_start = now_seconds() - run->st.elapsed_seconds;
}

/* OUTPUT_DIR/checkpoint-STEP.bin with the optimizer and the training state. Rank 0
 * writes it; the other ranks, whose state is the same, only note its name. */
static int save_checkpoint(Run *run, Error *err)
{
    if (ranks_check_weights(&run->ranks, &run->mf.model, run->st.step, run->checkpoint, err)) return -1;
    if (run->ranks.rank > 0) {
        snprintf(run->checkpoint, sizeof run->checkpoint, "%s/checkpoint-%ld.bin", run->cfg->dir, run->st.step);
        run->checkpoint_current = 1;
        return 0;
    }
    take_state(run);
    run->mf.has_optimizer = 1;
    run->mf.has_train_state = 1;
    int status = checkpoint_save(run->cfg->dir, &run->mf, run->cfg->keep_checkpoints, run->checkpoint,
                                 sizeof run->checkpoint, err);
    run->mf.has_train_state = 0;
    run->mf.train_state.order = NULL;  /* run->st.order's */
    if (status == 0) run->checkpoint_current = 1;
    return status;
}

/* Which model file to translate with, for the last message of a run: best.bin when a
 * validation wrote one ("DIR/best.bin, the best validation loss (2.3456, step 200)"),
 * else `otherwise` (model.bin at the end, the checkpoint when stopped early). */
static void model_to_use(Run *run, const char *otherwise, char *out, size_t len)
{
    const TrainState *st = &run->st;
    if (st->best_step > 0)
        snprintf(out, len, "%s, the best validation %s (%.4f, step %ld)", out_path(run, "best.bin"),
                 run->cfg->best_metric, st->best, st->best_step);
    else
        snprintf(out, len, "%s (%s)", otherwise, run->data.n_valid > 0 ? "no validation yet, so no best.bin" :
                                                                         "no validation pairs, so no best.bin");
}

/* The loss curves of train.log as written so far: a chart that cannot be drawn fails
 * no run (a warning). */
static void draw_training(Run *run)
{
    Error plot_err;
    if (plot_training(run->cfg->dir, NULL, NULL, 0, &plot_err)) console_warn(&run->con, "%s", plot_err.msg);
    else console_say(&run->con, "wrote %s", out_path(run, "training.svg"));
}

/* A signal asked training to stop: checkpoint (unless the last one is current), the
 * loss chart, and the signal's number, with err saying where the checkpoint is and
 * which file to translate with meanwhile. No validation: it would take time a person
 * who pressed Ctrl-C does not expect, and change what the resumed run does. */
static int stop_for_signal(Run *run, int sig, Error *err)
{
    if (!run->checkpoint_current && save_checkpoint(run, err)) return -1;
    LogLine l = {LOG_INTERRUPTED, .v = {[LF_STEP] = run->st.step, [LF_EPOCH] = run->st.epoch}};
    snprintf(l.text, sizeof l.text, "%s", sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
    log_line(run, &l);
    if (run->ranks.rank == 0) draw_training(run);
    char use[2 * sizeof run->checkpoint + 160], ck[sizeof run->checkpoint + 32];
    snprintf(ck, sizeof ck, "%s, the weights at step %ld", run->checkpoint, run->st.step);
    model_to_use(run, ck, use, sizeof use);
    error_set(err, "interrupted at step %ld; checkpoint written to %s; to translate meanwhile: %s", run->st.step,
              run->checkpoint, use);
    return sig;
}

/* ---------------------------------------------------------------- the loop */

/* The end of training: model.bin, the loss chart, and where the best model is. */
static int finish(Run *run, Error *err)
{
    const Config *cfg = run->cfg;
    if (run->ranks.rank > 0) return 0;
    if (save(run, "model.bin", err)) return -1;
    console_say(&run->con, "wrote %s", out_path(run, "model.bin"));
    draw_training(run);
    if (run->st.best_step > 0)
        console_say(&run->con, "the best validation %s, %.4f, was at step %ld: %s, the model to translate with",
                    cfg->best_metric, run->st.best, run->st.best_step, out_path(run, "best.bin"));
    else
        console_say(&run->con, "the model to translate with: %s (no validation, so no best.bin)",
                    out_path(run, "model.bin"));
    return 0;
}

/* The end of an epoch: its padding figures logged, a validation unless the last step
 * had one, and a checkpoint. */
static int end_epoch(Run *run, int *stop, Error *err)
{
    TrainState *st = &run->st;
    /* Target slots (T x B of each batch) against real target tokens: what bucketing saves. */
    LogLine l = {LOG_EPOCH, .v = {[LF_EPOCH] = st->epoch, [LF_STEP] = st->step, [LF_TARGET_TOKENS] = st->epoch_tokens,
                                  [LF_TARGET_SLOTS] = st->epoch_slots,
                                  [LF_TARGET_PADDING] = st->epoch_slots ? 1.0 - (double)st->epoch_tokens /
                                                                                    st->epoch_slots : 0.0}};
    log_line(run, &l);
    if (run->data.n_valid > 0 && st->step > 0 && st->last_validated != st->step && validation(run, 1, stop, err))
        return -1;
    st->epoch++;
    st->next = 0;
    st->order_ready = 0;
    st->done = *stop || st->epoch > run->cfg->epochs;
    return save_checkpoint(run, err);
}

/* Training stopped inside an epoch (train.max_steps, or early stopping at a
 * train.validate_every validation): a validation unless the last step had one, and a
 * checkpoint that keeps the place in the epoch, so that a resume with a raised
 * train.max_steps goes on with the rest of it, as one longer run would have. */
static int stop_in_epoch(Run *run, int *stop, Error *err)
{
    TrainState *st = &run->st;
    if (run->data.n_valid > 0 && st->step > 0 && st->last_validated != st->step && validation(run, 0, stop, err))
        return -1;
    st->done = 1;
    return save_checkpoint(run, err);
}

/* The most examples a worker's shard of a batch holds. */
static int shard_room(const Run *run)
{
    long shards = (long)run->ranks.size * run->n_workers;
    return (int)((run->cfg->batch_size + shards - 1) / shards);
}

/* Trains from where run stands (the start, or a restored checkpoint) to the end.
 * Returns 0 when training is over and model.bin written; -1 on an error; or, when
 * SIGINT or SIGTERM stopped it, that signal's number (a checkpoint written, err saying
 * where). */
static int train_loop(Run *run, Error *err)
{
    const Config *cfg = run->cfg;
    TrainState *st = &run->st;
    int stop = 0;
    /* One worker computes the whole batch (its rank's share with MPI, as it always did:
     * the room for a whole batch, train.batch_size pairs, which a batch of
     * train.batch_tokens never exceeds); several, each a shard of it. */
    int room = run->n_workers > 1 ? shard_room(run) : cfg->batch_size;
    runstate_ensure(&run->rs, &run->mf.model.dims, RUN_TRAIN, room, run->data.max_src, run->data.max_tgt + 1);
    /* The updates this run will make if nothing stops it early. */
    long planned = updates_per_epoch(run) * cfg->epochs;
    if (cfg->max_steps > 0 && cfg->max_steps < planned) planned = cfg->max_steps;
    model_zero_grad(&run->mf.model);
    while (!st->done) {
        if (stop_requested(run)) return stop_for_signal(run, stop_requested(run), err);
        if (!st->order_ready) {
            dataset_epoch_order(&run->data, cfg, st->order, &st->shuffle_rng);
            st->order_ready = 1;
            st->epoch_tokens = st->epoch_slots = 0;
        }
        run->epoch_clock = now_seconds();
        run->epoch_first = updates_done(run, st->next);
        while (st->next < st->n_train && !stop) {
            /* Between steps: everything up to here is in the state a checkpoint takes. */
            if (stop_requested(run)) return stop_for_signal(run, stop_requested(run), err);
            run->checkpoint_current = 0;
            double t0 = now_seconds();
            /* The update's batches: train.accumulate of them (fewer at the epoch's end),
             * each shared out among the ranks. */
            int start = st->next;
            for (int k = 0; k < cfg->accumulate && st->next < st->n_train; k++)
                st->next += dataset_batch_at(&run->data, cfg, st->order, st->next, st->n_train);
            Step s;
            int updated = train_step(run, start, st->next - start, setup_teacher_forcing(cfg, st->step, planned), &s, err);
            if (updated < 0) return -1;
            st->epoch_tokens += s.tokens;
            st->epoch_slots += s.slots;
            if (run->time_up) stop = 1;
            if (!updated) {
                if (skipped_step(run, start, &s, err)) return -1;
                continue;
            }
            st->nonfinite_in_a_row = 0;
            run->mf.step = ++st->step;
            run->mf.epoch = st->epoch;
            account_step(run, &s, now_seconds() - t0);
            testhook_pause_at_step(st->step);  /* NMT_PAUSE_AT_STEP: the tests' known step */
            if (cfg->max_steps > 0 && st->step >= cfg->max_steps) stop = 1;
            if (run->time_up)
                console_say(&run->con, "train.max_minutes %g: %.1f minutes of training at step %ld; stopping",
                            cfg->max_minutes, training_clock(run, st->step) / 60, st->step);
            /* The last batch of an epoch is validated and checkpointed by end_epoch; so is
             * a step that ends training. */
            int later = st->next < st->n_train && !stop;
            if (later && cfg->validate_every > 0 && st->step % cfg->validate_every == 0 && run->data.n_valid > 0 &&
                validation(run, 0, &stop, err))
                return -1;
            if (later && !stop && cfg->checkpoint_every > 0 && st->step % cfg->checkpoint_every == 0 &&
                save_checkpoint(run, err))
                return -1;
        }
        if (stop && st->next < st->n_train ? stop_in_epoch(run, &stop, err) : end_epoch(run, &stop, err)) return -1;
    }
    return finish(run, err);
}

/* ---------------------------------------------------------------- setting up */


static void say_model(Run *run)
{
    const Config *cfg = run->cfg;
    const ModelDims *d = &run->mf.model.dims;
    char what[512];
    if (!strcmp(cfg->type, "classifier"))
        snprintf(what, sizeof what, "classifier, %s, %d layer%s%s, %s pooling, embed %d, hidden %d, %d classes",
                 cfg->cell, cfg->layers, cfg->layers > 1 ? "s" : "", cfg->bidirectional ? ", bidirectional" : "",
                 cfg->pooling, cfg->embed, cfg->hidden, model_classes(d));
    else if (!strcmp(cfg->type, "transformer"))
        snprintf(what, sizeof what, "Transformer, %d+%d layers, %d heads, d_model %d, feed-forward %d, %s-norm",
                 d->enc_layers, d->dec_layers, d->heads, d->embed, d->ff, cfg->norm);
    else
        snprintf(what, sizeof what, "%s, %d layer%s%s, %s attention, embed %d, hidden %d", cfg->cell, cfg->layers,
                 cfg->layers > 1 ? "s" : "", cfg->bidirectional ? ", bidirectional" : "", cfg->attention, cfg->embed,
                 cfg->hidden);
    /* How it computes: OpenBLAS's threads (one worker), or the workers. */
    char how[96];
    if (run->n_workers > 1) snprintf(how, sizeof how, "%d workers, one thread each", run->n_workers);
    else snprintf(how, sizeof how, "%d thread%s", run->threads, run->threads == 1 ? "" : "s");
    console_say(&run->con, "model: %s, %ld parameters; OpenBLAS kernel %s, %s; output in %s", what,
                run->mf.model.n_params, blas_kernel_name(), how, cfg->dir);
    if (run->ranks.size > 1)
        console_say(&run->con, "data-parallel over %d ranks (MPI): %s each; a batch of %d %s is %d to %d per rank; "
                               "%ld bytes summed per step", run->ranks.size, how, cfg->batch_size,
                    strcmp(cfg->type, "classifier") ? "pairs" : "lines",
                    cfg->batch_size / run->ranks.size, (cfg->batch_size + run->ranks.size - 1) / run->ranks.size,
                    (long)sizeof(float) * ranks_summed_floats(&run->mf.model));
}


static int write_config(Run *run, Error *err)
{
    const char *path = out_path(run, "config.json");
    OutFile o;
    if (outfile_open(&o, path, err)) return -1;
    fputs(run->mf.config_json, o.f);
    return outfile_commit(&o, err);
}

/* from's vocabularies and segmenter become to's (from is left without them). */
static void move_units(ModelFile *to, ModelFile *from)
{
    to->src_vocab = from->src_vocab;
    to->tgt_vocab = from->tgt_vocab;
    to->seg = from->seg;
    memset(&from->src_vocab, 0, sizeof from->src_vocab);
    memset(&from->tgt_vocab, 0, sizeof from->tgt_vocab);
    memset(&from->seg, 0, sizeof from->seg);
}

/* train.init_from: the model's vocabularies and segmenter become the run's, taken from
 * `from`: the model file itself for a new run (read here; its weights stay in it for
 * start_fresh), or the checkpoint a resume goes on from, which holds the same ones. The
 * config already has the model's architecture and text options (train_adopt_init_model). */
static int take_init_units(Run *run, ModelFile *from, Error *err)
{
    const char *path = run->cfg->init_from;
    if (!from->model.param_mem && !from->src_vocab.size && modelfile_read(path, from, err)) {
        char why[ERROR_LEN];
        snprintf(why, sizeof why, "%s", err->msg);
        return error_set(err, "train.init_from: %s", why);
    }
    move_units(&run->mf, from);
    modelfile_point_symbols(&run->mf);  /* the segmenter came with from's pointer */
    return 0;
}



/* The point of no return of a new run: everything that could refuse it has been
 * checked (the data read, the model built), so now, and only now, output.dir changes: a
 * finished run's checkpoints are cleared, config.json and valid.tsv are put in place.
 * A run refused before this leaves output.dir as it found it (no run directory at all
 * if it made it, rundir_abandon). Rank 0's. 0, or -1 with err. */
static int claim_run_dir(Run *run, Error *err)
{
    run->claimed = 1;
    rundir_keep(&run->dir);
    if (run->clear_finished && resume_clear_finished(run->cfg->dir, &run->con, err)) return -1;
    return write_config(run, err) || dataset_commit_valid(&run->data, err) ? -1 : 0;
}

/* A new run: the model initialised from the seed (or with init, train.init_from's model,
 * from its weights), the random streams seeded, train.log begun with the start line. */
static int start_fresh(Run *run, ModelFile *init, Error *err)
{
    const Config *cfg = run->cfg;
    ModelDims dims;
    config_model_dims(cfg, &dims);
    dims.src_vocab = run->mf.src_vocab.size;
    dims.tgt_vocab = run->mf.tgt_vocab.size;
    const char *problem = dims_problem(&dims);  /* config_check applied the same rules: a guard */
    if (problem)
        return error_set(err, "%s: the model options do not fit together: %s", out_path(run, "config.json"), problem);
    if (setup_check_memory(&dims, err)) return -1;
    model_alloc(&run->mf.model, &dims);
    model_init_weights(&run->mf.model, (uint64_t)cfg->seed);
    if (init) {
        char why[ERROR_LEN];
        const ModelDims *a = &init->model.dims;
        int same = a->embed == dims.embed && a->hidden == dims.hidden && a->cell == dims.cell &&
                   (a->layers ? a->layers : 1) == (dims.layers ? dims.layers : 1) &&
                   a->bidirectional == dims.bidirectional && a->attention == dims.attention &&
                   a->input_feed == dims.input_feed && a->scaled == dims.scaled &&
                   a->tie_embeddings == dims.tie_embeddings;
        /* Without train.extend_vocab the vocabularies are the model's: the same weights. */
        if (!same || (!cfg->extend_vocab && init->model.n_params != run->mf.model.n_params)) {
            snprintf(why, sizeof why, "%ld parameters, the config's model has %ld", init->model.n_params,
                     run->mf.model.n_params);
            return error_set(err, "train.init_from: %s: the model does not fit the config: %s", cfg->init_from, why);
        }
        /* Its weights; a grown vocabulary's new rows keep the family's initialisation. */
        if (model_grow_from(&run->mf.model, &init->model, why, sizeof why))
            return error_set(err, "train.init_from: %s: the model does not fit the config: %s", cfg->init_from, why);
        double unk[2];
        setup_unk_shares(&run->data, unk);
        if (cfg->extend_vocab && model_classifies(&dims))
            console_say(&run->con, "starting from the weights, tokenizer, vocabulary and labels of %s (a new optimizer, "
                                   "step 0), the vocabulary grown by train.extend_vocab: %d units of the new texts "
                                   "added (%d now); <unk> in the training texts: %.2f%% -> %.2f%%",
                        cfg->init_from, run->data.vocab_added[0], run->mf.src_vocab.size,
                        100 * run->data.unk_before[0], 100 * unk[0]);
        else if (cfg->extend_vocab)
            console_say(&run->con, "starting from the weights, tokenizer and vocabularies of %s (a new optimizer, step "
                                   "0), the vocabularies grown by train.extend_vocab: %d source and %d target units "
                                   "of the new data added (%d and %d now); <unk> in the training units: source "
                                   "%.2f%% -> %.2f%%, target %.2f%% -> %.2f%%",
                        cfg->init_from, run->data.vocab_added[0], run->data.vocab_added[1], run->mf.src_vocab.size,
                        run->mf.tgt_vocab.size, 100 * run->data.unk_before[0], 100 * unk[0],
                        100 * run->data.unk_before[1], 100 * unk[1]);
        else
            console_say(&run->con, "starting from the weights, vocabularies and tokenizer of %s (a new optimizer, step "
                                   "0); %.2f%% of the training source units and %.2f%% of the target units are <unk> "
                                   "under its vocabularies", cfg->init_from, 100 * unk[0], 100 * unk[1]);
    }
    adam_init(&run->mf.opt, run->mf.model.n_params, (float)cfg->learning_rate);
    setup_adam(&run->mf.opt, cfg);
    say_model(run);
    TrainState *st = &run->st;
    rng_seed(&run->rs.rng, (uint64_t)cfg->seed ^ 0x64726f706f7574ull);
    rng_seed(&st->shuffle_rng, (uint64_t)cfg->seed + 1);
    st->epoch = 1;
    st->best = strcmp(cfg->best_metric, "loss") ? -INFINITY : INFINITY;  /* bleu, accuracy: higher is better */
    if (run->ranks.rank == 0 && (claim_run_dir(run, err) || trainlog_create(&run->log, out_path(run, "train.log"), err)))
        return -1;
    double baseline = dataset_unigram_baseline(&run->data, run->mf.tgt_vocab.size);
    if (run->data.n_valid == 0) {
        /* Nothing to compare with: train() says what a run without validation lacks. */
    } else if (model_classifies(&run->mf.model.dims)) {
        int majority;
        double share = dataset_majority_accuracy(&run->data, model_classes(&run->mf.model.dims), &majority);
        console_say(&run->con, "baselines: the class frequencies score validation loss %.3f per example; always "
                               "answering \"%s\" is right on %.2f%% of the validation lines (a model must beat both)",
                    baseline, vocab_class_label(&run->mf.tgt_vocab, majority), 100 * share);
    } else {
        console_say(&run->con, "unigram baseline: validation loss %.3f per token (a model must beat this)", baseline);
    }
    LogLine l = {LOG_START, .v = {[LF_TRAIN_PAIRS] = run->data.n_train, [LF_VALID_PAIRS] = run->data.n_valid,
                                  [LF_SRC_VOCAB] = run->mf.src_vocab.size, [LF_TGT_VOCAB] = run->mf.tgt_vocab.size,
                                  [LF_PARAMETERS] = run->mf.model.n_params, [LF_UNIGRAM_VALID_LOSS] = baseline}};
    if (model_classifies(&run->mf.model.dims)) log_put(&l, LF_CLASSES, model_classes(&run->mf.model.dims));
    if (run->data.n_bleu > 0) {     /* what the validation BLEU will mean */
        bleu_signature(&run->data.bleu_metric, 0, l.text);
        log_put(&l, LF_BLEU_SIGNATURE, 0);
    }
    log_line(run, &l);
    run->t_start = now_seconds();
    return 0;
}


/* A resumed run: the data checked against the checkpoint ck, its model, optimizer and
 * state adopted, train.log cut back to where it stood, with a resume line. */
static int start_resumed(Run *run, ModelFile *ck, Error *err)
{
    if (resume_check_data(ck, run->checkpoint, &run->mf, &run->data, run->cfg, err)) return -1;
    char *limits = resume_config_text(ck, run->cfg);  /* NULL: the limits the run started with */
    char minutes[64];
    resume_adopt(&run->mf, ck);
    setup_adam(&run->mf.opt, run->cfg);
    if (limits) {
        free(run->mf.config_json);
        run->mf.config_json = limits;
        console_say(&run->con, "train.epochs %d, train.max_steps %ld%s from now on (config.json rewritten)",
                    run->cfg->epochs, run->cfg->max_steps, setup_minutes_limit(run->cfg, minutes, sizeof minutes));
        if (run->ranks.rank == 0 && write_config(run, err)) return -1;
    }
    free(run->st.order);
    restore_state(run, ck);
    TrainState *st = &run->st;
    long cut = 0;
    if (run->ranks.rank == 0) {
        char warning[ERROR_LEN];
        if (trainlog_reopen(&run->log, out_path(run, "train.log"), st->log_bytes, &cut, warning, sizeof warning, err))
            return -1;
        if (warning[0]) console_warn(&run->con, "%s", warning);
    }
    long batch = updates_done(run, st->next) + 1;
    log_line(run, &(LogLine){LOG_RESUME, .v = {[LF_STEP] = st->step, [LF_EPOCH] = st->epoch, [LF_BATCH] = batch,
                                               [LF_LINES_CUT] = cut}});
    console_say(&run->con, "resuming at step %ld (epoch %d, batch %ld of %ld) from %s", st->step, st->epoch, batch,
                updates_per_epoch(run), run->checkpoint);
    say_model(run);
    run->checkpoint_current = 1;
    return 0;
}

/* Resuming a run whose training is over: no data to read (the vocabularies are the
 * checkpoint's), and model.bin is written unless it is already the checkpoint's model (a
 * crash can come between the last checkpoint and model.bin). */
static int finish_finished(Run *run, ModelFile *ck, Error *err)
{
    resume_adopt(&run->mf, ck);
    restore_state(run, ck);
    move_units(&run->mf, ck);
    if (run->ranks.rank > 0) return 0;  /* model.bin is rank 0's to write */
    ModelFile have;
    Error ignored;
    int current = 0;
    if (modelfile_read(out_path(run, "model.bin"), &have, &ignored) == 0) {
        current = have.step == run->mf.step && have.model.n_params == run->mf.model.n_params &&
                  !memcmp(have.model.param_mem, run->mf.model.param_mem, sizeof(float) * have.model.n_params);
        modelfile_free(&have);
    }
    if (current) {
        console_say(&run->con, "the run in %s finished at step %ld; %s is up to date: nothing to do", run->cfg->dir,
                    run->st.step, out_path(run, "model.bin"));
        return 0;
    }
    console_say(&run->con, "the run in %s finished at step %ld; writing its model.bin from %s", run->cfg->dir,
                run->st.step, run->checkpoint);
    return finish(run, err);
}

/* Which checkpoint, if any, the run goes on from: rank 0 decides (resume_find; a
 * finished run's checkpoints are left for claim_run_dir to clear); the other ranks read
 * the very file it names, so that every rank starts from the same state. Returns 1 (ck
 * read), 0 or -1. */
static int find_checkpoint(Run *run, ModelFile *ck, Error *err)
{
    int resuming = 0;
    if (run->ranks.rank == 0) {
        resuming = resume_find(run->cfg->dir, run->opt->resume, ck, run->checkpoint, sizeof run->checkpoint,
                               &run->con, err);
        if (resuming < 0) return -1;
        if (resuming == 2) {
            run->clear_finished = 1;
            resuming = 0;
        }
    }
    if (ranks_share_checkpoint(&run->ranks, &resuming, run->checkpoint, sizeof run->checkpoint, err)) return -1;
    if (run->ranks.rank > 0 && resuming && modelfile_read(run->checkpoint, ck, err)) return -1;
    return resuming;
}



int train_run(const Config *cfg, const TrainOptions *opt, Error *err)
{
    Run run = {.cfg = cfg, .opt = opt};
    ranks_init(&run.ranks);
    /* Rank 0 alone speaks: the others train as with --quiet. */
    console_init(&run.con, stderr, opt->quiet || run.ranks.rank > 0);
    ModelFile ck, init;  /* the checkpoint resumed from; the model of train.init_from */
    memset(&ck, 0, sizeof ck);
    memset(&init, 0, sizeof init);
    if (opt->init_model) {  /* read before anything here is written or deleted: taken over */
        init = *opt->init_model;
        memset(opt->init_model, 0, sizeof *opt->init_model);
    }
    int status = -1, resuming = 0, rank0 = run.ranks.rank == 0;
    char minutes[64];
    run.dir.lock_fd = -1;
    blas_set_threads(cfg->threads);
    run.threads = blas_thread_count();
    run.n_workers = cfg->workers > 0 ? cfg->workers : threadpool_cores();
    if (run.n_workers > CONFIG_MAX_WORKERS) run.n_workers = CONFIG_MAX_WORKERS;
    run.mf.text.lowercase = cfg->lowercase;
    run.mf.text.nfkc = !strcmp(cfg->normalization, "nfkc");
    run.mf.text.whitespace_only = tokenizer_whitespace_only((TokenizerKind)tokenizer_kind(cfg->tokenizer));
    run.mf.config_json = config_to_json(cfg);
    if (modelfile_set_symbols(&run.mf, cfg->user_symbols.v, cfg->user_symbols.n, err)) goto done;
    if (setup_check_inputs(cfg, err)) goto done;
    if (rank0) {
        RunInput inputs[] = {{"the config file", opt->config_path}, {"data.train", cfg->train},
                             {"data.valid", cfg->valid}, {"data.spm_model", cfg->spm_model}};
        if (rundir_open(cfg->dir, inputs, 4, opt->resume, &run.dir, err)) goto done;
    }
    if (opt->export_path) {  /* one file, rank 0's; with train.init_from in the model's units, as training */
        status = 0;
        if (rank0 && cfg->init_from && take_init_units(&run, &init, err)) status = -1;
        if (rank0 && status == 0 && dataset_prepare(&run.data, &run.mf, cfg, out_path(&run, "valid.tsv"), &run.con, err)) status = -1;
        run.claimed = rank0 && status == 0;
        if (run.claimed) rundir_keep(&run.dir);
        if (run.claimed && (dataset_commit_valid(&run.data, err) ||
                            dataset_export(&run.data, cfg, &run.mf, opt->export_path, &run.con, err)))
            status = -1;
        goto done;
    }
    if (rank0 && setup_check_init_from(cfg, err)) goto done;
    /* Everything about a resume is checked before anything in the directory changes. */
    resuming = find_checkpoint(&run, &ck, err);
    if (resuming < 0) goto done;
    if (resuming && (status = resume_check_config(&ck, run.checkpoint, cfg, opt->config_path, err)) != 0)
        goto done;  /* -2: a --set's doing, a usage error */
    status = -1;
    if (resuming && ck.train_state.done && resume_more_to_do(&ck, cfg)) {
        console_say(&run.con, "the run in %s finished at step %ld; train.epochs %d and train.max_steps %ld%s let it "
                              "go on", cfg->dir, ck.train_state.step, cfg->epochs, cfg->max_steps,
                    setup_minutes_limit(cfg, minutes, sizeof minutes));
        ck.train_state.done = 0;
    }
    run.claimed = resuming;  /* a run's own directory: a refusal leaves it as it is anyway */
    if (resuming && ck.train_state.done) {
        status = finish_finished(&run, &ck, err);
        goto done;
    }
    if (resuming && resume_check_machine(&ck.train_state, run.checkpoint, cfg, run.ranks.size, &run.threads,
                                         &run.n_workers, &run.con, err))
        goto done;
    /* Several workers compute their shards at once, each on one OpenBLAS thread. */
    if (run.n_workers > 1) {
        blas_set_threads(1);
        run.threads = blas_thread_count();
    }
    if (cfg->init_from && take_init_units(&run, resuming ? &ck : &init, err)) goto done;
    if (dataset_prepare(&run.data, &run.mf, cfg, !resuming && rank0 ? out_path(&run, "valid.tsv") : NULL, &run.con,
                        err))
        goto done;
    run.st.n_train = run.data.n_train;
    run.epoch_batches = dataset_batches_per_epoch(&run.data, cfg);
    run.st.order = xmalloc(sizeof(int) * run.data.n_train);
    LrScheduleKind kind = LR_CONSTANT;
    lr_schedule_kind(cfg->lr_schedule, &kind);  /* the config has checked the name */
    lr_schedule_init(&run.schedule, kind, cfg->learning_rate, cfg->warmup_steps, cfg->lr_decay, cfg->patience);
    run.rs.dropout = (float)cfg->dropout;
    run.rs.attention_dropout = (float)config_attention_dropout(cfg);
    run.rs.activation_dropout = (float)config_activation_dropout(cfg);
    if (!strcmp(cfg->class_weights, "balanced") && !strcmp(cfg->type, "classifier"))
        run.rs.class_weight = run.class_weight = setup_balanced_weights(&run.data, run.mf.tgt_vocab.size - VOCAB_SPECIALS);
    if (resuming ? start_resumed(&run, &ck, err) : start_fresh(&run, cfg->init_from ? &init : NULL, err)) goto done;
    if (run.ranks.rank == 0)  /* every rank has the same data: rank 0 says it */
        setup_say_validation_set(&run.con, cfg, run.data.n_valid, model_classifies(&run.mf.model.dims));
    ModelFile *decoded[1] = {&run.mf};
    run.workers = train_workers_new(run.n_workers, &run.mf.model, shard_room(&run), run.data.max_src,
                                    run.data.max_tgt + 1, err);
    if (!run.workers || !(run.decoders = workers_new(decoded, 1, run.n_workers, err))) goto done;
    SignalHandlers handlers;
    signals_catch(&handlers);
    status = train_loop(&run, err);
    signals_restore(&handlers);
    if (run.log.lost && status >= 0) status = lost_log_lines(&run, status, err);
done:
    console_clear(&run.con); /* the caller's message starts on a clean line */
    trainlog_close(&run.log);
    dataset_free(&run.data);
    free(run.st.order);
    runstate_free(&run.rs);
    workers_free(run.decoders);
    train_workers_free(run.workers);
    batch_free(&run.batch);
    free(run.class_weight);
    run.mf.has_optimizer = run.mf.opt.m != NULL;
    run.mf.has_train_state = 0;
    modelfile_free(&run.mf);
    modelfile_free(&ck);
    modelfile_free(&init);
    /* A run refused before it wrote anything takes away what it made (rundir.h). */
    if (run.claimed) rundir_close(&run.dir);
    else rundir_abandon(&run.dir);
    free(run.path);
    return status;
}
