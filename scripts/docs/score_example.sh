#!/bin/sh
# score_example.sh — docs/commands.md's example of `nmt score` on the shipped fixture
# (tests/fixtures/score/, 300 model translations and their references), as a terminal
# shows it (an indented code block). Deterministic: checked exactly.
#
#   sh scripts/docs/score_example.sh
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
cmd="./nmt score tests/fixtures/score/ref.txt -i tests/fixtures/score/hyp.txt"
echo "    \$ $cmd"
$cmd | sed 's/^/    /'
