#!/bin/sh
# Virtual time across processes: vtime_probe.c on hosts A and B of fixtures/rxe-ref2.fabric
# under `rdmaemu run --virtual-time`. Every protocol timeout takes its exact virtual time on
# the programs' clocks (ARP 20 s, the program's own 5 s poll, 16 DREQs 4.096 s apart), the
# whole run costs no wall time, and a second run writes the same capture, byte for byte.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
prog="$b/emu/daemon/tests/vtime_probe"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE RDMAEMU_TIME
ref2="$s/fixtures/rxe-ref2.fabric"

# run N: both programs on a daemon of its own whose capture is $t/capN
run() {
	rm -f "$t/ready"
	"$rdmaemu" daemon start --fabric "$ref2" --pcap "$t/cap$1" --virtual-time ||
		{ echo "FAIL: daemon start"; cat "$t/rdmaemud.log"; exit 1; }
	start=$(date +%s%N)
	timeout 60 "$rdmaemu" run --virtual-time --no-sandbox --fabric "$ref2" --node B -- \
		"$prog" -s "$t/ready" >"$t/b$1.out" 2>"$t/b$1.err" &
	bpid=$!
	lpids=$bpid
	timeout 60 "$rdmaemu" run --virtual-time --no-sandbox --fabric "$ref2" --node A -- \
		"$prog" -c "$t/ready" >"$t/a$1.out" 2>"$t/a$1.err"
	arc=$?
	wait $bpid
	brc=$?
	end=$(date +%s%N)
	lpids=
	"$rdmaemu" daemon stop >/dev/null 2>&1
	wall=$(( (end - start) / 1000000 ))
	echo "run $1: A exit $arc, B exit $brc, $wall ms of wall time"
	if [ $arc -ne 0 ] || [ $brc -ne 0 ]; then
		echo "FAIL run $1:"
		cat "$t/a$1.out" "$t/a$1.err" "$t/b$1.out" "$t/b$1.err" "$t/rdmaemud.log"
		fail=1
	fi
}

run 1
run 2
cat "$t/a1.out" "$t/b1.out"
exit $fail
