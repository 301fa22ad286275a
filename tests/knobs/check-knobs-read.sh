#!/bin/sh
# Every knob of the table (src/common/knobs.def) is read by running code:
# its Knob::<Name> appears somewhere outside the configuration machinery
# (the table itself, src/common/knob*, and the parsing and validation of
# src/config/), in the library, the C API, the interposer or the Open MPI
# component. src/config/log_setup.cpp counts: it hands the [log] knobs to
# the logger when an engine starts. A knob nobody reads is a promise that does
# nothing. The list comes from the table itself, so a knob added there is
# checked without touching this test.
set -u
srcdir=${TEST_SRCDIR:-.}
table="$srcdir/src/common/knobs.def"
[ -f "$table" ] || { echo "FAIL: no knob table at $table"; exit 1; }
# TENT_KNOB(Name, "key", ...): the enum name and the key.
knobs=$(sed -n 's/^TENT_KNOB(\([A-Za-z0-9_]*\), *"\([a-z0-9_]*\)".*/\1 \2/p' "$table")
[ -n "$knobs" ] || { echo "FAIL: no TENT_KNOB rows found in $table"; exit 1; }
files=$(find "$srcdir/src" "$srcdir/include" "$srcdir/interpose" "$srcdir/mpi" \
            \( -name '*.c' -o -name '*.cpp' -o -name '*.h' \) 2>/dev/null |
        grep -v -e '/src/common/knob' -e '/src/config/')
files=$(printf '%s\n' "$files"; find "$srcdir/src/config" -name 'log_setup.cpp')
status=0
count=0
echo "$knobs" | {
    while read -r name key; do
        count=$((count + 1))
        if echo "$files" | xargs grep -l -w -F "Knob::$name" >/dev/null 2>&1; then
            echo "ok: $key (Knob::$name)"
        else
            echo "FAIL: knob $key (Knob::$name) is read by no running code (outside the table and the parsing of src/config/)"
            status=1
        fi
    done
    echo "$count knobs checked"
    exit $status
}
