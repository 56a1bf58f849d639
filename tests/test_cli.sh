#!/bin/sh
# test_cli.sh — end-to-end test of the nmt binary: options and exit codes, config
# errors, a small training run that must learn (its files, train.log, the training
# controls, bitwise reproducibility), eval, damaged model files, plot, train --set, the
# progress line, the man page, and keys that do not apply. The other commands and
# features end to end: test_cli_translate.sh, test_cli_score.sh, test_cli_resume.sh,
# test_cli_family.sh, test_cli_subwords.sh.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_cli.sh
# NMT=path/to/nmt selects another binary. Prints "  ok what" / "FAIL what" per check,
# "skip what: why" for each check that cannot run here (a tool it needs is missing), and
# ends with "test_cli: N passed, M failed, K skipped".
#
# Nothing here depends on a clock: a run on a terminal is given one by script(1), and the
# time limits only keep a hung nmt from hanging the suite.

NAME=test_cli
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, one_error, field, cli_data;
                # $LIMIT is 300 s, generous for the sanitizer build

# ---------------------------------------------------------------- 1. command line

run --help
check "--help exits 0" exits 0
check "--help lists train, translate and eval" \
    eval 'grep -q "^  train " "$T/out" && grep -q "^  translate " "$T/out" && grep -q "^  eval " "$T/out"'
run --version
check "--version exits 0 and prints 'nmt VERSION'" eval 'exits 0 && grep -Eq "^nmt [0-9]+\.[0-9]+" "$T/out"'
for cmd in train translate eval; do
    run $cmd --help
    check "$cmd --help exits 0 with its usage on stdout" \
        eval 'exits 0 && grep -q "^usage: nmt $cmd " "$T/out"'
done

run --help
check "nmt --help: says nmt runs on CPUs only, and what to use for a GPU" \
    eval 'exits 0 && has "$T/out" "nmt runs on CPUs only" && has "$T/out" "GPU, use a GPU toolkit: OpenNMT-py, Marian or fairseq"'
run train --help
check "nmt train --help: configs/default.json is a quick recipe, where it differs from the built-in defaults" \
    eval 'exits 0 && has "$T/out" "configs/default.json is not those defaults but a small, quick recipe"'

run
check "no arguments: exit 2" exits 2
# One line, not the whole help (issue 34): the commands, and where the help is.
check "no arguments: one line on stderr naming the commands and nmt --help" \
    eval 'usage_error "" && has "$T/err" "nmt: missing COMMAND (train, translate, classify, eval, serve, info, score, plot, average, quantize, shortlist, bpe)"'

run frobnicate
check "unknown command: exit 2" exits 2
check "unknown command: first stderr line 'nmt: ...' names it" \
    eval 'head -n 1 "$T/err" | grep -q "^nmt: .*frobnicate"'
check "unknown command: exactly one 'nmt:' line" [ "$(grep -c '^nmt:' "$T/err")" = 1 ]

for cmd in train translate eval; do
    run $cmd --frob
    check "$cmd: unknown option: exit 2" exits 2
    check "$cmd: unknown option: 'nmt: ...' names it" eval 'head -n 1 "$T/err" | grep -q "^nmt: .*--frob"'
done
run translate
check "translate without MODEL.bin: exit 2" exits 2
run eval "$T/x.bin"
check "eval without TEST.tsv: exit 2" exits 2

# ---------------------------------------------------------------- 2. config errors

# config_error WHAT JSON KEY — nmt train exits 1 with one line "nmt: CONFIG...", naming KEY.
config_error() {
    printf '%s\n' "$2" >"$T/bad.json"
    run train "$T/bad.json"
    check "config $1: exit 1" exits 1
    PREFIX="nmt: $T/bad.json"
    check "config $1: one line 'nmt: $T/bad.json...'" one_error
    check "config $1: message names '$3'" has "$T/err" "$3"
}

run train "$T/missing.json"
check "config missing: exit 1" exits 1
PREFIX="nmt: $T/missing.json: "
check "config missing: one line 'nmt: PATH: ...'" one_error

config_error "invalid JSON" '{"data": {"train": "x.tsv",},
  "model": {}}' "bad.json:1:"
check "config invalid JSON: message has line:col" grep -Eq 'bad\.json:[0-9]+:[0-9]+: ' "$T/err"
config_error "unknown key" '{"data": {"trian": "x.tsv"}}' "data.trian"
check "config unknown key: suggests data.train" has "$T/err" "did you mean data.train?"
config_error "wrong type" '{"data": {"train": "x.tsv"}, "model": {"hidden": "big"}}' "model.hidden"
config_error "out of range" '{"data": {"train": "x.tsv"}, "train": {"batch_size": 0}}' "train.batch_size"
config_error "without data.train" '{"model": {"hidden": 8}}' "data.train"

printf '{"data": {"train": "%s"}, "output": {"dir": "%s"}}\n' "$T/nowhere.tsv" "$T/run_nowhere" >"$T/bad.json"
run train "$T/bad.json"
check "config data.train missing file: exit 1" exits 1
PREFIX="nmt: $T/nowhere.tsv: "
check "config data.train missing file: one line 'nmt: TSV: ...'" one_error

# A training file with nothing usable in it: empty, or only malformed lines.
: >"$T/empty_train.tsv"
printf 'no tab\n\377\tx\n' >"$T/malformed_train.tsv"
for f in empty_train malformed_train; do
    printf '{"data": {"train": "%s"}, "output": {"dir": "%s"}}\n' "$T/$f.tsv" "$T/run_$f" >"$T/bad.json"
    run train "$T/bad.json"
    check "train on $f.tsv: exit 1, 'nmt: TSV: no usable sentence pairs'" \
        eval 'exits 1 && grep -q "^nmt: $T/$f.tsv: no usable sentence pairs" "$T/err"'
done
check "train on malformed_train.tsv: a warning names both lines and why" \
    grep -q "^nmt: warning: .*line 1: no tab, line 2: invalid UTF-8" "$T/err"

# ---------------------------------------------------------------- 3. training

cli_data  # $T/train.tsv, $T/tiny.json (tests/lib.sh)
run train "$T/tiny.json"
check "train: exit 0" exits 0
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/err" | tail -n 5
check "train: progress on stderr" grep -q '^nmt: step [0-9]' "$T/err"
for f in model.bin best.bin checkpoint.bin train.log config.json valid.tsv; do
    check "train: wrote $f" test -s "$RUN/$f"
done
check "train: config.json records the settings" grep -Eq '"hidden":[[:space:]]*64' "$RUN/config.json"
n=$(lines "$RUN/valid.tsv" 2>/dev/null)
check "train: valid.tsv holds ~10% of 300 pairs (has ${n:-0})" [ "${n:-0}" -ge 27 -a "${n:-0}" -le 33 ]
check "train: valid.tsv lines are pairs from train.tsv" \
    eval '[ -s "$RUN/valid.tsv" ] && ! grep -vxF -f "$T/train.tsv" "$RUN/valid.tsv" >/dev/null'

LOG=$RUN/train.log
check "train.log: one JSON object per line" eval '[ -s "$LOG" ] && ! grep -qv "^{.*}\$" "$LOG"'
grep -v '"event"' "$LOG" 2>/dev/null >"$T/steps.log"
n=$(lines "$T/steps.log")
check "train.log: at least 10 step lines (has $n)" [ "$n" -ge 10 ]
for k in step epoch loss tokens_per_s learning_rate; do
    check "train.log: every step line has \"$k\": NUMBER" \
        eval '[ -s "$T/steps.log" ] && ! grep -v "\"$k\":[0-9]" "$T/steps.log" >/dev/null'
done
sed -n 's/.*"loss":\([-0-9.eE+]*\).*/\1/p' "$T/steps.log" >"$T/losses"
first=$(head -n 1 "$T/losses")
last=$(tail -n 1 "$T/losses")
# Observed: 6.13 at step 10, 0.24 at step 510.
check "train.log: last loss ($last) < 30% of the first ($first)" \
    awk -v a="${first:-0}" -v b="${last:-0}" 'BEGIN { exit !(a > 0 && b < 0.3 * a) }'

# 270 pairs in batches of 16: 17 steps an epoch, 510 in all. Validations at the 30
# epoch ends and at steps 100, 200, ..., 500 (none of them an epoch's last step).
grep '"event":"validation"' "$LOG" 2>/dev/null >"$T/valid.log"
check "train.log: 35 validations (has $(lines "$T/valid.log"))" [ "$(lines "$T/valid.log")" = 35 ]
check "train.log: validations at steps 100, 200, 300, 400, 500" \
    [ "$(field step "$T/valid.log" | grep -cxE '[1-5]00')" = 5 ]
for k in valid_loss valid_bleu learning_rate; do
    check "train.log: every validation has \"$k\": NUMBER" \
        eval '[ -s "$T/valid.log" ] && ! grep -v "\"$k\":[0-9]" "$T/valid.log" >/dev/null'
done
check "train.log: an epoch event per epoch, with target_padding" \
    [ "$(grep '"event":"epoch"' "$LOG" | grep -c '"target_padding":0\.')" = 30 ]
check "stderr: a validation line with BLEU" grep -q '^nmt: step 100  validation loss [0-9.]* .*BLEU [0-9]' "$T/err"
best_bleu=$(grep '"best":true' "$T/valid.log" | field valid_bleu /dev/stdin | tail -n 1)
max_bleu=$(field valid_bleu "$T/valid.log" | sort -g | tail -n 1)
check "train.log: the last 'best' validation has the highest BLEU ($best_bleu, max $max_bleu)" \
    [ -n "$best_bleu" -a "$best_bleu" = "$max_bleu" ]

M=$RUN/model.bin
# The model must reproduce the pairs it was trained on. Observed: BLEU 88.3, chrF2 88.8
# on all 300 (a model that learned nothing scores ~0-5); on the 30 held-out ones ~2.
run eval "$M" "$T/train.tsv"
check "eval on the training pairs: exit 0" exits 0
bleu=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/out")
check "eval on the training pairs: BLEU ${bleu:-?} > 50" awk -v b="${bleu:-0}" 'BEGIN { exit !(b > 50) }'

echo "Show me." | $LIMIT "$NMT" translate "$M" >"$T/m.txt" 2>/dev/null
echo "Show me." | $LIMIT "$NMT" translate "$RUN/checkpoint.bin" >"$T/c.txt" 2>/dev/null
check "translate: checkpoint.bin of the last step translates as model.bin does" \
    eval '[ -s "$T/m.txt" ] && cmp -s "$T/m.txt" "$T/c.txt"'

# nmt info shows a model's quality: the validation at its update and the best up to it,
# from the train.log of its run directory (a model file holds no validation figures).
last_valid=$(grep '"event":"validation"' "$RUN/train.log" | tail -n 1)
vstep=$(echo "$last_valid" | sed 's/.*"step":\([0-9]*\).*/\1/')
vbleu=$(echo "$last_valid" | sed 's/.*"valid_bleu":\([0-9.]*\).*/\1/')
run info "$RUN/model.bin"
check "info model.bin: the validation at its update ($vstep), with its BLEU, naming train.log" \
    eval 'exits 0 && grep -q "^validation at update $vstep: loss [0-9.]*, BLEU $(printf %.2f "$vbleu")" "$T/out" && has "$T/out" "($RUN/train.log)"'
run info "$RUN/best.bin"
check "info best.bin: the best validation by BLEU (train.best_metric)" \
    eval 'exits 0 && grep -q "^validation at update [0-9]*: loss [0-9.]*, BLEU [0-9.]*; the best by bleu (" "$T/out"'
run info "$RUN/model.bin" --json
check "info --json model.bin: its validation and the best, with best_metric bleu" \
    eval 'exits 0 && has "$T/out" "\"validation\":{\"step\":$vstep,\"loss\":" && has "$T/out" "\"best_metric\":\"bleu\"" &&
        has "$T/out" "\"best\":{\"step\":" && has "$T/out" "\"train_log\":\"$RUN/train.log\""'
cp "$RUN/model.bin" "$T/moved-model.bin"
run info "$T/moved-model.bin"
check "info on a model moved out of its run directory: no validation figures (none in the file)" \
    eval 'exits 0 && ! grep -q "^validation at\|^best validation" "$T/out"'

# --quiet: a one-step run prints nothing (with 102 validation pairs: fewer than 100 would
# be warned about, as warnings show even with --quiet).
sed -e 's/"epochs": 30/"epochs": 1, "max_steps": 1/' -e "s|$RUN|$T/runs/quiet|" "$T/tiny.json" >"$T/quiet.json"
run train "$T/quiet.json" --quiet --set data.valid_fraction=0.34
check "train --quiet: exit 0, nothing on stderr, model.bin written" \
    eval 'exits 0 && [ ! -s "$T/err" ] && [ -s "$T/runs/quiet/model.bin" ]'

# Training controls. Early stopping: validation every 5 steps, stop after 2 in a row
# without a lower loss; the plateau schedule halves the rate at each of them (patience
# 1); label smoothing 0.1. Observed: stops at step 70 of 510.
sed -e 's/"log_every": 10,/"log_every": 1, "label_smoothing": 0.1, "lr_schedule": "plateau", "early_stop": 2,/' \
    -e 's/"validate_every": 100, "best_metric": "bleu"/"validate_every": 5/' -e "s|$RUN|$T/runs/early|" \
    "$T/tiny.json" >"$T/early.json"
run train "$T/early.json"
ELOG=$T/runs/early/train.log
check "early_stop: exit 0, model.bin and best.bin written" \
    eval 'exits 0 && [ -s "$T/runs/early/model.bin" ] && [ -s "$T/runs/early/best.bin" ]'
grep '"event":"early_stop"' "$ELOG" 2>/dev/null >"$T/stop.log"
check "early_stop: one early_stop event, no step after it" \
    eval '[ "$(lines "$T/stop.log")" = 1 ] && ! sed "1,/early_stop/d" "$ELOG" | grep -qv "\"event\""'
check "early_stop: stderr says so" grep -q '^nmt: stopping early: validation loss not better for 2 validations' "$T/err"
grep '"event":"validation"' "$ELOG" 2>/dev/null >"$T/evalid.log"
check "early_stop: the last 3 validations are best, not best, not best" \
    [ "$(tail -n 3 "$T/evalid.log" | sed 's/.*"best":\([a-z]*\).*/\1/' | tr '\n' ' ')" = "true false false " ]
last_step=$(grep -v '"event"' "$ELOG" | field step /dev/stdin | tail -n 1)
stop_step=$(field step "$T/stop.log")
check "early_stop: stopped at step ${last_step:-?} of 510, the step of the last validation" \
    eval '[ -n "$last_step" ] && [ "$last_step" -lt 510 ] && [ "$last_step" = "$stop_step" ] &&
          [ "$(tail -n 1 "$T/evalid.log" | field step /dev/stdin)" = "$last_step" ]'
check "early_stop: best_step is the step of the last best validation" \
    [ "$(field best_step "$T/stop.log")" = "$(grep '"best":true' "$T/evalid.log" | tail -n 1 | field step /dev/stdin)" ]
# Patience 1: every validation without a lower loss halves the rate: 0.0015, 0.00075, ...
grep '"event":"lr_decay"' "$ELOG" | field learning_rate /dev/stdin >"$T/decays"
check "plateau: one lr_decay per validation without improvement ($(lines "$T/decays"))" \
    eval '[ "$(lines "$T/decays")" -ge 2 ] &&
          [ "$(lines "$T/decays")" = "$(grep -c "\"best\":false" "$T/evalid.log")" ]'
check "plateau: the decays halve the rate from 0.003" \
    awk '{ want = 0.003 * 0.5 ^ NR; if ($1 < want * 0.99999 || $1 > want * 1.00001) bad = 1 } END { exit bad || !NR }' \
    "$T/decays"
# Trained with label smoothing, validated without: eval (plain cross-entropy) on best.bin
# gives the best validation loss.
best_loss=$(grep '"best":true' "$T/evalid.log" | tail -n 1 | field valid_loss /dev/stdin)
run eval "$T/runs/early/best.bin" "$T/runs/early/valid.tsv"
eval_loss=$(sed -n 's/^loss = \([0-9.]*\) .*/\1/p' "$T/out")
check "label smoothing: validation loss is plain cross-entropy (eval $eval_loss, log $best_loss)" \
    awk -v a="${eval_loss:-0}" -v b="${best_loss:-9}" 'BEGIN { d = a - b; exit !(a > 0 && d < 1e-3 && d > -1e-3) }'

# Smoothing changes the update: one step with 0.5 gives another validation loss than
# the same step without (the --quiet run above).
sed -e 's/"log_every": 10,/"log_every": 10, "label_smoothing": 0.5,/' -e "s|$T/runs/quiet|$T/runs/smooth|" \
    "$T/quiet.json" >"$T/smooth.json"
run train "$T/smooth.json" --quiet
plain=$(field valid_loss "$T/runs/quiet/train.log")
smooth=$(field valid_loss "$T/runs/smooth/train.log")
check "label smoothing 0.5: one step changes the validation loss ($plain vs $smooth)" \
    eval 'exits 0 && [ -n "$plain" ] && [ -n "$smooth" ] && [ "$plain" != "$smooth" ]'

# inverse_sqrt, warmup 8: step s runs at 0.003 * min(s / 8, sqrt(8 / s)). Plain shuffled
# batches (the default, bucket false) would carry far more padding than bucketed ones
# (bucket true; observed: 26% vs 3%), were they not packed.
sed -e 's/"epochs": 30,/"epochs": 2, "max_steps": 20,/' \
    -e 's/"log_every": 10,/"log_every": 1, "lr_schedule": "inverse_sqrt", "warmup_steps": 8, "bucket": true,/' \
    -e "s|$RUN|$T/runs/isqrt|" "$T/tiny.json" >"$T/isqrt.json"
run train "$T/isqrt.json" --quiet
grep -v '"event"' "$T/runs/isqrt/train.log" 2>/dev/null |
    sed 's/.*"step":\([0-9]*\),.*"learning_rate":\([-0-9.eE+]*\).*/\1 \2/' >"$T/lrs"
check "inverse_sqrt: exit 0, 20 step lines" eval 'exits 0 && [ "$(lines "$T/lrs")" = 20 ]'
check "inverse_sqrt: the logged rates follow 0.003 min(s/8, sqrt(8/s))" \
    awk '{ s = $1; want = 0.003 * (s <= 8 ? s / 8 : sqrt(8 / s))
           if ($2 < want * 0.99999 || $2 > want * 1.00001) bad = 1 }
         END { exit bad || NR != 20 }' "$T/lrs"
pad_plain=$(grep '"event":"epoch"' "$LOG" | head -n 1 | field target_padding /dev/stdin)
pad_bucket=$(grep '"event":"epoch"' "$T/runs/isqrt/train.log" | head -n 1 | field target_padding /dev/stdin)
check "bucket true: far less target padding than the default shuffle ($pad_bucket vs $pad_plain)" \
    awk -v a="${pad_plain:-0}" -v b="${pad_bucket:-1}" 'BEGIN { exit !(a > 3 * b) }'

# Validation sets too small to mean anything. None (valid_fraction 0): no baseline "a model
# must beat", but what a run without one lacks. One pair: a warning naming the count.
awk 'NR % 97 == 0' "$DATA" | head -n 200 >"$T/small-train.tsv"
head -n 1 "$T/small-train.tsv" >"$T/one-valid.tsv"
for v in '"valid_fraction": 0' "\"valid\": \"$T/one-valid.tsv\""; do
    printf '{"data": {"train": "%s", %s}, "model": {"embed": 8, "hidden": 8},
 "train": {"batch_size": 32, "max_steps": 2, "threads": 1}, "output": {"dir": "%s"}}\n' \
        "$T/small-train.tsv" "$v" "$T/runs/small-valid" >"$T/small-valid.json"
    rm -rf "$T/runs/small-valid"
    run train "$T/small-valid.json"
    case $v in
    *valid_fraction*)
        check "no validation set: says so and what it means (no best.bin), no 'validation loss 0.000' baseline" \
            eval 'exits 0 && has "$T/err" "nmt: no validation set (no data.valid, and data.valid_fraction leaves none): no validation loss or BLEU, so no best.bin" &&
                ! has "$T/err" "must beat" && [ ! -e "$T/runs/small-valid/best.bin" ]' ;;
    *)
        check "1 validation pair: a warning naming the count and why it is too few" \
            eval 'exits 0 && has "$T/err" "nmt: warning: only 1 validation pair: too few for the validation loss and BLEU to mean much" &&
                has "$T/err" "give 100 or more"' ;;
    esac
done

# ---------------------------------------------------------------- 4. damaged model files

size=$(wc -c <"$M" | tr -d ' ')
half=$((size / 2))
: >"$T/empty.bin"
echo "this is not a model" >"$T/text.bin"
head -c "$half" "$M" >"$T/truncated.bin"
cp "$M" "$T/flipped.bin"
byte=$(od -An -tu1 -j "$half" -N 1 "$M" | tr -d ' ')
printf "\\$(printf '%03o' $((byte ^ 255)))" | dd of="$T/flipped.bin" bs=1 seek="$half" conv=notrunc 2>/dev/null
cp "$M" "$T/version.bin"
printf '\143\000\000\000' | dd of="$T/version.bin" bs=1 seek=8 conv=notrunc 2>/dev/null
check "damage: the flipped copy differs from model.bin in one byte" \
    [ "$(cmp -l "$M" "$T/flipped.bin" | wc -l | tr -d ' ')" = 1 ]
check "damage: the version copy says 99" [ "$(od -An -tu4 -j 8 -N 4 "$T/version.bin" | tr -d ' ')" = 99 ]

for f in nonexistent.bin empty.bin text.bin truncated.bin flipped.bin version.bin; do
    PREFIX="nmt: $T/$f: "
    echo "Show me." | $LIMIT "$NMT" translate "$T/$f" >"$T/out" 2>"$T/err"
    rc=$?
    check "translate $f: exit 1 (got $rc)" exits 1
    check "translate $f: one line 'nmt: PATH: ...'" one_error
    check "translate $f: nothing on stdout" [ ! -s "$T/out" ]
    run eval "$T/$f" "$T/train.tsv"
    check "eval $f: exit 1 (got $rc)" exits 1
    check "eval $f: one line 'nmt: PATH: ...'" one_error
done
check "damage: the version message gives both versions" grep -q '99.*1' "$T/err"

# ---------------------------------------------------------------- 5. eval

run eval "$M" "$RUN/valid.tsv"
check "eval: exit 0" exits 0
for p in "BLEU = " "chrF2 = " "loss = "; do
    check "eval: prints a line '$p...'" grep -q "^${p}[0-9]" "$T/out"
done
text_bleu=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/out")
run eval "$M" "$RUN/valid.tsv" --json
check "eval --json: exit 0" exits 0
check "eval --json: one JSON object" eval '[ "$(lines "$T/out")" = 1 ] && grep -q "^{.*}\$" "$T/out"'
for k in bleu chrf loss; do
    check "eval --json: has \"$k\"" grep -Eq "\"$k\":[0-9]" "$T/out"
done
json_bleu=$(sed -n 's/.*"bleu":\([0-9.eE+-]*\).*/\1/p' "$T/out")
check "eval --json: the same BLEU as the text ($json_bleu vs $text_bleu)" \
    eval '[ -n "$text_bleu" ] && [ "$(awk -v b="${json_bleu:-x}" "BEGIN { printf \"%.2f\", b }")" = "$text_bleu" ]'
# The last validation (after the last step) scored the pairs of valid.tsv as eval does.
last_valid_bleu=$(field valid_bleu "$T/valid.log" | tail -n 1)
check "eval: the same BLEU as the last validation in train.log ($text_bleu vs $last_valid_bleu)" \
    eval '[ -n "$text_bleu" ] &&
          [ "$(awk -v b="${last_valid_bleu:-x}" "BEGIN { printf \"%.2f\", b }")" = "$text_bleu" ]'
run eval "$RUN/best.bin" "$RUN/valid.tsv"
best_eval=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/out")
check "eval best.bin: the best validation BLEU ($best_eval vs $max_bleu)" \
    eval '[ -n "$best_eval" ] && [ "$(awk -v b="${max_bleu:-x}" "BEGIN { printf \"%.2f\", b }")" = "$best_eval" ]'

# Lines 6 (no tab), 7 (empty target) and 11 (empty source) are malformed.
{
    head -n 5 "$T/train.tsv"
    echo "no tab here"
    printf 'Show me.\t\n'
    sed -n '6,8p' "$T/train.tsv"
    printf '\tonly a target\n'
} >"$T/malformed.tsv"
run eval "$M" "$T/malformed.tsv"
check "eval with malformed lines: exit 0" exits 0
check "eval with malformed lines: scores the 8 good pairs" grep -q '^pairs = 8 ' "$T/out"
check "eval with malformed lines: a warning naming lines 6, 7 and 11" \
    eval 'grep "^nmt: warning: " "$T/err" | grep "line 6" | grep "line 7" | grep -q "line 11"'
printf 'no tab\nnone here either\n\t\n' >"$T/allbad.tsv"
run eval "$M" "$T/allbad.tsv"
check "eval with only malformed lines: exit 1" exits 1
check "eval with only malformed lines: 'nmt: PATH: ...' error" grep -q "^nmt: $T/allbad.tsv: " "$T/err"
run eval "$M" "$T/nonexistent.tsv"
check "eval with a missing TSV: exit 1, naming it" eval 'exits 1 && grep -q "^nmt: $T/nonexistent.tsv: " "$T/err"'

# ---------------------------------------------------------------- 6. determinism

# Training is bitwise reproducible for a fixed thread count (2 OpenBLAS threads here):
# the same config twice (same output.dir, which the model file records) gives the same file.
sed -e 's/"epochs": 30/"epochs": 3/' -e 's/"threads": 1/"threads": 2/' -e "s#$RUN#$T/runs/det#" \
    "$T/tiny.json" >"$T/det.json"
run train "$T/det.json" --quiet
cp "$T/runs/det/model.bin" "$T/det1.bin" 2>/dev/null
run train "$T/det.json" --quiet
check "train twice with 2 threads: bitwise identical model.bin" \
    eval '[ -s "$T/det1.bin" ] && cmp -s "$T/runs/det/model.bin" "$T/det1.bin"'

# ---------------------------------------------------------------- 7. plot

# nmt train leaves the loss chart in the run dir; nmt plot draws it again from train.log.
check "train: wrote training.svg, an SVG document" \
    eval '[ -s "$RUN/training.svg" ] && head -c 5 "$RUN/training.svg" | grep -Eq "^(<svg|<\?xml)" &&
          [ "$(tail -n 1 "$RUN/training.svg")" = "</svg>" ]'
check "train: training.svg has the validation BLEU curve" grep -q '>validation BLEU (right axis)</text>' "$RUN/training.svg"
run plot "$RUN" -o "$T/plot.svg"
check "plot -o FILE: exit 0, nothing on stderr" eval 'exits 0 && [ ! -s "$T/err" ]'
check "plot -o FILE: an SVG document" eval 'head -c 5 "$T/plot.svg" | grep -Eq "^(<svg|<\?xml)"'
check "plot -o FILE: the same chart nmt train drew" cmp -s "$T/plot.svg" "$RUN/training.svg"
check "plot: 4 curves (training loss, validation loss, BLEU; BLEU against time)" \
    [ "$(grep -c '<polyline' "$T/plot.svg")" = 4 ]
check "plot: the BLEU-against-time chart, its axis in seconds or minutes" \
    grep -q '>\(seconds\|minutes\) since training began (validations included)</text>' "$T/plot.svg"
rm -f "$RUN/training.svg"
run plot "$RUN"
check "plot RUN_DIR: writes RUN_DIR/training.svg" eval 'exits 0 && [ -s "$RUN/training.svg" ]'
run plot --help
check "plot --help exits 0 with its usage on stdout" eval 'exits 0 && grep -q "^usage: nmt plot " "$T/out"'
run plot
check "plot without RUN_DIR: exit 2" exits 2
run plot "$RUN" --frob
check "plot: unknown option: exit 2, naming it" eval 'exits 2 && head -n 1 "$T/err" | grep -q "^nmt: .*--frob"'
run plot "$T/no_such_run"
PREFIX="nmt: $T/no_such_run/train.log: "
check "plot a missing run dir: exit 1, one line naming train.log" eval 'exits 1 && one_error'
mkdir -p "$T/runs/empty" && : >"$T/runs/empty/train.log"
run plot "$T/runs/empty"
PREFIX="nmt: $T/runs/empty/train.log: empty"
check "plot an empty train.log: exit 1, one line saying so" eval 'exits 1 && one_error'
mkdir -p "$T/runs/damaged"
{ head -n 20 "$LOG"; echo "not json"; sed -n '21,40p' "$LOG"; printf '{"step":'; } >"$T/runs/damaged/train.log"
run plot "$T/runs/damaged"
check "plot a damaged train.log: exit 0, the chart written" eval 'exits 0 && [ -s "$T/runs/damaged/training.svg" ]'
check "plot a damaged train.log: one warning naming the file and line 21" \
    eval '[ "$(lines "$T/err")" = 1 ] && grep -q "^nmt: warning: $T/runs/damaged/train.log: .*2 malformed.*line 21" "$T/err"'
run plot "$RUN" -o "$T/no_such_dir/x.svg"
check "plot -o into a missing directory: exit 1, naming the file" \
    eval 'exits 1 && grep -q "^nmt: $T/no_such_dir/x.svg: " "$T/err"'

# ---------------------------------------------------------------- 8. train --set

run train "$T/tiny.json" --quiet --set train.max_steps=3 --set model.hidden=16 --set model.cell=lstm \
    --set "output.dir=$T/runs/set"
check "train --set: overrides numbers and strings (exit 0)" exits 0
check "train --set: config.json records the overridden values" \
    eval 'grep -q "\"hidden\":	16" "$T/runs/set/config.json" && grep -q "\"cell\":	\"lstm\"" "$T/runs/set/config.json" &&
          grep -q "\"max_steps\":	3" "$T/runs/set/config.json"'
run info "$T/runs/set/model.bin"
check "train --set: the model is the overridden one" eval 'grep -q "^model: lstm" "$T/out" && grep -q "hidden 16" "$T/out"'
run average "$M" "$T/runs/set/model.bin" -o "$T/x.bin"
check "average of two different models: exit 1, naming the second and what differs, nothing written" \
    eval 'exits 1 && grep -q "^nmt: $T/runs/set/model.bin: not the same model as $M (hidden: 64 and 16)" "$T/err" &&
          [ ! -e "$T/x.bin" ]'
run train "$T/tiny.json" --set train.batch_size=0
check "train --set out of range: a usage error (exit 2), naming the key" eval 'exits 2 && grep -q "^nmt: --set: train.batch_size must be" "$T/err"'
run train "$T/tiny.json" --set train.batchsize=3
check "train --set unknown key: a usage error (exit 2) suggesting the right one" eval 'exits 2 && grep -q "did you mean train.batch_size?" "$T/err"'
run train "$T/tiny.json" --set model.hidden
check "train --set without =VALUE: a usage error (exit 2), saying the form" eval 'exits 2 && grep -q "SECTION.KEY=VALUE" "$T/err"'
run train "$T/tiny.json" --set model.bidirectional=true --set model.hidden=7
check "train --set: keys that must fit together are checked after the overrides (a --set's doing: exit 2)" \
    eval 'usage_error train && grep -q "^nmt: --set: model.hidden must be even" "$T/err"'
run train "$T/tiny.json" --set
check "train --set with nothing after it: usage error" exits 2

# ---------------------------------------------------------------- 9. progress on a terminal

# Not a terminal (as everywhere above): plain periodic lines, no control characters.
run train "$T/tiny.json" --set train.max_steps=20 --set "output.dir=$T/runs/plain"
check "progress, not a terminal: plain 'nmt: step' lines and no escape codes" \
    eval 'exits 0 && grep -q "^nmt: step 10  epoch 1  loss " "$T/err" && ! grep -q "$(printf "\033")" "$T/err"'
run train "$T/tiny.json" --set train.max_steps=20 --set "output.dir=$T/runs/quiet2" --set data.valid_fraction=0.34 --quiet
check "progress --quiet: nothing on stderr" eval 'exits 0 && [ ! -s "$T/err" ]'
# A terminal, through script(1) (util-linux/bsdutils): the live line replaces the step lines.
if command -v script >/dev/null 2>&1; then
    TERM=xterm script -qec "$NMT train $T/tiny.json --set train.max_steps=20 --set output.dir=$T/runs/tty" /dev/null \
        >"$T/tty.txt" 2>&1
    check "progress on a terminal: a redrawn line 'epoch 1/30 [###...] NN%  step ...'" \
        eval 'grep -q "$(printf "\r\033\\[K")epoch 1/30 \[#*\.*\] *[0-9]*%  step [0-9]*  loss " "$T/tty.txt"'
    check "progress on a terminal: an ETA while the epoch runs, no plain step lines" \
        eval 'grep -q "ETA [0-9]*s" "$T/tty.txt" && ! grep -q "^nmt: step " "$T/tty.txt"'
    check "progress on a terminal: messages start on a clean line" \
        eval 'grep -q "$(printf "\r\033\\[K")nmt: wrote " "$T/tty.txt" || grep -q "^nmt: wrote " "$T/tty.txt"'
    TERM=xterm script -qec "$NMT train $T/tiny.json --verbose --set train.max_steps=20 --set output.dir=$T/runs/tty2" \
        /dev/null >"$T/tty2.txt" 2>&1
    check "progress --verbose on a terminal: the step lines too, with the learning rate" \
        eval 'grep -q "nmt: step 10  epoch 1" "$T/tty2.txt" && grep -q "learning rate 0.003, gradient norm" "$T/tty2.txt"'
else
    for what in "progress on a terminal: a redrawn line" "progress on a terminal: an ETA" \
        "progress on a terminal: messages start on a clean line" "progress --verbose on a terminal"; do
        skip "$what" "no script(1) to give nmt a terminal (sh scripts/install-deps.sh --test-tools)"
    done
fi

# ---------------------------------------------------------------- 10. the man page

# docs/nmt.1 (installed by make install) names every command nmt --help lists.
run --help
missing=$(sed -n 's/^  \([a-z]*\) .*/\1/p' "$T/out" | grep -vx nmt | sort -u | while read -r c; do
    grep -q "^\.B nmt $c" docs/nmt.1 || printf '%s ' "$c"; done)
check "man page: a SYNOPSIS line for every command (missing: ${missing:-none})" [ -z "$missing" ]
if command -v groff >/dev/null 2>&1; then
    check "man page: groff renders it without warnings" \
        eval '[ -z "$(groff -man -Tutf8 -ww -z docs/nmt.1 2>&1)" ]'
else
    skip "man page: groff renders it without warnings" "no groff (sh scripts/install-deps.sh --test-tools)"
fi

# ---------------------------------------------------------------- 11. keys and options that do not apply

# A config key given where it does not apply is refused (exit 1), naming it, the key
# that rules it out with its value, and what to do; so is an option of nmt bpe apply
# that does not apply to what CODES is (a usage error, exit 2). A run's config.json
# leaves such keys out and trains again as it is; a run directory whose config.json
# lists every key, as nmt 0.1.0 wrote it, still resumes.
run train "$T/tiny.json" --set model.window=5
check "--set model.window=5 with bahdanau: a usage error (exit 2), one line naming the key, model.attention's value and what to do" \
    eval 'usage_error train &&
          has "$T/err" "nmt: --set: model.window applies only to local attention kinds (model.attention is \"bahdanau\"): remove it, or choose local_monotonic or local_predictive"'
sed 's/"learning_rate": 0.003,/"learning_rate": 0.003, "lr_decay": 0.25,/' "$T/tiny.json" >"$T/decay.json"
run train "$T/decay.json"
check "train.lr_decay in the file without the plateau schedule: exit 1, naming the file, the key and the schedule" \
    eval 'exits 1 && has "$T/err" "nmt: $T/decay.json: train.lr_decay applies only to the plateau schedule (train.lr_schedule is \"constant\")"'
check "config.json of a run leaves out the keys that do not apply" \
    eval '! grep -Eq "\"(window|input_feed|scaled|bpe_merges|lr_decay|patience|teacher_forcing_final)\"" "$RUN/config.json" &&
          grep -q "\"validate_every\"" "$RUN/config.json"'
run train "$RUN/config.json" --quiet --set train.max_steps=2 --set "output.dir=$T/runs/again"
check "a run's config.json given back to nmt train as it is: trains (exit 0)" eval 'exits 0 && [ -s "$T/runs/again/model.bin" ]'
# The run directory as nmt 0.1.0 left it: config.json with every key.
cp -R "$RUN" "$T/runs/old"
sed -e 's/^\([[:space:]]*\)"embed":\(.*\)$/&\n\1"window":\t10,\n\1"input_feed":\tfalse,/' \
    -e 's/^\([[:space:]]*\)"learning_rate":\(.*\)$/&\n\1"lr_decay":\t0.5,\n\1"patience":\t1,/' \
    "$RUN/config.json" >"$T/runs/old/config.json"
run train --resume "$T/runs/old"
check "resume a run directory whose config.json has every key: exit 0" \
    eval 'grep -q "\"window\"" "$T/runs/old/config.json" && exits 0 && grep -q "finished at step" "$T/err"'
run train "$T/runs/old/config.json" --set "output.dir=$T/runs/old2"
check "the same config.json given as a person's CONFIG.json: exit 1, naming model.input_feed" \
    eval 'exits 1 && has "$T/err" "model.input_feed applies only to Luong attention kinds (model.attention is \"bahdanau\")"'

finish
