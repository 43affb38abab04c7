#!/bin/sh
# Debian's ibverbs-utils (ibv_devices, ibv_devinfo, built against rdma-core 44) run unchanged on
# the emulated libibverbs.so.1 and print what kernel rxe prints in scripts/rxe-vm.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v ibv_devinfo >/dev/null 2>&1 || { echo "ibv_devinfo not installed: skipped"; exit 77; }
export RDMAEMU_FABRIC="$s/fixtures/rxe-ref.fabric"
export LD_LIBRARY_PATH="$b/emu/verbs/.libs:$b/emu/.libs"
# An ASan build of the library needs the ASan runtime first in a program that lacks it.
asan=$(ldd "$b/emu/verbs/.libs/libibverbs.so.1" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
	export LD_PRELOAD="$asan"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
fail=0
out=$(mktemp) || exit 99
trap 'rm -f "$out"' EXIT

ibv_devices >"$out" 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "ibv_devices: exit $rc"; cat "$out"; fail=1; }
grep -Eq '^[[:space:]]+rxe0[[:space:]]+000000fffe000101$' "$out" || { echo "ibv_devices: no rxe0 line"; cat "$out"; fail=1; }
grep -Eq '^[[:space:]]+rxe1[[:space:]]+000000fffe000102$' "$out" || { echo "ibv_devices: no rxe1 line"; fail=1; }

ibv_devinfo -v -d rxe0 >"$out" 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "ibv_devinfo: exit $rc"; cat "$out"; fail=1; }
# Lines as the VM prints them (see probes/VM-CHECKS.md); tabs collapsed to one space.
tr -s '\t' ' ' <"$out" >"$out.n"
while IFS= read -r want; do
	grep -Fqx -- "$want" "$out.n" || { echo "ibv_devinfo: missing line: '$want'"; fail=1; }
done <<'LINES'
hca_id: rxe0
 transport: InfiniBand (0)
 fw_ver: 0.0.0
 node_guid: 0000:00ff:fe00:0101
 sys_image_guid: 0000:00ff:fe00:0101
 vendor_id: 0xffffff
 vendor_part_id: 0
 hw_ver: 0x0
 phys_port_cnt: 1
 max_mr_size: 0xffffffffffffffff
 page_size_cap: 0xfffff000
 max_qp: 1048560
 max_qp_wr: 1048576
 device_cap_flags: 0x01223c76
 max_sge: 32
 max_cqe: 32767
 max_mr: 524287
 max_pd: 1048576
 max_qp_rd_atom: 128
 max_res_rd_atom: 258048
 atomic_cap: ATOMIC_HCA (1)
 max_mw: 524287
 max_total_mcast_qp_attach: 458752
 max_ah: 32767
 max_srq: 917503
 max_srq_sge: 27
 max_pkeys: 64
 local_ca_ack_delay: 15
 device_cap_flags_ex: 0x1223C76
 num_comp_vectors: 2
 port: 1
 state: PORT_ACTIVE (4)
 max_mtu: 4096 (5)
 active_mtu: 1024 (3)
 sm_lid: 0
 port_lid: 0
 link_layer: Ethernet
 max_msg_sz: 0x800000
 port_cap_flags: 0x00010000
 max_vl_num: 1 (1)
 pkey_tbl_len: 1
 gid_tbl_len: 1024
 active_width: 1X (1)
 active_speed: 2.5 Gbps (1)
 phys_state: LINK_UP (5)
 GID[ 0]: fe80::ff:fe00:101, RoCE v2
 GID[ 1]: ::ffff:192.0.2.1, RoCE v2
LINES
rm -f "$out.n"

# ibv_devinfo -l lists both; an unknown device is an error
ibv_devinfo -l >"$out" 2>&1 || { echo "ibv_devinfo -l failed"; fail=1; }
grep -q '^2 HCAs found:' "$out" || { echo "ibv_devinfo -l:"; cat "$out"; fail=1; }
ibv_devinfo -d nosuch >/dev/null 2>&1 && { echo "ibv_devinfo -d nosuch succeeded"; fail=1; }
[ $fail -eq 0 ] && echo "ibv_devices, ibv_devinfo: all lines as on kernel rxe"
exit $fail
