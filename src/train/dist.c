#include "train/dist.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef NMT_MPI
/* ---------------------------------------------------------------- MPI */
#include <limits.h>
#include <mpi.h>

/* MPI's reason for return code rc, after what failed. */
static int mpi_error(Error *err, const char *what, int rc)
{
    char reason[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, reason, &len) != MPI_SUCCESS) snprintf(reason, sizeof reason, "error %d", rc);
    return error_set(err, "%s: %s", what, reason);
}

int dist_init(int *argc, char ***argv, Error *err)
{
    int rc = MPI_Init(argc, argv);
    if (rc != MPI_SUCCESS) return error_set(err, "MPI_Init failed (error %d)", rc);
    /* Errors come back to the caller, who knows the step and the checkpoint to name. */
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) return mpi_error(err, "MPI_Comm_set_errhandler", rc);
    return 0;
}

static int started(void)
{
    int init = 0, done = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&done);
    return init && !done;
}

int dist_rank(void)
{
    int r = 0;
    if (started()) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int dist_size(void)
{
    int n = 1;
    if (started()) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

int dist_allreduce_sum(float *buf, long n, Error *err)
{
    if (dist_size() == 1) return 0;
    /* MPI counts are int: a buffer beyond 2^30 floats goes in pieces. */
    for (long at = 0; at < n; at += 1L << 30) {
        long len = n - at < (1L << 30) ? n - at : (1L << 30);
        int rc = MPI_Allreduce(MPI_IN_PLACE, buf + at, (int)len, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_error(err, "MPI_Allreduce", rc);
    }
    return 0;
}

int dist_broadcast(void *buf, size_t bytes, Error *err)
{
    if (dist_size() == 1) return 0;
    if (bytes > INT_MAX) return error_set(err, "dist_broadcast: %zu bytes is more than one message takes", bytes);
    int rc = MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_error(err, "MPI_Bcast", rc);
    return 0;
}

int dist_barrier(Error *err)
{
    if (dist_size() == 1) return 0;
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return mpi_error(err, "MPI_Barrier", rc);
    return 0;
}

void dist_finalize(void)
{
    if (started()) MPI_Finalize();
}

void dist_abort(int code)
{
    if (started()) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

#else
/* ---------------------------------------------------------------- one rank */

int dist_init(int *argc, char ***argv, Error *err)
{
    (void)argc;
    (void)argv;
    (void)err;
    return 0;
}

int dist_rank(void) { return 0; }
int dist_size(void) { return 1; }

int dist_allreduce_sum(float *buf, long n, Error *err)
{
    (void)buf;
    (void)n;
    (void)err;
    return 0;
}

int dist_broadcast(void *buf, size_t bytes, Error *err)
{
    (void)buf;
    (void)bytes;
    (void)err;
    return 0;
}

int dist_barrier(Error *err)
{
    (void)err;
    return 0;
}

void dist_finalize(void) {}

void dist_abort(int code) { exit(code); }
#endif
