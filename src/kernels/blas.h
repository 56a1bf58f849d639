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
 *
 * The same OpenBLAS gives each of its threads a buffer of 128 MB (its BUFFER_SIZE),
 * the worker threads theirs as the library loads, the calling thread at its first
 * product; when the address-space or data limit (ulimit -v, ulimit -d) leaves no room
 * for one, its allocator retries forever instead of failing (fixed upstream after
 * 0.3.21), and nmt hangs: in its first matrix product, or at exit, where OpenBLAS
 * waits for its workers. blas_check_memory_limit finds that out from the limits before
 * anything else runs.
 */
#ifndef BLAS_H
#define BLAS_H

#include "base/util.h" /* defines: Error */

/* Call first in main(); returns only if no restart was needed (or it failed). */
void blas_select_kernel(char **argv);
/* OpenBLAS worker threads (0: leave OpenBLAS's default, one per core). */
void blas_set_threads(int threads);
/* The number of threads OpenBLAS runs on now. */
int blas_thread_count(void);
/* The kernel in use, e.g. "SkylakeX". */
const char *blas_kernel_name(void);
/* 0, or -1 with err naming the limit (ulimit -v or -d), what OpenBLAS's threads need
 * (a 128 MB buffer each, and 64 MB for nmt itself) and the two ways out, when the limit
 * is below that: OpenBLAS would hang (see above). callers: the threads of nmt's own that
 * compute matrix products, each needing a buffer of its own too: 0 for a command without
 * products, 1 for one that computes them in its own thread (train, translate, eval,
 * classify), N for N workers (decode/workers.h, train.workers). When it fails at the
 * start of main, the caller must leave with _exit: exit would wait forever for a worker
 * thread stuck in its allocation. */
int blas_check_memory_limit(int callers, Error *err);
#endif
