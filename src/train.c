#include "train.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adam.h"      /* defines: Adam, grad_norm, clip_scale, adam_update */
#include "batch.h"     /* defines: Batch, Example, batch_fill, batch_epoch_order, batch_shuffled_order */
#include "blas.h"      /* defines: blas_set_threads, blas_kernel_name */
#include "bleu.h"      /* defines: BleuStats, bleu_stats_add, bleu_compute */
#include "checkpoint.h" /* defines: checkpoint_save, checkpoint_load_newest, checkpoint_remove_all */
#include "corpus.h"    /* defines: PairTokens, corpus_* */
#include "dist.h"      /* defines: dist_rank, dist_size, dist_allreduce_sum, dist_broadcast */
#include "segment.h"   /* defines: Segmenter, tokenizer_kind, segmenter_learn_bpe */
#include "modelfile.h" /* defines: ModelFile, modelfile_write */
#include "plot.h"      /* defines: plot_training */
#include "progress.h"  /* defines: Progress, progress_* */
#include "schedule.h"  /* defines: LrSchedule, lr_schedule_* */
#include "testhook.h"  /* defines: testhook_pause_at_step (NMT_PAUSE_AT_STEP) */
#include "translate.h" /* defines: translate_lines, TranslateOptions */
#include "tsv.h"       /* defines: TsvCorpus, tsv_read_pairs */

/* Validation sentences translated together for BLEU, as `nmt eval` does. */
#define VALID_DECODE_BATCH 64

/* A step's own figures, summed over the ranks together with the gradients (in the
 * MODEL_GRAD_SPARE floats after them): its share of the batch's mean loss, and whether
 * SIGINT or SIGTERM reached it. */
enum { SPARE_LOSS, SPARE_SIGINT, SPARE_SIGTERM, SPARE_USED };
_Static_assert(SPARE_USED <= MODEL_GRAD_SPARE, "model.h: MODEL_GRAD_SPARE too small for train.c's figures");

/* Everything one run holds, so that the steps below read as the algorithm. */
typedef struct {
    const Config *cfg;
    const TrainOptions *opt;
    /* A data-parallel job (dist.h): every rank trains on its shard of each batch and
     * holds the same weights; rank 0 alone writes files, logs and validates. */
    int rank, ranks;
    ModelFile mf;          /* model, vocabularies, text options, optimizer */
    Example *train, *valid;
    int n_train, n_valid;
    RunState rs;           /* training and validation loss (RUN_TRAIN) */
    RunState decode_rs;    /* greedy decoding for validation BLEU (RUN_DECODE) */
    Batch batch;
    /* The validation pairs scored by BLEU (keep_bleu_pairs): raw sources, references
     * normalised as `nmt eval` normalises them. */
    char **bleu_src, **bleu_ref;
    int n_bleu;
    LrSchedule schedule;
    /* The best validation so far by train.best_metric, for best.bin and early stopping. */
    double best;
    long best_step, last_validated;
    int since_best;        /* validations in a row without a better best_metric */
    /* Where training stands: with the above, the weights, Adam and rs.rng, everything a
     * checkpoint's TrainState records (trainstate.h). */
    long step;             /* updates made */
    int epoch;             /* the epoch under way, from 1 */
    int next;              /* index in order of the next batch's first example */
    int order_ready;       /* order holds this epoch's order */
    int done;              /* no updates remain */
    int *order;            /* (n_train) */
    Rng shuffle;           /* draws each epoch's order */
    int nonfinite_in_a_row;
    long epoch_tokens, epoch_slots;
    double window_loss, window_time;
    long window_tokens, window_steps;
    double window_allreduce;  /* seconds in the gradient sum since the last step line */
    long window_allreduce_steps;
    int agreed_stop;       /* the signal that stops training, as the last sum told every rank */
    uint64_t train_fingerprint, valid_fingerprint;
    int threads;           /* OpenBLAS threads */
    int checkpoint_current; /* nothing has changed since the last checkpoint */
    char checkpoint[1024]; /* the path of the last checkpoint written or resumed from */
    double t_start;        /* now_seconds() at training time 0 */
    FILE *log;
    char *path;            /* scratch for OUTPUT_DIR/... paths */
    size_t path_cap;
    Progress *progress;    /* the live progress line on a terminal */
} Run;

static void say(const Run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const Run *run, const char *fmt, ...)
{
    if (run->opt->quiet) return;
    if (run->progress) progress_clear(run->progress);
    /* One write per line: under mpirun each write becomes a line of its own. */
    char line[2 * ERROR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "nmt: %s\n", line);
}

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
static int make_dirs(const char *dir, Error *err)
{
    char *p = xstrdup(dir);
    for (char *s = p + 1; ; s++) {
        if (*s == '/' || *s == 0) {
            char c = *s;
            *s = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                error_set(err, "%s: cannot create directory: %s", p, strerror(errno));
                free(p);
                return -1;
            }
            *s = c;
            if (!c) break;
        }
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return error_set(err, "%s: not a directory", dir);
    return 0;
}

/* ---------------------------------------------------------------- data */

static int read_pairs(const Run *run, const char *path, TsvCorpus *tsv, PairTokens *out, Error *err)
{
    if (tsv_read_pairs(path, tsv, err)) return -1;
    char note[ERROR_LEN];
    tsv_describe_skipped(tsv, path, note, sizeof note);
    if (note[0]) fprintf(stderr, "nmt: warning: %s\n", note);
    corpus_tokenize(tsv, &run->mf.text, run->cfg->max_len, out);
    if (out->n_too_long || out->n_empty)
        say(run, "%s: dropped %d pairs longer than %d tokens and %d with an empty side", path, out->n_too_long,
            run->cfg->max_len, out->n_empty);
    if (out->n == 0) {
        error_set(err, "%s: no usable sentence pairs (%d read)", path, tsv->n);
        tsv_free(tsv);
        pair_tokens_free(out);
        return -1;
    }
    return 0;
}

/* The held-out pairs as they were in the file, so that `nmt eval` can score them. */
static int write_valid_tsv(Run *run, const TsvCorpus *tsv, const PairTokens *pairs, const int *idx, int n,
                           Error *err)
{
    const char *path = out_path(run, "valid.tsv");
    FILE *f = fopen(path, "w");
    if (!f) return error_set(err, "%s: cannot write: %s", path, strerror(errno));
    for (int i = 0; i < n; i++) {
        const TsvPair *p = &tsv->pairs[pairs->index[idx[i]]];
        fprintf(f, "%s\t%s\n", p->src, p->tgt);
    }
    if (fclose(f) != 0) return error_set(err, "%s: write failed: %s", path, strerror(errno));
    return 0;
}

/* The validation pairs whose greedy translations are scored by BLEU at each
 * validation: all of them, or train.valid_bleu_max spread evenly over the set (a
 * validation file may be sorted by length, so not its first lines). Validation
 * example i came from pair idx[i] of `pairs` (i itself when idx is NULL). Kept as
 * text, so that BLEU is computed exactly as `nmt eval` computes it on the same pairs;
 * sorted by length, so that sentences decoded together end at similar steps. */
static void keep_bleu_pairs(Run *run, const TsvCorpus *tsv, const PairTokens *pairs, const int *idx)
{
    int n = run->cfg->valid_bleu_max < run->n_valid ? run->cfg->valid_bleu_max : run->n_valid;
    run->n_bleu = n;
    if (n == 0) return;
    int *pick = xmalloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        pick[i] = (int)((long)i * run->n_valid / n);
    sort_by_length(pick, run->valid, n);
    run->bleu_src = xmalloc(sizeof(char *) * n);
    run->bleu_ref = xmalloc(sizeof(char *) * n);
    for (int i = 0; i < n; i++) {
        const TsvPair *p = &tsv->pairs[pairs->index[idx ? idx[pick[i]] : pick[i]]];
        run->bleu_src[i] = xstrdup(p->src);
        char *ref = text_normalize_line(p->tgt, strlen(p->tgt), &run->mf.text);
        run->bleu_ref[i] = ref ? ref : xstrdup("");
    }
    free(pick);
}

/* BPE merges learned from the training split's word counts (data.tokenizer "bpe"), per
 * side or, with data.joint_vocab, from both sides together (the same list for both);
 * deterministic, so a resumed run learns the same ones again. */
static void learn_segmenter(Run *run, const PairTokens *pairs, const int *idx, int n)
{
    const Config *cfg = run->cfg;
    Segmenter *s = &run->mf.seg;
    s->kind = (TokenizerKind)tokenizer_kind(cfg->tokenizer);  /* the config has checked the name */
    s->joint = cfg->joint_vocab;
    if (s->kind != TOKENIZER_BPE) return;
    double t0 = now_seconds();
    VocabCounter *sc = vocab_counter_new(), *tc = s->joint ? sc : vocab_counter_new();
    corpus_count(pairs, idx, n, sc, tc);
    segmenter_learn_bpe(&s->src, sc, cfg->bpe_merges);
    segmenter_learn_bpe(&s->tgt, tc, cfg->bpe_merges);
    if (tc != sc) vocab_counter_free(tc);
    vocab_counter_free(sc);
    if (s->joint)
        say(run, "learned %d BPE merges from both sides (%.1f s)", s->src.n, now_seconds() - t0);
    else
        say(run, "learned %d source and %d target BPE merges (%.1f s)", s->src.n, s->tgt.n, now_seconds() - t0);
}

/* Reads, splits, tokenises and encodes the data and builds the vocabularies; writes
 * OUTPUT_DIR/valid.tsv when write_valid (a resumed run keeps the one it has). */
static int prepare_data(Run *run, int write_valid, Error *err)
{
    const Config *cfg = run->cfg;
    PairTokens pairs, valid_pairs = {0};
    TsvCorpus tsv, valid_tsv = {0};
    if (read_pairs(run, cfg->train, &tsv, &pairs, err)) return -1;
    int *train_idx, *valid_idx, n_train, n_valid;
    if (cfg->valid) {
        if (read_pairs(run, cfg->valid, &valid_tsv, &valid_pairs, err)) {
            pair_tokens_free(&pairs);
            tsv_free(&tsv);
            return -1;
        }
        corpus_split(pairs.n, 0.0, (uint64_t)cfg->seed, &train_idx, &n_train, &valid_idx, &n_valid);
    } else {
        corpus_split(pairs.n, cfg->valid_fraction, (uint64_t)cfg->seed, &train_idx, &n_train, &valid_idx, &n_valid);
    }
    int status = 0;
    if (n_train == 0)
        status = error_set(err, "%s: no pairs left for training after the validation split", cfg->train);
    else if (!cfg->valid && write_valid)
        status = write_valid_tsv(run, &tsv, &pairs, valid_idx, n_valid, err);
    if (status) {
        free(train_idx);
        free(valid_idx);
        pair_tokens_free(&pairs);
        pair_tokens_free(&valid_pairs);
        tsv_free(&tsv);
        tsv_free(&valid_tsv);
        return -1;
    }
    learn_segmenter(run, &pairs, train_idx, n_train);
    corpus_segment(&pairs, &run->mf.seg);
    corpus_segment(&valid_pairs, &run->mf.seg);
    /* data.joint_vocab: both sides counted together, so both vocabularies are the same. */
    VocabCounter *sc = vocab_counter_new(), *tc = cfg->joint_vocab ? sc : vocab_counter_new();
    corpus_count(&pairs, train_idx, n_train, sc, tc);
    vocab_build(&run->mf.src_vocab, sc, cfg->min_count, cfg->max_vocab);
    vocab_build(&run->mf.tgt_vocab, tc, cfg->min_count, cfg->max_vocab);
    if (tc != sc) vocab_counter_free(tc);
    vocab_counter_free(sc);
    run->train = corpus_encode(&pairs, train_idx, n_train, &run->mf.src_vocab, &run->mf.tgt_vocab);
    run->n_train = n_train;
    if (cfg->valid) {
        run->valid = corpus_encode(&valid_pairs, NULL, valid_pairs.n, &run->mf.src_vocab, &run->mf.tgt_vocab);
        run->n_valid = valid_pairs.n;
        keep_bleu_pairs(run, &valid_tsv, &valid_pairs, NULL);
    } else {
        run->valid = corpus_encode(&pairs, valid_idx, n_valid, &run->mf.src_vocab, &run->mf.tgt_vocab);
        run->n_valid = n_valid;
        keep_bleu_pairs(run, &tsv, &pairs, valid_idx);
    }
    free(train_idx);
    free(valid_idx);
    pair_tokens_free(&pairs);
    pair_tokens_free(&valid_pairs);
    tsv_free(&tsv);
    tsv_free(&valid_tsv);
    say(run, "%d training pairs, %d validation pairs; vocabularies: %d source, %d target %s", run->n_train,
        run->n_valid, run->mf.src_vocab.size, run->mf.tgt_vocab.size,
        run->mf.seg.kind == TOKENIZER_WORD ? "words" : run->mf.seg.kind == TOKENIZER_BPE ? "pieces" : "characters");
    return 0;
}

/* The cross-entropy per target token of a unigram model fitted to the training
 * targets (add-one smoothed), on the validation targets: the loss a model that ignores
 * the source entirely would reach, so the number a real model must beat. */
static double unigram_baseline(const Run *run)
{
    int V = run->mf.tgt_vocab.size;
    double *count = xcalloc(V, sizeof(double)), total = V;
    for (int i = 0; i < run->n_train; i++) {
        for (int j = 0; j < run->train[i].tgt_len; j++)
            count[run->train[i].tgt[j]] += 1;
        count[VOCAB_EOS] += 1;
        total += run->train[i].tgt_len + 1;
    }
    double nll = 0;
    long n = 0;
    for (int i = 0; i < run->n_valid; i++) {
        for (int j = 0; j <= run->valid[i].tgt_len; j++) {
            int id = j < run->valid[i].tgt_len ? run->valid[i].tgt[j] : VOCAB_EOS;
            nll -= log((count[id] + 1) / total);
            n++;
        }
    }
    free(count);
    return n ? nll / n : 0;
}

/* ---------------------------------------------------------------- steps */

/* The probability of feeding the gold previous word at update `step` (0-based) of
 * `planned`: constant, or falling linearly to teacher_forcing_final by the last update
 * (scheduled sampling, Bengio et al. 2015). */
static double teacher_forcing(const Config *cfg, long step, long planned)
{
    if (strcmp(cfg->teacher_forcing_decay, "linear") || planned <= 1) return cfg->teacher_forcing;
    double f = (double)step / (double)(planned - 1);
    return cfg->teacher_forcing + f * (cfg->teacher_forcing_final - cfg->teacher_forcing);
}

/* Teacher-forced loss per target token over the validation pairs. */
static double validation_loss(Run *run)
{
    Model *m = &run->mf.model;
    int bs = run->cfg->batch_size;
    int *order = xmalloc(sizeof(int) * (run->n_valid ? run->n_valid : 1));
    for (int i = 0; i < run->n_valid; i++)
        order[i] = i;
    /* Sorted by length, so that batches carry little padding; the sum does not care. */
    sort_by_length(order, run->valid, run->n_valid);
    double total = 0;
    long tokens = 0;
    for (int start = 0; start < run->n_valid; start += bs) {
        int n = run->n_valid - start < bs ? run->n_valid - start : bs;
        batch_fill(&run->batch, run->valid, order + start, n);
        runstate_ensure(&run->rs, &m->dims, RUN_TRAIN, n, run->batch.S, run->batch.T);
        run->rs.label_smoothing = 0;  /* the plain cross-entropy, comparable across runs */
        total += model_forward(m, &run->rs, &run->batch, 0);
        tokens += run->batch.n_tokens;
    }
    free(order);
    return tokens ? total / tokens : 0;
}

/* Corpus BLEU of the greedy translations of the BLEU pairs, as `nmt eval` scores. */
static double validation_bleu(Run *run)
{
    TranslateOptions topt = {0};  /* greedy, at most 2 x source length + 10 words */
    BleuStats stats = {0};
    char *hyp[VALID_DECODE_BATCH];
    for (int start = 0; start < run->n_bleu; start += VALID_DECODE_BATCH) {
        int n = run->n_bleu - start < VALID_DECODE_BATCH ? run->n_bleu - start : VALID_DECODE_BATCH;
        translate_lines(&run->mf, &run->decode_rs, run->bleu_src + start, n, &topt, hyp, NULL);
        for (int i = 0; i < n; i++) {
            bleu_stats_add(&stats, hyp[i], run->bleu_ref[start + i]);
            free(hyp[i]);
        }
    }
    return bleu_compute(&stats).score;
}

/* model.bin or best.bin: the model without optimizer or training state. */
static int save(Run *run, const char *name, Error *err)
{
    run->mf.has_optimizer = 0;
    run->mf.has_train_state = 0;
    return modelfile_write(out_path(run, name), &run->mf, err);
}

/* One validation at `step`: the loss per token and (unless valid_bleu_max is 0) BLEU on
 * the held-out pairs, logged. A better train.best_metric than every earlier validation
 * writes best.bin; the plateau schedule sees the loss; train.early_stop validations in
 * a row without a better metric set *stop. Returns 0, or -1 if best.bin cannot be
 * written. */
static int validate(Run *run, long step, int epoch, int at_epoch_end, int *stop, Error *err)
{
    const Config *cfg = run->cfg;
    run->last_validated = step;
    double t0 = now_seconds();
    double vloss = validation_loss(run);
    int with_bleu = run->n_bleu > 0;
    double bleu = with_bleu ? validation_bleu(run) : NAN;
    double seconds = now_seconds() - t0;
    int by_bleu = !strcmp(cfg->best_metric, "bleu");
    double metric = by_bleu ? bleu : vloss;
    int improved = by_bleu ? metric > run->best : metric < run->best;
    if (improved) {
        run->best = metric;
        run->best_step = step;
        run->since_best = 0;
        if (save(run, "best.bin", err)) return -1;
    } else {
        run->since_best++;
    }
    fprintf(run->log, "{\"event\":\"validation\",\"step\":%ld,\"epoch\":%d,\"valid_loss\":%.6f,\"valid_ppl\":%.4f,",
            step, epoch, vloss, exp(vloss));
    if (with_bleu) fprintf(run->log, "\"valid_bleu\":%.4f,\"bleu_pairs\":%d,", bleu, run->n_bleu);
    fprintf(run->log, "\"learning_rate\":%g,\"best\":%s,\"seconds\":%.2f}\n", run->mf.opt.lr,
            improved ? "true" : "false", seconds);
    char what[64] = "";
    if (with_bleu) snprintf(what, sizeof what, ", BLEU %.2f", bleu);
    if (at_epoch_end)
        say(run, "epoch %d done at step %ld: validation loss %.4f (perplexity %.2f)%s%s, %.0fs", epoch, step, vloss,
            exp(vloss), what, improved ? ", best so far" : "", now_seconds() - run->t_start);
    else
        say(run, "step %ld  validation loss %.4f (perplexity %.2f)%s%s, %.0fs", step, vloss, exp(vloss), what,
            improved ? ", best so far" : "", now_seconds() - run->t_start);

    if (lr_schedule_validation(&run->schedule, vloss)) {
        double lr = lr_schedule_at(&run->schedule, step + 1);
        fprintf(run->log, "{\"event\":\"lr_decay\",\"step\":%ld,\"learning_rate\":%g}\n", step, lr);
        say(run, "validation loss not below its best (%.4f) %d time%s in a row: learning rate now %g",
            run->schedule.best_loss, cfg->patience, cfg->patience == 1 ? "" : "s", lr);
    }
    if (cfg->early_stop > 0 && run->since_best >= cfg->early_stop) {
        fprintf(run->log, "{\"event\":\"early_stop\",\"step\":%ld,\"epoch\":%d,\"best_step\":%ld,\"best_%s\":%.6f}\n",
                step, epoch, run->best_step, cfg->best_metric, run->best);
        say(run, "stopping early: validation %s not better for %d validation%s (best %.4f at step %ld, in best.bin)",
            cfg->best_metric, run->since_best, run->since_best == 1 ? "" : "s", run->best, run->best_step);
        *stop = 1;
    }
    fflush(run->log);
    return 0;
}

/* A collective failed: a rank died or the network broke. What to say, on every rank
 * that is still there to say it. */
static int lost_contact(const Run *run, long step, Error *err)
{
    char why[ERROR_LEN];
    snprintf(why, sizeof why, "%s", err->msg);
    if (run->checkpoint[0])
        return error_set(err, "rank %d: lost contact with the other ranks during step %ld (%s); the last checkpoint, "
                              "%s, is intact", run->rank, step, why, run->checkpoint);
    return error_set(err, "rank %d: lost contact with the other ranks during step %ld (%s); no checkpoint was "
                          "written yet", run->rank, step, why);
}

/* A validation in a job of several ranks: rank 0 validates (validate above) and every
 * rank takes over what it decided, so that all go on alike: the best-metric
 * bookkeeping, the plateau schedule's state and early stopping. The others wait in the
 * broadcast meanwhile. With one rank this is validate. */
static int validation(Run *run, long step, int epoch, int at_epoch_end, int *stop, Error *err)
{
    if (run->rank == 0 && validate(run, step, epoch, at_epoch_end, stop, err)) return -1;
    if (run->ranks == 1) return 0;
    double decided[9] = {*stop, run->best, (double)run->best_step, (double)run->last_validated, run->since_best,
                          run->schedule.factor, run->schedule.best_loss, run->schedule.bad, run->schedule.decays};
    if (dist_broadcast(decided, sizeof decided, err)) return lost_contact(run, step, err);
    *stop = (int)decided[0];
    run->best = decided[1];
    run->best_step = (long)decided[2];
    run->last_validated = (long)decided[3];
    run->since_best = (int)decided[4];
    run->schedule.factor = decided[5];
    run->schedule.best_loss = decided[6];
    run->schedule.bad = (int)decided[7];
    run->schedule.decays = (int)decided[8];
    return 0;
}

/* The order of one epoch's examples: length-bucketed (train.bucket) or shuffled. */
static void epoch_order(const Run *run, int *order, Rng *rng)
{
    if (run->cfg->bucket) batch_epoch_order(order, run->train, run->n_train, run->cfg->batch_size, rng);
    else batch_shuffled_order(order, run->n_train, rng);
}

/* ---------------------------------------------------------------- stopping on a signal */

/* SIGINT or SIGTERM ask training to stop after the step under way, with a checkpoint.
 * A signal handler can do nothing but set a flag of this type, and it can only reach
 * a variable at file scope: the one piece of global state in training, read between
 * steps. 0, or the signal's number. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) { stop_signal = sig; }

typedef struct {
    struct sigaction old_int, old_term;
    int int_set, term_set;
} SignalHandlers;

/* Catches SIGINT and SIGTERM once each (SA_RESETHAND: a second one has its default
 * effect and stops the process at once; the checkpoints on disk are whole either
 * way). A signal the process was started ignoring (nohup, a background job) stays
 * ignored. */
static void catch_stop_signals(SignalHandlers *h)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;
    stop_signal = 0;
    h->int_set = sigaction(SIGINT, NULL, &h->old_int) == 0 && h->old_int.sa_handler != SIG_IGN &&
                 sigaction(SIGINT, &sa, NULL) == 0;
    h->term_set = sigaction(SIGTERM, NULL, &h->old_term) == 0 && h->old_term.sa_handler != SIG_IGN &&
                  sigaction(SIGTERM, &sa, NULL) == 0;
}

static void restore_signals(const SignalHandlers *h)
{
    if (h->int_set) sigaction(SIGINT, &h->old_int, NULL);
    if (h->term_set) sigaction(SIGTERM, &h->old_term, NULL);
}

/* ---------------------------------------------------------------- checkpoints */

/* The run's state as a checkpoint records it. s->order points at run->order. */
static void take_state(Run *run, TrainState *s)
{
    memset(s, 0, sizeof *s);
    fflush(run->log);
    s->step = run->step;
    s->epoch = run->epoch;
    s->next = run->next;
    s->order_ready = run->order_ready;
    s->done = run->done;
    s->n_train = run->n_train;
    s->order = run->order;
    s->shuffle_rng = run->shuffle;
    s->model_rng = run->rs.rng;
    s->learning_rate = run->mf.opt.lr;
    s->lr_factor = run->schedule.factor;
    s->lr_best_loss = run->schedule.best_loss;
    s->lr_bad = run->schedule.bad;
    s->lr_decays = run->schedule.decays;
    s->best = run->best;
    s->best_step = run->best_step;
    s->last_validated = run->last_validated;
    s->since_best = run->since_best;
    s->nonfinite_in_a_row = run->nonfinite_in_a_row;
    s->epoch_tokens = run->epoch_tokens;
    s->epoch_slots = run->epoch_slots;
    s->window_loss = run->window_loss;
    s->window_seconds = run->window_time;
    s->window_tokens = run->window_tokens;
    s->window_steps = run->window_steps;
    s->elapsed_seconds = now_seconds() - run->t_start;
    long at = ftell(run->log);
    s->log_bytes = at > 0 ? at : 0;
    s->n_valid = run->n_valid;
    s->train_fingerprint = run->train_fingerprint;
    s->valid_fingerprint = run->valid_fingerprint;
    s->threads = run->threads;
    s->ranks = run->ranks;
    snprintf(s->blas_kernel, sizeof s->blas_kernel, "%s", blas_kernel_name());
}

/* The inverse of take_state (after the model and optimizer have been loaded). */
static void restore_state(Run *run, const TrainState *s)
{
    run->step = s->step;
    run->epoch = s->epoch;
    run->next = s->next;
    run->order_ready = s->order_ready;
    run->done = s->done;
    memcpy(run->order, s->order, sizeof(int) * run->n_train);
    run->shuffle = s->shuffle_rng;
    run->rs.rng = s->model_rng;
    run->mf.opt.lr = (float)s->learning_rate;
    run->schedule.factor = s->lr_factor;
    run->schedule.best_loss = s->lr_best_loss;
    run->schedule.bad = s->lr_bad;
    run->schedule.decays = s->lr_decays;
    run->best = s->best;
    run->best_step = s->best_step;
    run->last_validated = s->last_validated;
    run->since_best = s->since_best;
    run->nonfinite_in_a_row = s->nonfinite_in_a_row;
    run->epoch_tokens = s->epoch_tokens;
    run->epoch_slots = s->epoch_slots;
    run->window_loss = s->window_loss;
    run->window_time = s->window_seconds;
    run->window_tokens = s->window_tokens;
    run->window_steps = s->window_steps;
    run->t_start = now_seconds() - s->elapsed_seconds;
}

/* The ranks' weights must stay equal, since rank 0's checkpoint stands for all of them;
 * that rests on every rank getting the same bits from each sum (dist.h). Checked at
 * each checkpoint by the weights' fingerprint (floats_fingerprint, cheap next to
 * writing them), so that a broken assumption ends the job instead of going unnoticed. */
static int check_same_weights(const Run *run, Error *err)
{
    if (run->ranks == 1) return 0;
    uint64_t mine = floats_fingerprint(run->mf.model.param_mem, run->mf.model.n_params), first = mine;
    if (dist_broadcast(&first, sizeof first, err)) return lost_contact(run, run->step, err);
    if (mine != first)
        return error_set(err, "rank %d: its weights differ from rank 0's at step %ld (the sum over the ranks did not "
                              "give them the same bits); %s%s", run->rank, run->step,
                         run->checkpoint[0] ? "the last checkpoint is intact: " : "no checkpoint was written",
                         run->checkpoint);
    return 0;
}

/* OUTPUT_DIR/checkpoint-STEP.bin with the optimizer and the training state. Rank 0
 * writes it; the other ranks, whose state is the same, only note its name. */
static int save_checkpoint(Run *run, Error *err)
{
    if (check_same_weights(run, err)) return -1;
    if (run->rank > 0) {
        snprintf(run->checkpoint, sizeof run->checkpoint, "%s/checkpoint-%ld.bin", run->cfg->dir, run->step);
        run->checkpoint_current = 1;
        return 0;
    }
    take_state(run, &run->mf.train_state);
    run->mf.has_optimizer = 1;
    run->mf.has_train_state = 1;
    int status = checkpoint_save(run->cfg->dir, &run->mf, run->cfg->keep_checkpoints, run->checkpoint,
                                 sizeof run->checkpoint, err);
    run->mf.has_train_state = 0;
    run->mf.train_state.order = NULL;  /* run->order's */
    if (status == 0) run->checkpoint_current = 1;
    return status;
}

/* A signal asked training to stop: checkpoint (unless the last one is current) and
 * return the signal's number, with err saying where the checkpoint is. */
static int stop_for_signal(Run *run, int sig, Error *err)
{
    if (!run->checkpoint_current && save_checkpoint(run, err)) return -1;
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
    fprintf(run->log, "{\"event\":\"interrupted\",\"step\":%ld,\"epoch\":%d,\"signal\":\"%s\"}\n", run->step,
            run->epoch, name);
    fflush(run->log);
    error_set(err, "interrupted at step %ld; checkpoint written to %s", run->step, run->checkpoint);
    return sig;
}

/* A number for train.log: JSON has no NaN or infinity, so those are written as strings. */
static const char *json_number(char *buf, size_t len, double v)
{
    if (isnan(v)) snprintf(buf, len, "\"nan\"");
    else if (isinf(v)) snprintf(buf, len, v > 0 ? "\"inf\"" : "\"-inf\"");
    else snprintf(buf, len, "%.6g", v);
    return buf;
}

/* ---------------------------------------------------------------- the ranks' share of a step */

/* The signal that stops training, as every rank sees it: with one rank the flag itself;
 * with several, what the last step's sum told all of them (sum_over_ranks), so that
 * they stop after the same step and rank 0's checkpoint is every rank's state. */
static int stop_requested(const Run *run) { return run->ranks == 1 ? stop_signal : run->agreed_stop; }

/* The whole batch's target tokens and target length T (what batch_fill would count
 * for all n examples from order[start]): every rank knows them without asking the
 * others, and the loss is a mean over those tokens whichever rank computes a part. */
static void batch_counts(const Run *run, int start, int n, long *tokens, int *T)
{
    *tokens = 0;
    *T = 1;
    for (int i = 0; i < n; i++) {
        const Example *e = &run->train[run->order[start + i]];
        *tokens += e->tgt_len + 1;
        if (e->tgt_len + 1 > *T) *T = e->tgt_len + 1;
    }
}

/* splitmix64's finaliser: every input bit moves every output bit. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Forward and backward over this rank's shard of the batch of n examples at
 * order[start]: the contiguous slice [n r / N, n (r+1) / N) of rank r of N (the whole
 * batch for one rank), its gradient added into the model's as a part of the whole
 * batch's mean loss (rs.loss_tokens is set). Returns the shard's summed loss.
 *
 * Dropout masks and scheduled-sampling draws: rank 0 draws from the run's stream
 * (RunState.rng, which checkpoints keep), so that one rank is exactly the single
 * process. Rank r > 0 draws step s's from a stream seeded by (train.seed, r, s): its
 * own, and the same again after a resume without being kept anywhere. So with dropout
 * or sampling N ranks follow the single process's trajectory in distribution, not bit
 * for bit. */
static double shard_gradient(Run *run, int start, int n)
{
    Model *m = &run->mf.model;
    int lo = (int)((long)n * run->rank / run->ranks), hi = (int)((long)n * (run->rank + 1) / run->ranks);
    if (run->rank > 0) {
        uint64_t stream = mix64(mix64((uint64_t)run->cfg->seed ^ 0x64726f706f7574ull) ^ (uint64_t)run->rank);
        rng_seed(&run->rs.rng, mix64(stream ^ (uint64_t)run->step));
    }
    if (hi == lo) return 0;  /* a batch smaller than the job: this rank adds nothing */
    batch_fill(&run->batch, run->train, run->order + start + lo, hi - lo);
    double sum = model_forward(m, &run->rs, &run->batch, 1);
    model_backward(m, &run->rs, &run->batch);
    return sum;
}

/* Sums the ranks' gradients, loss shares and stop requests in one collective over one
 * buffer (the gradients and the spare floats after them), so that every rank has the
 * whole batch's gradient and loss, decides clipping and skipping alike, and learns
 * whether any rank was asked to stop. *loss: this rank's share of the batch's mean in,
 * the batch's mean out. One rank: nothing to do (and *loss keeps its double precision). */
static int sum_over_ranks(Run *run, double *loss, Error *err)
{
    if (run->ranks == 1) return 0;
    Model *m = &run->mf.model;
    float *spare = m->grad_mem + m->n_params;
    int mine = stop_signal;
    spare[SPARE_LOSS] = (float)*loss;
    spare[SPARE_SIGINT] = mine == SIGINT;
    spare[SPARE_SIGTERM] = mine != 0 && mine != SIGINT;
    double t0 = now_seconds();
    if (dist_allreduce_sum(m->grad_mem, m->n_params + SPARE_USED, err)) return lost_contact(run, run->step + 1, err);
    run->window_allreduce += now_seconds() - t0;
    run->window_allreduce_steps++;
    *loss = spare[SPARE_LOSS];
    /* A rank reports its own signal; the others SIGTERM's if any rank had it. */
    run->agreed_stop = mine ? mine : spare[SPARE_SIGTERM] > 0 ? SIGTERM : spare[SPARE_SIGINT] > 0 ? SIGINT : 0;
    return 0;
}

/* ---------------------------------------------------------------- the loop */

/* The end of training: model.bin, the loss chart, and where the best model is. */
static int finish(Run *run, Error *err)
{
    const Config *cfg = run->cfg;
    if (run->rank > 0) return 0;
    if (save(run, "model.bin", err)) return -1;
    say(run, "wrote %s", out_path(run, "model.bin"));
    /* The loss curves, from the log as written so far; a chart that cannot be drawn
     * does not fail a finished training run. */
    if (run->log) fflush(run->log);
    Error plot_err;
    if (plot_training(cfg->dir, NULL, NULL, 0, &plot_err)) fprintf(stderr, "nmt: warning: %s\n", plot_err.msg);
    else say(run, "wrote %s", out_path(run, "training.svg"));
    if (run->best_step > 0)
        say(run, "the best validation %s, %.4f, was at step %ld: %s", cfg->best_metric, run->best, run->best_step,
            out_path(run, "best.bin"));
    return 0;
}

/* Trains from where run stands (the start, or a restored checkpoint) to the end.
 * Returns 0 when training is over and model.bin written; -1 on an error; or, when
 * SIGINT or SIGTERM stopped it, that signal's number (a checkpoint written, err saying
 * where). */
static int train_loop(Run *run, Error *err)
{
    const Config *cfg = run->cfg;
    Model *m = &run->mf.model;
    Adam *opt = &run->mf.opt;
    int bs = cfg->batch_size, status = -1;
    /* Subword units make sentences longer than data.max_len words: size by the data. */
    int max_src = 1, max_tgt = 1;
    for (int i = 0; i < run->n_train; i++) {
        if (run->train[i].src_len > max_src) max_src = run->train[i].src_len;
        if (run->train[i].tgt_len > max_tgt) max_tgt = run->train[i].tgt_len;
    }
    runstate_ensure(&run->rs, &m->dims, RUN_TRAIN, bs, max_src, max_tgt + 1);

    /* The updates this run will make if nothing stops it early. */
    long per_epoch = (run->n_train + bs - 1) / bs, planned = per_epoch * cfg->epochs;
    if (cfg->max_steps > 0 && cfg->max_steps < planned) planned = cfg->max_steps;
    model_zero_grad(m);
    SignalHandlers handlers;
    catch_stop_signals(&handlers);
    int stop = 0;
    while (!run->done) {
        if (stop_requested(run)) {
            status = stop_for_signal(run, stop_requested(run), err);
            goto out;
        }
        if (!run->order_ready) {
            epoch_order(run, run->order, &run->shuffle);
            run->order_ready = 1;
            run->epoch_tokens = run->epoch_slots = 0;
        }
        /* This process's pace through the epoch, for the progress line's ETA. */
        double epoch_clock = now_seconds();
        long epoch_first = (run->next + bs - 1) / bs;
        while (run->next < run->n_train && !stop) {
            /* Between steps: everything up to here is in the state a checkpoint takes. */
            if (stop_requested(run)) {
                status = stop_for_signal(run, stop_requested(run), err);
                goto out;
            }
            run->checkpoint_current = 0;
            double t0 = now_seconds();
            /* train.batch_size is the whole batch, shared out among the ranks. */
            int start = run->next, n = run->n_train - start < bs ? run->n_train - start : bs, T;
            long tokens;
            run->next = start + n;
            batch_counts(run, start, n, &tokens, &T);
            run->epoch_tokens += tokens;
            run->epoch_slots += (long)T * n;
            /* The gradients are zero here: adam_update clears them after each update. */
            run->rs.label_smoothing = (float)cfg->label_smoothing;
            run->rs.sample_prob = 1.0f - (float)teacher_forcing(cfg, run->step, planned);
            run->rs.loss_tokens = tokens;
            double loss = shard_gradient(run, start, n) / tokens;
            if (sum_over_ranks(run, &loss, err)) goto out;
            /* From here on every rank holds the same gradient and loss, so the checks
             * and the update below come out alike everywhere. */
            double norm = grad_norm(m->grad_mem, m->n_params);
            if (!isfinite(loss) || !isfinite(norm)) {
                model_zero_grad(m);
                run->nonfinite_in_a_row++;
                char l[32], g[32];
                fprintf(run->log, "{\"event\":\"nonfinite\",\"step\":%ld,\"epoch\":%d,\"batch\":%d,\"loss\":%s,"
                        "\"grad_norm\":%s,\"in_a_row\":%d}\n", run->step, run->epoch, start / bs + 1,
                        json_number(l, sizeof l, loss), json_number(g, sizeof g, norm), run->nonfinite_in_a_row);
                fflush(run->log);
                progress_clear(run->progress);
                if (run->rank == 0)
                    fprintf(stderr, "nmt: warning: step %ld: non-finite loss or gradient, update skipped (%d in a "
                            "row)\n", run->step + 1, run->nonfinite_in_a_row);
                if (run->nonfinite_in_a_row >= cfg->max_nonfinite) {
                    error_set(err, "%d steps in a row with a non-finite loss or gradient (train.max_nonfinite): "
                                   "training diverged (lower train.learning_rate?); %s%s", run->nonfinite_in_a_row,
                              run->checkpoint[0] ? "the last checkpoint is intact: " : "no checkpoint was written",
                              run->checkpoint);
                    goto out;
                }
                continue;
            }
            run->nonfinite_in_a_row = 0;
            opt->lr = (float)lr_schedule_at(&run->schedule, run->step + 1);
            adam_update(opt, m->param_mem, m->grad_mem, clip_scale(norm, cfg->clip_norm));
            long step = ++run->step;
            run->mf.step = step;
            run->mf.epoch = run->epoch;
            run->window_time += now_seconds() - t0;
            run->window_loss += loss;
            run->window_tokens += tokens;
            run->window_steps++;
            if (progress_live(run->progress)) {
                long done = (run->next + bs - 1) / bs;
                double eta = done > epoch_first ? (now_seconds() - epoch_clock) / (double)(done - epoch_first) *
                                                      (double)(per_epoch - done) : -1.0;
                progress_draw(run->progress, run->epoch, cfg->epochs, done, per_epoch, step,
                              run->window_loss / run->window_steps, run->window_tokens / run->window_time,
                              now_seconds() - run->t_start, eta);
            }
            if (step % cfg->log_every == 0) {
                double tps = run->window_tokens / run->window_time, mean = run->window_loss / run->window_steps;
                fprintf(run->log, "{\"step\":%ld,\"epoch\":%d,\"loss\":%.6f,\"tokens_per_s\":%.1f,"
                        "\"learning_rate\":%g,\"grad_norm\":%.4f,\"teacher_forcing\":%.4f",
                        step, run->epoch, mean, tps, opt->lr, norm, 1.0 - run->rs.sample_prob);
                /* Seconds per step in the gradient sum (the communication, and the wait
                 * for the slowest rank), since the last line. */
                if (run->ranks > 1 && run->window_allreduce_steps > 0)
                    fprintf(run->log, ",\"ranks\":%d,\"allreduce_s\":%.5f", run->ranks,
                            run->window_allreduce / run->window_allreduce_steps);
                fputs("}\n", run->log);
                fflush(run->log);
                /* On a terminal the progress line shows this; --verbose prints it too. */
                if (!progress_live(run->progress) || run->opt->verbose)
                    say(run, "step %ld  epoch %d  loss %.4f  %.0f tok/s  %.0fs", step, run->epoch, mean, tps,
                        now_seconds() - run->t_start);
                if (run->opt->verbose)
                    say(run, "  learning rate %g, gradient norm %.4f, teacher forcing %.3f", opt->lr, norm,
                        1.0 - run->rs.sample_prob);
                run->window_loss = run->window_time = run->window_allreduce = 0;
                run->window_tokens = run->window_steps = run->window_allreduce_steps = 0;
            }
            testhook_pause_at_step(step);  /* NMT_PAUSE_AT_STEP=K: the tests stop the run here */
            if (cfg->max_steps > 0 && step >= cfg->max_steps) stop = 1;
            /* The last batch of an epoch is validated and checkpointed below, as the
             * epoch's end; so is a step that ends training. */
            int last_batch = run->next >= run->n_train;
            if (cfg->validate_every > 0 && step % cfg->validate_every == 0 && !last_batch && !stop &&
                run->n_valid > 0 && validation(run, step, run->epoch, 0, &stop, err))
                goto out;
            if (cfg->checkpoint_every > 0 && step % cfg->checkpoint_every == 0 && !last_batch && !stop &&
                save_checkpoint(run, err))
                goto out;
        }
        /* Target slots (T x B of each batch) against real target tokens: what bucketing saves. */
        fprintf(run->log, "{\"event\":\"epoch\",\"epoch\":%d,\"step\":%ld,\"target_tokens\":%ld,"
                "\"target_slots\":%ld,\"target_padding\":%.4f}\n", run->epoch, run->step, run->epoch_tokens,
                run->epoch_slots, run->epoch_slots ? 1.0 - (double)run->epoch_tokens / run->epoch_slots : 0.0);
        if (run->n_valid > 0 && run->step > 0 && run->last_validated != run->step &&
            validation(run, run->step, run->epoch, 1, &stop, err))
            goto out;
        run->epoch++;
        run->next = 0;
        run->order_ready = 0;
        run->done = stop || run->epoch > cfg->epochs;
        if (save_checkpoint(run, err)) goto out;
    }
    status = finish(run, err);
out:
    restore_signals(&handlers);
    return status;
}

/* ---------------------------------------------------------------- export */

static void put_record(FILE *f, const char *name, const int *data, int ndim, const int *dims)
{
    int len = (int)strlen(name), dtype = 1;
    long n = 1;
    for (int d = 0; d < ndim; d++)
        n *= dims[d];
    fwrite(&len, 4, 1, f);
    fwrite(name, 1, len, f);
    fwrite(&dtype, 4, 1, f);
    fwrite(&ndim, 4, 1, f);
    fwrite(dims, 4, ndim, f);
    fwrite(data, 4, n, f);
}

static int export_batches(Run *run, const char *path, Error *err)
{
    const Config *cfg = run->cfg;
    int bs = cfg->batch_size, per_epoch = (run->n_train + bs - 1) / bs;
    long total = cfg->max_steps > 0 ? cfg->max_steps : (long)per_epoch * cfg->epochs;
    if (total > (long)per_epoch * cfg->epochs) total = (long)per_epoch * cfg->epochs;
    int n_test = run->n_valid < 2000 ? run->n_valid : 2000;
    FILE *f = fopen(path, "wb");
    if (!f) return error_set(err, "%s: cannot write: %s", path, strerror(errno));
    int count = 3 * (int)total + 3;
    fwrite("NMTFIX01", 1, 8, f);
    fwrite(&count, 4, 1, f);
    int header[4] = {run->mf.src_vocab.size, run->mf.tgt_vocab.size, (int)total, n_test}, four = 4;
    put_record(f, "dims", header, 1, &four);
    /* The same order train_loop draws: same seed, same calls. */
    Rng rng;
    rng_seed(&rng, (uint64_t)cfg->seed + 1);
    int *order = xmalloc(sizeof(int) * run->n_train);
    long k = 0;
    char name[64];
    for (int epoch = 1; k < total; epoch++) {
        epoch_order(run, order, &rng);
        for (int start = 0; start < run->n_train && k < total; start += bs, k++) {
            int n = run->n_train - start < bs ? run->n_train - start : bs;
            batch_fill(&run->batch, run->train, order + start, n);
            int sd[2] = {run->batch.S, n}, td[2] = {run->batch.T, n};
            snprintf(name, sizeof name, "batch.%ld.src", k);
            put_record(f, name, run->batch.src, 2, sd);
            snprintf(name, sizeof name, "batch.%ld.tgt_in", k);
            put_record(f, name, run->batch.tgt_in, 2, td);
            snprintf(name, sizeof name, "batch.%ld.tgt_out", k);
            put_record(f, name, run->batch.tgt_out, 2, td);
        }
    }
    free(order);
    int smax = 1;
    for (int i = 0; i < n_test; i++)
        if (run->valid[i].src_len > smax) smax = run->valid[i].src_len;
    int *src = xcalloc((long)(n_test ? n_test : 1) * smax, sizeof(int)), *len = xcalloc(n_test ? n_test : 1, sizeof(int));
    for (int i = 0; i < n_test; i++) {
        memcpy(src + (long)i * smax, run->valid[i].src, sizeof(int) * run->valid[i].src_len);
        len[i] = run->valid[i].src_len;
    }
    int ts[2] = {n_test, smax};
    put_record(f, "test.src", src, 2, ts);
    put_record(f, "test.len", len, 1, &n_test);
    free(src);
    free(len);
    if (ferror(f) | fclose(f)) return error_set(err, "%s: write failed", path);
    say(run, "wrote %ld batches and %d test sentences to %s", total, n_test, path);
    return 0;
}

/* ---------------------------------------------------------------- resuming */

/* The keys a resumed run may change: they decide where and how often things are
 * written, or (data paths) are checked by the data's fingerprint instead, or
 * (threads) are train.deterministic's to decide. Every other key shapes the updates. */
static const char *const free_keys[] = {"data.train", "data.valid", "train.threads", "train.log_every",
                                        "train.checkpoint_every", "train.keep_checkpoints", "train.deterministic",
                                        "train.max_nonfinite", "output.dir", NULL};

/* The config a checkpoint was trained with must be this run's. */
static int check_config(const Run *run, const ModelFile *ck, Error *err)
{
    const char *config = run->opt->config_path ? run->opt->config_path : "the config";
    Config then;
    config_defaults(&then);
    char source[1100];
    snprintf(source, sizeof source, "%s (section CONF)", run->checkpoint);
    if (config_parse(&then, ck->config_json, source, err)) {
        config_free(&then);
        return -1;
    }
    char key[ERROR_LEN / 4], was[ERROR_LEN / 4], now[ERROR_LEN / 4];
    int differ = config_difference(&then, run->cfg, free_keys, key, was, now, sizeof key);
    config_free(&then);
    if (differ)
        return error_set(err, "%s: %s: the checkpoint %s has %s, the config says %s (a run resumes with the "
                              "settings it started with; start a new run in another output.dir to change them)",
                         config, key, run->checkpoint, was, now);
    const TrainState *s = &ck->train_state;
    if (!s->done && s->epoch > run->cfg->epochs)
        return error_set(err, "%s: section TRST: field epoch is %d, beyond train.epochs %d", run->checkpoint,
                         s->epoch, run->cfg->epochs);
    return 0;
}

/* The data must be what the checkpoint was trained on: the same vocabularies, and the
 * same examples in the same split (fingerprints over the token ids). */
static int check_data(const Run *run, const ModelFile *ck, Error *err)
{
    const Vocab *now[2] = {&run->mf.src_vocab, &run->mf.tgt_vocab}, *then[2] = {&ck->src_vocab, &ck->tgt_vocab};
    const char *side[2] = {"source", "target"};
    for (int k = 0; k < 2; k++) {
        if (now[k]->size != then[k]->size)
            return error_set(err, "%s: %s vocabulary: the checkpoint %s has %d words, the data now gives %d",
                             run->cfg->train, side[k], run->checkpoint, then[k]->size, now[k]->size);
        for (int i = 0; i < now[k]->size; i++)
            if (strcmp(now[k]->words[i], then[k]->words[i]))
                return error_set(err, "%s: %s vocabulary: word %d is \"%s\" in the checkpoint %s, \"%s\" from the "
                                      "data now", run->cfg->train, side[k], i, then[k]->words[i], run->checkpoint,
                                 now[k]->words[i]);
    }
    const TrainState *s = &ck->train_state;
    if (s->n_train != run->n_train || s->train_fingerprint != run->train_fingerprint)
        return error_set(err, "%s: data.train: the checkpoint %s was trained on %d pairs (fingerprint %016llx), "
                              "the data now gives %d (fingerprint %016llx)", run->cfg->train, run->checkpoint,
                         s->n_train, (unsigned long long)s->train_fingerprint, run->n_train,
                         (unsigned long long)run->train_fingerprint);
    if (s->n_valid != run->n_valid || s->valid_fingerprint != run->valid_fingerprint)
        return error_set(err, "%s: the validation pairs: the checkpoint %s was validated on %d (fingerprint %016llx), "
                              "the data now gives %d (fingerprint %016llx)",
                         run->cfg->valid ? run->cfg->valid : run->cfg->train, run->checkpoint, s->n_valid,
                         (unsigned long long)s->valid_fingerprint, run->n_valid,
                         (unsigned long long)run->valid_fingerprint);
    return 0;
}

/* train.deterministic: the resumed run computes on the thread count and kernel the
 * run started with, since OpenBLAS's sums depend on both, and on as many ranks, since
 * the shards (and so the order of the gradient sums) depend on that. A thread count can
 * be set here; a rank count is mpirun's, so another one is refused like another kernel. */
static int check_machine(Run *run, const TrainState *s, Error *err)
{
    if (!run->cfg->deterministic) return 0;
    if (s->ranks != run->ranks)
        return error_set(err, "%s: train.deterministic: the checkpoint was computed by %d rank%s, this job has %d; "
                              "resume with mpirun -np %d for a bit-identical run, or set train.deterministic to false",
                         run->checkpoint, s->ranks, s->ranks == 1 ? "" : "s", run->ranks, s->ranks);
    if (strcmp(s->blas_kernel, blas_kernel_name()))
        return error_set(err, "%s: train.deterministic: the checkpoint was computed with the OpenBLAS kernel %s, "
                              "this process runs %s; resume with OPENBLAS_CORETYPE=%s for a bit-identical run, or "
                              "set train.deterministic to false", run->checkpoint, s->blas_kernel,
                         blas_kernel_name(), s->blas_kernel);
    if (s->threads != run->threads) {
        say(run, "train.deterministic: %d OpenBLAS threads, as the run started with (train.threads now gives %d)",
            s->threads, run->threads);
        blas_set_threads(s->threads);
        run->threads = blas_thread_count();
    }
    return 0;
}

/* The checkpoint's model, optimizer, config text and state become the run's. ck is
 * left with its vocabularies only. */
static void adopt_checkpoint(Run *run, ModelFile *ck)
{
    run->mf.model = ck->model;
    memset(&ck->model, 0, sizeof ck->model);
    run->mf.opt = ck->opt;
    memset(&ck->opt, 0, sizeof ck->opt);
    ck->has_optimizer = 0;
    /* The config text the run started with, so that model.bin is the uninterrupted one's. */
    free(run->mf.config_json);
    run->mf.config_json = ck->config_json;
    ck->config_json = NULL;
    run->mf.step = ck->step;
    run->mf.epoch = ck->epoch;
    restore_state(run, &ck->train_state);
}

/* Ranks other than 0 write their copy of each train.log line to /dev/null: the file is
 * rank 0's, and this keeps the loop free of a rank test at every line. */
static int open_rank_log(Run *run, Error *err)
{
    run->log = fopen("/dev/null", "w");
    if (!run->log) return error_set(err, "rank %d: /dev/null: %s", run->rank, strerror(errno));
    return 0;
}

/* Opens train.log to go on from the checkpoint: what was logged after it (work that
 * will be redone) is cut off, so that each step is logged once. Returns the number of
 * lines cut, or -1. */
static long reopen_log(Run *run, long log_bytes, Error *err)
{
    if (run->rank > 0) return open_rank_log(run, err) ? -1 : 0;
    const char *path = out_path(run, "train.log");
    run->log = fopen(path, "r+");
    if (!run->log) run->log = fopen(path, "w");
    if (!run->log) return error_set(err, "%s: cannot write: %s", path, strerror(errno));
    long cut = 0;
    if (fseek(run->log, 0, SEEK_END) != 0) return error_set(err, "%s: cannot seek: %s", path, strerror(errno));
    long size = ftell(run->log);
    if (size < log_bytes) {
        fprintf(stderr, "nmt: warning: %s is shorter (%ld bytes) than when the checkpoint was written (%ld); "
                        "appending to it\n", path, size, log_bytes);
        return 0;
    }
    if (fseek(run->log, log_bytes, SEEK_SET) != 0) return error_set(err, "%s: cannot seek: %s", path, strerror(errno));
    for (int c; (c = getc(run->log)) != EOF;)
        cut += c == '\n';
    fflush(run->log);
    if (ftruncate(fileno(run->log), log_bytes) != 0 || fseek(run->log, log_bytes, SEEK_SET) != 0)
        return error_set(err, "%s: cannot cut to %ld bytes: %s", path, log_bytes, strerror(errno));
    return cut;
}

/* Resuming a run whose training is over: model.bin is written unless it is already
 * the checkpoint's model (a crash can come between the last checkpoint and model.bin). */
static int finish_finished(Run *run, Error *err)
{
    if (run->rank > 0) return 0;  /* model.bin is rank 0's to write */
    ModelFile have;
    Error ignored;
    int current = 0;
    if (modelfile_read(out_path(run, "model.bin"), &have, &ignored) == 0) {
        current = have.step == run->mf.step && have.model.n_params == run->mf.model.n_params &&
                  !memcmp(have.model.param_mem, run->mf.model.param_mem, sizeof(float) * have.model.n_params);
        modelfile_free(&have);
    }
    if (current) {
        say(run, "the run in %s finished at step %ld; %s is up to date: nothing to do", run->cfg->dir, run->step,
            out_path(run, "model.bin"));
        return 0;
    }
    say(run, "the run in %s finished at step %ld; writing its model.bin from %s", run->cfg->dir, run->step,
        run->checkpoint);
    return finish(run, err);
}

/* ---------------------------------------------------------------- the run */

static void say_model(const Run *run)
{
    const Config *cfg = run->cfg;
    say(run, "model: %s, %d layer%s%s, %s attention, embed %d, hidden %d, %ld parameters; OpenBLAS kernel %s, "
             "%d threads; output in %s",
        cfg->cell, cfg->layers, cfg->layers > 1 ? "s" : "", cfg->bidirectional ? ", bidirectional" : "",
        cfg->attention, cfg->embed, cfg->hidden, run->mf.model.n_params, blas_kernel_name(), run->threads, cfg->dir);
    if (run->ranks > 1)
        say(run, "data-parallel over %d ranks (MPI): %d threads each; a batch of %d pairs is %d to %d per rank; "
                 "%ld bytes summed per step", run->ranks, run->threads, cfg->batch_size, cfg->batch_size / run->ranks,
            (cfg->batch_size + run->ranks - 1) / run->ranks,
            (long)sizeof(float) * (run->mf.model.n_params + SPARE_USED));
}

/* One nmt train per directory: a second one (a resume started while the run is still
 * going) would cut train.log under the first and delete its checkpoints. The lock is
 * an fcntl lock on OUTPUT_DIR/train.lock, which the system releases when the process
 * ends, however it ends (SIGKILL included). Sets *fd to the locked file (-1 where the
 * file system offers no locks: the run goes ahead unguarded); returns -1 if another
 * process holds the lock. */
static int lock_dir(Run *run, int *fd, Error *err)
{
    const char *path = out_path(run, "train.lock");
    *fd = open(path, O_RDWR | O_CREAT, 0666);
    if (*fd < 0) return 0;  /* an unwritable directory: the first write says so */
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(*fd, F_SETLK, &fl) == 0) return 0;
    int busy = errno == EACCES || errno == EAGAIN;
    struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    long pid = busy && fcntl(*fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? (long)who.l_pid : 0;
    close(*fd);
    *fd = -1;
    if (!busy) return 0;
    if (pid > 0)
        return error_set(err, "%s is in use by another nmt train (process %ld holds %s)", run->cfg->dir, pid, path);
    return error_set(err, "%s is in use by another nmt train (it holds %s)", run->cfg->dir, path);
}

/* Which checkpoint, if any, this run goes on from: with opt->resume the newest one that
 * reads (1), or none in the directory yet (0). A new run refuses a directory holding an
 * unfinished run, and clears the checkpoints of a finished one. */
static int find_checkpoint(Run *run, ModelFile *ck, Error *err)
{
    const char *dir = run->cfg->dir;
    char warning[sizeof run->checkpoint];
    int found = checkpoint_load_newest(dir, ck, run->checkpoint, warning, sizeof warning, err);
    if (run->opt->resume) {
        if (found < 0) return -1;
        if (warning[0]) fprintf(stderr, "nmt: warning: %s\n", warning);
        if (found) return 1;
        /* No checkpoint-STEP.bin, but a checkpoint.bin: its checkpoint-STEP.bin was
         * deleted, or an nmt from before resuming existed wrote it. */
        const char *stable = out_path(run, "checkpoint.bin");
        struct stat st;
        if (stat(stable, &st) == 0) {
            snprintf(run->checkpoint, sizeof run->checkpoint, "%s", stable);
            if (modelfile_read(stable, ck, err)) return -1;
            if (ck->has_train_state) return 1;
            modelfile_free(ck);
            return error_set(err, "%s: no training state (section TRST): written by an nmt that could not resume; "
                                  "delete it to start over", stable);
        }
        say(run, "no checkpoint in %s yet: starting from the beginning", dir);
        return 0;
    }
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
                              "%s/checkpoint-*.bin to start over", dir, run->checkpoint, step, dir);
    int removed = checkpoint_remove_all(dir, err);
    if (removed < 0) return -1;
    say(run, "starting over in %s: deleted the %d checkpoint%s of the run that finished there", dir, removed,
        removed == 1 ? "" : "s");
    run->checkpoint[0] = 0;
    return 0;
}

/* Rank 0 decides which checkpoint, if any, the run goes on from (find_checkpoint, which
 * may clear a finished run's checkpoints first); the other ranks read the very file it
 * names, so that every rank starts from the same state. Returns as find_checkpoint. */
static int agree_checkpoint(Run *run, ModelFile *ck, Error *err)
{
    struct {
        int resuming;
        char path[sizeof run->checkpoint];
    } decided;
    memset(&decided, 0, sizeof decided);
    if (run->rank == 0) {
        decided.resuming = find_checkpoint(run, ck, err);
        if (decided.resuming < 0) return -1;
        memcpy(decided.path, run->checkpoint, sizeof decided.path);
    }
    if (dist_broadcast(&decided, sizeof decided, err)) return lost_contact(run, 0, err);
    if (run->rank > 0) {
        memcpy(run->checkpoint, decided.path, sizeof run->checkpoint);
        if (decided.resuming && modelfile_read(run->checkpoint, ck, err)) return -1;
    }
    return decided.resuming;
}

int train_run(const Config *cfg, const TrainOptions *opt, Error *err)
{
    /* Rank 0 alone speaks: the others train as with --quiet. */
    TrainOptions own = *opt;
    if (dist_rank() > 0) own.quiet = 1;
    Progress progress;
    progress_init(&progress, stderr, !own.quiet);
    Run run = {.cfg = cfg, .opt = &own, .rank = dist_rank(), .ranks = dist_size(), .progress = &progress};
    ModelFile ck;
    memset(&ck, 0, sizeof ck);
    int status = -1, resuming = 0, lock_fd = -1;
    blas_set_threads(cfg->threads);
    run.threads = blas_thread_count();
    run.mf.text.lowercase = cfg->lowercase;
    run.mf.text.nfkc = !strcmp(cfg->normalization, "nfkc");
    run.mf.config_json = config_to_json(cfg);
    /* Refuse a missing data file before anything is written. */
    const char *inputs[2][2] = {{"data.train", cfg->train}, {"data.valid", cfg->valid}};
    for (int i = 0; i < 2; i++) {
        FILE *probe = inputs[i][1] ? fopen(inputs[i][1], "rb") : NULL;
        if (inputs[i][1] && !probe) {
            error_set(err, "%s: %s (from %s)", inputs[i][1], strerror(errno), inputs[i][0]);
            goto done;
        }
        if (probe) fclose(probe);
    }
    if (run.rank == 0 && make_dirs(cfg->dir, err)) goto done;
    if (opt->export_path) {
        if (run.rank > 0) status = 0; /* one file, rank 0's */
        else status = prepare_data(&run, 1, err) ? -1 : export_batches(&run, opt->export_path, err);
        goto done;
    }
    if (run.rank == 0 && lock_dir(&run, &lock_fd, err)) goto done;
    /* Everything about a resume is checked before anything in the directory changes. */
    resuming = agree_checkpoint(&run, &ck, err);
    if (resuming < 0) goto done;
    if (resuming && check_config(&run, &ck, err)) goto done;
    if (resuming && ck.train_state.done) {
        /* Nothing to train: no need to read the data. The vocabularies are the
         * checkpoint's. */
        run.n_train = ck.train_state.n_train;
        run.order = xmalloc(sizeof(int) * run.n_train);
        adopt_checkpoint(&run, &ck);
        run.mf.src_vocab = ck.src_vocab;
        run.mf.tgt_vocab = ck.tgt_vocab;
        run.mf.seg = ck.seg;
        memset(&ck.src_vocab, 0, sizeof ck.src_vocab);
        memset(&ck.tgt_vocab, 0, sizeof ck.tgt_vocab);
        memset(&ck.seg, 0, sizeof ck.seg);
        status = finish_finished(&run, err);
        goto done;
    }
    if (resuming && check_machine(&run, &ck.train_state, err)) goto done;
    if (!resuming && run.rank == 0) {
        FILE *cf = fopen(out_path(&run, "config.json"), "w");
        if (!cf || fputs(run.mf.config_json, cf) < 0 || fclose(cf) != 0) {
            error_set(err, "%s: cannot write: %s", out_path(&run, "config.json"), strerror(errno));
            goto done;
        }
    }
    if (prepare_data(&run, !resuming && run.rank == 0, err)) goto done;
    run.train_fingerprint = examples_fingerprint(run.train, run.n_train);
    run.valid_fingerprint = examples_fingerprint(run.valid, run.n_valid);
    run.order = xmalloc(sizeof(int) * run.n_train);
    LrScheduleKind kind = LR_CONSTANT;
    lr_schedule_kind(cfg->lr_schedule, &kind);  /* the config has checked the name */
    lr_schedule_init(&run.schedule, kind, cfg->learning_rate, cfg->warmup_steps, cfg->lr_decay, cfg->patience);
    run.rs.dropout = (float)cfg->dropout;
    if (resuming) {
        if (check_data(&run, &ck, err)) goto done;
        adopt_checkpoint(&run, &ck);
        long cut = reopen_log(&run, ck.train_state.log_bytes, err);
        if (cut < 0) goto done;
        fprintf(run.log, "{\"event\":\"resume\",\"step\":%ld,\"epoch\":%d,\"batch\":%d,\"lines_cut\":%ld}\n",
                run.step, run.epoch, run.next / cfg->batch_size + 1, cut);
        fflush(run.log);
        say(&run, "resuming at step %ld (epoch %d, batch %d of %d) from %s", run.step, run.epoch,
            run.next / cfg->batch_size + 1, (run.n_train + cfg->batch_size - 1) / cfg->batch_size, run.checkpoint);
        say_model(&run);
        run.checkpoint_current = 1;
    } else {
        ModelDims dims = {.src_vocab = run.mf.src_vocab.size, .tgt_vocab = run.mf.tgt_vocab.size,
                          .embed = cfg->embed, .hidden = cfg->hidden,
                          .cell = strcmp(cfg->cell, "lstm") ? CELL_GRU : CELL_LSTM, .layers = cfg->layers,
                          .bidirectional = cfg->bidirectional, .attention = attention_kind(cfg->attention),
                          .input_feed = cfg->input_feed, .window = cfg->window, .scaled = cfg->scaled,
                          .tie_embeddings = cfg->tie_embeddings};
        const char *problem = dims_problem(&dims);
        if (problem) {
            error_set(err, "%s: the model options do not fit together: %s", out_path(&run, "config.json"), problem);
            goto done;
        }
        model_alloc(&run.mf.model, &dims);
        model_init_weights(&run.mf.model, (uint64_t)cfg->seed);
        adam_init(&run.mf.opt, run.mf.model.n_params, (float)cfg->learning_rate);
        say_model(&run);
        rng_seed(&run.rs.rng, (uint64_t)cfg->seed ^ 0x64726f706f7574ull);
        rng_seed(&run.shuffle, (uint64_t)cfg->seed + 1);
        run.epoch = 1;
        run.best = !strcmp(cfg->best_metric, "bleu") ? -INFINITY : INFINITY;
        if (run.rank > 0 && open_rank_log(&run, err)) goto done;
        if (run.rank == 0) run.log = fopen(out_path(&run, "train.log"), "w");
        if (!run.log) {
            error_set(err, "%s: cannot write: %s", out_path(&run, "train.log"), strerror(errno));
            goto done;
        }
        double baseline = unigram_baseline(&run);
        say(&run, "unigram baseline: validation loss %.3f per token (a model must beat this)", baseline);
        fprintf(run.log, "{\"event\":\"start\",\"train_pairs\":%d,\"valid_pairs\":%d,\"src_vocab\":%d,"
                "\"tgt_vocab\":%d,\"parameters\":%ld,\"unigram_valid_loss\":%.6f}\n",
                run.n_train, run.n_valid, run.mf.src_vocab.size, run.mf.tgt_vocab.size, run.mf.model.n_params,
                baseline);
        run.t_start = now_seconds();
    }
    if (run.n_valid == 0)
        say(&run, "no validation pairs: no validation loss or BLEU, best.bin, plateau decay or early stopping");
    status = train_loop(&run, err);
done:
    progress_clear(&progress); /* the caller's message starts on a clean line */
    if (run.log) fclose(run.log);
    examples_free(run.train, run.n_train);
    examples_free(run.valid, run.n_valid);
    free(run.order);
    runstate_free(&run.rs);
    runstate_free(&run.decode_rs);
    batch_free(&run.batch);
    for (int i = 0; i < run.n_bleu; i++) {
        free(run.bleu_src[i]);
        free(run.bleu_ref[i]);
    }
    free(run.bleu_src);
    free(run.bleu_ref);
    run.mf.has_optimizer = run.mf.opt.m != NULL;
    run.mf.has_train_state = 0;
    modelfile_free(&run.mf);
    modelfile_free(&ck);
    free(run.path);
    if (lock_fd >= 0) close(lock_fd);  /* releases the lock */
    return status;
}
