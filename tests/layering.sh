#!/bin/sh
# No include runs up a layer: every #include "<folder>/..." in src/ names its
# own folder or a layer above it in src/README.md's table, and every folder of
# src/ has a row there. include/tent/ (the public C API) counts as capi's.
# The checker is first run on a small tree with planted faults, so a checker
# that stopped finding them fails too.
set -u
srcdir=${TEST_SRCDIR:-.}

# check ROOT: prints one line per fault; exit status 1 if there is any.
check() {
    root=$1
    [ -f "$root/src/README.md" ] || { echo "FAIL: $root/src/README.md is missing"; return 1; }
    status=0
    for dir in "$root"/src/*/; do
        name=$(basename "$dir")
        if ! grep -q "^| *[0-9][0-9]* *| *\`$name/\`" "$root/src/README.md"; then
            echo "FAIL: src/$name/ has no row in src/README.md's layer table"
            status=1
        fi
    done
    files=$(find "$root/src" -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.c' -o -name '*.def' \) | sort)
    [ -n "$files" ] || { echo "FAIL: no sources under $root/src"; return 1; }
    # shellcheck disable=SC2086 # one argument per file name (no spaces in src/)
    awk -v root="$root/src/" '
        FNR == 1 { file = substr(FILENAME, length(root) + 1) }
        FILENAME ~ /README\.md$/ {
            if ($0 ~ /^\| *[0-9]+ *\| *`[a-z_]+\/`/) {
                split($0, cell, "|")
                name = cell[3]; gsub(/[ `\/]/, "", name)
                rank[name] = cell[2] + 0
            }
            next
        }
        /^[ \t]*#[ \t]*include[ \t]*["<]/ {
            quoted = ($0 ~ /include[ \t]*"/)
            path = $0
            sub(/^[^"<]*["<]/, "", path); sub(/[">].*$/, "", path)
            if (index(path, "/") == 0) next  # same folder
            target = substr(path, 1, index(path, "/") - 1)
            if (target == "tent") target = "capi"
            if (!(target in rank)) {
                if (quoted) {
                    printf "FAIL: src/%s:%d includes \"%s\": %s/ is no layer of src/README.md\n", file, FNR, path, target
                    bad = 1
                }
                next
            }
            own = substr(file, 1, index(file, "/") - 1)
            if (!(own in rank)) next  # reported above as a folder without a row
            if (rank[target] > rank[own]) {
                printf "FAIL: src/%s:%d includes %s: %s (layer %d) is below %s (layer %d) in src/README.md\n", \
                    file, FNR, path, target, rank[target], own, rank[own]
                bad = 1
            }
        }
        END { exit bad }
    ' "$root/src/README.md" $files || status=1
    return $status
}

tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

# The checker finds planted faults: an include running up, a folder with no row.
mkdir -p "$tmp/src/common" "$tmp/src/engine" "$tmp/src/extra"
cp "$srcdir/src/README.md" "$tmp/src/README.md"
printf '#include "common/clock.h"\n#include "engine/engine.h"\n' >"$tmp/src/common/up.h"
printf '#include "common/up.h"\n#include <tent/tent.h>\n' >"$tmp/src/engine/down.cpp"
printf '#include "common/clock.h"\n' >"$tmp/src/extra/x.h"
out=$(check "$tmp") && { echo "FAIL: the checker passed a tree with planted faults"; exit 1; }
for want in 'src/common/up.h:2 includes engine/engine.h' 'src/extra/ has no row' \
        'src/engine/down.cpp:2 includes tent/tent.h'; do
    case $out in
    *"$want"*) ;;
    *) echo "FAIL: the checker missed a planted fault ($want); it said:"; echo "$out"; exit 1 ;;
    esac
done
case $out in
*down.cpp:1*) echo "FAIL: the checker flagged a downward include:"; echo "$out"; exit 1 ;;
esac

# The tree itself.
if check "$srcdir"; then
    echo "ok: every include in src/ runs down the layers of src/README.md"
    exit 0
fi
exit 1
