#!/bin/sh
# bpe_example.sh — docs/subwords.md's examples of `nmt bpe learn | apply | join` on the shipped
# corpus, as a terminal shows them (an indented code block). The codes file goes to a
# scratch directory. Deterministic: checked exactly.
#
#   sh scripts/docs/bpe_example.sh          (a few seconds)
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
root=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$root/nmt" "$tmp/nmt"
mkdir "$tmp/data" && ln -s "$root/data/mar.txt" "$tmp/data/mar.txt"

# show COMMAND: the command as typed, run in the scratch directory, and its output.
show() {
    printf '    $ %s\n' "$1"
    (cd "$tmp" && sh -c "$1") | sed 's/^/    /'
}
show 'cut -f1 data/mar.txt | ./nmt bpe learn --merges 4000 --lowercase -o codes.en'
show 'echo "The unbelievably quick reorganisation surprised everyone." | ./nmt bpe apply codes.en --lowercase'
show 'echo "The unbelievably quick reorganisation surprised everyone." | ./nmt bpe apply codes.en --lowercase | ./nmt bpe join'
show 'echo "我爱你。東京は大きいです。" | ./nmt bpe apply --char'
