/* dispatch.h — one binary for every x86-64 CPU, with the hot element-wise loops run
 * at the vector width of the CPU it runs on.
 *
 * The nmt that `make` builds and `make install` installs targets the x86-64 baseline
 * (SSE2), so that it runs on any x86-64 machine; -march=native would put AVX-512
 * instructions into code every command runs, and another CPU would stop with SIGILL.
 * The matrix products go through OpenBLAS, which picks its kernels when it loads; the
 * element-wise loops (the GRU/LSTM gates, attention, softmax and cross-entropy, Adam)
 * are ours, and at SSE2 they work on 4 floats at a time where AVX2 does 8 and AVX-512
 * 16.
 *
 * KERNEL_CLONES, written before such a function's definition, makes GCC (>= 11) or
 * clang (>= 18) compile it three times: for x86-64-v4 (AVX-512 F/BW/CD/DQ/VL),
 * x86-64-v3 (AVX2, FMA, BMI) and the baseline. The dynamic loader calls a resolver
 * once, which reads CPUID and binds the function to the best version the CPU runs;
 * each call then costs one indirect jump. The inline functions of fastmath.h are
 * compiled into each version. No version changes a result on purpose, but vector
 * widths sum reductions in different orders, so the last bits of a loss can differ
 * from one CPU to another (they already do through OpenBLAS's kernels).
 *
 *   KERNEL_CLONES
 *   void gru_gates_forward(...) { ... }
 *
 * It expands to nothing where it cannot work or is not wanted:
 *   - not x86-64: arm64's baseline already has NEON (GCC 12 has no target_clones for
 *     aarch64 either);
 *   - a C library without ifunc, the mechanism behind the resolver (glibc has it;
 *     musl does not);
 *   - a compiler without the attribute, older than the x86-64-v3/v4 names (GCC 11), or
 *     clang before 18, which names the dispatcher "f.ifunc" and leaves calls to f from
 *     other files unresolved (llvm-project pull request 71706): Debian 12's clang 14
 *     builds the fuzz targets without the clones;
 *   - NMT_NO_CLONES defined: `make native` (-march=native) compiles for this CPU
 *     anyway.
 * NMT_CLONES_NO_AVX512 leaves out the x86-64-v4 version, so that a CPU with AVX-512
 * runs the AVX2 one: scripts/bench/bench_portable.sh measures what a CPU without AVX-512
 * gets that way.
 */
#ifndef DISPATCH_H
#define DISPATCH_H

#include <stdint.h> /* on glibc, defines __GLIBC__ (through features.h) */

#if defined(__x86_64__) && defined(__GLIBC__) && !defined(NMT_NO_CLONES) && defined(__has_attribute) && \
    (defined(__clang__) ? __clang_major__ >= 18 : __GNUC__ >= 11)
#if __has_attribute(target_clones)
#ifdef NMT_CLONES_NO_AVX512
#define KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KERNEL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#endif

#ifndef KERNEL_CLONES
#define KERNEL_CLONES
#endif

#endif
