#!/bin/sh
# make bench: training throughput (target tokens/s) and greedy translation speed of
# ./nmt on the English-Marathi corpus with the model size of issue #3 (embed 256,
# hidden 512, max_len 20, batch 64, 2 threads). Uses ../shared/data/mar.txt when
# present, else data/mar.txt. Prints medians of RUNS runs.
set -e
RUNS=${RUNS:-3}
STEPS=${STEPS:-100}
DATA=../shared/data/mar.txt
[ -f "$DATA" ] || DATA=data/mar.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

cat > "$tmp/bench.json" <<JSON
{"data": {"train": "$DATA", "max_len": 20, "valid_fraction": 0.06},
 "model": {"embed": 256, "hidden": 512},
 "train": {"batch_size": 64, "epochs": 1, "max_steps": $STEPS, "log_every": 20,
           "threads": 2, "checkpoint_every": 0},
 "output": {"dir": "$tmp/run"}}
JSON

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores"
echo "data: $DATA, $STEPS training steps per run, $RUNS runs"
: > "$tmp/train"
: > "$tmp/decode"
for r in $(seq "$RUNS"); do
    ./nmt train "$tmp/bench.json" --quiet
    # tokens/s of the logged windows after the first (warm-up) one
    sed -n 's/.*"tokens_per_s":\([0-9.]*\).*/\1/p' "$tmp/run/train.log" | tail -n +2 | median >> "$tmp/train"
    cut -f1 "$tmp/run/valid.tsv" | head -2000 > "$tmp/src.txt"
    n=$(wc -l < "$tmp/src.txt")
    start=$(date +%s.%N)
    ./nmt translate "$tmp/run/model.bin" < "$tmp/src.txt" > /dev/null
    end=$(date +%s.%N)
    echo "$n $start $end" | awk '{printf "%.1f\n", $1 / ($3 - $2)}' >> "$tmp/decode"
done
echo "training, target tokens/s (median): $(median < "$tmp/train")   runs: $(tr '\n' ' ' < "$tmp/train")"
echo "greedy translate, sentences/s (median): $(median < "$tmp/decode")   runs: $(tr '\n' ' ' < "$tmp/decode")"
