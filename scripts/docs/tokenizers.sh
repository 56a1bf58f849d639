#!/bin/sh
# tokenizers.sh — docs/measurements.md's table of word units against BPE and characters:
# scripts/bench/compare_tokenizers.sh on configs/default.json with word, bpe:1000, bpe:4000,
# bpe:8000 and char (each into runs/tokenizers/SETTING), then a line naming the machine,
# whose speed the training times are.
#
#   sh scripts/docs/tokenizers.sh       (trains 5 models: about 20 minutes on 2 quiet cores)
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
rm -rf runs/tokenizers      # an interrupted run there would be refused, not overwritten
sh scripts/bench/compare_tokenizers.sh configs/default.json word bpe:1000 bpe:4000 bpe:8000 char
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "(Recorded on $cpu, $(nproc) cores, $(date -u +%Y-%m-%d): the training times are that machine's.)"
