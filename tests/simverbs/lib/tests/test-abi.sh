#!/bin/sh
# simverbs' libibverbs.so.1 has the ABI of the installed rdma-core library:
# the committed version script matches one regenerated from the system
# library, the SONAME is libibverbs.so.1, every default-version symbol is
# exported with its version node, and it does not link the real libibverbs.
set -u
# An AddressSanitizer tree's library imports the runtime's symbols, which
# the provider libraries' check below cannot resolve.
sh "${TEST_SRCDIR:-.}/tests/lib/asan_tree.sh" &&
    { echo "SKIP: an AddressSanitizer tree: its library needs the sanitizer's runtime"; exit 77; }
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

# real provider libraries (perftest links libmlx5 and libefa) resolve every
# symbol they import from libibverbs against simverbs
libdir=$(dirname "$lib")
for prov in libmlx5.so.1 libefa.so.1 librdmacm.so.1; do
  path=/usr/lib/x86_64-linux-gnu/$prov
  [ -r "$path" ] || continue
  out=$(LD_LIBRARY_PATH=$libdir ldd -r "$path" 2>&1)
  if ! echo "$out" | grep -q "libibverbs.so.1 => $libdir"; then
    echo "FAIL: $prov does not load simverbs from $libdir"; echo "$out"; fail=1
  elif echo "$out" | grep -q "undefined symbol"; then
    echo "FAIL: $prov has unresolved symbols with simverbs:"; echo "$out" | grep "undefined symbol"; fail=1
  else
    echo "$prov loads against simverbs"
  fi
done

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libibverbs.so.1 ] || { echo "FAIL: SONAME is '$soname'"; fail=1; }
if readelf -d "$lib" | grep -q 'NEEDED.*libibverbs'; then
  echo "FAIL: simverbs links the real libibverbs"; fail=1
fi
exit $fail
