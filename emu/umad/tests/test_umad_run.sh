#!/bin/sh
# infiniband-diags under `rdmaemu run` (through rdmaemud): the tools get the emulated
# libibumad.so.3 on the library path and query the subnet as host ib-b of fixtures/ib.fabric;
# in the host's sandbox ibstatus reads the generated sysfs.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v ibnetdiscover >/dev/null 2>&1 || { echo "infiniband-diags not installed: skipped"; exit 77; }
. "$s/emu/daemon/tests/daemon_test_env.sh"
ib=$(cd "$s/fixtures" && pwd)/ib.fabric

run() {
	timeout 60 "$rdmaemu" run --fabric "$ib" --node ib-b -- sh -c "$1" >"$t/out" 2>"$t/err"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: '$1': exit $rc"; cat "$t/err"; fail=1; }
}

run 'ibstat -p'
[ "$(cat "$t/out")" = 0x0002c90300000b01 ] || { echo "FAIL: ibstat -p:"; cat "$t/out"; fail=1; }
run 'smpquery nodedesc 2'
[ "$(cat "$t/out")" = "Node Description:.....................ib-a mlx5_0" ] ||
	{ echo "FAIL: smpquery nodedesc 2:"; cat "$t/out"; fail=1; }
run 'ibnetdiscover'
grep -q '^# Initiated from node 0002c90300000b00 port 0002c90300000b01$' "$t/out" ||
	{ echo "FAIL: ibnetdiscover from ib-b:"; cat "$t/out"; fail=1; }
[ "$(grep -c '^Ca	1 ' "$t/out")" = 3 ] && [ "$(grep -c '^Switch	36 ' "$t/out")" = 1 ] ||
	{ echo "FAIL: ibnetdiscover's nodes:"; cat "$t/out"; fail=1; }
if daemon_test_sandboxed "$ib" ib-b; then
	run 'ibstatus'
	grep -q '^	base lid:	 0x3$' "$t/out" && grep -q '^	rate:		 40 Gb/sec (4X QDR)$' "$t/out" ||
		{ echo "FAIL: ibstatus in the sandbox:"; cat "$t/out"; fail=1; }
else
	echo "no sandbox: ibstatus not checked"
fi
exit $fail
