#!/bin/sh
# test_shortlist.sh — nmt shortlist and translate --shortlist (issue 31): the file it
# learns (every line SOURCE<TAB>TARGET<TAB>P or <TAB>TARGET<TAB>COUNT, in the model's
# units, the number of lines per source and of frequent units as asked); translating
# with it keeps the BLEU of pairs it was learnt from; a hand-made shortlist restricts the
# output to its words, for a GRU and a Transformer, float32 and an int8 file, one worker
# or two, line by line or in batches; units the model lacks are noted and left out; a
# line that is not three fields is refused naming the file and line; -o never replaces
# the shortlist, the model or the pairs; a classifier has no shortlist.
#
# Run from the repository root after `make`: sh tests/test_shortlist.sh. About 5 s on 2
# cores (two tiny models are trained). Nothing depends on a clock.

NAME=test_shortlist
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, cli_data, cli_tiny_run

cli_data  # $T/train.tsv (300 pairs), $T/tiny.json
cli_tiny_run  # $RUN/model.bin: a GRU that has learnt its 270 pairs
cat >"$T/tr.json" <<EOF2
{"data": {"train": "$T/train.tsv"},
 "model": {"type": "transformer", "embed": 32, "heads": 4, "ff": 64, "layers": 2, "dropout": 0},
 "train": {"batch_size": 16, "epochs": 30, "learning_rate": 0.003, "warmup_steps": 100, "threads": 1,
           "valid_bleu_max": 0},
 "output": {"dir": "$T/tr"}}
EOF2
$LIMIT "$NMT" train "$T/tr.json" --quiet 2>"$T/tr.err" || { bad "setup: the Transformer"; finish; }
GRU=$RUN/model.bin TR=$T/tr/model.bin
cut -f1 "$T/train.tsv" >"$T/src.txt"
cut -f2 "$T/train.tsv" >"$T/ref.txt"

# ---------------------------------------------------------------- learning
run shortlist "$GRU" "$T/train.tsv" -o "$T/gru.sl" --per-word 3 --frequent 5
check "shortlist: exit 0, says what it wrote" sh -c "[ $rc -eq 0 ] && grep -q 'source units from 300 pairs' '$T/err'"
check "every line is three tab-separated fields" awk -F'\t' 'NF != 3 { exit 1 }' "$T/gru.sl"
check "--frequent 5: five lines with an empty source, counts falling" \
    sh -c "[ \$(awk -F'\t' '\$1 == \"\"' '$T/gru.sl' | wc -l) -eq 5 ] &&
           awk -F'\t' '\$1 == \"\" { if (NR > 1 && \$3 > last) exit 1; last = \$3 }' '$T/gru.sl'"
check "--per-word 3: at most three targets per source unit, shares in (0, 1]" \
    awk -F'\t' '$1 != "" { n[$1]++; if (n[$1] > 3 || $3 <= 0 || $3 > 1) exit 1 }' "$T/gru.sl"
check "the file names the model's units (a common target word is there)" grep -q "	आहे	" "$T/gru.sl"
run shortlist "$GRU" "$T/train.tsv" -o -
check "-o -: the same lines on standard output (defaults: more of them)" \
    sh -c "[ $rc -eq 0 ] && [ \$(wc -l <'$T/out') -gt \$(wc -l <'$T/gru.sl') ]"
cp "$T/out" "$T/gru.full.sl"

# ---------------------------------------------------------------- translating with it
for m in GRU TR; do
    eval M=\$$m
    "$NMT" shortlist "$M" "$T/train.tsv" -o "$T/$m.sl" 2>/dev/null
    run translate "$M" "$T/src.txt"
    cp "$T/out" "$T/$m.plain"
    run translate "$M" "$T/src.txt" --shortlist "$T/$m.sl"
    cp "$T/out" "$T/$m.short"
    check "$m: translate --shortlist: exit 0, a line per line" sh -c "[ $rc -eq 0 ] && [ $(lines "$T/out") -eq 300 ]"
    run score "$T/ref.txt" -i "$T/$m.plain" --json
    plain=$(field bleu "$T/out")
    run score "$T/ref.txt" -i "$T/$m.short" --json
    short=$(field bleu "$T/out")
    check "$m: on the pairs it was learnt from, BLEU $short with the shortlist, $plain without (within 2)" \
        awk -v a="$short" -v b="$plain" 'BEGIN { exit !(a > b - 2 && b > 50) }'
    # A batch keeps the words its sources keep: the output depends on the batches, not on
    # the workers that decode them.
    run translate "$M" "$T/src.txt" --shortlist "$T/$m.sl" --batch 16
    cp "$T/out" "$T/$m.short16"
    run translate "$M" "$T/src.txt" --shortlist "$T/$m.sl" --workers 2 --batch 16
    check "$m: --batch 16, --workers 2: the bytes of one worker" cmp -s "$T/out" "$T/$m.short16"
done

# A hand-made shortlist of three target words (no punctuation: the output joins that to
# the word before), kept always: every output word is one of them (or <unk>), line by
# line and in batches, float32 and an int8 file.
words=$(awk -F'\t' '$1 == "" && $2 !~ /[[:punct:]]/ { print $2 }' "$T/gru.full.sl" | head -n 3)
printf '%s\n' $words | awk '{ printf "\t%s\t1\n", $1 }' >"$T/three.sl"
printf '%s\n' $words "<unk>" >"$T/allowed"
only_allowed() { tr ' ' '\n' <"$1" | grep -v '^$' | grep -vxF -f "$T/allowed" | head -n 1 | grep -q . && return 1; return 0; }
"$NMT" quantize "$TR" -o "$T/tr.q8.bin" 2>/dev/null
for case in "$GRU --batch 1" "$GRU --batch 64" "$TR --batch 1" "$TR --batch 64 --beam 3" "$T/tr.q8.bin --batch 64"; do
    run translate $case "$T/src.txt" --shortlist "$T/three.sl"
    check "a shortlist of three words ($case): exit 0, every output word one of them" \
        sh -c "[ $rc -eq 0 ] && [ $(lines "$T/out") -eq 300 ]" && check "... only $(echo $words | tr '\n' ' ')" only_allowed "$T/out"
done

# ---------------------------------------------------------------- bad shortlists
printf '\tnosuchword\t1\nnosuchsource\tआहे\t0.5\n' >>"$T/three.sl"
run translate "$GRU" "$T/src.txt" --shortlist "$T/three.sl"
check "units the model does not have: exit 0, a note counting 2 lines" \
    sh -c "[ $rc -eq 0 ] && grep -q 'three.sl: 2 lines name a unit the model does not have' '$T/err'"
printf 'a\tb\t0.5\nonly two\tfields\n' >"$T/broken.sl"
run translate "$GRU" "$T/src.txt" --shortlist "$T/broken.sl"
check "a line of two fields: exit 1, naming the file and line 2" \
    sh -c "[ $rc -eq 1 ] && grep -q 'broken.sl line 2: not SOURCE<TAB>TARGET<TAB>NUMBER' '$T/err'"
printf 'a\tb\tlots\n' >"$T/broken.sl"
run translate "$GRU" "$T/src.txt" --shortlist "$T/broken.sl"
check "a third field that is no number: exit 1, line 1" sh -c "[ $rc -eq 1 ] && grep -q 'broken.sl line 1' '$T/err'"
head -n 3 "$T/ref.txt" >"$T/prefix.txt"
run translate "$GRU" "$T/src.txt" --shortlist "$T/gru.sl" --prefix "$T/prefix.txt"
check "--shortlist with --prefix: usage error (a prefix's words may not be kept)" usage_error translate
run translate "$GRU" "$T/src.txt" --shortlist "$T/missing.sl"
check "a missing shortlist: exit 1, naming it" sh -c "[ $rc -eq 1 ] && grep -q 'missing.sl' '$T/err'"
cp "$T/gru.sl" "$T/keep.sl"
run translate "$GRU" "$T/src.txt" --shortlist "$T/gru.sl" -o "$T/gru.sl"
check "translate -o the shortlist itself: refused, the file untouched" \
    sh -c "[ $rc -eq 1 ] && cmp -s '$T/gru.sl' '$T/keep.sl'"
run shortlist "$GRU" "$T/train.tsv" -o "$T/train.tsv"
check "shortlist -o the pairs: refused" sh -c "[ $rc -eq 1 ] && grep -q 'which the output would replace' '$T/err'"
run shortlist "$GRU" "$T/train.tsv" -o "$GRU"
check "shortlist -o the model: refused, the model untouched" \
    sh -c "[ $rc -eq 1 ] && \"$NMT\" info '$GRU' >/dev/null"
run shortlist "$GRU" -o "$T/x.sl"
check "shortlist without PAIRS.tsv: usage error" usage_error shortlist
run shortlist "$GRU" "$T/train.tsv"
check "shortlist without -o: usage error" usage_error shortlist
run shortlist "$GRU" "$T/train.tsv" -o "$T/x.sl" --per-word 0
check "--per-word 0: usage error" usage_error shortlist
printf 'no tab here\n' >"$T/bad.tsv"
run shortlist "$GRU" "$T/bad.tsv" -o "$T/x.sl"
check "pairs that are no pairs: exit 1, naming the file, nothing written" \
    sh -c "[ $rc -eq 1 ] && grep -q 'bad.tsv' '$T/err' && [ ! -e '$T/x.sl' ]"
awk 'NR <= 40' data/sentiment.tsv >"$T/sent.tsv"
small_model classifier "$T/cls"
run shortlist "$T/cls/model.bin" "$T/sent.tsv" -o "$T/x.sl"
check "a classifier: exit 1, no shortlist" sh -c "[ $rc -eq 1 ] && grep -q 'classifier' '$T/err'"

finish
