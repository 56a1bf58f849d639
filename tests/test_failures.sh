#!/bin/sh
# test_failures.sh — every failure reported: write errors on standard output, model
# files holding NaN or Inf, non-finite losses, empty vocabularies, long paths.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_failures.sh

NAME=test_failures
. tests/lib.sh

finish
