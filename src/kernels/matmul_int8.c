#include "kernels/matmul_int8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"          /* defines: xrealloc, xmalloc_aligned64 */
#include "kernels/dispatch.h"   /* defines: KERNEL_CLONES */
#include "kernels/cpu.h"        /* defines: kernel_isa_supported */

/* v (n) into q (n) and *scale, as matmul_int8.h says. Rounding half to even by adding
 * and subtracting 1.5 * 2^23 (exact for |t| < 2^22), which every vector width does
 * alike; rintf would not vectorise on the x86-64 baseline. */
KERNEL_CLONES
static void quantize_row(const float *v, int n, int8_t *q, float *scale)
{
    float amax = 0.0f, poison = 0.0f;
#pragma omp simd reduction(max : amax) reduction(+ : poison)
    for (int i = 0; i < n; i++) {
        float a = fabsf(v[i]);
        amax = a > amax ? a : amax;
        poison += v[i] * 0.0f; /* NaN if any v[i] is NaN or infinite */
    }
    if (poison != 0.0f || !(amax >= INT8_MIN_AMAX)) {
        memset(q, 0, (size_t)n);
        *scale = poison != 0.0f ? NAN : 0.0f;
        return;
    }
    const float inv = 127.0f / amax, magic = 12582912.0f;
#pragma omp simd
    for (int i = 0; i < n; i++) {
        float t = (v[i] * inv + magic) - magic;
        t = t > 127.0f ? 127.0f : t < -127.0f ? -127.0f : t;
        q[i] = (int8_t)(int)t;
    }
    *scale = amax / 127.0f;
}

void int8_quantize_rows(int8_t *q, float *scale, const float *w, int ld_w, int N, int K)
{
    for (int j = 0; j < N; j++)
        quantize_row(w + (long)j * ld_w, K, q + (long)j * K, &scale[j]);
}

int int8_matrix_init(Int8Matrix *m, const int8_t *q, const float *scale, int N, int K)
{
    memset(m, 0, sizeof *m);
    if (N < 0 || K < 0 || K > INT8_MAX_K) return -1;
    for (long i = 0; i < (long)N * K; i++)
        if (q[i] == -128) return -1;
    int k4 = (K + 3) / 4 * 4, groups = k4 / 4;
    long panels = (N + INT8_PANEL - 1) / INT8_PANEL;
    m->n = N;
    m->k = K;
    m->k4 = k4;
    m->panels = xmalloc_aligned64((size_t)(panels * k4 * INT8_PANEL) + 1);
    m->scale = xmalloc(sizeof(float) * (N + 1));
    m->shift = xmalloc_aligned64(sizeof(int32_t) * (panels * INT8_PANEL + 1));
    memcpy(m->scale, scale, sizeof(float) * N);
    for (long g = 0; g < panels; g++)
        for (int c = 0; c < INT8_PANEL; c++) {
            long j = g * INT8_PANEL + c;
            int32_t sum = 0;
            for (int kk = 0; kk < groups; kk++)
                for (int t = 0; t < 4; t++) {
                    int k = 4 * kk + t;
                    int8_t v = j < N && k < K ? q[j * K + k] : 0;
                    m->panels[((g * groups + kk) * INT8_PANEL + c) * 4 + t] = v;
                    sum += v;
                }
            m->shift[j] = 128 * sum;
        }
    return 0;
}

void int8_matrix_free(Int8Matrix *m)
{
    free(m->panels);
    free(m->scale);
    free(m->shift);
    memset(m, 0, sizeof *m);
}

void int8_rows_quantize(Int8Rows *a, const float *x, int ld_x, int M, int K)
{
    int k4 = (K + 3) / 4 * 4;
    long need = (long)M * k4 + 4;
    if (need > a->q_cap) {
        free(a->q);
        free(a->u);
        a->q = xmalloc_aligned64((size_t)need);
        a->u = xmalloc_aligned64((size_t)need);
        a->q_cap = need;
    }
    if (M + 1 > a->scale_cap) {
        a->scale = xrealloc(a->scale, sizeof(float) * (M + 1));
        a->scale_cap = M + 1;
    }
    a->m = M;
    a->k = K;
    a->k4 = k4;
    for (int r = 0; r < M; r++) {
        int8_t *row = a->q + (long)r * k4;
        uint8_t *urow = a->u + (long)r * k4;
        quantize_row(x + (long)r * ld_x, K, row, &a->scale[r]);
        memset(row + K, 0, (size_t)(k4 - K));
        for (int k = 0; k < k4; k++)
            urow[k] = (uint8_t)(row[k] ^ 0x80);
    }
}

void int8_rows_free(Int8Rows *a)
{
    free(a->q);
    free(a->u);
    free(a->scale);
    memset(a, 0, sizeof *a);
}

/* The portable kernel: one row and one panel at a time, the 16 sums side by side. */
static void int8_kernel_portable(float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias,
                                 int add, int j0, int j1)
{
    int groups = w->k4 / 4;
    for (int j = j0; j < j1; j += INT8_PANEL) {
        const int8_t *panel = w->panels + (long)(j / INT8_PANEL) * groups * INT8_PANEL * 4;
        int width = j1 - j < INT8_PANEL ? j1 - j : INT8_PANEL;
        for (int r = 0; r < x->m; r++) {
            const int8_t *xr = x->q + (long)r * x->k4;
            int32_t acc[INT8_PANEL] = {0};
            for (int kk = 0; kk < groups; kk++) {
                const int8_t *p = panel + (long)kk * INT8_PANEL * 4, *xk = xr + 4 * kk;
                for (int c = 0; c < INT8_PANEL; c++)
                    acc[c] += xk[0] * p[4 * c] + xk[1] * p[4 * c + 1] + xk[2] * p[4 * c + 2] + xk[3] * p[4 * c + 3];
            }
            float *yr = y + (long)r * ld_y + j;
            for (int c = 0; c < width; c++) {
                float prev = add ? yr[c] : bias ? bias[j + c] : 0.0f;
                float s = x->scale[r] * w->scale[j + c];
                yr[c] = prev + (float)acc[c] * s;
            }
        }
    }
}

void int8_matmul_isa(KernelIsa isa, float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias,
                     int add, int j0, int j1)
{
    if (x->m <= 0 || j1 <= j0) return;
    if (isa == KERNEL_ISA_AVX512) isa = KERNEL_ISA_AVX2;
    while (isa > KERNEL_ISA_PORTABLE && !kernel_isa_supported(isa))
        isa = isa == KERNEL_ISA_AVX512VNNI ? KERNEL_ISA_AVX2 : isa - 1;
#if defined(__x86_64__)
    if (isa == KERNEL_ISA_AVX512VNNI) {
        int8_kernel_avx512vnni(y, ld_y, x, w, bias, add, j0, j1);
        return;
    }
    if (isa == KERNEL_ISA_AVX2) {
        int8_kernel_avx2(y, ld_y, x, w, bias, add, j0, j1);
        return;
    }
#endif
    int8_kernel_portable(y, ld_y, x, w, bias, add, j0, j1);
}

void int8_matmul(float *y, int ld_y, const Int8Rows *x, const Int8Matrix *w, const float *bias)
{
    int8_matmul_isa(KERNEL_ISA_AVX512VNNI, y, ld_y, x, w, bias, 0, 0, w->n);
}

void int8_matrix_gather(Int8Matrix *out, const Int8Matrix *w, const int *rows, int n)
{
    int8_matrix_free(out);
    int k4 = w->k4, groups = k4 / 4;
    long panels = (n + INT8_PANEL - 1) / INT8_PANEL;
    out->n = n;
    out->k = w->k;
    out->k4 = k4;
    out->panels = xmalloc_aligned64((size_t)(panels * k4 * INT8_PANEL) + 1);
    out->scale = xmalloc(sizeof(float) * (n + 1));
    out->shift = xmalloc_aligned64(sizeof(int32_t) * (panels * INT8_PANEL + 1));
    memset(out->panels, 0, (size_t)(panels * k4 * INT8_PANEL));   /* the last panel's rows past n */
    memset(out->shift, 0, sizeof(int32_t) * panels * INT8_PANEL);
    for (int i = 0; i < n; i++) {
        long j = rows[i], g = j / INT8_PANEL, c = j % INT8_PANEL, gi = i / INT8_PANEL, ci = i % INT8_PANEL;
        for (int kk = 0; kk < groups; kk++)
            memcpy(out->panels + ((gi * groups + kk) * INT8_PANEL + ci) * 4,
                   w->panels + ((g * groups + kk) * INT8_PANEL + c) * 4, 4);
        out->scale[i] = w->scale[j];
        out->shift[i] = w->shift[j];
    }
}
