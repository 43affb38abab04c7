#!/bin/sh
# Verbs AH / QP destination MACs under rdmaemud: probes/verbs/verbs_probe_ahmac (built like
# an application) runs as a process of host A of fixtures/rxe-ref2.fabric. Its ARP goes
# through the daemon's neighbour layer (NEIGH_RESOLVE), which owns the host's tables and the
# wire. Its lines must be those of the two reference VMs (probes/VM-CHECKS.md): create_ah
# to B OK twice, towards nobody ETIMEDOUT after ~1 s, RC RTR towards nobody ETIMEDOUT with the
# QP left in INIT, towards B OK with the route's hop limit 64; and the capture must hold one
# ARP request for B and its reply (the second create_ah uses the daemon's cache), and the
# process asks the daemon for B's MAC once (the second AH and the RTR use what it kept).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
probe="$b/probes/verbs/verbs_probe_ahmac"
keep="$b/emu/daemon/tests/neigh_keep"
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
# A flush of A's neighbour table in the daemon moves A's generation: the process asks again
# for B's MAC (generation 2 now) and the daemon ARPs again; a flush of an unknown host is
# ENOENT (2). The flush is also `rdmaemu daemon neigh-flush`: 0 entries after the above.
"$rdmaemu" daemon start --fabric "$ref2" --pcap "$t/cap2" || { echo "daemon start failed"; exit 1; }
timeout 60 env RDMAEMU_TRACE=neighlink "$rdmaemu" run --fabric "$ref2" --node A -- "$keep" \
	>"$t/keep" 2>&1 || { echo "FAIL: neigh_keep exit $?"; fail=1; }
cat "$t/keep"
cat >"$t/want" <<'WANT'
rdmaemu: neighlink: asked: 02:00:00:00:02:02 (generation 1)
create_ah B first -> OK errno=0
rdmaemu: neighlink: kept 02:00:00:00:02:02 (generation 1)
create_ah B second -> OK errno=0
neigh flush A -> 1 errno=0
neigh flush nosuchhost -> -1 errno=2
rdmaemu: neighlink: asked: 02:00:00:00:02:02 (generation 2)
create_ah B after the flush -> OK errno=0
WANT
if ! diff -u "$t/want" "$t/keep"; then
	echo "FAIL: neigh_keep's lines"
	fail=1
fi
out=$("$rdmaemu" daemon neigh-flush A eth0)
[ "$out" = 1 ] || { echo "FAIL: rdmaemu daemon neigh-flush A eth0 printed '$out', want 1"; fail=1; }
"$rdmaemu" daemon neigh-flush A nosuchdev 2>"$t/err" && { echo "FAIL: neigh-flush nosuchdev"; fail=1; }
grep -q "^rdmaemu: neigh-flush A nosuchdev: No such file or directory$" "$t/err" ||
	{ echo "FAIL: neigh-flush nosuchdev said:"; cat "$t/err"; fail=1; }
"$rdmaemu" daemon stop >/dev/null 2>&1
if command -v tshark >/dev/null 2>&1; then
	req=$(tshark -r "$t/cap2-eth.pcap" -Y 'arp.opcode == 1 && arp.dst.proto_ipv4 == 192.0.2.66' 2>/dev/null | wc -l)
	[ "$req" -eq 2 ] || { echo "FAIL: $req ARP requests for B around the flush, want 2"; fail=1; }
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
