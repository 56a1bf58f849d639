#!/bin/sh
# family.sh — docs/measurements.md's table of the model family: every config in configs/family/
# trained by scripts/bench/compare_family.sh (same data, size and budget; each into
# runs/family/NAME), one row each from the files it leaves: parameters, the final
# model's validation loss (nmt eval's teacher-forced loss on the held-out split), BLEU
# greedy and with beam 5, chrF2 greedy. The "what differs" column is written here, one
# line per config; a config without one is an error, so a new config cannot slip into
# the table undescribed. Speed is in a table of its own (family_speed, rendered from
# docs/bench/family_speed.json).
#
#   sh scripts/docs/family.sh       (trains all 14: about an hour on 2 quiet cores)
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2

describe() {
    case $1 in
    bahdanau) echo "the default: GRU, Bahdanau attention" ;;
    bidirectional) echo "bidirectional encoder (2 x 128 units), bridge" ;;
    label_smoothing) echo "bahdanau + \`train.label_smoothing\` 0.1" ;;
    layers2) echo "2 GRU layers each side, dropout 0.2" ;;
    local_monotonic) echo "local attention, p_t = t, D = 4, input feeding" ;;
    local_predictive) echo "local attention, learned p_t, D = 4, input feeding" ;;
    lstm) echo "LSTM cells, Bahdanau attention" ;;
    lstm_luong_bidirectional) echo "LSTM, bidirectional, Luong general, input feeding" ;;
    luong_concat) echo "Luong concat score, input feeding" ;;
    luong_dot) echo "Luong dot score, input feeding" ;;
    luong_dot_scaled) echo "Luong dot / sqrt(H), input feeding" ;;
    luong_general) echo "Luong general score, input feeding" ;;
    scheduled_sampling) echo "bahdanau + teacher forcing 1.0 -> 0.5 (linear)" ;;
    tied) echo "bahdanau + tied target embeddings / output layer" ;;
    *) echo "family.sh: configs/family/$1.json has no description here; add one" >&2; exit 1 ;;
    esac
}
for cfg in configs/family/*.json; do describe "$(basename "$cfg" .json)" >/dev/null; done

rm -rf runs/family          # an interrupted run there would be refused, not overwritten
sh scripts/bench/compare_family.sh configs/family/*.json >&2

# num FILE KEY: the number after "KEY": in FILE (one JSON object).
num() { sed -E "s/.*\"$2\":([-0-9.eE+]*).*/\1/" "$1"; }
commas() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); print s }'; }

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
echo "| config | what differs | parameters | validation loss | BLEU greedy | BLEU beam 5 | chrF2 |"
echo "|---|---|---:|---:|---:|---:|---:|"
for cfg in configs/family/*.json; do
    name=$(basename "$cfg" .json)
    dir=$(grep -o '"dir": *"[^"]*"' "$cfg" | sed -E 's/.*"([^"]*)"$/\1/')
    ./nmt info "$dir/model.bin" --json >"$dir/info.json"
    printf '| `%s` | %s | %s | %.3f | %.2f | %.2f | %.2f |\n' "$name" "$(describe "$name")" \
        "$(commas "$(num "$dir/info.json" parameters)")" "$(num "$dir/eval.json" loss)" \
        "$(num "$dir/eval.json" bleu)" "$(num "$dir/eval_beam5.json" bleu)" "$(num "$dir/eval.json" chrf)"
done | tee "$rows"

# What the table says of beam search, counted from it (BLEU beam 5 against greedy).
awk -F' [|] ' '{ n++; if ($6 + 0 > $5 + 0) better++ }
    END { printf "\nBeam 5 scores above greedy search in %d of %d rows.\n", better, n }' "$rows"
