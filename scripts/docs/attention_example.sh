#!/bin/sh
# attention_example.sh — README's attention heatmap: the default model's (`make demo`,
# runs/default/model.bin) beam-5 translation of one sentence with --attention-svg, as a
# terminal shows it (indented four spaces: a code block), and the heatmap itself,
# written to $DOCS_ASSETS/attention-example.svg (default docs/, where the README shows
# it; scripts/docs/check.sh points DOCS_ASSETS at a scratch directory). Trains the model
# first if it is not there.
#
#   sh scripts/docs/attention_example.sh
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
[ -f runs/default/model.bin ] || ./nmt train configs/default.json --quiet >&2
assets=${DOCS_ASSETS:-docs}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sentence="I don't know where my keys are."
printf '    $ echo "%s" | ./nmt translate runs/default/model.bin --beam 5 --attention-svg docs\n' "$sentence"
echo "$sentence" | ./nmt translate runs/default/model.bin --beam 5 --attention-svg "$tmp" | sed 's/^/    /'
echo "    \$ mv docs/000001.svg docs/attention-example.svg"
cp "$tmp/000001.svg" "$assets/attention-example.svg"
