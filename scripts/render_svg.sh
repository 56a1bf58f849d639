#!/bin/sh
# render_svg.sh — screenshot an SVG to PNG with headless Chromium, to see what a
# browser makes of nmt's heatmaps and training plots (fonts, layout, clipping).
#
#   sh scripts/render_svg.sh FILE.svg [OUT.png]
#
# OUT.png defaults to FILE.png. The window is the SVG's own width x height (read from
# its root element), so the PNG shows exactly the document. Needs Chromium and fonts for
# the scripts shown; on Debian:
#   apt-get install -y chromium fonts-dejavu-core fonts-noto-core fonts-noto-cjk
# The test suite does not need any of this: tests check the SVG text itself.
# Exit codes: 0 written; 1 Chromium failed or wrote nothing; 2 usage or no Chromium.
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    echo "usage: sh scripts/render_svg.sh FILE.svg [OUT.png]" >&2
    exit 2
fi
in=$1
out=${2:-${in%.svg}.png}
if [ ! -r "$in" ]; then
    echo "render_svg: $in: cannot read" >&2
    exit 2
fi

browser=
for b in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
done
if [ -z "$browser" ]; then
    echo "render_svg: no chromium found; install it (Debian: apt-get install -y chromium fonts-noto-core fonts-noto-cjk)" >&2
    exit 2
fi

# width="W" height="H" of the first <svg ...> element; fractional sizes round up.
root=$(tr '\n' ' ' <"$in" | sed -n 's/^[^<]*\(<?xml[^>]*>[^<]*\)\{0,1\}<svg\([^>]*\)>.*/\2/p')
w=$(printf '%s' "$root" | sed -n 's/.* width="\([0-9.]*\)".*/\1/p')
h=$(printf '%s' "$root" | sed -n 's/.* height="\([0-9.]*\)".*/\1/p')
w=$(awk -v v="${w:-800}" 'BEGIN { printf "%d", (v == int(v)) ? v : int(v) + 1 }')
h=$(awk -v v="${h:-600}" 'BEGIN { printf "%d", (v == int(v)) ? v : int(v) + 1 }')

case $in in /*) abs=$in ;; *) abs=$(pwd)/$in ;; esac
case $out in /*) absout=$out ;; *) absout=$(pwd)/$out ;; esac
rm -f "$absout"
# A throwaway profile, so that no earlier session's state (or lock) gets in the way.
profile=$(mktemp -d) || exit 1
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$profile" --window-size="$w,$h" --screenshot="$absout" "file://$abs" \
    >"$profile/log" 2>&1
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$absout" ]; then
    echo "render_svg: $browser failed (exit $rc) for $in:" >&2
    tail -n 5 "$profile/log" >&2
    rm -rf "$profile"
    exit 1
fi
rm -rf "$profile"
echo "render_svg: wrote $out (${w}x${h})"
