#!/bin/sh
# training_example.sh — README's training chart: `nmt plot` of the default model's run
# (`make demo`, runs/default), as a terminal shows the command, and the chart itself,
# written to $DOCS_ASSETS/training-example.svg (default docs/, where the README shows
# it; scripts/docs/check.sh points DOCS_ASSETS at a scratch directory). Trains the model
# first if it is not there.
#
#   sh scripts/docs/training_example.sh
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
[ -f runs/default/model.bin ] || ./nmt train configs/default.json --quiet >&2
assets=${DOCS_ASSETS:-docs}
echo "    \$ ./nmt plot runs/default -o docs/training-example.svg"
./nmt plot runs/default -o "$assets/training-example.svg"
