#!/bin/sh
# test_train_keys.sh — end-to-end tests of the training keys of issue 29 (quality per
# minute): Adam's constants, the Transformer's separate dropout rates, batches by target
# tokens, gradient accumulation, the time budget (train.max_minutes) and what a run
# stopped by a signal leaves behind.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_train_keys.sh.
# Uses only data/mar.txt and a temporary directory; a few seconds on 2 cores.
#
# Nothing here depends on a clock: the time budget is tested with the fake training clock
# of NMT_SECONDS_PER_STEP (src/base/testhook.h), and a run to be interrupted stops itself
# at a known step (NMT_PAUSE_AT_STEP) before the test signals it.

NAME=test_train_keys
. tests/lib.sh
# field KEY FILE — the number after "KEY": on each line of FILE that has one.
field() { sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2"; }

# 300 pairs spread over the corpus (it is sorted by length): 270 trained on, 30 held out.
awk 'NR % 97 == 0' "$DATA" | head -n 300 >"$T/train.tsv"
cat >"$T/rnn.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 32, "hidden": 64},
  "train": {"batch_size": 16, "epochs": 2, "learning_rate": 0.003, "threads": 1, "log_every": 5,
            "valid_bleu_max": 10, "checkpoint_every": 0},
  "output": {"dir": "$T/runs/rnn"}
}
EOF
cat >"$T/tr.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  "model": {"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2},
  "train": {"batch_size": 16, "epochs": 2, "learning_rate": 0.001, "threads": 1, "log_every": 5,
            "checkpoint_every": 0, "lr_schedule": "inverse_sqrt", "warmup_steps": 20, "valid_bleu_max": 10},
  "output": {"dir": "$T/runs/tr"}
}
EOF
# Needs build/weights_diff (make test builds it; TOOLS names its directory).
DIFF=${TOOLS:-build}/weights_diff
if [ ! -x "$DIFF" ]; then
    bad "setup: need $DIFF (make test builds it)"
    # ---------------------------------------------------------------- 2. the Transformer's dropout rates

# model.attention_dropout and activation_dropout default to model.dropout: given as its
# value they change nothing; given otherwise they change the run, which still resumes
# exactly (one epoch, then a resumed second = two epochs, bit for bit).
run train "$T/tr.json" --quiet --set model.dropout=0.2 --set output.dir="$T/runs/drop"
cp "$T/runs/drop/model.bin" "$T/drop_one.bin"
rm -rf "$T/runs/drop"
run train "$T/tr.json" --quiet --set model.dropout=0.2 --set model.attention_dropout=0.2 \
    --set model.activation_dropout=0.2 --set output.dir="$T/runs/drop"
check "dropout: attention and activation dropout given as model.dropout's 0.2: the same model file, bit for bit" \
    eval 'exits 0 && cmp -s "$T/runs/drop/model.bin" "$T/drop_one.bin"'
check "dropout: config.json records the rates used (0.2) though the keys were left out" \
    eval 'grep -q "\"attention_dropout\":.0.2" "$T/runs/drop/config.json" && grep -q "\"activation_dropout\":.0.2" "$T/runs/drop/config.json"'
SPLIT="--set model.dropout=0.2 --set model.attention_dropout=0 --set model.activation_dropout=0.3"
run train "$T/tr.json" --quiet $SPLIT --set output.dir="$T/runs/split_ref"
check "dropout: attention 0 and activation 0.3 beside model.dropout 0.2 train other weights" \
    eval 'exits 0 && ! weights_within "$T/runs/split_ref/model.bin" "$T/drop_one.bin" 1e-4'
run train "$T/tr.json" --quiet $SPLIT --set train.epochs=1 --set output.dir="$T/runs/split"
run train --resume "$T/runs/split" --quiet --set train.epochs=2
check "dropout: with the three rates, one epoch and a resumed second = two epochs, bit for bit" \
    eval 'exits 0 && weights_within "$T/runs/split/model.bin" "$T/runs/split_ref/model.bin" 0'
run train "$T/runs/split/config.json" --resume --set model.attention_dropout=0.1 --set output.dir="$T/runs/split"
check "dropout: a resume with another model.attention_dropout: refused, naming both values" \
    eval '[ $rc -ne 0 ] && grep -q "model.attention_dropout: the checkpoint .* has 0, the config says 0.1" "$T/err"'
run train "$T/rnn.json" --set model.attention_dropout=0.1 --set output.dir="$T/runs/x"
check "dropout: model.attention_dropout for a recurrent model: refused, naming the key" \
    eval '[ $rc -ne 0 ] && grep -q "model.attention_dropout applies only to the Transformer (model.type is \"rnn\")" "$T/err"'

finish
fi
# weights_within A B TOL — the models' weights differ by at most TOL relative to the
# largest weight (tests/tools/weights_diff.c; 0: the same bits).
weights_within() { "$DIFF" "$1" "$2" "$3" >"$T/diff.txt" 2>&1; }

# ---------------------------------------------------------------- 1. Adam's constants

# The defaults are torch.optim.Adam's, the values nmt used before the keys: given
# explicitly they change nothing, bit for bit; beta2 0.98 changes the run.
run train "$T/rnn.json" --quiet --set output.dir="$T/runs/adam_default"
run train "$T/rnn.json" --quiet --set output.dir="$T/runs/adam_explicit" --set train.adam_beta1=0.9 \
    --set train.adam_beta2=0.999 --set train.adam_eps=1e-8
check "adam: betas 0.9, 0.999 and eps 1e-8 given: the same weights as without the keys, bit for bit" \
    eval 'exits 0 && weights_within "$T/runs/adam_default/model.bin" "$T/runs/adam_explicit/model.bin" 0'
run train "$T/rnn.json" --quiet --set output.dir="$T/runs/adam_098" --set train.adam_beta2=0.98
check "adam: beta2 0.98 trains other weights" \
    eval 'exits 0 && ! weights_within "$T/runs/adam_default/model.bin" "$T/runs/adam_098/model.bin" 1e-4 &&
          grep -q "^max_abs_diff" "$T/diff.txt"'
run train "$T/rnn.json" --set train.adam_beta2=1 --set output.dir="$T/runs/x"
check "adam: train.adam_beta2 1 refused, naming the key" \
    eval '[ $rc -ne 0 ] && grep -q "^nmt: --set: train.adam_beta2 must be a number >= 0 and < 1" "$T/err"'

# ---------------------------------------------------------------- 2. the Transformer's dropout rates

# model.attention_dropout and activation_dropout default to model.dropout: given as its
# value they change nothing; given otherwise they change the run, which still resumes
# exactly (one epoch, then a resumed second = two epochs, bit for bit).
run train "$T/tr.json" --quiet --set model.dropout=0.2 --set output.dir="$T/runs/drop"
cp "$T/runs/drop/model.bin" "$T/drop_one.bin"
rm -rf "$T/runs/drop"
run train "$T/tr.json" --quiet --set model.dropout=0.2 --set model.attention_dropout=0.2 \
    --set model.activation_dropout=0.2 --set output.dir="$T/runs/drop"
check "dropout: attention and activation dropout given as model.dropout's 0.2: the same model file, bit for bit" \
    eval 'exits 0 && cmp -s "$T/runs/drop/model.bin" "$T/drop_one.bin"'
check "dropout: config.json records the rates used (0.2) though the keys were left out" \
    eval 'grep -q "\"attention_dropout\":.0.2" "$T/runs/drop/config.json" && grep -q "\"activation_dropout\":.0.2" "$T/runs/drop/config.json"'
SPLIT="--set model.dropout=0.2 --set model.attention_dropout=0 --set model.activation_dropout=0.3"
run train "$T/tr.json" --quiet $SPLIT --set output.dir="$T/runs/split_ref"
check "dropout: attention 0 and activation 0.3 beside model.dropout 0.2 train other weights" \
    eval 'exits 0 && ! weights_within "$T/runs/split_ref/model.bin" "$T/drop_one.bin" 1e-4'
run train "$T/tr.json" --quiet $SPLIT --set train.epochs=1 --set output.dir="$T/runs/split"
run train --resume "$T/runs/split" --quiet --set train.epochs=2
check "dropout: with the three rates, one epoch and a resumed second = two epochs, bit for bit" \
    eval 'exits 0 && weights_within "$T/runs/split/model.bin" "$T/runs/split_ref/model.bin" 0'
run train "$T/runs/split/config.json" --resume --set model.attention_dropout=0.1 --set output.dir="$T/runs/split"
check "dropout: a resume with another model.attention_dropout: refused, naming both values" \
    eval '[ $rc -ne 0 ] && grep -q "model.attention_dropout: the checkpoint .* has 0, the config says 0.1" "$T/err"'
run train "$T/rnn.json" --set model.attention_dropout=0.1 --set output.dir="$T/runs/x"
check "dropout: model.attention_dropout for a recurrent model: refused, naming the key" \
    eval '[ $rc -ne 0 ] && grep -q "model.attention_dropout applies only to the Transformer (model.type is \"rnn\")" "$T/err"'

finish
