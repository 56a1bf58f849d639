#!/bin/sh
# bench_matmul.sh — the products of a decoder step on this machine (make bench-matmul):
# OpenBLAS's sgemm, nmt's matmul_bias, the packed float product and the int8 product,
# each instruction set the CPU runs, on one thread (scripts/bench/bench_matmul.c says
# what is measured and how). Prints the CPU model, its vector flags, the load average,
# then the driver's Markdown table.
#
#   sh scripts/bench/bench_matmul.sh [DRIVER] [ROUNDS] [MS_PER_RUN]
#
# DRIVER defaults to build/bench_matmul (make build/bench_matmul builds it). Nothing is
# written: paste the table where it is wanted, with the CPU line.
set -eu
cd "$(dirname "$0")/../.."
DRIVER=${1:-build/bench_matmul}
[ -x "$DRIVER" ] || { echo "bench_matmul.sh: $DRIVER: not built (make $DRIVER)" >&2; exit 2; }
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores"
echo "vector flags: $(grep -o -w -E 'avx2|fma|avx512f|avx512bw|avx512_vnni|avx_vnni' /proc/cpuinfo | sort -u | tr '\n' ' ')"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
nice -n 10 "$DRIVER" "${2:-5}" "${3:-40}"
