/* matmul_x86.c — the AVX2 and AVX-512 kernels of matmul_packed.h and matmul_int8.h.
 *
 * Every kernel works on register tiles: R rows of x against C panels of 16 outputs,
 * R * C (AVX-512) or R * 2C (AVX2) vector accumulators that stay in registers for the
 * whole sum over k, each weight vector loaded once per tile and used by the R rows.
 * R and C are constants after inlining (the tile functions are always_inline and
 * called with literal sizes), so the loops over them unroll into straight code. The
 * sizes fill the register file: 32 vectors with AVX-512, 16 with AVX2. A decoder step
 * has 1 to 64 rows, a beam step 5: rows go in chunks of at most 6.
 *
 * What is summed in which order is in the two headers; the tiles only change which
 * outputs are computed together, never an output's own order.
 */
#include "kernels/matmul_int8.h"   /* defines: Int8Matrix, Int8Rows, int8_kernel_* */
#include "kernels/matmul_packed.h" /* defines: PackedMatrix, packed_kernel_*, packed_block_length */

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#define INLINE static inline __attribute__((always_inline))
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512dq,avx512vl")))
#define VNNI __attribute__((target("avx2,fma,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

/* Rows are taken ROW_BLOCK at a time, and within a block in tiles of at most 6 (all of
 * them up to 6, else near-equal chunks). Within a row block the panel groups are the
 * outer loop, so that a group's weights stay in the caches while the block's rows go
 * through them; the row block bounds the rows of y written per group (with a large
 * vocabulary each row of y is its own page: 320 rows at once measured 2x slower than
 * 5 blocks of 64 for the int8 product). */
#define ROW_BLOCK 64

/* Rows per tile: all of them up to 6, else in near-equal chunks of at most 6. */
static int tile_rows(int left)
{
    if (left <= 6) return left;
    if (left <= 12) return (left + 1) / 2;
    return 6;
}

/* Where a tile's y starts from, for the rows from r: prev + r * ld_prev, or zeros. */
typedef struct {
    const float *prev;
    long ld;
} Start;

/* ======================================================================= packed, AVX-512 */

/* y[r0.., panels g..g+C) = start + chain over [k0, k0 + kb), for R rows. */
AVX512 INLINE void f512_tile(int R, int C, float *y, int ld_y, const float *x, int ld_x, const float *panels, int K,
                             int g, int k0, int kb, Start s, int j1)
{
    __m512 acc[6][8];
    const float *pc[8];
    #pragma GCC unroll 8
    for (int c = 0; c < C; c++)
        pc[c] = panels + ((long)(g + c) * K + k0) * 16;
    #pragma GCC unroll 8
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 8
        for (int c = 0; c < C; c++)
            acc[r][c] = _mm512_setzero_ps();
    for (int k = 0; k < kb; k++) {
        __m512 wv[8];
        #pragma GCC unroll 8
        for (int c = 0; c < C; c++)
            wv[c] = _mm512_load_ps(pc[c] + (long)k * 16);
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m512 xb = _mm512_set1_ps(x[(long)r * ld_x + k0 + k]);
            #pragma GCC unroll 8
            for (int c = 0; c < C; c++)
                acc[r][c] = _mm512_fmadd_ps(xb, wv[c], acc[r][c]);
        }
    }
    #pragma GCC unroll 8
    for (int c = 0; c < C; c++) {
        int j = (g + c) * 16;
        if (j >= j1) break;
        __mmask16 m = j1 - j >= 16 ? 0xFFFF : (__mmask16)((1u << (j1 - j)) - 1);
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m512 p = s.prev ? _mm512_maskz_loadu_ps(m, s.prev + r * s.ld + j) : _mm512_setzero_ps();
            _mm512_mask_storeu_ps(y + (long)r * ld_y + j, m, _mm512_add_ps(p, acc[r][c]));
        }
    }
}

/* f512_tile with R (1 to 6) and C (8 for R <= 2, 4, or 1) known at compile time. */
AVX512 INLINE void f512_tile_any(int R, int C, float *y, int ld_y, const float *x, int ld_x, const float *panels,
                                 int K, int g, int k0, int kb, Start s, int j1)
{
#define F512(r, c) f512_tile(r, c, y, ld_y, x, ld_x, panels, K, g, k0, kb, s, j1)
    switch (R * 16 + C) {
    case 1 * 16 + 8: F512(1, 8); break;
    case 1 * 16 + 4: F512(1, 4); break;
    case 1 * 16 + 1: F512(1, 1); break;
    case 2 * 16 + 8: F512(2, 8); break;
    case 2 * 16 + 4: F512(2, 4); break;
    case 2 * 16 + 1: F512(2, 1); break;
    case 3 * 16 + 4: F512(3, 4); break;
    case 3 * 16 + 1: F512(3, 1); break;
    case 4 * 16 + 4: F512(4, 4); break;
    case 4 * 16 + 1: F512(4, 1); break;
    case 5 * 16 + 4: F512(5, 4); break;
    case 5 * 16 + 1: F512(5, 1); break;
    case 6 * 16 + 4: F512(6, 4); break;
    default: F512(6, 1); break;
    }
#undef F512
}

AVX512 void packed_kernel_avx512(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w,
                                 const float *bias, int add, int M, int j0, int j1)
{
    int K = w->k, g1 = (j1 + 15) / 16, wide = M <= 2 ? 8 : 4;
    for (int k0 = 0, kb; k0 < K; k0 += kb) {
        kb = packed_block_length(K - k0);
        for (int b0 = 0; b0 < M; b0 += ROW_BLOCK) {
            int b1 = M - b0 < ROW_BLOCK ? M : b0 + ROW_BLOCK;
            for (int g = j0 / 16, C; g < g1; g += C) {
                C = g1 - g >= wide ? wide : 1;
                for (int r0 = b0, R; r0 < b1; r0 += R) {
                    R = tile_rows(b1 - r0);
                    float *yr = y + (long)r0 * ld_y;
                    Start s = k0 > 0 || add ? (Start){yr, ld_y} : (Start){bias, 0};
                    f512_tile_any(R, C, yr, ld_y, x + (long)r0 * ld_x, ld_x, w->panels, K, g, k0, kb, s, j1);
                }
            }
        }
    }
}

/* ========================================================================== packed, AVX2 */

/* Lanes [0, n) of 8 (n may exceed 8 or be negative). */
AVX2 INLINE __m256i lanes8(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* As f512_tile, with each panel as two 8-float halves. */
AVX2 INLINE void f256_tile(int R, int C, float *y, int ld_y, const float *x, int ld_x, const float *panels, int K,
                           int g, int k0, int kb, Start s, int j1)
{
    __m256 acc[6][8];
    const float *pc[4];
    #pragma GCC unroll 8
    for (int c = 0; c < C; c++)
        pc[c] = panels + ((long)(g + c) * K + k0) * 16;
    #pragma GCC unroll 8
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 8
        for (int h = 0; h < 2 * C; h++)
            acc[r][h] = _mm256_setzero_ps();
    for (int k = 0; k < kb; k++) {
        __m256 wv[8];
        #pragma GCC unroll 8
        for (int h = 0; h < 2 * C; h++)
            wv[h] = _mm256_load_ps(pc[h / 2] + (long)k * 16 + (h % 2) * 8);
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m256 xb = _mm256_broadcast_ss(x + (long)r * ld_x + k0 + k);
            #pragma GCC unroll 8
            for (int h = 0; h < 2 * C; h++)
                acc[r][h] = _mm256_fmadd_ps(xb, wv[h], acc[r][h]);
        }
    }
    #pragma GCC unroll 8
    for (int h = 0; h < 2 * C; h++) {
        int j = g * 16 + h * 8;
        if (j >= j1) break;
        __m256i m = lanes8(j1 - j);
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m256 p = s.prev ? _mm256_maskload_ps(s.prev + r * s.ld + j, m) : _mm256_setzero_ps();
            _mm256_maskstore_ps(y + (long)r * ld_y + j, m, _mm256_add_ps(p, acc[r][h]));
        }
    }
}

/* f256_tile with R (1 to 6) and C (4 for R = 1, 2 for R = 2, or 1) known at compile time. */
AVX2 INLINE void f256_tile_any(int R, int C, float *y, int ld_y, const float *x, int ld_x, const float *panels,
                               int K, int g, int k0, int kb, Start s, int j1)
{
#define F256(r, c) f256_tile(r, c, y, ld_y, x, ld_x, panels, K, g, k0, kb, s, j1)
    switch (R * 16 + C) {
    case 1 * 16 + 4: F256(1, 4); break;
    case 1 * 16 + 1: F256(1, 1); break;
    case 2 * 16 + 2: F256(2, 2); break;
    case 2 * 16 + 1: F256(2, 1); break;
    case 3 * 16 + 1: F256(3, 1); break;
    case 4 * 16 + 1: F256(4, 1); break;
    case 5 * 16 + 1: F256(5, 1); break;
    default: F256(6, 1); break;
    }
#undef F256
}

AVX2 void packed_kernel_avx2(float *y, int ld_y, const float *x, int ld_x, const PackedMatrix *w, const float *bias,
                             int add, int M, int j0, int j1)
{
    int K = w->k, g1 = (j1 + 15) / 16, wide = M == 1 ? 4 : M == 2 ? 2 : 1;
    for (int k0 = 0, kb; k0 < K; k0 += kb) {
        kb = packed_block_length(K - k0);
        for (int b0 = 0; b0 < M; b0 += ROW_BLOCK) {
            int b1 = M - b0 < ROW_BLOCK ? M : b0 + ROW_BLOCK;
            for (int g = j0 / 16, C; g < g1; g += C) {
                C = g1 - g >= wide ? wide : 1;
                for (int r0 = b0, R; r0 < b1; r0 += R) {
                    R = tile_rows(b1 - r0);
                    float *yr = y + (long)r0 * ld_y;
                    Start s = k0 > 0 || add ? (Start){yr, ld_y} : (Start){bias, 0};
                    f256_tile_any(R, C, yr, ld_y, x + (long)r0 * ld_x, ld_x, w->panels, K, g, k0, kb, s, j1);
                }
            }
        }
    }
}

/* ================================================================== int8, AVX-512 VNNI */

/* Four bytes of a quantized row as one 32-bit lane. */
INLINE int32_t four_bytes(const void *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* y rows [r0, r0 + R), panels [g, g + C): prev + (float)acc * (scale_x * scale_w). */
VNNI INLINE void q512_tile(int R, int C, float *y, int ld_y, const Int8Rows *x, int r0, const Int8Matrix *w, int g,
                           const float *bias, int add, int j1)
{
    int groups = w->k4 / 4;
    __m512i acc[6][4];
    const int8_t *pc[4];
    #pragma GCC unroll 8
    for (int c = 0; c < C; c++)
        pc[c] = w->panels + (long)(g + c) * groups * 64;
    #pragma GCC unroll 8
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 8
        for (int c = 0; c < C; c++)
            acc[r][c] = _mm512_setzero_si512();
    for (int kk = 0; kk < groups; kk++) {
        __m512i wv[4];
        #pragma GCC unroll 8
        for (int c = 0; c < C; c++)
            wv[c] = _mm512_load_si512((const void *)(pc[c] + (long)kk * 64));
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m512i xb = _mm512_set1_epi32(four_bytes(x->u + (long)(r0 + r) * x->k4 + 4 * kk));
            #pragma GCC unroll 8
            for (int c = 0; c < C; c++)
                acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], xb, wv[c]);
        }
    }
    #pragma GCC unroll 8
    for (int c = 0; c < C; c++) {
        int j = (g + c) * 16;
        if (j >= j1) break;
        __mmask16 m = j1 - j >= 16 ? 0xFFFF : (__mmask16)((1u << (j1 - j)) - 1);
        __m512i shift = _mm512_load_si512((const void *)(w->shift + j));
        __m512 sw = _mm512_maskz_loadu_ps(m, w->scale + j);
        __m512 b = bias && !add ? _mm512_maskz_loadu_ps(m, bias + j) : _mm512_setzero_ps();
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            float *yr = y + (long)(r0 + r) * ld_y + j;
            __m512 s = _mm512_mul_ps(_mm512_set1_ps(x->scale[r0 + r]), sw);
            __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(acc[r][c], shift)), s);
            __m512 p = add ? _mm512_maskz_loadu_ps(m, yr) : b;
            _mm512_mask_storeu_ps(yr, m, _mm512_add_ps(p, v));
        }
    }
}

VNNI void int8_kernel_avx512vnni(float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias,
                                 int add, int j0, int j1)
{
    int g1 = (j1 + 15) / 16;
#define Q512(r, c) q512_tile(r, c, y, ld_y, x, r0, w, g, bias, add, j1)
    for (int b0 = 0; b0 < x->m; b0 += ROW_BLOCK) {
        int b1 = x->m - b0 < ROW_BLOCK ? x->m : b0 + ROW_BLOCK;
        for (int g = j0 / 16, C; g < g1; g += C) {
            C = g1 - g >= 4 ? 4 : 1;
            for (int r0 = b0, R; r0 < b1; r0 += R) {
                R = tile_rows(b1 - r0);
                switch (R * 16 + C) {
                    case 1 * 16 + 4: Q512(1, 4); break;
                    case 1 * 16 + 1: Q512(1, 1); break;
                    case 2 * 16 + 4: Q512(2, 4); break;
                    case 2 * 16 + 1: Q512(2, 1); break;
                    case 3 * 16 + 4: Q512(3, 4); break;
                    case 3 * 16 + 1: Q512(3, 1); break;
                    case 4 * 16 + 4: Q512(4, 4); break;
                    case 4 * 16 + 1: Q512(4, 1); break;
                    case 5 * 16 + 4: Q512(5, 4); break;
                    case 5 * 16 + 1: Q512(5, 1); break;
                    case 6 * 16 + 4: Q512(6, 4); break;
                default: Q512(6, 1); break;
                }
            }
        }
    }
#undef Q512
}

/* ============================================================================ int8, AVX2 */

/* As q512_tile, each panel as two halves of 8 outputs; |q_x| times q_w with q_x's sign
 * (vpsignb), pairs summed to 16 bits (vpmaddubsw, never saturating: see the header),
 * then to 32 (vpmaddwd by ones). */
AVX2 INLINE void q256_tile(int R, int C, float *y, int ld_y, const Int8Rows *x, int r0, const Int8Matrix *w, int g,
                           const float *bias, int add, int j1)
{
    int groups = w->k4 / 4;
    __m256i acc[6][4];
    const int8_t *pc[2];
    const __m256i ones = _mm256_set1_epi16(1);
    #pragma GCC unroll 8
    for (int c = 0; c < C; c++)
        pc[c] = w->panels + (long)(g + c) * groups * 64;
    #pragma GCC unroll 8
    for (int r = 0; r < R; r++)
        #pragma GCC unroll 8
        for (int h = 0; h < 2 * C; h++)
            acc[r][h] = _mm256_setzero_si256();
    for (int kk = 0; kk < groups; kk++) {
        __m256i wv[4];
        #pragma GCC unroll 8
        for (int h = 0; h < 2 * C; h++)
            wv[h] = _mm256_load_si256((const void *)(pc[h / 2] + (long)kk * 64 + (h % 2) * 32));
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            __m256i xs = _mm256_set1_epi32(four_bytes(x->q + (long)(r0 + r) * x->k4 + 4 * kk));
            __m256i xa = _mm256_abs_epi8(xs);
            #pragma GCC unroll 8
            for (int h = 0; h < 2 * C; h++) {
                __m256i pairs = _mm256_maddubs_epi16(xa, _mm256_sign_epi8(wv[h], xs));
                acc[r][h] = _mm256_add_epi32(acc[r][h], _mm256_madd_epi16(pairs, ones));
            }
        }
    }
    #pragma GCC unroll 8
    for (int h = 0; h < 2 * C; h++) {
        int j = g * 16 + h * 8;
        if (j >= j1) break;
        __m256i m = lanes8(j1 - j);
        __m256 sw = _mm256_maskload_ps(w->scale + j, m);
        __m256 b = bias && !add ? _mm256_maskload_ps(bias + j, m) : _mm256_setzero_ps();
        #pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            float *yr = y + (long)(r0 + r) * ld_y + j;
            __m256 s = _mm256_mul_ps(_mm256_set1_ps(x->scale[r0 + r]), sw);
            __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][h]), s);
            __m256 p = add ? _mm256_maskload_ps(yr, m) : b;
            _mm256_maskstore_ps(yr, m, _mm256_add_ps(p, v));
        }
    }
}

AVX2 void int8_kernel_avx2(float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias, int add,
                           int j0, int j1)
{
    int g1 = (j1 + 15) / 16, wide = x->m == 1 ? 2 : 1;
#define Q256(r, c) q256_tile(r, c, y, ld_y, x, r0, w, g, bias, add, j1)
    for (int b0 = 0; b0 < x->m; b0 += ROW_BLOCK) {
        int b1 = x->m - b0 < ROW_BLOCK ? x->m : b0 + ROW_BLOCK;
        for (int g = j0 / 16, C; g < g1; g += C) {
            C = g1 - g >= wide ? wide : 1;
            for (int r0 = b0, R; r0 < b1; r0 += R) {
                R = b1 - r0 < 4 ? b1 - r0 : 4;
                switch (R * 16 + C) {
                    case 1 * 16 + 2: Q256(1, 2); break;
                    case 1 * 16 + 1: Q256(1, 1); break;
                    case 2 * 16 + 1: Q256(2, 1); break;
                    case 3 * 16 + 1: Q256(3, 1); break;
                default: Q256(4, 1); break;
                }
            }
        }
    }
#undef Q256
}
#endif
