#!/bin/sh
# test_threads.sh — nmt on several threads.
#   translate, eval, classify  --workers N writes exactly what one worker writes (cmp on
#              3,000 lines: recurrent and Transformer, greedy and beam, ensembles, n-best
#              lists, attention JSON, alignments, heatmaps); --threads and --workers
#              asking for two things is a usage error.
#   train      train.workers N: bit-identical run after run; equal to one worker up to
#              the grouping of float sums (dropout 0: every step's loss, every validation
#              loss and the weights within a tolerance; recurrent and Transformer; a
#              classifier's accuracy); a run killed with SIGKILL and resumed ends bit for
#              bit as the uninterrupted one (dropout and scheduled sampling on); a resume
#              under train.deterministic keeps the run's worker count.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_threads.sh
# Trains its own small models on data/mar.txt and data/sentiment.tsv (a few seconds).
# Nothing here depends on a clock.

NAME=test_threads
. tests/lib.sh

# 1,500 pairs of the corpus (every 20th: all lengths), small models, a few epochs.
awk 'NR % 20 == 0' "$DATA" | head -n 1500 >"$T/train.tsv"
cat >"$T/gru.json" <<EOF
{"data": {"train": "$T/train.tsv"}, "model": {"embed": 32, "hidden": 48},
 "train": {"batch_size": 32, "epochs": 2, "learning_rate": 0.003, "threads": 1, "valid_bleu_max": 0},
 "output": {"dir": "$T/gru"}}
EOF
cat >"$T/tr.json" <<EOF
{"data": {"train": "$T/train.tsv"},
 "model": {"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2},
 "train": {"batch_size": 32, "epochs": 2, "learning_rate": 0.002, "threads": 1, "valid_bleu_max": 0},
 "output": {"dir": "$T/tr"}}
EOF
for m in gru tr; do
    $LIMIT "$NMT" train "$T/$m.json" --quiet 2>"$T/$m.err" ||
        { bad "setup: training the $m model"; sed 's/^/    | /' "$T/$m.err" | tail -n 5; finish; }
done
# 3,000 source lines (some repeated), an empty line, a line that is not UTF-8.
cut -f1 "$DATA" | awk 'NR % 11 == 0' | head -n 3000 >"$T/src.txt"
printf '\n\377\376 broken\n' >>"$T/src.txt"

# same_as_one NAME ARGS... — nmt ARGS with --workers 1 and with --workers 3: the same
# standard output, byte for byte, and the same warnings.
same_as_one() {
    what=$1
    shift
    $LIMIT "$NMT" "$@" --workers 1 >"$T/one.out" 2>"$T/one.err"
    rc1=$?
    $LIMIT "$NMT" "$@" --workers 3 >"$T/three.out" 2>"$T/three.err"
    rc3=$?
    check "$what: --workers 3 writes what --workers 1 does ($(lines "$T/one.out") lines)" \
        eval '[ $rc1 -eq 0 ] && [ $rc3 -eq 0 ] && [ -s "$T/one.out" ] && cmp -s "$T/one.out" "$T/three.out" &&
              cmp -s "$T/one.err" "$T/three.err"'
}

# ---------------------------------------------------------------- translate

for m in gru tr; do
    M=$T/$m/model.bin
    same_as_one "translate $m, greedy, --batch 64" translate "$M" --batch 64 "$T/src.txt"
    same_as_one "translate $m, beam 4, --batch 16" translate "$M" --beam 4 --batch 16 "$T/src.txt"
    same_as_one "translate $m, --nbest 3 --align, --batch 32" translate "$M" --nbest 3 --beam 4 --align --batch 32 "$T/src.txt"
    same_as_one "translate $m, --attention-json, --batch 8" translate "$M" --attention-json --batch 8 "$T/src.txt"
    same_as_one "translate $m, one line at a time" translate "$M" "$T/src.txt"
done
same_as_one "translate an ensemble (--models gru tr), beam 3" translate --models "$T/gru/model.bin" "$T/tr/model.bin" \
    --beam 3 --batch 32 "$T/src.txt"
# Heatmaps: the same pictures, and as many.
head -n 40 "$T/src.txt" >"$T/src40.txt"
$LIMIT "$NMT" translate "$T/tr/model.bin" --batch 8 --attention-svg "$T/svg1" --attention-heads "$T/src40.txt" \
    --workers 1 >/dev/null 2>&1
$LIMIT "$NMT" translate "$T/tr/model.bin" --batch 8 --attention-svg "$T/svg3" --attention-heads "$T/src40.txt" \
    --workers 3 >/dev/null 2>&1
check "translate --attention-svg --attention-heads: the same heatmaps with 3 workers ($(ls "$T/svg1" 2>/dev/null | wc -l) files)" \
    eval '[ "$(ls "$T/svg1" | wc -l)" -gt 40 ] && diff -r "$T/svg1" "$T/svg3" >/dev/null'
# Several inputs: the lines are numbered on across them as with one worker.
same_as_one "translate two inputs, --nbest 2 (numbered across them)" translate "$T/tr/model.bin" --nbest 2 --batch 7 \
    "$T/src40.txt" "$T/src40.txt"
# A pipe that delivers a line at a time is still answered a line at a time: the answer
# to line 1 comes before line 2 is written (the reader waits for it).
mkfifo "$T/fifo_in"
$LIMIT "$NMT" translate "$T/gru/model.bin" --workers 3 <"$T/fifo_in" >"$T/fifo_out" 2>/dev/null &
pid=$!
exec 3>"$T/fifo_in"
head -n 1 "$T/src.txt" >&3
i=0
while [ ! -s "$T/fifo_out" ] && [ $i -lt 3000 ] && kill -0 $pid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
check "translate --workers 3 in a pipeline: line 1 answered while line 2 is not yet written" test -s "$T/fifo_out"
exec 3>&-
wait $pid

run translate "$T/gru/model.bin" --workers 2 --threads 2 "$T/src40.txt"
check "translate --workers 2 --threads 2: usage error naming both" \
    eval 'usage_error translate && has "$T/err" "--threads 2 is OpenBLAS'"'"'s threads for one worker"'
run translate "$T/gru/model.bin" --workers 65 "$T/src40.txt"
check "translate --workers 65: usage error (1 .. 64, or 0)" usage_error translate
run translate "$T/gru/model.bin" --workers 0 --batch 16 "$T/src40.txt"
check "translate --workers 0 (one per core): exit 0, 40 lines" eval 'exits 0 && [ "$(lines "$T/out")" = 40 ]'
# The default is a worker per core (--threads N: one worker with N threads), and writes
# what one worker writes.
$LIMIT "$NMT" translate "$T/tr/model.bin" --beam 4 --nbest 2 --batch 16 "$T/src.txt" --workers 1 >"$T/one.out" 2>"$T/one.err"
$LIMIT "$NMT" translate "$T/tr/model.bin" --beam 4 --nbest 2 --batch 16 "$T/src.txt" >"$T/dflt.out" 2>"$T/dflt.err"
check "translate without --workers (one per core): what --workers 1 writes, the same warnings" \
    eval '[ -s "$T/one.out" ] && cmp -s "$T/one.out" "$T/dflt.out" && cmp -s "$T/one.err" "$T/dflt.err"'
run translate "$T/gru/model.bin" --threads 2 --batch 16 "$T/src40.txt"
check "translate --threads 2 without --workers: one worker on 2 threads, exit 0, 40 lines" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ]'

# ---------------------------------------------------------------- eval

awk 'NR % 13 == 0' "$DATA" | head -n 800 >"$T/test.tsv"
for m in gru tr; do
    same_as_one "eval $m" eval "$T/$m/model.bin" "$T/test.tsv" --json
    same_as_one "eval $m, beam 3" eval "$T/$m/model.bin" "$T/test.tsv" --beam 3
done

# ---------------------------------------------------------------- train

# field KEY FILE — the number after "KEY": on each line of FILE that has one.
field() { sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2"; }
vlosses() { grep '"event":"validation"' "$1/train.log" | field valid_loss /dev/stdin; }
# close A B REL — the numbers in files A and B (one a line) agree to REL relatively.
close() {
    paste "$1" "$2" | awk -v tol="$3" '
        { n++; d = $1 - $2; if (d < 0) d = -d; m = $1 < 0 ? -$1 : $1; if (m < 1e-30) m = 1e-30
          if (d / m > worst) worst = d / m }
        END { printf "      %d values, worst relative difference %.3g\n", n, worst; exit !(n > 0 && worst <= tol) }'
}
# weights_close A B REL — the weights of model files A and B agree within REL of the
# largest (tests/tools/weights_diff.c, built by make test into $TOOLS), its line shown.
weights_close() {
    "$TOOLS/weights_diff" "$1" "$2" "$3" >"$T/wdiff" 2>&1
    rc_diff=$?
    sed 's/^/      /' "$T/wdiff"
    return $rc_diff
}
TOOLS=${TOOLS:-build}

# Dropout 0 and teacher forcing 1: no random draw, so 1 and 3 workers differ only in how
# the float sums of each step's gradient are grouped. 3 epochs, a validation every 10
# steps and at each epoch's end.
awk 'NR % 40 == 0' "$DATA" | head -n 600 >"$T/small.tsv"
cat >"$T/w.json" <<EOF
{"data": {"train": "$T/small.tsv"}, "model": {"embed": 32, "hidden": 48},
 "train": {"batch_size": 32, "epochs": 3, "learning_rate": 0.003, "threads": 1, "validate_every": 10,
           "valid_bleu_max": 20, "log_every": 1},
 "output": {"dir": "$T/w1"}}
EOF
sed -e 's/"embed": 32, "hidden": 48/"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2, "activation": "gelu"/' \
    "$T/w.json" >"$T/wt.json"
for cfg in w wt; do
    for n in 1 3; do
        $LIMIT "$NMT" train "$T/$cfg.json" --set train.workers=$n --set "output.dir=$T/${cfg}_$n" 2>"$T/${cfg}_$n.err" ||
            sed 's/^/    | /' "$T/${cfg}_$n.err" | tail -n 3
    done
    vlosses "$T/${cfg}_1" >"$T/v1"
    vlosses "$T/${cfg}_3" >"$T/v3"
    case $cfg in w) family="recurrent"; tol=1e-4 ;; *) family="Transformer"; tol=1e-3 ;; esac
    check "train $family, 3 workers: every validation loss within 1e-4 of one worker's ($(lines "$T/v1") validations)" \
        eval '[ "$(lines "$T/v1")" -ge 5 ] && close "$T/v1" "$T/v3" 1e-4'
    field loss "$T/${cfg}_1/train.log" >"$T/l1"
    field loss "$T/${cfg}_3/train.log" >"$T/l3"
    check "train $family, 3 workers: every step's loss within 1e-4 of one worker's" close "$T/l1" "$T/l3" 1e-4
    check "train $family, 3 workers: final weights within $tol of one worker's (relative to the largest)" \
        weights_close "$T/${cfg}_1/model.bin" "$T/${cfg}_3/model.bin" $tol
done
check "train.workers 3: says how it computes" grep -q "3 workers, one thread each" "$T/w_3.err"
# The same workers again, in the same directory (model.bin records it): the very same bits.
mv "$T/wt_3" "$T/wt_3a"
$LIMIT "$NMT" train "$T/wt.json" --quiet --set train.workers=3 --set "output.dir=$T/wt_3" 2>/dev/null
check "train Transformer, 3 workers, twice: bit-identical model.bin" cmp -s "$T/wt_3/model.bin" "$T/wt_3a/model.bin"

# Dropout, label smoothing and scheduled sampling (every worker's random stream), killed
# with SIGKILL at known steps and resumed: the same model, best.bin and train.log as the
# run that was not interrupted, bit for bit. Checkpoints every 7 steps, so that the work
# since the last one is done again.
cat >"$T/r.json" <<EOF
{"data": {"train": "$T/small.tsv"}, "model": {"embed": 32, "hidden": 48, "dropout": 0.2},
 "train": {"batch_size": 24, "epochs": 2, "learning_rate": 0.003, "threads": 1, "workers": 3, "log_every": 1,
           "checkpoint_every": 7, "validate_every": 10, "valid_bleu_max": 10, "label_smoothing": 0.1,
           "teacher_forcing": 0.8},
 "output": {"dir": "$T/r_run"}}
EOF
# Every run in the same directory, which model.bin records; each moved away after.
$LIMIT "$NMT" train "$T/r.json" --quiet 2>/dev/null
mv "$T/r_run" "$T/r_straight"
steady_log() {
    grep -v '"event":"\(resume\|interrupted\)"' "$1" |
        sed -e 's/"tokens_per_s":[0-9.eE+-]*//' -e 's/"seconds":[0-9.]*//' -e 's/"elapsed":[0-9.]*//'
}
R=$T/r_run
: >"$T/bg.err"
start_paused 5 train "$T/r.json" --quiet
killed_at=
for pair in "5 19" "19 33" "33 0"; do
    k=${pair% *}
    if stopped && kill -9 "$pid"; then killed_at="$killed_at $k"; fi
    { wait "$pid"; } 2>/dev/null
    start_paused "${pair#* }" train "$T/r.json" --resume --quiet
done
wait "$pid"
rc=$?
check "train.workers 3, dropout and sampling: killed at steps 5, 19 and 33 (at:$killed_at), resumed each time: exit 0" \
    eval '[ $rc -eq 0 ] && [ "$killed_at" = " 5 19 33" ]'
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/bg.err" | tail -n 5
check "train.workers 3 killed and resumed: model.bin bit-identical to the uninterrupted run's" \
    cmp -s "$R/model.bin" "$T/r_straight/model.bin"
check "train.workers 3 killed and resumed: best.bin bit-identical" cmp -s "$R/best.bin" "$T/r_straight/best.bin"
steady_log "$R/train.log" >"$T/log.a"
steady_log "$T/r_straight/train.log" >"$T/log.b"
check "train.workers 3 killed and resumed: train.log the same apart from timings and resume events" \
    eval '[ -s "$T/log.a" ] && cmp -s "$T/log.a" "$T/log.b"'
# Stopped after its first epoch and resumed with train.workers 1: under
# train.deterministic it goes on with the 3 workers it started with.
mv "$R" "$T/r_killed"
$LIMIT "$NMT" train "$T/r.json" --quiet --set train.epochs=1 2>/dev/null
$LIMIT "$NMT" train --resume "$R" --set train.epochs=2 --set train.workers=1 >/dev/null 2>"$T/r_det.err"
check "train.deterministic: resumed with train.workers 1, goes on with the run's 3 workers, bit for bit" \
    eval 'grep -q "3 workers, as the run started with" "$T/r_det.err" && cmp -s "$R/model.bin" "$T/r_straight/model.bin"'

# ---------------------------------------------------------------- classify

SENT=$(pwd)/data/sentiment.tsv
cat >"$T/cls.json" <<JSON
{"data": {"train": "$SENT", "valid_fraction": 0.2, "lowercase": true},
 "model": {"type": "classifier", "embed": 16, "hidden": 24, "pooling": "attention"},
 "train": {"epochs": 1, "batch_size": 32, "learning_rate": 0.003, "threads": 1},
 "output": {"dir": "$T/cls"}}
JSON
$LIMIT "$NMT" train "$T/cls.json" --quiet 2>"$T/cls.err" || { bad "setup: training the classifier"; finish; }
cut -f1 "$SENT" >"$T/cls_in.txt"
printf '\n' >>"$T/cls_in.txt"
same_as_one "classify --probs all, --batch 16" classify "$T/cls/model.bin" --probs all --batch 16 "$T/cls_in.txt"
same_as_one "eval a classifier" eval "$T/cls/model.bin" "$SENT" --json
# A classifier trains on workers too (pooling and class weights in every worker).
sed -e 's/"epochs": 1,/"epochs": 1, "class_weights": "balanced",/' "$T/cls.json" >"$T/cls2.json"
for n in 1 2; do
    $LIMIT "$NMT" train "$T/cls2.json" --quiet --set train.workers=$n --set "output.dir=$T/cls_w$n" 2>/dev/null
done
grep '"event":"validation"' "$T/cls_w1/train.log" | field valid_accuracy /dev/stdin >"$T/a1"
grep '"event":"validation"' "$T/cls_w2/train.log" | field valid_accuracy /dev/stdin >"$T/a2"
check "train a classifier, 2 workers: the validation accuracy of one worker (within 1e-3)" close "$T/a1" "$T/a2" 1e-3

finish
