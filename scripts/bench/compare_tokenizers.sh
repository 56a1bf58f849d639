#!/bin/sh
# compare_tokenizers.sh — word vs subword vs character units at the same model size
# and training budget: trains CONFIG (default configs/default.json) once per
# data.tokenizer setting and prints one Markdown table row each: vocabulary sizes,
# parameters, the share of held-out words that hit <unk> (source and target), the
# held-out target side's length in model units (nmt eval's teacher-forced token count,
# <eos> included), BLEU and chrF2 (greedy and beam 5) on the held-out split, and the
# training time.
#
#   sh scripts/bench/compare_tokenizers.sh [CONFIG.json] [SETTING ...]
#
# A SETTING is "word", "char", "bpe:N" (N merges per side), "joint:N" (N merges
# learned from both sides, one vocabulary), "spm:N" (a SentencePiece unigram model of N
# pieces per side, trained by nmt through libsentencepiece) or "spmbpe:N"
# (SentencePiece's BPE, N pieces per side). Default: word bpe:1000 bpe:2000 bpe:4000
# char. Under spm a held-out word is the run of pieces from one with U+2581 to the
# next, the words of SentencePiece's own segmentation. data.max_len counts words before
# segmentation, so every row trains and is scored on the same sentence pairs and the
# same held-out split, except that spm sees text split at whitespace only (a word keeps
# its punctuation), so that a few more pairs fit data.max_len; BLEU and chrF score
# the detokenised words, so the rows compare directly (validation loss per model
# token does not, and is left out). Each run goes to runs/tokenizers/SETTING.
set -eu
NMT=${NMT:-./nmt}
[ -x "$NMT" ] || { echo "compare_tokenizers.sh: $NMT not built (run make)" >&2; exit 1; }
cfg=configs/default.json
case ${1:-} in *.json) cfg=$1; shift ;; esac
[ $# -gt 0 ] || set -- word bpe:1000 bpe:2000 bpe:4000 char

# The value of "key": in FILE (a one-line JSON object); arrays give their first or
# (idx 2) second element.
num() { sed -E "s/.*\"$2\":([-0-9.eE+]*).*/\1/" "$1"; }
arr() { sed -E "s/.*\"$2\":\[([^],]*),([^]]*)\].*/\\$3/" "$1"; }
# commas N: N with thousands separators (8,802,546).
commas() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); print s }'; }

echo "| tokenizer | vocabulary (source / target) | parameters | <unk> words source / target | held-out target units | BLEU greedy | BLEU beam 5 | chrF2 greedy | training time |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for setting in "$@"; do
    case $setting in
        word | char) set_tok="--set data.tokenizer=$setting" ;;
        bpe:*) set_tok="--set data.tokenizer=bpe --set data.bpe_merges=${setting#bpe:}" ;;
        joint:*) set_tok="--set data.tokenizer=bpe --set data.joint_vocab=true --set data.bpe_merges=${setting#joint:}" ;;
        spm:*) set_tok="--set data.tokenizer=spm --set data.spm_type=unigram --set data.spm_vocab_size=${setting#spm:}" ;;
        spmbpe:*) set_tok="--set data.tokenizer=spm --set data.spm_type=bpe --set data.spm_vocab_size=${setting#spmbpe:}" ;;
        *) echo "compare_tokenizers.sh: unknown setting $setting" >&2; exit 2 ;;
    esac
    dir=runs/tokenizers/$(echo "$setting" | tr ':' '-')
    start=$(date +%s)
    # shellcheck disable=SC2086 # set_tok is a list of options
    "$NMT" train "$cfg" --quiet $set_tok --set "output.dir=$dir"
    secs=$(( $(date +%s) - start ))
    "$NMT" info "$dir/model.bin" --json >"$dir/info.json"
    "$NMT" eval "$dir/model.bin" "$dir/valid.tsv" --json >"$dir/eval.json"
    "$NMT" eval "$dir/model.bin" "$dir/valid.tsv" --json --beam 5 >"$dir/eval_beam5.json"
    printf '| %s | %s / %s | %s | %.2f%% / %.2f%% | %s | %.2f | %.2f | %.2f | %d s |\n' "$setting" \
        "$(num "$dir/info.json" src_vocab)" "$(num "$dir/info.json" tgt_vocab)" "$(commas "$(num "$dir/info.json" parameters)")" \
        "$(awk -v x="$(arr "$dir/eval.json" unk_words 1)" 'BEGIN { print 100 * x }')" \
        "$(awk -v x="$(arr "$dir/eval.json" unk_words 2)" 'BEGIN { print 100 * x }')" \
        "$(commas "$(num "$dir/eval.json" target_tokens)")" \
        "$(num "$dir/eval.json" bleu)" "$(num "$dir/eval_beam5.json" bleu)" "$(num "$dir/eval.json" chrf)" "$secs"
done
