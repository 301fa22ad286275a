#!/bin/sh
# Every manual page in man/ formats without a single groff warning.
set -u
srcdir=${TEST_SRCDIR:-.}
command -v groff >/dev/null 2>&1 || { echo "groff not installed"; exit 77; }
status=0
count=0
for page in "$srcdir"/man/*.[1-9]; do
    [ -f "$page" ] || continue
    count=$((count + 1))
    out=$(LC_ALL=C.UTF-8 groff -man -ww -z "$page" 2>&1)
    if [ -n "$out" ]; then
        echo "FAIL: groff -man -ww -z $page:"
        echo "$out"
        status=1
    else
        echo "ok: $page"
    fi
done
if [ "$count" -lt 3 ]; then
    echo "FAIL: expected at least tent(7), tent.conf(5) and tent-run(1) in $srcdir/man"
    status=1
fi
exit $status
