#!/bin/sh
# bench_workers_ab.sh — two nmt binaries' training speed on workers, side by side (issue
# 30): target tokens/s of `nmt train` with train.workers N (one OpenBLAS thread each),
# the same job as make bench-scaling's (data/mar.txt, batch 64; the GRU with embed 256
# and hidden 512, and configs/transformer.json).
#
#   sh scripts/bench/bench_workers_ab.sh OLD_NMT NEW_NMT [ROUNDS] [WORKERS] [STEPS]
#
# WORKERS: a comma-separated list (default 1,2 and the machine's cores); STEPS updates a
# run (default 40). Each round runs every setting in turn, the two binaries one after
# the other (their order alternating round by round); a figure is the median of
# train.log's windows of 10 updates after the first. Prints the CPU, one line a run
# (round, model, binary, workers, tokens/s), then each setting's median over the rounds
# and NEW over OLD (the median of the rounds' ratios). Writes only a temporary directory.
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: sh scripts/bench/bench_workers_ab.sh OLD_NMT NEW_NMT [ROUNDS] [WORKERS] [STEPS]" >&2; exit 2; }
OLD=$1 NEW=$2 ROUNDS=${3:-3} WORKERS=${4:-1,2,$(nproc)} STEPS=${5:-40}
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores;" \
     "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds, $STEPS updates a run"
run() {  # model binary workers -> tokens/s
    if [ "$1" = gru ]; then set -- configs/default.json "$2" "$3" --set model.embed=256 --set model.hidden=512
    else set -- configs/transformer.json "$2" "$3"; fi
    cfg=$1 bin=$2 w=$3
    shift 3
    rm -rf "$tmp/run"
    "$bin" train "$cfg" "$@" --set train.max_steps="$STEPS" --set train.batch_size=64 --set train.log_every=10 \
        --set train.checkpoint_every=0 --set train.valid_bleu_max=0 --set output.dir="$tmp/run" \
        --set train.workers="$w" --set train.threads=1 --quiet 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
    "$PYTHON" -c 'import json, statistics, sys
w = [json.loads(l)["tokens_per_s"] for l in open(sys.argv[1]) if "tokens_per_s" in l]
print(round(statistics.median(w[1:] if len(w) > 1 else w)))' "$tmp/run/train.log"
}
r=1
while [ $r -le "$ROUNDS" ]; do
    pair="old new"
    [ $((r % 2)) = 0 ] && pair="new old"
    for model in gru transformer; do
        for w in $(echo "$WORKERS" | tr ',' ' '); do
            for b in $pair; do
                bin=$OLD
                [ $b = new ] && bin=$NEW
                tps=$(run $model "$bin" "$w") || exit 1
                echo "$r $model $b $w $tps" | tee -a "$tmp/rows"
            done
        done
    done
    r=$((r + 1))
done
"$PYTHON" - "$tmp/rows" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, model, b, w, tps = line.split()
    runs[(model, int(w))].setdefault(b, {})[int(r)] = float(tps)
print("| model | workers | old tokens/s | new tokens/s | new / old |")
print("|---|---:|---:|---:|---:|")
for (model, w), by in sorted(runs.items()):
    ratio = statistics.median(by["new"][r] / by["old"][r] for r in by["old"])
    print(f"| {model} | {w} | {statistics.median(by['old'].values()):,.0f} | "
          f"{statistics.median(by['new'].values()):,.0f} | {ratio:.2f}x |")
PY
