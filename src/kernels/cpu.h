/* cpu.h — which instruction sets the hand-written kernels may use on this CPU.
 *
 * Most of nmt's vector code is compiled for three targets at once and bound once
 * (dispatch.h, KERNEL_CLONES): that suits loops the compiler vectorises by itself. The
 * matrix-product kernels of matmul_packed.h and matmul_int8.h are written with
 * intrinsics instead (vpdpbusd, vpmaddubsw and register tiles are not something a
 * compiler finds), one function per instruction set, and each call picks the best one
 * the CPU runs, or the one a test or a benchmark asks for. All of them compute the
 * same bits (each kernel's header says how), so the choice is about speed only.
 *
 *   KERNEL_ISA_PORTABLE    C any compiler builds, for any CPU (arm64 included)
 *   KERNEL_ISA_AVX2        x86-64 AVX2 and FMA (Haswell, 2013, and later; Zen)
 *   KERNEL_ISA_AVX512      x86-64 AVX-512 F/BW/DQ/VL (Skylake-X, 2017, and later)
 *   KERNEL_ISA_AVX512VNNI  the same and AVX-512 VNNI (Cascade Lake, 2019; Ice Lake,
 *                          Sapphire Rapids; Zen 4)
 *
 * Building with NMT_CLONES_NO_AVX512 (scripts/bench/bench_portable.sh) makes the AVX-512
 * sets unsupported, as it does for the compiled clones.
 */
#ifndef CPU_H
#define CPU_H

typedef enum {
    KERNEL_ISA_PORTABLE,
    KERNEL_ISA_AVX2,
    KERNEL_ISA_AVX512,
    KERNEL_ISA_AVX512VNNI,
    KERNEL_ISA_COUNT
} KernelIsa;

/* 1 if this CPU (and this build) can run kernels written for isa. PORTABLE always. */
int kernel_isa_supported(KernelIsa isa);
/* "portable", "avx2", "avx512", "avx512vnni". */
const char *kernel_isa_name(KernelIsa isa);
#endif
