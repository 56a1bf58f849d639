#include "kernels/matmul_packed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"          /* defines: xmalloc_aligned64 */
#include "kernels/cpu.h"        /* defines: kernel_isa_supported */

void packed_matrix_init(PackedMatrix *p, const float *w, int ld_w, int N, int K)
{
    p->n = N;
    p->k = K;
    long panels = (N + PACKED_PANEL - 1) / PACKED_PANEL;
    p->panels = panels > 0 && K > 0 ? xmalloc_aligned64(sizeof(float) * panels * K * PACKED_PANEL) : NULL;
    for (long g = 0; g < panels && K > 0; g++) {
        float *panel = p->panels + g * K * PACKED_PANEL;
        for (int k = 0; k < K; k++)
            for (int c = 0; c < PACKED_PANEL; c++) {
                long j = g * PACKED_PANEL + c;
                panel[(long)k * PACKED_PANEL + c] = j < N ? w[j * ld_w + k] : 0.0f;
            }
    }
}

void packed_matrix_free(PackedMatrix *p)
{
    free(p->panels);
    memset(p, 0, sizeof *p);
}

int packed_block_length(int k_left)
{
    /* OpenBLAS 0.3.21, driver/level3/level3.c: min_l = K left; if >= 2 GEMM_Q: GEMM_Q;
     * else if > GEMM_Q: half, rounded up to GEMM_UNROLL_M (16 for the SkylakeX sgemm). */
    if (k_left >= 2 * PACKED_BLOCK_K) return PACKED_BLOCK_K;
    if (k_left > PACKED_BLOCK_K) return (k_left / 2 + 15) / 16 * 16;
    return k_left;
}

/* The portable kernel: one row and one panel at a time, the 16 chains of a panel side
 * by side (the compiler vectorises the c loop). */
static void packed_kernel_portable(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w,
                                   const float *bias, int add, int M, int j0, int j1)
{
    int K = w->k;
    for (int j = j0; j < j1; j += PACKED_PANEL) {
        const float *panel = w->panels ? w->panels + (long)(j / PACKED_PANEL) * K * PACKED_PANEL : NULL;
        int width = j1 - j < PACKED_PANEL ? j1 - j : PACKED_PANEL;
        for (int r = 0; r < M; r++) {
            float *yr = y + (long)r * ld_y + j;
            const float *xr = x + (long)r * ld_x;
            float sum[PACKED_PANEL];
            for (int c = 0; c < width; c++)
                sum[c] = add ? yr[c] : bias ? bias[j + c] : 0.0f;
            for (int k0 = 0; k0 < K;) {
                int kb = packed_block_length(K - k0);
                float acc[PACKED_PANEL] = {0};
                for (int k = k0; k < k0 + kb; k++) {
                    const float xk = xr[k], *wk = panel + (long)k * PACKED_PANEL;
                    for (int c = 0; c < PACKED_PANEL; c++)
#ifdef FP_FAST_FMAF
                        acc[c] = fmaf(xk, wk[c], acc[c]);
#else
                        acc[c] = xk * wk[c] + acc[c];
#endif
                }
                for (int c = 0; c < width; c++)
                    sum[c] = sum[c] + acc[c];
                k0 += kb;
            }
            memcpy(yr, sum, sizeof(float) * width);
        }
    }
}

void packed_matmul_isa(KernelIsa isa, float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w,
                       const float *bias, int add, int M, int j0, int j1)
{
    if (M <= 0 || j1 <= j0) return;
    if (isa == KERNEL_ISA_AVX512VNNI) isa = KERNEL_ISA_AVX512;
    while (isa > KERNEL_ISA_PORTABLE && !kernel_isa_supported(isa))
        isa--;
#if defined(__x86_64__)
    if (w->k > 0 && isa == KERNEL_ISA_AVX512) {
        packed_kernel_avx512(y, ld_y, x, ld_x, w, bias, add, M, j0, j1);
        return;
    }
    if (w->k > 0 && isa == KERNEL_ISA_AVX2) {
        packed_kernel_avx2(y, ld_y, x, ld_x, w, bias, add, M, j0, j1);
        return;
    }
#endif
    packed_kernel_portable(y, ld_y, x, ld_x, w, bias, add, M, j0, j1);
}

void packed_matmul_bias(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w, const float *bias,
                        int M)
{
    packed_matmul_isa(KERNEL_ISA_AVX512, y, ld_y, x, ld_x, w, bias, 0, M, 0, w->n);
}

void packed_matmul_add(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w, int M)
{
    packed_matmul_isa(KERNEL_ISA_AVX512, y, ld_y, x, ld_x, w, NULL, 1, M, 0, w->n);
}
