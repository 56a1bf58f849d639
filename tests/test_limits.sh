#!/bin/sh
# test_limits.sh — bounded memory on any input: the line-length limit, read errors told
# from end of input, absurdly long words for BPE.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_limits.sh

NAME=test_limits
. tests/lib.sh

# ---------------------------------------------------------------- BPE: long words
# A word of 40,000 letters among 10 ordinary lines: nmt bpe learn leaves it out of
# learning (longer than BPE_MAX_WORD_BYTES, 4096 bytes), says so once, and learns the
# merges the ordinary lines give alone; nmt bpe apply segments it anyway and nmt bpe
# join gives it back; nmt train with data.tokenizer bpe warns the same. Learning from
# such a word took over 20 s and applying merges to it was quadratic; nothing here is
# timed (lib.sh's time limit only keeps a hang from hanging the suite).
awk 'BEGIN { srand(19); for (i = 0; i < 40000; i++) printf "%c", 97 + int(rand() * 10); print "" }' >"$T/bpe-word.txt"
cut -f1 "$DATA" | head -n 10 >"$T/bpe-lines.txt"
cat "$T/bpe-lines.txt" "$T/bpe-word.txt" >"$T/bpe-long.txt"
run bpe learn --merges 500 -o "$T/bpe-lines.codes" "$T/bpe-lines.txt"
check "bpe learn: the 10 ordinary lines alone" exits 0
run bpe learn --merges 500 -o "$T/bpe-long.codes" "$T/bpe-long.txt"
check "bpe learn with a 40,000-letter word: exit 0" exits 0
check "bpe learn: the word is left out, and said once" \
    eval 'has "$T/err" "nmt: warning: 1 word longer than 4096 bytes left out of learning the merges" &&
          [ "$(grep -c "longer than" "$T/err")" -eq 1 ]'
check "bpe learn: the merges are those of the ordinary lines alone" cmp -s "$T/bpe-lines.codes" "$T/bpe-long.codes"
run bpe learn --merges 500 --codes-format subword-nmt "$T/bpe-long.txt"
check "bpe learn --codes-format subword-nmt: the word left out too" \
    eval 'exits 0 && has "$T/err" "1 word longer than 4096 bytes left out of learning"'
run bpe apply "$T/bpe-long.codes" "$T/bpe-long.txt"
check "bpe apply: every line segmented, the 40,000-letter word too" \
    eval 'exits 0 && [ "$(lines "$T/out")" -eq 11 ] && [ "$(tail -n 1 "$T/out" | tr " " "\n" | grep -c "@@$")" -gt 1000 ]'
tail -n 1 "$T/out" >"$T/bpe-pieces.txt"
run bpe join "$T/bpe-pieces.txt"
check "bpe join: the pieces give the word back" eval 'exits 0 && cmp -s "$T/out" "$T/bpe-word.txt"'
awk 'NR % 97 == 0' "$DATA" | head -n 60 >"$T/bpe-train.tsv"
printf '%s\tx\n' "$(cat "$T/bpe-word.txt")" >>"$T/bpe-train.tsv"
awk 'NR % 89 == 0' "$DATA" | head -n 10 >"$T/bpe-valid.tsv"   # every training line is learned from
cat >"$T/bpe.json" <<EOF
{"data": {"train": "$T/bpe-train.tsv", "valid": "$T/bpe-valid.tsv", "tokenizer": "bpe", "bpe_merges": 200},
 "model": {"cell": "gru", "embed": 8, "hidden": 8},
 "train": {"batch_size": 16, "epochs": 1, "threads": 1}, "output": {"dir": "$T/bpe-run"}}
EOF
run train --quiet "$T/bpe.json"
check "train, data.tokenizer bpe: the word left out of learning the merges, a warning naming the file" \
    eval 'exits 0 && has "$T/err" "nmt: warning: $T/bpe-train.tsv: 1 word longer than 4096 bytes left out of learning the BPE merges"'

finish
