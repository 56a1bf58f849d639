#!/bin/sh
# compare_family.sh — trains every model-family example config on the same corpus and
# budget and prints one Markdown table row per variant: validation loss, BLEU and chrF2
# (greedy and beam 5, on the held-out split the run wrote), training speed, parameters.
#
#   sh scripts/bench/compare_family.sh [CONFIG.json ...]     (default: configs/family/*.json)
#
# Each config trains into its own output.dir (runs/family/NAME). All configs in
# configs/family/ share the data and train sections, so the rows differ only in the
# model. Speed is the median of the train.log windows' target tokens/s; on a shared
# machine read it as a ratio to the bahdanau row measured in the same run.
set -eu
NMT=${NMT:-./nmt}
[ -x "$NMT" ] || { echo "compare_family.sh: $NMT not built (run make)" >&2; exit 1; }
[ $# -gt 0 ] || set -- configs/family/*.json

# The value of "key": in the first (or, with last=1, last) line of FILE matching PATTERN.
field() { grep -- "$3" "$1" | tail -n "${4:-1}" | head -n 1 | sed -E "s/.*\"$2\":([^,}]*).*/\1/"; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "| variant | parameters | validation loss | BLEU greedy | BLEU beam 5 | chrF2 greedy | target tokens/s | training time |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for cfg in "$@"; do
    name=$(basename "$cfg" .json)
    dir=$(grep -o '"dir": *"[^"]*"' "$cfg" | sed -E 's/.*"([^"]*)"$/\1/')
    start=$(date +%s)
    "$NMT" train "$cfg" --quiet
    secs=$(( $(date +%s) - start ))
    log=$dir/train.log
    vloss=$(field "$log" valid_loss '"event":"validation"')
    tps=$(grep -o '"tokens_per_s":[0-9.]*' "$log" | cut -d: -f2 | median)
    params=$(field "$log" parameters '"parameters"' || true)
    "$NMT" eval "$dir/model.bin" "$dir/valid.tsv" --json >"$dir/eval.json"
    "$NMT" eval "$dir/model.bin" "$dir/valid.tsv" --json --beam 5 >"$dir/eval_beam5.json"
    bleu=$(field "$dir/eval.json" bleu '"bleu"')
    chrf=$(field "$dir/eval.json" chrf '"chrf"')
    beam=$(field "$dir/eval_beam5.json" bleu '"bleu"')
    printf '| %s | %s | %.3f | %.2f | %.2f | %.2f | %.0f | %d s |\n' "$name" "${params:-?}" "$vloss" "$bleu" "$beam" \
        "$chrf" "$tps" "$secs"
done
