#!/bin/sh
# The architecture, checked: src/ is in folders by layer (src/README.md), and a file may
# use only its own folder and the folders below it. Two checks:
#   includes  every `#include "FOLDER/NAME.h"` in src/ names an existing header of its own
#             folder or a lower one, and the files' include graph (a .c and its .h taken as
#             one node) has no loop;
#   calls     (when the objects are built: BUILD, default build/) every symbol an object
#             uses from another nmt object is defined in its own folder or a lower one.
# Prints each violation and exits 1 if there is any; make test runs it.
#
#   sh scripts/ci/check_layers.sh [BUILD]
set -e
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
# Bottom to top: a folder may use the folders before it in this list.
LAYERS="base io kernels layers text data models files decode eval train serve cli"
rank() {
    r=0
    for l in $LAYERS; do
        [ "$l" = "$1" ] && { echo $r; return; }
        r=$((r + 1))
    done
    echo -1
}
bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every folder of src/ is a layer of the list, and every source file is in one.
for d in src/*; do
    [ "$d" = src/README.md ] && continue
    [ -d "$d" ] || { echo "check_layers: $d: a file directly in src/, outside every layer folder"; bad=1; continue; }
    [ "$(rank "${d#src/}")" -ge 0 ] || { echo "check_layers: $d: a folder that is not in the layer list ($LAYERS)"; bad=1; }
done

# includes
for f in src/*/*.c src/*/*.h src/*/*.cc; do
    folder=${f#src/}; folder=${folder%%/*}
    from=$(rank "$folder")
    node=${f%.*}
    grep -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' "$f" | sed 's/.*"\(.*\)"/\1/' |
    while read -r inc; do
        case $inc in
        */*) ;;
        *) echo "check_layers: $f includes \"$inc\": name its folder (\"FOLDER/$inc\")"; echo x >>"$tmp/bad"; continue ;;
        esac
        if [ ! -f "src/$inc" ]; then
            echo "check_layers: $f includes \"$inc\", which is not in src/"; echo x >>"$tmp/bad"; continue
        fi
        to=$(rank "${inc%%/*}")
        if [ "$to" -gt "$from" ]; then
            echo "check_layers: $f ($folder) includes $inc (${inc%%/*}), a higher layer"; echo x >>"$tmp/bad"
        fi
        target=src/${inc%.h}
        [ "$target" = "$node" ] || echo "$node $target" >>"$tmp/edges"
    done
done
[ -s "$tmp/bad" ] && bad=1
if [ -s "$tmp/edges" ] && ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loops"; then
    echo "check_layers: the includes form a loop:"
    sed 's/^tsort: /  /' "$tmp/loops"
    bad=1
fi

# calls: the symbols each object takes from the others
if ls "$BUILD"/*/*.o >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
    for o in "$BUILD"/*/*.o; do
        nm -g --defined-only "$o" 2>/dev/null | awk -v o="$o" '$2 ~ /^[TDBR]$/ {print $3, o}'
    done | sort >"$tmp/defined"
    for o in "$BUILD"/*/*.o; do
        nm -u "$o" 2>/dev/null | awk -v o="$o" '{print $NF, o}'
    done | sort >"$tmp/used"
    join "$tmp/used" "$tmp/defined" | while read -r sym user definer; do
        uf=${user#"$BUILD"/}; uf=${uf%%/*}
        df=${definer#"$BUILD"/}; df=${df%%/*}
        if [ "$(rank "$df")" -gt "$(rank "$uf")" ]; then
            echo "check_layers: $user ($uf) calls $sym of $definer ($df), a higher layer"; echo x >>"$tmp/badcalls"
        fi
    done
    [ -s "$tmp/badcalls" ] && bad=1
    checked="includes and calls"
else
    checked="includes (no objects in $BUILD/: calls not checked)"
fi
if [ $bad = 0 ]; then
    echo "check_layers: $checked point down the layers: $LAYERS"
else
    exit 1
fi
