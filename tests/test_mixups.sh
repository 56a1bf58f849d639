#!/bin/sh
# test_mixups.sh — a careless user's mix-ups, each met with a refusal or a warning
# instead of a crash or a silently wrong result: the wrong kind of model in an
# ensemble, a classifier's text column that is its label column, a labelled file given
# to classify, a label column of ids, an eval with nothing to score, a model file whose
# stored config and architecture disagree; and messages that name where a value came
# from and speak of each model's own measures.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_mixups.sh

NAME=test_mixups
. tests/lib.sh

SENT=$(pwd)/data/sentiment.tsv
# One labelled file, two models trained on it: a translation model (text -> label, every
# line kept) and a classifier. More 0s than 1s, so that both put the labels in the same
# order: their vocabularies are the same.
{ grep '	0$' "$SENT" | head -n 200; grep '	1$' "$SENT" | head -n 100; } >"$T/lab.tsv"
cat >"$T/lt.json" <<EOF
{"data": {"train": "$T/lab.tsv", "max_len": 400}, "model": {"cell": "gru", "embed": 8, "hidden": 8},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/lt"}}
EOF
cat >"$T/lc.json" <<EOF
{"data": {"train": "$T/lab.tsv"}, "model": {"type": "classifier", "cell": "gru", "embed": 8, "hidden": 8},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/lc"}}
EOF
for m in lt lc; do
    "$NMT" train --quiet "$T/$m.json" >"$T/$m.out" 2>"$T/$m.err" || { bad "setup: train $m"; cat "$T/$m.err"; finish; }
done
printf 'Good case.\nBad phone.\n' >"$T/two.txt"

# ---------------------------------------------------------------- ensembles

run translate "$T/two.txt" --models "$T/lt/model.bin" "$T/lc/model.bin"
check "translate --models TRANSLATOR CLASSIFIER (same vocabularies): exit 1, naming the classifier, no crash" \
    eval 'exits 1 && has "$T/err" "$T/lc/model.bin: a classifier" && [ ! -s "$T/out" ]'
run translate "$T/two.txt" --models "$T/lt/model.bin" "$T/lt/model.bin" "$T/lc/model.bin"
check "translate --models T T CLASSIFIER: exit 1, the third named" \
    eval 'exits 1 && has "$T/err" "$T/lc/model.bin: a classifier"'

# ---------------------------------------------------------------- --init-from a file whose two descriptions disagree

# A model file says what it is twice: its architecture sections (which nmt info and
# translate read) and the config it was trained with (section CONF). tests/tools/
# set_config writes one whose CONF says otherwise, every checksum valid.
TOOLS=${TOOLS:-build}
[ -x "$TOOLS/set_config" ] || TOOLS=build
SET_CONFIG=$TOOLS/set_config
awk 'NR % 97 == 0' "$DATA" | head -n 200 >"$T/pairs.tsv"
cat >"$T/tf.json" <<EOF
{"data": {"train": "$T/pairs.tsv"}, "model": {"type": "transformer", "embed": 8, "heads": 2, "ff": 16, "layers": 1},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/tf"}}
EOF
"$NMT" train --quiet "$T/tf.json" >/dev/null 2>&1 || bad "setup: a tiny Transformer"
cat >"$T/ft.json" <<EOF
{"data": {"train": "$T/pairs.tsv"}, "train": {"epochs": 1, "threads": 1}, "output": {"dir": "$T/ft"}}
EOF
for edit in "model.heads 4" "model.activation \"gelu\"" "model.norm \"post\"" "model.ff 32"; do
    key=${edit% *} value=${edit#* }
    rm -rf "$T/ft"
    if "$SET_CONFIG" "$T/tf/model.bin" "$T/edited.bin" "$key" "$value"; then
        run train "$T/ft.json" --init-from "$T/edited.bin"
        check "train --init-from a Transformer whose CONF says $key $value: exit 1, naming $key; no run directory" \
            eval 'exits 1 && has "$T/err" "its architecture sections and its stored config (section CONF) disagree on $key" && [ ! -e "$T/ft" ]'
    else
        bad "setup: set_config $key"
    fi
done
rm -rf "$T/ft"
"$SET_CONFIG" "$T/lc/model.bin" "$T/edited.bin" model.pooling '"mean"'
sed "s|$T/pairs.tsv|$T/lab.tsv|" "$T/ft.json" >"$T/ftc.json"
run train "$T/ftc.json" --init-from "$T/edited.bin"
check "train --init-from a classifier whose CONF says mean pooling (attention in CLSF): exit 1, naming model.pooling" \
    eval 'exits 1 && has "$T/err" "disagree on model.pooling (\"attention\" and \"mean\")" && [ ! -e "$T/ft" ]'
run train "$T/ft.json" --init-from "$T/tf/model.bin" --set train.max_steps=2 --quiet
check "train --init-from the same file unedited: exit 0" exits 0

# ---------------------------------------------------------------- where a value came from

rm -rf "$T/ft"
run train "$T/ft.json" --init-from "$T/tf/model.bin" --set model.heads=4
check "--init-from M --set model.heads=4 (the model has 2): usage error naming --set, not the config file" \
    eval 'usage_error train && has "$T/err" "nmt: --set: model.heads: the model $T/tf/model.bin has 2, --set says 4"'
run train "$T/ft.json" --init-from "$T/tf/model.bin" --set data.min_count=3
check "--init-from M --set data.min_count=3 (the model's vocabulary is kept): usage error naming --set" \
    eval 'usage_error train && has "$T/err" "--set: data.min_count 3 builds a vocabulary"'
sed 's|"data": {|"data": {"max_vocab": 50, |' "$T/ft.json" >"$T/ft-vocab.json"
run train "$T/ft-vocab.json" --init-from "$T/tf/model.bin"
check "--init-from M with data.max_vocab 50 in the file: exit 1 naming the file and the key; no run directory" \
    eval 'exits 1 && has "$T/err" "$T/ft-vocab.json: data.max_vocab 50 builds a vocabulary" && [ ! -e "$T/ft" ]'

# ---------------------------------------------------------------- a classifier's columns and labels

# The text column is the label column: the classifier would learn each label from itself.
cat >"$T/cl.json" <<EOF
{"data": {"train": "$T/lab.tsv"}, "model": {"type": "classifier", "cell": "gru", "embed": 8, "hidden": 8},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/cl"}}
EOF
run train "$T/cl.json" --set data.label_column=1
check "classifier, --set data.label_column=1 (the text column): usage error naming both keys; no run directory" \
    eval 'usage_error train && has "$T/err" "data.label_column must not be data.text_column" && [ ! -e "$T/cl" ]'
sed 's|"data": {|"data": {"text_column": 2, |' "$T/cl.json" >"$T/cl2.json"
run train "$T/cl2.json"
check "classifier, data.text_column 2 with the label the last column of 2: exit 1 naming line 1; no run directory" \
    eval 'exits 1 && has "$T/err" "$T/lab.tsv: line 1: the label column (the last, 2) is the text column (2)" && [ ! -e "$T/cl" ]'
run eval "$T/lc/model.bin" "$T/lab.tsv" --text-column 2 --label-column 2
check "eval --text-column 2 --label-column 2: usage error" \
    eval 'usage_error eval && has "$T/err" "are the same column"'
run eval "$T/lc/model.bin" "$T/lab.tsv" --label-column 1
check "eval --label-column 1 (the model's text column): exit 1, naming line 1, no accuracy" \
    eval 'exits 1 && has "$T/err" "line 1: the label column (1) is the text column (1)" && [ ! -s "$T/out" ]'

# Nothing to score: an error, as a translation model's eval of such a file is.
: >"$T/empty.tsv"
run eval "$T/lc/model.bin" "$T/empty.tsv"
check "classifier eval of an empty file: exit 1, no accuracy printed" \
    eval 'exits 1 && has "$T/err" "$T/empty.tsv: no line to score" && [ ! -s "$T/out" ]'
printf 'Fine phone.\tgood\nAwful.\tbad\n' >"$T/unseen.tsv"
run eval "$T/lc/model.bin" "$T/unseen.tsv"
check "classifier eval where every label is unseen: exit 1, saying why" \
    eval 'exits 1 && has "$T/err" "no line to score: 2 read, 2 with a label the model never saw" && [ ! -s "$T/out" ]'

# A label column of nearly unique values: the columns swapped (the text as the label),
# or an id column.
awk -F'\t' '{print $2 "\t" $1}' "$T/lab.tsv" >"$T/swapped.tsv"
sed "s|$T/lab.tsv|$T/swapped.tsv|" "$T/cl.json" >"$T/swapped.json"
run train "$T/swapped.json"
check "classifier on swapped columns (the text as the label): exit 1, counting the lines of unique labels; no run directory" \
    eval 'exits 1 && has "$T/err" "training lines have a label no other line has" && has "$T/err" "the label column (the last column) holds ids or text" && [ ! -e "$T/cl" ]'
awk -F'\t' '{print $1 "\tid-" NR "\t" $2}' "$T/lab.tsv" >"$T/ids.tsv"
sed "s|$T/lab.tsv|$T/ids.tsv|" "$T/cl.json" >"$T/ids.json"
run train "$T/ids.json" --set data.label_column=2
check "classifier with data.label_column an id column: exit 1, naming column 2" \
    eval 'exits 1 && has "$T/err" "(column 2, data.label_column) holds ids or text"'

# 60 labels, three lines each: a classifier it trains, whose confusion matrix is not
# printed (it grows with the square of the labels).
awk 'BEGIN { for (k = 1; k <= 60; k++) for (j = 1; j <= 3; j++) printf "word%d other%d\tL%d\n", k, j, k }' >"$T/many.tsv"
sed "s|$T/lab.tsv|$T/many.tsv|; s|\"dir\": \"$T/cl\"|\"dir\": \"$T/many\"|" "$T/cl.json" >"$T/many.json"
run train "$T/many.json" --set data.valid_fraction=0 --quiet
check "classifier of 60 labels, 3 lines each: trains (exit 0)" exits 0
run eval "$T/many/model.bin" "$T/many.tsv"
check "... eval: exit 0, the table of 60 labels, the matrix not shown (over 50 labels)" \
    eval 'exits 0 && has "$T/out" "confusion matrix: not shown for 60 labels (more than 50)" && [ "$(lines "$T/out")" -lt 70 ]'
run eval "$T/many/model.bin" "$T/many.tsv" --json
check "... eval --json: \"confusion\": null" eval 'exits 0 && has "$T/out" "\"confusion\":null"'

# nmt classify on the labelled file itself: the text column is read, not the gold label.
cut -f 1 "$T/lab.tsv" >"$T/text.txt"
"$NMT" classify "$T/lc/model.bin" --probs all "$T/text.txt" >"$T/text.out" 2>/dev/null
run classify "$T/lc/model.bin" --probs all "$T/lab.tsv"
check "classify MODEL labelled.tsv: the text column read (the same output as for the text alone), with a note" \
    eval 'exits 0 && cmp -s "$T/out" "$T/text.out" && has "$T/err" "has tabs: such lines are read as the training data was, column 1 the text"'

# ---------------------------------------------------------------- what would be ignored is refused

run translate "$T/lt/model.bin" "$T/two.txt" --length-penalty 1
check "translate --length-penalty without beam search: usage error, not ignored" \
    eval 'usage_error translate && has "$T/err" "--length-penalty scores beam search"'
run translate "$T/lt/model.bin" "$T/two.txt" --nbest-format nmt
check "translate --nbest-format without --nbest: usage error" \
    eval 'usage_error translate && has "$T/err" "--nbest-format is the layout of --nbest'"'"'s lines"'
run translate "$T/tf/model.bin" "$T/two.txt" --align-layer 1
check "translate --align-layer with nothing that shows attention: usage error" \
    eval 'usage_error translate && has "$T/err" "--align-layer chooses the attention"'
run eval "$T/lt/model.bin" "$T/lab.tsv" --length-penalty 1
check "eval --length-penalty without --beam: usage error" \
    eval 'usage_error eval && has "$T/err" "--length-penalty scores beam search"'
run train "$T/tf.json" --set train.teacher_forcing=0.8 --set output.dir="$T/tf2"
check "train a Transformer with --set train.teacher_forcing=0.8 (its decoder reads gold words only): usage error" \
    eval 'usage_error train && has "$T/err" "train.teacher_forcing applies only to recurrent translation models"'
run train "$T/tf.json" --quiet --verbose --set output.dir="$T/tf2"
check "train --quiet --verbose: usage error" eval 'usage_error train && [ ! -e "$T/tf2" ]'
printf 'a b\n' >"$T/ref.txt"
run score "$T/ref.txt" -i "$T/ref.txt" -l en-zh -tok 13a
check "score -l en-zh -tok 13a: -tok wins, and a note says -l's choice is not used" \
    eval 'exits 0 && has "$T/err" "-tok 13a wins over the tokeniser -l en-zh would choose"'
# data.valid that is data.train's file: validation on the training pairs.
run train "$T/lt.json" --set data.valid="$T/lab.tsv" --set output.dir="$T/vt"
check "train with data.valid = data.train: usage error naming --set and both keys; no run directory" \
    eval 'usage_error train && has "$T/err" "data.valid $T/lab.tsv is data.train'"'"'s file" && [ ! -e "$T/vt" ]'
ln -s "$T/lab.tsv" "$T/lab-link.tsv"
sed "s|\"max_len\": 400|\"max_len\": 400, \"valid\": \"$T/lab-link.tsv\"|; s|\"dir\": \"$T/lt\"|\"dir\": \"$T/vt\"|" "$T/lt.json" >"$T/vt.json"
run train "$T/vt.json"
check "train with data.valid a link to data.train, in the file: exit 1 naming the config" \
    eval 'exits 1 && has "$T/err" "$T/vt.json: data.valid" && [ ! -e "$T/vt" ]'
# --export-batches with --init-from: the batches in the model's units, as its training would be.
run train "$T/ft.json" --init-from "$T/tf/model.bin" --set output.dir="$T/ex" --set data.train="$T/lab.tsv" \
    --export-batches "$T/ex.bin"
vocab_src=$("$NMT" info "$T/tf/model.bin" --json | sed -E 's/.*"src_vocab":([0-9]+).*/\1/')
check "train --init-from M --export-batches F: exit 0, the batches in M's vocabulary ($vocab_src source units)" \
    eval 'exits 0 && has "$T/err" "vocabularies: $vocab_src source"'

finish
