#!/bin/sh
# fuzz.sh — runs the libFuzzer targets that `make fuzz` built, each for a bounded time.
#
#   sh scripts/ci/fuzz.sh --check CC           can CC build a libFuzzer program? (exit 1 if not)
#   sh scripts/ci/fuzz.sh SECONDS TARGET...    fuzz each build/fuzz/fuzz_NAME for SECONDS
#                                           (0: only replay the seeds and saved corpus)
#
# Each target starts from its committed seeds (tests/fuzz/corpus/NAME/) and from what
# earlier runs here found (build/fuzz/corpus/NAME/, where new inputs are kept); the
# modelfile target also from files the current modelfile_write makes
# (build/fuzz/seed_modelfile). One line per target says how many inputs ran and the
# coverage libFuzzer reached. A crash, leak, undefined behaviour, broken promise
# (FUZZ_ASSERT), timeout or oversized allocation stops that target: the script names
# the saved input, prints the report, goes on with the other targets and exits 1.
# Full logs: build/fuzz/NAME.log.

# The libFuzzer options every target gets:
#   -timeout=20            one input taking 20 s is a hang, not slowness
#   -malloc_limit_mb=256   no input of a few KB may make the code ask for more at once
#                          (a trusted corrupt length field would)
#   -rss_limit_mb=2048
COMMON="-timeout=20 -malloc_limit_mb=256 -rss_limit_mb=2048 -print_final_stats=1"

if [ "$1" = "--check" ]; then
    cc=${2:-clang}
    dir=$(mktemp -d) || exit 1
    printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
        'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >"$dir/t.c"
    if ! command -v "$cc" >/dev/null 2>&1; then
        why="$cc is not installed"
    elif ! "$cc" -fsanitize=fuzzer,address,undefined -o "$dir/t" "$dir/t.c" >"$dir/log" 2>&1; then
        why="$cc cannot link a libFuzzer program ($(head -n 1 "$dir/log"))"
    elif ! "$dir/t" -runs=1 >"$dir/log" 2>&1; then
        why="a libFuzzer program built by $cc does not run"
    fi
    rm -rf "$dir"
    if [ -n "$why" ]; then
        echo "fuzz: $why."
        echo "fuzz: make fuzz needs clang with libFuzzer (Debian: clang and libclang-rt-dev);"
        echo "fuzz: install them with: sh scripts/install-deps.sh --fuzz"
        exit 1
    fi
    exit 0
fi

seconds=$1
shift
case $seconds in '' | *[!0-9]*) echo "usage: sh scripts/ci/fuzz.sh SECONDS TARGET... | --check CC" >&2; exit 2 ;; esac
[ $# -gt 0 ] || { echo "fuzz: no targets given" >&2; exit 2; }

mkdir -p build/fuzz/crashes
scratch=
trap 'rm -rf ${scratch:+"$scratch"}' EXIT
trap 'exit 130' INT TERM HUP
failed=0
for target in "$@"; do
    name=${target##*/fuzz_}
    work=build/fuzz/corpus/$name
    mkdir -p "$work"
    dirs="$work tests/fuzz/corpus/$name"
    # The longest input tried: inputs beyond a few KB find nothing new and run slower.
    max_len=4096
    case $name in
    modelfile)
        mkdir -p build/fuzz/seeds/modelfile
        build/fuzz/seed_modelfile build/fuzz/seeds/modelfile || { echo "fuzz: seed_modelfile failed"; exit 1; }
        dirs="$dirs build/fuzz/seeds/modelfile"
        max_len=8192
        ;;
    tokenize) max_len=1024 ;;
    esac
    dict=
    [ -f "tests/fuzz/$name.dict" ] && dict="-dict=tests/fuzz/$name.dict"
    if [ "$seconds" -eq 0 ]; then limit="-runs=0"; else limit="-max_total_time=$seconds"; fi
    log=build/fuzz/$name.log
    # Scratch space for files a target writes (fuzz_modelfile's round trips), in RAM
    # where there is some, removed however the target ends.
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then shm=/dev/shm; else shm=${TMPDIR:-/tmp}; fi
    scratch=$(mktemp -d "$shm/nmt-fuzz-XXXXXX") || exit 1
    # shellcheck disable=SC2086
    NMT_FUZZ_TMPDIR=$scratch "$target" $limit $COMMON -max_len=$max_len $dict \
        -artifact_prefix="build/fuzz/crashes/$name-" $dirs >"$log" 2>&1
    rc=$?
    rm -rf "$scratch"

    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    cov=$(grep -o ' cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1 | sed 's/ cov: \([0-9]*\) ft: \([0-9]*\)/\1 edges (\2 features)/')
    corpus=$(grep -o ' corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -n 1 | sed 's/ corp: //')
    if [ $rc -eq 0 ]; then
        echo "fuzz: $name: ${runs:-?} inputs in $seconds s, coverage ${cov:-?}, corpus ${corpus:-?}: no crash"
        continue
    fi
    failed=1
    if [ $rc -eq 72 ]; then   # libFuzzer's -interrupted_exitcode
        echo "fuzz: $name: interrupted after ${runs:-?} inputs"
        continue
    fi
    saved=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    kind=$(grep -m 1 -E 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|runtime error:|broken promise' "$log")
    echo "fuzz: $name: FAILED after ${runs:-?} inputs (exit $rc): ${kind:-see $log}"
    if [ -n "$saved" ]; then
        echo "fuzz: $name: the input is saved in $saved"
        echo "fuzz: $name: reproduce with: $target $saved"
    fi
    # The report, without libFuzzer's banner.
    sed -n '/broken promise\|==[0-9]*==ERROR\|runtime error:\|ERROR: libFuzzer/,$p' "$log" | head -n 60 | sed 's/^/    | /'
    echo "fuzz: $name: full log in $log"
done
exit $failed
