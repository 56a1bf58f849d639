#!/bin/sh
# test_parallel.sh — nmt on several threads: `translate`, `eval` and `classify` with
# --workers N write exactly what one worker writes (cmp on 3,000 lines: recurrent and
# Transformer, greedy and beam, ensembles, n-best lists, attention JSON, alignments,
# heatmaps), and a usage error says when --threads and --workers ask for two things.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_parallel.sh
# Trains its own small models on data/mar.txt and data/sentiment.tsv (a few seconds).
# Nothing here depends on a clock.

NAME=test_parallel
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

# ---------------------------------------------------------------- eval

awk 'NR % 13 == 0' "$DATA" | head -n 800 >"$T/test.tsv"
for m in gru tr; do
    same_as_one "eval $m" eval "$T/$m/model.bin" "$T/test.tsv" --json
    same_as_one "eval $m, beam 3" eval "$T/$m/model.bin" "$T/test.tsv" --beam 3
done

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

finish
