#!/usr/bin/env bash
# mca_btl_tent(7) lists exactly the knobs of the table marked for MCA, each
# as btl_tent_<key> with the table's default (the page must not drift from
# the table). Needs no Open MPI.
set -u
: "${TEST_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
python3 - "$TEST_SRCDIR/src/common/knobs.def" "$TEST_SRCDIR/man/mca_btl_tent.7" <<'PY'
import re, sys
table = {}
for m in re.finditer(r'TENT_KNOB\(\w+, "([a-z_0-9]+)", "[a-z]+", \w+, "([^"]*)", [^,]+, [^,]+, "[^"]*", (true|false),',
                     open(sys.argv[1]).read()):
    if m.group(3) == "true":
        table[m.group(1)] = m.group(2)
page = {}
for m in re.finditer(r'^\.BR btl_tent_(\S+) " \(default: (.*)\)"$', open(sys.argv[2]).read(), re.M):
    default = m.group(2).replace("\\-", "-").replace("\\e", "\\")
    page[m.group(1).replace("\\-", "-")] = "" if default == "\\(dqempty\\(dq" else default
if len(table) < 10:
    sys.exit("FAIL: only %d MCA knobs found in the table" % len(table))
bad = [k for k in table if k not in page] + [k for k in page if k not in table]
bad += ["%s (page %r, table %r)" % (k, page[k], table[k]) for k in table if k in page and page[k] != table[k]]
if bad:
    sys.exit("FAIL: mca_btl_tent(7) and the knob table disagree: " + ", ".join(bad))
print("ok: mca_btl_tent(7) lists the %d MCA knobs with their defaults" % len(table))
PY
