#!/bin/sh
# test_cli_subwords.sh — subword units end to end: data.tokenizer bpe, char, none
# (text segmented elsewhere) and spm (SentencePiece) trained, stored, applied and undone,
# resumed; nmt bpe learn, apply and join, subword-nmt's codes byte for byte; and the
# options of nmt bpe that do not apply. Beside the word model of the small run of
# test_cli.sh (tests/lib.sh cli_tiny_run).
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_cli_subwords.sh
# NMT=path/to/nmt selects another binary. Prints "  ok what" / "FAIL what" per check,
# "skip what: why" for each check that cannot run here (a tool it needs is missing), and
# ends with "test_cli_subwords: N passed, M failed, K skipped".
#
# Nothing here depends on a clock: a run to be killed stops itself at a known step
# (NMT_PAUSE_AT_STEP, src/base/testhook.h) and the test waits for that before it acts;
# the time limits only keep a hung nmt from hanging the suite.

NAME=test_cli_subwords
. tests/lib.sh  # ok, bad, skip, check, finish, $T, run, exits, has, lines, one_error, field, cli_data;
                # $LIMIT is 300 s, generous for the sanitizer build

cli_data      # $T/train.tsv, $T/tiny.json
cli_tiny_run  # $RUN, $M: the word model the subword models are compared with

# ---------------------------------------------------------------- 1. subword units

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

# ---------------------------------------------------------------- 2. text segmented elsewhere

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

# ---------------------------------------------------------------- 3. SentencePiece

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

# ---------------------------------------------------------------- 4. options of nmt bpe that do not apply

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

finish
