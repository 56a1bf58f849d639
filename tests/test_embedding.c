/* test_embedding.c — embedding_forward / embedding_backward.
 *
 * The gradient is checked against central finite differences of the objective
 * L = sum_i w_i * out_i (so dout = w), with repeated ids (their rows must accumulate),
 * an id that never occurs (its row must get nothing), and rows written with a stride
 * wider than E (the gaps must be neither written by forward nor read by backward).
 */
#include <string.h>

#include "check.h"     /* defines: CHECK, check_report */
#include "layers/embedding.h" /* defines: embedding_forward, embedding_backward */
#include "gradcheck.h" /* defines: check_grad, fill_uniform, weighted_sum */
#include "base/util.h"      /* defines: Rng */

enum { V = 6, E = 3, N = 8, LD = E + 2 };
#define GAP 777.0f /* what the stride gaps hold; forward must leave it there */

typedef struct {
    float table[V * E];
    int ids[N];
    float out[N * LD];
    float w[N * LD];
} Ctx;

static double objective(void *p)
{
    Ctx *c = p;
    embedding_forward(c->out, LD, c->table, c->ids, N, E);
    return weighted_sum(c->w, c->out, N, E, LD);
}

int main(void)
{
    Rng rng;
    rng_seed(&rng, 11);
    static Ctx c;
    /* id 2 three times, id 5 twice, id 4 never */
    int ids[N] = {2, 5, 2, 0, 2, 5, 1, 3};
    memcpy(c.ids, ids, sizeof ids);
    fill_uniform(c.table, V * E, 0.5f, &rng);
    fill_uniform(c.w, N * LD, 1.0f, &rng);
    for (int i = 0; i < N * LD; i++)
        c.out[i] = GAP;

    /* Forward: exact copies, gaps untouched. */
    embedding_forward(c.out, LD, c.table, c.ids, N, E);
    int copied = 1, gaps = 1;
    for (int i = 0; i < N; i++)
        for (int e = 0; e < LD; e++) {
            float got = c.out[i * LD + e];
            if (e < E) copied &= got == c.table[ids[i] * E + e];
            else gaps &= got == GAP;
        }
    CHECK(copied, "forward copies table[ids[i]] into row i");
    CHECK(gaps, "forward leaves the stride gaps alone");

    /* Backward accumulates into dtable: start from non-zero values and subtract them.
     * The gaps of dout hold a huge value that would show if backward read them. */
    float dout[N * LD], before[V * E], dtable[V * E], grad[V * E];
    memcpy(dout, c.w, sizeof dout);
    for (int i = 0; i < N; i++)
        for (int e = E; e < LD; e++)
            dout[i * LD + e] = 1e6f;
    fill_uniform(before, V * E, 1.0f, &rng);
    memcpy(dtable, before, sizeof dtable);
    embedding_backward(dtable, dout, LD, c.ids, N, E);
    for (int i = 0; i < V * E; i++)
        grad[i] = dtable[i] - before[i];

    int untouched = 1;
    for (int e = 0; e < E; e++)
        untouched &= dtable[4 * E + e] == before[4 * E + e];
    CHECK(untouched, "the row of an id that never occurs is unchanged");
    float want[E];
    for (int e = 0; e < E; e++)
        want[e] = c.w[0 * LD + e] + c.w[2 * LD + e] + c.w[4 * LD + e];
    check_close(grad + 2 * E, want, E, 1e-6, "repeated id 2 sums 3 rows");

    GradCheckOpts o = {.eps = 1e-2f, .rtol = 1e-2};
    check_grad("dtable", objective, &c, c.table, E, grad, E, V, E, &o);
    return check_report("test_embedding");
}
