#!/bin/sh
# Device removal under rdmaemud: probes/cma/devrm_probe.c and devrm_probe2.c, the probes whose
# output on the reference VM (Linux 6.1 rxe, rdma-core 44) docs/cma.md records, run unchanged
# as processes of the daemon's fabric; their `rdma link delete rxe0` reaches `rdmaemu daemon
# remove-device` through an `rdma` on PATH. The lines that do not depend on time must be the
# VM's:
#   devrm_probe (one host): DEVICE_REMOVAL for the listener and the resolved id; the own rxe0
#   context without async event and still allocating; ENXIO for resolve_route on the removed
#   id; destroys 0; the device lists with rxe1 only (ibv_get_device_list and rdma_get_devices:
#   the process applied the daemon's removal before it read the event); a bind to 192.0.2.1
#   ENODEV. (The VM's `rdma link delete` also blocks until the contexts close; the emulated one
#   returns at once: its "still blocked" lines are not compared.)
#   one host (fixtures/rxe-ref.fabric): DEVICE_REMOVAL for the listener, the resolved id and
#   the UDP id, in attach order; ENXIO for leave_multicast and listen on removed ids; the
#   removed listener's port free again; the wildcard listener still taking a request, now
#   through rxe1;
#   two hosts (fixtures/rxe-ref2.fabric, two processes): B removes rxe0 under an established
#   connection and a request it read but did not accept: B gets DEVICE_REMOVAL once, A gets
#   DISCONNECTED 0 then REJECTED 28, B's accept of the read request ENXIO.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
probe1="$b/emu/daemon/tests/devrm_probe"
probe="$b/emu/daemon/tests/devrm_probe2"
. "$s/emu/daemon/tests/daemon_test_env.sh"
export RDMAEMU_UCMA_KEPT_CHECK=1 # kept answers checked against round trips (docs/daemon.md)
unset RDMAEMU_SHM RDMAEMU_TRACE

# `rdma link delete DEV` of iproute2, as the probe runs it, on the host the process is
mkdir "$t/bin"
cat >"$t/bin/rdma" <<SHIM
#!/bin/sh
[ "\$1 \$2" = "link delete" ] || { echo "rdma shim: only 'link delete DEV'" >&2; exit 2; }
exec "$rdmaemu" daemon remove-device "\$RDMAEMU_NODE" "\$3"
SHIM
chmod +x "$t/bin/rdma"
PATH="$t/bin:$PATH"
export PATH

# expect FILE LINE...: every LINE appears in FILE (timestamps stripped), in this order
expect() {
	f=$1
	shift
	sed -E 's/^t\+[0-9.]+ //' "$f" >"$f.lines"
	for want in "$@"; do
		n=$(grep -nxF -- "$want" "$f.lines" | head -1 | cut -d: -f1)
		if [ -z "$n" ]; then
			echo "FAIL: missing (in order) in $f: $want"
			fail=1
			return
		fi
		sed -i "1,${n}d" "$f.lines"
	done
}

# count FILE PATTERN N: PATTERN (grep -E, timestamps stripped) on exactly N lines
count() {
	n=$(sed -E 's/^t\+[0-9.]+ //' "$1" | grep -cE -- "$2")
	if [ "$n" -ne "$3" ]; then
		echo "FAIL: $1: '$2' on $n lines, want $3"
		fail=1
	fi
}

ref="$s/fixtures/rxe-ref.fabric"
"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; exit 1; }
timeout 60 "$rdmaemu" run --fabric "$ref" --node rxe-ref -- "$probe1" >"$t/probe1.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: devrm_probe exit $rc"; fail=1; }
expect "$t/probe1.out" \
	"event RDMA_CM_EVENT_DEVICE_REMOVAL status 0 id listener" \
	"event RDMA_CM_EVENT_DEVICE_REMOVAL status 0 id resolved" \
	"own context: no async event" \
	"alloc_pd on own context: ok errno 0" \
	"resolve_route on the removed id -1 errno 6" \
	"destroy listener 0" \
	"destroy resolved 0" \
	"close own context 0" \
	"devices now 1: rxe1" \
	"rdma_get_devices 1" \
	"bind 192.0.2.1 after removal -1 errno 19"
count "$t/probe1.out" "DEVICE_REMOVAL" 2
echo "--- devrm_probe:"
cat "$t/probe1.out"
"$rdmaemu" daemon stop >/dev/null 2>&1

"$rdmaemu" daemon start --fabric "$ref" || { echo "daemon start failed"; exit 1; }
timeout 60 "$rdmaemu" run --fabric "$ref" --node rxe-ref -- "$probe" >"$t/single.out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: single probe exit $rc"; fail=1; }
expect "$t/single.out" \
	"join on the TCP id -1 errno 22" \
	"join on the UDP id 0 errno 0" \
	"event RDMA_CM_EVENT_MULTICAST_JOIN status 0 id udp" \
	"rdma link delete rxe0" \
	"event RDMA_CM_EVENT_DEVICE_REMOVAL status 0 id listener" \
	"event RDMA_CM_EVENT_DEVICE_REMOVAL status 0 id resolved" \
	"event RDMA_CM_EVENT_DEVICE_REMOVAL status 0 id udp" \
	"no event within 3000 ms" \
	"leave_multicast on the removed id -1 errno 6" \
	"listen on the removed listener -1 errno 6" \
	"bind 0.0.0.0:7000 while the removed listener exists 0 errno 0" \
	"event RDMA_CM_EVENT_CONNECT_REQUEST status 0 id wildcard" \
	"  on the wildcard listener, device rxe1"
count "$t/single.out" "DEVICE_REMOVAL" 3
echo "--- one host:"
cat "$t/single.out"
"$rdmaemu" daemon stop >/dev/null 2>&1

ref2="$s/fixtures/rxe-ref2.fabric"
"$rdmaemu" daemon start --fabric "$ref2" || { echo "daemon start failed"; exit 1; }
RXEVM_NODE=B timeout 60 "$rdmaemu" run --fabric "$ref2" --node B -- "$probe" \
	>"$t/b.out" 2>&1 &
bpid=$!
sleep 1
RXEVM_NODE=A RXEVM_PEER=192.0.2.66 DEVRM_PROBE_DRAIN_MS=3000 \
	timeout 60 "$rdmaemu" run --fabric "$ref2" --node A -- "$probe" >"$t/a.out" 2>&1
arc=$?
wait $bpid
brc=$?
[ $arc -eq 0 ] && [ $brc -eq 0 ] || { echo "FAIL: two-host probe exits A $arc B $brc"; fail=1; }
expect "$t/b.out" \
	"bind 0 listen 0" \
	"accept 0" \
	"rdma link delete rxe0" \
	"event RDMA_CM_EVENT_DEVICE_REMOVAL status 0 id established" \
	"accept the pending one after removal -1 errno 6"
count "$t/b.out" "DEVICE_REMOVAL" 1
expect "$t/a.out" \
	"establish 0" \
	"event RDMA_CM_EVENT_DISCONNECTED status 0 id established" \
	"event RDMA_CM_EVENT_REJECTED status 28 id pending"
echo "--- two hosts, B:"
cat "$t/b.out"
echo "--- two hosts, A:"
cat "$t/a.out"
exit $fail
