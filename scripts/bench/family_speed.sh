#!/bin/sh
# family_speed.sh — training speed of each model-family config relative to the Bahdanau
# baseline, measured back to back so that a shared machine's load affects both alike.
#
#   sh scripts/bench/family_speed.sh [ROUNDS] [CONFIG.json ...]   (default 2, configs/family/*.json)
#
# Each config trains 80 updates (the train section's max_steps is overridden; output
# goes to a temporary directory), right after the baseline does the same; target
# tokens/s is the median of the log windows after the first 20 updates (warm-up). Prints
# one Markdown row per config: its tokens/s, the baseline's, and the median ratio.
#
# Also writes the raw figures (every round's, with the machine, date, commit and this
# command) to $RAW, default docs/bench/family_speed.json, which docs/measurements.md's table of the
# family's speed is rendered from: after measuring, `sh scripts/docs/regenerate.sh
# family_speed`.
set -eu
NMT=${NMT:-./nmt}
[ -x "$NMT" ] || { echo "family_speed.sh: $NMT not built (run make)" >&2; exit 1; }
invocation="sh scripts/bench/family_speed.sh $*"
ROUNDS=${1:-2}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- configs/family/*.json
BASE=configs/family/bahdanau.json
RAW=${RAW:-docs/bench/family_speed.json}
load_before=$(cut -d' ' -f1 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# list FILE: its lines as a JSON list's items.
list() { tr '\n' ' ' <"$1" | sed -e 's/ *$//' -e 's/ /, /g'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

# tokens/s of CONFIG over 80 updates, after warm-up.
speed() {
    sed -e 's/"epochs": [0-9]*/"epochs": 1, "max_steps": 80/' -e 's/"log_every": [0-9]*/"log_every": 20/' \
        -e "s#\"dir\": *\"[^\"]*\"#\"dir\": \"$tmp/run\"#" "$1" >"$tmp/cfg.json"
    "$NMT" train "$tmp/cfg.json" --quiet
    grep -o '"tokens_per_s":[0-9.]*' "$tmp/run/train.log" | cut -d: -f2 | tail -n +2 | median
}

echo "| variant | target tokens/s | bahdanau, same rounds | ratio |"
echo "|---|---:|---:|---:|"
for cfg in "$@"; do
    name=$(basename "$cfg" .json)
    : >"$tmp/v"; : >"$tmp/b"; : >"$tmp/r"
    r=0
    while [ "$r" -lt "$ROUNDS" ]; do
        b=$(speed "$BASE"); v=$(speed "$cfg")
        echo "$b" >>"$tmp/b"; echo "$v" >>"$tmp/v"
        awk -v v="$v" -v b="$b" 'BEGIN { print v / b }' >>"$tmp/r"
        r=$((r + 1))
    done
    printf '| %s | %.0f | %.0f | %.2f |\n' "$name" "$(median <"$tmp/v")" "$(median <"$tmp/b")" "$(median <"$tmp/r")"
    printf '  {"name": "%s", "tokens_per_s": [%s], "baseline_tokens_per_s": [%s], "ratios": [%s]}' "$name" \
        "$(list "$tmp/v")" "$(list "$tmp/b")" "$(list "$tmp/r")" >>"$tmp/configs"
    printf ',\n' >>"$tmp/configs"
done

# The raw figures, as JSON (the last config's line without its comma).
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
{
    echo '{'
    echo " \"script\": \"${invocation% }\","
    echo ' "provenance": "measured",'
    echo " \"date\": \"$started\","
    echo " \"commit\": \"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\","
    echo " \"machine\": {\"cpu\": \"$cpu\", \"cores\": $(nproc), \"load_before\": $load_before, \"load_after\": $(cut -d' ' -f1 /proc/loadavg)},"
    echo " \"settings\": {\"rounds\": $ROUNDS, \"steps\": 80, \"warmup_steps\": 20, \"baseline\": \"$BASE\"},"
    echo ' "configs": ['
    sed '$ s/,$//' "$tmp/configs"
    echo ' ]'
    echo '}'
} >"$RAW"
echo "wrote $RAW" >&2
