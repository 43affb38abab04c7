#!/bin/sh
# infiniband-diags under `rdmaemu run` (through rdmaemud): the tools get the emulated
# libibumad.so.3 on the library path and query the subnet as host ib-b of fixtures/ib.fabric;
# in the host's sandbox ibstatus reads the generated sysfs; perfquery reads the daemon's port
# counters after an RC pingpong between two processes of ib-a.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v ibnetdiscover >/dev/null 2>&1 || { echo "infiniband-diags not installed: skipped"; exit 77; }
. "$s/emu/daemon/tests/daemon_test_env.sh"
ib=$(cd "$s/fixtures" && pwd)/ib.fabric

run() {
	timeout 60 "$rdmaemu" run --fabric "$ib" --node ib-b -- sh -c "$1" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: '$1': exit $rc"; cat "$t/err"; fail=1; }
}

run 'ibstat -p'
[ "$(cat "$t/out")" = 0x0002c90300000b01 ] || { echo "FAIL: ibstat -p:"; cat "$t/out"; fail=1; }
run 'smpquery nodedesc 2'
[ "$(cat "$t/out")" = "Node Description:.....................ib-a mlx5_0" ] ||
	{ echo "FAIL: smpquery nodedesc 2:"; cat "$t/out"; fail=1; }
run 'ibnetdiscover'
grep -q '^# Initiated from node 0002c90300000b00 port 0002c90300000b01$' "$t/out" ||
	{ echo "FAIL: ibnetdiscover from ib-b:"; cat "$t/out"; fail=1; }
[ "$(grep -c '^Ca	1 ' "$t/out")" = 3 ] && [ "$(grep -c '^Switch	36 ' "$t/out")" = 1 ] ||
	{ echo "FAIL: ibnetdiscover's nodes:"; cat "$t/out"; fail=1; }
if daemon_test_sandboxed "$ib" ib-b; then
	run 'ibstatus'
	grep -q '^	base lid:	 0x3$' "$t/out" && grep -q '^	rate:		 40 Gb/sec (4X QDR)$' "$t/out" ||
		{ echo "FAIL: ibstatus in the sandbox:"; cat "$t/out"; fail=1; }
else
	echo "no sandbox: ibstatus not checked"
fi

# perfquery answered by the daemon's PMAs: its wire carries every process's frames. Two
# ibv_rc_pingpong processes on ib-a (RDMAEMU_SHM=0: their loopback frames go through the
# daemon, which counts them at the port, sent and received), 5 exchanges of 4096 bytes at
# MTU 1024: 10 SENDs of 4 packets, (8 LRH + 12 BTH + 1024 + 4 ICRC) / 4 = 262 words each, and
# 10 ACKs of (8 + 12 + 4 AETH + 4) / 4 = 7 words: 50 packets, 10550 words, both ways.
if command -v ibv_rc_pingpong >/dev/null 2>&1; then
	daemon_test_ports 5600
	run 'perfquery -R 2 1'
	RDMAEMU_SHM=0 timeout 60 "$rdmaemu" run --fabric "$ib" --node ib-a -- \
		ibv_rc_pingpong -d mlx5_0 -p $port -n 5 -s 4096 >"$t/srv.out" 2>&1 &
	spid=$!
	i=0
	while :; do
		RDMAEMU_SHM=0 timeout 60 "$rdmaemu" run --fabric "$ib" --node ib-a -- \
			ibv_rc_pingpong -d mlx5_0 -p $port -n 5 -s 4096 127.0.0.1 >"$t/cli.out" 2>&1
		grep -q "^Couldn't connect" "$t/cli.out" && [ $i -lt 300 ] || break
		sleep 0.1; i=$((i + 1))
	done
	wait $spid
	grep -q '^5 iters in' "$t/cli.out" && grep -q '^5 iters in' "$t/srv.out" ||
		{ echo "FAIL: ibv_rc_pingpong on ib-a:"; cat "$t/srv.out" "$t/cli.out"; fail=1; }
	run 'perfquery 2 1'
	for f in PortXmitData:....................10550 PortRcvData:.....................10550 \
		 PortXmitPkts:....................50 PortRcvPkts:.....................50 \
		 'PortXmitDiscards:................0'; do
		grep -qx "$f" "$t/out" || { echo "FAIL: perfquery 2 1 after the pingpong: no $f"; cat "$t/out"; fail=1; }
	done
	# the frames stayed in ib-a's HCA: the switch's port towards it saw none
	run 'perfquery 1 1'
	grep -qx 'PortRcvPkts:.....................0' "$t/out" ||
		{ echo "FAIL: perfquery 1 1 after the pingpong:"; cat "$t/out"; fail=1; }
	# -r: the answer before the reset, then zeros
	run 'perfquery -r 2 1'
	grep -qx 'PortXmitPkts:....................50' "$t/out" ||
		{ echo "FAIL: perfquery -r 2 1:"; cat "$t/out"; fail=1; }
	# PortCounters' Set cleared the data and packet counters the extended ones share, not
	# the unicast counters only PortCountersExtended has
	run 'perfquery -x 2 1'
	grep -qx 'PortXmitPkts:....................0' "$t/out" && grep -qx 'PortUnicastRcvPkts:..............50' "$t/out" ||
		{ echo "FAIL: perfquery -x 2 1 after the reset:"; cat "$t/out"; fail=1; }
else
	echo "ibverbs-utils not installed: perfquery under the daemon not checked"
fi
exit $fail
