/* blas.h — choosing and configuring the OpenBLAS kernel nmt runs on.
 *
 * Debian 12's OpenBLAS (0.3.21) detects some recent Intel CPUs, notably virtual ones
 * whose model number it does not know, as "Prescott" and runs its SSE3 kernels on
 * them: three times slower than the AVX2/AVX-512 kernels the CPU supports (OpenBLAS
 * issue #4267, fixed in 0.3.25). The kernel is chosen when the library loads, from
 * the environment variable OPENBLAS_CORETYPE, so the only remedy from inside the
 * program is to set that variable and start again.
 *
 * blas_select_kernel does exactly that, and only then: when OPENBLAS_CORETYPE is
 * unset, OpenBLAS chose Prescott, and the CPU reports AVX2 and FMA, it sets
 * OPENBLAS_CORETYPE to SkylakeX (AVX-512) or Haswell (AVX2) and re-executes nmt
 * with the same arguments. A user's own OPENBLAS_CORETYPE is always respected, and
 * NMT_NO_KERNEL_SELECT=1 turns the behaviour off.
 */
#ifndef BLAS_H
#define BLAS_H

/* Call first in main(); returns only if no restart was needed (or it failed). */
void blas_select_kernel(char **argv);
/* OpenBLAS worker threads (0: leave OpenBLAS's default, one per core). */
void blas_set_threads(int threads);
/* The number of threads OpenBLAS runs on now. */
int blas_thread_count(void);
/* The kernel in use, e.g. "SkylakeX". */
const char *blas_kernel_name(void);
#endif
