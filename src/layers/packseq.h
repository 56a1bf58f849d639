/* packseq.h — the packed layout of a batch of sequences, for the encoder's recurrent
 * layers (gru_packed_*, lstm_packed_*).
 *
 * The B rows are sorted longest sequence first, so the rows still going at position t
 * are the first n_t = off[t+1] - off[t] (n_0 = B: no sequence is empty). Position t's
 * rows are stored at off[t] .. off[t+1]-1 of every (N, ·) array, N = off[S] the real
 * tokens: no padding is stored or computed (PyTorch's PackedSequence). States are
 * (B + N, H): rows 0..B-1 the initial state, then row B + off[t] + i the state of row
 * i after position t, in either direction:
 *   forward, positions 0 .. S-1: position t continues from position t-1's rows (or the
 *     initial state at t = 0); row i's final state is at its last position, len_i - 1;
 *   reverse, positions S-1 .. 0: row i starts at its last position from the initial
 *     state; position t continues from position t+1's rows where they go on, from the
 *     initial state where row i starts at t; the final state of every row is at
 *     position 0.
 */
#ifndef PACKSEQ_H
#define PACKSEQ_H

#include <string.h>

/* The n_t rows of the state before position t (of states s, laid out as above): a
 * pointer into s, or, where a reverse step mixes rows that go on with rows that start,
 * the rows gathered into stage (n_t rows of H). */
static inline const float *packed_prev(const float *s, float *stage, const int *off, int t, int S, int B, int H,
                                       int reverse)
{
    int n = off[t + 1] - off[t];
    if (!reverse) return t == 0 ? s : s + (long)(B + off[t - 1]) * H;
    if (t == S - 1) return s;
    int m = off[t + 2] - off[t + 1];
    const float *later = s + (long)(B + off[t + 1]) * H;
    if (m == n) return later;
    memcpy(stage, later, sizeof(float) * (size_t)m * H);
    memcpy(stage + (long)m * H, s + (long)m * H, sizeof(float) * (size_t)(n - m) * H);
    return stage;
}

/* Every position's previous state, as one (N, H) array in the packed order: the inputs
 * of the recurrent weights' gradient. */
static inline void packed_prev_all(float *out, const float *s, const int *off, int S, int B, int H, int reverse)
{
    for (int t = 0; t < S; t++) {
        float *dst = out + (long)off[t] * H;
        const float *p = packed_prev(s, dst, off, t, S, B, H, reverse);
        if (p != dst) memcpy(dst, p, sizeof(float) * (size_t)(off[t + 1] - off[t]) * H);
    }
}
#endif
