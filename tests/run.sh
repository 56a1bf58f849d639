#!/bin/sh
# Runs each test given as an argument (a test binary, or a shell test: NAME.sh, run with
# sh) in turn, and prints one closing line "N passed, M failed, K skipped" counting the
# individual checks.
#
# Each test must end with its own line "NAME: N passed, M failed, K skipped" (check.h's
# check_report; the shell tests print the same), exit 0 exactly when M is 0, and print
# one line "skip WHAT: WHY" for each of the K checks it could not run here. A test that
# is missing, crashes, exits otherwise or miscounts its skips is one more failure.
passed=0; failed=0; skipped=0
for t in "$@"; do
    if [ ! -e "$t" ]; then
        echo "FAIL $t: no such test (not built?)"
        failed=$((failed + 1))
        continue
    fi
    out=$( { if [ "${t%.sh}" != "$t" ]; then sh "$t"; else "$t"; fi; } 2>&1 )
    rc=$?
    printf '%s\n' "$out"
    line=$(printf '%s\n' "$out" | grep -E '^[a-z_0-9]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n 1)
    p=$(printf '%s' "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
    f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    s=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) skipped$/\1/')
    if [ -z "$line" ]; then
        echo "FAIL $t: exited $rc without a closing line 'NAME: N passed, M failed, K skipped'"
        failed=$((failed + 1))
    elif [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $t: exited $rc after reporting no failure"
        failed=$((failed + 1))
    fi
    n_skip=$(printf '%s\n' "$out" | grep -c '^skip ')
    if [ -n "$line" ] && [ "$n_skip" -ne "$s" ]; then
        echo "FAIL $t: reports $s skipped but printed $n_skip 'skip' lines"
        failed=$((failed + 1))
    fi
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
