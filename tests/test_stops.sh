#!/bin/sh
# test_stops.sh — a job that stops for any reason keeps its finished work and leaves no
# litter: a reader of nmt train's messages that goes away (| head, | tee killed by the
# Ctrl-C), Ctrl-C, SIGTERM, SIGHUP and SIGPIPE while translate, classify or bpe write
# -o OUT, standard descriptors closed at start (cron, daemons), a disk that fills under
# train.log, and refusals found before training.
#
# Every signal is sent when a condition holds (nmt stopped itself after a known step,
# NMT_PAUSE_AT_STEP; a reader has exited; an output line is in the temporary file),
# never after a sleep. Run from the repository root after `make` (tests/run.sh does):
# sh tests/test_stops.sh

NAME=test_stops
. tests/lib.sh

M=$T/tiny
tiny_model "$M"
printf 'Go.\nHi.\nRun!\nWho?\nWow!\n' >"$T/five.txt"

# wait_for WHAT COMMAND... — polls COMMAND until it succeeds (0), or gives up after 300 s
# (1: a hang guard, not a clock the test depends on).
wait_for() {
    shift
    i=0
    while [ $i -lt 30000 ]; do
        "$@" && return 0
        sleep 0.01
        i=$((i + 1))
    done
    return 1
}
# temporaries DIR — the names of outfile's temporary files (NAME.tmp-XXXXXX) in DIR.
temporaries() { ls "$1" | grep '\.tmp-' ; }

# ---------------------------------------------------------------- nmt train's readers

# 480 steps of a tiny model, a step line each: plenty of lines after any reader is gone.
cat >"$T/long.json" <<EOF
{"data": {"train": "$T/tiny-train.tsv"}, "model": {"cell": "gru", "embed": 8, "hidden": 8},
 "train": {"batch_size": 16, "epochs": 40, "threads": 1, "log_every": 1},
 "output": {"dir": "$T/runs/long"}}
EOF
# nmt train ... 2>&1 | head -3: head reads three lines and exits while nmt is stopped
# after step 2 (it has written more than three lines by then); the rest of the run
# writes to a pipe no one reads.
mkfifo "$T/pipe"
head -n 3 <"$T/pipe" >"$T/head.out" &
hpid=$!
env NMT_PAUSE_AT_STEP=2 "$NMT" train "$T/long.json" 2>"$T/pipe" >"$T/pipe" &
pid=$!
if stopped && wait "$hpid"; then
    kill -CONT "$pid"
    finish_bg
    check "train 2>&1 | head -3: head got 3 lines; training went on to the end: exit 0" \
        eval '[ "$(lines "$T/head.out")" = 3 ] && exits 0'
    check "... model.bin written, train.log records the end of epoch 40" \
        eval '[ -s "$T/runs/long/model.bin" ] && grep -q "\"event\":\"epoch\",\"epoch\":40," "$T/runs/long/train.log"'
else
    bad "train 2>&1 | head -3: nmt ended before step 2 (by SIGPIPE?), or head did not end"
    kill -9 "$pid" 2>/dev/null
fi
rm -rf "$T/runs/long" "$T/pipe"

# nmt train ... 2>&1 | tee log, then Ctrl-C: the Ctrl-C ends tee at once and reaches nmt,
# which stops at a checkpoint with the interrupt's status, not SIGPIPE's.
mkfifo "$T/pipe"
cat <"$T/pipe" >"$T/tee.out" &
cpid=$!
env NMT_PAUSE_AT_STEP=3 $DEFAULT_INT "$NMT" train "$T/long.json" 2>"$T/pipe" &
pid=$!
if stopped; then
    kill "$cpid"
    { wait "$cpid"; } 2>/dev/null
    kill -INT "$pid"
    kill -CONT "$pid"
    finish_bg
    check "train 2>&1 | tee, Ctrl-C (tee gone first): exit 130, not 141" exits 130
    check "... a checkpoint at step 3 to resume from" eval '[ -s "$T/runs/long/checkpoint-3.bin" ]'
    run train "$T/long.json" --resume --set train.epochs=1 --quiet
    check "... which resumes: exit 0" exits 0
else
    bad "train 2>&1 | tee: nmt did not stop itself at step 3"
    kill -9 "$pid" 2>/dev/null
fi
rm -rf "$T/runs/long" "$T/pipe"

# ---------------------------------------------------------------- a full disk under train.log

# The disk fills at byte 1000 of train.log (NMT_FULL_DISK_AT=train.log@1000, the test
# hook of src/base/testhook.h), in the middle of a line: every line after it is lost.
env NMT_FULL_DISK_AT=train.log@1000 "$NMT" train "$T/tiny.json" --set output.dir="$T/runs/full" \
    --set train.log_every=1 >"$T/out" 2>"$T/err"
rc=$?
check "train.log's disk full at byte 1000: a warning at once, naming train.log and the step" \
    eval 'has "$T/err" "nmt: warning: $T/runs/full/train.log: cannot write (No space left on device): its lines from step"'
check "... exit 1 at the end, saying how many lines are lost; model.bin whole" \
    eval 'exits 1 && has "$T/err" "lines could not be written (the first at step" && "$NMT" info "$T/runs/full/model.bin" >/dev/null 2>&1'
check "... train.log holds whole lines only (no torn line), under 1000 bytes" \
    eval '[ "$(wc -c <"$T/runs/full/train.log")" -le 1000 ] && ! grep -qv "^{.*}\$" "$T/runs/full/train.log" && [ "$(tail -c 1 "$T/runs/full/train.log" | od -An -c | tr -d " ")" = "\\n" ]'

# ---------------------------------------------------------------- signals while -o is written

# A tiny classifier, for nmt classify.
cat >"$T/cls.json" <<EOF
{"data": {"train": "$(pwd)/data/sentiment.tsv"}, "model": {"type": "classifier", "cell": "gru", "embed": 8,
 "hidden": 8}, "train": {"epochs": 1, "threads": 1}, "output": {"dir": "$T/cls"}}
EOF
"$NMT" train --quiet "$T/cls.json" >/dev/null 2>&1 || bad "setup: a tiny classifier"

# signal_while_writing SIG WHEN ARGS... — nmt ARGS... -o $T/sig/out.txt reading a pipe
# that stays open: one line goes in, and once its answer is in the temporary file (WHEN
# "line"), or once the temporary file exists (WHEN "exists": bpe writes through a
# buffer), nmt gets SIG. Sets $rc.
signal_while_writing() {
    sig=$1 when=$2
    shift 2
    rm -rf "$T/sig"
    mkdir "$T/sig"
    printf 'old output\n' >"$T/sig/out.txt"
    mkfifo "$T/sig/in"
    $DEFAULT_INT "$NMT" "$@" -o "$T/sig/out.txt" <"$T/sig/in" 2>"$T/sig/err" &
    pid=$!
    exec 7>"$T/sig/in"
    printf 'Go.\n' >&7
    if [ "$when" = exists ]; then
        wait_for "a temporary file" eval 'temporaries "$T/sig" | grep -q .'
    else
        wait_for "a line in the temporary file" \
            eval 't=$(temporaries "$T/sig"); [ -n "$t" ] && [ "$(lines "$T/sig/$t")" = 1 ]'
    fi
    kill -"$sig" "$pid"
    finish_bg
    exec 7>&-
}
sigstatus() { case $1 in HUP) echo 129 ;; INT) echo 130 ;; TERM) echo 143 ;; esac; }
for case in "INT line translate $M/model.bin" "TERM line translate $M/model.bin --beam 2" \
            "HUP line classify $T/cls/model.bin --batch 1" "INT exists bpe apply --char" \
            "TERM exists bpe join"; do
    set -- $case
    sig=$1
    signal_while_writing "$@"
    shift 2
    check "$(echo "$*" | sed "s|$T/||") -o OUT, SIG$sig while writing: exit $(sigstatus "$sig"), no OUT.tmp-XXXXXX left, OUT as it was" \
        eval 'exits $(sigstatus "$sig") && [ -z "$(temporaries "$T/sig")" ] && [ "$(cat "$T/sig/out.txt")" = "old output" ]'
done

# translate -o OUT whose stderr's reader has gone, at the warning of a bad line: the
# warning is lost, not the work (SIGPIPE ignored where the output is a file).
rm -rf "$T/sig"
mkdir "$T/sig"
mkfifo "$T/sig/in" "$T/sig/errpipe"
"$NMT" translate "$M/model.bin" -o "$T/sig/out.txt" <"$T/sig/in" 2>"$T/sig/errpipe" &
pid=$!
exec 7>"$T/sig/in"  # (the shell opens nmt's stdin first, then waits for stderr's reader)
sh -c 'exec 3<"$1"' sh "$T/sig/errpipe"  # the reader opens the pipe and goes away
printf 'Go.\n\377\n' >&7
exec 7>&-
finish_bg
check "translate -o OUT, stderr's reader gone, at a warning: exit 0, OUT whole (2 lines), no OUT.tmp-XXXXXX left" \
    eval 'exits 0 && [ -z "$(temporaries "$T/sig")" ] && [ "$(lines "$T/sig/out.txt")" = 2 ]'

# Ctrl-C while nmt train reads its data (data.train a pipe that stays open and empty):
# once train.lock is there, SIGINT; the directories and train.lock it made go with it.
rm -rf "$T/sig"
mkdir "$T/sig"
mkfifo "$T/sig/data"
$DEFAULT_INT "$NMT" train "$T/tiny.json" --set data.train="$T/sig/data" --set output.dir="$T/sig/run/a" \
    >"$T/out" 2>"$T/err" &
pid=$!
exec 7>"$T/sig/data"
wait_for "train.lock" test -e "$T/sig/run/a/train.lock"
kill -INT "$pid"
finish_bg
exec 7>&-
check "train, Ctrl-C while reading its data: exit 130, the directories and train.lock it made gone" \
    eval 'exits 130 && [ ! -e "$T/sig/run" ]'

# ---------------------------------------------------------------- closed standard descriptors

# Started with a standard descriptor closed, nothing meant for it may reach a file nmt
# opens (the next open() would take its number).
printf 'Go.\n\377bad\nHi.\n' >"$T/bad.txt"
"$NMT" translate "$M/model.bin" "$T/bad.txt" -o "$T/closed.txt" 2>&-
rc=$?
check "translate IN -o OUT 2>&- (IN warns): exit 0, OUT holds the 3 translations and no message" \
    eval 'exits 0 && [ "$(lines "$T/closed.txt")" = 3 ] && ! grep -q "nmt:" "$T/closed.txt"'
"$NMT" translate "$M/model.bin" -o "$T/closed-in.txt" <&- 2>"$T/err"
rc=$?
check "translate -o OUT <&-: exit 1, a read error on stdin, no OUT" \
    eval 'exits 1 && has "$T/err" "stdin: read error: Bad file descriptor" && [ ! -e "$T/closed-in.txt" ]'
"$NMT" translate "$M/model.bin" "$T/five.txt" >&- 2>"$T/err"
rc=$?
check "translate IN >&-: exit 1, a write error" eval 'exits 1 && has "$T/err" "Bad file descriptor"'
"$NMT" train "$T/tiny.json" --set output.dir="$T/runs/closed" --set train.log_every=1 <&- >&- 2>&-
rc=$?
check "train <&- >&- 2>&-: exit 0, no message in train.lock, train.log (JSON lines only) or config.json" \
    eval 'exits 0 && ! grep -q "nmt:" "$T/runs/closed/train.lock" "$T/runs/closed/train.log" "$T/runs/closed/config.json" && ! grep -qv "^{" "$T/runs/closed/train.log"'

# ---------------------------------------------------------------- refusals before training

# A run refused before it trains leaves no run directory behind: none made, and an
# existing one as it was (a finished run's checkpoints, config.json and valid.tsv kept).
grep '	1$' "$(pwd)/data/sentiment.tsv" | head -n 50 >"$T/one-class.tsv"
cat >"$T/one.json" <<EOF
{"data": {"train": "$T/one-class.tsv"}, "model": {"type": "classifier", "embed": 8, "hidden": 8},
 "train": {"epochs": 1, "threads": 1}, "output": {"dir": "$T/new/a/b"}}
EOF
run train "$T/one.json"
check "a one-class classifier refused: exit 1; output.dir and the parents it made gone" \
    eval 'exits 1 && has "$T/err" "a classifier needs at least two classes" && [ ! -e "$T/new" ]'
run train "$T/tiny.json" --set output.dir="$T/new/x" --set data.min_count=1000
check "a min_count that keeps no word: exit 1; no output.dir" eval 'exits 1 && [ ! -e "$T/new" ]'
mkdir "$T/empty"
run train "$T/tiny.json" --set output.dir="$T/empty" --set data.min_count=1000
check "... in an empty directory of the user's: it stays, empty (no train.lock)" \
    eval 'exits 1 && [ -d "$T/empty" ] && [ -z "$(ls -A "$T/empty")" ]'
cp -r "$M" "$T/done"
( cd "$T/done" && ls -l --time-style=+%s . && cksum ./* ) >"$T/done.before"
run train "$T/tiny.json" --set output.dir="$T/done" --set data.min_count=1000
( cd "$T/done" && ls -l --time-style=+%s . && cksum ./* ) >"$T/done.after"
check "... in a finished run's directory: its checkpoints, config.json, valid.tsv, every file as it was" \
    eval 'exits 1 && [ -n "$(ls "$T/done" | grep checkpoint-)" ] && cmp -s "$T/done.before" "$T/done.after"'
run train "$T/tiny.json" --set output.dir="$T/done"
check "... and a run that is not refused starts over there: exit 0, the old checkpoints cleared" \
    eval 'exits 0 && has "$T/err" "starting over in $T/done: deleted the" && [ -s "$T/done/model.bin" ]'

finish
