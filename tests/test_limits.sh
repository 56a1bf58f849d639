#!/bin/sh
# test_limits.sh — bounded memory on any input: the line-length limit, read errors told
# from end of input, absurdly long words for BPE.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_limits.sh

NAME=test_limits
. tests/lib.sh

# count FILE STRING — how many lines of FILE hold STRING
count() { grep -cF -- "$2" "$1"; }

# ---------------------------------------------------------------- over-long lines
# LONG: one line of 1,100,000 bytes, over the default limit of 1 MiB (1048576 bytes),
# "x x x ...": many words, so that read whole it is translated (cut at 400 tokens).
yes x | head -n 550000 | tr '\n' ' ' >"$T/long"
printf 'hello\n' >"$T/long.txt"
cat "$T/long" >>"$T/long.txt"
printf '\nhow are you\n' >>"$T/long.txt"
printf 'hello\nhow are you\n' >"$T/short.txt"
LIMIT_WARNING="line 2: longer than 1048576 bytes (the limit; --max-line-bytes raises it)"

tiny_model "$T/m"
M=$T/m/model.bin

run translate "$M" "$T/short.txt"
cp "$T/out" "$T/short.out"
run translate "$M" "$T/long.txt"
check "translate, a 1.1 MB line 2: exit 0, three output lines, line 2 empty" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && [ -z "$(nth_line 2 "$T/out")" ]'
check "... lines 1 and 3 translated as on their own" \
    eval '[ "$(nth_line 1 "$T/out")" = "$(nth_line 1 "$T/short.out")" ] && [ "$(nth_line 3 "$T/out")" = "$(nth_line 2 "$T/short.out")" ]'
check "... one warning naming the file, line 2, the limit and the option" \
    eval 'has "$T/err" "nmt: warning: $T/long.txt $LIMIT_WARNING; translated as empty" && [ "$(lines "$T/err")" = 1 ]'
run translate "$M" --batch 4 <"$T/long.txt"
check "translate --batch 4 from stdin: the same, the warning naming stdin line 2" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && [ -z "$(nth_line 2 "$T/out")" ] && has "$T/err" "nmt: warning: stdin $LIMIT_WARNING"'
run translate "$M" --max-line-bytes 2000000 "$T/long.txt"
check "translate --max-line-bytes 2000000: line 2 read and translated (cut at 400 tokens), exit 0" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && ! has "$T/err" "longer than 1048576" && has "$T/err" "line 2: longer than 400 tokens"'
printf 'a\tb\n' >"$T/dict.tsv"
cat "$T/long" >>"$T/dict.tsv"
printf '\tc\n' >>"$T/dict.tsv"
run translate "$M" --unk-dict "$T/dict.tsv" "$T/short.txt"
check "translate --unk-dict with a 1.1 MB line: exit 1, naming the file and line 2" \
    eval 'exits 1 && has "$T/err" "nmt: $T/dict.tsv $LIMIT_WARNING" && [ ! -s "$T/out" ]'

# A sentence-pair file with the long line as line 2's source.
printf 'hello\tनमस्कार\n' >"$T/long.tsv"
cat "$T/long" >>"$T/long.tsv"
printf '\tकाहीतरी\nhow are you\tकसे आहात\n' >>"$T/long.tsv"
run eval "$M" "$T/long.tsv"
check "eval, a 1.1 MB line 2: exit 1, naming the file, line 2 and --max-line-bytes; nothing on stdout" \
    eval 'exits 1 && has "$T/err" "nmt: $T/long.tsv $LIMIT_WARNING" && [ ! -s "$T/out" ]'
run eval "$M" "$T/long.tsv" --max-line-bytes 2000000
check "eval --max-line-bytes 2000000: the three pairs scored, exit 0" eval 'exits 0 && has "$T/out" "BLEU"'

run train "$T/tiny.json" --set "data.train=$T/long.tsv" --set "output.dir=$T/runs/long"
check "train on a file with a 1.1 MB line 2: exit 1, naming the file, line 2, the limit and data.max_line_bytes" \
    eval 'exits 1 && has "$T/err" "nmt: $T/long.tsv line 2: longer than 1048576 bytes (the limit; data.max_line_bytes raises it) (from data.train)"'
check "... before anything is written: no output.dir, no config.json" eval '[ ! -e "$T/runs/long" ]'
run train "$T/tiny.json" --set "data.valid=$T/long.tsv" --set "output.dir=$T/runs/longvalid"
check "train with that file as data.valid: exit 1, naming data.valid; nothing written" \
    eval 'exits 1 && has "$T/err" "$T/long.tsv line 2: longer than 1048576 bytes" && has "$T/err" "(from data.valid)" && [ ! -e "$T/runs/longvalid" ]'
cat "$T/tiny-train.tsv" "$T/long.tsv" >"$T/long-train.tsv"
run train "$T/tiny.json" --set "data.train=$T/long-train.tsv" --set "output.dir=$T/runs/longok" \
    --set data.max_line_bytes=2000000 --set train.max_steps=2
check "train with data.max_line_bytes 2000000: the file is read (the long pair dropped by data.max_len), exit 0" \
    eval 'exits 0 && [ -s "$T/runs/longok/model.bin" ]'
run train --resume "$T/m" --set data.max_line_bytes=2000000
check "resume with another data.max_line_bytes: allowed (it decides whether the data is read, not what)" \
    eval 'exits 0 && ! has "$T/err" "data.max_line_bytes: the checkpoint"'
run train "$T/tiny.json" --set data.train=/dev/zero --set "output.dir=$T/runs/zero"
check "train on /dev/zero (one endless line): ends, exit 1, naming /dev/zero line 1; nothing written" \
    eval 'exits 1 && has "$T/err" "nmt: /dev/zero line 1: longer than 1048576 bytes (the limit; data.max_line_bytes raises it)" && [ ! -e "$T/runs/zero" ]'

run score "$T/long.txt" -i "$T/long.txt"
check "score with a 1.1 MB line 2: exit 1, naming the file and line 2; nothing on stdout" \
    eval 'exits 1 && has "$T/err" "nmt: $T/long.txt $LIMIT_WARNING" && [ ! -s "$T/out" ]'
run score "$T/long.txt" -i - --max-line-bytes 2000000 <"$T/long.txt"
check "score --max-line-bytes 2000000 (hypotheses on stdin): scored, exit 0" \
    eval 'exits 0 && has "$T/out" "pairs = 3"'

run bpe learn --merges 10 "$T/long.txt"
check "bpe learn with a 1.1 MB line 2: exit 1, naming the file and line 2; no codes" \
    eval 'exits 1 && has "$T/err" "nmt: $T/long.txt $LIMIT_WARNING" && [ ! -s "$T/out" ]'
run bpe learn --merges 10 --max-line-bytes 2000000 "$T/long.txt"
check "bpe learn --max-line-bytes 2000000: learns, exit 0" eval 'exits 0 && has "$T/out" "#version"'
run bpe apply --char "$T/long.txt"
check "bpe apply --char, a 1.1 MB line 2: exit 0, line 2 empty, the others segmented, a warning naming it" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && [ -z "$(nth_line 2 "$T/out")" ] && [ "$(nth_line 1 "$T/out")" = "h@@ e@@ l@@ l@@ o" ] && has "$T/err" "nmt: warning: $T/long.txt $LIMIT_WARNING; an empty line out"'
"$NMT" bpe learn --codes-format subword-nmt --merges 5 -o "$T/snmt.codes" "$T/short.txt" 2>/dev/null
run bpe apply "$T/snmt.codes" --codes-format subword-nmt <"$T/long.txt"
check "bpe apply --codes-format subword-nmt from stdin: line 2 empty, three lines, the warning names standard input" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && [ -z "$(nth_line 2 "$T/out")" ] && has "$T/err" "standard input $LIMIT_WARNING"'
run bpe join "$T/long.txt"
check "bpe join, a 1.1 MB line 2: exit 0, line 2 empty" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && [ -z "$(nth_line 2 "$T/out")" ] && [ "$(nth_line 3 "$T/out")" = "how are you" ]'

# A train.log line far over the limit is one more malformed line for nmt plot.
cp -R "$T/m" "$T/plotrun"
cat "$T/long" >>"$T/plotrun/train.log"
run plot "$T/plotrun" -o "$T/plot.svg"
check "plot with a 1.1 MB line in train.log: exit 0, the line skipped with a warning naming it" \
    eval 'exits 0 && has "$T/err" "train.log: skipped 1 malformed line (line $(($(lines "$T/m/train.log") + 1)))" && [ -s "$T/plot.svg" ]'

# ---------------------------------------------------------------- a classifier
# One epoch of a tiny GRU on data/sentiment.tsv: something to classify with.
cat >"$T/cls.json" <<JSON
{"data": {"train": "$(pwd)/data/sentiment.tsv", "valid_fraction": 0.1},
 "model": {"type": "classifier", "cell": "gru", "embed": 8, "hidden": 8, "pooling": "attention"},
 "train": {"epochs": 1, "batch_size": 64, "threads": 1}, "output": {"dir": "$T/cls"}}
JSON
if "$NMT" train --quiet "$T/cls.json" >/dev/null 2>"$T/cls.err"; then
    CM=$T/cls/model.bin
    run classify "$CM" "$T/long.txt"
    check "classify, a 1.1 MB line 2: exit 0, three lines, line 2 empty" \
        eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && [ -z "$(nth_line 2 "$T/out")" ] && [ -n "$(nth_line 3 "$T/out")" ]'
    check "... one warning for line 2, naming the file, the limit and the option" \
        eval 'has "$T/err" "nmt: warning: $T/long.txt $LIMIT_WARNING; an empty line out" && [ "$(count "$T/err" "line 2")" = 1 ]'
    yes word | head -n 1500 | tr '\n' ' ' >"$T/words.txt"
    printf '\nfine\n' >>"$T/words.txt"
    run classify "$CM" "$T/words.txt"
    check "classify, a line of 1500 words: labelled, with a warning that only its first 1000 units were" \
        eval 'exits 0 && [ "$(lines "$T/out")" = 2 ] && [ -n "$(nth_line 1 "$T/out")" ] && has "$T/err" "$T/words.txt line 1: 1500 units, more than the 1000 a line is classified by; only the first 1000 classified"'
    run classify "$CM" --max-line-bytes 2000000 "$T/long.txt"
    check "classify --max-line-bytes 2000000: line 2 labelled (its first 1000 units)" \
        eval 'exits 0 && [ -n "$(nth_line 2 "$T/out")" ] && has "$T/err" "line 2: 550000 units"'
    printf 'good\t1\n' >"$T/cls-long.tsv"
    cat "$T/long" >>"$T/cls-long.tsv"
    printf '\t0\n' >>"$T/cls-long.tsv"
    run eval "$CM" "$T/cls-long.tsv"
    check "eval on a classifier, a 1.1 MB line 2: exit 1, naming the file and line 2" \
        eval 'exits 1 && has "$T/err" "nmt: $T/cls-long.tsv $LIMIT_WARNING"'
    mkdir -p "$T/cdir"
    run classify "$CM" "$T/cdir"
    check "classify a directory: exit 1, NAME: read error: Is a directory" \
        eval 'exits 1 && has "$T/err" "nmt: $T/cdir: read error: Is a directory"'
    run classify "$CM" <"$T/cdir"
    check "classify with a directory as stdin: exit 1, stdin: read error" \
        eval 'exits 1 && has "$T/err" "nmt: stdin: read error: Is a directory"'
else
    bad "setup: a tiny classifier"
    sed 's/^/    | /' "$T/cls.err" | tail -n 5
fi

# ---------------------------------------------------------------- --max-line-bytes values
for value in 1023 1073741825 abc 1e6 -5; do
    for cmd in "translate $M" "eval $M $T/long.tsv" "score $T/short.txt" "bpe learn"; do
        run $cmd --max-line-bytes "$value"
        check "${cmd%% *} --max-line-bytes $value: usage error (exit 2) giving the range" \
            eval 'exits 2 && has "$T/err" "--max-line-bytes needs a number of bytes from 1024 to 1073741824"'
    done
done
run translate "$M" --max-line-bytes
check "translate --max-line-bytes without a value: exit 2" exits 2
run classify "$M" --max-line-bytes 10
check "classify --max-line-bytes 10: exit 2" eval 'exits 2 && has "$T/err" "classify: --max-line-bytes needs"'
run translate "$M" --max-line-bytes 1024 "$T/short.txt"
check "translate --max-line-bytes 1024, the smallest: exit 0" exits 0
run train "$T/tiny.json" --set data.max_line_bytes=1023 --set "output.dir=$T/runs/x"
check "train --set data.max_line_bytes=1023: exit 2, naming the key and the range" \
    eval 'exits 2 && has "$T/err" "data.max_line_bytes must be an integer from 1024 to 1073741824"'
sed 's/"data": {/"data": {"max_line_bytes": 5000000000, /' "$T/tiny.json" >"$T/bad-limit.json"
run train "$T/bad-limit.json"
check "a config with data.max_line_bytes 5e9: exit 1, naming the key" \
    eval 'exits 1 && has "$T/err" "$T/bad-limit.json: data.max_line_bytes must be an integer from 1024 to 1073741824"'

# ---------------------------------------------------------------- read errors
# A directory opened as a file: fopen succeeds (Linux), reading fails with EISDIR. A
# read error must never pass for the end of the input.
mkdir -p "$T/dir"
run translate "$M" "$T/dir"
check "translate a directory: exit 1, NAME: read error: Is a directory" \
    eval 'exits 1 && has "$T/err" "nmt: $T/dir: read error: Is a directory" && [ ! -s "$T/out" ]'
run translate "$M" <"$T/dir"
check "translate with a directory as stdin: exit 1, stdin: read error" \
    eval 'exits 1 && has "$T/err" "nmt: stdin: read error: Is a directory"'
run translate "$M" "$T/short.txt" "$T/dir" "$T/short.txt"
check "translate short.txt, a directory, short.txt: the first file's 2 lines, then exit 1 at the directory" \
    eval 'exits 1 && [ "$(lines "$T/out")" = 2 ] && has "$T/err" "$T/dir: read error"'
run eval "$M" "$T/dir"
check "eval on a directory: exit 1, naming it" eval 'exits 1 && has "$T/err" "nmt: $T/dir: Is a directory"'
run train "$T/tiny.json" --set "data.train=$T/dir" --set "output.dir=$T/runs/dir"
check "train with data.train a directory: exit 1, naming it and the key; nothing written" \
    eval 'exits 1 && has "$T/err" "nmt: $T/dir: read error: Is a directory (from data.train)" && [ ! -e "$T/runs/dir" ]'
run train "$T/dir"
check "train with a directory as CONFIG.json: exit 1, naming it" \
    eval 'exits 1 && has "$T/err" "nmt: $T/dir: read error: Is a directory"'
run bpe learn "$T/dir"
check "bpe learn a directory: exit 1, read error naming it" \
    eval 'exits 1 && has "$T/err" "nmt: $T/dir: read error: Is a directory"'
run bpe apply --char <"$T/dir"
check "bpe apply with a directory as stdin: exit 1, standard input: read error" \
    eval 'exits 1 && has "$T/err" "nmt: standard input: read error: Is a directory"'
run bpe join "$T/short.txt" "$T/dir"
check "bpe join short.txt and a directory: short.txt's lines, then exit 1" \
    eval 'exits 1 && [ "$(lines "$T/out")" = 2 ] && has "$T/err" "$T/dir: read error: Is a directory"'
run score "$T/dir" -i "$T/short.txt"
check "score with a directory as REF: exit 1, naming it" eval 'exits 1 && has "$T/err" "nmt: $T/dir: Is a directory"'
run score "$T/short.txt" <"$T/dir"
check "score with a directory as stdin: exit 1, stdin: read error" \
    eval 'exits 1 && has "$T/err" "nmt: stdin: read error: Is a directory"'

# ---------------------------------------------------------------- memory stays flat
# A 50 MB line without end but its last byte: reading it must not hold it. Peak RSS by
# GNU time's %M (kilobytes), where it is installed; the bound is generous (nmt with a
# tiny model peaks near 10 MB).
if [ -x /usr/bin/time ] && /usr/bin/time -f %M true >/dev/null 2>&1; then
    head -c 50000000 /dev/zero | tr '\0' 'x' >"$T/big.txt"
    printf '\nhello\n' >>"$T/big.txt"
    # peak CMD... — runs CMD as run does; kb: its peak RSS
    peak() { /usr/bin/time -f %M -o "$T/peak" "$@" >"$T/out" 2>"$T/err"; rc=$?; kb=$(tail -n 1 "$T/peak"); }
    peak "$NMT" translate "$M" "$T/big.txt"
    check "translate a 50 MB line: exit 0, 2 lines out, peak RSS ${kb} KB < 40 MB" \
        eval 'exits 0 && [ "$(lines "$T/out")" = 2 ] && [ "$kb" -lt 40000 ]'
    peak "$NMT" bpe apply --char "$T/big.txt"
    check "bpe apply a 50 MB line: peak RSS ${kb} KB < 40 MB" eval 'exits 0 && [ "$kb" -lt 40000 ]'
    peak "$NMT" score "$T/big.txt" -i "$T/big.txt"
    check "score a 50 MB line: exit 1, peak RSS ${kb} KB < 40 MB" eval 'exits 1 && [ "$kb" -lt 40000 ]'
    peak "$NMT" train "$T/tiny.json" --set data.train=/dev/zero --set "output.dir=$T/runs/zero2"
    check "train on /dev/zero: exit 1, peak RSS ${kb} KB < 40 MB" eval 'exits 1 && [ "$kb" -lt 40000 ]'
    rm -f "$T/big.txt"
else
    skip "peak memory on a 50 MB line" "no GNU time at /usr/bin/time"
fi

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
