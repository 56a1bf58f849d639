#!/bin/sh
# bench_mpi.sh — training throughput of data-parallel ranks against threads, on one host.
#
#   sh scripts/bench/bench_mpi.sh [ROUNDS] [STEPS] [BATCH]      (default 3 rounds, 100 steps, 64)
#
# Trains configs/default.json (data/mar.txt, embed 256, hidden 256) for STEPS updates of
# a global batch of BATCH pairs in three setups, alternated round by round so that a
# shared machine's load falls on all of them alike:
#   1x2   ./nmt, 1 process with 2 OpenBLAS threads      (train.threads=2)
#   2x1   mpirun -np 2 ./nmt-mpi, 2 ranks of 1 thread    (train.threads=1)
#   1x1   ./nmt, 1 process with 1 thread                 (train.threads=1)
# Each run's figure is the median over its train.log windows of 20 updates, the first
# (warm-up) left out: target tokens/s, and for 2x1 the seconds per step spent in the
# gradient sum (allreduce_s: the transfer and any wait for the slower rank). Prints a
# Markdown table of the medians over the rounds, and the bytes each step sums.
# Needs ./nmt and ./nmt-mpi (make nmt mpi) and mpirun.
#
# Also writes the raw figures (every round's, with the machine, date, commit and this
# command) to $RAW, default docs/bench/mpi-batchBATCH.json, which docs/distributed.md's
# table is rendered from: after measuring, `sh scripts/docs/regenerate.sh mpi_throughput`.
set -eu
ROUNDS=${1:-3}
STEPS=${2:-100}
BATCH=${3:-64}
for b in ./nmt ./nmt-mpi; do [ -x "$b" ] || { echo "bench_mpi.sh: $b not built (make nmt mpi)" >&2; exit 1; }; done
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
RAW=${RAW:-docs/bench/mpi-batch$BATCH.json}
load_before=$(cut -d' ' -f1 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# window_field KEY — KEY's value on each step line of the last run's log, warm-up dropped.
window_field() { grep -v '"event"' "$tmp/run/train.log" | grep -o "\"$1\":[0-9.e-]*" | cut -d: -f2 | tail -n +2; }

# run SETUP — trains once; appends tokens/s (and allreduce seconds) to $tmp/SETUP.*
run() {
    rm -rf "$tmp/run"
    sets="--set train.max_steps=$STEPS --set train.batch_size=$BATCH --set train.log_every=20"
    sets="$sets --set train.checkpoint_every=0 --set train.valid_bleu_max=0 --set output.dir=$tmp/run"
    sets="$sets --set train.workers=1"   # OpenBLAS's threads, not configs/default.json's 2 workers
    case $1 in
    1x2) ./nmt train configs/default.json $sets --set train.threads=2 2>"$tmp/err" ;;
    1x1) ./nmt train configs/default.json --quiet $sets --set train.threads=1 ;;
    2x1) mpirun --oversubscribe -np 2 ./nmt-mpi train configs/default.json --quiet $sets --set train.threads=1 ;;
    esac
    [ -n "${kernel:-}" ] || kernel=$(sed -n 's/.*OpenBLAS kernel \([^,]*\),.*/\1/p' "$tmp/err" | head -n 1)
    window_field tokens_per_s | median >>"$tmp/$1.tps"
    [ "$1" != 2x1 ] || window_field allreduce_s | median >>"$tmp/$1.ar"
    params=$(sed -n 's/.*"parameters":\([0-9]*\).*/\1/p' "$tmp/run/train.log")
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
    for setup in 1x2 2x1 1x1; do run $setup; done
    r=$((r + 1))
done

bytes=$(( (params + 3) * 4 ))
tps1x1=$(median <"$tmp/1x1.tps")
echo "global batch $BATCH, $STEPS steps, $ROUNDS rounds; $params parameters: $bytes bytes summed per step"
echo "(a ring allreduce sends 2(N-1)/N of that per rank: $bytes bytes per rank per step at N = 2)"
echo
echo "| ranks x threads | target tokens/s | vs 1 x 1 | seconds/step in MPI_Allreduce |"
echo "|---|---:|---:|---:|"
for setup in 1x2 2x1 1x1; do
    tps=$(median <"$tmp/$setup.tps")
    ar=-
    [ "$setup" != 2x1 ] || ar=$(median <"$tmp/$setup.ar")
    printf '| %s | %.0f | %.2f | %s |\n' "$(echo $setup | sed 's/x/ x /')" "$tps" \
        "$(awk -v a="$tps" -v b="$tps1x1" 'BEGIN { print a / b }')" "$ar"
done
echo
for setup in 1x2 2x1 1x1; do echo "$setup tokens/s by round: $(tr '\n' ' ' <"$tmp/$setup.tps")"; done
echo "2x1 allreduce_s by round: $(tr '\n' ' ' <"$tmp/2x1.ar")"

# The raw figures, as JSON.
list() { tr '\n' ' ' <"$1" | sed -e 's/ *$//' -e 's/ /, /g'; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mpi=$(mpirun --version 2>/dev/null | head -n 1 | sed 's/^mpirun (\(.*\)) /\1 /')
cat >"$RAW" <<JSON
{
 "script": "sh scripts/bench/bench_mpi.sh $ROUNDS $STEPS $BATCH",
 "provenance": "measured",
 "date": "$started",
 "commit": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)",
 "src_modified": $(if [ -n "$(git status --porcelain src 2>/dev/null)" ]; then echo true; else echo false; fi),
 "machine": {"cpu": "$cpu", "cores": $(nproc), "openblas_kernel": "OpenBLAS ${kernel:-unknown}",
             "mpi": "$mpi", "load_before": $load_before, "load_after": $(cut -d' ' -f1 /proc/loadavg)},
 "settings": {"rounds": $ROUNDS, "steps": $STEPS, "batch": $BATCH, "config": "configs/default.json"},
 "parameters": $params,
 "tokens_per_s": {"1x2": [$(list "$tmp/1x2.tps")], "2x1": [$(list "$tmp/2x1.tps")], "1x1": [$(list "$tmp/1x1.tps")]},
 "allreduce_s": [$(list "$tmp/2x1.ar")]
}
JSON
echo "wrote $RAW"
