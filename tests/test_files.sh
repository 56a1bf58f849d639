#!/bin/sh
# test_files.sh — nmt and the files around it: no output written over an input, no
# file it did not write replaced, no symbolic link followed in a run directory.
#
# Run from the repository root after `make` (tests/run.sh does): sh tests/test_files.sh

NAME=test_files
. tests/lib.sh

finish
