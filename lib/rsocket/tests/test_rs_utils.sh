#!/bin/sh
# rdmacm-utils' rstream, riostream and rcopy (the system's, unmodified) on the emulated stack:
# server and client as two programs under `rdmaemu run`, on host rxe-ref of
# fixtures/rxe-ref.fabric (both on 192.0.2.1) and between hosts A (server) and B (client) of
# fixtures/rxe-ref2.fabric. Each run must exit 0 on both sides with the result line of the
# size asked for; rcopy's copy must equal its 1 MiB source. riostream's default set is left
# out: its latency tests spin on memory for 100000 round trips, which the emulator's delivery
# threads serve only when the scheduler lets them run (docs/rsockets.md).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
ref="$s/fixtures/rxe-ref.fabric"
ref2="$s/fixtures/rxe-ref2.fabric"

for p in rstream riostream rcopy; do
	command -v $p >/dev/null || { echo "no $p here: skipped"; exit 77; }
done
"$rdmaemu" run --fabric "$ref" --node rxe-ref -- true 2>"$t/first.err"
if grep -q "not permitted here" "$t/first.err"; then
	cat "$t/first.err"
	echo "no sandbox here: skipped"
	exit 77
fi
daemon_test_sandboxed "$ref" rxe-ref || { echo "FAIL: no sandbox"; exit 1; }

# pair FABRIC SNODE CNODE SERVER_IP PORT PROG EXPECT ARGS...: EXPECT is a pattern each side's
# output must hold
pair() {
	fab=$1 sn=$2 cn=$3 ip=$4 port=$5 prog=$6 expect=$7
	shift 7
	# the last pair's server gone from the daemon (when one runs), so that the listener
	# waited for below is this pair's
	if "$rdmaemu" daemon status >/dev/null 2>&1; then
		daemon_test_wait_status '^rdma_cm files 0$'
	fi
	# the timeouts are safety nets: rstream's full sweep between two hosts takes minutes
	# in a sanitizer build on a loaded 2-core machine
	"$rdmaemu" run --fabric "$fab" --node "$sn" -- timeout 600 "$prog" -p "$port" "$@" \
		>"$t/srv.out" 2>&1 &
	spid=$!
	lpids="$spid"
	# a client before the server's listen is rejected, as on any stack
	daemon_test_wait_status '^rdma_cm file .* listen [1-9]' ||
		{ echo "FAIL $prog: the server never listened"; cat "$t/srv.out"; }
	start=$(date +%s.%N)
	"$rdmaemu" run --fabric "$fab" --node "$cn" -- timeout 600 "$prog" -s "$ip" -p "$port" "$@" \
		>"$t/cli.out" 2>&1
	cst=$?
	end=$(date +%s.%N)
	wait "$spid"
	sst=$?
	lpids=
	name="$prog $* ($sn -> $cn)"
	if [ $cst -ne 0 ] || [ $sst -ne 0 ] || ! grep -Eq "$expect" "$t/cli.out" ||
	   ! grep -Eq "$expect" "$t/srv.out"; then
		echo "FAIL $name: client $cst, server $sst"
		cat "$t/cli.out" "$t/srv.out"
		fail=1
	else
		echo "ok $name $(echo "$end - $start" | bc) s"
	fi
}

port=7471
for net in "$ref rxe-ref rxe-ref 192.0.2.1" "$ref2 A B 192.0.2.65"; do
	# shellcheck disable=SC2086
	set -- $net
	"$rdmaemu" daemon stop >/dev/null 2>&1	# one daemon serves one fabric
	pair "$1" "$2" "$3" "$4" $port rstream '^custom +4k +1k +1 ' -S 4096 -C 1000
	pair "$1" "$2" "$3" "$4" $((port + 1)) rstream '^custom +64k +100 +1 ' -S 65536 -C 100
	pair "$1" "$2" "$3" "$4" $((port + 2)) rstream '^1m_bw +1m +100 +1 '
	pair "$1" "$2" "$3" "$4" $((port + 3)) riostream '^custom +4k +1k +1 ' -S 4096 -C 1000
	pair "$1" "$2" "$3" "$4" $((port + 4)) riostream '^custom +64k +100 +1 ' -S 65536 -C 100
	port=$((port + 10))
done

# rcopy: the server runs until killed; the client's copy is compared byte for byte
head -c 1048576 /dev/urandom >"$t/src.bin"
"$rdmaemu" run --fabric "$ref2" --node A -- timeout 60 rcopy -p 7491 >"$t/srv.out" 2>&1 &
lpids=$!
daemon_test_wait_status '^rdma_cm file .* listen [1-9]' ||
	{ echo "FAIL rcopy: the server never listened"; cat "$t/srv.out"; }
if "$rdmaemu" run --fabric "$ref2" --node B -- timeout 60 rcopy "$t/src.bin" \
	192.0.2.65:"$t/dst.bin" -p 7491 >"$t/cli.out" 2>&1 &&
   grep -q "^1048576 bytes in" "$t/cli.out" && cmp -s "$t/src.bin" "$t/dst.bin"; then
	echo "ok rcopy 1 MiB (A <- B)"
else
	echo "FAIL rcopy"
	cat "$t/cli.out" "$t/srv.out"
	fail=1
fi
# the server ends: timeout(1), which `rdmaemu run` exec'd, passes SIGTERM on to rcopy
kill -TERM $lpids
wait $lpids
lpids=
exit $fail
