#!/bin/sh
# test_train_keys.sh — end-to-end tests of the training keys of issue 29 (quality per
# minute): Adam's constants, the Transformer's separate dropout rates, batches by target
# tokens, gradient accumulation (on one worker and on two), the time budget
# (train.max_minutes) and what a run stopped by a signal leaves behind.
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
    finish
fi
# weights_within A B TOL — the models' weights differ by at most TOL relative to the
# largest weight (tests/tools/weights_diff.c; 0: the same bits).
weights_within() { "$DIFF" "$1" "$2" "$3" >"$T/diff.txt" 2>&1; }

# The plain run, the reference of several checks below.
run train "$T/rnn.json" --quiet --set output.dir="$T/runs/rnn_plain"
if [ "$rc" -ne 0 ]; then
    bad "setup: the plain run"
    sed 's/^/    | /' "$T/err" | tail -n 5
    finish
fi

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
check "dropout: a resume with another model.attention_dropout by --set: a usage error (exit 2), naming both values" \
    eval 'exits 2 && grep -q "^nmt: --set: model.attention_dropout: the checkpoint .* has 0, --set says 0.1" "$T/err"'
run train "$T/rnn.json" --set model.attention_dropout=0.1 --set output.dir="$T/runs/x"
check "dropout: model.attention_dropout for a recurrent model: refused, naming the key" \
    eval '[ $rc -ne 0 ] && grep -q "model.attention_dropout applies only to the Transformer (model.type is \"rnn\")" "$T/err"'

# ---------------------------------------------------------------- 3. gradient accumulation

# train.accumulate 2 with batches of 32 makes the updates batches of 64 make, up to the
# order of the float sums: every step's loss and the final weights agree closely (no
# dropout, one thread), and as many updates are made; batches of 32 alone are another run.
run train "$T/rnn.json" --quiet --set train.batch_size=64 --set output.dir="$T/runs/b64"
run train "$T/rnn.json" --quiet --set train.batch_size=32 --set train.accumulate=2 --set output.dir="$T/runs/b32x2"
check "accumulate 2 x 32: exit 0, as many updates as batches of 64 ($(last_step "$T/runs/b64/train.log"))" \
    eval 'exits 0 && [ -n "$(last_step "$T/runs/b64/train.log")" ] &&
          [ "$(last_step "$T/runs/b32x2/train.log")" = "$(last_step "$T/runs/b64/train.log")" ]'
check "accumulate 2 x 32: the weights of batches of 64, within 2e-5 of the largest weight" \
    weights_within "$T/runs/b64/model.bin" "$T/runs/b32x2/model.bin" 2e-5
sed 's/^/    | /' "$T/diff.txt"
field loss "$T/runs/b64/train.log" >"$T/l64"
field loss "$T/runs/b32x2/train.log" >"$T/l32x2"
check "accumulate 2 x 32: every logged loss within 1e-5 (relative) of batches of 64's" \
    eval '[ -s "$T/l64" ] && paste "$T/l64" "$T/l32x2" | awk "{ d = \$1 - \$2; if (d < 0) d = -d; if (d > 1e-5 * \$1 || NF != 2) bad = 1 } END { exit bad }"'
run train "$T/rnn.json" --quiet --set train.batch_size=32 --set output.dir="$T/runs/b32"
check "accumulate: batches of 32 without it are another run (weights apart by more than 1e-3)" \
    eval '! weights_within "$T/runs/b64/model.bin" "$T/runs/b32/model.bin" 1e-3'
# The Transformer (packed rows, label smoothing): the same.
run train "$T/tr.json" --quiet --set train.batch_size=64 --set train.label_smoothing=0.1 --set output.dir="$T/runs/tb64"
run train "$T/tr.json" --quiet --set train.batch_size=16 --set train.accumulate=4 --set train.label_smoothing=0.1 \
    --set output.dir="$T/runs/tb16x4"
check "accumulate 4 x 16, a Transformer: the weights of batches of 64, within 2e-5" \
    eval 'exits 0 && weights_within "$T/runs/tb64/model.bin" "$T/runs/tb16x4/model.bin" 2e-5'
sed 's/^/    | /' "$T/diff.txt"
# On 2 workers (train.workers) each batch of an update is split again between them and
# every part's gradient is added to the update's: the same update (no dropout), up to the
# order of the float sums: every logged loss as one worker's, the weights of batches of 64.
run train "$T/rnn.json" --quiet --set train.batch_size=32 --set train.accumulate=2 --set train.workers=2 \
    --set output.dir="$T/runs/b32x2w2"
field loss "$T/runs/b32x2w2/train.log" >"$T/l32x2w2"
check "accumulate 2 x 32 on 2 workers: exit 0, as many updates, every logged loss within 1e-5 (relative) of one worker's" \
    eval 'exits 0 && [ "$(last_step "$T/runs/b32x2w2/train.log")" = "$(last_step "$T/runs/b32x2/train.log")" ] &&
          [ -s "$T/l32x2" ] && paste "$T/l32x2" "$T/l32x2w2" | awk "{ d = \$1 - \$2; if (d < 0) d = -d; if (d > 1e-5 * \$1 || NF != 2) bad = 1 } END { exit bad }"'
check "accumulate 2 x 32 on 2 workers: the weights of batches of 64, within 2e-5" \
    weights_within "$T/runs/b64/model.bin" "$T/runs/b32x2w2/model.bin" 2e-5
sed 's/^/    | /' "$T/diff.txt"
run train "$T/rnn.json" --set train.accumulate=0 --set output.dir="$T/runs/x"
check "accumulate 0: refused, naming the key" \
    eval '[ $rc -ne 0 ] && grep -q "^nmt: --set: train.accumulate must be an integer from 1 to 1024" "$T/err"'

# ---------------------------------------------------------------- 4. batches by target tokens

# A batch is the next pairs of the shuffled order up to train.batch_tokens target tokens:
# each holds at most 100, and all but an epoch's last more than 100 - 21 (a target has at
# most 20 words and <eos>), so an epoch of N target tokens has ceil(N / 100) to
# ceil(N / 79) updates.
run train "$T/rnn.json" --quiet --set train.batch_tokens=100 --set train.batch_size=64 --set output.dir="$T/runs/tok"
epoch1=$(grep '"event":"epoch"' "$T/runs/tok/train.log" | head -n 1)
n_tok=$(echo "$epoch1" | sed -n 's/.*"target_tokens":\([0-9]*\).*/\1/p')
n_upd=$(echo "$epoch1" | sed -n 's/.*"step":\([0-9]*\).*/\1/p')
check "batch_tokens 100: an epoch of $n_tok target tokens in $n_upd updates, between N/100 and N/79" \
    eval 'exits 0 && [ -n "$n_upd" ] && [ "$n_upd" -ge $(( (n_tok + 99) / 100 )) ] && [ "$n_upd" -le $(( (n_tok + 78) / 79 )) ]'
run train "$T/rnn.json" --quiet --set train.batch_tokens=1000000 --set output.dir="$T/runs/tok_all"
check "batch_tokens above every batch's tokens: batches of train.batch_size, the very weights" \
    eval 'exits 0 && weights_within "$T/runs/tok_all/model.bin" "$T/runs/rnn_plain/model.bin" 0'
run train "$T/rnn.json" --set train.batch_tokens=100 --set train.bucket=true --set output.dir="$T/runs/x"
check "batch_tokens with bucketed batches: refused, naming both keys" \
    eval '[ $rc -ne 0 ] && grep -q "train.batch_tokens applies only to shuffled batches (train.bucket is true)" "$T/err"'
# killed_and_resumed CONFIG NAME KEYS — CONFIG with KEYS (checkpoints every 3 updates) run
# through into $T/runs/NAME_ref, and again into $T/runs/NAME_kill killed after update 11
# and resumed (from update 9): passes when the kill came, the resume exited 0 from update
# 9 and the weights are the uninterrupted run's, bit for bit.
killed_and_resumed() {
    run train "$1" --quiet $3 --set train.checkpoint_every=3 --set output.dir="$T/runs/$2_ref"
    : >"$T/bg.err"
    start_paused 11 train "$1" --quiet $3 --set train.checkpoint_every=3 --set output.dir="$T/runs/$2_kill"
    if stopped && kill -9 "$pid"; then { wait "$pid"; } 2>/dev/null; killed=1; else killed=0; fi
    run train --resume "$T/runs/$2_kill" --quiet
    [ $killed = 1 ] && exits 0 && grep -q "\"event\":\"resume\",\"step\":9," "$T/runs/$2_kill/train.log" &&
        weights_within "$T/runs/$2_kill/model.bin" "$T/runs/$2_ref/model.bin" 0
}
# Resumed inside an epoch, with batches by tokens and accumulation: the run ends as the
# uninterrupted one, bit for bit.
check "batch_tokens and accumulate: killed after update 11, resumed from update 9: the uninterrupted run's weights" \
    killed_and_resumed "$T/rnn.json" tok "--set train.batch_tokens=120 --set train.accumulate=2"
# The same with the Transformer's three dropouts on 2 workers (each batch of an update
# draws its own masks, worker 1's from a stream numbered by the step and the batch).
check "batch_tokens, accumulate, 2 workers, dropout: killed after update 11, resumed from 9: the same weights" \
    killed_and_resumed "$T/tr.json" tok_w2 "--set train.batch_tokens=120 --set train.accumulate=2 --set train.workers=2
        --set model.dropout=0.2 --set model.attention_dropout=0.1 --set model.activation_dropout=0.3"

# ---------------------------------------------------------------- 5. the time budget

# NMT_SECONDS_PER_STEP=6: the training clock says 6 s per update, so train.max_minutes 1
# is reached at update 10, whatever the machine does. The run ends there as after its
# last epoch: a validation, best.bin, model.bin, training.svg, and which file to use.
run_budget() { NMT_SECONDS_PER_STEP=6 $LIMIT "$NMT" train "$@" >"$T/out" 2>"$T/err"; rc=$?; }
B=$T/runs/budget
run_budget "$T/rnn.json" --set train.max_minutes=1 --set output.dir="$B"
check "max_minutes 1 at 6 s a step: exit 0, the last update 10 ($(last_step "$B/train.log"))" \
    eval 'exits 0 && [ "$(last_step "$B/train.log")" = 10 ]'
check "max_minutes: says it stops at the budget" grep -q "^nmt: train.max_minutes 1: 1.0 minutes of training at step 10; stopping" "$T/err"
check "max_minutes: a validation at step 10, model.bin, best.bin, training.svg and a checkpoint written" \
    eval 'grep -q "\"event\":\"validation\",\"step\":10," "$B/train.log" && [ -s "$B/model.bin" ] && [ -s "$B/best.bin" ] &&
          [ -s "$B/training.svg" ] && [ -s "$B/checkpoint-10.bin" ]'
check "max_minutes: the last line names best.bin as the model to translate with" \
    eval 'tail -n 1 "$T/err" | grep -q "^nmt: the best validation loss, [0-9.]*, was at step 10: $B/best.bin, the model to translate with"'
run_budget --resume "$B"
check "max_minutes: resumed with the same budget: nothing to do" \
    eval 'exits 0 && grep -q "finished at step 10; .* up to date: nothing to do" "$T/err"'
run_budget --resume "$B" --set train.max_minutes=2.5
check "max_minutes: resumed with 2.5: goes on from step 10 to step 25" \
    eval 'exits 0 && grep -q "finished at step 10; train.epochs 2 and train.max_steps 0 (train.max_minutes 2.5) let it go on" "$T/err" &&
          [ "$(last_step "$B/train.log")" = 25 ]'
run_budget "$T/rnn.json" --set train.max_minutes=2.5 --set output.dir="$T/runs/budget25"
check "max_minutes: 1 then resumed with 2.5 = 2.5 at once, bit for bit (the budget's validation at step 10 aside)" \
    eval 'exits 0 && [ "$(last_step "$T/runs/budget25/train.log")" = 25 ] &&
          weights_within "$B/model.bin" "$T/runs/budget25/model.bin" 0'
check "max_minutes: config.json records the raised budget" grep -q '"max_minutes":.2.5' "$B/config.json"
# Reached at an epoch's end (17 updates an epoch, 1.7 minutes at 6 s): the epoch's end
# is the stop; no budget past the run's epochs changes anything.
run_budget "$T/rnn.json" --set train.max_minutes=1.7 --set output.dir="$T/runs/budget17"
last_validation() { grep '"event":"validation"' "$1" | tail -n 1 | sed -n 's/.*"step":\([0-9]*\).*/\1/p'; }
check "max_minutes reached at the first epoch's end (update 17): ends there, model.bin written" \
    eval 'exits 0 && [ "$(last_validation "$T/runs/budget17/train.log")" = 17 ] &&
          [ "$(last_step "$T/runs/budget17/train.log")" = 15 ] && [ -s "$T/runs/budget17/model.bin" ]'
run_budget "$T/rnn.json" --set train.max_minutes=100 --set output.dir="$T/runs/budget100"
check "max_minutes past the run's 2 epochs: the run without a budget, bit for bit" \
    eval 'exits 0 && weights_within "$T/runs/budget100/model.bin" "$T/runs/rnn_plain/model.bin" 0'
# An unfinished run (killed after update 20; its checkpoint at the first epoch's end,
# 17 updates, 1.7 minutes) resumed with a budget it has used up: refused, naming it.
: >"$T/bg.err"
NMT_SECONDS_PER_STEP=6 start_paused 20 train "$T/rnn.json" --quiet --set output.dir="$T/runs/budget_kill"
if stopped && kill -9 "$pid"; then { wait "$pid"; } 2>/dev/null; fi
run_budget --resume "$T/runs/budget_kill" --set train.max_minutes=1.5
check "max_minutes: an unfinished run resumed with a budget it has used (--set): exit 2, naming both" \
    eval 'exits 2 && grep -q "^nmt: --set: train.max_minutes: the checkpoint .*checkpoint-17.bin has trained 1.70 minutes, train.max_minutes 1.5 is not beyond it" "$T/err"'
run train "$T/rnn.json" --set train.max_minutes=-1 --set output.dir="$T/runs/x"
check "max_minutes -1: refused, naming the key" \
    eval '[ $rc -ne 0 ] && grep -q "^nmt: --set: train.max_minutes must be a number from 0 to" "$T/err"'
# From a model's weights (--init-from) the budget counts the new run's updates.
run_budget "$T/rnn.json" --init-from "$T/runs/rnn_plain/model.bin" --set train.max_minutes=0.5 \
    --set output.dir="$T/runs/budget_init"
check "max_minutes with --init-from: the new run stops at its update 5" \
    eval 'exits 0 && [ "$(last_step "$T/runs/budget_init/train.log")" = 5 ] && [ -s "$T/runs/budget_init/model.bin" ]'

# ---------------------------------------------------------------- 6. a run stopped by a signal

# SIGTERM after update 5, before any validation: the checkpoint, training.svg, no
# model.bin, and the message names the checkpoint as the file to translate with.
S=$T/runs/stopped
: >"$T/bg.err"
start_paused 5 train "$T/rnn.json" --quiet --set output.dir="$S"
if stopped; then kill -TERM "$pid" && kill -CONT "$pid"; fi
finish_bg
check "SIGTERM after update 5: exit 143, checkpoint-5.bin and training.svg, no model.bin" \
    eval '[ $rc -eq 143 ] && [ -s "$S/checkpoint-5.bin" ] && [ -s "$S/training.svg" ] && [ ! -e "$S/model.bin" ]'
check "SIGTERM before any validation: the message says there is no best.bin yet and names the checkpoint" \
    grep -q "^nmt: interrupted at step 5; checkpoint written to $S/checkpoint-5.bin; to translate meanwhile: $S/checkpoint-5.bin, the weights at step 5 (no validation yet, so no best.bin); resume with: nmt train --resume $S\$" "$T/bg.err"
echo "Hello." | $LIMIT "$NMT" translate "$S/checkpoint-5.bin" >"$T/out" 2>"$T/err"
check "... and that checkpoint translates" eval '[ $? -eq 0 ] && [ "$(lines "$T/out")" = 1 ]'

finish
