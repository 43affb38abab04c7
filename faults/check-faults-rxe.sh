#!/bin/sh
# make check-faults-rxe: the kill and device-removal cells of the fault matrix (docs/faults.md)
# on the real stack: kernel rxe in the two VMs of `scripts/rxe-vm run --two` (A = 192.0.2.65
# runs the clients, B = 192.0.2.66 the servers; faults/rxe-cells.sh drives both). The same
# faults/fault_xfer, FAULT_XFER_STOP points and kill -9 as faults/check-faults.sh, and for
# device removal `rdma link delete rxe0` on the server's VM; each cell is checked against the
# emulator's oracle, and its line says what the real stack did:
#   "ok CELL: ... [kernel rxe (ACCEL)]" or "FAIL CELL: ... [kernel rxe (ACCEL)]",
# then "faults-rxe: N passed, M failed (S s)". Exit 77 where no VM can run.
# FAULTS_ONLY=REGEX runs only the cells whose names match it (grep -E). FAULTS_RXE_OUT=DIR
# keeps every side's output (DIR/A/CELL.srv, .cli, ... and their .rc) and the VMs' console
# (the kernels' messages up to KERN_INFO among them).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/faults/kill_oracle.sh"
vm=$s/scripts/rxe-vm
xfer=$b/faults/fault_xfer
[ -x "$xfer" ] || { echo "check-faults-rxe: no $xfer (make faults/fault_xfer)"; exit 1; }
if ! "$vm" check-usable; then
	echo "check-faults-rxe: no VM can run here (scripts/rxe-vm status): skipped"
	exit 77
fi
accel=$("$vm" status 2>/dev/null | sed -n 's/^accelerator: \([a-z]*\).*/\1/p' | tr '[:lower:]' '[:upper:]')
mark="[kernel rxe (${accel:-?})]"
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
out=${FAULTS_RXE_OUT:-$t/out}
# the guests' files of an earlier run would mix with this one's
rm -rf "$out/A" "$out/B"
mkdir -p "$out"

t0=$(date +%s)
# shellcheck disable=SC2016 # $1 expands in the guest
nice -n 5 "$vm" run --two --copy "$xfer" --copy "$s/faults/rxe-cells.sh" --out "$out" \
	--timeout 1500 --b-cmd 'dmesg -n 7; exec nc -ll -p 9000 -e /bin/sh' -- \
	/bin/sh -c 'dmesg -n 7; exec /bin/sh /opt/rdmaemu/rxe-cells.sh drive "$1"' sh \
	"${FAULTS_ONLY:-}" >"$out/console.log" 2>&1
vrc=$?
t1=$(date +%s)
o=$out/A
passed=0 failed=0
ok() { echo "ok $* $mark"; passed=$((passed + 1)); }
bad() { echo "FAIL $* $mark"; failed=$((failed + 1)); }
want() { [ -z "${FAULTS_ONLY:-}" ] || echo "$1" | grep -Eq "$FAULTS_ONLY"; }
# rc FILE: the exit status the guest recorded for a side; -1 if it had not ended or left none
rc() {
	r=$(cat "$o/$1.rc" 2>/dev/null)
	case $r in ''|*[!0-9]*) echo -1 ;; *) echo "$r" ;; esac
}
last() { tail -n 1 "$o/$1" 2>/dev/null; }
# again NAME: the new transfer after the fault ran to its end (100 messages in order)
again() {
	[ "$(rc "$1.srv2")" = 0 ] && [ "$(rc "$1.cli2")" = 0 ] &&
		grep -qx "server: rc: 100 messages in order, every byte checked" "$o/$1.srv2"
}

if [ $vrc -ne 0 ] || [ ! -d "$o" ]; then
	bad "the VMs: rxe-vm exit $vrc: $(tail -n 3 "$out/console.log" | tr '\n' ' ')"
fi

# kill -9 of either side in a long transfer: the survivor's DISCONNECTED or completion error
for victim in client server; do
	name=rc-kill-$victim
	want "$name" || continue
	if [ $victim = client ]; then other=$(last $name.srv) orc=$(rc $name.srv); else other=$(last $name.cli) orc=$(rc $name.cli); fi
	case $other in
	*": event: RDMA_CM_EVENT_DISCONNECTED status 0 after "*|*": error: transport retry counter exceeded after "*|*": error: Work Request Flushed Error after "*) good=1 ;;
	*) good=0 ;;
	esac
	again $name
	a=$?
	if [ $good = 1 ] && [ "$orc" -ge 3 ] && [ $a -eq 0 ]; then
		ok "$name: the survivor: $(echo "$other" | sed 's/ after [0-9]* messages$//'); a new transfer afterwards: 100 in order"
	else
		bad "$name: the survivor exit $orc: $other; a new transfer afterwards: exit $a"
	fi
done

# kill -9 at a point of connecting or disconnecting (faults/check-faults.sh has the oracles)
for point in connect disconnect; do
	for victim in client server; do
		name=rc-kill-$victim-at-$point
		want "$name" || continue
		if [ $victim = client ]; then
			orc=$(rc $name.srv)
			if [ -f "$o/$name.next" ]; then
				other="next client: $(last $name.srv)"
			else
				other=$(last $name.srv)
			fi
		else
			orc=$(rc $name.cli) other=$(last $name.cli)
		fi
		kill_point_verdict "$victim" "$point" "$o/$name.srv"
		again $name
		a=$?
		if [ "$good" = 1 ] && [ $a -eq 0 ]; then
			ok "$name: the survivor: $other (exit $orc); a new transfer afterwards: 100 in order"
		else
			bad "$name: the survivor exit $orc: $other; a new transfer afterwards: exit $a"
		fi
	done
done

# Device removal after 500 messages: the server's DEVICE_REMOVAL, the client's DISCONNECTED or
# retry error after no more messages; the client's host (A) keeps working; and, which the
# emulator has no counterpart for, the device added again on B carries a new transfer
name=rc-device-removal
if want "$name"; then
	src=$(rc $name.srv) crc=$(rc $name.cli)
	ks=$(sed -n 's/^server: event: RDMA_CM_EVENT_DEVICE_REMOVAL status 0 after \([0-9]*\) messages$/\1/p' "$o/$name.srv" 2>/dev/null)
	kc=$(sed -n -e 's/^client: event: RDMA_CM_EVENT_DISCONNECTED status 0 after \([0-9]*\) messages$/\1/p' \
		-e 's/^client: error: transport retry counter exceeded after \([0-9]*\) messages$/\1/p' "$o/$name.cli" 2>/dev/null)
	again $name
	a=$?
	if [ "$src" = 4 ] && [ -n "$ks" ] && [ "$ks" -ge 500 ] && { [ "$crc" = 3 ] || [ "$crc" = 4 ]; } &&
		[ -n "$kc" ] && [ "$kc" -le "$ks" ] && [ $a -eq 0 ]; then
		ok "$name: after $ks messages the server's DEVICE_REMOVAL, $(last $name.cli | sed 's/^client: //'); a transfer within A afterwards: 100 in order"
	else
		bad "$name: server exit $src: $(last $name.srv); client exit $crc: $(last $name.cli); a transfer within A afterwards: exit $a"
	fi
	again $name-readd
	a=$?
	if [ $a -eq 0 ]; then
		ok "$name-readd: rxe0 added again on B (rdma link add): a new transfer from A: 100 in order"
	else
		bad "$name-readd: rxe0 added again on B: a new transfer from A: exit $a"
	fi
fi

[ $failed -eq 0 ] || sed -n 's/^A: //p' "$out/console.log"
echo "faults-rxe: $passed passed, $failed failed ($((t1 - t0)) s)"
[ $failed -eq 0 ]
