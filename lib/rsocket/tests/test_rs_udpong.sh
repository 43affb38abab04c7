#!/bin/sh
# rdmacm-utils' udpong (SOCK_DGRAM rsockets through the public calls) under `rdmaemu run`, as
# on kernel rxe in the reference VM (docs/reference/rsockets-rxe.md): the client's rconnect
# fails with ENOENT ("No such file or directory"), exit status 255, after its header line;
# the server, bound and waiting for a datagram that never comes, prints nothing and keeps
# running. On one host (fixtures/rxe-ref.fabric, 192.0.2.1) and between hosts A and B
# (fixtures/rxe-ref2.fabric, server on A = 192.0.2.65, client on B, also with -b 192.0.2.66).
# The UDP side channel is a kernel UDP socket inside the sandboxes; where namespaces are not
# permitted the test is skipped (outside a sandbox nothing may be sent to a fabric address).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
ref="$s/fixtures/rxe-ref.fabric"
ref2="$s/fixtures/rxe-ref2.fabric"
udpong=$(command -v udpong) || { echo "no udpong (rdmacm-utils): skipped"; exit 77; }
header="name      bytes   xfers   total       time     Gb/sec    usec/xfer"

check() { # NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		echo "ok $1"
	else
		printf 'FAIL %s:\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

# FABRIC SERVER-NODE SERVER-ADDR CLIENT-NODE CLIENT-ARGS...: the server in the background,
# one client run, then the server must still be waiting, silent.
pong() {
	fab=$1 snode=$2 saddr=$3 cnode=$4
	shift 4
	"$rdmaemu" run --fabric "$fab" --node "$snode" -- "$udpong" -b "$saddr" \
		>"$t/srv.out" 2>"$t/srv.err" &
	spid=$!
	lpids=$spid
	sleep 1
	"$rdmaemu" run --fabric "$fab" --node "$cnode" -- timeout 60 "$udpong" "$@" \
		>"$t/cli.out" 2>"$t/cli.err"
	rc=$?
	check "$cnode: udpong $* exit status" 255 "$rc"
	check "$cnode: udpong $* stdout" "$header" "$(cat "$t/cli.out")"
	check "$cnode: udpong $* stderr" "rconnect: No such file or directory" "$(cat "$t/cli.err")"
	if kill -0 "$spid" 2>/dev/null; then
		echo "ok $snode: the server still waits"
	else
		echo "FAIL $snode: the server ended"
		fail=1
	fi
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	lpids=
	check "$snode: the server printed nothing" "" "$(cat "$t/srv.out" "$t/srv.err")"
}

"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; exit 1; }
"$rdmaemu" run --fabric "$ref" --node rxe-ref -- true 2>"$t/first.err"
if grep -q "^rdmaemu: no sandbox for host" "$t/first.err" ||
	! daemon_test_sandboxed "$ref" rxe-ref; then
	cat "$t/first.err"
	echo "no sandbox here: skipped"
	exit 77
fi
pong "$ref" rxe-ref 192.0.2.1 rxe-ref -s 192.0.2.1 -b 192.0.2.1
pong "$ref" rxe-ref 192.0.2.1 rxe-ref -s 192.0.2.1
"$rdmaemu" daemon stop

"$rdmaemu" daemon start --fabric "$ref2" || { echo "daemon start failed"; exit 1; }
pong "$ref2" A 192.0.2.65 B -s 192.0.2.65
pong "$ref2" A 192.0.2.65 B -s 192.0.2.65 -b 192.0.2.66
exit $fail
