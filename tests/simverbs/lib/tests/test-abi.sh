#!/bin/sh
# simverbs' libibverbs.so.1 has the ABI of the installed rdma-core library:
# the committed version script matches one regenerated from the system
# library, the SONAME is libibverbs.so.1, every default-version symbol is
# exported with its version node, and it does not link the real libibverbs.
set -u
src=${TEST_SRCDIR:-.}/tests/simverbs/lib
lib=${TEST_BUILDDIR:-.}/tests/simverbs/lib/.libs/libibverbs.so.1
sys=/usr/lib/x86_64-linux-gnu/libibverbs.so.1
fail=0
[ -r "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }

if [ -r "$sys" ]; then
  tmp=$(mktemp) || exit 1
  trap 'rm -f "$tmp" "$tmp.want" "$tmp.have"' EXIT
  "$src/gen-version-script.sh" "$sys" > "$tmp"
  if ! diff -u "$src/libibverbs.map" "$tmp"; then
    echo "FAIL: libibverbs.map differs from the installed library's symbols (regenerate it)"
    fail=1
  fi
  objdump -T "$sys" | awk 'NF > 3 && $2=="g" && !/\*UND\*/ && $(NF-1) ~ /^IBVERBS_/ && $(NF-1) != $NF {print $(NF-1), $NF}' | sort > "$tmp.want"
  objdump -T "$lib" | awk 'NF > 3 && $2=="g" && !/\*UND\*/ && $(NF-1) ~ /^IBVERBS_/ && $(NF-1) != $NF {print $(NF-1), $NF}' | sort > "$tmp.have"
  missing=$(comm -23 "$tmp.want" "$tmp.have")
  if [ -n "$missing" ]; then
    echo "FAIL: symbols missing from simverbs:"; echo "$missing"; fail=1
  fi
  echo "exported: $(wc -l < "$tmp.have") of $(wc -l < "$tmp.want") default-version symbols"
else
  echo "system libibverbs not installed: skipping the regeneration diff"
fi

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libibverbs.so.1 ] || { echo "FAIL: SONAME is '$soname'"; fail=1; }
if readelf -d "$lib" | grep -q 'NEEDED.*libibverbs'; then
  echo "FAIL: simverbs links the real libibverbs"; fail=1
fi
exit $fail
