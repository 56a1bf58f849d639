#!/bin/sh
# man.sh [--check] [MAN] — the man page's generated parts, from nmt's own option tables
# (src/cli/options.h): each block of MAN (default docs/nmt.1) between the lines
#   .\" BEGIN OPTIONS CMD
#   .\" END OPTIONS CMD
# is what `nmt --help-man` writes for CMD (the entries nmt CMD --help lists), and the .TH
# line names the version `nmt --version` prints. Without --check, rewrites MAN so (also
# `make man`); with --check, changes nothing and exits 1, showing the difference, where
# MAN is not so (tests/test_options.sh runs it). A command without a block in MAN, a
# block of no command, and an option that no help line lists are errors either way.
#
#   NMT=./nmt sh scripts/docs/man.sh [--check] [MAN]
cd "$(dirname "$0")/../.." || exit 1
check=0
if [ "${1:-}" = --check ]; then
    check=1
    shift
fi
MAN=${1:-docs/nmt.1}
NMT=${NMT:-./nmt}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

"$NMT" --help-man >"$tmp/blocks" || { echo "man.sh: $NMT --help-man failed" >&2; exit 1; }
version=$("$NMT" --version | sed -n 's/^nmt //p')
[ -n "$version" ] || { echo "man.sh: $NMT --version names no version" >&2; exit 1; }

awk -v blocks="$tmp/blocks" -v version="$version" -v man="$MAN" '
BEGIN {
    n = 0
    while ((getline line < blocks) > 0) {
        split(line, f, " ")
        if (line ~ /^\.\\" BEGIN OPTIONS /) { name = f[4]; order[n++] = name }
        block[name] = block[name] line "\n"
    }
    bad = 0
}
/^\.TH / { sub(/"nmt [^"]*"/, "\"nmt " version "\"") }
/^\.\\" BEGIN OPTIONS / {
    split($0, f, " ")
    if (!(f[4] in block)) { printf "man.sh: %s:%d: a block of options of no command, %s\n", man, NR, f[4] > "/dev/stderr"; bad = 1 }
    else { printf "%s", block[f[4]]; seen[f[4]] = 1 }
    inside = f[4]
    next
}
/^\.\\" END OPTIONS / { inside = ""; next }
inside != "" { next }
{ print }
END {
    if (inside != "") { printf "man.sh: %s: the block of %s has no END line\n", man, inside > "/dev/stderr"; bad = 1 }
    for (i = 0; i < n; i++)
        if (!(order[i] in seen)) {
            printf "man.sh: %s has no block for nmt %s'"'"'s options (.\\\" BEGIN OPTIONS %s)\n", man, order[i], order[i] > "/dev/stderr"
            bad = 1
        }
    exit bad
}' "$MAN" >"$tmp/new" || exit 1

if cmp -s "$MAN" "$tmp/new"; then exit 0; fi
if [ $check = 1 ]; then
    echo "man.sh: $MAN does not agree with nmt's option tables and version (sh scripts/docs/man.sh rewrites it):"
    diff -u "$MAN" "$tmp/new" | head -n 40
    exit 1
fi
cat "$tmp/new" >"$MAN" && echo "man.sh: $MAN rewritten from $NMT --help-man"
