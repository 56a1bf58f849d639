#!/bin/sh
# bench_portable.sh — what the portable build (make: x86-64 baseline, hot kernels
# dispatched at run time) costs against a build for this CPU (make native), on this
# machine, in the same run.
#
#   sh scripts/bench/bench_portable.sh [--write] [ROUNDS] [STEPS] [SENTENCES]   (default 3, 150, 300)
#
# --write also puts the report into BENCHMARKS.md, replacing the section between the
# lines "<!-- bench_portable.sh: begin -->" and "<!-- bench_portable.sh: end -->"
# (appended if there is none; scripts/bench/bench.py keeps that section when it rewrites the
# file).
#
# Builds and compares, round by round in alternation (each round starting with the next
# build) so that a shared machine's load falls on all of them alike:
#   native    ./nmt-native: -march=native, no dispatch (never installed)
#   portable  ./nmt: what make and make install build
#   avx2      build/avx2/nmt: the portable build without the kernels' AVX-512 versions
#             (-DNMT_CLONES_NO_AVX512), i.e. what a CPU with AVX2 but no AVX-512 runs;
#             only where this CPU has AVX-512 (elsewhere portable already runs it)
# Each round and build:
#   train     configs/mar-reference.json (embed 256, hidden 512, batch 64, train.threads 2)
#             for STEPS updates: target tokens/s, the median of train.log's windows of 25
#             updates without the first (warm-up)
#   greedy    nmt translate of SENTENCES held-out source sentences, one at a time
#   beam 5    the same with --beam 5
# each also in CPU seconds (user + sys of the command: less sensitive than the clock to
# other processes on the machine). The translations use the model of the first
# training run.
#
# Then, where perf works, where the CPU time goes: each build trains 60 updates with
# one thread under `perf record` twice, and the samples (CPU time of nmt alone, which
# other processes' load hardly changes) are split into OpenBLAS's sgemm and the
# dispatched kernels. This adds
#   sse2      build/sse2/nmt: the portable build without dispatch (-DNMT_NO_CLONES),
#             every kernel at the baseline's SSE2: what the dispatch buys.
#
# Prints the CPU model and its vector flags, the compiler, OpenBLAS's kernel and the
# load average, then Markdown tables of the medians over the rounds with each build's
# ratio to native. About 15 minutes with the defaults on two cores.
set -eu
cd "$(dirname "$0")/../.."
WRITE=0
if [ "${1:-}" = --write ]; then WRITE=1; shift; fi
ROUNDS=${1:-3}
STEPS=${2:-150}
SENTENCES=${3:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

avx512=0
grep -qw avx512f /proc/cpuinfo && avx512=1
make -s -j2 nmt native >/dev/null
BUILDS="native portable"
if [ $avx512 = 1 ]; then
    make -s -j2 BUILD=build/avx2 NMT_BIN=build/avx2/nmt CFLAGS="-O3 -g -DNMT_CLONES_NO_AVX512" build/avx2/nmt >/dev/null
    BUILDS="$BUILDS avx2"
fi
perf_ok=0
if command -v perf >/dev/null 2>&1 && perf record -q -o "$tmp/perf.test" true >/dev/null 2>&1; then
    perf_ok=1
    make -s -j2 BUILD=build/sse2 NMT_BIN=build/sse2/nmt CFLAGS="-O3 -g -DNMT_NO_CLONES" build/sse2/nmt >/dev/null
fi
binary() {
    case $1 in native) echo ./nmt-native ;; portable) echo ./nmt ;; avx2) echo build/avx2/nmt ;;
               sse2) echo build/sse2/nmt ;; esac
}

. scripts/bench/bench_lib.sh   # median, cpu_seconds, write_section
now() { date +%s.%N; }
# timed NAME COMMAND... — runs COMMAND; appends its wall and CPU seconds to $tmp/NAME.*
timed() {
    name=$1
    shift
    times >"$tmp/times0"; t0=$(now)
    "$@"
    t1=$(now); times >"$tmp/times1"
    echo "$t1 $t0" | awk '{ print $1 - $2 }' >>"$tmp/$name.wall"
    echo "$(cpu_seconds "$tmp/times1") $(cpu_seconds "$tmp/times0")" | awk '{ print $1 - $2 }' >>"$tmp/$name.cpu"
}

# run BUILD — one round of the three measurements for BUILD.
run() {
    bin=$(binary "$1")
    rm -rf "$tmp/run"
    timed "$1.train" "$bin" train configs/mar-reference.json --quiet --set train.max_steps="$STEPS" \
        --set train.log_every=25 --set train.checkpoint_every=0 --set train.valid_bleu_max=0 \
        --set train.threads=2 --set output.dir="$tmp/run"
    grep -v '"event"' "$tmp/run/train.log" | grep -o '"tokens_per_s":[0-9.e+-]*' | cut -d: -f2 | tail -n +2 |
        median >>"$tmp/$1.tps"
    if [ ! -e "$tmp/model.bin" ]; then
        cp "$tmp/run/model.bin" "$tmp/model.bin"
        cut -f1 "$tmp/run/valid.tsv" | head -n "$SENTENCES" >"$tmp/src.txt"
    fi
    timed "$1.greedy" "$bin" translate "$tmp/model.bin" <"$tmp/src.txt" >"$tmp/out"
    timed "$1.beam" "$bin" translate "$tmp/model.bin" --beam 5 <"$tmp/src.txt" >"$tmp/out"
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
r=0
while [ "$r" -lt "$ROUNDS" ]; do
    # Round r starts with the (r+1)-th build, so that none always runs first: the load of
    # a shared machine drifts over a run.
    for b in $(echo $BUILDS | awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r) % NF + 1) }'); do
        run "$b"
    done
    r=$((r + 1))
done
# The dispatched kernels the reference config runs (GRU, additive attention).
KERNELS="softmax_xent attention_bahdanau_forward attention_bahdanau_backward gru_gates_forward gru_gates_backward"
KERNELS="$KERNELS adam_update grad_norm"
# profile BUILD — appends to $tmp/BUILD.prof one line: all samples, sgemm's, each kernel's
# (its clones, name.arch_x86_64_v4 and so on, counted as the kernel).
profile() {
    rm -rf "$tmp/prun"
    perf record -q -F 499 -o "$tmp/perf.data" -- "$(binary "$1")" train configs/mar-reference.json --quiet \
        --set train.max_steps=60 --set train.threads=1 --set train.checkpoint_every=0 \
        --set train.valid_bleu_max=0 --set output.dir="$tmp/prun" >/dev/null 2>&1
    perf report -i "$tmp/perf.data" --no-children --sort symbol -F sample,symbol --stdio 2>/dev/null |
        awk -v kernels="$KERNELS" '
            BEGIN { n = split(kernels, k, " ") }
            /^#/ || NF < 3 { next }
            { f = $3; sub(/\..*/, "", f); all += $1; if (f ~ /sgemm/) blas += $1; by[f] += $1 }
            END { printf "%d %d", all, blas; for (i = 1; i <= n; i++) printf " %d", by[k[i]]; print "" }' \
        >>"$tmp/$1.prof"
}
PROFILED=
if [ $perf_ok = 1 ]; then
    PROFILED="$BUILDS sse2"
    for r in 1 2; do for b in $PROFILED; do profile "$b"; done; done
fi

load1=$(cut -d' ' -f1-3 /proc/loadavg)
n=$(wc -l <"$tmp/src.txt")
# ratio A B — A / B, three decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# rate NAME N — N items over the median wall seconds of NAME.
rate() { median <"$tmp/$1.wall" | awk -v n="$2" '{ printf "%.1f", n / $1 }'; }
# report — the section for BENCHMARKS.md.
report() {
    echo "## The portable build against -march=native"
    echo
    echo "Written by \`sh scripts/bench/bench_portable.sh $ROUNDS $STEPS $SENTENCES\` on" \
         "$(date -u '+%Y-%m-%d %H:%M') UTC, nmt at commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)." \
         "native: \`make native\` (-march=native, for this CPU only); portable: \`make\`, what" \
         "\`make install\` installs (x86-64 baseline, the hot kernels dispatched at run time: src/kernels/dispatch.h)."
    [ $avx512 = 0 ] || echo "avx2: the portable build without the kernels' AVX-512 versions" \
         "(-DNMT_CLONES_NO_AVX512), i.e. what a CPU with AVX2 and no AVX-512 runs."
    echo
    echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores;" \
         "vector flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' |
                          grep -E '^(sse4_2|avx|avx2|fma|avx512[a-z_]*)$' | tr '\n' ' ' | sed 's/ $//')"
    echo "- compiler: $(${CC:-cc} --version | head -n 1); OpenBLAS kernel:" \
         "$(OPENBLAS_VERBOSE=2 ./nmt --version 2>&1 | sed -n 's/^Core: //p' | head -n 1)"
    echo "- $ROUNDS rounds, the builds alternating (each round starting with the next);" \
         "train: configs/mar-reference.json, $STEPS updates, train.threads 2; translate: $n held-out" \
         "sentences, line by line; load average before $load0, after $load1 (the machine is shared)"
    echo
    echo "| build | train tokens/s | vs native | greedy sentences/s | vs native | beam-5 sentences/s | vs native |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    tps_native=$(median <"$tmp/native.tps")
    gn=$(rate native.greedy "$n"); kn=$(rate native.beam "$n")
    for b in $BUILDS; do
        tps=$(median <"$tmp/$b.tps"); g=$(rate "$b.greedy" "$n"); k=$(rate "$b.beam" "$n")
        printf '| %s | %.0f | %s | %s | %s | %s | %s |\n' "$b" "$tps" "$(ratio "$tps" "$tps_native")" \
            "$g" "$(ratio "$g" "$gn")" "$k" "$(ratio "$k" "$kn")"
    done
    echo
    echo "CPU seconds (user + sys) per command, medians; vs native = native's / this build's" \
         "(above 1: faster):"
    echo
    echo "| build | train | vs native | greedy | vs native | beam 5 | vs native |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for b in $BUILDS; do
        line="| $b"
        for m in train greedy beam; do
            c=$(median <"$tmp/$b.$m.cpu"); cn=$(median <"$tmp/native.$m.cpu")
            line="$line | $(printf '%.2f' "$c") | $(ratio "$cn" "$c")"
        done
        echo "$line |"
    done
    if [ -n "$PROFILED" ]; then
        echo
        echo "Where the CPU time goes (perf record at 499 Hz, configs/mar-reference.json for 60 updates" \
             "with train.threads 1, samples averaged over 2 runs; sgemm: OpenBLAS's; kernels: the" \
             "dispatched ones; vs native = this build's samples / native's, above 1: slower):"
        echo
        echo "| build | all | vs native | sgemm | kernels | vs native | softmax_xent | attention fwd | attention bwd |" \
             "gates fwd | gates bwd | adam_update | grad_norm |"
        echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        # mean over the runs of each column
        mean_cols() { awk '{ for (i = 1; i <= NF; i++) s[i] += $i } END { for (i = 1; i <= NF; i++) printf "%d ", s[i] / NR }' "$1"; }
        native_cols=$(mean_cols "$tmp/native.prof")
        for b in $PROFILED; do
            mean_cols "$tmp/$b.prof" | awk -v b="$b" -v nat="$native_cols" '{
                split(nat, n, " "); k = 0; kn = 0
                for (i = 3; i <= NF; i++) { k += $i; kn += n[i] }
                printf "| %s | %d | %.3f | %d | %d | %.3f |", b, $1, $1 / n[1], $2, k, k / kn
                for (i = 3; i <= NF; i++) printf " %d |", $i
                print ""
            }'
        done
    fi
    echo
    echo "By round (train tokens/s; greedy and beam-5 wall seconds):"
    echo
    row() { awk -v f="$2" '{ printf "%s" f, sep, $1; sep = " " }' "$1"; }
    for b in $BUILDS; do
        echo "- $b: $(row "$tmp/$b.tps" %.0f); $(row "$tmp/$b.greedy.wall" %.2f); $(row "$tmp/$b.beam.wall" %.2f)"
    done
}
report >"$tmp/report.md"
cat "$tmp/report.md"
if [ $WRITE = 1 ]; then
    write_section bench_portable.sh "$tmp/report.md"
    echo "wrote BENCHMARKS.md"
fi
