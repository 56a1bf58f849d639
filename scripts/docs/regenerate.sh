#!/bin/sh
# regenerate.sh [NAME ...] — reruns the commands of the generated blocks of README.md,
# BENCHMARKS.md and docs/*.md and writes their output between the blocks' markers
# (every block without NAMEs; `python3 scripts/docs/docs.py list` names them). Also
# `make docs [DOCS="NAME ..."]`. See scripts/docs/docs.py.
cd "$(dirname "$0")/../.." || exit 1
exec python3 scripts/docs/docs.py regenerate "$@"
