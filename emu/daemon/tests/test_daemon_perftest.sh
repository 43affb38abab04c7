#!/bin/sh
# perftest (Debian's package, built against rdma-core 44, unmodified; it links the provider
# libraries libmlx5/libefa/... itself, which load thanks to the IBVERBS_PRIVATE_34 names of
# emu/verbs/private34.c) as server and client in two `rdmaemu run` processes on host rxe-ref
# of fixtures/rxe-ref.fabric, in socket-exchange mode (the side channel on 127.0.0.1):
# ib_write_bw, ib_send_bw, ib_read_bw, ib_send_lat, ib_write_lat. Each must exit 0 on both
# sides and the client must print its result row for the size and iteration count asked.
# Timeouts are real-time safety nets only (generous, for a loaded machine).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v ib_write_bw >/dev/null 2>&1 || { echo "perftest not installed: skipped"; exit 77; }
. "$s/emu/daemon/tests/daemon_test_env.sh"
export RDMAEMU_UCMA_KEPT_CHECK=1 # kept answers checked against round trips (docs/daemon.md)
daemon_test_ports 14400
ref="$s/fixtures/rxe-ref.fabric"

# run NAME ROWREGEX PROGRAM ARGS...: server and client, both exit 0, the client's output has
# a line matching ROWREGEX (the result row).
run() {
	name=$1 row=$2 prog=$3
	shift 3
	port=$((port + 1))
	timeout 60 "$rdmaemu" run --fabric "$ref" -- "$prog" -p $port "$@" >"$t/srv.out" 2>&1 &
	spid=$!
	i=0
	while :; do
		timeout 60 "$rdmaemu" run --fabric "$ref" -- "$prog" -p $port "$@" 127.0.0.1 \
			>"$t/cli.out" 2>&1
		crc=$?
		# the client gives up at once when the server does not listen yet: again then
		grep -q "Couldn't connect to 127.0.0.1:$port" "$t/cli.out" && [ $i -lt 300 ] || break
		sleep 0.1; i=$((i + 1))
	done
	wait $spid
	src=$?
	if [ $src -ne 0 ] || [ $crc -ne 0 ] || ! grep -Eq "$row" "$t/cli.out"; then
		echo "FAIL $name (server exit $src, client exit $crc):"
		cat "$t/srv.out" "$t/cli.out"
		fail=1
	else
		echo "ok $name: $(grep -E "$row" "$t/cli.out" | tr -s ' \t' ' ')"
	fi
}

"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; cat "$t/rdmaemud.log"; exit 1; }
# -x 1: GID 1 (::ffff:192.0.2.1, RoCEv2); -F: no CPU frequency check. A figure of 7
# characters fills perftest's %-7.2lf and is followed by its tab, not a space.
run ib_write_bw '^ 16384 +100 +[0-9.]+ +[0-9.]+[[:space:]]' ib_write_bw -d rxe0 -x 1 -F -n 100 -s 16384
run ib_send_bw '^ 16384 +100 +[0-9.]+ +[0-9.]+[[:space:]]' ib_send_bw -d rxe0 -x 1 -F -n 100 -s 16384
run ib_read_bw '^ 16384 +100 +[0-9.]+ +[0-9.]+[[:space:]]' ib_read_bw -d rxe0 -x 1 -F -n 100 -s 16384
run ib_send_lat '^ 2 +100 +[0-9.]+ +[0-9.]+[[:space:]]' ib_send_lat -d rxe0 -x 1 -F -n 100 -s 2
run ib_write_lat '^ 2 +100 +[0-9.]+ +[0-9.]+[[:space:]]' ib_write_lat -d rxe0 -x 1 -F -n 100 -s 2
exit $fail
