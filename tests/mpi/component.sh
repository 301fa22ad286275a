#!/usr/bin/env bash
# ompi_info lists the component from the build tree, and every knob of
# tent's table marked for MCA is a btl_tent_<key> parameter with the
# table's default (the knob table, not a list typed twice).
set -u
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "ompi_info"

ompi_info | grep -q "MCA btl: tent " || fail "ompi_info does not list the tent BTL"
ompi_info --param btl tent --level 9 --parsable >"$MPI_TMP/params" || fail "ompi_info --param btl tent failed"

n=0
while IFS=$'\t' read -r key default; do
    n=$((n + 1))
    grep -qxF "mca:btl:tent:param:btl_tent_$key:value:$default" "$MPI_TMP/params" ||
        fail "btl_tent_$key missing or its default is not '$default': $(grep ":btl_tent_$key:value" "$MPI_TMP/params")"
    grep -q "^mca:btl:tent:param:btl_tent_$key:help:." "$MPI_TMP/params" || fail "btl_tent_$key has no help"
done < <(sed -n 's/^TENT_KNOB([A-Za-z]*, "\([a-z_0-9]*\)", "[a-z]*", [A-Za-z]*, "\([^"]*\)", [^,]*, [^,]*, "[^"]*", true,.*/\1\t\2/p' \
    "$TEST_SRCDIR/src/common/knobs.def")
[ "$n" -ge 10 ] || fail "found only $n MCA knobs in knobs.def"
# Open MPI's own per-BTL parameters, with the component's defaults.
for p in eager_limit max_send_size rdma_pipeline_send_length rdma_pipeline_frag_size exclusivity flags; do
    grep -q "^mca:btl:tent:param:btl_tent_$p:value:" "$MPI_TMP/params" || fail "btl_tent_$p missing"
done
echo "ok: ompi_info lists tent and $n knob parameters"
