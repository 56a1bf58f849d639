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

finish
