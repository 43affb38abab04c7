#!/bin/sh
# Host sandboxes of `rdmaemu run --node X` (emu/host/sandbox.h, docs/host.md) on
# fixtures/rxe-ref2.fabric (A = 192.0.2.65/28, B = 192.0.2.66/28 on eth0) and
# fixtures/rxe-ref.fabric (d0 = 192.0.2.1/28 with arp=off, s0 = 192.0.2.17/28):
#   - the host's netdevs as the kernel shows them (names, MACs, MTU, flags, addresses, routes),
#     and no route to anything else: not to this machine's network (its gateway is 192.0.2.1),
#     not to the internet;
#   - /sys/class/infiniband and /dev/infiniband of the host's devices, and a /dev/shm of its own;
#   - TCP from B to A's address, carried by the daemon's wire: in its capture, both ways;
#   - a second program of the host joins the same sandbox; the sandbox goes when its last
#     process has gone (also one killed with SIGKILL), and leaves nothing mounted here.
# Where namespaces are not permitted, `rdmaemu run` says so and the test is skipped.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
probe="$b/emu/host/tests/tcp_probe"
ref="$s/fixtures/rxe-ref.fabric"
ref2="$s/fixtures/rxe-ref2.fabric"
outside_mounts=$(wc -l </proc/self/mountinfo)

check() { # NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		echo "ok $1"
	else
		printf 'FAIL %s:\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

daemon_test_sandbox_start "$ref2" A "$t"

inA() { "$rdmaemu" run --fabric "$ref2" --node A -- "$@" 2>&1; }

check "A's links" "lo               UNKNOWN        00:00:00:00:00:00 <LOOPBACK,UP,LOWER_UP> 
eth0             UP             02:00:00:00:02:01 <BROADCAST,MULTICAST,UP,LOWER_UP> " "$(inA ip -br link)"
check "A's addresses" "lo               UNKNOWN        127.0.0.1/8 ::1/128 
eth0             UP             192.0.2.65/28 fe80::ff:fe00:201/64 " "$(inA ip -br addr)"
check "A's routes" "192.0.2.64/28 dev eth0 proto kernel scope link src 192.0.2.65 " "$(inA ip route)"
check "A's /sys/class/net" "eth0 1500 02:00:00:00:02:01
lo" "$(inA sh -c 'cd /sys/class/net && for n in *; do
	[ $n = lo ] && echo lo || echo "$n $(cat $n/mtu) $(cat $n/address)"; done')"
# this machine's gateway, the internet, the other reference subnet: unreachable
check "no route out" "RTNETLINK answers: Network is unreachable
RTNETLINK answers: Network is unreachable
RTNETLINK answers: Network is unreachable" "$(inA sh -c 'ip route get 192.0.2.1; ip route get 8.8.8.8; ip -6 route get 2001:db8::1')"
check "A's RDMA files" "rxe0
char uverbs0
char rdma_cm" "$(inA sh -c 'ls /sys/class/infiniband; for f in uverbs0 rdma_cm; do
	[ -c /dev/infiniband/$f ] && echo "char $f"; done')"

# the host's own /dev/shm: POSIX shared memory and named semaphores of the machine (one a
# killed process left held) are not the host's, and the host's stay in it
marker=/dev/shm/rdmaemu-sandbox-test.$$
: >"$marker"
check "A's /dev/shm" "1777
tmpfs
own" "$(inA sh -c 'stat -c %a /dev/shm; stat -f -c %T /dev/shm; ls -A /dev/shm; : >/dev/shm/own && ls /dev/shm')"
check "the machine's /dev/shm untouched" "yes no" \
	"$([ -e "$marker" ] && echo yes || echo no) $([ -e /dev/shm/own ] && echo yes || echo no)"
rm -f "$marker"

# RDMA netlink (librdmaemu-host.so, preloaded in a sandbox)
check "A's rdma link" "link rxe0/1 state ACTIVE physical_state LINK_UP netdev eth0 " \
	"$(inA rdma link show)"
# without a sandbox, IP to the fabric's subnets is refused before it leaves (the guard)
check "no sandbox: the guard" "rdmaemu: IP to 192.0.2.65 refused: without a sandbox, a fabric address is this machine's real network
connect: Network is unreachable" \
	"$("$rdmaemu" run --no-sandbox --fabric "$ref2" --node B -- "$probe" -c 192.0.2.65 5000 2>&1)"

mkdir -m 700 "$t/ref"
check "rxe-ref's links" "d0 192.0.2.1/28 0x83
s0 192.0.2.17/28 0x1003" "$(RDMAEMU_RUNTIME_DIR=$t/ref "$rdmaemu" run --fabric "$ref" --node rxe-ref -- sh -c '
	for n in d0 s0; do echo "$n $(ip -br -4 addr show $n | awk "{print \$3}") $(cat /sys/class/net/$n/flags)"; done' 2>&1)"
# `rdma link delete rxe0` on the host: its files go from a running sandbox, and a sandbox made
# later never shows them
export RDMAEMU_RUNTIME_DIR=$t/ref
"$rdmaemu" run --fabric "$ref" --node rxe-ref -- sleep 30 &
spid=$!
lpids=$spid
check "rxe-ref's files" "/dev/infiniband: issm0 issm1 rdma_cm umad0 umad1 uverbs0 uverbs1 /sys/class/infiniband: rxe0 rxe1" \
	"$("$rdmaemu" run --fabric "$ref" --node rxe-ref -- sh -c 'echo $(ls /sys/class/infiniband /dev/infiniband)')"
"$rdmaemu" daemon remove-device rxe-ref rxe0
i=0
while "$rdmaemu" run --fabric "$ref" --node rxe-ref -- test -e /sys/class/infiniband/rxe0 &&
      [ $i -lt 50 ]; do
	sleep 0.1; i=$((i + 1))
done
check "rxe0 removed in the running sandbox" "/dev/infiniband: issm1 rdma_cm umad1 uverbs1 /sys/class/infiniband: rxe1 /sys/class/infiniband_verbs: uverbs1" \
	"$("$rdmaemu" run --fabric "$ref" --node rxe-ref -- sh -c 'echo $(ls /sys/class/infiniband /dev/infiniband /sys/class/infiniband_verbs | grep -v abi)')"
kill -KILL $spid
wait $spid 2>/dev/null
lpids=
i=0
while [ -f "$t/ref/hosts/rxe-ref.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
check "rxe0 removed in a new sandbox" "/dev/infiniband: issm1 rdma_cm umad1 uverbs1 /sys/class/infiniband: rxe1" \
	"$("$rdmaemu" run --fabric "$ref" --node rxe-ref -- sh -c 'echo $(ls /sys/class/infiniband /dev/infiniband)')"
"$rdmaemu" daemon stop >/dev/null
export RDMAEMU_RUNTIME_DIR=$t

# TCP from B to A's address over the daemon's wire
port=5000
inA "$probe" -l 192.0.2.65 $port >"$t/srv.out" &
spid=$!
lpids=$spid
check "TCP B -> A" "pong ping from 192.0.2.66" \
	"$("$rdmaemu" run --fabric "$ref2" --node B -- "$probe" -c 192.0.2.65 $port 2>&1)"
wait $spid
check "TCP server" "0" "$?"
lpids=
# IPv6 link-local across the wire too
inA "$probe" -l fe80::ff:fe00:201%eth0 $((port + 1)) >"$t/srv6.out" &
spid=$!
lpids=$spid
check "TCP over IPv6 B -> A" "pong ping from fe80::ff:fe00:202" \
	"$("$rdmaemu" run --fabric "$ref2" --node B -- "$probe" -c fe80::ff:fe00:201%eth0 $((port + 1)) 2>&1)"
wait $spid
lpids=

# one sandbox per host: a second program joins the first one's
"$rdmaemu" run --fabric "$ref2" --node A -- sleep 30 &
spid=$!
lpids=$spid
i=0
while [ "$(readlink /proc/$spid/ns/net)" = "$(readlink /proc/self/ns/net)" ] && [ $i -lt 100 ]; do
	sleep 0.1; i=$((i + 1))
done
keeper=$(cut -d' ' -f1 "$t/hosts/A.pid")
check "second program joins" "$(readlink /proc/$spid/ns/net)" "$(inA readlink /proc/self/ns/net)"
check "keeper" "rdmaemu-host" "$(cat /proc/$keeper/comm)"
status=$("$rdmaemu" daemon status)
echo "$status" | grep -Eq "^tap A/eth0: [1-9][0-9]* to the wire, [1-9][0-9]* from it, 0 dropped$" ||
	{ echo "FAIL daemon status:"; echo "$status"; fail=1; }
kill -KILL $spid
wait $spid 2>/dev/null
lpids=
i=0
while kill -0 $keeper 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check "sandbox gone with its last process" "gone, no state file" \
	"$(kill -0 $keeper 2>/dev/null && echo running || echo gone), $([ -f "$t/hosts/A.pid" ] && echo state file || echo no state file)"
check "nothing mounted here" "$outside_mounts" "$(wc -l </proc/self/mountinfo)"

"$rdmaemu" daemon stop >/dev/null

# As a user (root here: run as nobody): a user namespace of the caller's own uid, taps, or veth
# pairs where /dev/net/tun is closed to users (a machine without udev leaves it 0600).
u=$(mktemp -d)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && chown nobody "$u" && setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$rdmaemu"; then
	# GCOV_PREFIX: a coverage build's counters belong to root; the user's would be refused
	# ("profiling: ... Cannot open" in the outputs compared here): they go to $u instead
	asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups \
		env RDMAEMU_RUNTIME_DIR="$u" HOME="$u" GCOV_PREFIX="$u/gcov" "$rdmaemu" "$@"; }
	asuser daemon start --fabric "$ref2" || { echo "FAIL: the user's daemon"; fail=1; }
	check "a user's program runs as the user" "65534" "$(asuser run --fabric "$ref2" --node A -- id -u 2>&1)"
	asuser run --fabric "$ref2" --node A -- "$probe" -l 192.0.2.65 $((port + 2)) >/dev/null 2>&1 &
	spid=$!
	lpids=$spid
	check "a user's TCP B -> A" "pong ping from 192.0.2.66" \
		"$(asuser run --fabric "$ref2" --node B -- "$probe" -c 192.0.2.65 $((port + 2)) 2>&1)"
	wait $spid
	lpids=
	asuser daemon stop >/dev/null
else
	echo "not root, or nobody cannot run the build tree: the user's sandbox is not checked"
fi
rm -rf "$u"
if command -v tshark >/dev/null 2>&1; then
	# the exchange's SYN, SYN-ACK and data both ways went through the daemon's wire (a SYN
	# that came before the server listened was refused and sent again)
	check "TCP in the capture" "192.0.2.65 192.0.2.66 SA
192.0.2.66 192.0.2.65 S" "$(tshark -r "$t/cap-eth.pcap" -Y "tcp.port == $port && tcp.flags.syn == 1" \
		-T fields -e ip.src -e ip.dst -e tcp.flags.ack 2>/dev/null |
		awk '{ print $1, $2, ($3 == 1 || $3 == "True") ? "SA" : "S" }' | LC_ALL=C sort -u)"
	check "ping in the capture" "1" "$(tshark -r "$t/cap-eth.pcap" -Y "tcp.port == $port && tcp.payload" \
		-T fields -e tcp.payload 2>/dev/null | grep -c '^70:69:6e:67$\|^70696e67$')"
else
	echo "tshark not installed: the capture is not checked"
fi
exit $fail
