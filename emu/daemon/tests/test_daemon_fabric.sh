#!/bin/sh
# One daemon serves one fabric: `rdmaemu run` for another fabric than the running daemon's
# refuses to start the program, exit 1, and says which fabric holds the daemon and how to run
# beside it; the daemon's own fabric still runs, and after `rdmaemu daemon stop` the other
# fabric starts a daemon of its own. A second runtime directory runs a second fabric beside
# the first at the same time.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
ref2=$(cd "$s/fixtures" && pwd)/rxe-ref2.fabric
sock="$t/rdmaemud.sock"

# expect NAME RC: the last command's exit status is RC
expect() {
	if [ "$2" -ne "$3" ]; then
		echo "FAIL: $1: exit $2, want $3"; sed 's/^/  /' "$t/err"; fail=1
	else
		echo "ok: $1"
	fi
}

"$rdmaemu" daemon start >/dev/null 2>"$t/err"
expect "daemon start (built-in fabric)" $? 0
timeout 60 "$rdmaemu" run --fabric "$ref2" --node A -- sh -c 'echo ran' >"$t/out" 2>"$t/err"
expect "run --fabric rxe-ref2 beside a built-in daemon" $? 1
want1="rdmaemu: the rdmaemud on $sock runs fabric (built-in), not $ref2: one daemon serves one fabric."
want2="rdmaemu: stop it (\`rdmaemu daemon stop\`), or run this fabric beside it with a runtime directory of its own (RDMAEMU_RUNTIME_DIR=DIR rdmaemu run ...)"
if [ "$(sed -n 1p "$t/err")" != "$want1" ] || [ "$(sed -n 2p "$t/err")" != "$want2" ] ||
	[ "$(wc -l <"$t/err")" -ne 2 ] || [ -s "$t/out" ]; then
	echo "FAIL: the refusal's message"; sed 's/^/  /' "$t/err" "$t/out"; fail=1
fi
timeout 60 "$rdmaemu" run -- ibv_devices >"$t/out" 2>"$t/err"
expect "run on the daemon's own fabric" $? 0
grep -Eq '^[[:space:]]*rxe0[[:space:]]+000000fffe000101$' "$t/out" || { echo "FAIL: built-in rxe0"; fail=1; }

# a second fabric beside the first, in a runtime directory of its own
t2=$(mktemp -d) || exit 99
RDMAEMU_RUNTIME_DIR=$t2 timeout 60 "$rdmaemu" run --fabric "$ref2" --node B -- ibv_devices \
	>"$t/out" 2>"$t/err"
expect "rxe-ref2 beside it (RDMAEMU_RUNTIME_DIR)" $? 0
grep -Eq '^[[:space:]]*rxe0[[:space:]]+000000fffe000202$' "$t/out" || { echo "FAIL: rxe-ref2 B's rxe0"; fail=1; }
RDMAEMU_RUNTIME_DIR=$t2 "$rdmaemu" daemon stop >/dev/null 2>&1
rm -rf "$t2"

# after a stop, the other fabric starts its own daemon here
"$rdmaemu" daemon stop >/dev/null 2>"$t/err"
expect "daemon stop" $? 0
timeout 60 "$rdmaemu" run --fabric "$ref2" --node A -- ibv_devices >"$t/out" 2>"$t/err"
expect "run --fabric rxe-ref2 after the stop" $? 0
grep -Eq '^[[:space:]]*rxe0[[:space:]]+000000fffe000201$' "$t/out" || { echo "FAIL: rxe-ref2 A's rxe0"; fail=1; }
exit $fail
