#!/bin/sh
# bench_batching.sh — what shuffled batches (train.bucket false, the default) cost
# against bucketed ones (train.bucket true) now that batches are packed, on this machine,
# in the same run; optionally also an older nmt binary (one without packing) in both
# modes, for the cost packing removed.
#
#   sh scripts/bench/bench_batching.sh [--write] [ROUNDS] [STEPS] [OLD_NMT]   (default 3, 120)
#
# --write also puts the report into BENCHMARKS.md, replacing the section between the
# lines "<!-- bench_batching.sh: begin -->" and "<!-- bench_batching.sh: end -->"
# (appended if there is none; scripts/bench/bench.py keeps that section when it rewrites the
# file).
#
# Each round and variant trains configs/mar-reference.json (data/mar.txt; embed 256,
# hidden 512, batch 64) for STEPS updates with one thread, no validation, and records
# the CPU seconds of the command (user + sys: what the work costs, less sensitive than
# the clock to other processes on a shared machine). Rounds alternate the order of the
# variants, so that a drifting load falls on all of them alike. Prints the CPU model, its
# vector flags, OpenBLAS's kernel and the load average, then a Markdown table of the
# medians with each variant's ratio to bucketed batches of ./nmt. About 4 minutes with
# the defaults (8 with OLD_NMT) on two cores.
set -eu
cd "$(dirname "$0")/../.."
WRITE=0
if [ "${1:-}" = --write ]; then WRITE=1; shift; fi
ROUNDS=${1:-3}
STEPS=${2:-120}
OLD=${3:-}
if [ -n "$OLD" ] && [ ! -x "$OLD" ]; then
    echo "bench_batching.sh: $OLD: not an executable nmt" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -j2 nmt >/dev/null

VARIANTS="shuffled bucketed"
[ -n "$OLD" ] && VARIANTS="$VARIANTS old_shuffled old_bucketed"
binary() { case $1 in old_*) echo "$OLD" ;; *) echo ./nmt ;; esac; }
bucket() { case $1 in *bucketed) echo true ;; *) echo false ;; esac; }

. scripts/bench/bench_lib.sh   # median, cpu_seconds, write_section

# run VARIANT — one training of STEPS updates; appends its CPU seconds to $tmp/VARIANT.cpu.
run() {
    rm -rf "$tmp/run"
    times >"$tmp/times0"
    "$(binary "$1")" train configs/mar-reference.json --set train.max_steps="$STEPS" \
        --set train.threads=1 --set train.bucket="$(bucket "$1")" --set train.checkpoint_every=0 \
        --set data.valid_fraction=0 --set output.dir="$tmp/run" 2>"$tmp/stderr" ||
        { cat "$tmp/stderr" >&2; exit 1; }
    times >"$tmp/times1"
    echo "$(cpu_seconds "$tmp/times1") $(cpu_seconds "$tmp/times0")" | awk '{ print $1 - $2 }' >>"$tmp/$1.cpu"
    [ -s "$tmp/kernel" ] || sed -n 's/.*OpenBLAS kernel \([^,]*\),.*/\1/p' "$tmp/stderr" | head -n 1 >"$tmp/kernel"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
r=0
while [ "$r" -lt "$ROUNDS" ]; do
    for v in $(echo $VARIANTS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r) % NF + 1) }'); do
        run "$v"
    done
    r=$((r + 1))
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|fma|avx512f' | tr '\n' ' ' | sed 's/ $//')
base=$(median <"$tmp/bucketed.cpu")
describe() {
    case $1 in
    shuffled) echo "./nmt, \`train.bucket\` false (the default): random batches, packed" ;;
    bucketed) echo "./nmt, \`train.bucket\` true: sorted by length within windows of 50 batches, packed" ;;
    old_shuffled) echo "$OLD, \`train.bucket\` false" ;;
    old_bucketed) echo "$OLD, \`train.bucket\` true" ;;
    esac
}
report() {
    echo "Measured by \`sh scripts/bench/bench_batching.sh $ROUNDS $STEPS${OLD:+ $OLD}\` on $(date -u +%Y-%m-%d):" \
        "$cpu ($flags), $(nproc) cores, OpenBLAS kernel $(cat "$tmp/kernel"), load average $load0 before" \
        "and $load1 after. CPU seconds (user + sys) of $STEPS updates of configs/mar-reference.json" \
        "with one thread, median of $ROUNDS rounds (each round's figures in brackets):"
    echo
    echo "| batches | CPU seconds | against bucketed |"
    echo "|---|---:|---:|"
    for v in $VARIANTS; do
        m=$(median <"$tmp/$v.cpu")
        all=$(awk '{ printf "%s%.1f", (NR > 1 ? ", " : ""), $1 }' "$tmp/$v.cpu")
        printf '| %s | %.1f (%s) | %.2f |\n' "$(describe "$v")" "$m" "$all" "$(echo "$m $base" | awk '{ print $1 / $2 }')"
    done
}
report | tee "$tmp/report"

if [ $WRITE = 1 ]; then
    write_section bench_batching.sh "$tmp/report"
    echo "wrote BENCHMARKS.md"
fi
