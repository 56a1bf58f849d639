#!/bin/sh
# test_cli_resume.sh — checkpoints and resuming end to end: a run killed or
# interrupted any number of times ends bit for bit as the uninterrupted one; nmt average;
# resuming with raised limits; fine-tuning (--init-from); signals, a second nmt train on
# the same run, refused resumes, threads and OpenBLAS kernels, damaged and missing
# checkpoints, a full disk.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_cli_resume.sh
# NMT=path/to/nmt selects another binary. Prints "  ok what" / "FAIL what" per check,
# "skip what: why" for each check that cannot run here (a tool it needs is missing), and
# ends with "test_cli_resume: N passed, M failed, K skipped".
#
# Nothing here depends on a clock: a run to be interrupted stops itself at a known step
# (NMT_PAUSE_AT_STEP, src/base/testhook.h) and the test waits for that before it acts;
# the time limits only keep a hung nmt from hanging the suite.

NAME=test_cli_resume
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, one_error, field, cli_data;
                # $LIMIT is 300 s, generous for the sanitizer build

cli_data  # $T/train.tsv, $T/two.txt

# ---------------------------------------------------------------- 1. checkpoints and resume

# A run stopped any number of times and resumed must end exactly as the uninterrupted
# run: the same model.bin and best.bin, bit for bit, and the same train.log apart from
# timings and the resume events. The config uses every random stream and every piece
# of state a checkpoint must carry: dropout and scheduled sampling draw from the model's
# random stream, bucketed batches from the shuffling stream, the plateau schedule and
# best.bin from the validations (every 10 steps), label smoothing and a decaying
# teacher-forcing rate from the step count; Adam's constants from the config (its
# checkpoint section holds the moments, not these); checkpoints every 7 steps, so that
# kills land between them and the work since the last one is redone. 6 epochs of 17
# steps.
R=$T/runs/resume
C=$T/resume.json
cat >"$C" <<EOF2
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 32, "hidden": 64, "dropout": 0.2},
  "train": {"batch_size": 16, "epochs": 6, "learning_rate": 0.003, "adam_beta2": 0.98, "threads": 1, "log_every": 1,
            "checkpoint_every": 7, "validate_every": 10, "valid_bleu_max": 10, "lr_schedule": "plateau",
            "label_smoothing": 0.1, "teacher_forcing": 0.9, "teacher_forcing_decay": "linear",
            "teacher_forcing_final": 0.5},
  "output": {"dir": "$R"}
}
EOF2
# The log without what differs between runs: timings and the resume/interrupted events.
steady_log() {
    grep -v '"event":"\(resume\|interrupted\)"' "$1" |
        sed -e 's/"tokens_per_s":[0-9.eE+-]*//' -e 's/"seconds":[0-9.]*//' -e 's/"elapsed":[0-9.]*//'
}
# same_run DIR WHAT [REF] — DIR's model.bin, best.bin and train.log are the uninterrupted
# run's (REF, default $T/runs/straight).
same_run() {
    ref=${3:-$T/runs/straight}
    check "$2: model.bin bit-identical to the uninterrupted run's" cmp -s "$1/model.bin" "$ref/model.bin"
    check "$2: best.bin bit-identical" cmp -s "$1/best.bin" "$ref/best.bin"
    steady_log "$1/train.log" >"$T/log.a"
    steady_log "$ref/train.log" >"$T/log.b"
    check "$2: train.log the same apart from timings and resume events" eval '[ -s "$T/log.a" ] && cmp -s "$T/log.a" "$T/log.b"'
}
# start, start_paused, stopped, last_step, finish_bg: tests/lib.sh.
nth_checkpoints() { ls "$R" | grep -c '^checkpoint-[0-9]*\.bin$'; }

# The uninterrupted run.
rm -rf "$R"
run train "$C" --quiet
check "resume: the uninterrupted run: exit 0" exits 0
check "keep_checkpoints 3 (default): three checkpoint-STEP.bin files ($(nth_checkpoints))" [ "$(nth_checkpoints)" = 3 ]
check "checkpoints: the newest is checkpoint-102.bin, and checkpoint.bin is the same file" \
    eval '[ -s "$R/checkpoint-102.bin" ] && cmp -s "$R/checkpoint.bin" "$R/checkpoint-102.bin"'
# nmt average: the run's three checkpoints into one model file.
set -- "$R"/checkpoint-[0-9]*.bin
run average "$@" -o "$T/avg.bin"
check "average 3 checkpoints: exit 0, says what it wrote" \
    eval 'exits 0 && grep -q "^nmt: wrote $T/avg.bin, the average of 3 models" "$T/err"'
run info "$T/avg.bin"
check "average: a model file (no optimizer state, not resumable)" grep -q "(format version 1, a model)" "$T/out"
run translate "$T/avg.bin" "$T/two.txt"
check "average: the model translates" eval 'exits 0 && [ "$(lines "$T/out")" = 2 ]'
# The mean of a model with itself is that model: the same translations, to the bit.
run translate "$R/model.bin" --nbest 2 "$T/two.txt"
cp "$T/out" "$T/self1.txt"
cp "$R/model.bin" "$T/model-copy.bin"
run average "$R/model.bin" "$T/model-copy.bin" -o "$T/self.bin"
run translate "$T/self.bin" --nbest 2 "$T/two.txt"
check "average of a model with a copy of itself: the same n-best lists and scores" cmp -s "$T/out" "$T/self1.txt"
# run/checkpoint*.bin names the newest checkpoint twice (checkpoint.bin is a hard link to
# it): it counts once, with a note, so the average is that of the three checkpoints.
run average "$R"/checkpoint*.bin -o "$T/avg-glob.bin"
check "average run/checkpoint*.bin: checkpoint.bin counts once, with a note; the average of 3 models" \
    eval 'exits 0 && [ "$(lines "$T/err")" = 2 ] &&
        has "$T/err" "nmt: note: $R/checkpoint.bin is the same file as $R/checkpoint-102.bin; it counts once" &&
        has "$T/err" "nmt: wrote $T/avg-glob.bin, the average of 3 models" && cmp -s "$T/avg-glob.bin" "$T/avg.bin"'
run average "$R/model.bin" "$R/model.bin" -o "$T/self2.bin"
check "average of one file named twice: usage error, nothing written" \
    eval 'usage_error average && has "$T/err" "are the same file" && [ ! -e "$T/self2.bin" ]'
cp "$T/avg.bin" "$T/avg.copy"
run average "$R/model.bin" "$T/avg.bin" -o "$T/avg.bin"
PREFIX="nmt: $T/avg.bin: is one of the models to average"
check "average -o one of the inputs: exit 1, the file untouched" eval 'exits 1 && one_error && cmp -s "$T/avg.bin" "$T/avg.copy"'
for args in "" "ONE" "ONE -o" "ONE ONE" "ONE ONE -o X -o Y" "ONE ONE --frob -o X"; do
    run average $(echo "$args" | sed -e "s#ONE#$R/model.bin#g" -e "s#X#$T/x.bin#" -e "s#Y#$T/y.bin#")
    check "average ${args:-(no arguments)}: usage error, exit 2, one line naming nmt average --help" usage_error average
done
run average "$R/model.bin" "$T/no_such.bin" -o "$T/x.bin"
check "average with a missing file: exit 1 naming it, nothing written" \
    eval 'exits 1 && grep -q "^nmt: $T/no_such.bin: " "$T/err" && [ ! -e "$T/x.bin" ]'

cp "$R/model.bin" "$T/model.copy"
run train "$C" --resume
check "resume a finished run: exit 0, says it finished at step 102" \
    eval 'exits 0 && grep -q "finished at step 102" "$T/err"'
check "resume a finished run: model.bin untouched" cmp -s "$R/model.bin" "$T/model.copy"
rm -f "$R/model.bin"
run train "$C" --resume --quiet
check "resume a finished run without model.bin: writes the same model.bin" \
    eval 'exits 0 && cmp -s "$R/model.bin" "$T/model.copy"'
mv "$R" "$T/runs/straight"

# Raised limits. A run that finished at train.max_steps 40 (inside its third epoch) or
# at train.epochs 2, resumed with the full run's limits, goes on and ends exactly as the
# full run (the same config without the teacher-forcing decay, whose plan follows the
# limits).
L=$T/runs/limits
CL=$T/limits.json
cat >"$CL" <<EOF2
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 32, "hidden": 64, "dropout": 0.2},
  "train": {"batch_size": 16, "epochs": 6, "learning_rate": 0.003, "threads": 1, "log_every": 1,
            "checkpoint_every": 7, "validate_every": 10, "valid_bleu_max": 10, "lr_schedule": "plateau",
            "label_smoothing": 0.1, "teacher_forcing": 0.9},
  "output": {"dir": "$L"}
}
EOF2
run train "$CL" --quiet
mv "$L" "$T/runs/limits_ref"
run train "$CL" --quiet --set train.max_steps=40
check "limits: a run stopped by train.max_steps 40: exit 0, its newest checkpoint at step 40" \
    eval 'exits 0 && [ -s "$L/checkpoint-40.bin" ]'
run train "$CL" --resume
check "limits: resumed with train.max_steps 0 (the config's): exit 0, says it goes on from step 40" \
    eval 'exits 0 && grep -q "^nmt: the run in $L finished at step 40; train.epochs 6 and train.max_steps 0 let it go on" "$T/err" &&
          grep -q "^nmt: resuming at step 40 (epoch 3, batch 7 of 17)" "$T/err"'
same_run "$L" "limits: max_steps 40 then raised" "$T/runs/limits_ref"
check "limits: config.json records the new limit, as the full run's does" cmp -s "$L/config.json" "$T/runs/limits_ref/config.json"
rm -rf "$L"
run train "$CL" --quiet --set train.epochs=2
run train --resume "$L" --quiet --set train.epochs=6
check "limits: train.epochs 2, then nmt train --resume RUN_DIR --set train.epochs=6: exit 0" exits 0
same_run "$L" "limits: epochs 2 then raised to 6" "$T/runs/limits_ref"
cp "$L/model.bin" "$T/model.copy"
run train --resume "$L" --set train.epochs=3
check "limits: a finished run resumed with a lower train.epochs: nothing to do, model.bin untouched" \
    eval 'exits 0 && grep -q "finished at step 102; .* up to date: nothing to do" "$T/err" && cmp -s "$L/model.bin" "$T/model.copy"'
rm -rf "$L"
: >"$T/bg.err"
start_paused 20 train "$CL" --quiet
if stopped && kill -9 "$pid"; then { wait "$pid"; } 2>/dev/null; fi
run train "$CL" --resume --set train.max_steps=10
check "limits: an unfinished run (checkpoint at step 17, its first epoch's end) resumed with --set train.max_steps=10: usage error naming --set and both" \
    eval 'usage_error train && grep -q "^nmt: --set: train.max_steps: the checkpoint $L/checkpoint-17.bin is at step 17, train.max_steps 10 is not beyond it" "$T/err"'
rm -rf "$L"

# Fine-tuning: --init-from MODEL.bin starts a new run from the model's weights,
# vocabularies and architecture (a new optimizer, step 0) on other data.
awk 'NR % 89 == 1' "$DATA" | head -n 300 >"$T/new.tsv"
F=$T/runs/finetune
run train "$CL" --init-from "$T/runs/limits_ref/model.bin" --set "data.train=$T/new.tsv" --set "output.dir=$F" \
    --set train.max_steps=5 --set train.learning_rate=0.0003
check "--init-from: exit 0, says where the weights come from and how much of the new data is <unk>" \
    eval 'exits 0 && grep -q "^nmt: starting from the weights, vocabularies and tokenizer of $T/runs/limits_ref/model.bin (a new optimizer, step 0); [0-9.]*% of the training source units and [0-9.]*% of the target units are <unk>" "$T/err"'
vocab_of() { "$NMT" info "$1" --json | sed -E 's/.*"src_vocab":([0-9]+).*"tgt_vocab":([0-9]+).*/\1 \2/'; }
check "--init-from: the model's vocabularies, not the new data's" \
    eval '[ -n "$(vocab_of "$F/model.bin")" ] && [ "$(vocab_of "$F/model.bin")" = "$(vocab_of "$T/runs/limits_ref/model.bin")" ]'
first_loss() { grep -v '"event"' "$1" | head -n 1 | field loss /dev/stdin; }
check "--init-from: the first step's loss is the trained model's, far below a new model's ($(first_loss "$F/train.log") vs $(first_loss "$T/runs/limits_ref/train.log"))" \
    awk -v a="$(first_loss "$F/train.log")" -v b="$(first_loss "$T/runs/limits_ref/train.log")" 'BEGIN { exit !(a + 1 < b) }'
check "--init-from: config.json records train.init_from" grep -q "\"init_from\":.*limits_ref/model.bin" "$F/config.json"
run train --resume "$F" --quiet --set train.max_steps=8
check "--init-from: the run resumes like any other (max_steps raised to 8: exit 0, ends at step 8)" \
    eval 'exits 0 && [ "$(last_step "$F/train.log")" = 8 ]'
run train "$CL" --init-from "$T/runs/limits_ref/model.bin" --set "output.dir=$T/runs/x" --set model.hidden=32
check "--init-from with a model key --set otherwise: usage error naming --set, the key and both values" \
    eval 'usage_error train && grep -q "^nmt: --set: model.hidden: the model $T/runs/limits_ref/model.bin has 64, --set says 32" "$T/err"'
run train "$CL" --init-from "$T/runs/limits_ref/model.bin" --resume
check "--init-from with --resume: usage error (exit 2), one line" eval 'usage_error train && has "$T/err" "--init-from starts a new run"'
cp "$T/runs/limits_ref/model.bin" "$T/model.copy"
run train "$CL" --init-from "$T/runs/limits_ref/model.bin" --set "output.dir=$T/runs/limits_ref"
check "--init-from a model inside output.dir: exit 1, the model untouched" \
    eval 'exits 1 && grep -q "^nmt: train.init_from: .* is in output.dir" "$T/err" && cmp -s "$T/runs/limits_ref/model.bin" "$T/model.copy"'
run train "$CL" --init-from "$T/no_such.bin" --set "output.dir=$T/runs/x"
check "--init-from a missing file: exit 1 naming train.init_from and the file" \
    eval 'exits 1 && [ "$(lines "$T/err")" = 1 ] && grep -q "^nmt: train.init_from: $T/no_such.bin: " "$T/err"'
run train "$CL" --init-from
check "--init-from without a file: usage error (exit 2)" exits 2
run train "$CL" --set model.type=transformer --set output.dir="$T/runs/x"
check "model.type transformer with model.hidden in the file: exit 1, naming the key" \
    eval 'exits 1 && grep -q "model.hidden applies only to recurrent models (model.type is \"transformer\")" "$T/err"'
# Killed with SIGKILL five times, each time stopped at a known step first (the resumed
# process redoes the steps since the last checkpoint, every 7, and stops at the next
# one), and resumed with --resume.
: >"$T/bg.err"
start_paused 12 train "$C" --quiet
killed_at=
for pair in "12 30" "30 50" "50 70" "70 90" "90 0"; do
    k=${pair% *}
    if stopped && [ "$(last_step "$R/train.log")" = "$k" ] && kill -9 "$pid"; then killed_at="$killed_at $k"; fi
    { wait "$pid"; } 2>/dev/null   # (without the shell's "Killed")
    start_paused "${pair#* }" train "$C" --resume --quiet
done
finish_bg
check "SIGKILL at steps 12, 30, 50, 70 and 90 (killed at:$killed_at), resumed each time: the last resume exits 0" \
    eval 'exits 0 && [ "$killed_at" = " 12 30 50 70 90" ]'
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/bg.err" | tail -n 5
check "SIGKILL: train.log has a resume event per kill (5)" [ "$(grep -c '"event":"resume"' "$R/train.log")" = 5 ]
same_run "$R" "killed and resumed 5 times"
mv "$R" "$T/runs/killed"

# SIGINT, then SIGTERM: a checkpoint at the step, a message, exit 130 / 143. Each is
# sent while nmt is stopped after a known step and stays pending until SIGCONT, so the
# run stops exactly there. (Without env --default-signal, SIGINT cannot reach a
# background nmt: SIGTERM twice then, and the SIGINT case counts as skipped.)
if [ -n "$DEFAULT_INT" ]; then
    SIG=INT; WANT=130
else
    SIG=TERM; WANT=143
    skip "SIGINT to nmt train" "env has no --default-signal to undo the ignored SIGINT of a background job; SIGTERM sent instead"
fi
: >"$T/bg.err"
start_paused 30 train "$C" --quiet
sent=0 stopped_at=
if stopped; then
    stopped_at=$(last_step "$R/train.log")
    # Meanwhile a second nmt train in the same directory (a resume started too early).
    run train "$C" --resume
    check "a second nmt train while the run goes on: exit 1, naming the process holding train.lock" \
        eval 'exits 1 && grep -q "^nmt: $R is in use by another nmt train (process $pid holds $R/train.lock)" "$T/err"'
    kill -$SIG "$pid" && kill -CONT "$pid" && sent=1
fi
finish_bg
check "SIG$SIG sent while stopped after step 30 (at ${stopped_at:-?}): exit $WANT" \
    eval '[ $sent = 1 ] && [ "$stopped_at" = 30 ] && exits $WANT'
ck=$(sed -n 's/^nmt: interrupted at step 30; checkpoint written to \([^;]*\); .*resume with: nmt train --resume .*$/\1/p' "$T/bg.err")
check "SIG$SIG: 'nmt: interrupted at step 30; checkpoint written to $R/checkpoint-30.bin; resume with: nmt train --resume RUN_DIR'" \
    eval '[ "$ck" = "$R/checkpoint-30.bin" ] && [ -s "$ck" ] && grep -q "resume with: nmt train --resume $R\$" "$T/bg.err"'
check "SIG$SIG: an interrupted event at step 30 in train.log" \
    grep -q "\"event\":\"interrupted\",\"step\":30,.*\"signal\":\"SIG$SIG\"" "$R/train.log"
check "SIG$SIG: training.svg written, and best.bin (validated at step 30) named as the model to translate with meanwhile" \
    eval '[ -s "$R/training.svg" ] && grep -q "; to translate meanwhile: $R/best.bin, the best validation loss ([0-9.]*, step 30); resume with" "$T/bg.err"'
# Forgetting --resume must not throw the run away; neither may a changed config.
cp "$R/train.log" "$T/log.before"
run train "$C"
check "a new run in a directory with an unfinished run: exit 1, says to use --resume" \
    eval 'exits 1 && grep -q "^nmt: $R holds an unfinished run .*--resume" "$T/err"'
sed -e 's/"hidden": 64/"hidden": 64, "cell": "lstm"/' "$C" >"$T/lstm.json"
run train "$T/lstm.json" --resume
check "resume with model.cell changed: exit 1, naming both values" \
    eval 'exits 1 && grep -q "^nmt: $T/lstm.json: model.cell: the checkpoint .* has gru, the config says lstm" "$T/err"'
sed -e 's/"batch_size": 16/"batch_size": 8/' "$C" >"$T/bs.json"
run train "$T/bs.json" --resume
check "resume with train.batch_size changed: exit 1, naming both values" \
    eval 'exits 1 && grep -q "train.batch_size: the checkpoint .* has 16, the config says 8" "$T/err"'
sed '5s/.*/x\ty/' "$T/train.tsv" >"$T/train_changed.tsv"
sed -e "s|$T/train.tsv|$T/train_changed.tsv|" "$C" >"$T/data.json"
run train "$T/data.json" --resume
check "resume on changed data: exit 1, naming the checkpoint's and the data's" \
    eval 'exits 1 && grep -q "^nmt: $T/train_changed.tsv: .*the checkpoint .* the data now gives" "$T/err"'
check "refused resumes and runs leave the run alone" \
    eval 'cmp -s "$R/train.log" "$T/log.before" && [ -s "$ck" ] && [ ! -e "$R/model.bin" ]'
start_paused 70 train "$C" --resume --quiet
sent=0 stopped_at=
if stopped; then
    stopped_at=$(last_step "$R/train.log")
    kill -TERM "$pid" && kill -CONT "$pid" && sent=1
fi
finish_bg
check "SIGTERM sent while stopped after step 70 (at ${stopped_at:-?}): exit 143" \
    eval '[ $sent = 1 ] && [ "$stopped_at" = 70 ] && exits 143'
ck=$(sed -n 's/^nmt: interrupted at step 70; checkpoint written to \([^;]*\); .*resume with: .*/\1/p' "$T/bg.err" | tail -n 1)
check "SIGTERM: 'interrupted at step 70', and the checkpoint it names, checkpoint-70.bin, exists" \
    eval '[ "$ck" = "$R/checkpoint-70.bin" ] && [ -s "$ck" ]'
# train.deterministic (default true): a resume keeps the thread count the run started
# with, whatever train.threads says now, and so still ends bit for bit the same; it
# refuses another OpenBLAS kernel. Tried on copies of the run directory.
cp -r "$R" "$T/runs/threads"
sed -e 's/"threads": 1/"threads": 2/' -e "s|\"dir\": \"$R\"|\"dir\": \"$T/runs/threads\"|" "$C" >"$T/threads.json"
run train "$T/threads.json" --resume
check "deterministic: resumed with train.threads 2, keeps the run's 1 thread and says so" \
    eval 'exits 0 && grep -q "^nmt: train.deterministic: 1 OpenBLAS threads, as the run started with" "$T/err"'
same_run "$T/runs/threads" "resumed with train.threads changed"
kernel=$(sed -n 's/.*OpenBLAS kernel \([^,]*\),.*/\1/p' "$T/err" | head -n 1)
other=Prescott; [ "$kernel" = Prescott ] && other=Haswell
cp -r "$R" "$T/runs/kernel"
sed -e "s|\"dir\": \"$R\"|\"dir\": \"$T/runs/kernel\"|" "$C" >"$T/kernel.json"
env OPENBLAS_CORETYPE=$other $LIMIT "$NMT" train "$T/kernel.json" --resume --quiet >"$T/out" 2>"$T/err"; rc=$?
if [ $rc -eq 0 ] && ! grep -q "train.deterministic" "$T/err"; then
    skip "deterministic: a resume on another OpenBLAS kernel is refused" \
        "OPENBLAS_CORETYPE=$other does not change the kernel ${kernel:-?} here (an OpenBLAS without DYNAMIC_ARCH)"
else
    check "deterministic: a resume on the $other kernel of a $kernel run: exit 1, naming both" \
        eval 'exits 1 && grep -q "^nmt: .*train.deterministic: .*kernel $kernel, this process runs $other; resume with OPENBLAS_CORETYPE=$kernel" "$T/err"'
fi
# Only checkpoint.bin left (the checkpoint-STEP.bin files deleted): resumed from it; a
# checkpoint.bin without training state (as nmt wrote before resuming existed) refused.
cp -r "$R" "$T/runs/stable"
rm -f "$T/runs/stable"/checkpoint-*.bin
sed -e "s|\"dir\": \"$R\"|\"dir\": \"$T/runs/stable\"|" "$C" >"$T/stable.json"
run train "$T/stable.json" --resume --quiet
check "resume with only checkpoint.bin left: exit 0" exits 0
same_run "$T/runs/stable" "resumed from checkpoint.bin"
mkdir -p "$T/runs/legacy"
cp "$T/runs/straight/best.bin" "$T/runs/legacy/checkpoint.bin"
: >"$T/runs/legacy/train.lock"  # a run directory (nmt 0.4's empty mark): model files alone are not one
sed -e "s|\"dir\": \"$R\"|\"dir\": \"$T/runs/legacy\"|" "$C" >"$T/legacy.json"
run train "$T/legacy.json" --resume
check "resume from a checkpoint.bin without training state: exit 1, saying so" \
    eval 'exits 1 && grep -q "^nmt: $T/runs/legacy/checkpoint.bin: no training state" "$T/err"'
# The newest checkpoint damaged: resuming falls back to the one before, with a warning.
printf 'X' | dd of="$ck" bs=1 seek=1000 conv=notrunc 2>/dev/null
run train --resume "$R" --quiet
check "resume --resume RUN_DIR past a damaged newest checkpoint: exit 0" exits 0
check "... with a warning naming it and the checkpoint used instead" \
    grep -q "^nmt: warning: $ck: .*damaged.*; resuming from $R/checkpoint-[0-9]*\.bin instead" "$T/err"
same_run "$R" "SIGINT, SIGTERM and a damaged checkpoint"
mv "$R" "$T/runs/signals"

# A full disk and an unwritable checkpoint: the error names the file, the previous
# checkpoint stays whole, and resuming afterwards ends as the uninterrupted run.
mkdir -p "$R"
if [ -w /dev/full ]; then
    NMT_FULL_DISK_AT=checkpoint-14.bin run train "$C" --quiet
    check "disk full at the step-14 checkpoint: exit 1, 'No space left' naming checkpoint-14.bin" \
        eval 'exits 1 && grep -q "^nmt: $R/checkpoint-14.bin: .*No space left on device" "$T/err"'
    check "disk full: checkpoint-7.bin is whole (translate reads it), no checkpoint-14.bin" \
        eval 'echo "Show me." | $LIMIT "$NMT" translate "$R/checkpoint-7.bin" >/dev/null 2>&1 && [ ! -e "$R/checkpoint-14.bin" ]'
    check "disk full: checkpoint.bin is still checkpoint-7.bin" cmp -s "$R/checkpoint.bin" "$R/checkpoint-7.bin"
    check "disk full: no temporary file left" eval '! ls "$R" | grep -q tmp'
    resume_flag=--resume
else
    for what in "disk full at the step-14 checkpoint: exit 1" "disk full: checkpoint-7.bin is whole" \
        "disk full: checkpoint.bin is still checkpoint-7.bin"; do
        skip "$what" "/dev/full is not writable here"
    done
    resume_flag=
fi
# A directory where the checkpoint goes: it cannot be written (as on a read-only
# directory, which chmod cannot make for root, who runs the tests in CI). Listed
# among the checkpoints, it is passed over with a warning when the run resumes.
mkdir "$R/checkpoint-21.bin"
run train "$C" $resume_flag --quiet
check "unwritable checkpoint-21.bin: exit 1, the message names it" \
    eval 'exits 1 && grep -q "^nmt: $R/checkpoint-21.bin: cannot write" "$T/err"'
check "unwritable: the checkpoint before, checkpoint-17.bin (epoch 1's end), whole and checkpoint.bin still it" \
    eval '[ -s "$R/checkpoint-17.bin" ] && [ -d "$R/checkpoint-21.bin" ] && cmp -s "$R/checkpoint.bin" "$R/checkpoint-17.bin"'
rmdir "$R/checkpoint-21.bin"
run train "$C" --resume --quiet
check "after the write failures, --resume completes" exits 0
same_run "$R" "resumed after write failures"

finish
