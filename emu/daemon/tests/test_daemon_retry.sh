#!/bin/sh
# A requester whose peer process dies, with retry_cnt below 7 (rc_retry.c): the SEND posted
# after the peer's SIGKILL completes with IBV_WC_RETRY_EXC_ERR, the next WR with
# IBV_WC_WR_FLUSH_ERR, the QP is in IBV_QPS_ERR, as on kernel rxe in the reference VM
# (retry_cnt 0 / 1 / 3, timeout 14: 68 / 135 / 286 ms there). Both processes on host rxe-ref
# of fixtures/rxe-ref.fabric, through the shared-memory rings and through the daemon
# (RDMAEMU_SHM=0); then across two hosts of fixtures/rxe-ref2.fabric (the daemon's wire).
# The times are printed, not asserted (real time on a shared machine); timeouts are safety nets.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
prog="$b/emu/daemon/tests/rc_retry"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE
daemon_test_ports 18800

# run NAME FABRIC SNODE CNODE RETRY: the peer killed, the requester's exact verdict; the side
# channel goes to $addr (the peer's address)
addr=127.0.0.1
run() {
	port=$((port + 1))
	timeout 120 "$rdmaemu" run --fabric "$2" --node "$3" -- "$prog" -s $port -a $addr \
		>"$t/srv.out" 2>&1 &
	spid=$!
	timeout 120 "$rdmaemu" run --fabric "$2" --node "$4" -- "$prog" -c $port -a $addr -r $5 -t 14 \
		>"$t/cli.out" 2>&1
	crc=$?
	wait $spid
	src=$?
	want="retry_cnt $5 timeout 14: wr 1 transport retry counter exceeded \\(12\\) after [0-9]+ ms; wr 2 Work Request Flushed Error \\(5\\); qp state 6"
	# the peer dies by SIGKILL: 137 from rdmaemu run (128 + 9)
	if [ $crc -ne 0 ] || [ $src -ne 137 ] || ! grep -Eqx "$want" "$t/cli.out"; then
		echo "FAIL $1 (requester exit $crc, peer exit $src):"
		cat "$t/srv.out" "$t/cli.out"
		fail=1
	else
		echo "ok $1: $(cat "$t/cli.out")"
	fi
}

ref="$s/fixtures/rxe-ref.fabric"
"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; exit 1; }
for r in 0 1 3; do
	run "rings retry_cnt $r" "$ref" rxe-ref rxe-ref $r
done
RDMAEMU_SHM=0 run "daemon path retry_cnt 1" "$ref" rxe-ref rxe-ref 1
"$rdmaemu" daemon stop >/dev/null 2>&1

ref2="$s/fixtures/rxe-ref2.fabric"
"$rdmaemu" daemon start --fabric "$ref2" || { echo "daemon start failed"; exit 1; }
# the side channel to A's address crosses the daemon's wire between the hosts' sandboxes
if daemon_test_sandboxed "$ref2" A; then
	addr=192.0.2.65
	run "two hosts retry_cnt 2" "$ref2" A B 2
else
	echo "skipped: two hosts (no sandbox here, and the side channel to 192.0.2.65 would reach this machine's real network)"
fi
exit $fail
