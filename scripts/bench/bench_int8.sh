#!/bin/sh
# bench_int8.sh — int8 decoding against float32 on one model (make bench-int8; issue 31):
# speed as CPU seconds of nmt translate, memory as its peak RSS, the size of the model
# file with int8 weights (nmt quantize), and quality as nmt eval's BLEU on held-out pairs.
#
#   sh scripts/bench/bench_int8.sh MODEL.bin TEST.tsv [ROUNDS] [LINES] [OLD_NMT]
#   SHORTLIST=FILE sh scripts/bench/bench_int8.sh ...   also with translate --shortlist FILE
#
# Speed: the first LINES (default 500) source lines of TEST.tsv translated on one thread,
# greedy and beam 5, line by line (--batch 1) and --batch 64, by --compute-type float32
# and int8 on MODEL, by the int8 file (int8file: nmt quantize MODEL, decoded as it is)
# (and OLD_NMT, another nmt binary, in float); ROUNDS rounds (default 3), the
# systems alternated in each (A B C, B C A, ...). The figure is user + system CPU
# seconds (GNU time), steadier than wall time on a shared machine; the table gives the
# medians, their ratio (float32 / int8: > 1 means int8 is faster) and the peak RSS.
# Quality: nmt eval MODEL TEST.tsv, greedy and beam 5, in both compute types, and nmt
# eval of the int8 file.
# Prints the CPU, then Markdown tables; writes nothing else (temporary files only).
set -eu
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: sh scripts/bench/bench_int8.sh MODEL.bin TEST.tsv [ROUNDS] [LINES] [OLD_NMT]" >&2; exit 2; }
MODEL=$1 TEST=$2 ROUNDS=${3:-3} LINES=${4:-500} OLD=${5:-}
NMT=${NMT:-./nmt}
command -v /usr/bin/time >/dev/null || { echo "bench_int8.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cut -f1 "$TEST" | head -n "$LINES" >"$tmp/src.txt"
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores;" \
     "vector flags: $(grep -o -w -E 'avx2|fma|avx512f|avx512_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg); $LINES lines of $TEST, $ROUNDS rounds"
"$NMT" quantize "$MODEL" -o "$tmp/q8.bin" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
float_bytes=$(wc -c <"$MODEL") int8_bytes=$(wc -c <"$tmp/q8.bin")
echo "model file: $float_bytes bytes; with int8 weights (nmt quantize): $int8_bytes bytes," \
     "$(awk -v a="$int8_bytes" -v b="$float_bytes" 'BEGIN { printf "%.3f", a / b }') of it"
systems="float32 int8 int8file"
SHORTLIST=${SHORTLIST:-}
[ -n "$SHORTLIST" ] && systems="$systems float32-sl int8file-sl" && echo "shortlist: $SHORTLIST ($(wc -l <"$SHORTLIST") lines)"
[ -n "$OLD" ] && systems="old $systems"
set -- $systems
n_sys=$#
r=1
while [ "$r" -le "$ROUNDS" ]; do
    k=$(( (r - 1) % n_sys ))
    rot=$(echo "$systems" | awk -v k=$k '{for (i = 1; i <= NF; i++) printf "%s ", $(((i - 1 + k) % NF) + 1)}')
    for cfg in "1 1" "1 64" "5 1" "5 64"; do
        set -- $cfg
        beam=$1 batch=$2
        for s in $rot; do
            case $s in
            old) set -- "$OLD" translate "$MODEL" "$tmp/src.txt" ;;
            int8file) set -- "$NMT" translate "$tmp/q8.bin" "$tmp/src.txt" ;;
            float32-sl) set -- "$NMT" translate "$MODEL" "$tmp/src.txt" --shortlist "$SHORTLIST" ;;
            int8file-sl) set -- "$NMT" translate "$tmp/q8.bin" "$tmp/src.txt" --shortlist "$SHORTLIST" ;;
            *) set -- "$NMT" translate "$MODEL" "$tmp/src.txt" --compute-type "$s" ;;
            esac
            nice -n 10 /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" --threads 1 --beam "$beam" --batch "$batch" \
                >"$tmp/out.$s" 2>"$tmp/err" || { echo "bench_int8.sh: $s failed:" >&2; cat "$tmp/err" >&2; exit 1; }
            tail -n 1 "$tmp/time" | awk -v s="$s" -v b="$beam" -v n="$batch" '{print s, b, n, $1 + $2, $3}' >>"$tmp/rows"
        done
    done
    r=$((r + 1))
done
echo
echo "| search | batch | system | CPU s (median) | float32 / system | peak RSS MiB |"
echo "|---|---:|---|---:|---:|---:|"
for cfg in "1 1" "1 64" "5 1" "5 64"; do
    set -- $cfg
    awk -v b="$1" -v n="$2" -v systems="$systems" '
        $2 == b && $3 == n { t[$1] = t[$1] " " $4; if ($5 > rss[$1]) rss[$1] = $5 }
        function median(list,   a, m, i, j, x) {
            m = split(list, a, " ")
            for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
            return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
        }
        END {
            ns = split(systems, sy, " ")
            ref = median(t["float32"])
            for (i = 1; i <= ns; i++) {
                s = sy[i]; m = median(t[s])
                printf "| %s | %d | %s | %.2f | %.2fx | %.0f |\n", b == 1 ? "greedy" : "beam " b, n, s, m, ref / m, rss[s] / 1024
            }
        }' "$tmp/rows"
done
echo
echo "| search | compute type | BLEU | chrF2 |"
echo "|---|---|---:|---:|"
for beam in 1 5; do
    for s in $systems; do
        case $s in
        old) continue ;;
        int8file) set -- "$tmp/q8.bin" ;;
        float32-sl) set -- "$MODEL" --shortlist "$SHORTLIST" ;;
        int8file-sl) set -- "$tmp/q8.bin" --shortlist "$SHORTLIST" ;;
        *) set -- "$MODEL" --compute-type "$s" ;;
        esac
        nice -n 10 "$NMT" eval "$@" "$TEST" --threads 1 --beam "$beam" >"$tmp/eval" 2>&1 ||
            { cat "$tmp/eval" >&2; exit 1; }
        awk -v b="$beam" -v s="$s" '/^BLEU = / {bleu = $3} /^chrF2 = / {chrf = $3}
            END {printf "| %s | %s | %s | %s |\n", b == 1 ? "greedy" : "beam " b, s, bleu, chrf}' "$tmp/eval"
    done
done
