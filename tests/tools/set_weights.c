/* set_weights.c — a model file whose weights hold what a test needs, written with valid
 * checksums, for tests/test_failures.sh.
 *
 *   set_weights IN.bin OUT.bin VALUE [INDEX [COUNT]]
 *   set_weights IN.bin OUT.bin --adam-m VALUE INDEX
 *
 * Reads IN.bin (any model or checkpoint nmt reads) and writes OUT.bin the way nmt
 * writes model files (so every CRC holds), with every weight set to VALUE, or only
 * weight INDEX (counted from 0 over the whole WGTS section, as nmt's messages count
 * them) and the COUNT - 1 after it (default 1: INDEX alone); with --adam-m, Adam's
 * first moment at INDEX instead (IN.bin must be a checkpoint). VALUE is anything strtof
 * reads: 1e30, nan, inf, -inf. The reader nmt has refuses a NaN or an infinity, so the
 * files are written here, by the library's writer, which does not look at the values.
 * Exit status: 0 written; 1 a file cannot be read or written, or INDEX is out of range;
 * 2 usage. (Not named tests/test_*.c: those are unit tests that `make test` runs.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/modelfile.h" /* defines: ModelFile, modelfile_read, modelfile_write, modelfile_free */

/* A whole number of s in 0..max, or -1. */
static long index_arg(const char *s, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 0 && v <= max ? v : -1;
}

int main(int argc, char **argv)
{
    int adam = argc == 6 && !strcmp(argv[3], "--adam-m");
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: set_weights IN.bin OUT.bin VALUE [INDEX [COUNT]]\n"
                        "       set_weights IN.bin OUT.bin --adam-m VALUE INDEX\n");
        return 2;
    }
    char **rest = argv + (adam ? 4 : 3);  /* VALUE [INDEX [COUNT]] */
    int n_rest = argc - (adam ? 4 : 3);
    char *end;
    float value = strtof(rest[0], &end);
    if (end == rest[0] || *end) {
        fprintf(stderr, "set_weights: %s is not a number\n", rest[0]);
        return 2;
    }
    ModelFile mf;
    Error err;
    if (modelfile_read(argv[1], &mf, &err)) {
        fprintf(stderr, "set_weights: %s\n", err.msg);
        return 1;
    }
    long n = mf.model.n_params;
    long first = n_rest > 1 ? index_arg(rest[1], n - 1) : 0;
    long count = n_rest > 2 ? index_arg(rest[2], n) : n_rest > 1 ? 1 : n;
    int status = 0;
    if (first < 0 || count < 1 || first + count > n) {
        fprintf(stderr, "set_weights: %s: %s has %ld weights (0..%ld)\n", n_rest > 2 ? "INDEX or COUNT" : "INDEX",
                argv[1], n, n - 1);
        status = 1;
    } else if (adam && !mf.has_optimizer) {
        fprintf(stderr, "set_weights: %s has no optimizer state (not a checkpoint)\n", argv[1]);
        status = 1;
    } else {
        float *x = adam ? mf.opt.m : mf.model.param_mem;
        for (long i = first; i < first + count; i++)
            x[i] = value;
    }
    if (status == 0 && modelfile_write(argv[2], &mf, &err)) {
        fprintf(stderr, "set_weights: %s\n", err.msg);
        status = 1;
    }
    modelfile_free(&mf);
    return status;
}
