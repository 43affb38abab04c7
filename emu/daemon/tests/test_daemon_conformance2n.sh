#!/bin/sh
# rdmaemu-conformance --target system on emulated hosts under `rdmaemu run`: the two-node rows
# (@2N) split between hosts A and B of fixtures/rxe-ref2.fabric as `scripts/rxe-vm record --two`
# splits them between two kernel VMs, the passive halves on B (--passive), the active halves on
# A (--peer), each in processes of its own host. Each half's verdicts, row by row (ok, not ok,
# skip), must be the golden recording's (fixtures/golden/rxe2/A and B), both exit 0, and the
# header names the emulated host. Outside `rdmaemu run`, the emulator's libraries with
# --target system stay an error (exit status 2). (make check-interop runs the same split with
# a kernel rxe VM as one of the hosts: docs/mixed-fabric.md.)
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
# every answer a process takes from those the daemon pushed with an event is checked
export RDMAEMU_UCMA_KEPT_CHECK=1
conf=$(cd "$b/conformance" && pwd)/rdmaemu-conformance
fab=$(cd "$s/fixtures" && pwd)/rxe-ref2.fabric
golden=$(cd "$s/fixtures/golden/rxe2" && pwd)

# "ID ok|not ok|skip" for each TAP line of file $1 (awk without the sanitizer build's
# preloaded ASan runtime, whose leak check fails the tool itself)
verdicts() {
	LD_PRELOAD= awk '/^(not )?ok [0-9]+ - / {
		v = ($0 ~ /^not ok/) ? "not ok" : ($0 ~ / # SKIP /) ? "skip" : "ok"
		sub(/^(not )?ok [0-9]+ - /, ""); print $1, v }' "$1"
}

"$rdmaemu" daemon start --fabric "$fab" >/dev/null 2>&1 ||
	{ echo "daemon start failed"; cat "$t/rdmaemud.log"; exit 1; }
# no timeout(1): $! is the program (rdmaemu run execs it), killed by cleanup if need be
"$rdmaemu" run --fabric "$fab" --node B -- "$conf" --target system --passive \
	--local 192.0.2.66 --case '*@2N' --tap "$t/B.tap" >"$t/B.out" 2>&1 &
bpid=$!
lpids=$bpid
if ! daemon_test_wait_status 'rdma_cm file .* listen [1-9]'; then
	echo "FAIL: the passive halves never listened:"; cat "$t/B.out"
	exit 1
fi
timeout 300 "$rdmaemu" run --fabric "$fab" --node A -- "$conf" --target system \
	--local 192.0.2.65 --peer 192.0.2.66 --case '*@2N' --tap "$t/A.tap" >"$t/A.out" 2>&1
arc=$?
wait $bpid
brc=$?
lpids=
for h in A B; do
	if [ "$h" = A ]; then rc=$arc; else rc=$brc; fi
	verdicts "$golden/$h/system.tap" >"$t/$h.want"
	verdicts "$t/$h.tap" >"$t/$h.got" 2>/dev/null
	if [ ! -s "$t/$h.got" ] || ! diff "$t/$h.want" "$t/$h.got" >"$t/$h.diff"; then
		echo "FAIL: host $h's verdicts are not rxe2/$h's (< golden, > here):"
		cat "$t/$h.diff"; cat "$t/$h.out"; fail=1
	else
		echo "ok: host $h: $(grep '^conformance: ' "$t/$h.out"), every row as rxe2/$h's"
	fi
	[ "$rc" = 0 ] || { echo "FAIL: host $h's half exited $rc"; fail=1; }
	grep -q "^system: emulated host $h of rdmaemud (rdmaemu run), emulator " "$t/$h.out" ||
		{ echo "FAIL: host $h's header does not name it:"; head -n 6 "$t/$h.out"; fail=1; }
done

# the emulator's libraries without `rdmaemu run` (no RDMAEMU_DAEMON): still refused
LD_LIBRARY_PATH="$b/lib/.libs:$b/emu/verbs/.libs:$b/emu/.libs" "$conf" --target system \
	--case SYM-1 >"$t/refused.out" 2>&1
rc=$?
if [ "$rc" = 2 ] && grep -q "^rdmaemu-conformance: --target system, but the emulator's librdmacm is loaded (.*) outside \`rdmaemu run\`" "$t/refused.out"; then
	echo "ok: --target system with the emulator's libraries outside rdmaemu run: exit 2"
else
	echo "FAIL: outside rdmaemu run: exit $rc, want 2 and the reason:"; cat "$t/refused.out"
	fail=1
fi
exit $fail
