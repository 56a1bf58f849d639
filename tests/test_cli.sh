#!/bin/sh
# test_cli.sh — end-to-end test of the nmt binary: options and exit codes, config
# errors, a small training run that must learn, translate as a pipeline filter, eval,
# and damaged model files.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_cli.sh
# NMT=path/to/nmt selects another binary. Uses only data/mar.txt and a temporary
# directory; about 5 s on 2 cores, most of it the training run.
# Prints "  ok what" / "FAIL what" per check, "skip what: why" for each check that cannot
# run here (a tool it needs is missing), and ends with
# "test_cli: N passed, M failed, K skipped".
#
# Nothing here depends on a clock: a run to be interrupted stops itself at a known step
# (NMT_PAUSE_AT_STEP, src/base/testhook.h) and the test waits for that, or for a file to
# have its lines, before it acts; the time limits only keep a hung nmt from hanging
# the suite.

NAME=test_cli
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines; $LIMIT is 300 s,
                # generous for the sanitizer build
# one_error — stderr is exactly one line, starting with $PREFIX (a literal).
one_error() {
    [ "$(lines "$T/err")" = 1 ] || return 1
    case $(cat "$T/err") in "$PREFIX"*) return 0 ;; esac
    return 1
}
# field KEY FILE — the number after "KEY": on each line of FILE that has one.
field() { sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2"; }

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
    eval 'usage_error "" && has "$T/err" "nmt: missing COMMAND (train, translate, classify, eval, serve, info, score, plot, average, bpe)"'

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

# 300 pairs spread over the corpus (it is sorted by length), 270 trained on, 30 held out.
awk 'NR % 97 == 0' "$DATA" | head -n 300 >"$T/train.tsv"
RUN=$T/runs/tiny
# learning_rate 0.003: at the default 0.001 this model needs more than 30 epochs to
# memorise its 270 pairs (BLEU 5.6 on train.tsv after 30), at 0.003 it has (BLEU 88).
# Validation every 100 steps as well as at the 30 epoch ends, best.bin by BLEU.
cat >"$T/tiny.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 32, "hidden": 64},
  "train": {"batch_size": 16, "epochs": 30, "learning_rate": 0.003, "threads": 1, "log_every": 10,
            "validate_every": 100, "best_metric": "bleu"},
  "output": {"dir": "$RUN"}
}
EOF
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

# ---------------------------------------------------------------- 4. translate

# 1 a sentence, 2 empty, 3 whitespace, 4 punctuation, 5 5000 words, 6 invalid UTF-8,
# 7 empty, 8 and 9 sentences, the last without a final newline.
{
    printf 'Show me.\n\n \t  \n?!.,;\n'
    awk 'BEGIN { for (i = 0; i < 5000; i++) printf "word%d ", i; printf "\n" }'
    printf '\377\376\n\nWe will go.\nI am quiet.'
} >"$T/in.txt"
$LIMIT "$NMT" translate "$M" <"$T/in.txt" >"$T/out" 2>"$T/err"
rc=$?
check "translate: exit 0" exits 0
check "translate: 9 lines in, 9 lines out (has $(lines "$T/out"))" [ "$(lines "$T/out")" = 9 ]
check "translate: empty lines give empty lines" [ -z "$(nth_line 2 "$T/out")$(nth_line 7 "$T/out")" ]
check "translate: a whitespace-only line gives an empty line" [ -z "$(nth_line 3 "$T/out")" ]
check "translate: sentences are translated (lines 1, 8 and the unterminated 9)" \
    [ -n "$(nth_line 1 "$T/out")" -a -n "$(nth_line 8 "$T/out")" -a -n "$(nth_line 9 "$T/out")" ]
check "translate: invalid UTF-8 gives an empty line" [ -z "$(nth_line 6 "$T/out")" ]
check "translate: invalid UTF-8 warns, naming line 6" grep -q '^nmt: warning: .*line 6: .*UTF-8' "$T/err"
check "translate: a cut 5000-word line warns, naming line 5" grep -q '^nmt: warning: .*line 5: ' "$T/err"
check "translate: no other stderr lines" [ "$(lines "$T/err")" = 2 ]

printf 'Show me.\nI am quiet.' | $LIMIT "$NMT" translate "$M" >"$T/out" 2>/dev/null
check "translate: input without a final newline: one line per line" [ "$(lines "$T/out")" = 2 ]
check "translate: output always ends in a newline" [ "$(tail -c 1 "$T/out" | od -An -c | tr -d ' ')" = '\n' ]
printf 'Show me.\r\n' | $LIMIT "$NMT" translate "$M" >"$T/crlf.txt" 2>/dev/null
check "translate: a CRLF line translates as the LF one" \
    eval '[ -s "$T/crlf.txt" ] && [ "$(cat "$T/crlf.txt")" = "$(cat "$T/m.txt")" ]'
printf 'Show\000me.\nShow me.\n' | $LIMIT "$NMT" translate "$M" >"$T/out" 2>"$T/err"
check "translate: a line with a NUL byte gives an empty line and a warning" \
    eval '[ "$(lines "$T/out")" = 2 ] && [ -z "$(nth_line 1 "$T/out")" ] && grep -q "line 1: NUL" "$T/err"'
# --threads: OpenBLAS's thread count; the translation does not depend on it here.
printf 'Show me.\n' | $LIMIT "$NMT" translate "$M" --threads 1 >"$T/t1.txt" 2>/dev/null
check "translate --threads 1: the same translation" eval '[ -s "$T/t1.txt" ] && cmp -s "$T/t1.txt" "$T/m.txt"'
for bad in x -1 257; do
    run translate "$M" --threads "$bad"
    check "translate --threads $bad: usage error (exit 2)" eval 'exits 2 && grep -q "^nmt: translate: --threads needs" "$T/err"'
done
# An ensemble (--models): the mean of a model's probabilities with themselves is the
# model's, so the same translations and n-best lists (the scores to float rounding); a
# different pair translates too.
printf 'Show me.\nI am hungry.\n' >"$T/two.txt"
run translate "$M" "$T/two.txt"
cp "$T/out" "$T/alone.txt"
run translate "$T/two.txt" --models "$M" "$M"
check "translate --models M M: exit 0, the model's own translations" eval 'exits 0 && cmp -s "$T/out" "$T/alone.txt"'
run translate "$M" --nbest 2 "$T/two.txt"
cut -d'|' -f1-4 "$T/out" >"$T/alone.txt"
run translate "$T/two.txt" --nbest 2 --models "$M" "$M"
check "translate --models M M --nbest 2: the same hypotheses as the model alone" \
    eval 'exits 0 && cut -d"|" -f1-4 "$T/out" | cmp -s - "$T/alone.txt"'
run translate "$T/two.txt" --beam 3 --models "$M" "$RUN/checkpoint.bin"
check "translate --models M CHECKPOINT: exit 0, one line per line" eval 'exits 0 && [ "$(lines "$T/out")" = 2 ]'
run translate "$T/two.txt" --models "$M"
check "translate --models with one model: usage error (exit 2)" exits 2
run translate --models "$M" "$M" "$T/two.txt"
check "translate --models M M TEXT: the text is read as a model and refused (exit 1), naming it" \
    eval 'exits 1 && grep -q "^nmt: $T/two.txt: " "$T/err"'
# A model file among the inputs (nmt translate m1.bin m2.bin) is never taken as text.
printf 'Show me.\n' >"$T/show.txt"
run translate "$M" "$T/show.txt" "$RUN/checkpoint.bin"
PREFIX="nmt: $RUN/checkpoint.bin: an nmt model file, not text to translate"
check "translate MODEL TEXT MODEL: exit 1, one line naming the model file" eval 'exits 1 && one_error'
check "translate MODEL TEXT MODEL: the text before it translated, nothing of the model file" \
    eval '[ "$(lines "$T/out")" = 1 ] && [ "$(cat "$T/out")" = "$(cat "$T/m.txt")" ]'
run translate "$M" <"$M"
check "translate MODEL < MODEL: exit 1, naming stdin" eval 'exits 1 && grep -q "^nmt: stdin: an nmt model file" "$T/err"'

# The longest training sentences (the file is sorted by length).
tail -n 20 "$T/train.tsv" | cut -f 1 >"$T/long.txt"
$LIMIT "$NMT" translate "$M" <"$T/long.txt" >"$T/free.txt" 2>/dev/null
$LIMIT "$NMT" translate "$M" --max-len 3 <"$T/long.txt" >"$T/max3.txt" 2>/dev/null
check "translate: without --max-len some outputs exceed 3 words" awk 'NF > 3 { f = 1 } END { exit !f }' "$T/free.txt"
check "translate --max-len 3: 20 lines, none over 3 words, some exactly 3" \
    awk 'NF > 3 { over = 1 } NF == 3 { three = 1 } END { exit !(NR == 20 && !over && three) }' "$T/max3.txt"
for v in x 0 -1 3x; do
    run translate "$M" --max-len "$v"
    check "translate --max-len $v: exit 2" exits 2
done
run translate "$M" --max-len
check "translate --max-len without a value: exit 2" exits 2

# ---------------------------------------------------------------- 5. pipeline flushing

# nmt reads a fifo that this shell holds open for writing (and reading, so that opening
# never blocks whatever nmt does); each translation must arrive while stdin stays open
# (wait_lines: tests/lib.sh).
mkfifo "$T/fifo"
: >"$T/fifo.out"
exec 3<>"$T/fifo"
"$NMT" translate "$M" <"$T/fifo" >"$T/fifo.out" 2>"$T/fifo.err" 3>&- &
pid=$!
printf 'Show me.\n' >&3
check "pipeline: the 1st translation arrives while stdin is open" wait_lines "$T/fifo.out" 1
check "pipeline: nmt is still waiting for input" kill -0 $pid
printf 'We will go.\n' >&3
check "pipeline: the 2nd translation arrives while stdin is open" wait_lines "$T/fifo.out" 2
exec 3>&-
i=0
while kill -0 $pid 2>/dev/null && [ "$i" -lt 30000 ]; do sleep 0.01; i=$((i + 1)); done
if kill -0 $pid 2>/dev/null; then
    kill $pid
    bad "pipeline: nmt ends at end of input"
else
    ok "pipeline: nmt ends at end of input"
fi
wait $pid
rc=$?
check "pipeline: exit 0 with 2 lines" eval 'exits 0 && [ "$(lines "$T/fifo.out")" = 2 ]'
check "pipeline: the first line is the translation of 'Show me.'" \
    eval '[ "$(nth_line 1 "$T/fifo.out")" = "$(cat "$T/m.txt")" ]'

# ---------------------------------------------------------------- 6. damaged model files

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

# ---------------------------------------------------------------- 7. eval

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

# ---------------------------------------------------------------- 8. beam search, batching, determinism

cut -f1 "$T/train.tsv" | head -n 60 >"$T/src60.txt"
run translate "$M" --batch 1 <"$T/src60.txt"
cp "$T/out" "$T/greedy.txt"
run translate "$M" --beam 1 --batch 1 <"$T/src60.txt"
check "translate --beam 1: the same output as greedy" cmp -s "$T/out" "$T/greedy.txt"
run translate "$M" --batch 16 <"$T/src60.txt"
check "translate --batch 16: the same output as one line at a time" cmp -s "$T/out" "$T/greedy.txt"
# --batch's default: 64 lines together from a file (named, or stdin redirected from one),
# one at a time from a pipe or a terminal. The same output either way; what shows the
# batch is the order of a warning about line 2 and the answer to line 1 (2>&1): a batch
# reads (and warns about) its lines before it answers any of them.
run translate "$M" "$T/src60.txt"
check "translate FILE (default --batch 64): the same output as --batch 1" cmp -s "$T/out" "$T/greedy.txt"
run translate "$M" <"$T/src60.txt"
check "translate <FILE (default --batch 64): the same output as --batch 1" cmp -s "$T/out" "$T/greedy.txt"
run translate "$M" --beam 3 --align --batch 1 "$T/src60.txt"
cp "$T/out" "$T/beam1.txt"
run translate "$M" --beam 3 --align "$T/src60.txt"
check "translate --beam 3 --align FILE (default batch): the same output as --batch 1" cmp -s "$T/out" "$T/beam1.txt"
{ printf 'Show me.\n'; head -c 2000 /dev/zero | tr '\0' a; printf '\nWe will go.\n'; } >"$T/warn3.txt"
order() { grep -n "" "$1" | sed -n 's/^\([0-9]*\):nmt: warning: .*line 2: .*/\1/p'; }
$LIMIT "$NMT" translate "$M" --max-line-bytes 1024 "$T/warn3.txt" >"$T/mixed" 2>&1
check "translate FILE: a batch by default (line 2's warning before line 1's answer)" [ "$(order "$T/mixed")" = 1 ]
$LIMIT "$NMT" translate "$M" --max-line-bytes 1024 <"$T/warn3.txt" >"$T/mixed" 2>&1
check "translate <FILE: a batch by default (line 2's warning before line 1's answer)" [ "$(order "$T/mixed")" = 1 ]
cat "$T/warn3.txt" | $LIMIT "$NMT" translate "$M" --max-line-bytes 1024 >"$T/mixed" 2>&1
check "translate from a pipe: one line at a time by default (line 1's answer before line 2's warning)" \
    [ "$(order "$T/mixed")" = 2 ]
$LIMIT "$NMT" translate "$M" --max-line-bytes 1024 --batch 1 "$T/warn3.txt" >"$T/mixed" 2>&1
check "translate FILE --batch 1: --batch wins (line 1's answer before line 2's warning)" [ "$(order "$T/mixed")" = 2 ]
run translate "$M" --beam 5 --batch 7 <"$T/src60.txt"
check "translate --beam 5: exit 0, one line per input line" eval 'exits 0 && [ "$(lines "$T/out")" = 60 ]'
check "translate --beam 5: output differs from nothing (non-empty lines)" [ "$(grep -c . "$T/out")" -ge 55 ]
run translate "$M" --beam 0
check "translate --beam 0: exit 2" exits 2
run translate "$M" --length-penalty -1
check "translate --length-penalty -1: exit 2" exits 2
run eval "$M" "$T/train.tsv" --beam 5 --length-penalty 1.0
check "eval --beam 5: prints BLEU" eval 'exits 0 && grep -q "^BLEU = " "$T/out"'

# Training is bitwise reproducible for a fixed thread count (2 OpenBLAS threads here):
# the same config twice (same output.dir, which the model file records) gives the same file.
sed -e 's/"epochs": 30/"epochs": 3/' -e 's/"threads": 1/"threads": 2/' -e "s#$RUN#$T/runs/det#" \
    "$T/tiny.json" >"$T/det.json"
run train "$T/det.json" --quiet
cp "$T/runs/det/model.bin" "$T/det1.bin" 2>/dev/null
run train "$T/det.json" --quiet
check "train twice with 2 threads: bitwise identical model.bin" \
    eval '[ -s "$T/det1.bin" ] && cmp -s "$T/runs/det/model.bin" "$T/det1.bin"'

# ---------------------------------------------------------------- 9. the model family

# Every example config in configs/family/ trains (its model section, at a tiny size, on
# the 270 pairs), its loss falls, and the model translates greedily and with beam
# search, from the architecture stored in the file. The model section of each config
# is on one line, which is what lets sed shrink it.
head -n 20 "$T/src60.txt" >"$T/src20.txt"
for cfg in configs/family/*.json; do
    name=$(basename "$cfg" .json)
    model=$(grep '"model"' "$cfg" | sed -E -e 's/"embed": [0-9]+/"embed": 32/' -e 's/"hidden": [0-9]+/"hidden": 32/' \
        -e 's/"window": [0-9]+/"window": 3/' -e 's/,$//')
    cat >"$T/fam.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  $model,
  "train": {"batch_size": 16, "epochs": 3, "max_steps": 45, "learning_rate": 0.005, "threads": 1, "log_every": 5},
  "output": {"dir": "$T/runs/fam_$name"}
}
EOF
    run train "$T/fam.json" --quiet
    check "family $name: trains (exit 0)" exits 0
    [ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/err" | tail -n 3
    losses=$(grep -o '"loss":[0-9.]*' "$T/runs/fam_$name/train.log" | cut -d: -f2)
    first=$(printf '%s\n' "$losses" | head -n 1); last=$(printf '%s\n' "$losses" | tail -n 1)
    check "family $name: the training loss falls ($first -> $last)" \
        awk -v a="$first" -v b="$last" 'BEGIN { exit !(a != "" && b != "" && b < 0.85 * a) }'
    run translate "$T/runs/fam_$name/model.bin" --batch 8 <"$T/src20.txt"
    check "family $name: translates, one line per input" eval 'exits 0 && [ "$(lines "$T/out")" = 20 ]'
    cp "$T/out" "$T/fam_greedy.txt"
    run translate "$T/runs/fam_$name/model.bin" --beam 1 <"$T/src20.txt"
    check "family $name: beam 1 equals greedy" eval 'exits 0 && cmp -s "$T/out" "$T/fam_greedy.txt"'
    run translate "$T/runs/fam_$name/model.bin" --beam 4 --batch 5 <"$T/src20.txt"
    check "family $name: beam 4 translates" eval 'exits 0 && [ "$(lines "$T/out")" = 20 ]'
done

# Scheduled sampling: the probability of feeding the gold word falls linearly from
# teacher_forcing to teacher_forcing_final over the planned updates (45 here).
sed -e 's/"epochs": 30/"epochs": 3, "max_steps": 45, "log_every": 1, "teacher_forcing": 0.9, "teacher_forcing_decay": "linear", "teacher_forcing_final": 0.3/' \
    -e 's/, "log_every": 10//' -e "s#$RUN#$T/runs/sampling#" "$T/tiny.json" >"$T/sampling.json"
run train "$T/sampling.json" --quiet
check "scheduled sampling: trains (exit 0)" exits 0
tf=$(grep -o '"teacher_forcing":[0-9.]*' "$T/runs/sampling/train.log" | cut -d: -f2)
check "scheduled sampling: 45 steps logged, from 0.9 at the first to 0.3 at the last" \
    eval '[ "$(printf "%s\n" "$tf" | wc -l)" -eq 45 ] && [ "$(printf "%s\n" "$tf" | head -n 1)" = 0.9000 ] &&
          [ "$(printf "%s\n" "$tf" | tail -n 1)" = 0.3000 ]'
check "scheduled sampling: falling at every step" \
    eval 'printf "%s\n" "$tf" | awk "NR > 1 && \$1 >= prev { exit 1 } { prev = \$1 }"'
run translate "$T/runs/sampling/model.bin" <"$T/src20.txt"
check "scheduled sampling: the model translates" eval 'exits 0 && [ "$(lines "$T/out")" = 20 ]'

# ---------------------------------------------------------------- 10. score

# tests/fixtures/score: 300 model translations and references, and what nmt score must
# print for them, computed by scripts/reference/sacrebleu_reference.py (an independent
# re-implementation of sacreBLEU's defaults; see tests/test_score.c).
FX=$(pwd)/tests/fixtures/score
run score --help
check "score --help exits 0 with its usage on stdout" eval 'exits 0 && grep -q "^usage: nmt score " "$T/out"'
run --help
check "--help lists score" grep -q "^  score " "$T/out"

run score "$FX/ref.txt" -i "$FX/hyp.txt"
check "score: exit 0, nothing on stderr" eval 'exits 0 && [ ! -s "$T/err" ]'
check "score: prints exactly the expected BLEU, chrF2, pairs and signatures" cmp -s "$T/out" "$FX/expected.txt"
check "score: the BLEU line has eval's format" \
    grep -Eq '^BLEU = [0-9]+\.[0-9]{2} ([0-9]+\.[0-9]/){3}[0-9]+\.[0-9] \(BP = [0-9.]+ ratio = [0-9.]+ hyp_len = [0-9]+ ref_len = [0-9]+\)$' "$T/out"
cp "$T/out" "$T/score.txt"
run score "$FX/ref.txt" <"$FX/hyp.txt"
check "score REF < HYP: translations from stdin (sacreBLEU's form), the same output" \
    eval 'exits 0 && cmp -s "$T/out" "$T/score.txt"'
run score "$FX/ref.txt" -i - <"$FX/hyp.txt"
check "score REF -i -: translations from stdin, the same output" eval 'exits 0 && cmp -s "$T/out" "$T/score.txt"'
run score - -i "$FX/hyp.txt" <"$FX/ref.txt"
check "score - -i HYP: references from stdin, the same output" eval 'exits 0 && cmp -s "$T/out" "$T/score.txt"'
run score --input "$FX/hyp.txt" "$FX/ref.txt"
check "score --input HYP REF: options anywhere, the same output" eval 'exits 0 && cmp -s "$T/out" "$T/score.txt"'
# The swapped order: translations with <unk> (a translator's word) given as references.
sed '1,3s/^/<unk> /' "$FX/hyp.txt" >"$T/unkhyp.txt"
run score "$FX/ref.txt" -i "$T/unkhyp.txt"
check "score with <unk> in the translations: exit 0, no warning" eval 'exits 0 && [ ! -s "$T/err" ]'
cp "$T/out" "$T/unk.txt"
run score "$T/unkhyp.txt" -i "$FX/ref.txt"
check "score with the files swapped: still scored (exit 0), another BLEU" \
    eval 'exits 0 && ! cmp -s "$T/out" "$T/unk.txt"'
check "score with the files swapped: a warning that they look swapped, naming both" \
    grep -q "^nmt: warning: the references ($T/unkhyp.txt) have <unk> in 3 lines and the hypotheses ($FX/ref.txt) in none: are the files the wrong way round" "$T/err"

run score "$FX/ref.txt" -i "$FX/hyp.txt" --sentence
check "score --sentence: exit 0, exactly the expected per-pair lines and corpus lines" \
    eval 'exits 0 && cmp -s "$T/out" "$FX/expected_sentence.txt"'
check "score --sentence: 300 pair lines numbered 1..300, then the corpus lines" \
    eval '[ "$(grep -c "	BLEU = .*	chrF2 = " "$T/out")" = 300 ] && [ "$(cut -f 1 "$T/out" | head -n 300 | tail -n 1)" = 300 ] &&
          [ "$(grep -A1 -x "300	.*" "$T/out" | tail -n 1 | cut -c 1-7)" = "BLEU = " ]'

run score "$FX/ref.txt" -i "$FX/hyp.txt" --json
check "score --json: exit 0, one line" eval 'exits 0 && [ "$(lines "$T/out")" = 1 ] && grep -q "^{.*}\$" "$T/out"'
json_bleu=$(field bleu "$T/out")
text_bleu=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/score.txt")
check "score --json: the same BLEU as the text ($json_bleu vs $text_bleu)" \
    eval '[ -n "$text_bleu" ] && [ "$(awk -v b="${json_bleu:-x}" "BEGIN { printf \"%.2f\", b }")" = "$text_bleu" ]'
cp "$T/out" "$T/score.json"
run score "$FX/ref.txt" -i "$FX/hyp.txt" --json --sentence
cp "$T/out" "$T/sentence.json"
if ! command -v python3 >/dev/null 2>&1; then
    for what in "score --json: parses as one JSON object" "score --json --sentence: parses as one JSON object"; do
        skip "$what" "no python3 to parse it (sh scripts/install-deps.sh --test-tools)"
    done
else
    check "score --json: parses as one JSON object with bleu, chrf, signatures and pairs 300" \
        python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and d["pairs"] == 300 and 0 < d["bleu"] < 100 and 0 < d["chrf"] < 100
assert "tok:13a" in d["bleu_signature"] and "nc:6" in d["chrf_signature"] and "sentences" not in d' "$T/score.json"
    check "score --json --sentence: one JSON object with 300 sentences" \
        python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, dict) and len(d["sentences"]) == 300 and d["sentences"][299]["line"] == 300
assert "eff:yes" in d["sentence_bleu_signature"]' "$T/sentence.json"
fi

# Line counts differ: one error line naming both files and both counts.
head -n 299 "$FX/hyp.txt" >"$T/hyp299.txt"
run score "$FX/ref.txt" -i "$T/hyp299.txt"
PREFIX="nmt: $T/hyp299.txt has 299 lines but $FX/ref.txt has 300"
check "score with 299 vs 300 lines: exit 1, one error naming both files and counts" eval 'exits 1 && one_error'
check "score with 299 vs 300 lines: nothing on stdout" [ ! -s "$T/out" ]
run score "$FX/ref.txt" -i "$T/nonexistent.txt"
PREFIX="nmt: $T/nonexistent.txt: "
check "score with a missing HYP: exit 1, one error naming it" eval 'exits 1 && one_error'
run score "$T/nonexistent.txt" -i "$FX/hyp.txt"
check "score with a missing REF: exit 1, naming it" eval 'exits 1 && grep -q "^nmt: $T/nonexistent.txt: " "$T/err"'
run score "$T" -i "$FX/hyp.txt"
check "score with a directory: exit 1" eval 'exits 1 && grep -q "^nmt: $T: " "$T/err"'
: >"$T/empty.txt"
run score "$T/empty.txt" -i "$T/empty.txt"
check "score with two empty files: exit 1 with a message" eval 'exits 1 && grep -q "^nmt: .*no sentence pairs" "$T/err"'

# Usage errors: no REF; two files without -i (the pre-0.2 order HYP REF, which sacreBLEU
# would read as two references), said so; -i twice; both from stdin; an unknown option,
# tokeniser or language pair; an option without its value.
for args in "" "HYP REF" "REF -i HYP REF" "REF -i HYP -i HYP" "REF -i HYP --frob" "- -i -" "REF -tok intl" \
        "REF -l enzh" "REF -i"; do
    run score $(echo "$args" | sed -e "s#HYP#$FX/hyp.txt#g" -e "s#REF#$FX/ref.txt#g") </dev/null
    check "score ${args:-(no arguments)}: usage error, exit 2, one line naming nmt score --help" usage_error score
done
run score "$FX/hyp.txt" "$FX/ref.txt"
check "score HYP REF: the message names sacreBLEU's order" grep -q "^nmt: .*nmt score REF.txt -i HYP.txt" "$T/err"

# The other tokenisers and -lc: the signatures say what was computed; -l picks zh for a
# Chinese target and says what it does for Japanese (no MeCab); an explicit -tok wins.
# (The scores themselves are pinned by tests/test_score.c's option cases.)
run score "$FX/ref.txt" -i "$FX/hyp.txt" -tok char
check "score -tok char: tok:char in the signature, another BLEU" \
    eval 'exits 0 && grep -q "^BLEU signature: .*|tok:char|" "$T/out" && ! cmp -s "$T/out" "$T/score.txt"'
run score "$FX/ref.txt" -i "$FX/hyp.txt" -lc
check "score -lc: case:lc in both signatures" \
    eval 'exits 0 && grep -q "^BLEU signature: nrefs:1|case:lc|" "$T/out" && grep -q "^chrF signature: nrefs:1|case:lc|" "$T/out"'
run score "$FX/ref.txt" -i "$FX/hyp.txt" -l en-zh
check "score -l en-zh: tok:zh" eval 'exits 0 && grep -q "^BLEU signature: .*|tok:zh|" "$T/out"'
run score "$FX/ref.txt" -i "$FX/hyp.txt" -l en-ja
check "score -l en-ja: tok:char, and a note that sacreBLEU would use MeCab" \
    eval 'exits 0 && grep -q "^BLEU signature: .*|tok:char|" "$T/out" && grep -q "^nmt: note: .*ja-mecab" "$T/err"'
run score "$FX/ref.txt" -i "$FX/hyp.txt" -l en-zh -tok none
check "score -l en-zh -tok none: the explicit tokeniser wins" \
    eval 'exits 0 && grep -q "^BLEU signature: .*|tok:none|" "$T/out"'
run score "$FX/ref.txt" -i "$FX/hyp.txt" -l en-mr
check "score -l en-mr: 13a, the same output as without -l" eval 'exits 0 && cmp -s "$T/out" "$T/score.txt"'

# Invalid UTF-8 (line 5) and a NUL byte (line 9): warnings naming file and line, and
# the same scores as with those two lines empty.
{
    sed -n '1,4p' "$FX/hyp.txt"; printf '\377\376 x\n'; sed -n '6,8p' "$FX/hyp.txt"; printf 'a\000b\n'
    sed -n '10,$p' "$FX/hyp.txt"
} >"$T/badhyp.txt"
awk 'NR == 5 || NR == 9 { print ""; next } { print }' "$FX/hyp.txt" >"$T/holes.txt"
run score "$FX/ref.txt" -i "$T/badhyp.txt"
check "score with invalid UTF-8 and NUL lines: exit 0" exits 0
check "score: warns 'line 5: invalid UTF-8' naming the file" grep -q "^nmt: warning: $T/badhyp.txt line 5: invalid UTF-8" "$T/err"
check "score: warns 'line 9: NUL byte' naming the file" grep -q "^nmt: warning: $T/badhyp.txt line 9: NUL byte" "$T/err"
check "score: exactly those two warnings" [ "$(lines "$T/err")" = 2 ]
cp "$T/out" "$T/bad.txt"
run score "$FX/ref.txt" -i "$T/holes.txt"
check "score: bad lines are scored as empty lines" eval 'exits 0 && cmp -s "$T/out" "$T/bad.txt"'
check "score: and that changes the score" eval '! cmp -s "$T/out" "$T/score.txt"'
run score "$T/holes.txt" -i "$FX/hyp.txt"
check "score with empty reference lines: exit 0, a warning naming the file and line 5" \
    eval 'exits 0 && grep -q "^nmt: warning: $T/holes.txt: 2 empty reference lines (the first is line 5)" "$T/err"'
# Malformed inputs of every kind give sensible output and no crash.
{
    printf '\n?!.,;\n'
    awk 'BEGIN { for (i = 0; i < 5000; i++) printf "word%d ", i; printf "\n" }'
    printf '\377\nlast line without newline'
} >"$T/weird.txt"
printf 'x\n...\nword1 word2\nok\nlast\n' >"$T/weird_ref.txt"
run score "$T/weird_ref.txt" -i "$T/weird.txt" --sentence
check "score with empty, punctuation-only, 5000-word, invalid and unterminated lines: 5 pair lines" \
    eval 'exits 0 && [ "$(grep -c "	BLEU = " "$T/out")" = 5 ] && grep -q "^chrF2 = " "$T/out"'

# ---------------------------------------------------------------- 11. plot

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

# ---------------------------------------------------------------- 12. n-best, alignments, attention, <unk>

printf 'tom is here.\n\n%s\n' "$(head -n 1 "$T/src20.txt")" >"$T/three.txt"
cat "$T/src20.txt" >>"$T/three.txt"
run translate "$M" --nbest 3 <"$T/three.txt"
check "nbest 3: exit 0, 3 lines per non-empty line and 1 for the empty one" \
    eval 'exits 0 && [ "$(lines "$T/out")" -eq $((3 * 22 + 1)) ]'
check "nbest: Moses/Marian's 'LINE ||| text ||| F0= LOGPROB ||| SCORE', lines counted from 0, in order" \
    awk -F' \\|\\|\\| ' 'NF != 4 || $1 < prev || $1 !~ /^[0-9]+$/ || $3 !~ /^F0= -?[0-9]+\.[0-9]+$/ || $4 !~ /^-?[0-9]+\.[0-9]+$/ { exit 1 }
        { prev = $1 } END { exit !(prev == 22) }' "$T/out"
check "nbest: scores fall within each line's list" \
    awk -F' \\|\\|\\| ' '$1 == line && $4 > score + 1e-6 { exit 1 } { line = $1; score = $4 }' "$T/out"
check "nbest: the empty line gets one empty hypothesis" grep -qx '1 |||  ||| F0= 0.000000 ||| 0.000000' "$T/out"
cp "$T/out" "$T/nbest_moses.txt"
awk -F' \\|\\|\\| ' 'NR == 1 || $1 != prev { print $2 } { prev = $1 }' "$T/out" >"$T/nbest_first.txt"
run translate "$M" --beam 3 <"$T/three.txt"
check "nbest 3: the first hypotheses are the beam-3 translations" cmp -s "$T/out" "$T/nbest_first.txt"
run translate "$M" --nbest 3 --nbest-format nmt <"$T/three.txt"
check "nbest-format nmt: nmt 0.1's 'LINE ||| text ||| SCORE', the same hypotheses and scores" \
    eval 'exits 0 && awk -F" \\\\|\\\\|\\\\| " "{ print \$1 \" ||| \" \$2 \" ||| \" \$4 }" "$T/nbest_moses.txt" | cmp -s - "$T/out"'
run translate "$M" --nbest 3 --nbest-format marian </dev/null
check "nbest-format marian (unknown): usage error" exits 2
# Length normalisation: SCORE = LOGPROB / lp(length). With the average (lp = output tokens
# + <eos>, the pairs of the alignment + 1), SCORE x (tokens + 1) = LOGPROB on each line;
# with no penalty they are equal. The alignment is the field after the text.
head -n 1 "$T/src20.txt" >"$T/one.txt"
run translate "$M" --nbest 2 --length-penalty avg --align <"$T/one.txt"
check "length-penalty avg: SCORE x (tokens + 1) = LOGPROB on every n-best line" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 2 ] && awk -F" \\\\|\\\\|\\\\| " "{ n = split(\$3, p, \" \"); f = \$4; sub(/^F0= /, \"\", f);
        d = \$5 * (n + 1) - f; if (f >= 0 || d > 1e-4 || d < -1e-4) exit 1 }" "$T/out"'
run translate "$M" --nbest 2 --length-penalty 0 <"$T/one.txt"
check "length-penalty 0: SCORE = LOGPROB" \
    eval 'exits 0 && awk -F" \\\\|\\\\|\\\\| " "{ f = \$3; sub(/^F0= /, \"\", f); if (f != \$4) exit 1 }" "$T/out"'
run translate "$M" --length-penalty average <"$T/one.txt"
check "length-penalty average (misspelt): usage error" exits 2
run translate "$M" --nbest 0
check "nbest 0: usage error, exit 2" exits 2

run translate "$M" --align <"$T/three.txt"
check "align: one line per input line, 'text ||| j-i ...'" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 23 ] && [ "$(grep -c " |||" "$T/out")" = 23 ]'
run translate "$M" <"$T/three.txt"
cp "$T/out" "$T/plain3.txt"
run translate "$M" --align <"$T/three.txt"
check "align: the text part is the plain translation" \
    eval 'sed "s/ |||.*//" "$T/out" | cmp -s - "$T/plain3.txt"'
# Every pair j-i: i counts the output words 0, 1, 2, ... and j is a source position.
check "align: output positions 0..n-1 in order, source positions within the sentence" \
    awk -F' \\|\\|\\| ' 'NR != 2 { n = split($2, p, " "); for (k = 1; k <= n; k++) { split(p[k], ji, "-");
        if (ji[2] != k - 1 || ji[1] < 0 || ji[1] > 40) exit 1 } }' "$T/out"

run translate "$M" --attention-json <"$T/three.txt"
check "attention-json: one JSON object per input line" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 23 ] && [ "$(grep -c "^{\"line\":[0-9]*,\"source\":\[" "$T/out")" = 23 ]'
check "attention-json: the empty line has empty token lists and matrix" \
    grep -q '^{"line":2,"source":\[\],"output":\[\],"translation":"","score":0,"attention":\[\]}$' "$T/out"
# Global attention: each row of weights sums to 1; there are as many rows as output tokens.
check "attention-json: every attention row sums to 1, one row per output token" \
    awk 'NR != 2 { a = $0; sub(/.*"attention":\[\[/, "", a); sub(/\]\]\}$/, "", a); n = split(a, rows, /\],\[/);
        o = $0; sub(/.*"output":\[/, "", o); sub(/\],"translation".*/, "", o); if (n != split(o, x, "\",\"")) exit 1;
        for (r = 1; r <= n; r++) { m = split(rows[r], w, ","); s = 0; for (k = 1; k <= m; k++) s += w[k];
        if (s < 0.999 || s > 1.001) exit 1 } }' "$T/out"
run translate "$M" --attention-json --nbest 2 </dev/null
check "attention-json with nbest: usage error" exits 2

# <unk> replacement on a model with a tiny target vocabulary, so that it says <unk> often.
sed -e 's/"epochs": 30/"epochs": 8/' -e 's/"data": {/"data": {"max_vocab": 30, /' -e "s#$RUN#$T/runs/unk#" \
    "$T/tiny.json" >"$T/unk.json"
run train "$T/unk.json" --quiet
U=$T/runs/unk/model.bin
run translate "$U" <"$T/src20.txt"
unks=$(grep -o '<unk>' "$T/out" | wc -l)
check "replace-unk: the small-vocabulary model does emit <unk> ($unks times)" [ "$unks" -gt 0 ]
run translate "$U" --replace-unk <"$T/src20.txt"
check "replace-unk: no <unk> left, one line per input" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 20 ] && ! grep -q "<unk>" "$T/out"'
# A dictionary that maps every source token to DICT: each <unk> becomes exactly one DICT.
run translate "$U" --attention-json <"$T/src20.txt"
grep -o '"source":\[[^]]*\]' "$T/out" | sed -e 's/"source":\[//' -e 's/\]$//' | tr ',' '\n' |
    sed -e 's/^"//' -e 's/"$//' | sort -u | awk '{ print $0 "\tDICT" }' >"$T/dict.tsv"
run translate "$U" --unk-dict "$T/dict.tsv" <"$T/src20.txt"
check "unk-dict: every <unk> replaced by its dictionary entry" \
    eval 'exits 0 && [ "$(grep -o DICT "$T/out" | wc -l)" -eq "$unks" ]'
run translate "$U" --unk-dict "$T/nonexistent.tsv" <"$T/src20.txt"
check "unk-dict missing: exit 1, naming the file" eval 'exits 1 && grep -q "nonexistent.tsv" "$T/err"'

# Malformed input through every output format: empty, punctuation only, invalid UTF-8,
# a NUL byte, 450 tokens; one record per line each time, no crash.
{
    printf '\n'
    printf '?!... ,;\n'
    printf 'bad \377\376 bytes\n'
    printf 'nul \000 here\n'
    awk 'BEGIN { for (i = 0; i < 450; i++) printf "tom "; print "" }'
    printf 'tom is here.\n'
} >"$T/malformed.txt"
mkdir -p "$T/svg"
for flags in "" "--align" "--beam 3 --align" "--attention-json" "--replace-unk --batch 4" "--attention-svg $T/svg"; do
    run translate "$M" $flags <"$T/malformed.txt"
    check "malformed input, translate $flags: exit 0, 6 records" eval 'exits 0 && [ "$(lines "$T/out")" = 6 ]'
done
check "attention-svg: one heatmap per input line, 000001.svg to 000006.svg" \
    eval '[ "$(ls "$T/svg" | tr "\n" " ")" = "000001.svg 000002.svg 000003.svg 000004.svg 000005.svg 000006.svg " ]'
check "attention-svg: the heatmap of 'tom is here.' is an SVG with its tokens and one cell per weight" \
    eval 'head -c 200 "$T/svg/000006.svg" | grep -q "<svg" && grep -q ">tom<" "$T/svg/000006.svg" &&
          [ "$(grep -o "<rect[^>]*fill=\"#[0-9a-f]*\"" "$T/svg/000006.svg" | wc -l)" -ge 4 ]'
run translate "$M" --attention-svg /dev/null/x <"$T/three.txt"
check "attention-svg into an impossible directory: exit 1, naming it" eval 'exits 1 && grep -q "/dev/null/x" "$T/err"'
run translate "$M" --nbest 2 <"$T/malformed.txt"
check "malformed input, translate --nbest 2: exit 0, lines numbered 0..5" \
    eval 'exits 0 && [ "$(cut -d" " -f1 "$T/out" | sort -un | tr "\n" " ")" = "0 1 2 3 4 5 " ]'

# ---------------------------------------------------------------- 13. checkpoints and resume

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
# The Transformer: trains through nmt train (validation BLEU
# by its own decoder), its model file reads back, a resume with raised epochs goes on,
# and it translates and evaluates.
cat >"$T/tr.json" <<EOF2
{
  "data": {"train": "$T/train.tsv"},
  "model": {"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2},
  "train": {"batch_size": 16, "epochs": 4, "learning_rate": 0.001, "threads": 1, "log_every": 5,
            "checkpoint_every": 0, "lr_schedule": "inverse_sqrt", "warmup_steps": 20, "valid_bleu_max": 10},
  "output": {"dir": "$T/runs/tr"}
}
EOF2
run train "$T/tr.json"
vloss() { grep '"event":"validation"' "$T/runs/tr/train.log" | field valid_loss /dev/stdin; }
check "transformer: trains 4 epochs, each validation loss below the one before ($(vloss | tr '\n' ' '))" \
    eval 'exits 0 && [ "$(vloss | wc -l)" = 4 ] && vloss | awk "NR > 1 && \$1 >= prev { bad = 1 } { prev = \$1 } END { exit bad }"'
run info "$T/runs/tr/model.bin"
check "transformer: nmt info reads its model file back" grep -q "^model: Transformer, 2 encoder and 2 decoder layers, 4 heads, pre-norm, relu" "$T/out"
run train --resume "$T/runs/tr" --set train.epochs=5 --quiet
check "transformer: resumed with train.epochs 5, goes on to a fifth validation" eval 'exits 0 && [ "$(vloss | wc -l)" = 5 ]'
run translate "$T/runs/tr/model.bin" "$T/two.txt"
check "transformer: translates (greedy, cached keys and values), one line per input line" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 2 ]'
run translate "$T/runs/tr/model.bin" "$T/two.txt" --beam 4 --nbest 2
check "transformer: beam search and n-best lists" eval 'exits 0 && [ "$(lines "$T/out")" = 4 ]'
run translate "$T/runs/tr/model.bin" "$T/two.txt" --attention-svg "$T/heads" --attention-heads --align-layer 1 --align
check "transformer: --attention-heads with --attention-svg: a map per line and one per head of the layer (4 heads)" \
    eval 'exits 0 && [ "$(ls "$T/heads" | tr "\n" " ")" = "000001.h1.svg 000001.h2.svg 000001.h3.svg 000001.h4.svg 000001.svg 000002.h1.svg 000002.h2.svg 000002.h3.svg 000002.h4.svg 000002.svg " ] &&
          grep -q "line 1, layer 1, head 3" "$T/heads/000001.h3.svg"'
run translate "$T/runs/tr/model.bin" "$T/two.txt" --align --align-layer 3
check "transformer: --align-layer past its decoder layers: exit 1, naming the model and its 2 layers" \
    eval 'exits 1 && grep -q "^nmt: $T/runs/tr/model.bin: --align-layer 3: the model has 2 decoder layers$" "$T/err"'
run translate "$T/runs/tr/model.bin" "$T/two.txt" --attention-heads
check "translate --attention-heads without --attention-svg: usage error (exit 2)" exits 2
run translate "$M" "$T/two.txt" --align --align-layer 1
check "translate --align-layer with a recurrent model: exit 1, naming the option" \
    eval 'exits 1 && grep -q "align-layer applies only to a Transformer" "$T/err"'
run eval "$T/runs/tr/model.bin" "$T/runs/tr/valid.tsv" --json
check "transformer: nmt eval's loss is the last validation loss" \
    eval 'exits 0 && [ "$(field loss "$T/out" | cut -c1-6)" = "$(vloss | tail -n 1 | cut -c1-6)" ]'
# With dropout: it trains, and a run stopped after one epoch and resumed for a second
# gives the very model of a run of two epochs (the masks' generator is in the checkpoint).
run train "$T/tr.json" --set model.dropout=0.1 --set train.epochs=2 --set output.dir="$T/runs/trd" --quiet
run2=$rc
mv "$T/runs/trd" "$T/runs/trd_ref"
run train "$T/tr.json" --set model.dropout=0.1 --set train.epochs=1 --set output.dir="$T/runs/trd" --quiet
run train --resume "$T/runs/trd" --set train.epochs=2 --quiet
check "transformer with dropout 0.1: one epoch and a resumed second = two epochs, bit for bit" \
    eval '[ $run2 = 0 ] && exits 0 && cmp -s "$T/runs/trd/model.bin" "$T/runs/trd_ref/model.bin"'
rm -rf "$T/runs/trd"
run train "$T/tr.json" --set model.dropout=0 --set train.epochs=2 --set output.dir="$T/runs/trd" --quiet
lastv() { grep '"event":"validation"' "$1/train.log" | tail -n 1 | field valid_loss /dev/stdin; }
check "transformer: dropout changes training (last validation loss $(lastv "$T/runs/trd") without, $(lastv "$T/runs/trd_ref") with)" \
    eval 'exits 0 && [ "$(lastv "$T/runs/trd")" != "$(lastv "$T/runs/trd_ref")" ]'

# Tied with one vocabulary for both sides: one embedding matrix for source, target and
# output (its parameter count: test_transformer_model), said by info; it translates.
run train "$T/tr.json" --set model.tie_embeddings=true --set data.joint_vocab=true --set train.epochs=1 \
    --set output.dir="$T/runs/trs" --quiet
run info "$T/runs/trs/model.bin"
check "transformer: tied with a joint vocabulary, nmt info says one embedding for source, target and output" \
    eval 'exits 0 && grep -q "^model: Transformer, .*, one embedding for source, target and output$" "$T/out"'
run translate "$T/runs/trs/model.bin" "$T/two.txt"
check "transformer with one embedding: translates" eval 'exits 0 && [ "$(lines "$T/out")" = 2 ]'

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

# ---------------------------------------------------------------- 13. nmt info

run info "$T/runs/fam_lstm_luong_bidirectional/model.bin"
check "info: the architecture stored in the file" \
    eval 'exits 0 && grep -q "^model: lstm, 1 layer, bidirectional encoder, luong_general attention, input feeding" "$T/out"'
check "info: sizes, vocabularies, progress and the config" \
    eval 'grep -q "^sizes: embed 32, hidden 32, [0-9]* parameters$" "$T/out" && grep -q "^vocabularies: [0-9]* source" "$T/out" &&
          grep -q "^trained: 45 updates" "$T/out" && grep -q "\"cell\":	\"lstm\"" "$T/out"'
run info "$T/runs/fam_lstm_luong_bidirectional/model.bin" --json
check "info --json: one object with the architecture and parameter count" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 1 ] && grep -q "\"cell\":\"lstm\",\"layers\":1,\"bidirectional\":true,\"attention\":\"luong_general\"" "$T/out" &&
          grep -q "\"parameters\":[1-9]" "$T/out"'
run info "$T/runs/fam_bahdanau/checkpoint.bin"
check "info on a checkpoint: a resumable checkpoint with its best validation loss" \
    eval 'exits 0 && grep -q "resumable checkpoint" "$T/out" && grep -q "^best validation loss: [0-9.]* at update [0-9]*$" "$T/out"'
run info "$T/nonexistent.bin"
check "info on a missing file: exit 1, naming it" eval 'exits 1 && grep -q "nonexistent.bin" "$T/err"'
run info
check "info without a file: usage error" exits 2

# ---------------------------------------------------------------- 14. translate: input files, -o

head -n 5 "$T/src20.txt" >"$T/in_a.txt"
tail -n 4 "$T/src20.txt" >"$T/in_b.txt"
run translate "$M" <"$T/in_a.txt"; cp "$T/out" "$T/exp_a.txt"
run translate "$M" <"$T/in_b.txt"; cat "$T/exp_a.txt" "$T/out" >"$T/exp_ab.txt"
run translate "$M" "$T/in_a.txt" "$T/in_b.txt"
check "translate FILE FILE: the translations of both, in order" eval 'exits 0 && cmp -s "$T/out" "$T/exp_ab.txt"'
run translate "$M" "$T/in_a.txt" - <"$T/in_b.txt"
check "translate FILE -: standard input second" eval 'exits 0 && cmp -s "$T/out" "$T/exp_ab.txt"'
run translate "$M" "$T/in_a.txt" "$T/in_b.txt" -o "$T/translated.txt"
check "translate -o FILE: the output in FILE, nothing on stdout" \
    eval 'exits 0 && [ ! -s "$T/out" ] && cmp -s "$T/translated.txt" "$T/exp_ab.txt"'
run translate "$M" "$T/in_a.txt" "$T/in_b.txt" --nbest 2
check "translate --nbest over two files: line numbers 0..8 run on across them" \
    eval 'exits 0 && [ "$(cut -d" " -f1 "$T/out" | uniq | tr "\n" " ")" = "0 1 2 3 4 5 6 7 8 " ]'
run translate "$M" "$T/in_a.txt" "$T/nonexistent.txt"
check "translate with a missing input file: exit 1, naming it" eval 'exits 1 && grep -q "nonexistent.txt" "$T/err"'
run translate "$M" "$T/in_a.txt" -o /dev/null/x
check "translate -o into an impossible path: exit 1, naming it" eval 'exits 1 && grep -q "/dev/null/x" "$T/err"'
run translate "$M" - - </dev/null
check "translate - -: usage error" exits 2

# ---------------------------------------------------------------- 15. train --set

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

# ---------------------------------------------------------------- 16. progress on a terminal

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

# ---------------------------------------------------------------- 17. subword units

# data.tokenizer bpe on the tiny run's pairs: merges learned, stored in the model,
# applied by translate, and no "@@" ever reaches the output.
run train "$T/tiny.json" --quiet --set data.tokenizer=bpe --set data.bpe_merges=300 --set "output.dir=$T/runs/bpe"
check "bpe: trains (exit 0)" exits 0
run info "$T/runs/bpe/model.bin"
check "bpe: info names the tokenizer and the merges" \
    eval 'grep -q "^tokenizer: bpe, [1-9][0-9]* source and [1-9][0-9]* target merges$" "$T/out" &&
          grep -q "^vocabularies: [0-9]* source, [0-9]* target subword pieces$" "$T/out"'
run eval "$T/runs/bpe/model.bin" "$T/train.tsv"
bleu=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/out")
check "bpe: eval on the training pairs, BLEU ${bleu:-?} > 50" awk -v b="${bleu:-0}" 'BEGIN { exit !(b > 50) }'
check "bpe: eval reports the <unk> shares" \
    grep -q '^<unk> = source [0-9.]*% of words ([0-9.]*% of tokens), target' "$T/out"
cut -f1 "$T/train.tsv" | head -n 40 >"$T/bpe_src.txt"
run translate "$T/bpe_src.txt" --models "$M" "$T/runs/bpe/model.bin"
check "translate --models with another tokenizer's model: exit 1, naming it and what differs" \
    eval 'exits 1 && grep -q "^nmt: $T/runs/bpe/model.bin: cannot join $M in an ensemble (" "$T/err"'
run translate "$T/runs/bpe/model.bin" "$T/bpe_src.txt"
check "bpe: translate writes words, no @@ markers" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && ! grep -q "@@" "$T/out"'
run translate "$T/runs/bpe/model.bin" "$T/bpe_src.txt" --beam 3 --align
check "bpe: beam search and --align work on pieces" eval 'exits 0 && [ "$(lines "$T/out")" = 40 ]'
run eval "$T/runs/bpe/model.bin" "$T/train.tsv" --json
check "bpe: eval --json has unk_words and unk_tokens" \
    eval 'grep -q "\"unk_words\":\[" "$T/out" && grep -q "\"unk_tokens\":\[" "$T/out"'

# The word model on the same data: held-out words it never saw are <unk>; the bpe
# model spells most of them from pieces.
run eval "$M" "$RUN/valid.tsv"
unk_word=$(sed -n 's/^<unk> = source \([0-9.]*\)% of words.*/\1/p' "$T/out")
run eval "$T/runs/bpe/model.bin" "$RUN/valid.tsv"
unk_bpe=$(sed -n 's/^<unk> = source \([0-9.]*\)% of words.*/\1/p' "$T/out")
check "bpe: fewer held-out source words hit <unk> than with words ($unk_bpe% < $unk_word%)" \
    awk -v a="${unk_bpe:-100}" -v b="${unk_word:-0}" 'BEGIN { exit !(a < b) }'

# Killed and resumed, a bpe run ends as the uninterrupted one: the resumed process
# learns the same merges again and checks the vocabularies against the checkpoint's.
mv "$T/runs/bpe" "$T/runs/bpe_straight"
R=$T/runs/bpe
: >"$T/bg.err"
start_paused 100 train "$T/tiny.json" --quiet --set data.tokenizer=bpe --set data.bpe_merges=300 --set "output.dir=$R"
if stopped && [ "$(last_step "$R/train.log")" = 100 ] && kill -9 "$pid"; then killed=1; else killed=0; fi
{ wait "$pid"; } 2>/dev/null
start train "$T/tiny.json" --quiet --resume --set data.tokenizer=bpe --set data.bpe_merges=300 --set "output.dir=$R"
finish_bg
check "bpe: killed at step 100 and resumed, model.bin bit-identical to the uninterrupted run's" \
    eval '[ $killed = 1 ] && exits 0 && grep -q "\"event\":\"resume\"" "$R/train.log" && cmp -s "$R/model.bin" "$T/runs/bpe_straight/model.bin"'
rm -f "$R/model.bin"
run train "$T/tiny.json" --quiet --resume --set data.tokenizer=bpe --set data.bpe_merges=300 --set "output.dir=$R"
check "bpe: a finished run resumed without model.bin writes it again, merges included" \
    eval 'exits 0 && cmp -s "$R/model.bin" "$T/runs/bpe_straight/model.bin"'
run train "$T/tiny.json" --quiet --resume --set data.tokenizer=bpe --set data.bpe_merges=301 --set "output.dir=$R"
check "bpe: resuming with other merges (--set) is a usage error naming --set and data.bpe_merges" \
    eval 'usage_error train && grep -q "^nmt: --set: data.bpe_merges: the checkpoint" "$T/err"'

# Joint vocabulary: one merge list and one vocabulary for both sides.
run train "$T/tiny.json" --quiet --set data.tokenizer=bpe --set data.bpe_merges=200 --set data.joint_vocab=true \
    --set train.max_steps=20 --set "output.dir=$T/runs/joint"
run info "$T/runs/joint/model.bin" --json
src_v=$(sed -n 's/.*"src_vocab":\([0-9]*\).*/\1/p' "$T/out")
tgt_v=$(sed -n 's/.*"tgt_vocab":\([0-9]*\).*/\1/p' "$T/out")
check "bpe joint: one vocabulary for both sides ($src_v, $tgt_v)" \
    eval 'exits 0 && grep -q "\"tokenizer\":\"bpe\",\"joint_vocab\":true" "$T/out" && [ -n "$src_v" ] && [ "$src_v" = "$tgt_v" ]'

# Characters, and a language written without spaces: English to Chinese, 32 pairs
# (tests/fixtures/subword/en-zh.tsv, written for this test). The output has Han
# characters and no spaces between them; chrF shows it learned the pairs.
ZH=$(pwd)/tests/fixtures/subword/en-zh.tsv
printf '{"data": {"train": "%s", "valid_fraction": 0, "tokenizer": "char"},
 "model": {"embed": 32, "hidden": 64},
 "train": {"batch_size": 8, "epochs": 60, "learning_rate": 0.003, "threads": 1, "log_every": 50},
 "output": {"dir": "%s"}}\n' "$ZH" "$T/runs/zh" >"$T/zh.json"
run train "$T/zh.json" --quiet
check "char, English to Chinese: trains (exit 0)" exits 0
run eval "$T/runs/zh/model.bin" "$ZH"
chrf=$(sed -n 's/^chrF2 = \([0-9.]*\)$/\1/p' "$T/out")
check "char, English to Chinese: chrF2 on the training pairs ${chrf:-?} > 50" \
    awk -v c="${chrf:-0}" 'BEGIN { exit !(c > 50) }'
cut -f1 "$ZH" | $LIMIT "$NMT" translate "$T/runs/zh/model.bin" >"$T/zh.out" 2>"$T/err"
# (None of the 32 references has a space, "我喜欢Python。" included.)
check "char, English to Chinese: 32 lines of Han characters, no spaces, no @@" \
    eval '[ "$(lines "$T/zh.out")" = 32 ] && grep -q "我" "$T/zh.out" && ! grep -q " " "$T/zh.out" && ! grep -q "@@" "$T/zh.out"'
run info "$T/runs/zh/model.bin"
check "char: info says characters" eval 'grep -q "^tokenizer: char$" "$T/out"'

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

# nmt bpe: learn, apply, join as pipeline tools.
cut -f1 "$DATA" | head -n 2000 >"$T/en.txt"
run bpe learn --merges 500 "$T/en.txt" -o "$T/codes"
check "bpe learn: 500 merges in subword-nmt's layout" \
    eval 'exits 0 && [ "$(head -n 1 "$T/codes")" = "#version: 0.2" ] && [ "$(lines "$T/codes")" = 501 ] &&
          [ "$(sed 1d "$T/codes" | grep -cv "^[^ ][^ ]* [^ ][^ ]*$")" = 0 ]'
run bpe apply "$T/codes" "$T/en.txt"
cp "$T/out" "$T/en.pieces"
check "bpe apply: one line per line, with @@ pieces" \
    eval 'exits 0 && [ "$(lines "$T/en.pieces")" = 2000 ] && grep -q "@@ " "$T/en.pieces"'
run bpe join "$T/en.pieces"
check "bpe apply | bpe join gives the text back" eval 'exits 0 && cmp -s "$T/out" "$T/en.txt"'
run bpe apply --char "$T/en.txt"
cp "$T/out" "$T/en.chars"
run bpe join "$T/en.chars"
check "bpe apply --char | bpe join gives the text back" eval 'exits 0 && cmp -s "$T/out" "$T/en.txt"'
printf '我爱你。他很好！\n東京は大きいです。\n' | $LIMIT "$NMT" bpe apply --char >"$T/cjk.pieces" 2>"$T/err"
check "bpe apply --char: Chinese and Japanese split into characters glued by @@" \
    eval '[ "$(head -n 1 "$T/cjk.pieces")" = "我@@ 爱@@ 你 。 他@@ 很@@ 好 ！" ]'
$LIMIT "$NMT" bpe join <"$T/cjk.pieces" >"$T/cjk.txt" 2>"$T/err"
check "bpe join: Chinese and Japanese come back without spaces" \
    eval '[ "$(cat "$T/cjk.txt")" = "$(printf "我爱你。他很好！\n東京は大きいです。")" ]'
run bpe apply "$T/runs/bpe/model.bin" "$T/bpe_src.txt"
check "bpe apply MODEL.bin: the model's source merges and text options" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && grep -q "@@ " "$T/out"'
run bpe apply "$M" "$T/bpe_src.txt"
check "bpe apply with a word model: exit 1, saying so" eval 'exits 1 && grep -q "uses word tokens" "$T/err"'
printf '#version: 0.2\na b\nc\n' >"$T/bad_codes"
run bpe apply "$T/bad_codes" "$T/bpe_src.txt"
check "bpe apply with a damaged codes file: exit 1, naming it and the line" \
    eval 'exits 1 && grep -q "bad_codes:3: expected two symbols" "$T/err"'
printf 'good line\nbad \377 line\n' >"$T/bad_utf8.txt"
run bpe learn "$T/bad_utf8.txt"
check "bpe learn on invalid UTF-8: exit 1, naming the file and line" \
    eval 'exits 1 && grep -q "bad_utf8.txt:2: invalid UTF-8 at byte 4" "$T/err"'
run bpe learn --merges 0 "$T/en.txt"
check "bpe learn --merges 0: usage error" exits 2

# --codes-format subword-nmt: subword-nmt's codes, symbols (code points) and lines, byte
# for byte. By hand from apply_bpe.py: the -> t h e</w> -> th e</w> -> the</w>; band ->
# b an d</w> -> b and</w>; then -> th e n</w> ("th e" is no merge); spaces around the
# words and the line ends kept, CRLF and a lone CR end a line as LF; the last line has
# no line end, and gets none.
printf '#version: 0.2\nt h\nth e</w>\na n\nan d</w>\n' >"$T/snmt.codes"
printf 'the band  and then\n  a  \n\nthe\r\nxthe z\rand' >"$T/snmt.in"
printf 'the b@@ and and th@@ e@@ n\n  a  \n\nthe\nx@@ the z\nand' >"$T/snmt.want"
run bpe apply "$T/snmt.codes" --codes-format subword-nmt "$T/snmt.in"
check "bpe apply --codes-format subword-nmt: pieces, spaces and line ends as subword-nmt writes them" \
    eval 'exits 0 && cmp -s "$T/out" "$T/snmt.want"'
$LIMIT "$NMT" bpe apply --codes-format subword-nmt "$T/snmt.codes" <"$T/snmt.in" >"$T/out" 2>"$T/err"
check "bpe apply --codes-format subword-nmt: the same from standard input" cmp -s "$T/out" "$T/snmt.want"
# Version 0.1 (no #version line): "</w>" a symbol of its own, a bare one dropped.
printf 'e </w>\nt h\nth e</w>\n' >"$T/snmt01.codes"
printf 'the tea\n' >"$T/snmt01.in"
run bpe apply "$T/snmt01.codes" --codes-format subword-nmt "$T/snmt01.in"
check "bpe apply --codes-format subword-nmt: version 0.1 codes" eval 'exits 0 && [ "$(cat "$T/out")" = "the t@@ e@@ a" ]'
run bpe apply "$T/snmt01.codes" "$T/snmt01.in"
check "bpe apply: the same codes as nmt's (version 0.2) are refused, naming subword-nmt 0.1" \
    eval 'exits 1 && has "$T/err" "snmt01.codes:1: \"</w>\" on its own is subword-nmt 0.1'"'"'s convention"'
printf '#version: 0.2 byte\na b\n' >"$T/snmt_byte.codes"
run bpe apply "$T/snmt_byte.codes" --codes-format subword-nmt "$T/snmt01.in"
check "bpe apply --codes-format subword-nmt: byte-level codes refused (exit 1)" \
    eval 'exits 1 && has "$T/err" "snmt_byte.codes:1: byte-level codes (subword-nmt learn-bpe --byte) are not supported"'
run bpe apply "$T/snmt.codes" --codes-format subword-nmt "$T/bad_utf8.txt"
check "bpe apply --codes-format subword-nmt on invalid UTF-8: exit 1, naming the file and line" \
    eval 'exits 1 && has "$T/err" "bad_utf8.txt:2: invalid UTF-8 at byte 4"'
# 200 Marathi lines and edge cases; codes and pieces from scripts/reference/subword_nmt_reference.py,
# a re-implementation of subword-nmt's learn-bpe and apply-bpe (no subword-nmt here).
F=$(pwd)/tests/fixtures/subword_nmt
run bpe apply "$F/mar.codes" --codes-format subword-nmt "$F/mar.txt"
check "bpe apply --codes-format subword-nmt: 209 lines byte for byte as the reference (tests/fixtures/subword_nmt)" \
    eval 'exits 0 && cmp -s "$T/out" "$F/mar.pieces"'
run bpe learn --codes-format subword-nmt --merges 500 "$F/mar.txt"
check "bpe learn --codes-format subword-nmt: the reference's 472 merges of code points, in order" \
    eval 'exits 0 && cmp -s "$T/out" "$F/mar.codes"'
run bpe shuffle
check "bpe with an unknown action: usage error" eval 'exits 2 && grep -q "unknown action" "$T/err"'
run bpe apply "$T/nonexistent_codes"
check "bpe apply with a missing codes file: exit 1, naming it" eval 'exits 1 && grep -q "nonexistent_codes" "$T/err"'
run train "$T/tiny.json" --set data.tokenizer=wordpiece
check "train: an unknown data.tokenizer (a --set: usage error, exit 2) names the key and the choices" \
    eval 'exits 2 && grep -q "data.tokenizer" "$T/err" && grep -q "bpe" "$T/err"'

# ---------------------------------------------------------------- 17b. text segmented elsewhere

# data.tokenizer none: the tiny run's pairs segmented by another tool, here nmt bpe
# apply with codes of each side ("Sh@@ ow me ."), and the same pieces written as
# SentencePiece writes them ("▁Sh ow ▁me ▁."). The tokens are split at whitespace only
# and are the model's units as they are; data.subword_format undoes the marks on output.
cut -f1 "$T/train.tsv" >"$T/pre_en.txt"
cut -f2 "$T/train.tsv" >"$T/pre_mr.txt"
$LIMIT "$NMT" bpe learn --merges 300 "$T/pre_en.txt" -o "$T/pre_codes.en" 2>/dev/null
$LIMIT "$NMT" bpe learn --merges 300 "$T/pre_mr.txt" -o "$T/pre_codes.mr" 2>/dev/null
$LIMIT "$NMT" bpe apply "$T/pre_codes.en" "$T/pre_en.txt" >"$T/pre_en.bpe"
$LIMIT "$NMT" bpe apply "$T/pre_codes.mr" "$T/pre_mr.txt" >"$T/pre_mr.bpe"
paste "$T/pre_en.bpe" "$T/pre_mr.bpe" >"$T/bpe_at.tsv"
# subword-nmt's pieces as SentencePiece's: U+2581 before each word's first piece.
sed -e 's/^/▁/' -e 's/\t/\t▁/' -e 's/@@ /\x01/g' -e 's/ / ▁/g' -e 's/\x01/ /g' "$T/bpe_at.tsv" >"$T/spm_style.tsv"
check "none: the pre-segmented pairs have @@ pieces and U+2581 pieces ($(lines "$T/bpe_at.tsv") pairs)" \
    eval 'grep -q "@@ " "$T/bpe_at.tsv" && grep -q "▁" "$T/spm_style.tsv" && ! grep -q "@@" "$T/spm_style.tsv" &&
          [ "$(lines "$T/spm_style.tsv")" = 300 ]'
# No validation split: the vocabulary is then every token of the file (and 4 specials).
cat >"$T/none.json" <<EOF
{
  "data": {"train": "$T/bpe_at.tsv", "tokenizer": "none", "valid_fraction": 0},
  "model": {"embed": 32, "hidden": 64},
  "train": {"batch_size": 16, "epochs": 30, "learning_rate": 0.003, "threads": 1, "log_every": 50},
  "output": {"dir": "$T/runs/none"}
}
EOF
run train "$T/none.json" --quiet --set data.train="$T/bpe_at.tsv" --set data.subword_format=bpe_at \
    --set "output.dir=$T/runs/none_at"
check "none, bpe_at: trains (exit 0)" exits 0
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/err" | tail -n 3
run info "$T/runs/none_at/model.bin" --json
src_v=$(sed -n 's/.*"src_vocab":\([0-9]*\).*/\1/p' "$T/out")
tokens=$(cut -f1 "$T/bpe_at.tsv" | tr ' ' '\n' | grep -v '^$' | sort -u | wc -l)
check "none: the source vocabulary is the file's whitespace tokens, @@ pieces whole ($src_v = $tokens + 4)" \
    eval '[ -n "$src_v" ] && [ "$src_v" = $((tokens + 4)) ]'
check "none: info --json records tokenizer none and subword_format bpe_at" \
    eval 'grep -q "\"tokenizer\":\"none\"" "$T/out" && grep -q "\"subword_format\":\"bpe_at\"" "$T/out"'
run info "$T/runs/none_at/model.bin"
check "none: info says the text is segmented elsewhere and how output is joined" \
    eval 'grep -q "^tokenizer: none (text segmented elsewhere, split at whitespace only), subword_format bpe_at" "$T/out" &&
          grep -q "^vocabularies: [0-9]* source, [0-9]* target tokens$" "$T/out"'
head -n 40 "$T/pre_en.bpe" >"$T/pre_src.txt"
run translate "$T/runs/none_at/model.bin" --attention-json "$T/pre_src.txt"
check "none: the model reads the @@ pieces as they are (Sh@@ ow me ., no \"@\" token)" \
    eval 'exits 0 && grep -q "\"source\":\[\"Sh@@\",\"ow\",\"me\",\".\"\]" "$T/out" && ! grep -q "\"@\"" "$T/out"'
check "none: and writes @@ pieces" grep -q '"output":\[[^]]*@@' "$T/out"
run translate "$T/runs/none_at/model.bin" "$T/pre_src.txt"
check "none, bpe_at: 40 translations, no @@ in them" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && grep -q . "$T/out" && ! grep -q "@@" "$T/out"'
run eval "$T/runs/none_at/model.bin" "$T/bpe_at.tsv"
bleu=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/out")
check "none, bpe_at: eval on the training pairs, references read back as sentences: BLEU ${bleu:-?} > 50" \
    awk -v b="${bleu:-0}" 'BEGIN { exit !(b > 50) }'
check "none, bpe_at: <unk> shares per word" grep -q '^<unk> = source [0-9.]*% of words' "$T/out"
run bpe apply "$T/runs/none_at/model.bin" "$T/pre_src.txt"
check "bpe apply MODEL.bin of tokenizer none: exit 1, nothing to apply" \
    eval 'exits 1 && grep -q "text segmented elsewhere (data.tokenizer \"none\"): it has no segmentation of its own" "$T/err"'

# The same tokens with subword_format none: passed through as they are, @@ and all.
run train "$T/none.json" --quiet --set data.train="$T/bpe_at.tsv" --set train.max_steps=100 \
    --set "output.dir=$T/runs/none_none"
run translate "$T/runs/none_none/model.bin" "$T/pre_src.txt"
check "none, subword_format none: the output keeps its @@ pieces, joined by single spaces" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && grep -q "@@ " "$T/out" && ! grep -q "  " "$T/out"'

# SentencePiece's marks: the output has none, and eval reads the references back.
cut -f1 "$T/spm_style.tsv" | head -n 40 >"$T/spm_src.txt"
run train "$T/none.json" --quiet --set data.train="$T/spm_style.tsv" --set data.subword_format=spm \
    --set "output.dir=$T/runs/none_spm"
check "none, spm: trains (exit 0)" exits 0
run translate "$T/runs/none_spm/model.bin" "$T/spm_src.txt"
check "none, spm: 40 translations, no U+2581 in them, words with spaces between" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && ! grep -q "▁" "$T/out" && grep -q "[^ ] [^ ]" "$T/out"'
run eval "$T/runs/none_spm/model.bin" "$T/spm_style.tsv"
bleu=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/out")
check "none, spm: eval on the training pairs: BLEU ${bleu:-?} > 50" awk -v b="${bleu:-0}" 'BEGIN { exit !(b > 50) }'
run translate "$T/pre_src.txt" --models "$T/runs/none_at/model.bin" "$T/runs/none_none/model.bin"
check "none: models of one vocabulary but different subword formats make no ensemble, naming the format" \
    eval 'exits 1 && grep -q "cannot join .* in an ensemble (format: 1 and 0)" "$T/err"'

# data.subword_format applies only to tokenizer none.
run train "$T/tiny.json" --set data.subword_format=bpe_at
check "--set data.subword_format with the word tokenizer: a usage error (exit 2), one line naming the key and data.tokenizer" \
    eval 'usage_error train &&
          has "$T/err" "nmt: --set: data.subword_format applies only to the none tokenizer (text segmented elsewhere) (data.tokenizer is \"word\"): remove it, or set data.tokenizer to \"none\""'
printf '{"data": {"train": "%s", "tokenizer": "bpe", "subword_format": "spm"}}\n' "$T/train.tsv" >"$T/fmt.json"
run train "$T/fmt.json"
check "data.subword_format in the file with the bpe tokenizer: exit 1, naming the file and the key" \
    eval 'exits 1 && has "$T/err" "nmt: $T/fmt.json: data.subword_format applies only to the none tokenizer"'
run train "$T/tiny.json" --set data.tokenizer=none --set data.subword_format=sentencepiece
check "data.subword_format sentencepiece: usage error naming the choices" \
    eval 'exits 2 && has "$T/err" "data.subword_format must be one of none|bpe_at|spm"'

# ---------------------------------------------------------------- 17c. SentencePiece

# data.tokenizer spm: SentencePiece models trained by nmt (libsentencepiece) on the tiny
# run's training split, stored in the model file, applied by translate and undone by
# spm_decode: no U+2581 ever reaches the output.
SPM="--quiet --set data.tokenizer=spm --set data.spm_vocab_size=300"
run train "$T/tiny.json" $SPM --set "output.dir=$T/runs/spm"
check "spm unigram: trains (exit 0)" exits 0
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/err" | tail -n 3
run info "$T/runs/spm/model.bin"
check "spm: info names the tokenizer, the model type and the pieces" \
    eval 'grep -q "^tokenizer: spm, SentencePiece unigram models of [1-9][0-9]* source and [1-9][0-9]* target pieces$" "$T/out" &&
          grep -q "^vocabularies: [0-9]* source, [0-9]* target SentencePiece pieces$" "$T/out"'
run info "$T/runs/spm/model.bin" --json
check "spm: info --json has spm_type and the pieces of each side" \
    eval 'grep -q "\"tokenizer\":\"spm\"" "$T/out" && grep -q "\"spm_type\":\"unigram\",\"src_pieces\":[1-9][0-9]*,\"tgt_pieces\":[1-9]" "$T/out"'
run eval "$T/runs/spm/model.bin" "$T/train.tsv"
bleu=$(sed -n 's/^BLEU = \([0-9.]*\) .*/\1/p' "$T/out")
check "spm: eval on the training pairs, BLEU ${bleu:-?} > 50" awk -v b="${bleu:-0}" 'BEGIN { exit !(b > 50) }'
run translate "$T/runs/spm/model.bin" "$T/bpe_src.txt"
cp "$T/out" "$T/spm_out.txt"
check "spm: translate writes sentences, no U+2581 in them" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && ! grep -q "▁" "$T/out" && grep -q "[^ ] [^ ]" "$T/out"'
run translate "$T/runs/spm/model.bin" "$T/bpe_src.txt" --attention-json
check "spm: the model reads and writes SentencePiece pieces" \
    eval 'exits 0 && grep -q "\"source\":\[\"▁" "$T/out" && grep -q "\"output\":\[\"▁" "$T/out"'
run translate "$T/runs/spm/model.bin" "$T/bpe_src.txt" --beam 3 --replace-unk
check "spm: beam search with --replace-unk, no U+2581 in the output" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && ! grep -q "▁" "$T/out"'
run bpe apply "$T/runs/spm/model.bin" "$T/bpe_src.txt"
sed -e 's/ //g' -e 's/▁/ /g' -e 's/^ //' "$T/out" >"$T/spelled.txt"
check "bpe apply MODEL.bin of tokenizer spm: the model's source pieces, as spm_encode writes them, spelling the lines" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && ! grep -qv "^▁" "$T/out" && grep -q "[^ ] [^ ▁]" "$T/out" &&
          cmp -s "$T/spelled.txt" "$T/bpe_src.txt"'
# The model file carries the SentencePiece models: a finished run resumed without its
# model.bin writes it again from the checkpoint, bit for bit.
cp "$T/runs/spm/model.bin" "$T/spm_model.bin"
rm -f "$T/runs/spm/model.bin"
run train "$T/tiny.json" $SPM --resume --set "output.dir=$T/runs/spm"
check "spm: model.bin written again from the checkpoint (models read back and written) is identical" \
    eval 'exits 0 && cmp -s "$T/runs/spm/model.bin" "$T/spm_model.bin"'
run train "$T/tiny.json" $SPM --resume --set data.spm_vocab_size=301 --set "output.dir=$T/runs/spm"
check "spm: resuming with another data.spm_vocab_size (--set) is a usage error naming --set and the key" \
    eval 'usage_error train && grep -q "^nmt: --set: data.spm_vocab_size: the checkpoint" "$T/err"'

# SentencePiece's BPE, one model and one vocabulary for both sides.
run train "$T/tiny.json" $SPM --set data.spm_type=bpe --set data.joint_vocab=true --set train.max_steps=20 \
    --set "output.dir=$T/runs/spm_bpe"
check "spm bpe, joint: trains (exit 0)" exits 0
run info "$T/runs/spm_bpe/model.bin"
check "spm bpe, joint: info says one bpe model for both sides" \
    grep -q "^tokenizer: spm, one SentencePiece bpe model of [1-9][0-9]* pieces for both sides$" "$T/out"
run translate "$T/runs/spm_bpe/model.bin" "$T/bpe_src.txt"
check "spm bpe: translates (40 lines, no U+2581)" eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && ! grep -q "▁" "$T/out"'
run translate "$T/bpe_src.txt" --models "$T/runs/spm/model.bin" "$T/runs/spm_bpe/model.bin"
check "spm: models of other SentencePiece models or vocabularies make no ensemble" \
    eval 'exits 1 && grep -q "cannot join .* in an ensemble (" "$T/err"'

# data.spm_model: a .model file made by SentencePiece's own trainer, used for both sides.
if command -v spm_train >/dev/null 2>&1; then
    cut -f1,2 "$T/train.tsv" | tr '\t' '\n' >"$T/both.txt"
    spm_train --input="$T/both.txt" --model_prefix="$T/ext" --vocab_size=350 --model_type=unigram >/dev/null 2>&1
    run train "$T/tiny.json" --quiet --set data.tokenizer=spm --set data.spm_model="$T/ext.model" \
        --set train.max_steps=20 --set "output.dir=$T/runs/spm_ext"
    check "spm_model: trains with spm_train's .model (exit 0)" exits 0
    run info "$T/runs/spm_ext/model.bin"
    check "spm_model: info says the file's unigram model of 350 pieces serves both sides" \
        grep -q "^tokenizer: spm, SentencePiece unigram models of 350 source and 350 target pieces$" "$T/out"
    run translate "$T/runs/spm_ext/model.bin" "$T/bpe_src.txt"
    check "spm_model: translates (40 lines, no U+2581)" eval 'exits 0 && [ "$(lines "$T/out")" = 40 ] && ! grep -q "▁" "$T/out"'
    if command -v spm_encode >/dev/null 2>&1; then
        head -n 5 "$T/bpe_src.txt" | spm_encode --model="$T/ext.model" >"$T/ext.pieces" 2>/dev/null
        run bpe apply "$T/runs/spm_ext/model.bin" "$T/bpe_src.txt"
        check "spm_model: nmt bpe apply segments as spm_encode does" \
            eval 'exits 0 && head -n 5 "$T/out" | cmp -s - "$T/ext.pieces"'
    else
        skip "spm_model: nmt bpe apply segments as spm_encode does" "no spm_encode (sh scripts/install-deps.sh --test-tools)"
    fi
else
    for what in "spm_model: trains with spm_train's .model (exit 0)" "spm_model: info says the file's unigram model of 350 pieces serves both sides" \
        "spm_model: translates (40 lines, no U+2581)" "spm_model: nmt bpe apply segments as spm_encode does"; do
        skip "$what" "no spm_train (sh scripts/install-deps.sh --test-tools installs SentencePiece's tools)"
    done
fi
# ... or by nmt itself: the bytes of a model nmt trained, taken out of nothing but a
# model file, are no .model file; a damaged or missing file is refused, naming it.
printf 'not a SentencePiece model\n' >"$T/garbage.model"
run train "$T/tiny.json" --quiet --set data.tokenizer=spm --set data.spm_model="$T/garbage.model" \
    --set "output.dir=$T/runs/spm_bad"
check "spm_model: a garbage .model file: exit 1, one line naming the file, the key and why" \
    eval 'exits 1 && [ "$(lines "$T/err")" = 1 ] && grep -q "^nmt: $T/garbage.model (data.spm_model): not a SentencePiece model (" "$T/err"'
run train "$T/tiny.json" --quiet --set data.tokenizer=spm --set data.spm_model="$T/missing.model" \
    --set "output.dir=$T/runs/spm_missing"
check "spm_model: a missing file: exit 1, naming it and the key, nothing written" \
    eval 'exits 1 && grep -q "^nmt: $T/missing.model: No such file or directory (from data.spm_model)" "$T/err" &&
          [ ! -e "$T/runs/spm_missing" ]'
run train "$T/tiny.json" --quiet --set data.tokenizer=spm --set data.spm_vocab_size=3 --set "output.dir=$T/runs/spm_small"
check "spm: too few pieces for the characters: exit 1, naming the key and SentencePiece's reason" \
    eval 'exits 1 && grep -q "data.spm_vocab_size 3: SentencePiece could not train a unigram model of 3 pieces: .*Vocabulary size is smaller than required_chars" "$T/err"'

# The keys that apply only to SentencePiece, and to the model nmt trains.
run train "$T/tiny.json" --set data.spm_type=bpe
check "--set data.spm_type with the word tokenizer: a usage error (exit 2), naming the key and data.tokenizer" \
    eval 'usage_error train && has "$T/err" "nmt: --set: data.spm_type applies only to the spm tokenizer (data.tokenizer is \"word\"): remove it, or set data.tokenizer to \"spm\""'
run train "$T/tiny.json" --set data.tokenizer=spm --set data.spm_model="$T/garbage.model" --set data.spm_vocab_size=100
check "--set data.spm_vocab_size with data.spm_model: a usage error (exit 2), naming both keys" \
    eval 'usage_error train && has "$T/err" "nmt: --set: data.spm_vocab_size applies only to a SentencePiece model nmt trains (without data.spm_model) (data.spm_model is \"$T/garbage.model\"): remove it, or remove data.spm_model"'
run train "$T/tiny.json" --set data.tokenizer=bpe --set data.spm_model="$T/garbage.model"
check "--set data.spm_model with the bpe tokenizer: a usage error (exit 2), naming the key" \
    eval 'usage_error train && has "$T/err" "data.spm_model applies only to the spm tokenizer (data.tokenizer is \"bpe\")"'

# ---------------------------------------------------------------- 18. the man page

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


# ---------------------------------------------------------------- 19. keys and options that do not apply

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

run bpe apply "$T/codes" --target "$T/en.txt"
check "bpe apply CODES --target: usage error (exit 2), --target applies only to a model file" \
    eval 'exits 2 && has "$T/err" "nmt: bpe apply: --target applies only to a model file ($T/codes is a codes file"'
run bpe apply --char --target "$T/en.txt"
check "bpe apply --char --target: usage error (exit 2)" \
    eval 'exits 2 && has "$T/err" "--target applies only to a model file (--char splits both sides alike)"'
run bpe apply "$T/runs/bpe/model.bin" --lowercase "$T/bpe_src.txt"
check "bpe apply MODEL.bin --lowercase: usage error (exit 2), the model brings its own text options" \
    eval 'exits 2 && has "$T/err" "--lowercase applies only to a codes file or --char"'
run bpe apply --char "$T/runs/bpe/model.bin" "$T/bpe_src.txt"
check "bpe apply --char MODEL.bin: usage error (exit 2)" eval 'exits 2 && has "$T/err" "--char takes no MODEL.bin"'
run bpe apply "$T/runs/bpe/model.bin" --target "$T/bpe_src.txt"
check "bpe apply MODEL.bin --target: still the target side's merges (exit 0)" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 40 ]'
run bpe apply "$T/runs/bpe/model.bin" --codes-format subword-nmt "$T/bpe_src.txt"
check "bpe apply MODEL.bin --codes-format: usage error (exit 2), the model brings its own merges" \
    eval 'exits 2 && has "$T/err" "nmt: bpe apply: --codes-format applies only to a codes file ($T/runs/bpe/model.bin is a model file, which brings its own merges): remove it"'
run bpe apply --char --codes-format nmt "$T/en.txt"
check "bpe apply --char --codes-format: usage error (exit 2)" \
    eval 'exits 2 && has "$T/err" "nmt: bpe apply: --codes-format applies only to a codes file (--char reads no codes): remove it"'
run bpe apply "$T/snmt.codes" --codes-format subword-nmt --lowercase "$T/snmt.in"
check "bpe apply --codes-format subword-nmt --lowercase: usage error (exit 2), subword-nmt changes no text" \
    eval 'exits 2 && has "$T/err" "nmt: bpe apply: --lowercase applies only to nmt'"'"'s codes format"'
run bpe learn --codes-format subword-nmt --nfkc "$T/snmt.in"
check "bpe learn --codes-format subword-nmt --nfkc: usage error (exit 2)" \
    eval 'exits 2 && has "$T/err" "nmt: bpe learn: --nfkc applies only to nmt'"'"'s codes format"'
run bpe apply "$T/snmt.codes" --codes-format sentencepiece "$T/snmt.in"
check "bpe apply --codes-format with an unknown format: usage error (exit 2), naming the formats" \
    eval 'exits 2 && has "$T/err" "nmt: bpe: --codes-format needs nmt|subword-nmt"'
run bpe join --codes-format subword-nmt "$T/snmt.in"
check "bpe join --codes-format: usage error (exit 2)" eval 'exits 2 && has "$T/err" "unknown option --codes-format"'

# ---------------------------------------------------------------- classifier (model.type classifier)
SENT=$(pwd)/data/sentiment.tsv
cat >"$T/cls.json" <<JSON
{"data": {"train": "$SENT", "valid_fraction": 0.2, "lowercase": true},
 "model": {"type": "classifier", "cell": "lstm", "embed": 16, "hidden": 24, "pooling": "attention", "dropout": 0.2},
 "train": {"epochs": 3, "batch_size": 32, "learning_rate": 0.003, "best_metric": "accuracy", "threads": 1},
 "output": {"dir": "$T/runs/cls"}}
JSON
CLS=$T/runs/cls
run train "$T/cls.json"
check "classifier: train exit 0" exits 0
check "classifier: says its classes and the majority baseline" \
    eval 'has "$T/err" "1600 training lines, 400 validation lines; 2 classes" && has "$T/err" "always answering"'
acc=$(grep '"event":"validation"' "$CLS/train.log" | tail -1 | sed 's/.*"valid_accuracy":\([0-9.]*\).*/\1/')
check "classifier: train.log's validation accuracy after 3 epochs (${acc:-?}) > 0.6 (the majority class: 0.49)" \
    awk -v a="${acc:-0}" 'BEGIN { exit !(a > 0.6) }'
check "classifier: train.log's start line has its 2 classes; training.svg its losses per example and its accuracy" \
    eval 'head -n 1 "$CLS/train.log" | grep -q "\"classes\":2" && has "$CLS/training.svg" ">loss per example (line)</text>" &&
        has "$CLS/training.svg" ">validation accuracy (%)</text>" && ! has "$CLS/training.svg" "target token"'
check "classifier: valid.tsv holds the 400 held-out lines, text and label" \
    eval '[ "$(lines "$CLS/valid.tsv")" = 400 ] && ! grep -qvE "	[01]\$" "$CLS/valid.tsv"'
run info "$CLS/model.bin"
check "classifier: info names the type, pooling and labels" \
    eval 'exits 0 && has "$T/out" "classifier" && has "$T/out" "attention pooling" && has "$T/out" "labels: 0, 1"'
check "classifier: info shows its validation accuracy, the last in train.log (${acc:-?})" \
    eval 'grep -q "^validation at update [0-9]*: loss [0-9.]*, accuracy $(awk -v a="${acc:-0}" "BEGIN { printf \"%.2f\", 100 * a }")%" "$T/out"'
printf 'Great phone, works perfectly.\n\nTerrible service, never again.\n' >"$T/cls_in.txt"
run classify "$CLS/model.bin" "$T/cls_in.txt"
check "classify: one label per input line, the empty one empty and warned about" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 3 ] && [ "$(nth_line 1 "$T/out")" = 1 ] && [ -z "$(nth_line 2 "$T/out")" ] && [ "$(nth_line 3 "$T/out")" = 0 ] && has "$T/err" "line 2: no text to classify"'
run classify "$CLS/model.bin" --probs <"$T/cls_in.txt"
check "classify --probs: label TAB probability" eval 'exits 0 && nth_line 1 "$T/out" | grep -Eq "^1	0\.[5-9][0-9]*\$"'
run classify "$CLS/model.bin" --probs all <"$T/cls_in.txt"
check "classify --probs all: every label and its probability, summing to 1" \
    eval 'exits 0 && nth_line 3 "$T/out" | awk -F"	" "NF == 4 && \$1 == \"0\" && \$3 == \"1\" { s = \$2 + \$4; exit !(s > 0.999 && s < 1.001) } NF != 4 { exit 1 }"'
run classify "$CLS/model.bin" --attention-svg "$T/cls_svg" "$T/cls_in.txt"
check "classify --attention-svg: a picture per classified line, with its words and weights" \
    eval 'exits 0 && [ -s "$T/cls_svg/000001.svg" ] && [ ! -e "$T/cls_svg/000002.svg" ] && grep -q ">great<" "$T/cls_svg/000001.svg" && grep -q "attention 0\." "$T/cls_svg/000001.svg"'
run eval "$CLS/model.bin" "$CLS/valid.tsv"
vacc=$(sed -n 's/^accuracy \([0-9.]*\).*/\1/p' "$T/out")
check "eval on valid.tsv: accuracy (${vacc:-?}) is train.log's last (${acc:-?})" \
    awk -v a="${vacc:-x}" -v b="${acc:-y}" 'BEGIN { exit !(a - b < 0.00006 && b - a < 0.00006) }'
check "eval: macro F1, per-label precision/recall and a confusion matrix" \
    eval 'has "$T/out" "macro F1" && has "$T/out" "label  precision  recall" && has "$T/out" "confusion matrix (rows: true label, columns: predicted)"'
run eval "$CLS/model.bin" "$CLS/valid.tsv" --json
check "eval --json: one object with accuracy, classes and the confusion matrix" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 1 ] && has "$T/out" "\"accuracy\":" && has "$T/out" "\"confusion\":[["'
{ head -3 "$CLS/valid.tsv"; printf 'An odd one.\t2\nAnother odd one.\t2\n'; } >"$T/cls_unseen.tsv"
run eval "$CLS/model.bin" "$T/cls_unseen.tsv"
check "eval: labels training never saw are counted and named, not a crash" \
    eval 'exits 0 && has "$T/out" "of 3 lines right)" && has "$T/out" "not scored: 2 lines with a label the model never saw in training (\"2\": 2)"'
run eval "$CLS/model.bin" "$CLS/valid.tsv" --beam 4
check "eval --beam on a classifier: usage error naming it" eval 'exits 2 && has "$T/err" "is a classifier"'
run translate "$CLS/model.bin" <"$T/cls_in.txt"
check "translate on a classifier: exit 1, says to use nmt classify" eval 'exits 1 && has "$T/err" "nmt classify"'
run classify "$RUN/model.bin" <"$T/cls_in.txt"
check "classify on a translation model: exit 1, says to use nmt translate" \
    eval 'exits 1 && has "$T/err" "a translation model, not a classifier"'
# Bad input: a line without its label, or with an empty one; a single class.
{ head -5 "$SENT"; printf 'No label on this line\n'; tail -5 "$SENT"; } >"$T/cls_nolabel.tsv"
sed "s|$SENT|$T/cls_nolabel.tsv|; s|$T/runs/cls|$T/runs/cls_bad|" "$T/cls.json" >"$T/cls_bad.json"
run train "$T/cls_bad.json"
check "classifier: a line without a label: exit 1, naming the file and line 6" \
    eval 'exits 1 && has "$T/err" "cls_nolabel.tsv: line 6: no label: the line has 1 column"'
{ head -5 "$SENT"; printf 'Empty label here\t \n'; } >"$T/cls_nolabel.tsv"
run train "$T/cls_bad.json"
check "classifier: an empty label: exit 1, naming line 6" eval 'exits 1 && has "$T/err" "line 6: empty label (column 2)"'
grep '	1$' "$SENT" | head -50 >"$T/cls_nolabel.tsv"
run train "$T/cls_bad.json"
check "classifier: a single class: exit 1, saying a classifier needs two" \
    eval 'exits 1 && has "$T/err" "has the label \"1\": a classifier needs at least two classes"'
run train "$T/cls.json" --set model.attention=luong_dot --set output.dir="$T/runs/cls_x"
check "classifier: a translation key given with --set is refused (exit 2), naming it" \
    eval 'usage_error train && has "$T/err" "model.attention applies only to translation models (model.type is \"classifier\")"'
# Exact resume: 1 epoch, then resumed to 3, is the 3-epoch run bit for bit.
mv "$CLS" "$T/runs/cls_ref"
run train "$T/cls.json" --set train.epochs=1 --quiet
run train "$T/cls.json" --resume --set train.epochs=3 --quiet
check "classifier: 1 epoch resumed to 3 gives the 3-epoch model bit for bit" \
    eval 'exits 0 && cmp -s "$CLS/model.bin" "$T/runs/cls_ref/model.bin"'

finish
