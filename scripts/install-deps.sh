#!/bin/sh
# Installs the Debian packages nmt builds against (compiler, OpenBLAS, utf8proc, cJSON).
# Uses sudo when not run as root.
set -e
PACKAGES="gcc make libc6-dev libopenblas-dev libutf8proc-dev libcjson-dev"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
missing=
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
