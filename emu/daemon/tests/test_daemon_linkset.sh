#!/bin/sh
# `ip link set` on a host of the daemon's fabric (docs/daemon.md "Link state"), from the
# command line (`rdmaemu daemon link-set`) and from a process (rdmaemu_ctl_link_set): both are
# applied by the daemon's engine, and the host's processes read their RoCE port as rxe shows
# it (measured on the reference VM: PORT_DOWN with physical state Disabled (3) while the
# netdev is down, PORT_ACTIVE and LinkUp (5) while it is up):
#   - a process's own call returns with its own port changed; an unknown netdev is ENOENT;
#   - a process attached later learns the state from WELCOME;
#   - a running process sees the command line's change (LINK_STATE);
#   - the command's usage and errors: 2 for bad usage, 1 for an unknown netdev.
# What a down link does to RoCE traffic is test_cma_linkdown's (in one process) and
# test_daemon_timeouts.sh's (the probe measured on the VMs, `make check-timeouts`).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
prog="$b/emu/daemon/tests/link_set"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE
ref2="$s/fixtures/rxe-ref2.fabric"
active="port 1 state 4 (active) phys_state 5"
down="port 1 state 1 (down) phys_state 3"

# run B ARG: the program as a process of host B
run() {
	timeout 60 "$rdmaemu" run --no-sandbox --fabric "$ref2" --node "$1" -- "$prog" "$2" 2>&1
}

# check WHAT WANT GOT
check() {
	if [ "$2" != "$3" ]; then
		printf 'FAIL: %s:\n--- want\n%s\n--- got\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

"$rdmaemu" daemon start --fabric "$ref2" || { echo "daemon start failed"; exit 1; }
check "B at the start" "$active" "$(run B query)"
check "B takes eth0 down itself" "link_set eth0 down -> 0 errno=0
link_set eth9 down -> -1 errno=2
$down" "$(run B down)"
check "a process of B attached later" "$down" "$(run B query)"
check "A's port" "$active" "$(run A query)"

# a process of B running while the command line takes eth0 up
timeout 60 "$rdmaemu" run --no-sandbox --fabric "$ref2" --node B -- "$prog" watch \
	>"$t/watch" 2>&1 &
wpid=$!
lpids=$wpid
n=0
until grep -qx ready "$t/watch" 2>/dev/null; do
	n=$((n + 1))
	[ $n -gt 300 ] && break
	sleep 0.1
done
"$rdmaemu" daemon link-set B eth0 up || { echo "FAIL: link-set B eth0 up: exit $?"; fail=1; }
wait $wpid
lpids=
check "a running process of B" "$down
ready
$active" "$(cat "$t/watch")"
check "B after the command" "$active" "$(run B query)"

"$rdmaemu" daemon link-set B eth9 down 2>"$t/err"
check "link-set of an unknown netdev" "1 rdmaemu: link-set B eth9 down: No such file or directory" \
	"$? $(cat "$t/err")"
"$rdmaemu" daemon link-set B eth0 sideways 2>/dev/null
check "link-set usage" 2 $?
"$rdmaemu" daemon link-set B eth0 up
check "link-set as it is" 0 $?
exit $fail
