/* weights_diff.c — how far apart two models' weights are, for tests/test_mpi.sh.
 *
 *   weights_diff A.bin B.bin [TOLERANCE]
 *
 * Reads both model files (model.bin, best.bin or a checkpoint) and prints one line
 *   max_abs_diff D max_abs_weight W relative R in TENSOR row ROW
 * with D the largest |a_i - b_i| over all weights, W the largest |a_i|, R = D / W and
 * TENSOR ROW where D is.
 * Exit status: 0, or 1 when R exceeds TOLERANCE (if given), when the two models have
 * different parameter counts, or when a file cannot be read.
 * (Not named tests/test_*.c: those are unit tests that `make test` builds and runs.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "files/modelfile.h" /* defines: ModelFile, modelfile_read, modelfile_free */

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: weights_diff A.bin B.bin [TOLERANCE]\n");
        return 2;
    }
    ModelFile a, b;
    Error err;
    if (modelfile_read(argv[1], &a, &err)) {
        fprintf(stderr, "weights_diff: %s\n", err.msg);
        return 1;
    }
    if (modelfile_read(argv[2], &b, &err)) {
        fprintf(stderr, "weights_diff: %s\n", err.msg);
        modelfile_free(&a);
        return 1;
    }
    int status = 0;
    if (a.model.n_params != b.model.n_params) {
        fprintf(stderr, "weights_diff: %s has %ld parameters, %s %ld\n", argv[1], a.model.n_params, argv[2],
                b.model.n_params);
        status = 1;
    } else {
        double diff = 0, top = 0;
        long at = 0;
        for (long i = 0; i < a.model.n_params; i++) {
            double d = fabs((double)a.model.param_mem[i] - b.model.param_mem[i]);
            if (d > diff || isnan(d)) diff = d, at = i;
            if (fabs(a.model.param_mem[i]) > top) top = fabs(a.model.param_mem[i]);
        }
        double rel = top > 0 ? diff / top : diff;
        TensorShape shapes[MAX_TENSORS];
        int n = params_shapes(&a.model.dims, shapes), t = 0;
        long start = 0;
        for (; t < n; t++) {
            long size = shapes[t].rows * shapes[t].cols;
            if (at < start + size) break;
            start += size;
        }
        printf("max_abs_diff %.3g max_abs_weight %.3g relative %.3g in %s row %ld\n", diff, top, rel,
               t < n ? shapes[t].name : "?", t < n ? (at - start) / shapes[t].cols : -1L);
        if (argc == 4 && !(rel <= atof(argv[3]))) status = 1;
    }
    modelfile_free(&a);
    modelfile_free(&b);
    return status;
}
