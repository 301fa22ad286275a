#!/bin/sh
# tent-run preloads the library it belongs to: the build tree's from the
# build tree, and after `make install DESTDIR=...` the staged library
# installed beside it. Each is checked in the memory map of the command, and
# ld.so prints nothing (a library it cannot preload is only its warning).
set -u
builddir=${TEST_BUILDDIR:-.}
sh "${TEST_SRCDIR:-.}/tests/lib/asan_tree.sh" &&
    { echo "SKIP: an AddressSanitizer tree: the shell is not instrumented and cannot load libtent"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*" >&2
    for f in "$tmp"/*.out "$tmp"/*.err; do [ -s "$f" ] && { echo "--- $f" >&2; cat "$f" >&2; }; done
    exit 1
}
export HOME="$tmp"
unset TENT_CONFIG TENT_LIBRARY

# maps_of TENT_RUN NAME: the command's own memory map, through TENT_RUN.
maps_of() {
    timeout 20 "$1" sh -c 'cat /proc/$$/maps' >"$tmp/$2.out" 2>"$tmp/$2.err" || fail "$1 exited with $?"
    [ -s "$tmp/$2.err" ] && fail "$1 printed on stderr"
    return 0
}

maps_of "$builddir/tent-run" build
lib=$(cd "$builddir/.libs" && pwd)/libtent.so.0
real=$(readlink -f "$lib")
grep -q " $real\$" "$tmp/build.out" || fail "build tree: $real is not mapped"
echo "ok: build tree's tent-run preloads $real"

stage=$tmp/stage
make -C "$builddir" install-exec DESTDIR="$stage" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "make install-exec DESTDIR=$stage"; }
installed=$(find "$stage" -path '*/bin/tent-run' -type f | head -n 1)
[ -n "$installed" ] || fail "no tent-run under $stage"
maps_of "$installed" installed
staged=$(find "$stage" -name 'libtent.so.0.*' -type f | head -n 1)
[ -n "$staged" ] || fail "no libtent.so.0.* under $stage"
grep -q " $staged\$" "$tmp/installed.out" || fail "installed: $staged is not mapped"
grep -q "$real" "$tmp/installed.out" && fail "installed tent-run preloads the build tree's library"
echo "ok: installed tent-run preloads $staged"

# A library that is not there is tent-run's error, not a run without tent.
TENT_LIBRARY=$tmp/missing/libtent.so.0 timeout 20 "$builddir/tent-run" true 2>"$tmp/missing.err"
rc=$?
[ "$rc" -eq 127 ] || fail "missing library: exit $rc, not 127"
grep -q "tent library not found: $tmp/missing/libtent.so.0" "$tmp/missing.err" || fail "missing library: message"
echo "ok: $(cat "$tmp/missing.err")"
exit 0
