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

finish
