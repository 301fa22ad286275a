#!/bin/bash
# Unmodified ibv_devices and ibv_devinfo -v see the simulated HCAs: the
# default two, a count, a list of names; one active RoCE v2 port each with
# its own ::ffff:127.x.y.z GID; and a port downed from the environment.
. "$(dirname "$0")/lib.sh"
skip_in_asan_tree "ibverbs-utils"
skip_unless_installed ibv_devices ibv_devinfo
require_simverbs

out=$SV_TMP/out
run() {
    local rc=0
    timeout -k 2 10 "$SV_RUN" "$@" >"$out" 2>&1 || rc=$?
    [ "$rc" -eq 0 ] || { cat "$out"; fail "$* exited $rc (124 = timed out)"; }
}
devices_listed() { awk '$1 ~ /^mlx5_|^[a-z]/ && NF == 2 && $1 != "device" {print $1}' "$out" | paste -sd, -; }

run -- ibv_devices
[ "$(devices_listed)" = "mlx5_0,mlx5_1" ] || { cat "$out"; fail "default devices are not mlx5_0,mlx5_1"; }

run --devices 4 -- ibv_devices
[ "$(devices_listed)" = "mlx5_0,mlx5_1,mlx5_2,mlx5_3" ] || { cat "$out"; fail "--devices 4"; }

SIMVERBS_DEVICES=rail_a,rail_b,rail_c run -- ibv_devices
[ "$(devices_listed)" = "rail_a,rail_b,rail_c" ] || { cat "$out"; fail "SIMVERBS_DEVICES names"; }

# ibv_devinfo -v: every port active, Ethernet (RoCE), GIDs distinct IPv4-mapped loopback addresses.
run -- ibv_devinfo -v
[ "$(grep -c 'hca_id:' "$out")" -eq 2 ] || { cat "$out"; fail "ibv_devinfo -v does not show two HCAs"; }
[ "$(grep -c 'state:.*PORT_ACTIVE' "$out")" -eq 2 ] || { cat "$out"; fail "ports not PORT_ACTIVE"; }
[ "$(grep -c 'link_layer:.*Ethernet' "$out")" -eq 2 ] || { cat "$out"; fail "link layer is not Ethernet"; }
gids=$(grep -oE 'GID\[ *0\]:[[:space:]]+[0-9a-f:.]+' "$out" | awk '{print $NF}')
[ "$(echo "$gids" | wc -l)" -eq 2 ] || { cat "$out"; fail "not one GID[0] per port"; }
[ "$(echo "$gids" | sort -u | wc -l)" -eq 2 ] || fail "ports share a GID: $gids"
for g in $gids; do
    # ::ffff:127.x.y.z, printed either dotted or as hex groups ::ffff:7fxx:xxxx.
    echo "$g" | grep -qiE '^(0000:){5}ffff:7f[0-9a-f]{2}:[0-9a-f]{4}$|^::ffff:(127\.[0-9.]+|7f[0-9a-f]{2}:[0-9a-f]{4})$' ||
        fail "GID $g is not an IPv4-mapped loopback address"
done

# A fault set at start: the port reports IBV_PORT_DOWN to a query.
SIMVERBS_FAULTS="port-down mlx5_1" run -- ibv_devinfo -d mlx5_1
grep -q 'state:.*PORT_DOWN' "$out" || { cat "$out"; fail "SIMVERBS_FAULTS port-down not reported by ibv_devinfo"; }
SIMVERBS_FAULTS="port-down mlx5_1" run -- ibv_devinfo -d mlx5_0
grep -q 'state:.*PORT_ACTIVE' "$out" || { cat "$out"; fail "a fault on mlx5_1 changed mlx5_0"; }

echo "PASS: devices"
