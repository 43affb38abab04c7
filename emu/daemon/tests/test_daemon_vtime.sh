#!/bin/sh
# Virtual time across processes: vtime_probe.c on hosts A and B of fixtures/rxe-ref2.fabric
# under `rdmaemu run --virtual-time`. Every timeout takes its exact virtual time on the
# programs' clocks: the address resolution of a silent address (20 s), the program's own
# 5 s poll(), the disconnect whose DREQs host A's CM loses (16 sends 6.144 s apart: the
# active side's timeout is the REQ's, 2 x convert(packet lifetime 18) + convert(20)); B's
# own 200 s poll. The whole run costs no wall time, and a second run writes the same
# capture, byte for byte. A daemon in the other mode refuses the process, saying why.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
prog="$b/emu/daemon/tests/vtime_probe"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE RDMAEMU_TIME
ref2="$s/fixtures/rxe-ref2.fabric"

wanta='A: RDMA_CM_EVENT_ADDR_ERROR -110 20.000000000 s
A: RDMA_CM_EVENT_REJECTED 8 0.000000000 s
A: RDMA_CM_EVENT_ESTABLISHED 0 0.000000000 s
A: recv 64 0.000000000 s
A: poll 0 5.000000000 s
A: RDMA_CM_EVENT_DISCONNECTED -110 98.304000000 s'
wantb='B: CONNECT_REQUEST 0 20.000000000 s
B: ESTABLISHED 0 20.000000000 s
B: recv 64 20.000000000 s
B: sent 64 20.000000000 s
B: poll 0 200.000000000 s'

# run N: both programs on a daemon of its own whose capture is $t/capN
run() {
	rm -f "$t/ready"
	"$rdmaemu" daemon start --fabric "$ref2" --pcap "$t/cap$1" --virtual-time ||
		{ echo "FAIL: daemon start"; cat "$t/rdmaemud.log"; exit 1; }
	"$rdmaemu" daemon status | grep -qx "time: virtual" || { echo "FAIL: status"; fail=1; }
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
	if [ $arc -ne 0 ] || [ $brc -ne 0 ] || [ "$(cat "$t/a$1.out")" != "$wanta" ] ||
	   [ "$(cat "$t/b$1.out")" != "$wantb" ]; then
		echo "FAIL run $1:"
		cat "$t/a$1.out" "$t/a$1.err" "$t/b$1.out" "$t/b$1.err" "$t/rdmaemud.log"
		fail=1
	fi
	if [ $wall -ge 2000 ]; then
		echo "FAIL run $1: $wall ms of wall time for 223 s of virtual time"
		fail=1
	fi
}

run 1
run 2
cat "$t/a1.out" "$t/b1.out"
if cmp "$t/cap1-eth.pcap" "$t/cap2-eth.pcap"; then
	echo "ok: the two captures are the same ($(stat -c %s "$t/cap1-eth.pcap") bytes)"
else
	echo "FAIL: the two runs' captures differ"
	fail=1
fi

# a daemon in real time refuses a process that asks for virtual time, and the other way round
"$rdmaemu" daemon start --fabric "$ref2" || { echo "FAIL: daemon start"; exit 1; }
if "$rdmaemu" run --virtual-time --no-sandbox --fabric "$ref2" --node A -- true \
	2>"$t/mode.err"; then
	echo "FAIL: rdmaemu run --virtual-time beside a daemon in real time"
	fail=1
elif ! grep -q "runs in real time, not virtual time" "$t/mode.err"; then
	echo "FAIL: the refusal does not say the mode:"
	cat "$t/mode.err"
	fail=1
else
	echo "ok: $(head -1 "$t/mode.err")"
fi
# past rdmaemu run's look: the daemon refuses the attach itself, and the process says why
touch "$t/ready"
if RDMAEMU_DAEMON="$t/rdmaemud.sock" RDMAEMU_FABRIC="$ref2" RDMAEMU_NODE=A RDMAEMU_TIME=virtual \
	LD_LIBRARY_PATH="$b/lib/.libs:$b/emu/verbs/.libs:$b/emu/.libs" "$prog" -c "$t/ready" \
	>/dev/null 2>"$t/attach.err"; then
	echo "FAIL: a process asking for virtual time attached to a daemon in real time"
	fail=1
elif ! grep -q "runs its fabric in real time; this process asks for virtual time" \
	"$t/attach.err"; then
	echo "FAIL: the attach's refusal does not say the modes:"
	cat "$t/attach.err"
	fail=1
else
	echo "ok: $(grep -m1 "runs its fabric" "$t/attach.err")"
fi
"$rdmaemu" daemon stop >/dev/null 2>&1
exit $fail
