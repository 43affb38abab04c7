#!/bin/sh
# examples/autotools: a user's autotools project whose `make check` runs its rdma_cm test under
# `rdmaemu run` (LOG_COMPILER), built with autoreconf/configure/make against rdmaemu on PATH.
# The test's log must hold both sides' lines.
set -u
. "${RDMAEMU_TOP_SRCDIR:-.}/examples/tests/example_env.sh"
example_copy autotools
autoreconf -fi >"$t/autoreconf.log" 2>&1 || { cat "$t/autoreconf.log"; exit 1; }
./configure -q >"$t/configure.log" 2>&1 || { cat "$t/configure.log"; exit 1; }
grep -q "^RDMAEMU = $bin/rdmaemu\$" Makefile || { echo "FAIL: configure found $(grep '^RDMAEMU =' Makefile)"; exit 1; }
make -s check >"$t/check.log" 2>&1 || { cat "$t/check.log" cm_ping.log 2>/dev/null; exit 1; }
grep -q '^PASS: cm_ping$' "$t/check.log" || { echo "FAIL: no PASS line"; cat "$t/check.log"; exit 1; }
for want in 'cm_ping: server received "ping"' 'cm_ping: client received "pong"'; do
	grep -qxF "$want" cm_ping.log || { echo "FAIL: cm_ping.log lacks $want"; cat cm_ping.log; exit 1; }
done
echo "ok autotools: make check ran cm_ping under rdmaemu run"
