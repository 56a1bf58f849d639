#!/bin/sh
# test_failures.sh — every failure reported: write errors on standard output, model
# files holding NaN or Inf, non-finite losses, empty vocabularies, long paths.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_failures.sh
# Needs build/set_weights (make test builds it; TOOLS names its directory, by default
# the one holding $NMT if it is there, else build/).

NAME=test_failures
. tests/lib.sh

if [ -z "$TOOLS" ]; then
    TOOLS=$(dirname "$NMT")
    [ -x "$TOOLS/set_weights" ] || TOOLS=build
fi
SET_WEIGHTS=$TOOLS/set_weights
case $SET_WEIGHTS in /*) ;; *) SET_WEIGHTS=$(pwd)/$SET_WEIGHTS ;; esac
if [ ! -x "$SET_WEIGHTS" ]; then
    bad "setup: need $SET_WEIGHTS (make test builds it: make build/set_weights)"
    finish
fi

tiny_model "$T/gru"
M=$T/gru/model.bin
VALID=$T/gru/valid.tsv
# A tiny classifier: 200 lines of data/sentiment.tsv, one epoch.
head -n 200 data/sentiment.tsv >"$T/sent.tsv"
cat >"$T/cls.json" <<EOF
{"data": {"train": "$T/sent.tsv"}, "model": {"type": "classifier", "cell": "lstm", "embed": 8, "hidden": 8},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/cls"}}
EOF
if ! "$NMT" train --quiet "$T/cls.json" >"$T/cls.out" 2>&1; then
    bad "setup: tiny classifier"
    sed 's/^/    | /' "$T/cls.out" | tail -n 5
    finish
fi
C=$T/cls/model.bin
# Lines for the streaming commands; line 3 is not UTF-8, so each command says so
# (a warning or an error naming line 3) only if it got that far.
printf 'hello there\nfine\n\377\376 bad\nmore\n' >"$T/lines.txt"

# ---------------------------------------------------------------- 1. write errors on standard output
# As coreutils' close_stdout: what goes to a full device (/dev/full) is an error, exit
# 1, "nmt: write error: standard output: REASON", whatever the command; the streaming
# commands stop at the first batch that cannot be written.
STDOUT_FULL="nmt: write error: standard output: No space left on device"
full() { $LIMIT "$NMT" "$@" >/dev/full 2>"$T/err"; rc=$?; }
if [ ! -w /dev/full ]; then
    skip "write errors on standard output" "no /dev/full here"
else
    for args in "--version" "help" "--help" "train --help" "translate --help" "classify --help" "eval --help" \
                "info --help" "score --help" "plot --help" "average --help" "bpe --help"; do
        full $args
        check "nmt $args >/dev/full: exit 1, write error: standard output" \
            eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    done
    full info "$M"
    check "info >/dev/full: exit 1, write error: standard output" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full info "$M" --json
    check "info --json >/dev/full: exit 1, write error" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full eval "$M" "$VALID"
    check "eval >/dev/full: exit 1, write error: standard output" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full eval "$M" "$VALID" --json
    check "eval --json >/dev/full: exit 1, write error" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    full eval "$C" "$T/cls/valid.tsv"
    check "eval of a classifier >/dev/full: exit 1, write error" eval 'exits 1 && has "$T/err" "$STDOUT_FULL"'
    # One message, not the command's and close_stdout's both. (--batch 1: a file's
    # default batch of 64 would read all four lines, line 3 included, before writing.)
    full translate "$M" "$T/lines.txt" --batch 1
    check "translate >/dev/full: exit 1, one message: writing the translation: No space left on device" \
        eval 'exits 1 && has "$T/err" "nmt: writing the translation: No space left on device" && [ "$(lines "$T/err")" -eq 1 ]'
    check "... stopped at line 1: no warning about line 3" eval '! has "$T/err" "line 3"'
    full translate "$M" "$T/lines.txt" --batch 2
    check "translate --batch 2 >/dev/full: exit 1 after the first batch (no word of line 3)" \
        eval 'exits 1 && has "$T/err" "writing the translation: No space left" && ! has "$T/err" "line 3"'
    # With workers, batches still in flight or read after the failed write are freed,
    # not translated or written: 300 lines in batches of 2, many more than the 6 a
    # 3-worker queue holds (the line that is not UTF-8 left out: no warning).
    awk '!/bad/ { for (i = 0; i < 100; i++) print }' "$T/lines.txt" >"$T/many.txt"
    full translate "$M" "$T/many.txt" --batch 2 --workers 3
    check "translate --workers 3 --batch 2 >/dev/full: exit 1, one message: writing the translation" \
        eval 'exits 1 && has "$T/err" "nmt: writing the translation: No space left on device" && [ "$(lines "$T/err")" -eq 1 ]'
    full classify "$C" "$T/many.txt" --batch 2 --workers 3
    check "classify --workers 3 --batch 2 >/dev/full: exit 1, one message: writing the labels" \
        eval 'exits 1 && has "$T/err" "nmt: writing the labels: No space left on device" && [ "$(lines "$T/err")" -eq 1 ]'
    full classify "$C" "$T/lines.txt" --batch 1
    check "classify --batch 1 >/dev/full: exit 1, writing the labels, stopped before line 3" \
        eval 'exits 1 && has "$T/err" "nmt: writing the labels: No space left on device" && ! has "$T/err" "line 3"'
    full score "$VALID" -i "$VALID"
    check "score >/dev/full: exit 1, writing the scores" eval 'exits 1 && has "$T/err" "writing the scores: No space left"'
    full bpe apply --char "$T/lines.txt"
    check "bpe apply >/dev/full: exit 1, cannot write, stopped before line 3" \
        eval 'exits 1 && has "$T/err" "cannot write: No space left on device" && ! has "$T/err" ":3:"'
    full bpe learn --merges 5 "$VALID"
    check "bpe learn >/dev/full: exit 1, cannot write" eval 'exits 1 && has "$T/err" "cannot write: No space left"'
    full bpe join "$VALID"
    check "bpe join >/dev/full: exit 1, cannot write" eval 'exits 1 && has "$T/err" "cannot write: No space left"'
    full plot "$T/gru" -o /dev/full
    check "plot -o /dev/full: exit 1, /dev/full: write failed" eval 'exits 1 && has "$T/err" "/dev/full: write failed"'
    # Commands that write nothing to standard output succeed with it full.
    full train --quiet "$T/tiny.json" --set output.dir="$T/train-full"
    check "train >/dev/full: exit 0 (progress goes to stderr)" eval 'exits 0 && [ -s "$T/train-full/model.bin" ]'
    full average "$M" "$T/gru/best.bin" -o "$T/avg.bin"
    check "average -o FILE >/dev/full: exit 0 (its note goes to stderr)" eval 'exits 0 && [ -s "$T/avg.bin" ]'
    full translate "$M" "$T/lines.txt" -o "$T/translated.txt"
    check "translate -o FILE >/dev/full: exit 0" eval 'exits 0 && [ "$(lines "$T/translated.txt")" -eq 4 ]'
    full bogus
    check "an unknown command >/dev/full: still the usage error, exit 2" eval 'exits 2 && ! has "$T/err" "write error"'
fi

# A closed pipe: SIGPIPE ends nmt, as it ends cat (exit 141 in the shell, no message).
# Deterministic: the reader closes the pipe before it feeds nmt's input through a FIFO.
if mkfifo "$T/fifo" 2>/dev/null; then
    ( "$NMT" translate "$M" <"$T/fifo" 2>"$T/err"; echo $? >"$T/rc" ) | { exec 0<&-; cat "$T/lines.txt" >"$T/fifo"; }
    check "translate into a closed pipe: killed by SIGPIPE (exit 141), no message, as before" \
        eval '[ "$(cat "$T/rc")" -eq 141 ] && [ ! -s "$T/err" ]'
    # With SIGPIPE ignored (inherited, as some job runners set it), the write fails with
    # EPIPE and is reported.
    ( trap '' PIPE; "$NMT" translate "$M" <"$T/fifo" 2>"$T/err"; echo $? >"$T/rc" ) |
        { exec 0<&-; cat "$T/lines.txt" >"$T/fifo"; }
    check "translate into a closed pipe, SIGPIPE ignored: exit 1, writing the translation: Broken pipe" \
        eval '[ "$(cat "$T/rc")" -eq 1 ] && has "$T/err" "writing the translation: Broken pipe"'
    ( trap '' PIPE; "$NMT" info "$M" 2>"$T/err"; echo $? >"$T/rc" ) | { exec 0<&-; }
    check "info into a closed pipe, SIGPIPE ignored: exit 1, write error: standard output: Broken pipe" \
        eval '[ "$(cat "$T/rc")" -eq 1 ] && has "$T/err" "nmt: write error: standard output: Broken pipe"'
else
    skip "closed pipes" "mkfifo failed"
fi

# ---------------------------------------------------------------- 2. NaN and infinite weights, non-finite losses
# Files written by tests/tools/set_weights with the library's writer: every checksum holds.
"$SET_WEIGHTS" "$M" "$T/nan.bin" nan
run info "$T/nan.bin"
check "info of a model of NaN weights: exit 1, names the file, WGTS, weight 0, its tensor" \
    eval 'exits 1 && has "$T/err" "nmt: $T/nan.bin: section WGTS: weight 0 (tensor src_emb, row 0, column 0) is NaN" && [ ! -s "$T/out" ]'
# One +inf, weight 100: src_emb is (vocabulary, 16), so row 6, column 4.
"$SET_WEIGHTS" "$M" "$T/inf.bin" inf 100
run translate "$T/inf.bin" "$T/lines.txt"
check "translate with one infinite weight: exit 1, weight 100 (src_emb row 6, column 4) is +inf, 1 of them" \
    eval 'exits 1 && has "$T/err" "$T/inf.bin: section WGTS: weight 100 (tensor src_emb, row 6, column 4) is +inf; 1 of the" && [ ! -s "$T/out" ]'
"$SET_WEIGHTS" "$M" "$T/ninf.bin" -inf 200 3
run eval "$T/ninf.bin" "$VALID"
check "eval with three -inf weights: exit 1, the first named, 3 of them, no figures" \
    eval 'exits 1 && has "$T/err" "weight 200 (tensor src_emb, row 12, column 8) is -inf; 3 of the" && [ ! -s "$T/out" ]'
"$SET_WEIGHTS" "$T/gru/checkpoint.bin" "$T/adam.bin" --adam-m nan 5
run info "$T/adam.bin"
check "a checkpoint with a NaN in Adam's first moment: exit 1, section ADAM, weight 5" \
    eval 'exits 1 && has "$T/err" "$T/adam.bin: section ADAM: Adam'"'"'s first moment m of weight 5 (tensor src_emb, row 0, column 5) is NaN"'
run average "$M" "$T/nan.bin" -o "$T/avg-nan.bin"
check "average with a NaN model: exit 1, names it, nothing written" \
    eval 'exits 1 && has "$T/err" "$T/nan.bin: section WGTS" && [ ! -e "$T/avg-nan.bin" ]'

# All weights 1e30: every logit the same 1e30, every word as likely: the loss is log V
# and the perplexity the target vocabulary's size (it printed 0 and 1: log V was lost
# in 1e30 + log V).
"$SET_WEIGHTS" "$M" "$T/huge.bin" 1e30
"$NMT" info "$M" --json >"$T/info.json"
tgt_vocab=$(sed -n 's/.*"tgt_vocab": *\([0-9]*\).*/\1/p' "$T/info.json" | head -n 1)
run eval "$T/huge.bin" "$VALID"
check "eval of all-1e30 weights: exit 0, perplexity = the target vocabulary (${tgt_vocab:-?} words), not 1" \
    eval 'exits 0 && [ -n "$tgt_vocab" ] && has "$T/out" "perplexity = $tgt_vocab.00 "'

# An LSTM's weights all 3e37: the output layer's sums overflow to inf, the loss is NaN.
"$NMT" train --quiet "$T/tiny.json" --set model.cell=lstm --set output.dir="$T/lstm" >/dev/null 2>&1
"$SET_WEIGHTS" "$T/lstm/model.bin" "$T/overflow.bin" 3e37
run eval "$T/overflow.bin" "$VALID"
check "eval whose loss overflows to NaN: exit 1, names the model and the test file, no figure printed" \
    eval 'exits 1 && has "$T/err" "nmt: $T/overflow.bin: the loss on $VALID is not finite (NaN)" && [ ! -s "$T/out" ]'
run eval "$T/overflow.bin" "$VALID" --json
check "... --json: exit 1, no JSON with a null or nan loss" eval 'exits 1 && [ ! -s "$T/out" ]'
"$SET_WEIGHTS" "$C" "$T/cls-overflow.bin" 1e38
run eval "$T/cls-overflow.bin" "$T/cls/valid.tsv"
check "eval of a classifier whose loss is NaN: exit 1, names the model, no figures" \
    eval 'exits 1 && has "$T/err" "nmt: $T/cls-overflow.bin: the loss on $T/cls/valid.tsv is not finite (NaN)" && [ ! -s "$T/out" ]'

# Training whose validation loss is not finite: an error naming the step, and no
# validation line (no figure) in train.log. A Transformer scales its embeddings by
# sqrt(model.embed): FLT_MAX in <unk>'s source embedding (weights 16..31) becomes an
# infinity, then NaN, in exactly the validation sentences with unknown words; the
# training sentences have none, so every training step is finite.
cat >"$T/trf.json" <<EOF
{"data": {"train": "$T/tiny-train.tsv"},
 "model": {"type": "transformer", "embed": 16, "heads": 2, "ff": 32, "encoder_layers": 1, "decoder_layers": 1},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/trf"}}
EOF
"$NMT" train --quiet "$T/trf.json" >/dev/null 2>&1
"$SET_WEIGHTS" "$T/trf/model.bin" "$T/unk-huge.bin" 3.4028235e38 16 16
run train "$T/trf.json" --init-from "$T/unk-huge.bin" --set output.dir="$T/trf-nan"
check "training whose validation loss is NaN: exit 1, names the step (6), says not finite" \
    eval 'exits 1 && has "$T/err" "nmt: step 6: the validation loss is not finite (NaN)" && ! has "$T/err" "non-finite loss or gradient"'
check "... train.log has no validation line, and no best.bin" \
    eval '! has "$T/trf-nan/train.log" "\"validation\"" && [ ! -e "$T/trf-nan/best.bin" ]'

# ---------------------------------------------------------------- 3. vocabularies of the specials alone
# A vocabulary holding only <pad>, <unk>, <sos> and <eos> trains a model that can say
# nothing. data.max_vocab 1..4 is refused with the config, before anything is written:
# from the file, exit 1 naming it; from --set, a usage error (exit 2) naming --set.
for n in 1 4; do
    run train "$T/tiny.json" --set data.max_vocab=$n --set output.dir="$T/vocab$n"
    check "data.max_vocab $n with --set: exit 2, names --set, the key and the 4 specials, nothing written" \
        eval 'exits 2 && has "$T/err" "nmt: --set: data.max_vocab counts the 4 special tokens" && has "$T/err" "(data.max_vocab is $n)" && [ ! -e "$T/vocab$n" ]'
    sed "s/\"data\": {/\"data\": {\"max_vocab\": $n, /" "$T/tiny.json" >"$T/vocab$n.json"
    run train "$T/vocab$n.json" --set output.dir="$T/vocab$n"
    check "data.max_vocab $n in the file: exit 1, names the file, the key and the 4 specials, nothing written" \
        eval 'exits 1 && has "$T/err" "$T/vocab$n.json: data.max_vocab counts the 4 special tokens" && has "$T/err" "(data.max_vocab is $n)" && [ ! -e "$T/vocab$n" ]'
done
# data.min_count above every word's count: refused once the words are counted, with
# both sizes, the key, the most frequent word; no model, no log, no checkpoint.
run train "$T/tiny.json" --set data.min_count=100000 --set output.dir="$T/mincount"
check "data.min_count 100000: exit 1, the training file, both sizes, the key" \
    eval 'exits 1 && has "$T/err" "nmt: $T/tiny-train.tsv: the source vocabulary would hold only the 4 special tokens" && has "$T/err" "vocabularies of 4 source and 4 target entries" && has "$T/err" "data.min_count 100000 keeps no source words: the most frequent"'
check "... before training: no model.bin, train.log or checkpoint" \
    eval '[ ! -e "$T/mincount/model.bin" ] && [ ! -e "$T/mincount/train.log" ] && [ ! -e "$T/mincount/checkpoint.bin" ]'
run train "$T/tiny.json" --set data.tokenizer=bpe --set data.min_count=1000 --set output.dir="$T/mincount-bpe"
check "data.tokenizer bpe, data.min_count 1000: exit 1, no source subword pieces" \
    eval 'exits 1 && has "$T/err" "data.min_count 1000 keeps no source subword pieces" && [ ! -e "$T/mincount-bpe/model.bin" ]'
run train "$T/cls.json" --set data.min_count=1000 --set output.dir="$T/mincount-cls"
check "a classifier, data.min_count 1000: exit 1, its one vocabulary's size, the key" \
    eval 'exits 1 && has "$T/err" "$T/sent.tsv: the source vocabulary would hold only the 4 special tokens" && has "$T/err" "(a vocabulary of 4 entries): data.min_count 1000"'
run train "$T/tiny.json" --set data.max_vocab=5 --set output.dir="$T/vocab5"
check "data.max_vocab 5 (one word a side) still trains" eval 'exits 0 && [ -s "$T/vocab5/model.bin" ]'

# ---------------------------------------------------------------- 4. a model too large for the memory
# Training keeps 4 floats per parameter (weights, gradients, Adam's two moments); a
# model whose 4 copies pass the memory limit is refused before anything is allocated,
# naming the limit and by how much. An 8192-unit GRU of 2 layers over the tiny data:
# 1955824015 parameters, 31.29 GB.
BIG="--set model.embed=8192 --set model.hidden=8192 --set model.layers=2"
# Under ulimit -v 8000000 (8.19 GB). (AddressSanitizer cannot start under ulimit -v: its
# shadow memory is reserved address space; the sanitizer build is checked by the next
# check alone.)
if (ulimit -v 8000000 && "$NMT" --version) >/dev/null 2>&1; then
    (ulimit -v 8000000; $LIMIT "$NMT" train "$T/tiny.json" $BIG --set output.dir="$T/big-ulimit" >"$T/out" 2>"$T/err")
    rc=$?
    check "a model of 31.29 GB under ulimit -v 8000000: exit 1, the limit, its figure and the excess" \
        eval 'exits 1 && has "$T/err" "the model has 1955824015 parameters" && has "$T/err" "31.29 GB before any activation, 23.10 GB over this machine'"'"'s memory limit of 8.19 GB (ulimit -v 8000000)"'
    check "... refused before the model: no train.log, no checkpoint" \
        eval '[ ! -e "$T/big-ulimit/train.log" ] && [ ! -e "$T/big-ulimit/checkpoint.bin" ]'
else
    echo "  note: $NMT does not start under ulimit -v (AddressSanitizer?): the ulimit -v check is left out"
fi
# Against the machine's own RAM and swap (or its cgroup's memory.max): an 8-layer
# model of 8192 units needs 108.61 GB; where the machine has less, it is refused.
mem_kb=$(awk '/^MemTotal:|^SwapTotal:/ { kb += $2 } END { print kb + 0 }' /proc/meminfo 2>/dev/null)
cg=$(cat /sys/fs/cgroup/memory.max 2>/dev/null)
case $cg in ''|max) ;; *) [ $((cg / 1024)) -lt "${mem_kb:-0}" ] && mem_kb=$((cg / 1024)) ;; esac
if [ "${mem_kb:-0}" -gt 0 ] && [ "$mem_kb" -lt 100000000 ]; then
    run train "$T/tiny.json" --set model.embed=8192 --set model.hidden=8192 --set model.layers=8 --set output.dir="$T/big"
    check "a model of 108.61 GB on this machine (${mem_kb} kB): exit 1, names the limit and the excess" \
        eval 'exits 1 && has "$T/err" "108.61 GB before any activation" && has "$T/err" "GB over this machine'"'"'s memory limit of" && has "$T/err" "make model.embed, model.hidden or model.layers smaller" && [ ! -e "$T/big/train.log" ]'
else
    skip "a model larger than the machine" "this machine has ${mem_kb:-an unknown number of} kB of memory and swap, 100 GB or more"
fi

# ---------------------------------------------------------------- 5. long paths keep the reason
# A message is at most 511 bytes: a path of thousands is cut in the middle to "...",
# and the reason at the end stays.
long=$T
while [ ${#long} -lt 3000 ]; do long=$long/abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz0123456789ab; done
one=$(printf '%05000d' 0)   # one name of 5,000 characters
run info "$long/model.bin"
check "info of a missing path of ${#long} characters: exit 1, the path's start, ..., No such file or directory" \
    eval 'exits 1 && has "$T/err" "nmt: $T/abcdefghij" && has "$T/err" "..." && has "$T/err" "xyz0123456789ab/model.bin: No such file or directory" && [ "$(wc -c <"$T/err")" -le 518 ]'
run translate "$T/$one/model.bin" "$T/lines.txt"
check "translate with a model path of 5,000 characters: exit 1, File name too long" \
    eval 'exits 1 && has "$T/err" "nmt: $T/0000" && has "$T/err" "/model.bin: File name too long" && [ "$(wc -c <"$T/err")" -le 518 ]'
run train "$T/tiny.json" --set "output.dir=$T/$one"
check "train with an output.dir of 5,000 characters: exit 1, its start and end, File name too long" \
    eval 'exits 1 && has "$T/err" "nmt: $T/0000" && has "$T/err" "...0000" && has "$T/err" "File name too long" && [ "$(wc -c <"$T/err")" -le 518 ]'
run eval "$M" "$long/test.tsv"
check "eval of a missing test file of ${#long} characters: exit 1, No such file or directory" \
    eval 'exits 1 && has "$T/err" "/test.tsv: No such file or directory"'

# ---------------------------------------------------------------- 6. OpenBLAS under a low memory limit
# Debian's OpenBLAS 0.3.21 gives each thread a 128 MB buffer and, when the limit leaves
# no room for one, retries forever: nmt hung (in its first product, or at exit). Now
# refused at once, naming the limit and the ways out. OPENBLAS_NUM_THREADS=1 needs
# 128 + 64 MB with products, so ulimit -v 150000 (146 MB) is too low whatever the
# number of cores and 250000 enough. A hang would be killed, failing the check.
if (ulimit -v 8000000 && "$NMT" --version) >/dev/null 2>&1; then
    (ulimit -v 150000; timeout -s KILL 60 "$NMT" translate "$M" "$T/lines.txt" >"$T/out" 2>"$T/err")
    rc=$?
    check "translate under ulimit -v 150000: exit 1 at once, the limit, OpenBLAS's buffers, both ways out" \
        eval 'exits 1 && has "$T/err" "nmt: the address-space limit, ulimit -v 150000 (146 MB), is below what OpenBLAS needs here" && has "$T/err" " of 128 MB (one for each of its " && has "$T/err" "or run with OPENBLAS_NUM_THREADS=1 (ulimit -v 196608 or more)" && [ ! -s "$T/out" ]'
    (ulimit -d 150000; timeout -s KILL 60 "$NMT" eval "$M" "$VALID" >"$T/out" 2>"$T/err")
    rc=$?
    check "eval under ulimit -d 150000: exit 1, the data limit named" \
        eval 'exits 1 && has "$T/err" "the data limit, ulimit -d 150000"'
    (ulimit -v 250000; OPENBLAS_NUM_THREADS=1 timeout -s KILL 60 "$NMT" translate "$M" "$T/lines.txt" >"$T/out" 2>"$T/err")
    rc=$?
    check "translate under ulimit -v 250000 with OPENBLAS_NUM_THREADS=1: runs, exit 0, every line" \
        eval 'exits 0 && [ "$(lines "$T/out")" -eq 4 ]'
    # That run took the default, a worker per core; two do not fit: asked for, refused.
    (ulimit -v 250000; OPENBLAS_NUM_THREADS=1 timeout -s KILL 60 "$NMT" translate "$M" "$T/lines.txt" --workers 2 >"$T/out" 2>"$T/err")
    rc=$?
    check "translate --workers 2 under ulimit -v 250000: exit 1, the limit (the default above took the one worker that fits)" \
        eval 'exits 1 && has "$T/err" "nmt: the address-space limit, ulimit -v 250000" && [ ! -s "$T/out" ]'
    # Commands without products need buffers only for OpenBLAS's worker threads (none
    # with one thread); with two, --version under 146 MB used to hang at exit.
    (ulimit -v 150000; OPENBLAS_NUM_THREADS=2 timeout -s KILL 60 "$NMT" --version >"$T/out" 2>"$T/err")
    rc=$?
    check "--version under ulimit -v 150000, 2 OpenBLAS threads: ends (exit 1 naming the limit, or 0 on one core)" \
        eval '{ exits 1 && has "$T/err" "1 buffer of 128 MB (one for each worker thread, 1 of its 2)"; } || { exits 0 && has "$T/out" "nmt "; }'
else
    echo "  note: $NMT does not start under ulimit -v (AddressSanitizer?): the OpenBLAS limit checks are left out"
fi

finish
