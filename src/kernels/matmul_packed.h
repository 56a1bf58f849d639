/* matmul_packed.h — float products with a weight matrix packed once, for the few rows
 * of a decoder step.
 *
 * cblas_sgemm copies ("packs") the whole weight matrix into its own panel layout on
 * every call. For a batch of 64 sentences that copy is paid back; for a beam of 5 it
 * costs more than the arithmetic (beam 5 line by line spent 66% of its time in it,
 * issue 31). Here the weights are packed once, when the model is loaded, and each
 * product only reads them.
 *
 *   PackedMatrix w;
 *   packed_matrix_init(&w, weight, K, N, K);      // weight (N, K), as a Linear layer's
 *   packed_matmul_bias(y, N, x, K, &w, bias, M);  // y (M, N) = x (M, K) · weight^T + bias
 *   packed_matrix_free(&w);
 *
 * Layout: panels of PACKED_PANEL (16) outputs, each (K, 16) floats, row j of the
 * weight going to column j % 16 of panel j / 16; the last panel is padded with zeros.
 *
 * The order of the sums (the result's bits). Every output is one chain of fused
 * multiply-adds over k in order, starting from 0, restarted for each block of k (the
 * blocks below), and each block's sum is added to y in turn:
 *     y = bias (or 0, or y for _add);  for each block: y = y + fma-chain(block)
 * The blocks are those of OpenBLAS 0.3.21's sgemm with its SkylakeX kernel (Debian 12's
 * OpenBLAS on any AVX-512 CPU): blocks of PACKED_BLOCK_K = 448, except that a rest
 * between 448 and 896 is split in two halves rounded up to 16. So on a machine whose
 * OpenBLAS runs that kernel, packed_matmul gives exactly the bits cblas_sgemm gives
 * (for M >= 5; OpenBLAS computes fewer rows by other kernels, and nmt's matmul_bias uses
 * sgemv there): packed_matches_blas (linalg.h) says when, and tests/test_matmul_packed.c
 * checks it against cblas_sgemm. The order does not depend on M, on the row's place in
 * the batch or on the instruction set: a row's result is the same whatever rows are
 * computed with it.
 *
 * Instruction sets (cpu.h): AVX-512 and AVX2 (both with FMA) compute identical bits.
 * The portable C uses fmaf where the compiler says it is a hardware instruction
 * (FP_FAST_FMAF: arm64, or x86-64 built with -mfma) and then agrees bit for bit too;
 * on the x86-64 baseline, which has no FMA, it multiplies and adds (two roundings), so
 * its results differ in the last bits (tests: within 1e-6 relative to sum |x w|).
 */
#ifndef MATMUL_PACKED_H
#define MATMUL_PACKED_H

#include "kernels/cpu.h" /* defines: KernelIsa */

#define PACKED_PANEL 16
#define PACKED_BLOCK_K 448

typedef struct {
    int n, k;        /* outputs (the weight's rows) and inputs (its columns) */
    float *panels;   /* (ceil(n / 16), k, 16), 64-byte aligned; NULL when empty */
} PackedMatrix;

/* Packs w (N, K) with row stride ld_w. N, K >= 0 (an empty matrix is valid: a product
 * with it writes nothing, or y = bias for K = 0). Aborts only when out of memory. */
void packed_matrix_init(PackedMatrix *p, const float *w, int ld_w, int N, int K);
void packed_matrix_free(PackedMatrix *p);

/* y (M, N) = x (M, K) · w^T + bias, bias (N) or NULL (zero); ld_* are row strides.
 * The best instruction set this CPU runs. */
void packed_matmul_bias(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w, const float *bias,
                        int M);
/* y (M, N) += x (M, K) · w^T. */
void packed_matmul_add(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w, int M);

/* Either of the above (add: y += , else y = bias +) with a given instruction set, for
 * the tests and benchmarks; an isa the CPU lacks, or KERNEL_ISA_AVX512VNNI (nothing
 * here needs VNNI: AVX512 is used), runs the best supported one. Only the outputs
 * [j0, j1) are computed (j0 a multiple of 16, j1 <= N), so that threads can share one
 * product; packed_matmul_bias is j0 = 0, j1 = N. */
void packed_matmul_isa(KernelIsa isa, float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w,
                       const float *bias, int add, int M, int j0, int j1);

/* ---- what matmul_packed.c shares with its intrinsics kernels (matmul_x86.c), each
 * compiled for its own instruction set by a target attribute on the function; not for
 * use elsewhere. */
/* How many of the k_left remaining inputs the next block of the sums takes (above). */
int packed_block_length(int k_left);
#if defined(__x86_64__)
/* packed_matmul_isa's work for K > 0, same arguments. */
void packed_kernel_avx2(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w, const float *bias,
                        int add, int M, int j0, int j1);
void packed_kernel_avx512(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w, const float *bias,
                          int add, int M, int j0, int j1);
#endif
#endif
