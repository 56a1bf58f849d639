#!/bin/sh
# bench_bpe_long_word.sh — BPE on long words, this nmt against an older one (issue 19):
# not a test (tests count steps, never time: tests/test_subword.c test_long_words).
#
#   sh scripts/bench/bench_bpe_long_word.sh [OLD_COMMIT [CORPUS]]
#
# OLD_COMMIT (default 9c1acf3, the last before learning was made linear) is built from
# `git archive` in a temporary directory, beside this tree's ./nmt (run make first) and
# a build of this tree with BPE_MAX_WORD_BYTES lifted, so that the long word is learned
# from rather than left out and the times are the algorithm's. Then, on one word of
# 40,000 letters (a..j, awk's rand seeded) and 10 lines of data/mar.txt's English
# column:
#   - nmt bpe learn --merges 8000: old, new (word left out), new without the limit;
#     the codes of the old and the unlimited new must be the same;
#   - nmt bpe apply of those codes to the word: old and new (best of 5), the same pieces;
# and on a normal corpus (CORPUS, default data/mar.txt's two columns, one per line):
#   - nmt bpe learn --merges 8000 and nmt bpe apply of its codes, old and new taking
#     turns, the best of 5 runs each, and the same codes and pieces.
# Prints the CPU model and each time (wall clock) with the ratio old / new (above 1:
# the new is faster). Takes two to three minutes, most of it the old learner on the
# long word.
set -eu
OLD=${1:-9c1acf3}
CORPUS=${2:-}
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
[ -x ./nmt ] || { echo "bench_bpe_long_word: run make first" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "building $OLD and an unlimited build of this tree in $T ..."
mkdir "$T/old"
git archive "$OLD" | tar -x -C "$T/old"
make -s -C "$T/old" -j2 >"$T/old.log" 2>&1 || { cat "$T/old.log"; exit 1; }
make -s -j2 BUILD="$T/build-nocap" NMT_BIN="$T/nmt-nocap" CFLAGS="-O3 -g -DBPE_MAX_WORD_BYTES=2000000000" \
    >"$T/nocap.log" 2>&1 || { cat "$T/nocap.log"; exit 1; }
OLD_NMT=$T/old/nmt NEW_NMT=$ROOT/nmt NOCAP_NMT=$T/nmt-nocap

# seconds CMD...: the wall-clock seconds of one run of CMD (output to $T/run.out).
seconds() {
    s=$(date +%s.%N)
    "$@" >"$T/run.out" 2>"$T/run.err"
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.3f", $2 - $1 }'
}
# race N ARGS...: old and new nmt ARGS, N times each, taking turns (so that a change in
# the machine's load falls on both); sets t_old and t_new to the least seconds of each,
# and leaves their last outputs in $T/old.out and $T/new.out.
race() {
    n=$1
    shift
    t_old=
    t_new=
    for i in $(seq "$n"); do
        t=$(seconds "$OLD_NMT" "$@")
        cp "$T/run.out" "$T/old.out"
        t_old=$(echo "$t ${t_old:-$t}" | awk '{ print ($1 < $2 ? $1 : $2) }')
        t=$(seconds "$NEW_NMT" "$@")
        cp "$T/run.out" "$T/new.out"
        t_new=$(echo "$t ${t_new:-$t}" | awk '{ print ($1 < $2 ? $1 : $2) }')
    done
}
# best N CMD...: the least of N runs' seconds.
best() {
    n=$1
    shift
    b=
    for i in $(seq "$n"); do
        t=$(seconds "$@")
        b=$(echo "$t ${b:-$t}" | awk '{ print ($1 < $2 ? $1 : $2) }')
    done
    echo "$b"
}
ratio() { echo "$1 $2" | awk '{ printf "%.1fx", ($2 > 0 ? $1 / $2 : 0) }'; }
same() { if cmp -s "$1" "$2"; then echo "identical"; else echo "DIFFERENT"; fi; }

awk 'BEGIN { srand(19); for (i = 0; i < 40000; i++) printf "%c", 97 + int(rand() * 10); print "" }' >"$T/word.txt"
cut -f1 data/mar.txt | head -n 10 >"$T/long.txt"
cat "$T/word.txt" >>"$T/long.txt"

echo
echo "one word of 40,000 letters and 10 lines: nmt bpe learn --merges 8000"
t_old=$(seconds "$OLD_NMT" bpe learn --merges 8000 "$T/long.txt")
cp "$T/run.out" "$T/old.codes"
t_new=$(best 3 "$NEW_NMT" bpe learn --merges 8000 "$T/long.txt")
t_nocap=$(best 3 "$NOCAP_NMT" bpe learn --merges 8000 "$T/long.txt")
cp "$T/run.out" "$T/nocap.codes"
echo "  old $OLD:                  ${t_old} s ($(($(wc -l <"$T/old.codes") - 1)) merges)"
echo "  new (the word left out):      ${t_new} s   $(ratio "$t_old" "$t_new")"
echo "  new, BPE_MAX_WORD_BYTES lifted: ${t_nocap} s   $(ratio "$t_old" "$t_nocap"), codes $(same "$T/old.codes" "$T/nocap.codes")"

echo "nmt bpe apply of those codes to the word, best of 5"
race 5 bpe apply "$T/old.codes" "$T/word.txt"
echo "  old ${t_old} s, new ${t_new} s   $(ratio "$t_old" "$t_new"), pieces $(same "$T/old.out" "$T/new.out")"

if [ -n "$CORPUS" ]; then
    cp "$CORPUS" "$T/corpus.txt"
else
    cut -f1,2 data/mar.txt | tr '\t' '\n' >"$T/corpus.txt"
    CORPUS="data/mar.txt, both columns"
fi
echo
echo "a normal corpus ($CORPUS: $(wc -l <"$T/corpus.txt") lines), best of 5"
race 5 bpe learn --merges 8000 "$T/corpus.txt"
cp "$T/old.out" "$T/corpus.codes"
echo "  learn: old ${t_old} s, new ${t_new} s   $(ratio "$t_old" "$t_new"), codes $(same "$T/old.out" "$T/new.out")"
race 5 bpe apply "$T/corpus.codes" "$T/corpus.txt"
echo "  apply: old ${t_old} s, new ${t_new} s   $(ratio "$t_old" "$t_new"), pieces $(same "$T/old.out" "$T/new.out")"
