#!/bin/sh
# toolbox_examples.sh PART — README's examples of scores, quality estimates, prefixes and
# sampling (issue 32), as a terminal shows them (an indented code block), from the
# demo's model runs/default/model.bin. PART: pair-scores (nmt eval --per-line),
# translate-scores (nmt translate --scores, --nbest --scores), prefix (--prefix), sample
# (--sample). Trains the model first (configs/default.json, as `make demo` does) if it
# is not there. The commands run in a scratch directory (the files they write go
# there) that links ./nmt and runs/default to the repository's.
#
#   sh scripts/docs/toolbox_examples.sh pair-scores
set -eu
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
[ -f runs/default/model.bin ] || ./nmt train configs/default.json --quiet >&2
ROOT=$(pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/runs"
ln -s "$ROOT/nmt" "$T/nmt"
ln -s "$ROOT/runs/default" "$T/runs/default"
cd "$T"

# show COMMAND: the command as typed, its output, then what it wrote on stderr,
# indented four spaces (an empty line left empty).
show() {
    printf '    $ %s\n' "$1"
    sh -c "$1" 2>"$T/stderr" | sed 's/^./    &/'
    sed 's/^./    &/' "$T/stderr"
}
keys="echo \"I don't know where my keys are.\""
case ${1:-} in
pair-scores)
    show "printf 'I am hungry.\\tमला भूक लागली आहे.\\nI am hungry.\\tमी घरी जातो.\\nno tab here\\n' >pairs.tsv"
    show "./nmt eval runs/default/model.bin pairs.tsv --per-line --word-scores" ;;
translate-scores)
    show "$keys | ./nmt translate runs/default/model.bin --scores"
    show "$keys | ./nmt translate runs/default/model.bin --nbest 1 --scores" ;;
prefix)
    show "echo \"माझ्या\" >prefix.txt"
    show "$keys | ./nmt translate runs/default/model.bin --prefix prefix.txt --beam 5" ;;
sample)
    show "$keys | ./nmt translate runs/default/model.bin --sample 0 --seed 1 --nbest 3" ;;
*)
    echo "usage: sh scripts/docs/toolbox_examples.sh pair-scores|translate-scores|prefix|sample" >&2
    exit 2 ;;
esac
