/* testhook.h — a hook for the end-to-end tests, inert unless the environment asks.
 *
 * NMT_PAUSE_AT_STEP=K makes `nmt train` stop itself with raise(SIGSTOP) right after
 * update K has been made and its train.log line (if the step has one) flushed. A test
 * that means to interrupt a run at a known point starts it with the variable, waits
 * for the process to be stopped (state T in /proc/PID/stat: a condition, not a clock),
 * then sends its signal: SIGKILL ends it there; SIGTERM or SIGINT stay pending while
 * it is stopped, and SIGCONT lets it take them at once, so the run stops after step K
 * however loaded the machine is (tests/test_cli_resume.sh, tests/test_mpi.sh). Under mpirun
 * each rank that has the variable stops after the same update K.
 *
 * NMT_WAIT_AT_STEP=K makes it instead say "nmt: test hook: waiting for SIGINT or SIGTERM
 * after step K" on stderr and sleep until one of the two comes (the test waits for the
 * line). Unlike a stopped process it takes no SIGCONT as leave to go on: mpirun, told
 * to end a job, sends its ranks SIGCONT and only seconds later SIGTERM, and a rank
 * waiting here takes that SIGTERM after step K, whenever it comes (tests/test_mpi.sh).
 *
 * Unset, empty or 0: nothing happens. A value that is not a step number is ignored
 * with a warning.
 *
 * NMT_SECONDS_PER_STEP=S (a number above 0) makes the training clock, the one
 * train.max_minutes reads (and a checkpoint records), say S seconds per update made
 * instead of the time that passed: a test stops a run at its budget after a known update,
 * however loaded the machine is (tests/test_train_keys.sh). A value that is not a
 * positive number is ignored with a warning.
 *
 * NMT_FULL_DISK_AT=NAME makes every file named NAME (its last path component) that
 * nmt writes whole (src/io/outfile.h: model files, checkpoints, -o outputs) fail as on
 * a full disk: its bytes go to /dev/full, so the flush fails with ENOSPC, through the
 * same error path a real full disk takes (tests/test_cli_resume.sh: a checkpoint that cannot
 * be written leaves the one before it whole). Unset or empty: nothing happens.
 * NMT_FULL_DISK_AT=train.log@BYTES fills the disk under train.log at byte BYTES of it
 * instead: no byte past it is written (files/trainlog.h), however the lines fall.
 *
 * NMT_SERVE_GATE=FIFO makes each request of `nmt serve` that holds a worker read one
 * byte from the named pipe FIFO before it decodes, so that a test decides when each
 * one goes on: it can fill the workers and the queue, stop the server with requests in
 * flight, and let a request wait past the time limit, all without a clock
 * (tests/test_serve.sh). Unset or empty: nothing happens.
 */
#ifndef TESTHOOK_H
#define TESTHOOK_H

/* Called once per update with the number of updates made so far (the step just
 * logged); stops the process when it equals NMT_PAUSE_AT_STEP, waits for a signal when it
 * equals NMT_WAIT_AT_STEP. The variables are read
 * at the first call. */
void testhook_pause_at_step(long step);

/* The training clock after `steps` updates, of which `seconds` is the real time:
 * `seconds`, or steps x NMT_SECONDS_PER_STEP when that is set. */
double testhook_clock(long steps, double seconds);

/* 1 if NMT_FULL_DISK_AT names path's last component (NAME, or NAME@0). */
int testhook_full_disk(const char *path);
/* Where NMT_FULL_DISK_AT=NAME@BYTES fills the disk under path (NAME its last
 * component): BYTES; 0 for NAME alone; -1 if it names another file, or is unset. */
long testhook_full_disk_bytes(const char *path);

/* With NMT_SERVE_GATE set, waits for one byte from that pipe (any thread may call it). */
void testhook_serve_gate(void);
#endif
