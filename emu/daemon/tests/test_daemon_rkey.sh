#!/bin/sh
# A process's memory is reachable from another process only through a valid rkey, within the
# registered bounds, with the rights registered (probes/verbs/rkey_probe.c): RDMA READ, WRITE
# and fetch-and-add with a bad rkey, past either end of the MR, or without the MR's right
# complete with IBV_WC_REM_ACCESS_ERR (10) and leave both QPs in ERR; the allowed ones succeed;
# the target's memory holds exactly what the allowed ones left. Both outputs are compared line
# for line with the probe's on kernel rxe in the reference VM (two processes on rxe0):
# fixtures/golden/rxe/rkey-probe-requester.out and rkey-probe-target.out. Here: two processes
# of host rxe-ref through the shared-memory rings and through the daemon (RDMAEMU_SHM=0), and
# two hosts of fixtures/rxe-ref2.fabric (the daemon's wire).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
prog=$(cd "$b/emu/daemon/tests" && pwd)/rkey_probe
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE
# below the other daemon tests' bands (10000 and up); the fixed ports of rdmacm-utils and
# rcopy (7174, 7471, 7491) are never the first three of a band here
daemon_test_ports 5600
golden=$s/fixtures/golden/rxe

# run NAME FABRIC TARGET_NODE REQUESTER_NODE
addr=127.0.0.1
run() {
	port=$((port + 1))
	timeout 120 "$rdmaemu" run --fabric "$2" --node "$3" -- "$prog" -s $port -a $addr \
		>"$t/target.out" 2>&1 &
	tpid=$!
	lpids="$lpids $tpid"
	timeout 120 "$rdmaemu" run --fabric "$2" --node "$4" -- "$prog" -c $port -a $addr \
		>"$t/requester.out" 2>&1
	rrc=$?
	wait $tpid
	trc=$?
	if [ $rrc -ne 0 ] || [ $trc -ne 0 ] ||
		! diff -u "$golden/rkey-probe-requester.out" "$t/requester.out" ||
		! diff -u "$golden/rkey-probe-target.out" "$t/target.out"; then
		echo "FAIL $1 (requester exit $rrc, target exit $trc)"
		fail=1
	else
		echo "ok $1: $(grep -c 'remote access error (10); qp state 6$' "$t/requester.out") refused, as kernel rxe"
	fi
}

ref=$(cd "$s/fixtures" && pwd)/rxe-ref.fabric
"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; exit 1; }
run "one host, rings" "$ref" rxe-ref rxe-ref
RDMAEMU_SHM=0 run "one host, daemon path" "$ref" rxe-ref rxe-ref
"$rdmaemu" daemon stop >/dev/null 2>&1

ref2=$(cd "$s/fixtures" && pwd)/rxe-ref2.fabric
"$rdmaemu" daemon start --fabric "$ref2" || { echo "daemon start failed"; exit 1; }
# the side channel to A's address crosses the daemon's wire between the hosts' sandboxes
if daemon_test_sandboxed "$ref2" A; then
	addr=192.0.2.65
	run "two hosts" "$ref2" A B
else
	echo "skipped: two hosts (no sandbox here, and the side channel to 192.0.2.65 would reach this machine's real network)"
fi
exit $fail
