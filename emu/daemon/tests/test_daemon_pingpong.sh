#!/bin/sh
# Debian's ibverbs-utils pingpongs (built against rdma-core 44, unmodified) as server and client
# in two `rdmaemu run` processes on one rdmaemud: both on host rxe-ref of fixtures/rxe-ref.fabric
# (loopback through the daemon, QP numbers from two slices of one host), then server on A and
# client on B of fixtures/rxe-ref2.fabric (over the daemon's wire). Their TCP side channel is on
# 127.0.0.1 on one host, and to A's address 192.0.2.65 between hosts, carried by the daemon's
# wire between the two hosts' sandboxes (skipped where there is no sandbox). A client killed mid-run must not take the daemon down: status still answers and a
# new pair still runs. Last, ./rdmaemu at the top of the build tree works from there.
# Timeouts are real-time safety nets only (generous, for a loaded machine).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v ibv_rc_pingpong >/dev/null 2>&1 || { echo "ibverbs-utils not installed: skipped"; exit 77; }
. "$s/emu/daemon/tests/daemon_test_env.sh"
# a TCP port per run, so parallel test runs do not collide
daemon_test_ports 10000

# pair NAME FABRIC SERVER_NODE CLIENT_NODE BYTES ITERS PROGRAM ARGS...: runs a server and a
# client, checks both exit 0 and print "BYTES bytes in ... seconds" and "ITERS iters in ...".
# The client reaches the server at $srv (127.0.0.1 on one host, else the server's address).
srv=127.0.0.1
pair() {
	name=$1 fab=$2 snode=$3 cnode=$4 bytes=$5 iters=$6 prog=$7
	shift 7
	port=$((port + 1))
	timeout 60 "$rdmaemu" run --fabric "$fab" --node "$snode" -- "$prog" -p $port "$@" \
		>"$t/srv.out" 2>&1 &
	spid=$!
	# the pingpong client gives up at once when nobody listens yet: try again then
	i=0
	while :; do
		timeout 60 "$rdmaemu" run --fabric "$fab" --node "$cnode" -- "$prog" -p $port \
			"$@" $srv >"$t/cli.out" 2>&1
		crc=$?
		grep -q "^Couldn't connect to $srv:$port" "$t/cli.out" && [ $i -lt 300 ] ||
			break
		sleep 0.1; i=$((i + 1))
	done
	wait $spid
	src=$?
	for side in srv cli; do
		rc=$src; [ $side = cli ] && rc=$crc
		if [ $rc -ne 0 ] || ! grep -Eq "^$bytes bytes in [0-9.]+ seconds = " "$t/$side.out" ||
		   ! grep -Eq "^$iters iters in [0-9.]+ seconds = " "$t/$side.out"; then
			echo "FAIL $name ($side, exit $rc):"; cat "$t/$side.out"; fail=1
		fi
	done
	[ $fail -eq 0 ] && echo "ok $name: $(grep -E '^[0-9]+ bytes in' "$t/cli.out")"
}

ref="$s/fixtures/rxe-ref.fabric"
ref2="$s/fixtures/rxe-ref2.fabric"
"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; cat "$t/rdmaemud.log"; exit 1; }
# -s 4096 -n 5: 5 round trips of 4096 bytes each way
pair rc-one-host "$ref" rxe-ref rxe-ref 40960 5 ibv_rc_pingpong -d rxe0 -g 1 -n 5 -s 4096
pair uc-one-host "$ref" rxe-ref rxe-ref 40960 5 ibv_uc_pingpong -d rxe0 -g 1 -n 5 -s 4096
pair ud-one-host "$ref" rxe-ref rxe-ref 5120 5 ibv_ud_pingpong -d rxe0 -g 1 -n 5 -s 512
pair srq-one-host "$ref" rxe-ref rxe-ref 40960 5 ibv_srq_pingpong -d rxe0 -g 1 -n 5 -s 4096
"$rdmaemu" daemon stop >/dev/null || { echo "daemon stop failed"; fail=1; }

"$rdmaemu" daemon start --fabric "$ref2" || { echo "daemon start failed"; cat "$t/rdmaemud.log"; exit 1; }
if daemon_test_sandboxed "$ref2" A; then
srv=192.0.2.65
pair rc-two-hosts "$ref2" A B 40960 5 ibv_rc_pingpong -d rxe0 -g 1 -n 5 -s 4096
pair uc-two-hosts "$ref2" A B 40960 5 ibv_uc_pingpong -d rxe0 -g 0 -n 5 -s 4096
pair ud-two-hosts "$ref2" A B 5120 5 ibv_ud_pingpong -d rxe0 -g 0 -n 5 -s 512
pair srq-two-hosts "$ref2" A B 40960 5 ibv_srq_pingpong -d rxe0 -g 1 -n 5 -s 4096

# A client killed in the middle of a long run: the daemon notices its socket close, drops it,
# and goes on serving (status answers with only the server attached, a new pair runs).
port=$((port + 1))
# no timeout(1) here: $! has to be the pingpong's pid (rdmaemu run execs it); both are
# killed below
"$rdmaemu" run --fabric "$ref2" --node A -- ibv_rc_pingpong -d rxe0 -g 1 -n 100000000 -p $port >"$t/srv.out" 2>&1 &
spid=$!
lpids=$spid
# the client is connected and exchanging when the daemon has seen frames from it (its own
# output is buffered until it exits)
i=0
while :; do
	"$rdmaemu" run --fabric "$ref2" --node B -- ibv_rc_pingpong -d rxe0 -g 1 -n 100000000 \
		-p $port $srv >"$t/cli.out" 2>&1 &
	cpid=$!
	lpids="$spid $cpid"
	while kill -0 $cpid 2>/dev/null &&
	      ! "$rdmaemu" daemon status | grep -Eq "^process $cpid .* frames-in [1-9][0-9]{2,} "; do
		sleep 0.1
	done
	kill -0 $cpid 2>/dev/null || [ $i -ge 300 ] && break
	wait $cpid; sleep 0.1; i=$((i + 1))
done
kill -KILL $cpid
wait $cpid 2>/dev/null
# the daemon drops it when its poll sees the hang-up
i=0
while "$rdmaemu" daemon status >"$t/status.out" 2>&1 && grep -q "^process $cpid " "$t/status.out" &&
      [ $i -lt 300 ]; do
	sleep 0.1; i=$((i + 1))
done
if ! "$rdmaemu" daemon status >"$t/status.out" 2>&1 || grep -q "^process $cpid " "$t/status.out" ||
   ! grep -Eq "^processes [01]$" "$t/status.out"; then
	echo "FAIL: daemon status after a client was killed:"; cat "$t/status.out"; fail=1
else
	echo "ok killed client: the daemon still answers, the client is gone"
fi
kill $spid 2>/dev/null
wait $spid 2>/dev/null
lpids=
pair rc-after-kill "$ref2" A B 40960 5 ibv_rc_pingpong -d rxe0 -g 1 -n 5 -s 4096
else
	echo "skipped: the pairs between hosts A and B (no sandbox here, and their side channel to 192.0.2.65 would reach this machine's real network)"
fi

# ./rdmaemu at the top of the build tree (README), run from there: the same daemon, host B's
# one device
if (cd "$b" && ./rdmaemu run --fabric "$ref2" --node B -- ibv_devices) >"$t/devices.out" 2>&1 &&
   grep -Eq '^[[:space:]]+rxe0[[:space:]]+000000fffe000202$' "$t/devices.out" &&
   [ "$(grep -c rxe "$t/devices.out")" = 1 ]; then
	echo "ok ./rdmaemu in the build tree"
else
	echo "FAIL: ./rdmaemu run -- ibv_devices in $b:"; cat "$t/devices.out"; fail=1
fi
exit $fail
