#!/bin/sh
# Protocol timeouts in real time under rdmaemud (timeout_scenario.sh): B serves one
# connection, then takes its own link down with `rdmaemu daemon link-set B eth0 down` (on the
# VM `ip link set eth0 down`) and waits 100 s for a CM event; A resolves a silent address
# (ADDR_ERROR -110 after 20 s), connects to a port nobody listens on (REJECTED 8), exchanges
# 64 bytes each way with B, lets 5 s of its own deadline pass without an event, and
# disconnects: DISCONNECTED -110 when the 16 DREQs B can no longer answer have timed out
# (98.304 s). Both outputs must be the VM's with the seconds masked. Every timeout costs its
# wall time (about 125 s in all), so this test is not in `make check`: run it with `make
# check-timeouts` (docs/reference/timeouts-rxe.md). The same run on the virtual clock, in
# seconds of wall time: test_daemon_timeouts_vt.sh.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
. "$s/emu/daemon/tests/timeout_scenario.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE

start=$(date +%s)
timeout_scenario "$t/run" || fail=1
end=$(date +%s)
timeout_golden "$t/run" || fail=1
echo "wall time: $((end - start)) s"
exit $fail
