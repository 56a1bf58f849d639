#!/bin/sh
# test_quantize.sh — nmt quantize (issue 31): a model file with int8 weights, for a GRU, a
# Transformer and a classifier. The file is at most 0.35 of the float one and says so
# (nmt info, --json); translate, eval and serve's engine decode it with int8 products by
# default (the same bytes as --compute-type int8; float32 on request), and the same with
# --workers 2 and in sorted batches; eval scores it; classify labels with it; training
# cannot go on from it (--init-from, nmt average refuse it, naming the file); quantize
# refuses a quantized file, an output that is its input or a run's file, a missing -o;
# a damaged int8 file is refused. The int8 files' BLEU stays within a point of the float
# models' on pairs they have learnt (tiny models: the real figures are BENCHMARKS.md's).
#
# Run from the repository root after `make`: sh tests/test_quantize.sh. About 10 s on 2
# cores (three small models are trained). Nothing depends on a clock.

NAME=test_quantize
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, small_model

# Models that have learnt their 270 pairs (BLEU near 90 on them), so that the int8
# file's BLEU can be held to the float one's: the GRU of cli_data (64 units, 30 epochs),
# a Transformer as small, and a classifier (small_model).
cli_data  # $T/train.tsv, $T/tiny.json (RUN=$T/runs/tiny)
cli_tiny_run
mkdir -p "$T/gru"
cp "$RUN/model.bin" "$T/gru/model.bin"
cat >"$T/tr.json" <<EOF
{"data": {"train": "$T/train.tsv"},
 "model": {"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2, "dropout": 0},
 "train": {"batch_size": 16, "epochs": 30, "learning_rate": 0.003, "warmup_steps": 100, "threads": 1,
           "valid_bleu_max": 0, "checkpoint_every": 200},
 "output": {"dir": "$T/tr"}}
EOF
$LIMIT "$NMT" train "$T/tr.json" --quiet 2>"$T/tr.err" || { bad "setup: the Transformer"; finish; }
small_model classifier "$T/cls"
awk -F'\t' 'NR % 20 == 10 { print $1 }' "$DATA" | head -n 60 >"$T/src.txt"

size() { wc -c <"$1" | tr -d ' '; }
# at_most A B R — A <= R x B (R a fraction, via awk)
at_most() { awk -v a="$1" -v b="$2" -v r="$3" 'BEGIN { exit !(a <= r * b) }'; }
params() { "$NMT" info "$1" --json | sed -n 's/.*"parameters":\([0-9]*\).*/\1/p'; }

for m in gru tr cls; do
    run quantize "$T/$m/model.bin" -o "$T/$m.q8.bin"
    check "$m: quantize writes the int8 model, exit 0" exits 0
    check "$m: ... and says the size against the float file's" has "$T/err" "int8 weights"
    # The weights' bytes: the float file's 4 per weight, and what the int8 file adds to
    # the rest (the vocabularies and config, which tiny models' files are mostly).
    p=$(params "$T/$m/model.bin")
    rest=$(( $(size "$T/$m/model.bin") - 4 * p ))
    check "$m: its weights take at most 0.35 of the float weights' bytes ($(( $(size "$T/$m.q8.bin") - rest )) of $(( 4 * p )))" \
        at_most "$(( $(size "$T/$m.q8.bin") - rest ))" "$(( 4 * p ))" 0.35
    run info "$T/$m.q8.bin"
    check "$m: nmt info: format version 2, int8 weights" sh -c \
        "grep -q 'format version 2, a model' '$T/out' && grep -q '^weights: int8' '$T/out'"
    run info "$T/$m.q8.bin" --json
    check "$m: nmt info --json: \"weights\": \"int8\"" has "$T/out" '"weights":"int8"'
    run info "$T/$m/model.bin" --json
    check "$m: the float file: \"weights\": \"float32\"" has "$T/out" '"weights":"float32"'
done

# ---------------------------------------------------------------- decoding
for m in gru tr; do
    run translate "$T/$m.q8.bin" "$T/src.txt"
    cp "$T/out" "$T/$m.default"
    check "$m: translate the int8 file: exit 0, a line per line" sh -c "[ $rc -eq 0 ] && [ $(lines "$T/out") -eq 60 ]"
    run translate "$T/$m.q8.bin" "$T/src.txt" --compute-type int8
    check "$m: its default is --compute-type int8 (the same bytes)" cmp -s "$T/out" "$T/$m.default"
    run translate "$T/$m.q8.bin" "$T/src.txt" --compute-type int8 --workers 2 --batch 7
    check "$m: the same with 2 workers and batches of 7" cmp -s "$T/out" "$T/$m.default"
    run translate "$T/$m.q8.bin" "$T/src.txt" --compute-type float32
    check "$m: --compute-type float32 decodes its weights in float: exit 0, 60 lines" \
        sh -c "[ $rc -eq 0 ] && [ $(lines "$T/out") -eq 60 ]"
    # eval keeps the float weights for its loss: its translations are translate's.
    cut -f1 "$T/train.tsv" | head -n 100 >"$T/e.src"
    head -n 100 "$T/train.tsv" >"$T/e.tsv"
    run eval "$T/$m.q8.bin" "$T/e.tsv" --json
    check "$m: eval scores the int8 file (BLEU and loss)" sh -c "[ $rc -eq 0 ] && grep -q '\"bleu\"' '$T/out'"
    run translate "$T/$m.q8.bin" "$T/e.src" -o "$T/e.hyp"
    cut -f2 "$T/e.tsv" >"$T/e.ref"
    run score "$T/e.ref" -i "$T/e.hyp" --json
    bleu_translate=$(field bleu "$T/out")
    run eval "$T/$m.q8.bin" "$T/e.tsv" --json
    check "$m: eval's BLEU is translate's (the same int8 decoding: $bleu_translate)" \
        [ "$(field bleu "$T/out")" = "$bleu_translate" ]
done

# The Transformer's heads drawn from the int8 file (attention_heads decodes through the
# prepared weights alone: the float ones are given back).
mkdir -p "$T/svg"
head -n 3 "$T/src.txt" >"$T/three.txt"
run translate "$T/tr.q8.bin" "$T/three.txt" --attention-svg "$T/svg" --attention-heads
check "tr: --attention-svg --attention-heads from the int8 file: exit 0, heatmaps written" \
    sh -c "[ $rc -eq 0 ] && [ \$(ls '$T/svg' | wc -l) -ge 3 ]"

# Quality: each int8 file against its float model on the pairs they learnt (BLEU near
# 90: a broken int8 file would lose tens of points).
for m in gru tr; do
    run eval "$T/$m/model.bin" "$T/train.tsv" --json
    float_bleu=$(field bleu "$T/out")
    run eval "$T/$m.q8.bin" "$T/train.tsv" --json
    int8_bleu=$(field bleu "$T/out")
    check "$m: the int8 file's BLEU $int8_bleu within a point of the float model's $float_bleu (above 50)" \
        awk -v a="$int8_bleu" -v b="$float_bleu" 'BEGIN { d = a - b; exit !(d < 1 && d > -1 && b > 50) }'
done

# The classifier: its encoder's and output layer's products in int8, by default for the
# int8 file: the bytes of --compute-type int8 on the float file (the same integers), of
# --workers 2 and of --batch 1 (every product per row); its labels mostly the float
# model's; eval's accuracy is classify's.
head -n 30 data/sentiment.tsv | cut -f1 >"$T/cls.txt"
run classify "$T/cls.q8.bin" --probs all <"$T/cls.txt"
check "classifier: classify labels with the int8 file: exit 0, 30 labels" \
    sh -c "[ $rc -eq 0 ] && [ $(lines "$T/out") -eq 30 ]"
cp "$T/out" "$T/cls.q8.out"
run classify "$T/cls/model.bin" --probs all --compute-type int8 <"$T/cls.txt"
check "classifier: the int8 file = the float file with --compute-type int8, byte for byte (probabilities too)" \
    eval 'exits 0 && cmp -s "$T/out" "$T/cls.q8.out"'
run classify "$T/cls.q8.bin" --probs all --workers 2 --batch 7 <"$T/cls.txt"
check "classifier: int8 --workers 2 --batch 7 = --batch 64, byte for byte" eval 'exits 0 && cmp -s "$T/out" "$T/cls.q8.out"'
run classify "$T/cls.q8.bin" --probs all --batch 1 <"$T/cls.txt"
check "classifier: int8 --batch 1 = --batch 64, byte for byte" eval 'exits 0 && cmp -s "$T/out" "$T/cls.q8.out"'
run classify "$T/cls/model.bin" <"$T/cls.txt"
cp "$T/out" "$T/cls.f32.out"
run classify "$T/cls.q8.bin" <"$T/cls.txt"
cp "$T/out" "$T/cls.q8.labels"
agree=$(paste "$T/cls.f32.out" "$T/cls.q8.labels" | awk -F'\t' '$1 == $2' | wc -l)
check "classifier: int8's label is float32's on $agree of 30 lines (at least 27)" [ "$agree" -ge 27 ]
run classify "$T/cls.q8.bin" --compute-type float32 <"$T/cls.txt"
check "classifier: the int8 file with --compute-type float32: exit 0, 30 labels" \
    sh -c "[ $rc -eq 0 ] && [ $(lines "$T/out") -eq 30 ]"
head -n 30 data/sentiment.tsv >"$T/cls.tsv"
right=$(paste "$T/cls.q8.labels" "$T/cls.tsv" | awk -F'\t' '$1 == $3' | wc -l)
run eval "$T/cls.q8.bin" "$T/cls.tsv" --json
check "classifier: eval on the int8 file: the accuracy of classify's labels ($right of 30)" \
    eval 'exits 0 && awk -v a="$(field accuracy "$T/out")" -v r="$right" "BEGIN { d = a - r / 30; exit !(d < 1e-6 && d > -1e-6) }"'
run translate "$T/cls.q8.bin" "$T/src.txt"
check "classifier: translate refuses it (a classifier), exit 1" exits 1

# ---------------------------------------------------------------- what refuses it
run quantize "$T/tr.q8.bin" -o "$T/again.bin"
check "quantize an int8 file: exit 1, 'int8 already', nothing written" \
    sh -c "[ $rc -eq 1 ] && grep -q 'int8 already' '$T/err' && [ ! -e '$T/again.bin' ]"
cp "$T/tr/model.bin" "$T/keep.bin"
run quantize "$T/keep.bin" -o "$T/keep.bin"
check "quantize -o MODEL itself: refused, exit 1, the model untouched" \
    sh -c "[ $rc -eq 1 ] && grep -q 'which the output would replace' '$T/err' && cmp -s '$T/keep.bin' '$T/tr/model.bin'"
run quantize "$T/keep.bin" -o "$T/tr/best.bin"
check "quantize -o a run's best.bin: refused (train.lock marks the run)" \
    sh -c "[ $rc -eq 1 ] && grep -q 'run directory' '$T/err'"
run quantize "$T/keep.bin"
check "quantize without -o: usage error" usage_error quantize
run quantize -o "$T/x.bin"
check "quantize without MODEL.bin: usage error" usage_error quantize
run quantize "$T/keep.bin" "$T/keep.bin" -o "$T/x.bin"
check "quantize with two models: usage error" usage_error quantize
run quantize "$T/nothing.bin" -o "$T/x.bin"
check "quantize a missing file: exit 1, naming it, nothing written" \
    sh -c "[ $rc -eq 1 ] && grep -q 'nothing.bin' '$T/err' && [ ! -e '$T/x.bin' ]"

sed -e "s#\"dir\": \"[^\"]*\"#\"dir\": \"$T/ft\"#" "$T/tr.json" >"$T/ft.json"
run train "$T/ft.json" --init-from "$T/tr.q8.bin" --quiet
check "train --init-from an int8 file: exit 1, naming it and int8, no run directory" \
    sh -c "[ $rc -eq 1 ] && grep -q 'tr.q8.bin' '$T/err' && grep -q 'int8' '$T/err' && [ ! -e '$T/ft' ]"
run average "$T/tr.q8.bin" "$T/tr/model.bin" -o "$T/avg.bin"
check "average with an int8 file: exit 1, naming it, nothing written" \
    sh -c "[ $rc -eq 1 ] && grep -q 'tr.q8.bin' '$T/err' && [ ! -e '$T/avg.bin' ]"

# A checkpoint quantizes to a model (its optimizer state left behind).
ck=$(ls "$T/tr"/checkpoint-*.bin 2>/dev/null | head -n 1)
if [ -n "$ck" ]; then
    run quantize "$ck" -o "$T/ck.q8.bin"
    run info "$T/ck.q8.bin"
    check "a checkpoint quantizes to a model (no optimizer state)" grep -q "format version 2, a model)" "$T/out"
else
    skip "a checkpoint quantizes to a model" "the small run wrote no checkpoint-*.bin"
fi

# Damage: the file cut short, and one byte of its weights changed.
head -c 5000 "$T/tr.q8.bin" >"$T/cut.bin"
run translate "$T/cut.bin" "$T/src.txt"
check "a truncated int8 file: refused, exit 1, naming it" sh -c "[ $rc -eq 1 ] && grep -q 'cut.bin' '$T/err'"
cp "$T/tr.q8.bin" "$T/flip.bin"
printf '\177' | dd of="$T/flip.bin" bs=1 seek=$(( $(size "$T/flip.bin") - 100 )) conv=notrunc 2>/dev/null
run translate "$T/flip.bin" "$T/src.txt"
check "a damaged int8 file: refused (checksum), exit 1" sh -c "[ $rc -eq 1 ] && grep -q 'damaged' '$T/err'"

finish
