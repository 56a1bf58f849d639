#!/bin/sh
# test_translate_order.sh — nmt translate --batch N: the lines read ahead are sorted by
# length into batches, and the answers come back in input order (src/decode/translate.h).
# For a recurrent model and a Transformer: the same words as one line at a time, with
# lines of mixed lengths, empty and unreadable ones, over several look-ahead windows and
# two input files; the n-best line numbers in order; a writer that waits for each answer
# gets it (the look-ahead does not wait for lines that have not come); a failed write
# stops at the first line; the default without --batch on a file is --batch 64;
# --compute-type float32 changes nothing and int8 nothing with the batch;
# with --workers 2 (the window's batches translated at once, issue 30) the same bytes as
# one worker, int8 included, and the pipe and write-error cases behave the same; --prefix
# and --sample (issue 32) go with their lines through the sort.
#
# Run from the repository root after `make`: sh tests/test_translate_order.sh. About 10 s
# on 2 cores (two tiny models are trained). Nothing depends on a clock; the time limits
# only keep a hung nmt from hanging the suite.

NAME=test_translate_order
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, nth_line, tiny_model,
                # wait_lines

tiny_model "$T/gru"
# A Transformer as small: one layer each side, 16 wide.
cat >"$T/tr.json" <<EOF
{"data": {"train": "$T/tiny-train.tsv"},
 "model": {"type": "transformer", "embed": 16, "layers": 1, "heads": 2, "ff": 32, "dropout": 0},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/tr"}}
EOF
if ! "$NMT" train --quiet "$T/tr.json" >"$T/tr.out" 2>"$T/tr.err"; then
    bad "setup: tiny Transformer"
    sed 's/^/    | /' "$T/tr.err" | tail -n 5
    finish
fi

# 150 source lines of mixed lengths (data/mar.txt runs from short to long: every 200th
# line, then reversed halves interleaved), an empty line and an invalid UTF-8 line among
# them, and a second file.
awk -F'\t' 'NR % 200 == 7 { print $1 }' "$DATA" | head -n 150 >"$T/sorted.txt"
awk '{ a[NR] = $0 } END { for (i = 1; i <= NR / 2; i++) { print a[i]; print a[NR + 1 - i] } }' "$T/sorted.txt" >"$T/mixed.txt"
{ head -n 20 "$T/mixed.txt"; echo; printf 'bad \377 line\n'; tail -n +21 "$T/mixed.txt"; } >"$T/in.txt"
head -n 30 "$T/sorted.txt" >"$T/second.txt"
n=$(lines "$T/in.txt")

for model in gru tr; do
    M=$T/$model/model.bin
    run translate "$M" "$T/in.txt" --batch 1
    cp "$T/out" "$T/one.txt"
    cp "$T/err" "$T/one.err"
    check "$model: --batch 1 answers every line" eval 'exits 0 && [ "$(lines "$T/one.txt")" = "$n" ]'
    for b in 4 16 64; do
        run translate "$M" "$T/in.txt" --batch "$b"
        check "$model: --batch $b (sorted by length): the same words, line for line, as --batch 1" \
            eval 'exits 0 && cmp -s "$T/out" "$T/one.txt"'
        check "$model: --batch $b: the same warnings, in line order" cmp -s "$T/err" "$T/one.err"
    done
    check "$model: the invalid line is answered empty in its place (line 22)" \
        eval '[ -z "$(nth_line 22 "$T/out")" ] && [ -z "$(nth_line 21 "$T/out")" ]'
    check "$model: its warning names line 22" has "$T/err" "line 22: invalid UTF-8"

    # n-best records carry their line number (from 0, counting on into the second file):
    # in order, and with the same sentences as one line at a time (scores may differ in
    # the last digits, see translate.h).
    run translate "$M" "$T/in.txt" "$T/second.txt" --beam 3 --nbest 2 --batch 1
    cut -d'|' -f1-4 "$T/out" >"$T/nbest.one"
    run translate "$M" "$T/in.txt" "$T/second.txt" --beam 3 --nbest 2 --batch 16
    cut -d'|' -f1-4 "$T/out" >"$T/nbest.batch"
    check "$model: --nbest 2 --batch 16: the same hypotheses, in the same order, as --batch 1" \
        eval 'exits 0 && cmp -s "$T/nbest.batch" "$T/nbest.one"'
    total=$((n + 30))
    check "$model: --nbest 2 --batch 16: line numbers 0..$((total - 1)), in order, across both files" \
        eval '[ "$(cut -d" " -f1 "$T/out" | uniq | tr "\n" " ")" = "$(seq 0 $((total - 1)) | tr "\n" " ")" ]'

    # --compute-type (issue 31): float32, the default, is the unprepared model's output
    # byte for byte; int8 answers every line, and its output does not depend on the
    # batch (every product's integer sums are exact and per row, the recurrent encoder's
    # too), n-best scores included.
    run translate "$M" "$T/in.txt" --batch 1 --compute-type float32
    check "$model: --compute-type float32: byte for byte the default" eval 'exits 0 && cmp -s "$T/out" "$T/one.txt"'
    run translate "$M" "$T/in.txt" --batch 1 --compute-type int8
    check "$model: --compute-type int8 answers every line" eval 'exits 0 && [ "$(lines "$T/out")" = "$n" ]'
    run translate "$M" "$T/in.txt" "$T/second.txt" --beam 3 --nbest 2 --batch 1 --compute-type int8
    cp "$T/out" "$T/int8.one"
    run translate "$M" "$T/in.txt" "$T/second.txt" --beam 3 --nbest 2 --batch 16 --compute-type int8
    check "$model: int8 --nbest 2 --batch 16: byte for byte --batch 1, scores included" \
        eval 'exits 0 && cmp -s "$T/out" "$T/int8.one"'
done
run translate "$T/tr/model.bin" "$T/in.txt" --compute-type int16
check "--compute-type int16: a usage error (exit 2) naming the choices" eval 'exits 2 && has "$T/err" "float32 or int8"'

M=$T/gru/model.bin

# More lines than one look-ahead window (TRANSLATE_WINDOW, 1024): 1,100 lines.
for i in 1 2 3 4 5 6 7 8; do cat "$T/mixed.txt"; done | head -n 1100 >"$T/long.txt"
run translate "$M" "$T/long.txt" --batch 1
cp "$T/out" "$T/long.one"
run translate "$M" "$T/long.txt" --batch 32
check "1,100 lines (two windows), --batch 32: the same words as --batch 1" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 1100 ] && cmp -s "$T/out" "$T/long.one"'
run translate "$M" "$T/long.txt" --batch 32 --workers 2
check "1,100 lines, --batch 32 --workers 2: byte for byte one worker" eval 'exits 0 && cmp -s "$T/out" "$T/long.one"'

# int8 weights are prepared once and shared by the workers (each product quantizes its
# input rows in a buffer of its own): two workers write byte for byte what one writes,
# for both families, over two windows, n-best scores included.
for model in gru tr; do
    run translate "$T/$model/model.bin" "$T/long.txt" --batch 16 --beam 2 --nbest 2 --compute-type int8 --workers 1
    cp "$T/out" "$T/int8.w1"
    run translate "$T/$model/model.bin" "$T/long.txt" --batch 16 --beam 2 --nbest 2 --compute-type int8 --workers 2
    check "$model: int8 --workers 2: byte for byte --workers 1 (1,100 lines, n-best scores included)" \
        eval 'exits 0 && [ "$(lines "$T/out")" = 2200 ] && cmp -s "$T/out" "$T/int8.w1"'
done

# Without --batch, a file is translated 64 lines at a time (cli/cmd_translate.c's
# default_batch): byte for byte the output of --batch 64, n-best scores included.
run translate "$M" "$T/in.txt" --beam 3 --nbest 2
cp "$T/out" "$T/default.txt"
run translate "$M" "$T/in.txt" --beam 3 --nbest 2 --batch 64
check "no --batch on a file: byte for byte --batch 64" cmp -s "$T/out" "$T/default.txt"

# A writer that waits for each answer, through a fifo that this shell holds open: with
# --batch 64 the look-ahead must not wait for lines that have not come (wait_lines:
# tests/lib.sh), with one worker or two.
mkfifo "$T/fifo"
printf 'Show me.\nWe will go.\nI like it.\n' >"$T/three.txt"
run translate "$M" "$T/three.txt" --batch 1
cp "$T/out" "$T/three.one"
for w in 1 2; do
    : >"$T/fifo.out"
    exec 3<>"$T/fifo"
    "$NMT" translate "$M" --batch 64 --workers $w <"$T/fifo" >"$T/fifo.out" 2>"$T/fifo.err" 3>&- &
    pid=$!
    printf 'Show me.\nWe will go.\n' >&3
    check "pipe, --batch 64 --workers $w: both answers arrive while stdin is open" wait_lines "$T/fifo.out" 2
    check "pipe, --batch 64 --workers $w: nmt is still waiting for input" kill -0 $pid
    printf 'I like it.\n' >&3
    check "pipe, --batch 64 --workers $w: the 3rd answer arrives while stdin is open" wait_lines "$T/fifo.out" 3
    exec 3>&-
    wait $pid
    rc=$?
    check "pipe, --batch 64 --workers $w: exit 0, the answers of one line at a time" \
        eval '[ "$rc" -eq 0 ] && cmp -s "$T/fifo.out" "$T/three.one"'
done

# Issue 32's per-line inputs travel with their lines through the sort: line i's --prefix
# begins line i's answer, and --sample draws from line i's own stream (--seed): the same
# as one line at a time, float32 and int8, one worker and two.
awk 'NR % 2 { print "टॉम" } NR % 2 == 0 { print "" }' "$T/in.txt" >"$T/prefix.txt"
for ct in float32 int8; do
    M=$T/tr/model.bin
    run translate "$M" "$T/in.txt" --batch 1 --compute-type $ct --prefix "$T/prefix.txt"
    cp "$T/out" "$T/prefix.one"
    for w in 1 2; do
        run translate "$M" "$T/in.txt" --batch 16 --workers $w --compute-type $ct --prefix "$T/prefix.txt"
        check "$ct: --prefix with --batch 16 --workers $w (sorted): byte for byte --batch 1" \
            eval 'exits 0 && cmp -s "$T/out" "$T/prefix.one"'
    done
    check "$ct: every other answer begins with its prefix (but the empty line 21 and the invalid 22)" \
        eval 'paste "$T/prefix.txt" "$T/prefix.one" |
              awk -F"\t" "NR != 21 && NR != 22 && \$1 != \"\" && index(\$2, \$1) != 1 { bad++ } END { exit bad > 0 }"'
    run translate "$M" "$T/in.txt" --batch 1 --compute-type $ct --sample 0 --seed 11
    cp "$T/out" "$T/sample.one"
    run translate "$M" "$T/in.txt" --batch 16 --workers 2 --compute-type $ct --sample 0 --seed 11
    check "$ct: --sample 0 --seed 11 with --batch 16 --workers 2 (sorted): byte for byte --batch 1" \
        eval 'exits 0 && cmp -s "$T/out" "$T/sample.one"'
done

# A failed write stops at the first line of the batch (each line is flushed as written):
# no warning about the invalid line 2 that follows.
if [ -w /dev/full ]; then
    printf 'Show me.\n\377 bad\nWe will go.\n' >"$T/bad2.txt"
    for w in 1 2; do
        $LIMIT "$NMT" translate "$M" "$T/bad2.txt" --batch 8 --workers $w >/dev/full 2>"$T/err"
        rc=$?
        check "--batch 8 --workers $w >/dev/full: exit 1, writing the translation, nothing about line 2" \
            eval 'exits 1 && has "$T/err" "writing the translation: No space left" && ! has "$T/err" "line 2"'
    done
else
    skip "--batch 8 >/dev/full" "/dev/full is not writable here"
fi
finish
