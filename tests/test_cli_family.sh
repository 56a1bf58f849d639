#!/bin/sh
# test_cli_family.sh — the model families end to end: every example config of
# configs/family/ trains, learns and translates, scheduled sampling, nmt info on them;
# the Transformer (training, resuming, decoding, attention heads, dropout, tied
# embeddings); the sentence classifier (training, classify, eval, bad input, resuming).
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_cli_family.sh
# NMT=path/to/nmt selects another binary. Prints "  ok what" / "FAIL what" per check,
# "skip what: why" for each check that cannot run here (a tool it needs is missing), and
# ends with "test_cli_family: N passed, M failed, K skipped".

NAME=test_cli_family
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, one_error, field, cli_data;
                # $LIMIT is 300 s, generous for the sanitizer build

cli_data  # $T/train.tsv, $T/tiny.json, $T/two.txt
cut -f1 "$T/train.tsv" | head -n 60 >"$T/src60.txt"

# ---------------------------------------------------------------- 1. the model family

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

# ---------------------------------------------------------------- 2. nmt info

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

# ---------------------------------------------------------------- 3. the Transformer

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

# ---------------------------------------------------------------- 4. classifier (model.type classifier)
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
# (A translation model of the family above: the small GRU with Bahdanau attention.)
run classify "$T/runs/fam_bahdanau/model.bin" <"$T/cls_in.txt"
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

# The shipped configs/classifier.json: the bag of words beside a small encoder.
run train configs/classifier.json --set train.epochs=3 --set train.threads=1 --set "output.dir=$T/runs/bow" --quiet
check "configs/classifier.json (3 epochs): train exit 0" exits 0
run info "$T/runs/bow/model.bin"
check "classifier with a bag of words: info says so" eval 'exits 0 && has "$T/out" "mean pooling and a bag of words"'
run info "$T/runs/bow/model.bin" --json
check "classifier with a bag of words: info --json has bag_of_words true" \
    eval 'exits 0 && has "$T/out" "\"bag_of_words\":true"'
run eval "$T/runs/bow/model.bin" "$T/runs/bow/valid.tsv" --json
bacc=$(sed -n 's/.*"accuracy":\([0-9.]*\).*/\1/p' "$T/out")
check "classifier with a bag of words: held-out accuracy after 3 epochs (${bacc:-?}) > 0.7" \
    awk -v a="${bacc:-0}" 'BEGIN { exit !(a > 0.7) }'
run classify "$T/runs/bow/model.bin" "$T/cls_in.txt"
check "classifier with a bag of words: classify labels the two lines" \
    eval 'exits 0 && [ "$(nth_line 1 "$T/out")" = 1 ] && [ "$(nth_line 3 "$T/out")" = 0 ]'
run info "$CLS/model.bin" --json
check "classifier without: info --json has bag_of_words false" eval 'exits 0 && has "$T/out" "\"bag_of_words\":false"'

finish
