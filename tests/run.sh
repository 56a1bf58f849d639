#!/bin/sh
# Runs each test binary given as an argument, then tests/test_cli.sh, and prints
# one closing line "N passed, N failed" counting the individual checks.
passed=0; failed=0
for t in "$@" tests/test_cli.sh; do
    [ -e "$t" ] || continue
    out=$( { if [ "${t%.sh}" != "$t" ]; then sh "$t"; else "$t"; fi; } 2>&1 )
    rc=$?
    printf '%s\n' "$out"
    line=$(printf '%s\n' "$out" | grep -E '^[a-z_]+: [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ] || [ $rc -ne 0 ]; then
        echo "$t: exited $rc without a complete report"
        failed=$((failed + 1))
    fi
    p=$(printf '%s' "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0}))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
