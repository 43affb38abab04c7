#!/bin/sh
# The kernel-rxe-measured timeout run (timeout_scenario.sh, test_daemon_timeouts.sh) on the
# daemon's virtual clock: `rdmaemud --virtual-time --hold 2` (the clock stays until both
# roles have attached) and `rdmaemu run --virtual-time`. The unmodified probe, linked against
# the system's rdma-core, must print the VM's lines (seconds masked), at the exact virtual
# seconds the protocol gives (ARP 20 s; 5 s of A's own poll; 16 DREQs, 98.304 s; B's 100 s
# poll), in well under the 125 s the real-time run takes; two runs print the same lines and
# write the same capture bytes; a third, with each role in a sandbox, prints the same lines.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
. "$s/emu/daemon/tests/timeout_scenario.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE

# the seconds on the virtual clock: A's ADDR_ERROR at 20 s; the connections at once; A's own
# 5 s poll; its DISCONNECTED 98.304 s after the disconnect (25 + 98.3); B's link down at
# 20 s and its 100 s poll
expect_line() {
	if ! grep -qx "$2" "$1"; then
		echo "FAIL: $(basename "$1") has no line '$2'"
		fail=1
	fi
}

start=$(date +%s)
for i in 1 2; do
	timeout_scenario "$t/run$i" --virtual-time --hold 2 || { fail=1; break; }
done
end=$(date +%s)
[ $fail -eq 0 ] || exit 1
timeout_golden "$t/run1" || fail=1
expect_line "$t/run1/a.out" "t+20 event RDMA_CM_EVENT_ADDR_ERROR status -110"
expect_line "$t/run1/a.out" "t+20 event RDMA_CM_EVENT_REJECTED status 8"
expect_line "$t/run1/a.out" "t+25 poll on the CM channel 5000 ms: 0"
expect_line "$t/run1/a.out" "t+123 event RDMA_CM_EVENT_DISCONNECTED status -110"
expect_line "$t/run1/b.out" "t+20 system(DOWNCMD) 0"
expect_line "$t/run1/b.out" "t+120 poll 100000 ms: 0 (no event)"
for f in a.out b.out cap-eth.pcap; do
	if cmp "$t/run1/$f" "$t/run2/$f"; then
		echo "ok: $f the same in both runs ($(stat -c %s "$t/run1/$f") bytes)"
	else
		echo "FAIL: $f differs between two runs"
		fail=1
	fi
done
echo "wall time: $((end - start)) s for two runs"
# Each role in a sandbox of its own: the same lines at the same seconds. The capture holds
# frames of the sandboxes' own kernels too (IPv6 multicast listener reports on real-time
# timers: docs/time.md), so it is not compared.
TIMEOUT_SANDBOX=1 timeout_scenario "$t/sandbox" --virtual-time --hold 2
src=$?
if grep -q '^rdmaemu: no sandbox for host . (not permitted here' "$t/sandbox/b.out"; then
	echo "no sandbox here: the sandboxed run is skipped"
elif [ $src -eq 0 ]; then
	for f in a.out b.out; do
		if cmp "$t/run1/$f" "$t/sandbox/$f"; then
			echo "ok: $f the same in sandboxes"
		else
			echo "FAIL: $f differs in sandboxes:"
			diff "$t/run1/$f" "$t/sandbox/$f"
			fail=1
		fi
	done
else
	fail=1
fi
exit $fail
