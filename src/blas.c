#include "blas.h"

#include <cblas.h>
#include <stdlib.h>
#include <strings.h>
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
