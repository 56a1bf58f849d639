#!/bin/sh
# test_toolbox.sh — the practitioner's toolbox end to end (issue 32), on a GRU with word
# tokens and a Transformer with BPE pieces, each trained here for a few seconds: scores
# of given pairs (nmt eval --per-line, --word-scores) and of translations (nmt translate
# --scores), quality estimates, target prefixes, sampling, ensembles in nmt eval,
# protected symbols (data.user_symbols) and vocabularies that grow on fine-tuning
# (train.extend_vocab). Without the new options every output is what it was: the
# checks compare the outputs with and without them.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_toolbox.sh
# NMT=path/to/nmt selects another binary. About 20 s on 2 cores.

NAME=test_toolbox
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, usage_error

# below X Y — X < Y as numbers.
below() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x < y) }'; }

# ---------------------------------------------------------------- two small models

awk 'NR % 11 == 0' "$DATA" | head -n 2500 >"$T/train.tsv"
awk 'NR % 11 == 5' "$DATA" | head -n 60 >"$T/test.tsv"
cut -f1 "$T/test.tsv" >"$T/src.txt"
cat >"$T/gru.json" <<EOF
{"data": {"train": "$T/train.tsv"}, "model": {"cell": "gru", "embed": 32, "hidden": 32},
 "train": {"batch_size": 32, "epochs": 4, "threads": 1}, "output": {"dir": "$T/gru"}}
EOF
cat >"$T/trf.json" <<EOF
{"data": {"train": "$T/train.tsv", "tokenizer": "bpe", "bpe_merges": 400},
 "model": {"type": "transformer", "embed": 32, "heads": 2, "ff": 64, "layers": 1},
 "train": {"batch_size": 32, "epochs": 4, "threads": 1}, "output": {"dir": "$T/trf"}}
EOF
for m in gru trf; do
    "$NMT" train --quiet "$T/$m.json" >"$T/train.out" 2>"$T/train.err" || {
        bad "setup: training the $m model"
        sed 's/^/    | /' "$T/train.err" | tail -n 5
        finish
    }
done
G=$T/gru/model.bin
F=$T/trf/model.bin

# ---------------------------------------------------------------- scores of given pairs

for m in gru trf; do
    M=$T/$m/model.bin
    run eval "$M" "$T/test.tsv" --json
    loss=$(sed -n 's/.*"loss":\([-0-9.eE+]*\).*/\1/p' "$T/out")
    run eval "$M" "$T/test.tsv" --per-line
    cp "$T/out" "$T/per-line-$m.txt"
    check "$m: eval --per-line: one line per input line, LOGPROB TAB UNITS" \
        eval 'exits 0 && [ "$(lines "$T/out")" = "$(lines "$T/test.tsv")" ] &&
              [ "$(grep -cE "^-[0-9]+\.[0-9]{6}	[0-9]+$" "$T/out")" = "$(lines "$T/test.tsv")" ]'
    total=$(awk -F'\t' '{ s += $1; c += $2 } END { printf "%.9f\n", -s / c }' "$T/out")
    check "$m: eval --per-line: -(sum of LOGPROB) / (sum of UNITS) = eval's loss ($total, $loss)" \
        awk -v a="$total" -v b="$loss" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d < 1e-5 * b) }'
    run eval "$M" "$T/test.tsv" --word-scores
    check "$m: eval --word-scores: UNITS log-probabilities that add up to LOGPROB" \
        eval 'exits 0 && awk -F"\t" "{ n = split(\$3, u, \" \"); s = 0; for (i = 1; i <= n; i++) s += u[i];
                                        d = s - \$1; if (d < 0) d = -d; if (n != \$2 || d > 1e-4) bad++ }
                                      END { exit bad > 0 || NR == 0 }" "$T/out"'
done

# Lines that are no pairs: an empty line each, the others scored as alone.
{ head -n 3 "$T/test.tsv"; printf 'no tab here\n\n'; printf '\377\tbad\n'; head -n 2 "$T/test.tsv"; } >"$T/mixed.tsv"
run eval "$G" "$T/mixed.tsv" --per-line
# close A B — two "LOGPROB<TAB>UNITS" lines agree: the same units, LOGPROB within 1e-4
# (another batch of pairs may change the last digits).
close() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, "\t"); split(b, y, "\t"); d = x[1] - y[1]; if (d < 0) d = -d
                                          exit !(a != "" && x[2] == y[2] && d < 1e-4) }'; }
check "eval --per-line: malformed and blank lines get empty lines, in place; the pairs their scores" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 8 ] && [ -z "$(nth_line 4 "$T/out")" ] && [ -z "$(nth_line 5 "$T/out")" ] &&
          [ -z "$(nth_line 6 "$T/out")" ] && close "$(nth_line 7 "$T/out")" "$(nth_line 1 "$T/per-line-gru.txt")" &&
          close "$(nth_line 3 "$T/out")" "$(nth_line 3 "$T/per-line-gru.txt")"'
check "eval --per-line: a warning names each malformed line, and no blank one" \
    eval 'has "$T/err" "mixed.tsv line 4: no tab; an empty line written" &&
          has "$T/err" "mixed.tsv line 6: invalid UTF-8; an empty line written" && ! has "$T/err" "line 5:"'
run eval "$G" "$T/test.tsv" --per-line --beam 3
check "eval --per-line --beam: a usage error (the targets are given)" usage_error eval
run eval "$G" "$T/missing.tsv" --per-line
check "eval --per-line on a missing file: exit 1 naming it" eval 'exits 1 && has "$T/err" "missing.tsv"'

# ---------------------------------------------------------------- scores of translations

for m in gru trf; do
    M=$T/$m/model.bin
    for how in "" "--beam 3"; do
        "$NMT" translate "$M" "$T/src.txt" $how >"$T/plain.txt" 2>/dev/null
        run translate "$M" "$T/src.txt" $how --scores
        check "$m: translate ${how:+$how }--scores: the same translations, then TAB LOGPROB TAB UNITS" \
            eval 'exits 0 && cut -f1 "$T/out" | cmp -s - "$T/plain.txt" && [ "$(awk -F"\t" "NF == 3" "$T/out" | wc -l)" = 60 ]'
    done
    # Forced scores of greedy's own output are greedy's scores, where its text reads back
    # as the same units (a model may write a piece, "र@@ .", that segmenting its text
    # would not give: "र ."; those lines are left out).
    "$NMT" translate "$M" "$T/src.txt" --scores >"$T/scored.txt" 2>/dev/null
    "$NMT" translate "$M" "$T/src.txt" --attention-json 2>/dev/null |
        sed -e 's/.*"output":\["//' -e 's/"\],"translation".*//' -e 's/","/ /g' -e 's/ *<eos>$//' >"$T/units.txt"
    if [ $m = trf ]; then cut -f1 "$T/scored.txt" | "$NMT" bpe apply "$M" --target 2>/dev/null >"$T/reread.txt"
    else cp "$T/units.txt" "$T/reread.txt"; fi  # words: the units count says (<unk> reads as 3)
    cut -f1 "$T/scored.txt" | paste "$T/src.txt" - >"$T/own.tsv"
    "$NMT" eval "$M" "$T/own.tsv" --per-line >"$T/forced.txt" 2>/dev/null
    paste "$T/scored.txt" "$T/forced.txt" "$T/units.txt" "$T/reread.txt" |
        awk -F'\t' '$5 != "" && $3 == $5 && $6 == $7' >"$T/same-units.txt"
    d=$(awk -F'\t' '{ d = $2 - $4; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.7f\n", m + 0 }' "$T/same-units.txt")
    check "$m: forced scores of the greedy output = greedy's own ($(lines "$T/same-units.txt") lines, max diff $d)" \
        eval '[ "$(lines "$T/same-units.txt")" -ge 40 ] && below "$d" 0.0001'
done

run translate "$F" "$T/src.txt" --nbest 2 --scores
check "translate --nbest --scores: F0=, QE= and WordQE= features, then the score" \
    eval 'exits 0 && [ "$(grep -cE "^[0-9]+ \|\|\| .* \|\|\| F0= -[0-9.]+ QE= -[0-9.]+ WordQE=( -[0-9.]+)+ \|\|\| -[0-9.]+$" "$T/out")" = 120 ]'
"$NMT" translate "$F" "$T/src.txt" --nbest 2 >"$T/nbest.txt" 2>/dev/null
check "translate --nbest --scores: otherwise the n-best lines as without" \
    eval 'sed "s/ QE= [^|]*|||/ |||/" "$T/out" | cmp -s - "$T/nbest.txt"'
# A sentence's QE is the mean of its words' QE; a word's the mean of its units'.
check "translate --nbest --scores: QE is the mean of WordQE" \
    eval 'awk -F" [|][|][|] " "{ n = split(\$3, f, \" \"); s = 0; k = 0; for (i = 6; i <= n; i++) { s += f[i]; k++ }
                                  d = s / k - f[4]; if (d < 0) d = -d; if (d > 2e-6) bad++ } END { exit bad > 0 }" "$T/out"'
run translate "$F" "$T/src.txt" --attention-json --word-scores
check "translate --attention-json --word-scores: logprob, unit_scores, words, word_qe and qe" \
    eval 'exits 0 && [ "$(grep -c "\"unit_scores\":\[-.*\"words\":\[.*\"word_qe\":\[-.*\"qe\":-" "$T/out")" = 60 ]'
run translate "$F" "$T/src.txt" --nbest 2 --nbest-format nmt --scores
check "translate --scores with --nbest-format nmt: a usage error" usage_error translate

# ---------------------------------------------------------------- prefixes

sed 's/.*//' "$T/src.txt" >"$T/empty-prefix.txt"
for m in gru trf; do
    M=$T/$m/model.bin
    for how in "" "--beam 3" "--nbest 2" "--batch 7 --beam 2"; do
        "$NMT" translate "$M" "$T/src.txt" $how >"$T/plain.txt" 2>/dev/null
        run translate "$M" "$T/src.txt" $how --prefix "$T/empty-prefix.txt"
        check "$m: translate ${how:+$how }--prefix of empty lines: byte for byte the output without" \
            eval 'exits 0 && cmp -s "$T/out" "$T/plain.txt"'
    done
done
# Every line starts with the prefix it is given: a frequent word, or half a word's
# pieces (BPE segments the prefix as the model's target side).
awk 'NR % 2 { print "टॉम" } NR % 2 == 0 { print "मला माहीत" }' "$T/src.txt" >"$T/prefix.txt"
for m in gru trf; do
    for how in "" "--beam 3" "--batch 9"; do
        run translate "$T/$m/model.bin" "$T/src.txt" $how --prefix "$T/prefix.txt"
        check "$m: translate ${how:+$how }--prefix: line i begins with line i of the prefix file" \
            eval 'exits 0 && [ "$(lines "$T/out")" = 60 ] &&
                  paste "$T/prefix.txt" "$T/out" | awk -F"\t" "index(\$2, \$1) != 1 { bad++ } END { exit bad > 0 }"'
    done
done
run translate "$G" "$T/src.txt" --prefix "$T/prefix.txt" --scores
cut -f1 "$T/out" | paste "$T/src.txt" - >"$T/prefixed.tsv"
"$NMT" eval "$G" "$T/prefixed.tsv" --per-line >"$T/forced.txt" 2>/dev/null
check "translate --prefix --scores: LOGPROB is the whole output's, prefix included (as eval --per-line scores it)" \
    eval 'paste "$T/out" "$T/forced.txt" | awk -F"\t" "\$3 == \$5 { n++; d = \$2 - \$4; if (d < 0) d = -d; if (d > 1e-4) bad++ }
                                                    END { exit bad > 0 || n < 40 }"'
run translate "$T/src.txt" --prefix "$T/prefix.txt" --models "$G" "$G"
check "translate --prefix with an ensemble" \
    eval 'exits 0 && paste "$T/prefix.txt" "$T/out" | awk -F"\t" "index(\$2, \$1) != 1 { bad++ } END { exit bad > 0 || NR != 60 }"'
head -n 10 "$T/prefix.txt" >"$T/short-prefix.txt"
run translate "$G" "$T/src.txt" --prefix "$T/short-prefix.txt"
check "translate --prefix FILE shorter than the input: exit 1, naming FILE and where it ends" \
    eval 'exits 1 && has "$T/err" "short-prefix.txt: ends after line 10, before the one for $T/src.txt line 11"'
{ cat "$T/prefix.txt"; echo extra; } >"$T/long-prefix.txt"
run translate "$G" "$T/src.txt" --prefix "$T/long-prefix.txt"
check "translate --prefix FILE longer than the input: translated, with a warning" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 60 ] && has "$T/err" "long-prefix.txt: more lines than the input (60)"'
run translate "$G" "$T/src.txt" --prefix "$T/nowhere.txt"
check "translate --prefix of a missing file: exit 1 naming it" eval 'exits 1 && has "$T/err" "nowhere.txt"'
run translate "$G" "$T/src.txt" --prefix "$T"
check "translate --prefix DIRECTORY: exit 1, naming it and the option" \
    eval 'exits 1 && has "$T/err" "$T: is a directory (from --prefix"'
{ printf '\377\376 x\n'; tail -n +2 "$T/prefix.txt"; } >"$T/bad-prefix.txt"
"$NMT" translate "$G" "$T/src.txt" >"$T/plain-gru.txt" 2>/dev/null
"$NMT" translate "$G" "$T/src.txt" --prefix "$T/prefix.txt" >"$T/prefixed-gru.txt" 2>/dev/null
run translate "$G" "$T/src.txt" --prefix "$T/bad-prefix.txt"
check "translate --prefix with a line that is not UTF-8: that line without a prefix, a warning naming it" \
    eval 'exits 0 && has "$T/err" "bad-prefix.txt: the prefix of line 1 is not valid UTF-8" &&
          [ "$(head -n 1 "$T/out")" = "$(head -n 1 "$T/plain-gru.txt")" ] &&
          [ "$(tail -n +2 "$T/out")" = "$(tail -n +2 "$T/prefixed-gru.txt")" ]'

# ---------------------------------------------------------------- sampling

for m in gru trf; do
    M=$T/$m/model.bin
    "$NMT" translate "$M" "$T/src.txt" --sample 0 --seed 7 >"$T/s1.txt" 2>/dev/null
    run translate "$M" "$T/src.txt" --sample 0 --seed 7 --batch 16 --threads 2
    check "$m: --sample 0 --seed 7: the same output with --batch 16 --threads 2 as one line at a time" \
        eval 'exits 0 && cmp -s "$T/out" "$T/s1.txt"'
    run translate "$M" "$T/src.txt" --sample 0 --seed 8
    check "$m: --seed 8: other samples than --seed 7" eval 'exits 0 && ! cmp -s "$T/out" "$T/s1.txt"'
    "$NMT" translate "$M" "$T/src.txt" >"$T/plain.txt" 2>/dev/null
    run translate "$M" "$T/src.txt" --sample 1 --batch 5
    check "$m: --sample 1 (the likeliest word) is greedy search, byte for byte" \
        eval 'exits 0 && cmp -s "$T/out" "$T/plain.txt"'
    run translate "$M" "$T/src.txt" --sample-p 0.9 --temperature 0.7 --seed 3 --nbest 3 --scores
    check "$m: --sample-p --temperature --nbest 3: three samples a line, best score first" \
        eval 'exits 0 && [ "$(lines "$T/out")" = 180 ] &&
              awk -F" [|][|][|] " "\$1 == k && \$4 > s + 1e-6 { bad++ } { k = \$1; s = \$4 } END { exit bad > 0 }" "$T/out"'
done
"$NMT" translate "$T/src.txt" --models "$G" "$G" --sample 5 --seed 2 >"$T/ens1.txt" 2>/dev/null
run translate "$T/src.txt" --models "$G" "$G" --sample 5 --seed 2 --batch 8
check "sampling an ensemble: one seed, one output, whatever the batch" eval 'exits 0 && cmp -s "$T/out" "$T/ens1.txt"'
# Several workers (issue 30): each line samples from the stream of its index in the whole
# input and takes its own prefix line, whichever worker translates its batch; the scores
# are written with it, in input order. (Another --batch may change the scores' last
# digits, not the words: compared without them.)
cat "$T/prefix.txt" "$T/prefix.txt" >"$T/prefix-twice.txt"
for m in gru trf; do
    M=$T/$m/model.bin
    "$NMT" translate "$M" "$T/src.txt" "$T/src.txt" --sample 0 --seed 7 --prefix "$T/prefix-twice.txt" --scores \
        --workers 1 --batch 7 >"$T/w1.txt" 2>/dev/null
    "$NMT" translate "$M" "$T/src.txt" "$T/src.txt" --sample 0 --seed 7 --prefix "$T/prefix-twice.txt" \
        --workers 1 >"$T/w1-64.txt" 2>/dev/null
    run translate "$M" "$T/src.txt" "$T/src.txt" --sample 0 --seed 7 --prefix "$T/prefix-twice.txt" --scores \
        --workers 3 --batch 7
    check "$m: --sample --prefix --scores on two inputs: --workers 3 writes what --workers 1 writes" \
        eval 'exits 0 && [ "$(lines "$T/out")" = 120 ] && cmp -s "$T/out" "$T/w1.txt"'
    check "$m: ... and the words of --workers 1 --batch 64 (one seed, one sample a line)" \
        eval 'cut -f1 "$T/out" | cmp -s - "$T/w1-64.txt"'
done
run translate "$G" "$T/src.txt" --temperature 0.5
check "--temperature without --sample: a usage error" usage_error translate
run translate "$G" "$T/src.txt" --sample-p 0
check "--sample-p 0: a usage error" usage_error translate
run translate "$G" "$T/src.txt" --seed 3
check "--seed without --sample: a usage error" usage_error translate

# ---------------------------------------------------------------- ensembles in eval

"$NMT" eval "$G" "$T/test.tsv" --json >"$T/one.json" 2>/dev/null
run eval "$T/test.tsv" --models "$G" "$G" --json
l1=$(sed -n 's/.*"loss":\([-0-9.eE+]*\).*/\1/p' "$T/one.json")
l2=$(sed -n 's/.*"loss":\([-0-9.eE+]*\).*/\1/p' "$T/out")
check "eval --models A A: the BLEU of A, and its loss ($l2, $l1)" \
    eval 'exits 0 && [ "$(sed "s/\"loss\".*\"target_tokens\"//" "$T/out")" = "$(sed "s/\"loss\".*\"target_tokens\"//" "$T/one.json")" ] &&
          awk -v a="$l1" -v b="$l2" "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-5) }"'
"$NMT" eval "$T/test.tsv" --models "$G" "$T/gru/checkpoint.bin" --json >/dev/null 2>&1
run eval "$T/test.tsv" --models "$G" "$F"
check "eval --models with another vocabulary: exit 1, naming the model and what differs" \
    eval 'exits 1 && has "$T/err" "$F: cannot join $G in an ensemble (src_vocab"'
run eval "$T/test.tsv" --per-line --models "$G" "$G"
check "eval --per-line --models A A: A's scores" \
    eval 'exits 0 && paste "$T/out" "$T/per-line-gru.txt" | awk -F"\t" "{ d = \$1 - \$3; if (d < 0) d = -d; if (d > 1e-4 || \$2 != \$4) bad++ } END { exit bad > 0 || NR != 60 }"'
"$NMT" eval "$T/test.tsv" --models "$G" "$T/gru/checkpoint.bin" --json >"$T/ens-w1.json" 2>/dev/null
run eval "$T/test.tsv" --models "$G" "$T/gru/checkpoint.bin" --json --workers 3
check "eval --models A B --workers 3: the figures of --workers 1" \
    eval 'exits 0 && grep -q "\"loss\":" "$T/out" && cmp -s "$T/out" "$T/ens-w1.json"'
"$NMT" eval "$T/test.tsv" --per-line --models "$G" "$T/gru/checkpoint.bin" >"$T/ens-pl1.txt" 2>/dev/null
run eval "$T/test.tsv" --per-line --models "$G" "$T/gru/checkpoint.bin" --workers 2
check "eval --per-line --models A B --workers 2: the scores of --workers 1" \
    eval 'exits 0 && [ "$(lines "$T/out")" = 60 ] && cmp -s "$T/out" "$T/ens-pl1.txt"'
run eval "$G" "$T/test.tsv" --models "$G" "$G"
check "eval MODEL TEST --models ...: a usage error (TEST.tsv is the one operand)" usage_error eval

# ---------------------------------------------------------------- protected symbols

# A language tag before every source and a placeholder in some targets: kept whole by
# BPE (learning and applying), SentencePiece and the word tokenizer, in training and in
# translation (the model file carries them).
awk -F'\t' 'NR % 3 { print "<2mr> " $1 "\t" $2; next } { print "<2mr> " $1 " {name}\t{name} " $2 }' "$T/train.tsv" \
    >"$T/tagged.tsv"
for tok in bpe spm word; do
    case $tok in
        bpe) data='"tokenizer": "bpe", "bpe_merges": 300' ;;
        spm) data='"tokenizer": "spm", "spm_vocab_size": 400' ;;
        word) data='"tokenizer": "word"' ;;
    esac
    cat >"$T/sym-$tok.json" <<EOF2
{"data": {"train": "$T/tagged.tsv", $data, "user_symbols": ["<2mr>", "{name}"]},
 "model": {"cell": "gru", "embed": 16, "hidden": 16},
 "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "$T/sym-$tok"}}
EOF2
    run train --quiet "$T/sym-$tok.json"
    check "$tok: trains with data.user_symbols" exits 0
    M=$T/sym-$tok/model.bin
    echo "<2mr>Hello {name}, come." >"$T/tagged.txt"
    run translate "$M" "$T/tagged.txt" --attention-json
    check "$tok: translate keeps the symbols whole: the source's first token is <2mr>, {name} one token" \
        eval 'exits 0 && grep -q "\"source\":\[\"[^\"]*<2mr>\"" "$T/out" && grep -q "\"[^\"]*{name}\"" "$T/out" &&
              ! grep -q "\"{\"" "$T/out"'
    run info "$M" --json
    check "$tok: nmt info shows the symbols (the model's config)" eval 'exits 0 && has "$T/out" "<2mr>"'
done
printf '<2mr>Hello {name}x\n' | "$NMT" bpe apply "$T/sym-bpe/model.bin" >"$T/out" 2>"$T/err"
check "bpe apply MODEL.bin: the model's symbols whole, split off the text around them" \
    eval '[ "$(cut -d" " -f1 "$T/out")" = "<2mr>" ] && grep -q " {name} " "$T/out"'
printf '<2mr>Hello {name}x\n' | "$NMT" bpe apply "$F" >"$T/out" 2>"$T/err"
check "bpe apply of a model without symbols: the tag in pieces (as before)" grep -q "<@@" "$T/out"
sed 's/"user_symbols": \["<2mr>", "{name}"\]/"user_symbols": ["<2mr>", "<2mr>"]/' "$T/sym-bpe.json" >"$T/twice.json"
run train "$T/twice.json"
check "data.user_symbols with a symbol twice: exit 1, naming it" eval 'exits 1 && has "$T/err" "data.user_symbols[1]: \"<2mr>\" is given twice"'
run train "$T/sym-bpe.json" --set 'data.user_symbols=["a b"]' --set output.dir="$T/x"
check "--set data.user_symbols with a space: a usage error" eval 'exits 2 && has "$T/err" "holds whitespace"'
run translate --models "$T/sym-bpe/model.bin" "$F" "$T/src.txt"
check "an ensemble of models with other symbols: refused" exits 1

# ---------------------------------------------------------------- vocabularies that grow

# A model trained on one part of the data, fine-tuned on another: with train.extend_vocab
# its vocabularies grow by the new part's units, every old one keeping its id.
awk 'NR % 11 == 3' "$DATA" | head -n 1500 >"$T/part-b.tsv"
awk 'NR % 11 == 7' "$DATA" | head -n 200 >"$T/test-b.tsv"
# vocab_sizes MODEL — "SOURCE TARGET" from nmt info's vocabularies line.
vocab_sizes() { "$NMT" info "$1" | sed -n 's/^vocabularies: \([0-9]*\) source, \([0-9]*\) target.*/\1 \2/p'; }
# unk_target MODEL — the share of the test targets' words that are <unk> (nmt eval --json).
unk_target() { "$NMT" eval "$1" "$T/test-b.tsv" --json 2>/dev/null | sed -n 's/.*"unk_words":\[[^,]*,\([^]]*\)\].*/\1/p'; }
for m in gru trf; do
    printf '{"data": {"train": "%s"}, "train": {"batch_size": 32, "epochs": 1, "threads": 1, "extend_vocab": true},
             "output": {"dir": "%s"}}\n' "$T/part-b.tsv" "$T/grow-$m" >"$T/grow-$m.json"
    run train "$T/grow-$m.json" --init-from "$T/$m/model.bin"
    check "$m: fine-tuned with train.extend_vocab: says how many units it added and the <unk> shares before and after" \
        eval 'exits 0 && grep -q "the vocabularies grown by train.extend_vocab: [1-9][0-9]* source and [1-9][0-9]* target units of the new data added" "$T/err" &&
              grep -q "<unk> in the training units: source [0-9.]*% -> 0.00%, target [0-9.]*% -> 0.00%" "$T/err"'
    set -- $(vocab_sizes "$T/$m/model.bin") $(vocab_sizes "$T/grow-$m/model.bin")
    s0=$1 t0=$2 s1=$3 t1=$4
    check "$m: the vocabularies grew ($s0 -> $s1 source, $t0 -> $t1 target)" eval '[ "$s1" -gt "$s0" ] && [ "$t1" -gt "$t0" ]'
    sed 's/, "extend_vocab": true//; s/grow-'$m'/same-'$m'/' "$T/grow-$m.json" >"$T/same-$m.json"
    run train "$T/same-$m.json" --init-from "$T/$m/model.bin"
    check "$m: fine-tuned without it: the model's vocabularies as they were" \
        eval 'exits 0 && [ "$(vocab_sizes "$T/same-$m/model.bin")" = "$(vocab_sizes "$T/$m/model.bin")" ]'
    u1=$(unk_target "$T/same-$m/model.bin")
    u2=$(unk_target "$T/grow-$m/model.bin")
    check "$m: on held-out pairs of the new data, fewer target words are <unk> ($u1 -> $u2)" below "$u2" "$u1"
    run translate "$T/grow-$m/model.bin" "$T/src.txt" --beam 2
    check "$m: the grown model translates" eval 'exits 0 && [ "$(lines "$T/out")" = 60 ]'
done
# A Transformer with one embedding matrix for both sides and the output (joint vocabulary,
# tied): both sides grow alike.
printf '{"data": {"train": "%s", "joint_vocab": true},
         "model": {"type": "transformer", "embed": 16, "heads": 2, "ff": 32, "layers": 1, "tie_embeddings": true},
         "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "%s"}}\n' \
    "$T/train.tsv" "$T/joint" >"$T/joint.json"
"$NMT" train --quiet "$T/joint.json" >/dev/null 2>&1
sed 's/grow-gru/grow-joint/' "$T/grow-gru.json" >"$T/grow-joint.json"
run train "$T/grow-joint.json" --init-from "$T/joint/model.bin"
set -- $(vocab_sizes "$T/joint/model.bin") $(vocab_sizes "$T/grow-joint/model.bin")
s0=$1 t0=$2 s1=$3 t1=$4
check "Transformer, shared embeddings: one vocabulary grown for both sides ($s0 -> $s1)" \
    eval 'exits 0 && [ "$s1" -gt "$s0" ] && [ "$s1" = "$t1" ] && [ "$s0" = "$t0" ]'
# A classifier's source side grows; its labels stay.
head -n 1000 data/sentiment.tsv >"$T/sent-a.tsv"
tail -n 1000 data/sentiment.tsv >"$T/sent-b.tsv"
printf '{"data": {"train": "%s"}, "model": {"type": "classifier", "embed": 8, "hidden": 8},
         "train": {"batch_size": 32, "epochs": 1, "threads": 1}, "output": {"dir": "%s"}}\n' \
    "$T/sent-a.tsv" "$T/cls" >"$T/cls.json"
"$NMT" train --quiet "$T/cls.json" >/dev/null 2>&1
printf '{"data": {"train": "%s"}, "train": {"batch_size": 32, "epochs": 1, "threads": 1, "extend_vocab": true},
         "output": {"dir": "%s"}}\n' "$T/sent-b.tsv" "$T/grow-cls" >"$T/grow-cls.json"
run train "$T/grow-cls.json" --init-from "$T/cls/model.bin"
# classifier_sizes MODEL — a classifier's vocabulary size and its classes (nmt info).
classifier_sizes() {
    "$NMT" info "$1" | sed -n -e 's/^vocabulary: \([0-9]*\) words.*/\1/p' -e 's/^model: .* \([0-9]*\) classes$/\1/p'
}
set -- $(classifier_sizes "$T/cls/model.bin") $(classifier_sizes "$T/grow-cls/model.bin")
c0=$1 s0=$2 c1=$3 s1=$4
check "classifier: the source vocabulary grows ($s0 -> $s1), the labels stay ($c0 classes, $c1)" \
    eval 'exits 0 && [ "$s1" -gt "$s0" ] && [ "$c0" = 2 ] && [ "$c1" = 2 ]'
# A grown run resumes: the same units again, nothing more added.
run train --resume "$T/grow-gru" --set train.epochs=2
check "a run with train.extend_vocab resumes and goes on, its vocabularies as they were" \
    eval 'exits 0 && [ "$(vocab_sizes "$T/grow-gru/model.bin")" = "$(vocab_sizes "$T/grow-gru/best.bin")" ] &&
          has "$T/err" "resum"'
run train "$T/grow-gru.json"
check "train.extend_vocab without train.init_from: exit 1, saying it needs one" \
    eval 'exits 1 && has "$T/err" "train.extend_vocab applies only with train.init_from (a model to fine-tune)"'

finish
