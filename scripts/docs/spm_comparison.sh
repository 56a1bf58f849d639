#!/bin/sh
# spm_comparison.sh — docs/measurements.md's table of SentencePiece against nmt's own BPE:
# scripts/bench/compare_tokenizers.sh with bpe:8000 (8,000 merges per side), spm:8000
# (SentencePiece unigram, 8,000 pieces per side) and spmbpe:8000 (SentencePiece BPE) on
# configs/default.json, i.e. data/mar.txt, and on the same config reading swe.txt from
# the shared Tatoeba data (SHARED, default ../shared/data), then a line naming the
# machine, whose speed the training times are.
#
#   sh scripts/docs/spm_comparison.sh    (trains 6 models: about 30 minutes on 2 quiet cores)
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
SHARED=${SHARED:-../shared/data}
[ -r "$SHARED/swe.txt" ] || { echo "spm_comparison.sh: $SHARED/swe.txt not found (set SHARED)" >&2; exit 1; }
make -s nmt >&2
mkdir -p runs
sed "s|\"data/mar.txt\"|\"$SHARED/swe.txt\"|" configs/default.json >runs/spm_swe.json
for corpus in mar swe; do
    cfg=configs/default.json
    [ $corpus = swe ] && cfg=runs/spm_swe.json
    rm -rf runs/tokenizers      # an interrupted run there would be refused, not overwritten
    echo "$corpus.txt:"
    echo
    sh scripts/bench/compare_tokenizers.sh "$cfg" bpe:8000 spm:8000 spmbpe:8000
    echo
done
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "(Recorded on $cpu, $(nproc) cores, $(date -u +%Y-%m-%d): the training times are that machine's.)"
