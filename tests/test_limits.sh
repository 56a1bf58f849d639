#!/bin/sh
# test_limits.sh — bounded memory on any input: the line-length limit, read errors told
# from end of input, absurdly long words for BPE.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_limits.sh

NAME=test_limits
. tests/lib.sh

finish
