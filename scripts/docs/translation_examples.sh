#!/bin/sh
# translation_examples.sh — docs/commands.md's examples of `nmt translate --align` and `--nbest`,
# as a terminal shows them (an indented code block), from the demo's model
# runs/default/model.bin. Trains it first (configs/default.json, as `make demo` does)
# if it is not there; scripts/docs/regenerate.sh and check.sh run worked_example,
# which trains it, before this block.
#
#   sh scripts/docs/translation_examples.sh
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
[ -f runs/default/model.bin ] || ./nmt train configs/default.json --quiet >&2

# show COMMAND: the command as typed and its output, indented four spaces.
show() {
    printf '    $ %s\n' "$1"
    sh -c "$1" | sed 's/^/    /'
}
show "printf 'I am hungry.\\n' | ./nmt translate runs/default/model.bin --align"
show "printf 'I am hungry.\\n' | ./nmt translate runs/default/model.bin --nbest 2"
