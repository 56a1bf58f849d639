#!/bin/sh
# worked_example.sh — README's worked example: what `make demo` prints (its commands,
# nmt's messages on stderr and the translations and scores on stdout, in the order a
# terminal shows them), with the training log abridged: its first two step lines, each
# epoch's line, and the last step line before the last epoch, "..." for the rest.
# Then a line naming the machine, whose speed the tok/s and seconds are.
#
#   sh scripts/docs/worked_example.sh       (deletes and trains runs/default: about 3 minutes
#                                            on 2 quiet cores)
#
# Run from the repository root (scripts/docs/regenerate.sh and check.sh do).
set -eu
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# A make that calls this one (make docs) must not pass on -s or -j: the block shows
# the commands as make echoes them.
unset MAKEFLAGS MFLAGS MAKELEVEL
make -s nmt >&2
# As on a fresh clone: an earlier run there would add a line about starting over.
rm -rf runs/default
make --no-print-directory demo >"$out" 2>&1

echo '```'
echo '$ make demo'
awk '
    # Pass 1 (NR == FNR): where the step lines and the last epoch line are.
    NR == FNR {
        if ($0 ~ /^nmt: step [0-9]+ /) step[++steps] = FNR
        if ($0 ~ /^nmt: epoch [0-9]+ done/) last_epoch = FNR
        next
    }
    FNR == 1 {
        for (i = 1; i <= steps; i++) if (step[i] < last_epoch) before_last = step[i]
        n = 0
    }
    # Pass 2: every line but the step lines, of which only the chosen ones.
    {
        if ($0 ~ /^nmt: step [0-9]+ /) {
            n++
            if (n > 2 && FNR != before_last) { if (!elided) print "..."; elided = 1; next }
        }
        elided = 0
        print
    }
' "$out" "$out"
echo '```'
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "(Recorded on $cpu, $(nproc) cores, $(date -u +%Y-%m-%d): the tok/s and seconds are that machine's.)"
