/* dist.h — the ranks of a data-parallel job: which process this is, how many there
 * are, and the two collectives training needs.
 *
 * `mpirun -np N ./nmt-mpi train CONFIG.json` starts N copies of the program (ranks
 * 0 .. N-1). Each computes the gradients of its shard of every batch; a sum over the
 * ranks (dist_allreduce_sum) gives every rank the whole batch's gradient, so that all
 * ranks make the same update and hold the same weights. Rank 0 alone writes files and
 * validates, and shares what it decides with dist_broadcast (train.c).
 *
 * Built with -DNMT_MPI (`make mpi`, ./nmt-mpi) these are MPI calls on MPI_COMM_WORLD,
 * with MPI_ERRORS_RETURN set so that a failed collective (a rank that died, a network
 * that broke) comes back as an error to report rather than an abort inside MPI.
 * Built without it (`make`, ./nmt) they are the trivial job of one rank: rank 0 of 1,
 * the sum and the broadcast leave the buffer as it is, and no MPI header or library is
 * needed. ./nmt-mpi started without mpirun is also a job of one rank (MPI's singleton).
 *
 *   dist_init(&argc, &argv);            // before anything else reads argv
 *   ... dist_allreduce_sum(grad, n, &err) ...
 *   dist_finalize();                    // on every rank, also after a signal
 *
 * The MPI library is process-wide state; these functions are its only users, so the
 * rest of nmt sees no global.
 */
#ifndef DIST_H
#define DIST_H

#include <stddef.h>

#include "base/util.h" /* defines: Error */

/* Joins the job (MPI_Init). Returns 0, or -1 with a message if MPI cannot start. */
int dist_init(int *argc, char ***argv, Error *err);
/* This process's rank, 0 .. dist_size() - 1; 0 and 1 before dist_init. */
int dist_rank(void);
int dist_size(void);
/* The element-wise sum of buf (n floats) over all ranks, in place on every rank: one
 * collective for the whole buffer (split only beyond 2^30 floats, MPI's int count).
 * Every rank gets the same bits (each element is summed once, in one order, and the
 * result is distributed: OpenMPI's algorithms do so, and the standard advises it;
 * train.c relies on it to keep the ranks' weights equal). Returns 0, or -1 with MPI's
 * reason in err. */
int dist_allreduce_sum(float *buf, long n, Error *err);
/* Rank 0's `bytes` bytes at buf copied into buf on every rank. Returns 0 or -1. */
int dist_broadcast(void *buf, size_t bytes, Error *err);
/* Returns once every rank has called it (MPI_Barrier): 0, or -1 with MPI's reason. */
int dist_barrier(Error *err);
/* Leaves the job (MPI_Finalize); waits for the other ranks to leave too. */
void dist_finalize(void);
/* Ends every rank of the job with exit status `code` (MPI_Abort): for an error on one
 * rank that the others cannot learn of, or after a collective failed. Does not return. */
void dist_abort(int code) __attribute__((noreturn));
#endif
