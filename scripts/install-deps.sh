#!/bin/sh
# Installs the Debian packages nmt builds against (compilers, OpenBLAS, utf8proc, cJSON,
# SentencePiece, GNU libmicrohttpd (nmt serve's HTTP), and pkg-config, through which the
# Makefile finds their headers and libraries; g++ compiles src/text/spm.cc, the C
# interface to the C++ libsentencepiece).
# Uses sudo when not run as root.
#
#   sh scripts/install-deps.sh              what `make`, `make test` and `make demo` need
#   sh scripts/install-deps.sh --fuzz       also clang and its compiler-rt (libFuzzer and
#                                           the sanitizer runtimes), for `make fuzz`
#   sh scripts/install-deps.sh --valgrind   also valgrind, for scripts/ci/valgrind.sh
#   sh scripts/install-deps.sh --test-tools also what a few checks of tests/test_cli*.sh
#                                           use when present and skip otherwise: script(1)
#                                           (a terminal for the progress line), groff (the
#                                           man page), python3 (parsing JSON output),
#                                           sentencepiece (spm_train: a .model file made
#                                           by SentencePiece itself), GNU time (peak
#                                           memory, tests/test_limits.sh), curl (the
#                                           requests of tests/test_serve.sh)
#   sh scripts/install-deps.sh --browser    also Chromium, its WebDriver and python3, for
#                                           tests/test_browser.sh (nmt serve's page in a
#                                           real browser)
#   sh scripts/install-deps.sh --bench      also wrk, the load of make bench-serve
#   sh scripts/install-deps.sh --mpi        also OpenMPI (mpicc, mpirun), for `make mpi`
#                                           (./nmt-mpi) and `make test-mpi` (with procps:
#                                           its pgrep finds the ranks)
#   sh scripts/install-deps.sh --qemu       also qemu-user, for scripts/ci/check_portable.sh
#                                           (./nmt under emulated older x86-64 CPUs)
#   sh scripts/install-deps.sh --arm64      also the arm64 cross compilers and the arm64
#                                           libraries (adds the arm64 architecture to
#                                           dpkg), for check_portable.sh --arm64 (which
#                                           fetches arm64's SentencePiece itself)
#
# libclang-rt-dev is the versionless name of the compiler-rt package that matches the
# default clang (libclang-rt-14-dev on Debian 12); clang itself only recommends it, so
# an install without recommends would lack -fsanitize=fuzzer.
set -e
PACKAGES="gcc g++ make libc6-dev pkgconf libopenblas-dev libutf8proc-dev libcjson-dev libsentencepiece-dev libmicrohttpd-dev"
ARM64=0
for arg in "$@"; do
    case $arg in
    --fuzz) PACKAGES="$PACKAGES clang libclang-rt-dev" ;;
    --valgrind) PACKAGES="$PACKAGES valgrind" ;;
    --test-tools) PACKAGES="$PACKAGES bsdutils groff-base python3 sentencepiece time curl" ;;
    --browser) PACKAGES="$PACKAGES chromium chromium-driver python3" ;;
    --bench) PACKAGES="$PACKAGES wrk" ;;
    --mpi) PACKAGES="$PACKAGES libopenmpi-dev openmpi-bin procps" ;;
    --qemu) PACKAGES="$PACKAGES qemu-user" ;;
    # pkgconf:arm64 brings aarch64-linux-gnu-pkg-config; the libraries bring arm64's libc
    # and loader, which qemu-aarch64 runs the cross-built nmt with.
    --arm64) ARM64=1
             # Not libsentencepiece-dev:arm64: Debian 12's SentencePiece packages are not
             # Multi-Arch: same, and installing arm64's removes the host's, which the
             # build needs; check_portable.sh unpacks arm64's beside the build instead.
             PACKAGES="$PACKAGES qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu pkgconf:arm64"
             PACKAGES="$PACKAGES libopenblas-dev:arm64 libutf8proc-dev:arm64 libcjson-dev:arm64 libstdc++6:arm64"
             PACKAGES="$PACKAGES libmicrohttpd-dev:arm64" ;;
    *) echo "usage: sh scripts/install-deps.sh [--fuzz] [--valgrind] [--test-tools] [--browser] [--bench] [--mpi]" \
            "[--qemu] [--arm64]" >&2
       exit 2 ;;
    esac
done
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ $ARM64 = 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
fi
missing=
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
