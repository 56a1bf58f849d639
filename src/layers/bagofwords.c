/* bagofwords.c — the classifier's bag-of-words term; see bagofwords.h. */
#include "layers/bagofwords.h"

/* 1 if src[t, b] is the first occurrence of its id in sentence b. */
static int first_occurrence(const int *src, int t, int b, int B)
{
    for (int u = 0; u < t; u++)
        if (src[(long)u * B + b] == src[(long)t * B + b]) return 0;
    return 1;
}

void bag_of_words_forward(float *logits, const float *w, const int *src, const int *len, int S, int B, int C)
{
    (void)S;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++) {
            if (!first_occurrence(src, t, b, B)) continue;
            const float *row = w + (long)src[(long)t * B + b] * C;
            for (int k = 0; k < C; k++)
                logits[(long)b * C + k] += row[k];
        }
}

void bag_of_words_backward(float *dw, const float *dlogits, const int *src, const int *len, int S, int B, int C)
{
    (void)S;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < len[b]; t++) {
            if (!first_occurrence(src, t, b, B)) continue;
            float *row = dw + (long)src[(long)t * B + b] * C;
            for (int k = 0; k < C; k++)
                row[k] += dlogits[(long)b * C + k];
        }
}
