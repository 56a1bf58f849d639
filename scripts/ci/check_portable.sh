#!/bin/sh
# check_portable.sh — does the nmt that `make` builds (and `make install` installs) run
# on CPUs older than the one it was built on?
#
#   sh scripts/ci/check_portable.sh [--arm64]
#
# Runs ./nmt under qemu-user's x86-64 emulation (qemu-x86_64 -cpu MODEL) with CPU models
# that lack the newer instruction sets of most build machines:
#   Haswell   AVX2 and FMA, no AVX-512: the kernels' x86-64-v3 versions run (dispatch.h)
#   Nehalem   SSE4.2, no AVX at all: the baseline versions run
# For each, nmt --version, a 20-step nmt train of a tiny model on 300 pairs of
# data/mar.txt (GRU with additive attention, then LSTM with local-predictive attention,
# so every dispatched kernel runs), nmt translate (greedy and beam) and nmt eval must
# succeed, and the validation loss must agree with the same training run natively (to
# 1e-3: the kernels' versions sum in different orders, a wrong one is far off).
#
# Then the control, which shows the check can fail: ./nmt-native (make native,
# -march=native) translates under Nehalem and must die with SIGILL (exit 132), as it
# does on a real CPU without AVX, wherever this CPU has AVX. (nmt --version alone runs
# no vector code and would pass.)
#
# --arm64 also cross-builds nmt for arm64 (make CC=aarch64-linux-gnu-gcc
# CXX=aarch64-linux-gnu-g++, in build-arm64/) and runs the same commands, and the same
# loss comparison, under qemu-aarch64; it needs the cross compilers and the arm64
# libraries (sh scripts/install-deps.sh --arm64), and fetches arm64's SentencePiece with
# apt-get download the first time (spm_arm64 below says why).
#
# Needs qemu-user (sh scripts/install-deps.sh --qemu). Nothing here depends on timing.
# About 20 s on two cores once built (make nmt native, and the arm64 build, are about
# 25 s each). Exit 1 if any check failed.
set -u
cd "$(dirname "$0")/../.."
ARM64=0
for arg in "$@"; do
    case $arg in
    --arm64) ARM64=1 ;;
    *) echo "usage: sh scripts/ci/check_portable.sh [--arm64]" >&2; exit 2 ;;
    esac
done
for q in qemu-x86_64 $([ $ARM64 = 1 ] && echo qemu-aarch64); do
    command -v $q >/dev/null 2>&1 ||
        { echo "check_portable: $q not installed; sh scripts/install-deps.sh --qemu" >&2; exit 1; }
done
make -s -j2 nmt native || { echo "check_portable: make nmt native failed" >&2; exit 1; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# nmt may restart itself with another OpenBLAS kernel (src/kernels/blas.c): qemu-user would let
# the restarted process run on the host CPU, unemulated.
export NMT_NO_KERNEL_SELECT=1
passed=0; failed=0
# check NAME COMMAND... — one check; a failure shows the end of $T/err, without qemu's
# warnings about the CPU model's features its emulator lacks (pcid, x2apic, ...).
check() {
    name=$1
    shift
    if "$@"; then
        passed=$((passed + 1)); echo "  ok $name"
    else
        failed=$((failed + 1)); echo "FAIL $name"
        [ -s "$T/err" ] && sed 's/^/     | /' "$T/err" | grep -v 'TCG doesn.t support' | tail -n 5
    fi
}

awk 'NR % 97 == 0' data/mar.txt | head -n 300 >"$T/train.tsv"
cut -f1 "$T/train.tsv" | head -n 20 >"$T/src.txt"
# tiny.json NAME — a 20-step run writing to $T/NAME.
tiny() {
    cat >"$T/$1.json" <<EOF
{
  "data": {"train": "$T/train.tsv"},
  "model": {"embed": 16, "hidden": 16},
  "train": {"batch_size": 16, "epochs": 2, "max_steps": 20, "threads": 1, "log_every": 10,
            "checkpoint_every": 0, "validate_every": 20, "valid_bleu_max": 0},
  "output": {"dir": "$T/$1"}
}
EOF
}
valid_loss() { sed -n 's/.*"event":"validation".*"valid_loss":\([0-9.e+-]*\).*/\1/p' "$1/train.log" | tail -n 1; }
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= 1e-3 * (a < 0 ? -a : a > 1 ? a : 1)) }'; }

# run_suite LABEL RUNNER... — the commands, each as RUNNER nmt ARGS; LABEL names the run
# directories. The native run of the same training (label "host") is the reference.
CELLS="gru:bahdanau lstm:local_predictive"
run_suite() {
    label=$1
    shift
    check "$label: nmt --version" sh -c '"$@" --version >"$0/out" 2>"$0/err" && grep -q "^nmt " "$0/out"' "$T" "$@"
    for cell_attn in $CELLS; do
        cell=${cell_attn%%:*}; attn=${cell_attn#*:}; run=$label-$cell
        tiny "$run"
        check "$label: nmt train ($cell, $attn)" sh -c '"$@" >"$0/out" 2>"$0/err" && [ -s "$0/'"$run"'/model.bin" ]' \
            "$T" "$@" train "$T/$run.json" --quiet --set model.cell="$cell" --set model.attention="$attn"
        check "$label: nmt translate ($cell)" sh -c '"$@" <"$0/src.txt" >"$0/'"$run"'.greedy" 2>"$0/err" &&
            [ "$(wc -l <"$0/'"$run"'.greedy")" -eq 20 ]' "$T" "$@" translate "$T/$run/model.bin"
        check "$label: nmt translate --beam 5 ($cell)" sh -c '"$@" <"$0/src.txt" >"$0/'"$run"'.beam" 2>"$0/err" &&
            [ "$(wc -l <"$0/'"$run"'.beam")" -eq 20 ]' "$T" "$@" translate "$T/$run/model.bin" --beam 5
        check "$label: nmt eval ($cell)" sh -c '"$@" >"$0/out" 2>"$0/err" && grep -q "^BLEU = " "$0/out"' \
            "$T" "$@" eval "$T/$run/model.bin" "$T/$run/valid.tsv"
        if [ "$label" != host ]; then
            a=$(valid_loss "$T/host-$cell"); b=$(valid_loss "$T/$run")
            : >"$T/err"
            check "$label: validation loss $b, natively $a ($cell)" close "$a" "$b"
        fi
    done
}

echo "check_portable: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
run_suite host ./nmt
for cpu in Haswell Nehalem; do
    run_suite "$cpu" qemu-x86_64 -cpu "$cpu" ./nmt
done

# The control: a -march=native build is caught.
if grep -qw avx /proc/cpuinfo; then
    echo "Show me." >"$T/one.txt"
    qemu-x86_64 -cpu Nehalem ./nmt-native translate "$T/host-gru/model.bin" <"$T/one.txt" >/dev/null 2>"$T/err"
    rc=$?
    check "control: ./nmt-native (-march=native) under Nehalem dies with SIGILL (exit $rc, want 132)" [ "$rc" -eq 132 ]
else
    echo "  (control skipped: this CPU has no AVX, so -march=native runs under Nehalem)"
fi

# SentencePiece for arm64. Debian 12's libsentencepiece0 and libsentencepiece-dev are
# not Multi-Arch: same, so their arm64 packages cannot be installed beside the host's:
# apt would remove the amd64 ones, which ./nmt needs. Their files are unpacked instead,
# not installed, into build-arm64/sentencepiece (apt-get download and dpkg-deb -x, as
# any user, once), and the cross build is pointed there, with an rpath through which
# the arm64 loader under qemu-aarch64 finds the library.
SPM_ARM64=$(pwd)/build-arm64/sentencepiece
spm_arm64() {
    [ -e "$SPM_ARM64/usr/lib/aarch64-linux-gnu/libsentencepiece.so" ] && return 0
    rm -rf "$SPM_ARM64"
    mkdir -p "$SPM_ARM64/debs" &&
        (cd "$SPM_ARM64/debs" && apt-get download libsentencepiece0:arm64 libsentencepiece-dev:arm64) || return 1
    for deb in "$SPM_ARM64"/debs/*.deb; do
        dpkg-deb -x "$deb" "$SPM_ARM64" || return 1
    done
}

if [ $ARM64 = 1 ]; then
    # Cross-built against the arm64 libraries of dpkg --add-architecture arm64, which also
    # puts arm64's loader at /lib/ld-linux-aarch64.so.1, where qemu-aarch64 finds it.
    # (Not -L /usr/aarch64-linux-gnu, the cross toolchain's libc: nmt hung there.)
    lib=$SPM_ARM64/usr/lib/aarch64-linux-gnu
    if spm_arm64 >"$T/err" 2>&1 &&
        make -s -j2 CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ PKG_CONFIG=aarch64-linux-gnu-pkg-config \
            SPM_CFLAGS="-I$SPM_ARM64/usr/include" SPM_LIBS="-L$lib -Wl,-rpath,$lib -lsentencepiece -lsentencepiece_train" \
            BUILD=build-arm64 NMT_BIN=nmt-arm64 nmt-arm64 >"$T/err" 2>&1; then
        check "arm64: cross build" true
        run_suite arm64 qemu-aarch64 ./nmt-arm64
        # The unpacked arm64 SentencePiece at work: trained, stored, applied, decoded.
        tiny arm64-spm
        check "arm64: nmt train and translate with data.tokenizer spm" sh -c 'qemu-aarch64 ./nmt-arm64 train "$0/arm64-spm.json" \
            --quiet --set data.tokenizer=spm --set data.spm_vocab_size=300 >"$0/out" 2>"$0/err" &&
            qemu-aarch64 ./nmt-arm64 translate "$0/arm64-spm/model.bin" <"$0/src.txt" >"$0/spm.out" 2>"$0/err" &&
            [ "$(wc -l <"$0/spm.out")" -eq 20 ] && ! grep -q "▁" "$0/spm.out"' "$T"
    else
        check "arm64: cross build" false
    fi
fi
echo "check_portable: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
