#!/bin/sh
# test_layers — the architecture holds: scripts/ci/check_layers.sh finds every include and
# every call between nmt's objects pointing down the layers of src/ (src/README.md), and
# no include loop. BUILD (default build/) holds the objects whose calls are checked.
NAME=test_layers
cd "$(dirname "$0")/.." || exit 1
passed=0; failed=0
out=$(sh scripts/ci/check_layers.sh "${BUILD:-build}" 2>&1)
if [ $? -eq 0 ] && printf '%s\n' "$out" | grep -q "includes and calls point down"; then
    passed=1; echo "  ok layers: $out"
else
    failed=1; printf '%s\n' "$out" | sed 's/^/FAIL /'
fi
echo "$NAME: $passed passed, $failed failed, 0 skipped"
[ $failed -eq 0 ]
