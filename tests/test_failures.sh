#!/bin/sh
# test_failures.sh — every failure reported: write errors on standard output, model
# files holding NaN or Inf, non-finite losses, empty vocabularies, long paths.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_failures.sh
# Needs build/set_weights (make test builds it; TOOLS names its directory, by default
# the one holding $NMT if it is there, else build/).

NAME=test_failures
. tests/lib.sh

if [ -z "$TOOLS" ]; then
    TOOLS=$(dirname "$NMT")
    [ -x "$TOOLS/set_weights" ] || TOOLS=build
fi
SET_WEIGHTS=$TOOLS/set_weights
case $SET_WEIGHTS in /*) ;; *) SET_WEIGHTS=$(pwd)/$SET_WEIGHTS ;; esac
if [ ! -x "$SET_WEIGHTS" ]; then
    bad "setup: need $SET_WEIGHTS (make test builds it: make build/set_weights)"
    finish
fi

tiny_model "$T/gru"
M=$T/gru/model.bin
VALID=$T/gru/valid.tsv
# A tiny classifier: 200 lines of data/sentiment.tsv, one epoch.
head -n 200 data/sentiment.tsv >"$T/sent.tsv"
cat >"$T/cls.json" <<EOF
{"data": {"train": "$T/sent.tsv"}, "model": {"type": "classifier", "cell": "lstm", "embed": 8, "hidden": 8},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/cls"}}
EOF
if ! "$NMT" train --quiet "$T/cls.json" >"$T/cls.out" 2>&1; then
    bad "setup: tiny classifier"
    sed 's/^/    | /' "$T/cls.out" | tail -n 5
    finish
fi
C=$T/cls/model.bin
# Lines for the streaming commands; line 3 is not UTF-8, so each command says so
# (a warning or an error naming line 3) only if it got that far.
printf 'hello there\nfine\n\377\376 bad\nmore\n' >"$T/lines.txt"

# ---------------------------------------------------------------- 1. write errors on standard output
# As coreutils' close_stdout: what goes to a full device (/dev/full) is an error, exit
# 1, "nmt: write error: standard output: REASON", whatever the command; the streaming
# commands stop at the first batch that cannot be written.
STDOUT_FULL="nmt: write error: standard output: No space left on device"
full() { $LIMIT "$NMT" "$@" >/dev/full 2>"$T/err"; rc=$?; }
if [ ! -w /dev/full ]; then
    skip "write errors on standard output" "no /dev/full here"
else
    for args in "--version" "help" "--help" "train --help" "translate --help" "classify --help" "eval --help" \
                "info --help" "score --help" "plot --help" "average --help" "bpe --help"; do
        full $args
        check "nmt $args >/dev/full: exit 1, write error: standard output" \
            eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    done
    full info "$M"
    check "info >/dev/full: exit 1, write error: standard output" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full info "$M" --json
    check "info --json >/dev/full: exit 1, write error" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full eval "$M" "$VALID"
    check "eval >/dev/full: exit 1, write error: standard output" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full eval "$M" "$VALID" --json
    check "eval --json >/dev/full: exit 1, write error" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full eval "$C" "$T/cls/valid.tsv"
    check "eval of a classifier >/dev/full: exit 1, write error" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    # One message, not the command's and close_stdout's both.
    full translate "$M" "$T/lines.txt"
    check "translate >/dev/full: exit 1, one message: writing the translation: No space left on device" \
        eval 'exits 1 && has "$T/err" "nmt: writing the translation: No space left on device" && [ "$(lines "$T/err")" -eq 1 ]'
    check "... stopped at line 1: no warning about line 3" eval '! has "$T/err" "line 3"'
    full translate "$M" "$T/lines.txt" --batch 2
    check "translate --batch 2 >/dev/full: exit 1 after the first batch (no word of line 3)" \
        eval 'exits 1 && has "$T/err" "writing the translation: No space left" && ! has "$T/err" "line 3"'
    full classify "$C" "$T/lines.txt" --batch 1
    check "classify --batch 1 >/dev/full: exit 1, writing the labels, stopped before line 3" \
        eval 'exits 1 && has "$T/err" "nmt: writing the labels: No space left on device" && ! has "$T/err" "line 3"'
    full score "$VALID" -i "$VALID"
    check "score >/dev/full: exit 1, writing the scores" eval 'exits 1 && has "$T/err" "writing the scores: No space left"'
    full bpe apply --char "$T/lines.txt"
    check "bpe apply >/dev/full: exit 1, cannot write, stopped before line 3" \
        eval 'exits 1 && has "$T/err" "cannot write: No space left on device" && ! has "$T/err" ":3:"'
    full bpe learn --merges 5 "$VALID"
    check "bpe learn >/dev/full: exit 1, cannot write" eval 'exits 1 && has "$T/err" "cannot write: No space left"'
    full bpe join "$VALID"
    check "bpe join >/dev/full: exit 1, cannot write" eval 'exits 1 && has "$T/err" "cannot write: No space left"'
    full plot "$T/gru" -o /dev/full
    check "plot -o /dev/full: exit 1, /dev/full: write failed" eval 'exits 1 && has "$T/err" "/dev/full: write failed"'
    # Commands that write nothing to standard output succeed with it full.
    full train --quiet "$T/tiny.json" --set output.dir="$T/train-full"
    check "train >/dev/full: exit 0 (progress goes to stderr)" eval 'exits 0 && [ -s "$T/train-full/model.bin" ]'
    full average "$M" "$T/gru/best.bin" -o "$T/avg.bin"
    check "average -o FILE >/dev/full: exit 0 (its note goes to stderr)" eval 'exits 0 && [ -s "$T/avg.bin" ]'
    full translate "$M" "$T/lines.txt" -o "$T/translated.txt"
    check "translate -o FILE >/dev/full: exit 0" eval 'exits 0 && [ "$(lines "$T/translated.txt")" -eq 4 ]'
    full bogus
    check "an unknown command >/dev/full: still the usage error, exit 2" eval 'exits 2 && ! has "$T/err" "write error"'
fi

# A closed pipe: SIGPIPE ends nmt, as it ends cat (exit 141 in the shell, no message).
# Deterministic: the reader closes the pipe before it feeds nmt's input through a FIFO.
if mkfifo "$T/fifo" 2>/dev/null; then
    ( "$NMT" translate "$M" <"$T/fifo" 2>"$T/err"; echo $? >"$T/rc" ) | { exec 0<&-; cat "$T/lines.txt" >"$T/fifo"; }
    check "translate into a closed pipe: killed by SIGPIPE (exit 141), no message, as before" \
        eval '[ "$(cat "$T/rc")" -eq 141 ] && [ ! -s "$T/err" ]'
    # With SIGPIPE ignored (inherited, as some job runners set it), the write fails with
    # EPIPE and is reported.
    ( trap '' PIPE; "$NMT" translate "$M" <"$T/fifo" 2>"$T/err"; echo $? >"$T/rc" ) |
        { exec 0<&-; cat "$T/lines.txt" >"$T/fifo"; }
    check "translate into a closed pipe, SIGPIPE ignored: exit 1, writing the translation: Broken pipe" \
        eval '[ "$(cat "$T/rc")" -eq 1 ] && has "$T/err" "writing the translation: Broken pipe"'
    ( trap '' PIPE; "$NMT" info "$M" 2>"$T/err"; echo $? >"$T/rc" ) | { exec 0<&-; }
    check "info into a closed pipe, SIGPIPE ignored: exit 1, write error: standard output: Broken pipe" \
        eval '[ "$(cat "$T/rc")" -eq 1 ] && has "$T/err" "nmt: write error: standard output: Broken pipe"'
else
    skip "closed pipes" "mkfifo failed"
fi

finish
