#!/bin/sh
# bench_classify_int8.sh — a classifier in int8 against float32 (issue 31): the speed of
# nmt classify (CPU seconds) and its peak RSS on the float file and on its nmt quantize
# file, and nmt eval's accuracy with each on held-out lines.
#
#   sh scripts/bench/bench_classify_int8.sh MODEL.bin TEST.tsv [ROUNDS] [COPIES]
#
# Speed: TEST.tsv's text column, COPIES times over (default 20), classified on one
# thread with --batch 64 and --batch 1 by the float file (float32) and the int8 file
# (int8file), ROUNDS rounds (default 3) alternated (A B, B A, ...); medians of user +
# system CPU seconds (GNU time), the largest peak RSS. Quality: nmt eval MODEL TEST.tsv
# and the same on the int8 file. Prints the CPU, then Markdown tables; writes nothing
# else (temporary files only).
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: sh scripts/bench/bench_classify_int8.sh MODEL.bin TEST.tsv [ROUNDS] [COPIES]" >&2; exit 2; }
MODEL=$1 TEST=$2 ROUNDS=${3:-3} COPIES=${4:-20}
NMT=${NMT:-./nmt}
command -v /usr/bin/time >/dev/null || { echo "bench_classify_int8.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
while [ $i -lt "$COPIES" ]; do cut -f1 "$TEST"; i=$((i + 1)); done >"$tmp/text.txt"
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores;" \
     "vector flags: $(grep -o -w -E 'avx2|fma|avx512f|avx512_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); $(wc -l <"$tmp/text.txt") lines" \
     "($COPIES copies of $TEST's text), $ROUNDS rounds"
"$NMT" quantize "$MODEL" -o "$tmp/q8.bin" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
echo "model: $("$NMT" info "$MODEL" | sed -n 's/^model: //p'); file $(wc -c <"$MODEL") bytes," \
     "int8 file $(wc -c <"$tmp/q8.bin") bytes"
: >"$tmp/rows"
r=1
while [ $r -le "$ROUNDS" ]; do
    order="float32 int8file"
    [ $((r % 2)) = 0 ] && order="int8file float32"
    for b in 64 1; do
        for s in $order; do
            m=$MODEL
            [ $s = int8file ] && m=$tmp/q8.bin
            /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$NMT" classify "$m" "$tmp/text.txt" --threads 1 --batch $b \
                >"$tmp/out.$s.$b" 2>/dev/null
            echo "$s $b $(cat "$tmp/time")" >>"$tmp/rows"
        done
    done
    r=$((r + 1))
done
echo
echo "| batch | system | CPU s (median) | float32 / system | peak RSS MiB | labels as float32's |"
echo "|---:|---|---:|---:|---:|---:|"
for b in 64 1; do
    f=$(awk -v b=$b '$1 == "float32" && $2 == b { print $3 + $4 }' "$tmp/rows" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    for s in float32 int8file; do
        med=$(awk -v s=$s -v b=$b '$1 == s && $2 == b { print $3 + $4 }' "$tmp/rows" | sort -g |
              awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
        rss=$(awk -v s=$s -v b=$b '$1 == s && $2 == b && $5 > m { m = $5 } END { printf "%.0f", m / 1024 }' "$tmp/rows")
        same=$(paste "$tmp/out.float32.$b" "$tmp/out.$s.$b" | awk -F'\t' '$1 == $2 { n++ } END { printf "%d of %d", n, NR }')
        echo "| $b | $s | $med | $(awk -v a="$f" -v b="$med" 'BEGIN { printf "%.2fx", a / b }') | $rss | $same |"
    done
done
echo
echo "| model | accuracy | macro F1 |"
echo "|---|---:|---:|"
for s in float32 int8file; do
    m=$MODEL
    [ $s = int8file ] && m=$tmp/q8.bin
    "$NMT" eval "$m" "$TEST" --json >"$tmp/eval" 2>/dev/null
    acc=$(sed -n 's/.*"accuracy":\([-0-9.eE+]*\).*/\1/p' "$tmp/eval") f1=$(sed -n 's/.*"macro_f1":\([-0-9.eE+]*\).*/\1/p' "$tmp/eval")
    echo "| $s | $acc | $f1 |"
done
