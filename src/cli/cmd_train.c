/* cmd_train.c — nmt train: a config, its --set overrides, and the run (train/train.h). */
#include <ctype.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"   /* defines: OptionTable, Parsed, usage_error, fail */
#include "files/config.h"   /* defines: Config, config_load_keys, config_set, config_check */
#include "files/rundir.h"   /* defines: rundir_is_run_file */
#include "files/targets.h"  /* defines: TargetInput, target_check */
#include "train/dist.h"     /* defines: dist_init, dist_rank, dist_size, dist_barrier, dist_finalize, dist_abort */
#include "train/init_model.h" /* defines: train_adopt_init_model */
#include "train/train.h"    /* defines: TrainOptions, train_run */

typedef struct {
    TrainOptions opt;         /* --quiet, --verbose, --resume, --export-batches */
    const char *init_from;    /* --init-from MODEL.bin */
    StringList sets;          /* the --set arguments, in order */
} TrainArgs;

/* --set's value is SECTION.KEY=VALUE, one argument; config_set checks the rest. "--set
 * train.threads 1", a space for the '=', is told what to write. */
static int check_assignment(const char *value, const char *next, char *why, size_t why_len)
{
    if (strchr(value, '=')) return 0;
    if (next && next[0] != '-')
        snprintf(why, why_len, "--set %.100s: expected SECTION.KEY=VALUE, one argument: --set %.100s=%.100s if %.100s is "
                               "its value", value, value, next, next);
    else snprintf(why, why_len, "--set %.100s: expected SECTION.KEY=VALUE, such as train.batch_size=32", value);
    return -1;
}

static const Option train_rows[] = {
    {"--resume", OPT_FLAG, OPTION_AT(TrainArgs, opt.resume),
     .help = "go on from OUTPUT_DIR's newest checkpoint exactly as the run would\n"
             "have gone on (start if there is none); with RUN_DIR, the run's\n"
             "RUN_DIR/config.json is the config and RUN_DIR the output directory;\n"
             "a raised train.epochs or train.max_steps continues a finished run"},
    {"--init-from", OPT_STRING, OPTION_AT(TrainArgs, init_from), .metavar = "MODEL.bin",
     .help = "a new run from MODEL.bin's weights (model.bin, best.bin or a\n"
             "checkpoint), vocabularies, tokenizer and architecture, with a new\n"
             "optimizer at step 0: fine-tuning (train.init_from in the config)"},
    {"--set", OPT_STRINGS, OPTION_AT(TrainArgs, sets), .metavar = "SECTION.KEY=VALUE", .needs = "SECTION.KEY=VALUE",
     .check = check_assignment,
     .help = "override one config key, validated like the file's own keys\n"
             "(--set train.batch_size=32 --set model.cell=lstm); repeatable; a\n"
             "wrong one is a usage error (exit 2)"},
    {"--quiet", OPT_FLAG, OPTION_AT(TrainArgs, opt.quiet), .help = "no progress lines"},
    {"--verbose", OPT_FLAG, OPTION_AT(TrainArgs, opt.verbose),
     .help = "on a terminal, the periodic step lines as well as the live progress\n"
             "line; everywhere, also the learning rate and gradient norm"},
    {"--export-batches", OPT_STRING, OPTION_AT(TrainArgs, opt.export_path), .metavar = "FILE",
     .help = "do not train: write the batches training would use (train.max_steps\n"
             "of them) and held-out sources as token ids, for scripts/bench/bench_torch.py"},
};

const OptionTable train_options = {
    .name = "train",
    .usage =
        "usage: nmt train CONFIG.json [--set SECTION.KEY=VALUE ...] [--resume | --init-from MODEL.bin]\n"
        "                 [--quiet | --verbose] [--export-batches FILE]\n"
        "       nmt train --resume RUN_DIR [--set train.epochs=N ...] [--quiet]\n"
        "\n"
        "Train a model as CONFIG.json says (every key: docs/configuration.md). Progress goes\n"
        "to stderr; OUTPUT_DIR gets config.json, train.log (JSON lines), checkpoint-STEP.bin\n"
        "(the newest train.keep_checkpoints; checkpoint.bin is the newest), model.bin and\n"
        "training.svg (the loss curves, as nmt plot draws them).\n"
        "\n",
    OPTION_ROWS(train_rows),
    .column = 14,
    .epilogue =
        "\n"
        "A key a config leaves out takes its built-in default (README.md's configuration\n"
        "table). configs/default.json is not those defaults but a small, quick recipe (the\n"
        "demo: minutes on a laptop); where it differs: model.hidden 256 (built-in 512),\n"
        "train.epochs 3 (built-in 10), train.learning_rate 0.002 (built-in 0.001),\n"
        "train.checkpoint_every 500 (built-in 1000), train.workers 2 (built-in 1).\n"
        "\n"
        "SIGINT (Ctrl-C) or SIGTERM stops training after the current step with a checkpoint\n"
        "(a second one stops at once): exit status 130 or 143. Exit status 1: an error.\n"
        "A reader of the messages that goes away (nmt train ... 2>&1 | head) does not stop\n"
        "training: it goes on, and writes no more messages.\n",
    .args_size = sizeof(TrainArgs),
};

/* The config at path with the --set overrides and --init-from (init_from, or NULL)
 * applied, then checked as a whole; with train.init_from, the whole is checked once it
 * has the model's architecture (train_adopt_init_model), which may make keys apply that
 * do not apply to the config alone (model.heads for a Transformer). A run directory's
 * config.json is one nmt recorded (config.h: ConfigOrigin). Returns 0; -1 when the
 * config file or the whole is wrong; -2 when a --set is (an unknown key, a value the
 * key refuses, a key that does not apply, a rule a --set value breaks: a usage error). */
static int load_config(Config *cfg, const char *path, ConfigOrigin origin, const StringList *sets,
                       const char *init_from, Error *err)
{
    if (config_load_keys(cfg, path, origin, err)) return -1;
    for (int i = 0; i < sets->n; i++)
        if (config_set(cfg, sets->v[i], err)) return -2;
    /* --init-from is train.init_from, and the keys that apply only with it do. */
    if (init_from) {
        free(cfg->init_from);
        cfg->init_from = xstrdup(init_from);
    }
    return cfg->init_from ? 0 : config_check(cfg, path, err);
}

/* s as one word a POSIX shell reads back as s: as it is if it is made of characters no
 * shell treats specially, else in single quotes (each ' as '\''). */
static void print_shell_word(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p; p++)
        plain &= isalnum((unsigned char)*p) || strchr("/._-+:,=@%", *p) != NULL;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '\'') fputs("'\\''", f);
        else fputc(*p, f);
    }
    fputc('\'', f);
}

/* data.valid naming data.train's file (by device and inode) would validate on the
 * training pairs: every validation figure, best.bin and early stopping would measure
 * memory, not translation, without a word. 0; -1 with err; -2 when --set gave it. */
static int check_valid_not_train(const Config *cfg, const char *config_path, Error *err)
{
    if (!cfg->valid || !same_file(cfg->valid, cfg->train)) return 0;
    int by_set = config_given_by(cfg, "data.valid") == CONFIG_GIVEN_SET ||
                 config_given_by(cfg, "data.train") == CONFIG_GIVEN_SET;
    error_set(err, "%s: data.valid %s is data.train's file: validation would score the training pairs; give held-out "
                   "pairs, or leave data.valid out (data.valid_fraction holds a share of data.train out)",
              by_set ? "--set" : config_path, cfg->valid);
    return by_set ? -2 : -1;
}

/* --export-batches FILE may be none of the run's inputs, nor a model or a file of a run
 * directory (files/targets.h), nor one of the names nmt train writes in output.dir
 * (which the export claims as a run directory too). 0, or -1 with err. */
static int check_export_target(const char *path, const Config *cfg, const char *config_path, Error *err)
{
    const TargetInput inputs[] = {{"the config", config_path}, {"data.train", cfg->train},
                                  {"data.valid", cfg->valid}, {"data.spm_model", cfg->spm_model},
                                  {"train.init_from", cfg->init_from}};
    if (target_check("--export-batches", path, TARGET_TEXT, inputs, 5, NULL, err)) return -1;
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    char *dir = slash ? xstrdup(path) : xstrdup(".");
    if (slash) dir[slash == path ? 1 : slash - path] = 0;
    /* A directory that does not exist yet could be output.dir, which the run makes. */
    struct stat st;
    int status = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        status = error_set(err, "%s: cannot write: %s is not a directory", path, dir);
    else if (rundir_is_run_file(base) && same_file(dir, cfg->dir))
        status = error_set(err, "%s: --export-batches names a file nmt train writes in output.dir %s: choose another "
                                "name", path, cfg->dir);
    free(dir);
    return status;
}

int cmd_train(void *args, const Parsed *p)
{
    TrainArgs *a = args;
    TrainOptions opt = a->opt;
    if (too_many_operands(&train_options, p, 1)) return 2;
    if (p->n_operands == 0) return usage_error(&train_options, "train: missing CONFIG.json");
    const char *path = p->operands[0];
    if (opt.resume && opt.export_path)
        return usage_error(&train_options, "train: --export-batches does not resume; drop --resume");
    if (opt.quiet && opt.verbose)
        return usage_error(&train_options, "train: --quiet and --verbose ask for opposite things; give one");
    if (a->init_from && opt.resume)
        return usage_error(&train_options, "train: --init-from starts a new run and --resume goes on with one; a "
                                           "resumed run keeps the train.init_from it started with");
    /* nmt train --resume RUN_DIR: the run's own config, the directory as output.dir
     * (wherever the run has been moved to). */
    struct stat st;
    int run_dir = opt.resume && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    char *config_path = NULL;
    if (run_dir) {
        size_t n = strlen(path) + sizeof "/config.json";
        config_path = xmalloc(n);
        snprintf(config_path, n, "%s/config.json", path);
    }
    opt.config_path = run_dir ? config_path : path;
    Config cfg;
    Error err;
    /* Under mpirun (nmt-mpi) this process is one rank of a data-parallel job; anywhere
     * else, the only one. */
    int argc = p->argc;
    char **argv = p->argv;
    if (dist_init(&argc, &argv, &err)) {
        free(config_path);
        return fail(&err);
    }
    int rank = dist_rank();
    config_defaults(&cfg);
    int status = load_config(&cfg, opt.config_path, run_dir ? CONFIG_RECORDED : CONFIG_WRITTEN, &a->sets,
                             a->init_from, &err);
    if (status == 0 && run_dir) {
        free(cfg.dir);
        cfg.dir = xstrdup(path);
    }
    ModelFile init;  /* train.init_from's model, read before anything is written (train.h) */
    memset(&init, 0, sizeof init);
    if (status == 0 && cfg.init_from) status = train_adopt_init_model(&cfg, opt.config_path, &init, &err);
    if (status == 0 && cfg.init_from) opt.init_model = &init;
    /* (A run that started so, before nmt refused it, resumes as it started.) */
    if (status == 0 && !opt.resume) status = check_valid_not_train(&cfg, opt.config_path, &err);
    if (status == 0 && opt.export_path) status = check_export_target(opt.export_path, &cfg, opt.config_path, &err);
    /* A reader of stderr that goes away (nmt train 2>&1 | head -3; tee killed by the
     * Ctrl-C meant for training) must not end training by SIGPIPE: the write fails
     * instead (EPIPE), the console stops writing, and training goes on (or stops at a
     * checkpoint, for the Ctrl-C). */
    if (status == 0) signal(SIGPIPE, SIG_IGN);
    if (status == 0) status = train_run(&cfg, &opt, &err);
    if (status == SIGINT || status == SIGTERM) {
        /* Every rank stopped after the same step; rank 0 wrote the checkpoint. */
        /* The run directory, not the config: its config.json is the config the run was
         * given, --set overrides included, which the command line may no longer say. */
        if (rank == 0) {
            fprintf(stderr, "nmt: %s; resume with: nmt train --resume ", err.msg);
            print_shell_word(stderr, cfg.dir);
            fputc('\n', stderr);
        }
        status = 128 + status;
        /* No rank leaves before rank 0 has written the checkpoint and said where: a rank
         * that exits is what lets mpirun, forwarding a SIGTERM, send the SIGKILL early. */
        if (dist_barrier(&err)) fprintf(stderr, "nmt: rank %d: %s\n", rank, err.msg);
    } else if (status) {
        if (rank > 0) fprintf(stderr, "nmt: rank %d: %s\n", rank, err.msg);
        else if (status == -2) usage_error(&train_options, "%s", err.msg);
        else fail(&err);
        /* The other ranks may be waiting for this one in a collective they would never
         * leave: end them all. The checkpoints on disk are whole (rank 0 writes them
         * atomically). */
        if (dist_size() > 1) dist_abort(1);
        status = status == -2 ? 2 : 1;    /* a bad --set is a usage error */
    }
    modelfile_free(&init);
    config_free(&cfg);
    free(config_path);
    dist_finalize();
    return status;
}
