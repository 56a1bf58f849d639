#include "train/average.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/modelfile.h" /* defines: ModelFile, modelfile_read, modelfile_write, modelfile_compatible */

int average_models(const char *const *paths, int n, const char *out, Error *err)
{
    for (int k = 0; k < n; k++)
        if (same_file(paths[k], out))
            return error_set(err, "%s: is one of the models to average (%s); write the average elsewhere", out,
                             paths[k]);
    ModelFile first;
    if (modelfile_read(paths[0], &first, err)) return -1;
    if (modelfile_trainable(&first, paths[0], err)) {
        modelfile_free(&first);
        return -1;
    }
    long np = first.model.n_params;
    double *sum = malloc(sizeof(double) * (size_t)np);
    if (!sum) {
        modelfile_free(&first);
        return error_set(err, "averaging %ld parameters: out of memory", np);
    }
    for (long i = 0; i < np; i++)
        sum[i] = first.model.param_mem[i];
    int status = 0;
    for (int k = 1; k < n && status == 0; k++) {
        ModelFile mf;
        if (modelfile_read(paths[k], &mf, err)) {
            status = -1;
            break;
        }
        char why[ERROR_LEN / 2];
        if (modelfile_trainable(&mf, paths[k], err))
            status = -1;
        else if (modelfile_compatible(&first, &mf, 1, why, sizeof why))
            status = error_set(err, "%s: not the same model as %s (%s): only checkpoints of one model average",
                               paths[k], paths[0], why);
        else
            for (long i = 0; i < np; i++)
                sum[i] += mf.model.param_mem[i];
        modelfile_free(&mf);
    }
    if (status == 0) {
        for (long i = 0; i < np; i++)
            first.model.param_mem[i] = (float)(sum[i] / n);
        /* A model file: the average is no state any run was in, so nothing to resume. */
        if (first.has_optimizer) adam_free(&first.opt);
        if (first.has_train_state) trainstate_free(&first.train_state);
        first.has_optimizer = first.has_train_state = 0;
        status = modelfile_write(out, &first, err);
    }
    free(sum);
    modelfile_free(&first);
    return status;
}
