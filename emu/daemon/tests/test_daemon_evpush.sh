#!/bin/sh
# Push files (protocol 6, docs/daemon.md "rdma_cm files"): evpush_probe, one process of the
# built-in fabric under rdmaemud, checks with exact values that
#   events the daemon queues while the process sleeps outside the library make the channel's
#   fd readable (poll) and are read in queue order; O_NONBLOCK and nothing left: EAGAIN;
#   DESTROY_ID with its event pushed and unread: events_reported 0, the event gone (fd not
#   readable, EAGAIN), the other id's event still there; with it read: 1;
#   MIGRATE_ID with two unread events of the id and one of another id between them: both move
#   to the other file in order, the source keeps the other one, both fds readable;
#   events_reported 0 (1 when one was read first); and back the other way;
#   LEAVE_MCAST with the join unread: events_reported 0 and the event gone; read: 1;
#   two threads asleep in GET_EVENT on one file while a third writes the commands: 20 events,
#   each read exactly once;
#   (a run of its own) DESTROY_ID right as each of 50 ids' events comes: none read, the fd
#   not readable after, a later event read, the file kept;
#   (runs of their own) RESOLVE_IP verdicts given and taken back; an ACCEPT verdict forgotten
#   when the request's peer gives up first (EINVAL); (ring_probe) a client that breaks its
#   command ring in any of 7 ways is closed, and the daemon serves on.
# The process's RDMAEMU_TRACE=ucmalink line says how many events the daemon pushed: 37 (2 +
# 2 + 9, of them 3 pushed again to the file a migration moved them to, + 2 + 22).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
probe="$b/emu/daemon/tests/evpush_probe"
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_SHM RDMAEMU_TRACE
export RDMAEMU_UCMA_KEPT_CHECK=1 # kept answers checked against round trips (docs/daemon.md)

RDMAEMU_TRACE=ucmalink timeout 60 "$rdmaemu" run -- "$probe" >"$t/out" 2>&1
rc=$?
cat "$t/out"
[ $rc -eq 0 ] || { echo "FAIL: evpush_probe exit $rc"; fail=1; }
grep -v '^rdmaemu: ucmalink: ' "$t/out" >"$t/lines"
cat >"$t/want" <<'WANT'
ok order: 2 events pushed while outside the library, read in order
ok destroy: events_reported 0 with the event unread (dropped), 1 read
ok migrate: unread events move in order, the source keeps the rest
ok leave: events_reported 0 with the join unread (dropped), 1 read
ok threads: 20 events, each read once by one of two blocked readers
WANT
cmp -s "$t/want" "$t/lines" || { echo "FAIL: output differs:"; diff "$t/want" "$t/lines"; fail=1; }
# the commands it wrote (none reads an event), the events pushed, no QUERY to keep. Posted
# (protocol 7): every CREATE_ID (spare handles), the DESTROY_IDs of ids whose events the
# process counted (3 go as round trips: the migrated ids and the multicast member), the
# RESOLVE_ROUTE whose id's ADDR_RESOLVED was read with its verdict, the RESOLVE_IPs of fresh
# ids once a round trip brought the verdict for their port space (3 ask: the first TCP one,
# the first UDP one, the next TCP one)
rts='round trips 15: DESTROY_ID 3 BIND_IP 1 RESOLVE_IP 3 RESOLVE_ROUTE 1'
rts="$rts JOIN_IP_MCAST 2 LEAVE_MCAST 2 MIGRATE_ID 3;"
rts="$rts posted 65: CREATE_ID 31 DESTROY_ID 6 RESOLVE_IP 27 RESOLVE_ROUTE 1;"
rts="$rts events pushed 37; kept answers used 0; files 3, 3 with the sent count"
grep -Eq "^rdmaemu: ucmalink: pid [0-9]+ $rts\$" "$t/out" ||
	{ echo "FAIL: round trips / events pushed:"; grep ucmalink "$t/out"; fail=1; }
# evpush_probe MODE as a process of its own (output in $t/MODE, its ucmalink line included):
# its ok line must be "ok MODE: LINE"
probe_mode() {
	RDMAEMU_TRACE=ucmalink timeout 60 "$rdmaemu" run -- "$probe" "$1" >"$t/$1" 2>&1 ||
		{ echo "FAIL: evpush_probe $1 exit $?"; fail=1; }
	cat "$t/$1"
	grep -qx "ok $1: $2" "$t/$1" || { echo "FAIL: $1"; fail=1; }
}
# DESTROY_ID as the id's event comes (posted: the process drops the event itself)
probe_mode race '50 ids destroyed as their events come, none read'
# RESOLVE_IP on fresh ids posted on the daemon's verdict (docs/daemon.md "Posted commands"):
# ids 1 and 3 ask (the verdict comes with the answer; 3 after a device removal took it
# back), 4 asks (its TOS was set), 2 and 5 are posted
probe_mode verdict '5 ids resolved, 2 posted, all resolved in order'
rts='round trips 4: RESOLVE_IP 3 SET_OPTION 1; posted 12: CREATE_ID 5 DESTROY_ID 5'
rts="$rts RESOLVE_IP 2; events pushed 5; kept answers used 0; files 2, 2 with the sent count"
grep -Eq "^rdmaemu: ucmalink: pid [0-9]+ $rts\$" "$t/verdict" ||
	{ echo "FAIL: verdict round trips"; fail=1; }
# protocol 12: a RESOLVE_IP that asks gets its answer and the verdict in one pass of the
# daemon, so they come as one bundle (UCMA_BUNDLE), taken whole and in order
grep -Eq '^rdmaemu: ucmalink: pid [0-9]+ bundles [1-9][0-9]* holding [0-9]+ messages; socket messages [0-9]+$' \
	"$t/verdict" || { echo "FAIL: verdict: no bundle"; fail=1; }
# an ACCEPT verdict forgotten when the request's peer gives up (its event is dropped: not
# accepted yet): the ACCEPT asks and fails as the kernel's does
probe_mode forget 'accept of a request its peer gave up: EINVAL'
grep -Eq '^rdmaemu: ucmalink: pid [0-9]+ round trips .* ACCEPT 1;' "$t/forget" ||
	{ echo "FAIL: forget: the ACCEPT did not ask"; fail=1; }
# a client that breaks its command ring (protocol 11) is closed and the daemon serves on:
# ring_probe breaks 7 rings, one way each, and opens a file after them; the log says why each
# connection went
timeout 60 "$rdmaemu" run -- "$b/emu/daemon/tests/ring_probe" >"$t/ring" 2>&1 ||
	{ echo "FAIL: ring_probe exit $?"; fail=1; }
cat "$t/ring"
grep -qx 'ok ring: 7 broken rings closed, the daemon serves on' "$t/ring" ||
	{ echo "FAIL: ring"; fail=1; }
for why in "ring head 262160 is out of its ring" "ring head 24 is out of its ring" \
	"ring holds a broken record (type 23, 64 bytes)" \
	"ring holds a broken record (type 65535, 0 bytes)" \
	"ring holds a broken record (type 8, 4097 bytes)" "unknown record type 4 in the ring" \
	"UCMA_CONSUMED 7 (1 events) is not the head of its queue"; do
	[ "$(grep -cF "$why" "$t/rdmaemud.log")" = 1 ] ||
		{ echo "FAIL: the daemon's log does not say once: $why"; fail=1; }
done
# the daemon kept no file of the process
"$rdmaemu" daemon status | grep -q '^rdma_cm files 0$' ||
	{ echo "FAIL: files left:"; "$rdmaemu" daemon status; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
