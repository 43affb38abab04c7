#!/bin/sh
# Protocol timeouts in real time under rdmaemud: probes/cma/timeout_probe.c, the probe whose
# output on the reference VMs (Linux 6.1 rxe, rdma-core 44) is fixtures/golden/rxe/
# timeout-probe-A.out and -B.out, runs unchanged as two processes of the daemon's fabric
# (fixtures/rxe-ref2.fabric): B serves one connection, then takes its own link down with
# `rdmaemu daemon link-set B eth0 down` (on the VM `ip link set eth0 down`) and waits 100 s for
# a CM event; A resolves a silent address (ADDR_ERROR -110 after 20 s), connects to a port
# nobody listens on (REJECTED 8), exchanges 64 bytes each way with B, lets 5 s of its own
# deadline pass without an event, and disconnects: DISCONNECTED -110 when the 16 DREQs B can
# no longer answer have timed out (98.304 s). Both outputs must be the VM's with the seconds
# masked. Every timeout costs its wall time (about 125 s in all), so this test is not in
# `make check`: run it with `make check-timeouts` (docs/reference/timeouts-rxe.md).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
probe="$b/emu/daemon/tests/timeout_probe"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE

# the seconds field masked: "t+21 event ..." -> "t+* event ..."
mask() {
	sed -E 's/^t\+[0-9]+ /t+* /' "$1"
}

ref2="$s/fixtures/rxe-ref2.fabric"
start=$(date +%s)
"$rdmaemu" daemon start --fabric "$ref2" || { echo "daemon start failed"; exit 1; }
timeout 300 "$rdmaemu" run --no-sandbox --fabric "$ref2" --node B -- \
	"$probe" server "$rdmaemu daemon link-set B eth0 down" >"$t/b.out" 2>&1 &
bpid=$!
lpids=$bpid
n=0
until grep -q ' listening$' "$t/b.out" 2>/dev/null; do
	n=$((n + 1))
	if [ $n -gt 300 ] || ! kill -0 $bpid 2>/dev/null; then
		echo "FAIL: the server did not listen"
		cat "$t/b.out"
		exit 1
	fi
	sleep 0.1
done
timeout 300 "$rdmaemu" run --no-sandbox --fabric "$ref2" --node A -- "$probe" client \
	>"$t/a.out" 2>&1
arc=$?
wait $bpid
brc=$?
lpids=
end=$(date +%s)
[ $arc -eq 0 ] && [ $brc -eq 0 ] || { echo "FAIL: exits A $arc B $brc"; fail=1; }
for r in A B; do
	out="$t/$(echo $r | tr AB ab).out"
	mask "$s/fixtures/golden/rxe/timeout-probe-$r.out" >"$t/golden-$r"
	mask "$out" >"$t/masked-$r"
	if ! diff -u "$t/golden-$r" "$t/masked-$r" >"$t/diff-$r"; then
		echo "FAIL: $r differs from kernel rxe (seconds masked):"
		cat "$t/diff-$r"
		fail=1
	fi
	echo "--- $r (emulator | kernel rxe):"
	paste -d'|' "$out" "$s/fixtures/golden/rxe/timeout-probe-$r.out" |
		awk -F'|' '{ printf "%-58s | %s\n", $1, $2 }'
done
echo "wall time: $((end - start)) s"
exit $fail
