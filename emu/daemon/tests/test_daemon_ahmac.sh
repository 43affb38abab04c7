#!/bin/sh
# Verbs AH / QP destination MACs under rdmaemud: emu/verbs/probe/verbs_probe_ahmac (built like
# an application) runs as a process of host A of fixtures/rxe-ref2.fabric. Its ARP goes
# through the daemon's neighbour layer (NEIGH_RESOLVE), which owns the host's tables and the
# wire. Its lines must be those of the two reference VMs (emu/verbs/VM-CHECKS.md): create_ah
# to B OK twice, towards nobody ETIMEDOUT after ~1 s, RC RTR towards nobody ETIMEDOUT with the
# QP left in INIT, towards B OK with the route's hop limit 64; and the capture must hold one
# ARP request for B and its reply (the second create_ah uses the daemon's cache), and the
# process asks the daemon for B's MAC once (the second AH and the RTR use what it kept).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
probe="$b/emu/verbs/probe/verbs_probe_ahmac"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE
ref2="$s/fixtures/rxe-ref2.fabric"
"$rdmaemu" daemon start --fabric "$ref2" --pcap "$t/cap" || { echo "daemon start failed"; exit 1; }
timeout 60 env RDMAEMU_TRACE=neighlink "$rdmaemu" run --fabric "$ref2" --node A -- "$probe" \
	>"$t/out" 2>&1
rc=$?
"$rdmaemu" daemon stop >/dev/null 2>&1
cat "$t/out"
[ $rc -eq 0 ] || { echo "FAIL: probe exit $rc"; fail=1; }
grep -v '^rdmaemu: neighlink: ' "$t/out" | sed -E 's/ ms=[0-9]+$//' >"$t/lines"
cat >"$t/want" <<'WANT'
create_ah B 192.0.2.66 -> OK errno=0
create_ah B again -> OK errno=0
create_ah nobody 192.0.2.70 -> NULL errno=110
modify_qp RTR nobody 192.0.2.71 -> 110 errno=110
query_qp nobody 192.0.2.71: state=1 hop_limit=0
modify_qp RTR B 192.0.2.66 -> 0 errno=0
query_qp B 192.0.2.66: state=2 hop_limit=64
WANT
if ! diff -u "$t/want" "$t/lines"; then
	echo "FAIL: the probe's lines differ from the reference VMs'"
	fail=1
fi
# B's MAC: asked once, then kept by the process for the second AH and the RTR (the host's
# neighbour generation stays 1: nothing changed); the failures are never kept
grep '^rdmaemu: neighlink: ' "$t/out" >"$t/neigh"
cat >"$t/want" <<'WANT'
rdmaemu: neighlink: asked: 02:00:00:00:02:02 (generation 1)
rdmaemu: neighlink: kept 02:00:00:00:02:02 (generation 1)
rdmaemu: neighlink: kept 02:00:00:00:02:02 (generation 1)
WANT
if ! diff -u "$t/want" "$t/neigh"; then
	echo "FAIL: NEIGH_RESOLVE round trips (RDMAEMU_TRACE=neighlink)"
	fail=1
fi
# the timeouts take about a second of real time (the daemon's clock is the real one)
ms=$(awk '/nobody 192.0.2.70/ { sub(/.*ms=/, ""); print }' "$t/out")
if [ -z "$ms" ] || [ "$ms" -lt 1000 ] || [ "$ms" -gt 3000 ]; then
	echo "FAIL: create_ah towards nobody took '$ms' ms, want 1000..3000"
	fail=1
fi
if command -v tshark >/dev/null 2>&1; then
	req=$(tshark -r "$t/cap-eth.pcap" -Y 'arp.opcode == 1 && arp.dst.proto_ipv4 == 192.0.2.66' 2>/dev/null | wc -l)
	rep=$(tshark -r "$t/cap-eth.pcap" -Y 'arp.opcode == 2 && arp.src.proto_ipv4 == 192.0.2.66' 2>/dev/null | wc -l)
	if [ "$req" -ne 1 ] || [ "$rep" -ne 1 ]; then
		echo "FAIL: ARP for B: $req requests, $rep replies in the capture, want 1 and 1"
		fail=1
	fi
fi
exit $fail
