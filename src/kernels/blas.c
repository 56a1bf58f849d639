#include "kernels/blas.h"

#include <cblas.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

void blas_select_kernel(char **argv)
{
#if defined(__x86_64__) || defined(__i386__)
    if (getenv("OPENBLAS_CORETYPE") || getenv("NMT_NO_KERNEL_SELECT")) return;
    if (strcasecmp(openblas_get_corename(), "Prescott") != 0) return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
    int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (setenv("OPENBLAS_CORETYPE", avx512 ? "SkylakeX" : "Haswell", 1) != 0) return;
    execv("/proc/self/exe", argv);
    /* Could not restart: carry on with the slow kernel, which computes correctly. */
    unsetenv("OPENBLAS_CORETYPE");
#else
    /* The misdetection is of x86 CPUs; elsewhere __builtin_cpu_supports does not exist. */
    (void)argv;
#endif
}

void blas_set_threads(int threads)
{
    if (threads > 0) openblas_set_num_threads(threads);
}

int blas_thread_count(void) { return openblas_get_num_threads(); }

const char *blas_kernel_name(void) { return openblas_get_corename(); }

/* OpenBLAS's buffer per thread (BUFFER_SIZE, 32 << 22 in Debian's 0.3.21 for x86-64;
 * the allocation is 4 KB more), and what nmt itself maps besides. Measured on x86-64
 * with 2 threads: nmt --version (one buffer, the worker's) hangs under ulimit -v 180000
 * and runs under 200000; nmt train (two) hangs under 320000 and runs under 330000: the
 * buffers over about 60 MB of program and libraries. */
#define BLAS_BUFFER_MB 128
#define NMT_BASE_MB 64

int blas_check_memory_limit(int callers, Error *err)
{
    int threads = openblas_get_num_threads(), buffers = threads - 1 + callers;
    if (buffers < 1) return 0;  /* no worker threads and no products: OpenBLAS allocates nothing */
    struct { int resource; char flag; const char *name; } limits[2] = {
        {RLIMIT_AS, 'v', "address-space"}, {RLIMIT_DATA, 'd', "data"}};
    double need_mb = (double)buffers * BLAS_BUFFER_MB + NMT_BASE_MB;
    for (int k = 0; k < 2; k++) {
        struct rlimit rl;
        if (getrlimit(limits[k].resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) continue;
        double have_mb = (double)rl.rlim_cur / (1 << 20);
        if (have_mb >= need_mb) continue;
        double one_mb = (double)callers * BLAS_BUFFER_MB + NMT_BASE_MB;  /* with OPENBLAS_NUM_THREADS=1 */
        char which[96];
        if (callers > 1)
            snprintf(which, sizeof which, "one for each of its %d worker thread%s and each of the %d workers",
                     threads - 1, threads == 2 ? "" : "s", callers);
        else if (callers == 1)
            snprintf(which, sizeof which, "one for each of its %d thread%s", threads, threads == 1 ? "" : "s");
        else
            snprintf(which, sizeof which, "one for each worker thread, %d of its %d", buffers, threads);
        return error_set(err, "the %s limit, ulimit -%c %llu (%.0f MB), is below what OpenBLAS needs here: %d "
                              "buffer%s of %d MB (%s), %.0f MB with nmt's own; Debian's OpenBLAS 0.3.21 then waits "
                              "for memory forever instead of failing. Raise it to ulimit -%c %llu or more, or run with "
                              "OPENBLAS_NUM_THREADS=1%s (ulimit -%c %llu or more)",
                         limits[k].name, limits[k].flag, (unsigned long long)(rl.rlim_cur / 1024), have_mb, buffers,
                         buffers == 1 ? "" : "s", BLAS_BUFFER_MB, which, need_mb, limits[k].flag,
                         (unsigned long long)(need_mb * 1024), callers > 1 ? " and fewer workers" : "", limits[k].flag,
                         (unsigned long long)(one_mb * 1024));
    }
    return 0;
}
