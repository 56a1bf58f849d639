#!/bin/sh
# test_cli_translate.sh — nmt translate end to end, on the small run of test_cli.sh
# (tests/lib.sh cli_tiny_run): edge cases of the input, ensembles, --max-len, a pipeline
# that must flush each line, beam search and batching, n-best lists, alignments,
# attention, <unk> replacement, input files and -o.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_cli_translate.sh
# NMT=path/to/nmt selects another binary. Prints "  ok what" / "FAIL what" per check,
# "skip what: why" for each check that cannot run here (a tool it needs is missing), and
# ends with "test_cli_translate: N passed, M failed, K skipped".
#
# Nothing here depends on a clock: the pipeline test waits for the lines it expects (or
# for nmt to end); the time limits only keep a hung nmt from hanging the suite.

NAME=test_cli_translate
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, one_error, field, cli_data;
                # $LIMIT is 300 s, generous for the sanitizer build

cli_data      # $T/train.tsv, $T/tiny.json, $T/two.txt
cli_tiny_run  # $RUN, $M
echo "Show me." | $LIMIT "$NMT" translate "$M" >"$T/m.txt" 2>/dev/null

# ---------------------------------------------------------------- 1. translate

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

# ---------------------------------------------------------------- 2. pipeline flushing

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

# ---------------------------------------------------------------- 3. beam search and batching

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
# One line at a time is seen in this order with one worker; several workers read a line
# or two ahead while a line is translated, so that line 2's warning may come first
# (test_threads.sh checks that a pipe's line 1 is still answered before line 2 comes).
cat "$T/warn3.txt" | $LIMIT "$NMT" translate "$M" --max-line-bytes 1024 --workers 1 >"$T/mixed" 2>&1
check "translate from a pipe: one line at a time by default (line 1's answer before line 2's warning)" \
    [ "$(order "$T/mixed")" = 2 ]
$LIMIT "$NMT" translate "$M" --max-line-bytes 1024 --batch 1 --workers 1 "$T/warn3.txt" >"$T/mixed" 2>&1
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

# ---------------------------------------------------------------- 4. n-best, alignments, attention, <unk>

head -n 20 "$T/src60.txt" >"$T/src20.txt"
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
run translate "$M" "$T/two.txt" --align --align-layer 1
check "translate --align-layer with a recurrent model: exit 1, naming the option" \
    eval 'exits 1 && grep -q "align-layer applies only to a Transformer" "$T/err"'

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

# ---------------------------------------------------------------- 5. translate: input files, -o

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

finish
