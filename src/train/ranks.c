#include "train/ranks.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/dist.h" /* defines: dist_rank, dist_size, dist_allreduce_sum, dist_broadcast */

/* A step's own figures, summed over the ranks together with the gradients (in the
 * MODEL_GRAD_SPARE floats after them): its share of the batch's mean loss, whether
 * SIGINT or SIGTERM reached it, and whether its clock passed train.max_minutes. */
enum { SPARE_LOSS, SPARE_SIGINT, SPARE_SIGTERM, SPARE_TIME_UP, SPARE_USED };
_Static_assert(SPARE_USED <= MODEL_GRAD_SPARE, "model.h: MODEL_GRAD_SPARE too small for ranks.c's figures");

void ranks_init(Ranks *r)
{
    memset(r, 0, sizeof *r);
    r->rank = dist_rank();
    r->size = dist_size();
}

void ranks_shard(const Ranks *r, int workers, int w, int n, int *lo, int *hi)
{
    long g = (long)r->rank * workers + w, shards = (long)r->size * workers;
    *lo = (int)((long)n * g / shards);
    *hi = (int)((long)n * (g + 1) / shards);
}

/* splitmix64's finaliser: every input bit moves every output bit. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void ranks_shard_stream(Rng *rng, long seed, int shard, long step)
{
    if (shard == 0) return;
    uint64_t stream = mix64(mix64((uint64_t)seed ^ 0x64726f706f7574ull) ^ (uint64_t)shard);
    rng_seed(rng, mix64(stream ^ (uint64_t)step));
}

/* A collective failed: a rank died or the network broke. What to say, on every rank
 * that is still there to say it. */
static int lost_contact(const Ranks *r, long step, const char *checkpoint, Error *err)
{
    char why[ERROR_LEN];
    snprintf(why, sizeof why, "%s", err->msg);
    if (checkpoint[0])
        return error_set(err, "rank %d: lost contact with the other ranks during step %ld (%s); the last checkpoint, "
                              "%s, is intact", r->rank, step, why, checkpoint);
    return error_set(err, "rank %d: lost contact with the other ranks during step %ld (%s); no checkpoint was "
                          "written yet", r->rank, step, why);
}

int ranks_sum_step(Ranks *r, Model *m, double *loss, int signal, int *agreed, int *time_up, long step,
                   const char *checkpoint, Error *err)
{
    *agreed = signal;
    if (r->size == 1) return 0;
    float *spare = m->grad_mem + m->n_params;
    spare[SPARE_LOSS] = (float)*loss;
    spare[SPARE_SIGINT] = signal == SIGINT;
    spare[SPARE_SIGTERM] = signal != 0 && signal != SIGINT;
    spare[SPARE_TIME_UP] = *time_up != 0;
    double t0 = now_seconds();
    if (dist_allreduce_sum(m->grad_mem, ranks_summed_floats(m), err)) return lost_contact(r, step, checkpoint, err);
    r->allreduce_seconds += now_seconds() - t0;
    r->allreduce_steps++;
    *loss = spare[SPARE_LOSS];
    *time_up = spare[SPARE_TIME_UP] > 0;
    /* A rank reports its own signal; the others SIGTERM's if any rank had it. */
    *agreed = signal ? signal : spare[SPARE_SIGTERM] > 0 ? SIGTERM : spare[SPARE_SIGINT] > 0 ? SIGINT : 0;
    return 0;
}

long ranks_summed_floats(const Model *m) { return m->n_params + SPARE_USED; }

int ranks_share_validation(const Ranks *r, TrainState *st, LrSchedule *schedule, int *stop, long step,
                           const char *checkpoint, Error *err)
{
    if (r->size == 1) return 0;
    double decided[9] = {*stop, st->best, (double)st->best_step, (double)st->last_validated, st->since_best,
                         schedule->factor, schedule->best_loss, schedule->bad, schedule->decays};
    if (dist_broadcast(decided, sizeof decided, err)) return lost_contact(r, step, checkpoint, err);
    *stop = (int)decided[0];
    st->best = decided[1];
    st->best_step = (long)decided[2];
    st->last_validated = (long)decided[3];
    st->since_best = (int)decided[4];
    schedule->factor = decided[5];
    schedule->best_loss = decided[6];
    schedule->bad = (int)decided[7];
    schedule->decays = (int)decided[8];
    return 0;
}

int ranks_share_checkpoint(const Ranks *r, int *resuming, char *path, size_t len, Error *err)
{
    if (r->size == 1) return 0;
    /* One buffer: the decision and the path (len bytes, NUL-padded). */
    size_t bytes = sizeof(int) + len;
    char *buf = xcalloc(bytes, 1);
    memcpy(buf, resuming, sizeof(int));
    if (r->rank == 0) snprintf(buf + sizeof(int), len, "%s", path);
    int status = dist_broadcast(buf, bytes, err);
    if (status == 0) {
        memcpy(resuming, buf, sizeof(int));
        memcpy(path, buf + sizeof(int), len);
        path[len - 1] = 0;
    }
    free(buf);
    return status ? lost_contact(r, 0, "", err) : 0;
}

int ranks_check_weights(const Ranks *r, const Model *m, long step, const char *checkpoint, Error *err)
{
    if (r->size == 1) return 0;
    uint64_t mine = floats_fingerprint(m->param_mem, m->n_params), first = mine;
    if (dist_broadcast(&first, sizeof first, err)) return lost_contact(r, step, checkpoint, err);
    if (mine != first)
        return error_set(err, "rank %d: its weights differ from rank 0's at step %ld (the sum over the ranks did not "
                              "give them the same bits); %s%s", r->rank, step,
                         checkpoint[0] ? "the last checkpoint is intact: " : "no checkpoint was written", checkpoint);
    return 0;
}

double ranks_take_timing(Ranks *r)
{
    double mean = r->allreduce_steps > 0 ? r->allreduce_seconds / r->allreduce_steps : 0;
    r->allreduce_seconds = 0;
    r->allreduce_steps = 0;
    return mean;
}
