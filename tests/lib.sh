# lib.sh — what the end-to-end shell tests share (sourced, not run: test_cli.sh and
# test_cli_*.sh, test_mpi.sh, test_files.sh, test_limits.sh, test_failures.sh,
# test_mixups.sh, test_stops.sh, test_threads.sh, test_serve.sh, test_browser.sh):
# counting checks, running nmt with its output captured, tiny and small trained models,
# the data and the small run of the tests of the commands, and nmt in the background
# stopped at a known step.
#
# A test sets NAME (its closing line's name) before sourcing this file from the
# repository root: . tests/lib.sh. It gets $NMT (absolute), $DATA (data/mar.txt), $T (a
# temporary directory removed at exit) and:
#   ok WHAT / bad WHAT / skip WHAT WHY    count one check
#   check WHAT COMMAND...                 passes when COMMAND succeeds
#   run ARGS...                           nmt ARGS, stdout to $T/out, stderr to $T/err, $rc
#   exits RC                              $rc is RC
#   has FILE STRING                       FILE contains STRING (fixed string)
#   lines FILE                            FILE's line count
#   nth_line N FILE                       line N of FILE
#   usage_error CMD                       $rc is 2 and stderr one line, "nmt: ...; see
#                                         'nmt CMD --help'" (CMD empty: 'nmt --help')
#   one_error                             stderr is one line, starting with $PREFIX
#   field KEY FILE                        the number after "KEY": on each line of FILE
#   tiny_model DIR                        trains a small model into DIR (DIR/model.bin)
#   wait_lines FILE N                     waits until FILE has N lines, or nmt ($pid)
#                                         has ended without writing them (then fails)
#   small_model KIND DIR                  trains a small gru, transformer or classifier
#                                         into DIR, one that outputs something
#   cli_data                              $T/train.tsv (300 pairs), $T/tiny.json (the
#                                         config of the run $RUN), $T/two.txt
#   cli_tiny_run                          trains $T/tiny.json into $RUN; $M is its model
#   $DEFAULT_INT COMMAND...               COMMAND with SIGINT and SIGHUP at their default
#                                         actions (a background job of a script starts
#                                         ignoring SIGINT, one run under nohup SIGHUP)
#   start ARGS... / start_paused K ARGS...
#                                         nmt in the background, stopping itself after
#                                         update K (see below)
#   stopped                               waits until $pid has stopped itself (SIGSTOP)
#   finish_bg                             waits for $pid to end; sets $rc
#   last_step LOG                         the step of LOG's last step line
#   finish                                prints "NAME: N passed, M failed, K skipped"
# Nothing here depends on a clock; the time limit only keeps a hung nmt from hanging
# the suite.

NMT=${NMT:-./nmt}
case $NMT in /*) ;; *) NMT=$(pwd)/$NMT ;; esac
DATA=$(pwd)/data/mar.txt

passed=0
failed=0
skipped=0
ok()   { passed=$((passed + 1)); echo "  ok $1"; }
bad()  { failed=$((failed + 1)); echo "FAIL $1"; }
skip() { skipped=$((skipped + 1)); echo "skip $1: $2"; }
check() { what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() {
    echo "$NAME: $passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ] && exit 0
    exit 1
}

if [ ! -x "$NMT" ] || [ ! -r "$DATA" ]; then
    bad "setup: need $NMT (run make) and $DATA, run from the repository root"
    finish
fi

T=$(mktemp -d) || exit 1
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM HUP

# The limit only keeps a hung nmt from hanging the suite; -k: a process that ignores
# SIGTERM (nmt serve does, once it is stopping) is killed 10 s later.
if command -v timeout >/dev/null 2>&1; then LIMIT="timeout -k 10 300"; else LIMIT=; fi

run() { $LIMIT "$NMT" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
if env --default-signal=INT,HUP true 2>/dev/null; then DEFAULT_INT="env --default-signal=INT,HUP"; else DEFAULT_INT=; fi
# stopped — waits until $pid has stopped itself (state T in /proc/PID/stat: 0), or has
# ended instead (1). The 300 s bound only keeps a hung nmt from hanging the suite.
stopped() {
    i=0
    while [ $i -lt 30000 ]; do
        st=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
        [ "$st" = T ] && return 0
        [ -z "$st" ] || [ "$st" = Z ] && return 1
        sleep 0.01
        i=$((i + 1))
    done
    return 1
}
# finish_bg — waits for $pid to end (killing it after 300 s, a hang guard); sets $rc.
finish_bg() {
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null
    { wait "$pid"; } 2>/dev/null
    rc=$?
}
exits() { [ "$rc" -eq "$1" ]; }
has() { grep -qF -- "$2" "$1"; }
lines() { wc -l <"$1" | tr -d ' '; }
nth_line() { sed -n "${1}p" "$2"; }
usage_error() {
    exits 2 && [ "$(lines "$T/err")" = 1 ] || return 1
    case $(cat "$T/err") in "nmt: "*"; see 'nmt ${1:+$1 }--help'") return 0 ;; esac
    return 1
}
# one_error — stderr is exactly one line, starting with $PREFIX (a literal).
one_error() {
    [ "$(lines "$T/err")" = 1 ] || return 1
    case $(cat "$T/err") in "$PREFIX"*) return 0 ;; esac
    return 1
}
# field KEY FILE — the number after "KEY": on each line of FILE that has one.
field() { sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2"; }

# wait_lines FILE N — for a background nmt ($pid) writing FILE: 0 once FILE has N lines,
# 1 if nmt has ended without writing them. The 300 s bound only keeps a hung nmt from
# hanging the suite.
wait_lines() {
    i=0
    while [ "$(lines "$1")" -lt "$2" ] && kill -0 $pid 2>/dev/null && [ "$i" -lt 30000 ]; do
        sleep 0.01; i=$((i + 1))
    done
    [ "$(lines "$1")" -ge "$2" ]
}

# tiny_model DIR — 200 pairs of data/mar.txt, one epoch of a 16-unit GRU: a model file
# to read, translate with and break, not one that translates well.
tiny_model() {
    awk 'NR % 97 == 0' "$DATA" | head -n 200 >"$T/tiny-train.tsv"
    cat >"$T/tiny.json" <<EOF
{"data": {"train": "$T/tiny-train.tsv"}, "model": {"cell": "gru", "embed": 16, "hidden": 16},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$1"}}
EOF
    "$NMT" train --quiet "$T/tiny.json" >"$T/tiny.out" 2>"$T/tiny.err" || {
        bad "setup: tiny model in $1"
        sed 's/^/    | /' "$T/tiny.err" | tail -n 5
        finish
    }
}

# start ARGS... — nmt in the background (no timeout wrapper: signals must reach nmt
# itself), stderr to $T/bg.err; sets $pid. SIGINT is reset to its default, which a
# non-interactive shell sets to ignored for background commands (nmt then leaves it so).
# start_paused K ARGS... — the same, stopping itself with SIGSTOP right after update K
# and its train.log line (NMT_PAUSE_AT_STEP, src/base/testhook.h; 0: it does not stop).
# (stopped and finish_bg, above, wait for it.)
start() { $DEFAULT_INT "$NMT" "$@" 2>>"$T/bg.err" & pid=$!; }
start_paused() { pause=$1; shift; env NMT_PAUSE_AT_STEP="$pause" $DEFAULT_INT "$NMT" "$@" 2>>"$T/bg.err" & pid=$!; }
# last_step LOG — the step of LOG's last step line.
last_step() { grep -v '"event"' "$1" 2>/dev/null | sed -n 's/.*"step":\([0-9]*\).*/\1/p' | tail -n 1; }

# small_model KIND DIR — a small model that translates (or labels) something, trained in
# seconds into DIR (DIR/model.bin): KIND gru or transformer, 2 epochs on 800 pairs of
# data/mar.txt (every 20th: all lengths); classifier, 1 epoch of attention pooling on
# data/sentiment.tsv. For the tests that compare what nmt answers by two routes.
small_model() {
    awk 'NR % 20 == 0' "$DATA" | head -n 800 >"$T/small-train.tsv"
    small_data="\"train\": \"$T/small-train.tsv\"" small_epochs=2 small_rate=0.003 small_bleu=', "valid_bleu_max": 0'
    case $1 in
    gru) small_model='{"embed": 32, "hidden": 48}' ;;
    transformer) small_model='{"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2}' small_rate=0.002 ;;
    classifier) small_model='{"type": "classifier", "embed": 16, "hidden": 24, "pooling": "attention"}' small_epochs=1
                small_bleu=
                small_data="\"train\": \"$(pwd)/data/sentiment.tsv\", \"valid_fraction\": 0.2, \"lowercase\": true" ;;
    esac
    cat >"$T/small.json" <<EOF
{"data": {$small_data}, "model": $small_model,
 "train": {"batch_size": 32, "epochs": $small_epochs, "learning_rate": $small_rate, "threads": 1$small_bleu},
 "output": {"dir": "$2"}}
EOF
    $LIMIT "$NMT" train "$T/small.json" --quiet 2>"$T/small.err" || {
        bad "setup: training the small $1 model"
        sed 's/^/    | /' "$T/small.err" | tail -n 5
        finish
    }
}

# cli_data — what the tests of the commands (test_cli.sh, test_cli_*.sh) train and
# translate: $T/train.tsv, 300 pairs spread over data/mar.txt (it is sorted by length), of
# which nmt trains on 270 and holds out 30; $T/tiny.json, the config of the run RUN
# ($T/runs/tiny: a 64-unit GRU that memorises its 270 pairs in 30 epochs), which the
# tests vary with sed or --set; and $T/two.txt, two sentences to translate.
# learning_rate 0.003: at the default 0.001 this model needs more than 30 epochs to
# memorise its 270 pairs (BLEU 5.6 on train.tsv after 30), at 0.003 it has (BLEU 88).
# Validation every 100 steps as well as at the 30 epoch ends, best.bin by BLEU.
cli_data() {
    awk 'NR % 97 == 0' "$DATA" | head -n 300 >"$T/train.tsv"
    RUN=$T/runs/tiny
    cat >"$T/tiny.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 32, "hidden": 64},
  "train": {"batch_size": 16, "epochs": 30, "learning_rate": 0.003, "threads": 1, "log_every": 10,
            "validate_every": 100, "best_metric": "bleu"},
  "output": {"dir": "$RUN"}
}
EOF
    printf 'Show me.\nI am hungry.\n' >"$T/two.txt"
}

# cli_tiny_run — trains $T/tiny.json (cli_data) into $RUN, for the tests that need a
# model that translates; M is $RUN/model.bin. (test_cli.sh trains it with checks of
# its own.)
cli_tiny_run() {
    $LIMIT "$NMT" train "$T/tiny.json" >"$T/tiny-run.out" 2>"$T/tiny-run.err" || {
        bad "setup: training $RUN"
        sed 's/^/    | /' "$T/tiny-run.err" | tail -n 5
        finish
    }
    M=$RUN/model.bin
}
