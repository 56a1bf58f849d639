#!/bin/sh
# check.sh [NAME ...] — reruns the commands of the generated blocks (every block without
# NAMEs) and fails, naming the file, line, block, figure and both values, where a block
# differs from what its command prints now beyond scripts/docs/tolerances.tsv; also that
# every raw result in docs/bench/ names its machine. Also `make check-docs [DOCS=...]`.
# See scripts/docs/docs.py.
cd "$(dirname "$0")/../.." || exit 1
exec python3 scripts/docs/docs.py check "$@"
