/* fastmath.h — exp, tanh and sigmoid as inline functions that the compiler can
 * vectorise (libm's expf and tanhf are opaque calls, one element at a time).
 *
 * expf_fast: Cody-Waite range reduction x = n ln2 + r, |r| <= ln2/2, a degree-6
 * polynomial for e^r, and 2^n built in the exponent bits. Relative error below 2e-7
 * (about 1.5 ulp) for x in [-87, 88]; clamped outside, so it never returns inf/NaN
 * for finite input (NaN gives NaN). tanh and sigmoid are built on it; their absolute
 * error is below 3e-7, far inside what training needs and what tests/test_model.c
 * checks (the PyTorch reference agrees to ~1e-6).
 */
#ifndef FASTMATH_H
#define FASTMATH_H

#include <stdint.h>
#include <string.h>

static inline float expf_fast(float x)
{
    x = x < -87.0f ? -87.0f : x > 88.0f ? 88.0f : x;
    /* n = rint(x / ln2), without rintf: its one instruction, roundps, is SSE4.1, and
     * an x86-64 baseline build would then run every caller's loop one element at a
     * time. Adding 1.5 * 2^23 leaves no fraction bits, so the sum is rounded to the
     * nearest integer (ties to even, as rintf) and subtracting it again is exact; plain
     * arithmetic, which SSE2 vectorises, and the same n and shifted bit for bit. Two
     * statements: clang contracts a * b + c within one expression into an fma, which
     * would round the product differently. */
    float t = x * 1.44269504088896341f;
    float shifted = t + 12582912.0f;
    float n = shifted - 12582912.0f;
    float r = x - n * 0.693359375f;          /* ln2 split in two for exactness */
    r = r + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* 2^n in the exponent bits. n (-126 .. 127 after the clamp) is read out of the low
     * mantissa bits of shifted = n + 1.5 * 2^23 rather than converted to int: a NaN x
     * passes the clamp, and converting NaN to int is undefined (UBSan stops there), while
     * this way the bits are merely garbage and p * scale is NaN, as e^NaN should be. */
    uint32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    bits = (bits - 0x4B400000u + 127u) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float sigmoidf_fast(float x) { return 1.0f / (1.0f + expf_fast(-x)); }

static inline float tanhf_fast(float x)
{
    /* tanh(x) = 1 - 2 / (e^{2x} + 1); near 0 the cancellation costs relative but not
     * absolute accuracy, so small |x| uses the odd Taylor series instead. */
    if (x > -0.0625f && x < 0.0625f) {
        float x2 = x * x;
        return x * (1.0f + x2 * (-0.333333333f + x2 * 0.133333333f));
    }
    return 1.0f - 2.0f / (expf_fast(2.0f * x) + 1.0f);
}
#endif
