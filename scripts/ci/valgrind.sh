#!/bin/sh
# valgrind.sh — one end-to-end run of nmt under valgrind's memcheck: train a tiny model
# (20 steps on 300 pairs of data/mar.txt, two validations, two checkpoints), translate
# clean and malformed lines greedily and with beam search, and eval on the held-out
# pairs; then the same with subword units (data.tokenizer bpe) and nmt bpe
# learn/apply/join, and with SentencePiece (data.tokenizer spm, libsentencepiece) and
# text segmented elsewhere (data.tokenizer none). Every run must end with no memory error and no leak (--error-exitcode,
# --leak-check=full, definite and indirect leaks count as errors); the script exits 1
# otherwise and leaves the reports in build/valgrind/*.log.
#
#   sh scripts/ci/valgrind.sh        (needs valgrind: sh scripts/install-deps.sh --valgrind)
#
# nmt is built here at -O1 without -march=native: valgrind 3.19 cannot run AVX-512
# instructions, which -march=native emits on the machines that have them. (The AVX-512
# versions of the kernels in src/kernels/dispatch.h are built, but valgrind's CPUID reports no
# AVX-512, so their AVX2 versions run.) About 80 s
# on two cores, so CI (.ci/run) runs it: memcheck sees reads of uninitialised memory,
# which the AddressSanitizer build of `make test-sanitize` does not.
set -u
cd "$(dirname "$0")/../.."
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind: not installed; sh scripts/install-deps.sh --valgrind"
    exit 1
fi
V=build/valgrind
mkdir -p "$V"
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# Include paths and libraries as the Makefile finds them: pkg-config, else plain -l flags.
DEPS=$(pkg-config --cflags --libs openblas libutf8proc libcjson libmicrohttpd 2>/dev/null) ||
    DEPS="-lopenblas -lutf8proc -lcjson -lmicrohttpd"
SPM=$(pkg-config --libs sentencepiece 2>/dev/null) || SPM="-lsentencepiece -lsentencepiece_train"
# src/text/spm.cc, the C interface to libsentencepiece, is C++ (the Makefile's CXX).
${CXX:-g++} -O1 -g -std=c++17 -Wall -Wextra -Isrc -c -o "$V/spm.o" src/text/spm.cc || exit 1
# shellcheck disable=SC2086
${CC:-cc} -O1 -g -pthread -fopenmp-simd -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Isrc \
    -o "$V/nmt" src/*/*.c "$V/spm.o" $DEPS $SPM -lstdc++ -lm || exit 1

awk 'NR % 97 == 0' data/mar.txt | head -n 300 >"$T/train.tsv"
cat >"$T/tiny.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 16, "hidden": 16},
  "train": {"batch_size": 16, "epochs": 2, "max_steps": 20, "threads": 1, "log_every": 5,
            "checkpoint_every": 10, "validate_every": 10, "valid_bleu_max": 10},
  "output": {"dir": "$T/run"}
}
EOF
# Clean lines, an empty one, invalid UTF-8, a NUL byte, CRLF, 600 words, no final newline.
{
    printf 'I am hungry.\nWhere is the station?\n\n\377\376 bytes\nnul \000 here\nShow me.\r\n'
    awk 'BEGIN { for (i = 0; i < 600; i++) printf "tom "; print "" }'
    printf 'We will go.'
} >"$T/in.txt"

failed=0
# nmt may restart itself to pick a faster OpenBLAS kernel (src/kernels/blas.c); under valgrind
# the restarted process would run unchecked (and the kernel might be AVX-512).
export NMT_NO_KERNEL_SELECT=1
# memcheck NAME ARGS... — runs $V/nmt ARGS under memcheck, stdin from $T/stdin.
memcheck() {
    name=$1
    shift
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect --log-file="$V/$name.log" "$V/nmt" "$@" <"$T/stdin" >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$V/$name.log" | tail -n 1)
    lost=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$V/$name.log" | tail -n 1)
    if [ "$rc" -eq 0 ] && [ "${errors:-1}" = 0 ]; then
        echo "valgrind: $name: exit 0, 0 errors, definitely lost ${lost:-0} bytes"
    else
        echo "valgrind: $name: FAILED (exit $rc, ${errors:-?} errors); report in $V/$name.log"
        # The error and leak reports: between the preamble and the leak summary.
        sed -n '/Parent PID/,/LEAK SUMMARY/p' "$V/$name.log" | sed '1d;$d' | head -n 40
        # Exit 99 is valgrind's verdict; anything else is nmt's own failure.
        [ "$rc" -eq 99 ] || tail -n 3 "$T/$name.err"
        failed=1
    fi
}

: >"$T/stdin"
memcheck train train "$T/tiny.json" --quiet
cp "$T/in.txt" "$T/stdin"
memcheck translate translate "$T/run/model.bin"
memcheck translate_beam translate "$T/run/model.bin" --beam 3 --nbest 2 --align --batch 3
memcheck translate_checkpoint translate "$T/run/checkpoint.bin" --attention-json
: >"$T/stdin"
memcheck eval eval "$T/run/model.bin" "$T/run/valid.tsv"
# Subword units: a bpe model trained, translating the same lines, and the bpe tools.
memcheck train_bpe train "$T/tiny.json" --quiet --set data.tokenizer=bpe --set data.bpe_merges=200 \
    --set "output.dir=$T/run_bpe"
cp "$T/in.txt" "$T/stdin"
memcheck translate_bpe translate "$T/run_bpe/model.bin" --beam 2 --align
cut -f1 "$T/train.tsv" >"$T/stdin"
memcheck bpe_learn bpe learn --merges 100 -o "$T/codes"
memcheck bpe_apply bpe apply "$T/codes"
cp "$T/bpe_apply.out" "$T/stdin"
memcheck bpe_join bpe join
# SentencePiece: models trained by libsentencepiece, stored, read back, applied, decoded.
: >"$T/stdin"
memcheck train_spm train "$T/tiny.json" --quiet --set data.tokenizer=spm --set data.spm_vocab_size=300 \
    --set "output.dir=$T/run_spm"
cp "$T/in.txt" "$T/stdin"
memcheck translate_spm translate "$T/run_spm/model.bin" --beam 2 --replace-unk
# Text segmented elsewhere: nmt bpe apply's pieces as the pairs, @@ joined on output.
paste "$T/bpe_apply.out" "$T/bpe_apply.out" >"$T/presegmented.tsv"
: >"$T/stdin"
memcheck train_none train "$T/tiny.json" --quiet --set data.tokenizer=none --set data.subword_format=bpe_at \
    --set "data.train=$T/presegmented.tsv" --set "output.dir=$T/run_none"
head -n 40 "$T/bpe_apply.out" >"$T/stdin"
memcheck translate_none translate "$T/run_none/model.bin"
# The Transformer: trained with dropout (packed rows, masks), translated greedy and with
# beams in batches (cached keys and values, retired rows, reordering), heads drawn.
sed -e 's/"embed": 16, "hidden": 16/"type": "transformer", "embed": 16, "heads": 2, "ff": 32, "layers": 2, "dropout": 0.1/' \
    "$T/tiny.json" >"$T/tiny_tr.json"
: >"$T/stdin"
memcheck train_transformer train "$T/tiny_tr.json" --quiet --set "output.dir=$T/run_tr"
cp "$T/in.txt" "$T/stdin"
memcheck translate_transformer translate "$T/run_tr/model.bin" --batch 3
memcheck translate_transformer_beam translate "$T/run_tr/model.bin" --beam 3 --nbest 2 --align --batch 3 \
    --attention-svg "$T/svg" --attention-heads
# The runs did what they are meant to exercise.
[ "$(grep -c '"event":"validation"' "$T/run/train.log" 2>/dev/null)" -ge 2 ] ||
    { echo "valgrind: train: expected 2 validations in train.log"; failed=1; }
[ "$(wc -l <"$T/translate.out")" -eq 8 ] || { echo "valgrind: translate: expected 8 output lines"; failed=1; }
grep -q '^BLEU = ' "$T/eval.out" || { echo "valgrind: eval: no BLEU line"; failed=1; }
[ "$(wc -l <"$T/translate_bpe.out")" -eq 8 ] || { echo "valgrind: translate_bpe: expected 8 output lines"; failed=1; }
cut -f1 "$T/train.tsv" | cmp -s - "$T/bpe_join.out" || { echo "valgrind: bpe join: not the text back"; failed=1; }
[ "$(wc -l <"$T/translate_spm.out")" -eq 8 ] || { echo "valgrind: translate_spm: expected 8 output lines"; failed=1; }
[ "$(wc -l <"$T/translate_none.out")" -eq 40 ] && ! grep -q '@@' "$T/translate_none.out" ||
    { echo "valgrind: translate_none: expected 40 output lines without @@"; failed=1; }
[ "$(wc -l <"$T/translate_transformer.out")" -eq 8 ] ||
    { echo "valgrind: translate_transformer: expected 8 output lines"; failed=1; }
exit $failed
