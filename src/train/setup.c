/* setup.c — a training run's checks and settings from its config and data; see setup.h. */
#include "train/setup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/console.h"  /* defines: console_say, console_warn */
#include "files/rundir.h"   /* defines: rundir_holds */
#include "io/lines.h"       /* defines: LineLimit, lines_check_file */
#include "text/vocab.h"     /* defines: VOCAB_UNK */

/* train.class_weights "balanced", as scikit-learn's: class c weighs
 * n / (classes * n_c) over the n training examples, n_c of them in class c. */
float *setup_balanced_weights(const Dataset *ds, int classes)
{
    float *w = xcalloc(classes, sizeof(float));
    long *count = xcalloc(classes, sizeof(long));
    for (int i = 0; i < ds->n_train; i++)
        count[ds->train[i].label]++;
    for (int c = 0; c < classes; c++)
        w[c] = count[c] ? (float)((double)ds->n_train / ((double)classes * count[c])) : 0.0f;
    free(count);
    return w;
}


/* train.init_from must not be a file this run may delete or write over: one in
 * output.dir (a finished run's checkpoints are deleted when a new one starts there, and
 * model.bin and best.bin are rewritten). The file, not the spelling of its path: by
 * device and inode, so a symbolic or hard link to a file there is refused too. (The
 * model has been read already, train_adopt_init_model: this keeps the run from deleting
 * or replacing what the user means to keep.) */
int setup_check_init_from(const Config *cfg, Error *err)
{
    if (!cfg->init_from || !rundir_holds(cfg->dir, cfg->init_from)) return 0;
    return error_set(err, "train.init_from: %s is in output.dir %s, where this run writes and deletes model files: "
                          "copy it elsewhere or choose another output.dir", cfg->init_from, cfg->dir);
}


/* The share of the training examples' units (source, target) that are <unk>: under a
 * vocabulary from train.init_from, how much of the new data the model cannot read. */
void setup_unk_shares(const Dataset *ds, double share[2])
{
    long unk[2] = {0, 0}, all[2] = {0, 0};
    for (int i = 0; i < ds->n_train; i++) {
        const Example *e = &ds->train[i];
        for (int j = 0; j < e->src_len; j++)
            unk[0] += e->src[j] == VOCAB_UNK;
        for (int j = 0; j < e->tgt_len; j++)
            unk[1] += e->tgt[j] == VOCAB_UNK;
        all[0] += e->src_len;
        all[1] += e->tgt_len;
    }
    for (int k = 0; k < 2; k++)
        share[k] = all[k] ? (double)unk[k] / (double)all[k] : 0.0;
}


/* Training keeps four floats of every parameter (weights, gradients and Adam's two
 * moments) before any activation. A model whose four copies are more than the memory
 * this machine allows cannot train here: refused before anything is allocated, naming
 * the limit and by how much it is passed (it used to end in "out of memory allocating
 * N bytes", N the weights alone, or in the kernel's OOM killer). */
int setup_check_memory(const ModelDims *d, Error *err)
{
    long n = params_count(d);
    double need = 4.0 * sizeof(float) * (double)n, limit;
    char what[96];
    if ((limit = memory_limit_bytes(what, sizeof what)) <= 0 || need <= limit) return 0;
    return error_set(err, "the model has %ld parameters, and training keeps 4 floats of each (weights, gradients, "
                          "Adam's two moments): %.2f GB before any activation, %.2f GB over this machine's memory limit "
                          "of %.2f GB (%s); make %s smaller",
                     n, need / 1e9, (need - limit) / 1e9, limit / 1e9, what,
                     model_family(d)->size_keys);
}


/* Tries the data files before anything is written: a missing one is refused naming
 * its key, and so are a sentence-pair file that cannot be read (a directory) and one
 * with a line over data.max_line_bytes (lines_check_file reads it through once; a
 * small part of the time parsing it takes). */
int setup_check_inputs(const Config *cfg, Error *err)
{
    const char *inputs[3][2] = {{"data.train", cfg->train}, {"data.valid", cfg->valid}, {"data.spm_model", cfg->spm_model}};
    LineLimit limit = dataset_line_limit(cfg);
    for (int i = 0; i < 3; i++) {
        if (!inputs[i][1]) continue;
        FILE *probe = fopen(inputs[i][1], "rb");
        if (!probe) return error_set(err, "%s: %s (from %s)", inputs[i][1], strerror(errno), inputs[i][0]);
        fclose(probe);
        Error why;
        if (i < 2 && lines_check_file(inputs[i][1], &limit, &why))
            return error_set(err, "%s (from %s)", why.msg, inputs[i][0]);
    }
    return 0;
}


/* " (train.max_minutes M)" in out when the config sets that limit, for the messages
 * that name the limits a resumed run goes by; "" otherwise. */
const char *setup_minutes_limit(const Config *cfg, char *out, size_t len)
{
    if (cfg->max_minutes > 0) snprintf(out, len, " (train.max_minutes %g)", cfg->max_minutes);
    else out[0] = 0;
    return out;
}


/* The probability of feeding the gold previous word at update `step` (0-based) of
 * `planned`: constant, or falling linearly to teacher_forcing_final by the last update
 * (scheduled sampling, Bengio et al. 2015). */
double setup_teacher_forcing(const Config *cfg, long step, long planned)
{
    if (strcmp(cfg->teacher_forcing_decay, "linear") || planned <= 1) return cfg->teacher_forcing;
    double f = (double)step / (double)(planned - 1);
    return cfg->teacher_forcing + f * (cfg->teacher_forcing_final - cfg->teacher_forcing);
}

/* Adam's constants (train.adam_beta1, adam_beta2, adam_eps). A checkpoint's optimizer
 * section holds the moments and the step, not these: a resumed run sets them again. */
void setup_adam(Adam *opt, const Config *cfg)
{
    opt->beta1 = (float)cfg->adam_beta1;
    opt->beta2 = (float)cfg->adam_beta2;
    opt->eps = (float)cfg->adam_eps;
}

/* Fewer validation pairs than this and the validation figures are mostly chance: one
 * pair's loss is a large share of their mean, and BLEU on a few dozen sentences moves by
 * whole points from one validation to the next. */
#define FEW_VALIDATION_PAIRS 100

/* What the run's validation set of n pairs (none, or too few to trust) means for it,
 * said on con (a classifier's: lines, accuracy). */
void setup_say_validation_set(Console *con, const Config *cfg, int n, int classifies)
{
    const char *unit = classifies ? "line" : "pair";
    if (n == 0)
        console_say(con, "no validation set (%s): no validation loss or %s, so no best.bin (model.bin is the "
                         "last step's weights), no plateau decay and no early stopping",
                    cfg->valid ? "data.valid has no usable pairs" : "no data.valid, and data.valid_fraction leaves none",
                    classifies ? "accuracy" : "BLEU");
    else if (n < FEW_VALIDATION_PAIRS)
        console_warn(con, "only %d validation %s%s: too few for the validation loss and %s to mean much (one "
                          "%s more or less moves them), and best.bin, the plateau decay and early stopping "
                          "follow them; give %d or more (data.valid, or a larger data.valid_fraction)",
                     n, unit, n == 1 ? "" : "s", classifies ? "accuracy" : "BLEU", unit, FEW_VALIDATION_PAIRS);
}
