#!/bin/sh
# test_mpi.sh — data-parallel training over MPI (./nmt-mpi, src/train/dist.c): two ranks on
# this host, talking TCP over loopback as separate hosts would, must follow the single
# process's trajectory; only rank 0 may speak or write; a stop on any rank must stop
# all of them at the same step with a checkpoint to resume from; a rank killed outright
# must end the job and leave the newest checkpoint whole.
#
# Run from the repository root after `make nmt nmt-mpi build-mpi/weights_diff` (make
# test-mpi does): sh tests/test_mpi.sh. Needs mpirun (OpenMPI); uses data/mar.txt and a
# temporary directory; about 30 s on 2 cores.
# Prints "  ok what" / "FAIL what" per check, "skip what: why" when it cannot run here,
# and ends with "test_mpi: N passed, M failed, K skipped".
#
# The test waits for conditions, never for a time: a log line, or ranks that stopped
# themselves after a known step (NMT_PAUSE_AT_STEP, src/base/testhook.h). The one clock left
# is mpirun's own when it forwards SIGTERM (section 4).

NAME=test_mpi
NMT=$(pwd)/nmt
. tests/lib.sh  # ok, bad, skip, check, finish, $T, $DATA, has, lines
NMT_MPI=$(pwd)/nmt-mpi
DIFF=$(pwd)/build-mpi/weights_diff

if [ ! -x "$NMT_MPI" ] || [ ! -x "$DIFF" ]; then
    bad "setup: need ./nmt, ./nmt-mpi and build-mpi/weights_diff (make test-mpi), run from the repository root"
    finish
fi
if ! command -v mpirun >/dev/null 2>&1; then
    skip "test_mpi" "no mpirun (sh scripts/install-deps.sh --mpi installs OpenMPI)"
    finish
fi

# OpenMPI refuses root unless told; CI containers run as root.
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# Two ranks on two cores, over TCP on loopback (not shared memory): the path that
# separate hosts take. --tag-output marks each line with its rank: [1,R]<stderr>:...
MPIRUN="mpirun --oversubscribe --mca btl tcp,self --mca btl_tcp_if_include lo --tag-output -np 2"
# No command may hang the suite: a hung job is ended, and its exit code (124) fails
# whatever check looks at it. Generous: a 1500-step job took 100 s on a loaded machine.
if command -v timeout >/dev/null 2>&1; then LIMIT="timeout 900"; else LIMIT=; fi

# field KEY FILE — the number after "KEY": on each step line of FILE.
field() { grep -v '"event"' "$2" | sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p"; }
last_step() { field step "$1" 2>/dev/null | tail -n 1; }
# wait_until COMMAND... — runs COMMAND every 0.05 s until it succeeds (0), or the job
# $pid has ended (1). The 300 s bound is a hang guard, not a timing.
wait_until() {
    i=0
    while [ $i -lt 6000 ]; do
        "$@" && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
        i=$((i + 1))
    done
    return 1
}
# rank_pid R DIR — the process id of rank R of the running job training into DIR.
rank_pid() {
    for p in $(pgrep -f "nmt-mpi train.*output.dir=$2"); do
        if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
            echo "$p"
            return 0
        fi
    done
    return 1
}
# state PID — the process state letter from /proc/PID/stat (T: stopped), empty once gone.
state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
# ranks_stopped DIR — waits until both ranks of the job $pid training into DIR have
# stopped themselves (NMT_PAUSE_AT_STEP) and sets r0 and r1 to their pids (0), or until
# the job has ended (1).
both_stopped() {
    r0=$(rank_pid 0 "$1") && r1=$(rank_pid 1 "$1") && [ "$(state $r0)" = T ] && [ "$(state $r1)" = T ]
}
ranks_stopped() { wait_until both_stopped "$1"; }
# weights_close A B TOL — model files A and B agree to TOL (tests/tools/weights_diff.c),
# its report indented; the status is weights_diff's (in a pipe it would be sed's).
weights_close() {
    "$DIFF" "$1" "$2" "$3" >"$T/diff.out" 2>&1
    rc_diff=$?
    sed 's/^/      /' "$T/diff.out"
    return $rc_diff
}
# close A B [REL] — the numbers in files A and B (one a line) agree to REL relatively.
close() {
    paste "$1" "$2" | awk -v tol="${3:-1e-4}" '
        { n++; d = $1 - $2; if (d < 0) d = -d; m = $1 < 0 ? -$1 : $1; if (m < 1e-30) m = 1e-30
          if (d / m > worst) worst = d / m }
        END { printf "      %d values, worst relative difference %.3g\n", n, worst; exit !(n > 0 && worst <= tol) }'
}

# 300 pairs spread over the corpus, 270 trained on; no dropout, no sampling, one BLAS
# thread per process: two ranks then differ from one process only by how the float
# sums are grouped.
awk 'NR % 97 == 0' "$DATA" | head -n 300 >"$T/train.tsv"
cat >"$T/tiny.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 32, "hidden": 64},
  "train": {"batch_size": 16, "epochs": 3, "learning_rate": 0.003, "threads": 1, "log_every": 1,
            "validate_every": 20, "checkpoint_every": 10, "lr_schedule": "plateau", "patience": 1},
  "output": {"dir": "$T/one"}
}
EOF

# ---------------------------------------------------------------- 1. the same trajectory

$LIMIT "$NMT" train "$T/tiny.json" --quiet 2>"$T/one.err"
check "one process (nmt): exit 0" [ $? -eq 0 ]
$LIMIT $MPIRUN "$NMT_MPI" train "$T/tiny.json" --set "output.dir=$T/two" >"$T/two.out" 2>"$T/two.err"
rc=$?
check "two ranks (mpirun -np 2 nmt-mpi): exit 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    | /' "$T/two.err" | tail -n 8
steps_one=$(field step "$T/one/train.log" | wc -l)
check "two ranks: as many step lines as one process ($steps_one), each step once" \
    eval '[ "$steps_one" -gt 40 ] && [ "$(field step "$T/two/train.log" | wc -l)" -eq "$steps_one" ] &&
          [ "$(field step "$T/two/train.log" | sort -u | wc -l)" -eq "$steps_one" ]'
field loss "$T/one/train.log" >"$T/loss1"
field loss "$T/two/train.log" >"$T/loss2"
check "two ranks: every step's loss within 1e-4 (relative) of one process's" close "$T/loss1" "$T/loss2" 1e-4
field grad_norm "$T/one/train.log" >"$T/norm1"
field grad_norm "$T/two/train.log" >"$T/norm2"
check "two ranks: every step's gradient norm within 1e-3 of one process's" close "$T/norm1" "$T/norm2" 1e-3
grep '"event":"validation"' "$T/one/train.log" | sed 's/.*"valid_loss":\([0-9.]*\).*/\1/' >"$T/v1"
grep '"event":"validation"' "$T/two/train.log" | sed 's/.*"valid_loss":\([0-9.]*\).*/\1/' >"$T/v2"
check "two ranks: the validation losses (rank 0's) within 1e-4 of one process's" close "$T/v1" "$T/v2" 1e-4
check "two ranks: final weights within 1e-4 of one process's (relative to the largest)" \
    weights_close "$T/one/model.bin" "$T/two/model.bin" 1e-4
check "two ranks: best.bin within 1e-4 too" eval '"$DIFF" "$T/one/best.bin" "$T/two/best.bin" 1e-4 >/dev/null'
check "two ranks: train.log step lines carry ranks 2 and allreduce_s" \
    eval 'grep -v "\"event\"" "$T/two/train.log" | grep -q "\"ranks\":2,\"allreduce_s\":[0-9]"'
check "one process: no allreduce_s in train.log" eval '! grep -q allreduce_s "$T/one/train.log"'

# Ranks times workers (train.workers, src/train/parallel.h): each rank's share split again
# among its workers, four shards in all, still the single process's trajectory; and the
# same bits run after run.
$LIMIT $MPIRUN "$NMT_MPI" train "$T/tiny.json" --quiet --set train.workers=2 --set "output.dir=$T/two_w2" \
    >/dev/null 2>&1
field loss "$T/two_w2/train.log" >"$T/loss2"
field loss "$T/one/train.log" >"$T/loss1"
check "two ranks x two workers: every step's loss within 1e-4 of one process's" close "$T/loss1" "$T/loss2" 1e-4
check "two ranks x two workers: final weights within 1e-4 of one process's" \
    weights_close "$T/one/model.bin" "$T/two_w2/model.bin" 1e-4
mv "$T/two_w2" "$T/two_w2a"
$LIMIT $MPIRUN "$NMT_MPI" train "$T/tiny.json" --quiet --set train.workers=2 --set "output.dir=$T/two_w2" \
    >/dev/null 2>&1
check "two ranks x two workers, twice: bit-identical model.bin" cmp -s "$T/two_w2/model.bin" "$T/two_w2a/model.bin"

# The Transformer: two ranks follow one process too (its loss is scaled by the global
# token count like the recurrent models'; dropout off, as above). Its weights drift
# apart further than the recurrent model's under another grouping of the float sums
# (one process with 2 BLAS threads instead of 1 ends 2e-4 away, relative, with gelu;
# 4e-3 with relu, whose kinks flip): the losses are held to 1e-4, the weights to 1e-3.
sed -e 's/"embed": 32, "hidden": 64/"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2, "activation": "gelu"/' \
    "$T/tiny.json" >"$T/tiny_tr.json"
$LIMIT "$NMT" train "$T/tiny_tr.json" --quiet --set "output.dir=$T/one_tr" 2>/dev/null
$LIMIT $MPIRUN "$NMT_MPI" train "$T/tiny_tr.json" --quiet --set "output.dir=$T/two_tr" >/dev/null 2>&1
field loss "$T/one_tr/train.log" >"$T/loss1"
field loss "$T/two_tr/train.log" >"$T/loss2"
check "two ranks, a Transformer: every step's loss within 1e-4 of one process's" close "$T/loss1" "$T/loss2" 1e-4
grep '"event":"validation"' "$T/one_tr/train.log" | sed 's/.*"valid_loss":\([0-9.]*\).*/\1/' >"$T/v1"
grep '"event":"validation"' "$T/two_tr/train.log" | sed 's/.*"valid_loss":\([0-9.]*\).*/\1/' >"$T/v2"
check "two ranks, a Transformer: the validation losses within 1e-4 of one process's" close "$T/v1" "$T/v2" 1e-4
check "two ranks, a Transformer: final weights within 1e-3 of one process's" \
    weights_close "$T/one_tr/model.bin" "$T/two_tr/model.bin" 1e-3

# Subword units: every rank learns the same merges from the same split, so two ranks
# still follow one process (and write the merges into model.bin once).
$LIMIT "$NMT" train "$T/tiny.json" --quiet --set data.tokenizer=bpe --set data.bpe_merges=200 \
    --set "output.dir=$T/one_bpe" 2>/dev/null
$LIMIT $MPIRUN "$NMT_MPI" train "$T/tiny.json" --quiet --set data.tokenizer=bpe --set data.bpe_merges=200 \
    --set "output.dir=$T/two_bpe" >/dev/null 2>&1
check "two ranks with data.tokenizer bpe: final weights within 1e-4 of one process's" \
    eval '"$DIFF" "$T/one_bpe/model.bin" "$T/two_bpe/model.bin" 1e-4 >/dev/null'
check "two ranks with bpe: the same merges in model.bin" \
    eval '"$NMT" info "$T/one_bpe/model.bin" | grep "^tokenizer:" >"$T/t1" && "$NMT" info "$T/two_bpe/model.bin" | grep "^tokenizer:" >"$T/t2" &&
          [ -s "$T/t1" ] && cmp -s "$T/t1" "$T/t2" && "$NMT" bpe apply "$T/two_bpe/model.bin" "$T/train.tsv" >/dev/null'

# Gradient accumulation and batches by target tokens (issue 29): each of an update's
# batches is shared out among the ranks; two ranks follow one process.
KEYS="--set train.batch_tokens=150 --set train.accumulate=2"
$LIMIT "$NMT" train "$T/tiny.json" --quiet $KEYS --set "output.dir=$T/one_acc" 2>/dev/null
$LIMIT $MPIRUN "$NMT_MPI" train "$T/tiny.json" --quiet $KEYS --set "output.dir=$T/two_acc" >/dev/null 2>&1
field loss "$T/one_acc/train.log" >"$T/loss1"
field loss "$T/two_acc/train.log" >"$T/loss2"
check "two ranks with batch_tokens and accumulate: every step's loss within 1e-4 of one process's" \
    close "$T/loss1" "$T/loss2" 1e-4
check "two ranks with batch_tokens and accumulate: final weights within 1e-4 of one process's" \
    weights_close "$T/one_acc/model.bin" "$T/two_acc/model.bin" 1e-4
# The time budget: rank 0's clock decides, the sum tells every rank, and all stop after
# the same update (the tests' clock, NMT_SECONDS_PER_STEP, says 6 s an update: 1 minute
# is update 10), with model.bin and best.bin written as at any end.
$LIMIT $MPIRUN -x NMT_SECONDS_PER_STEP=6 "$NMT_MPI" train "$T/tiny.json" --set train.max_minutes=1 \
    --set "output.dir=$T/two_budget" >/dev/null 2>"$T/budget.err"
rc=$?
check "two ranks, train.max_minutes 1 at 6 s an update: exit 0, both stop after update 10" \
    eval '[ $rc -eq 0 ] && [ "$(last_step "$T/two_budget/train.log")" = 10 ] &&
          grep -q "^\[1,0\]<stderr>:nmt: train.max_minutes 1: 1.0 minutes of training at step 10; stopping" "$T/budget.err" &&
          [ -s "$T/two_budget/model.bin" ] && [ -s "$T/two_budget/best.bin" ]'

# ---------------------------------------------------------------- 2. rank 0 alone speaks

check "rank 0: its progress lines on stderr" grep -q '^\[1,0\]<stderr>:nmt: step [0-9]' "$T/two.err"
check "rank 1: not one line on stderr or stdout" \
    eval '! grep -q "^\[1,1\]" "$T/two.err" && ! grep -q "^\[1,1\]" "$T/two.out"'
check "rank 0: says it trains over 2 ranks" grep -q 'data-parallel over 2 ranks' "$T/two.err"
for f in model.bin best.bin checkpoint.bin train.log config.json valid.tsv training.svg; do
    check "two ranks: wrote $f" test -s "$T/two/$f"
done
check "two ranks: no stray files (.tmp) in the run directory" eval '! ls "$T/two" | grep -q tmp'

# ---------------------------------------------------------------- 3. nmt-mpi without mpirun

$LIMIT "$NMT_MPI" train "$T/tiny.json" --quiet --set "output.dir=$T/single" 2>"$T/single.err"
check "nmt-mpi without mpirun: exit 0" [ $? -eq 0 ]
check "nmt-mpi without mpirun: the very weights nmt trains" eval '"$DIFF" "$T/one/model.bin" "$T/single/model.bin" 0 >/dev/null'
strip() { grep -v '"event":"validation"' "$1" | sed 's/"tokens_per_s":[0-9.]*//'; }
check "nmt-mpi without mpirun: train.log as nmt writes it (bar speed)" \
    eval 'strip "$T/one/train.log" >"$T/a" && strip "$T/single/train.log" >"$T/b" && cmp -s "$T/a" "$T/b"'

# ---------------------------------------------------------------- 4. stopping and resuming

# A longer run of the same model, to stop part-way.
sed -e 's/"epochs": 3/"epochs": 100/' -e "s|$T/one|$T/long|" "$T/tiny.json" >"$T/long.json"
$LIMIT $MPIRUN "$NMT_MPI" train "$T/long.json" --set train.max_steps=1500 --set "output.dir=$T/whole" \
    >/dev/null 2>"$T/whole.err"
rc=$?
check "two ranks, uninterrupted 1500 steps: exit 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/    | /' "$T/whole.err" | tail -n 12

# SIGTERM to mpirun, which forwards it to both ranks. Open MPI 4.1's mpirun sends the
# ranks SIGCONT, then SIGTERM odls_base_sigkill_timeout seconds later, then SIGKILL as
# long after that unless they have ended (docs/distributed.md). So that no clock
# decides the step, both ranks wait for a signal after step 20 (NMT_WAIT_AT_STEP: a
# SIGCONT does not wake them), and the test signals mpirun once both say so: the
# SIGTERM, whenever it comes, stops them after step 21. Rank 0 writes the checkpoint
# and says where, and no rank exits before that (src/cli/cmd_train.c), which is what would let
# mpirun's SIGKILL come early. The ranks print nothing per step (--quiet): while mpirun
# waits it does not drain their stderr, and a rank that filled the pipe blocked in
# write (seen in CI: stuck at step 920, no checkpoint). The signal goes to mpirun's own
# pid: `timeout` would pass it on to its whole process group, ranks included. One clock
# is mpirun's and stays: its SIGKILL comes 5 s (the timeout, 1 s by default) after the
# SIGTERM, so step 21 and the checkpoint must be done by then.
$LIMIT $MPIRUN --mca odls_base_sigkill_timeout 5 -x NMT_WAIT_AT_STEP=20 "$NMT_MPI" train "$T/long.json" --quiet --set train.max_steps=1500 \
    --set "output.dir=$T/term" >"$T/term.out" 2>"$T/term.err" &
pid=$!
mpirun_pid() { if [ -n "$LIMIT" ]; then pgrep -P "$1" mpirun; else echo "$1"; fi; }
# both_waiting FILE — both ranks have said in FILE that they wait for a signal.
both_waiting() { [ "$(grep -c 'test hook: waiting for SIGINT or SIGTERM after step 20' "$1")" = 2 ]; }
sent=0
wait_until both_waiting "$T/term.err" && kill -TERM "$(mpirun_pid $pid)" && sent=1
wait $pid
rc=$?
check "SIGTERM to mpirun with both ranks waiting after step 20: the job ends non-zero (rc $rc)" eval '[ $sent = 1 ] && [ $rc -ne 0 ]'
check "SIGTERM to mpirun: rank 0 says where the checkpoint is" \
    grep -q '^\[1,0\]<stderr>:nmt: interrupted at step [0-9]*; checkpoint written to' "$T/term.err"
grep -q 'checkpoint written to' "$T/term.err" || sed 's/^/    | /' "$T/term.err" | tail -n 12
ck=$(sed -n 's/.*checkpoint written to \([^;]*\);.*/\1/p' "$T/term.err" | head -n 1)
stopped=$(grep '"event":"interrupted"' "$T/term/train.log" | sed 's/.*"step":\([0-9]*\).*/\1/')
check "SIGTERM: one interrupted event in train.log, after step 21 (${stopped:-none}), at the checkpoint's step" \
    eval '[ "$stopped" = 21 ] && [ "$ck" = "$T/term/checkpoint-21.bin" ]'
check "SIGTERM: the checkpoint reads (nmt info)" eval '"$NMT" info "$ck" | grep -q "^kind: resumable checkpoint\|checkpoint"'
check "SIGTERM: no step logged after the stop" [ "$(last_step "$T/term/train.log")" = "$stopped" ]
$LIMIT $MPIRUN "$NMT_MPI" train "$T/long.json" --resume --set train.max_steps=1500 --set "output.dir=$T/term" \
    >/dev/null 2>"$T/resume.err"
check "two ranks resume their own checkpoint: exit 0" [ $? -eq 0 ]
check "... and end with the uninterrupted run's weights" \
    weights_close "$T/whole/model.bin" "$T/term/model.bin" 0
check "... and the uninterrupted run's losses, step for step" \
    eval 'field loss "$T/whole/train.log" >"$T/a" && field loss "$T/term/train.log" >"$T/b" && cmp -s "$T/a" "$T/b"'

# SIGINT to rank 1 alone: both ranks stop after the same step, rank 0 checkpoints. Both
# ranks stop themselves after step 25 (NMT_PAUSE_AT_STEP); rank 1 gets SIGINT while
# stopped, takes it as both continue, and its flag rides in step 26's sum: both stop
# after step 26, exactly.
$LIMIT $MPIRUN -x NMT_PAUSE_AT_STEP=25 "$NMT_MPI" train "$T/long.json" --set train.max_steps=1500 \
    --set "output.dir=$T/int" >/dev/null 2>"$T/int.err" &
pid=$!
sent=0
ranks_stopped "$T/int" && kill -INT "$r1" && kill -CONT "$r1" "$r0" && sent=1
wait $pid
stopped=$(grep '"event":"interrupted"' "$T/int/train.log" | sed 's/.*"step":\([0-9]*\).*"signal":"\([A-Z]*\)".*/\1 \2/')
check "SIGINT to rank 1 only, sent while both stood after step 25: rank 0 stopped too after step 26, with a checkpoint ($stopped)" \
    eval '[ $sent = 1 ] && [ "$stopped" = "26 SIGINT" ] && [ -s "$T/int/checkpoint-26.bin" ]'
check "SIGINT to rank 1: no step logged after step 26" [ "$(last_step "$T/int/train.log")" = 26 ]
$LIMIT $MPIRUN "$NMT_MPI" train "$T/long.json" --resume --set train.max_steps=1500 --set "output.dir=$T/int" \
    >/dev/null 2>&1
check "SIGINT to rank 1: the resumed job ends with the uninterrupted run's weights" \
    eval '"$DIFF" "$T/whole/model.bin" "$T/int/model.bin" 0 >/dev/null'

# ---------------------------------------------------------------- 5. a rank dies

# Both ranks stop themselves after step 45; rank 1 is killed there and rank 0 let go.
# Checkpoints come every 10 steps and at each epoch's end (17 steps): the newest
# written is checkpoint-40.bin, and rank 0 cannot finish step 46 without rank 1.
$LIMIT $MPIRUN -x NMT_PAUSE_AT_STEP=45 "$NMT_MPI" train "$T/long.json" --set train.max_steps=400 \
    --set "output.dir=$T/kill" >/dev/null 2>"$T/kill.err" &
pid=$!
sent=0
ranks_stopped "$T/kill" && kill -KILL "$r1" && kill -CONT "$r0" && sent=1
wait $pid
rc=$?
check "rank 1 killed (SIGKILL) after step 45: the job ends non-zero (rc $rc), not hanging" \
    eval '[ $sent = 1 ] && [ $rc -ne 0 ] && [ $rc -ne 124 ]'
# Open MPI 4's mpirun ends the survivors itself and says so; an MPI that lets the
# collective fail instead gets nmt's own message (src/train/train.c: lost_contact).
check "rank 1 killed: a message names the dead rank or the lost contact" \
    eval 'grep -q "rank 1 .*exited on signal 9\|lost contact with the other ranks" "$T/kill.err"'
newest=$(ls "$T/kill" | sed -n 's/^checkpoint-\([0-9]*\)\.bin$/\1/p' | sort -n | tail -n 1)
check "rank 1 killed: the newest checkpoint is step 40's (${newest:-none}), and it reads (nmt info)" \
    eval '[ "$newest" = 40 ] && "$NMT" info "$T/kill/checkpoint-40.bin" >/dev/null'
$LIMIT "$NMT" train "$T/long.json" --resume --set train.max_steps=400 --set "output.dir=$T/kill" >/dev/null 2>"$T/k1.err"
rc=$?
check "resuming a 2-rank checkpoint with 1 process under train.deterministic: refused, saying how" \
    eval '[ $rc -eq 1 ] && grep -q "computed by 2 ranks, this job has 1; resume with mpirun -np" "$T/k1.err"'
$LIMIT "$NMT" train "$T/long.json" --resume --set train.max_steps=400 --set train.deterministic=false \
    --set "output.dir=$T/kill" >/dev/null 2>"$T/k2.err"
rc=$?
check "nmt train --resume (deterministic false) goes on from step 40 to the end (exit $rc)" \
    eval '[ $rc -eq 0 ] && grep -q "resuming at step 40 " "$T/k2.err" && [ "$(last_step "$T/kill/train.log")" = 400 ]'

# ---------------------------------------------------------------- 6. errors

$LIMIT $MPIRUN "$NMT_MPI" train "$T/tiny.json" --set "output.dir=$T/two" >/dev/null 2>"$T/err.err"
check "two ranks in a finished run's directory without --resume: starts over, exit 0" [ $? -eq 0 ]
printf '{"data": {"train": "%s"}, "output": {"dir": "%s"}}\n' "$T/nowhere.tsv" "$T/none" >"$T/bad.json"
$LIMIT $MPIRUN "$NMT_MPI" train "$T/bad.json" >/dev/null 2>"$T/bad.err"
rc=$?
check "two ranks, a missing data file: exit non-zero, rank 0 names the file" \
    eval '[ $rc -ne 0 ] && grep -q "^\[1,0\]<stderr>:nmt: .*nowhere.tsv" "$T/bad.err"'

finish
