#!/bin/sh
# Who may reach the daemon and as whom (docs/reliability.md "Security rules"), each rule shown
# by its refusal:
#   - the runtime directory: a symlink, group or other access, another owner: `rdmaemu run`
#     and `rdmaemu daemon start` refuse it, exit 1, with one message; checked on every start;
#   - the socket: not a socket of the user's with mode 0600 (a symlink, mode 0660, owned by
#     another uid) is refused and not replaced; a daemon of another uid behind a socket of the
#     user's is refused by its credentials (SO_PEERCRED);
#   - a connection of another uid is closed by the daemon (reached with CAP_DAC_OVERRIDE, as
#     nobody; without it the modes already say EACCES);
#   - HELLO and UCMA_OPEN claiming another pid: EPERM; a process in host A's sandbox claiming
#     host B in HELLO, UCMA_OPEN or TAP_ATTACH: EPERM; its own pid and host: answered.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
probe=$(cd "$b/emu/daemon/tests" && pwd)/claim_probe
ref2=$(cd "$s/fixtures" && pwd)/rxe-ref2.fabric
sock="$t/rdmaemud.sock"

check() { # NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		echo "ok $1"
	else
		printf 'FAIL %s:\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

# refused DIR NAME: `rdmaemu run` and `rdmaemu daemon start` with runtime directory DIR exit 1
# saying why, and start nothing
refused_dir() {
	out=$(RDMAEMU_RUNTIME_DIR=$1 "$rdmaemu" run -- echo ran 2>&1; echo "exit $?")
	check "run: $2" "rdmaemu: runtime directory $1 is not a directory of yours with mode 0700: refused
exit 1" "$out"
	out=$(RDMAEMU_RUNTIME_DIR=$1 "$rdmaemu" daemon start 2>&1; echo "exit $?")
	check "daemon start: $2" "rdmaemu: runtime directory $1 is not a directory of yours with mode 0700: refused
exit 1" "$out"
}

mkdir -m 0700 "$t/real"
ln -s "$t/real" "$t/link"
refused_dir "$t/link" "a symlink to a directory of the user's"
mkdir -m 0750 "$t/group"
refused_dir "$t/group" "mode 0750"
mkdir -m 0701 "$t/other"
refused_dir "$t/other" "mode 0701"
if [ "$(id -u)" = 0 ]; then
	mkdir -m 0700 "$t/nobody" && chown 65534 "$t/nobody"
	refused_dir "$t/nobody" "owned by uid 65534"
fi
# on every start: the directory that served becomes group-readable, the next start refuses it
RDMAEMU_RUNTIME_DIR=$t/real "$rdmaemu" run -- true >/dev/null 2>&1
RDMAEMU_RUNTIME_DIR=$t/real "$rdmaemu" daemon stop >/dev/null 2>&1
chmod 0750 "$t/real"
refused_dir "$t/real" "a directory made 0750 after a run"
rm -rf "$t/real" "$t/link" "$t/group" "$t/other" "$t/nobody"

# the socket
"$rdmaemu" daemon start >/dev/null 2>&1 || { echo "FAIL: daemon start"; exit 1; }
check "socket mode" "srw-------" "$(stat -c %A "$sock")"
chmod 0660 "$sock"
out=$("$rdmaemu" run -- echo ran 2>&1; echo "exit $?")
check "run: socket mode 0660" "rdmaemu: $sock is not a socket of yours with mode 0600: refused
exit 1" "$out"
out=$("$rdmaemu" daemon start 2>&1; echo "exit $?")
check "daemon start: socket mode 0660 (not replaced)" "rdmaemu: $sock is not a socket of yours with mode 0600: refused
exit 1" "$out"
chmod 0600 "$sock"
check "the daemon still serves" "ran" "$("$rdmaemu" run -- echo ran 2>&1)"

# the daemon's own checks: claims in its protocol (a bare socket, as a lying process would)
inrun() { "$rdmaemu" run -- sh -c "\"$probe\" \"\$RDMAEMU_DAEMON\" $*" 2>&1; }
check "HELLO, own pid" "HELLO rxe-ref self: 0" "$(inrun HELLO rxe-ref self)"
check "HELLO, pid 1" "HELLO rxe-ref 1: EPERM" "$(inrun HELLO rxe-ref 1)"
check "UCMA_OPEN, own pid" "UCMA_OPEN rxe-ref self: 0" "$(inrun UCMA_OPEN rxe-ref self)"
check "UCMA_OPEN, pid 1" "UCMA_OPEN rxe-ref 1: EPERM" "$(inrun UCMA_OPEN rxe-ref 1)"
[ "$(grep -c '^rdmaemud: pid [0-9]* claims pid 1 in its HELLO: refused$' "$t/rdmaemud.log")" = 1 ] ||
	{ echo "FAIL: the log's HELLO refusal"; fail=1; }
[ "$(grep -c '^rdmaemud: pid [0-9]* claims pid 1 in its UCMA_OPEN: refused$' "$t/rdmaemud.log")" = 1 ] ||
	{ echo "FAIL: the log's UCMA_OPEN refusal"; fail=1; }

# another uid: the modes stop it; past them (CAP_DAC_OVERRIDE), the daemon's credential check.
# GCOV_PREFIX: a coverage build's counters belong to root; the other uid's would be refused
# ("profiling: ... Cannot open" in the outputs compared here): they go to a directory of its own
GCOV_PREFIX=$(mktemp -d) && chmod 0777 "$GCOV_PREFIX" && export GCOV_PREFIX
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$probe"; then
	check "uid 65534: the socket's modes" "connect: EACCES" \
		"$(setpriv --reuid=65534 --regid=65534 --clear-groups "$probe" "$sock" HELLO rxe-ref self 2>&1)"
	check "uid 65534 with CAP_DAC_OVERRIDE: closed" "closed" \
		"$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override \
			--ambient-caps=+dac_override "$probe" "$sock" HELLO rxe-ref self 2>&1)"
	[ "$(grep -c '^rdmaemud: pid [0-9]* of uid 65534 connected; this daemon serves uid 0 only: refused$' \
		"$t/rdmaemud.log")" = 1 ] || { echo "FAIL: the log's uid refusal"; fail=1; }
	"$rdmaemu" daemon stop >/dev/null 2>&1
	# a daemon of uid 65534 behind a socket of the user's
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override \
		--ambient-caps=+dac_override "$b/emu/daemon/rdmaemud" --socket "$sock" \
		>"$t/other.log" 2>&1 &
	opid=$!
	lpids="$lpids $opid"
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	out=$("$rdmaemu" run -- echo ran 2>&1; echo "exit $?")
	check "run: a socket of uid 65534" "rdmaemu: $sock is not a socket of yours with mode 0600: refused
exit 1" "$out"
	chown 0 "$sock"
	out=$("$rdmaemu" run -- echo ran 2>&1; echo "exit $?")
	check "run: a daemon of uid 65534 on the user's socket" "rdmaemu: the daemon on $sock runs as uid 65534, not as uid 0: refused
exit 1" "$out"
	kill "$opid"
	wait "$opid" 2>/dev/null
	rm -f "$sock"
else
	echo "not root or no setpriv: the other-uid checks are skipped"
fi
"$rdmaemu" daemon stop >/dev/null 2>&1
rm -rf "$GCOV_PREFIX"
unset GCOV_PREFIX

# hosts: a process in A's sandbox speaks as A only
"$rdmaemu" daemon start --fabric "$ref2" >/dev/null 2>&1 || { echo "FAIL: daemon start"; exit 1; }
if daemon_test_sandboxed "$ref2" A; then
	inA() { "$rdmaemu" run --fabric "$ref2" --node A -- sh -c "\"$probe\" \"\$RDMAEMU_DAEMON\" $*" 2>&1; }
	check "A: HELLO A" "HELLO A self: 0" "$(inA HELLO A self)"
	check "A: HELLO B" "HELLO B self: EPERM" "$(inA HELLO B self)"
	check "A: UCMA_OPEN B" "UCMA_OPEN B self: EPERM" "$(inA UCMA_OPEN B self)"
	check "A: TAP_ATTACH B" "TAP_ATTACH B self: EPERM" "$(inA TAP_ATTACH B self)"
	# its own host's claim passes; the tap is the sandbox keeper's already
	check "A: TAP_ATTACH A" "TAP_ATTACH A self: EBUSY" "$(inA TAP_ATTACH A self)"
	for what in HELLO UCMA_OPEN TAP_ATTACH; do
		[ "$(grep -c "^rdmaemud: pid [0-9]* runs in the sandbox of host A and claims host B in its $what: refused\$" \
			"$t/rdmaemud.log")" = 1 ] || { echo "FAIL: the log's $what host refusal"; fail=1; }
	done
else
	echo "no sandbox here: the host checks are skipped"
fi
exit $fail
