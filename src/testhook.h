/* testhook.h — a hook for the end-to-end tests, inert unless the environment asks.
 *
 * NMT_PAUSE_AT_STEP=K makes `nmt train` stop itself with raise(SIGSTOP) right after
 * update K has been made and its train.log line (if the step has one) flushed. A test
 * that means to interrupt a run at a known point starts it with the variable, waits
 * for the process to be stopped (state T in /proc/PID/stat: a condition, not a clock),
 * then sends its signal: SIGKILL ends it there; SIGTERM or SIGINT stay pending while
 * it is stopped, and SIGCONT lets it take them at once, so the run stops after step K
 * however loaded the machine is (tests/test_cli.sh, tests/test_mpi.sh). Under mpirun
 * each rank that has the variable stops after the same update K.
 *
 * Unset, empty or 0: nothing happens. A value that is not a step number is ignored
 * with a warning.
 */
#ifndef TESTHOOK_H
#define TESTHOOK_H

/* Called once per update with the number of updates made so far (the step just
 * logged); stops the process when it equals NMT_PAUSE_AT_STEP. The variable is read
 * at the first call. */
void testhook_pause_at_step(long step);
#endif
