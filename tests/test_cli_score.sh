#!/bin/sh
# test_cli_score.sh — nmt score end to end: the BLEU and chrF of 300 pairs exactly as
# an independent re-implementation of sacreBLEU gives them (tests/fixtures/score), its
# inputs and options, the swapped-files warning, --sentence and --json, and bad input.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_cli_score.sh
# NMT=path/to/nmt selects another binary. Prints "  ok what" / "FAIL what" per check,
# "skip what: why" for each check that cannot run here (a tool it needs is missing), and
# ends with "test_cli_score: N passed, M failed, K skipped".

NAME=test_cli_score
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, one_error, field, cli_data;
                # $LIMIT is 300 s, generous for the sanitizer build

# ---------------------------------------------------------------- 1. score

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

finish
