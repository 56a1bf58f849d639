#!/bin/sh
# reference_run.sh — docs/measurements.md's figures for the larger model of the reference comparison,
# configs/mar-reference.json (hidden 512, 5 epochs): a table of the validation after
# each epoch (loss on the held-out pairs, BLEU of 1,000 of them, from train.log), then
# `nmt eval` of the final model greedy and with beam 5 (BLEU, chrF2 and the loss) as a
# terminal shows it, then a line naming the machine, whose speed the training time is.
#
#   sh scripts/docs/reference_run.sh        (trains runs/mar-reference: about 6 minutes on
#                                            2 quiet cores)
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
dir=runs/mar-reference
rm -rf "$dir"               # an interrupted run there would be refused, not overwritten
start=$(date +%s)
./nmt train configs/mar-reference.json --quiet
secs=$(( $(date +%s) - start ))

echo "| epoch | validation loss | validation BLEU |"
echo "|---:|---:|---:|"
grep '"event":"validation"' "$dir/train.log" | sed -E \
    's/.*"epoch":([0-9]+).*"valid_loss":([0-9.]+).*"valid_bleu":([0-9.]+).*/\1 \2 \3/' |
    while read -r epoch loss bleu; do printf '| %s | %.4f | %.2f |\n' "$epoch" "$loss" "$bleu"; done
echo
echo '```'
echo "\$ ./nmt eval $dir/model.bin $dir/valid.tsv"
./nmt eval "$dir/model.bin" "$dir/valid.tsv" | head -n 3
echo "\$ ./nmt eval $dir/model.bin $dir/valid.tsv --beam 5"
./nmt eval "$dir/model.bin" "$dir/valid.tsv" --beam 5 | head -n 2
echo '```'
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "(Recorded on $cpu, $(nproc) cores, $(date -u +%Y-%m-%d): training took $secs s on that machine.)"
