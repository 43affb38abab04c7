#!/bin/sh
# One fabric, two rdmaemud instances (docs/multi-daemon.md): fixtures/xdaemon.fabric's daemon D1
# (host A) and D2 (host B), each in a network namespace of this test's own, joined by a veth
# pair (198.18.0.1/24 and 198.18.0.2/24: the namespaces have no other interface and no route
# anywhere else, and the test refuses to go on when they do). Checked, exactly:
#   - the datagrams D2 refuses (short, oversized, another magic, another fabric, a sender that
#     is not the daemon it names, links whose ends are not the sender's and D2's) and accepts
#     (with the sequence numbers' gaps and late arrivals), sent by udp_send as daemon D3;
#   - the refusals: no --as, an unknown daemon, --virtual-time with several daemons, --as on a
#     fabric without daemons, a process of B at D1, B's link, device and neighbours at D1;
#   - rping (-v -C 5: every line; -V -S 4096 -C 20) and perftest's ib_write_bw -R between A
#     and B, with every frame between them in a datagram; both daemons' counters after;
#   - rping -v on InfiniBand (fixtures/xdaemon-ib.fabric: IPoIB ARP, the SA, the CM and the
#     data through a switch both daemons keep).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
for tool in rping unshare nsenter ip; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool not installed: skipped"; exit 77; }
done

# ---- the namespaces: this script again, inside a user and network namespace of its own ----
if [ -z "${XD_OUTER_NS:-}" ]; then
	XD_OUTER_NS=$(readlink /proc/self/ns/net)
	export XD_OUTER_NS
	unshare --user --map-root-user --net true 2>/dev/null ||
		{ echo "no network namespace permitted here: skipped"; exit 77; }
	exec unshare --user --map-root-user --net sh "$0" "$@"
fi
if [ "$(readlink /proc/self/ns/net)" = "$XD_OUTER_NS" ] ||
   [ "$(ip -o link | grep -cv ': lo:')" != 0 ]; then
	echo "FAIL: not in a fresh network namespace of the test's own: refused"
	exit 1
fi
. "$s/emu/daemon/tests/daemon_test_env.sh"
F=$(realpath "$s/fixtures/xdaemon.fabric")
t2=$t/d2
mkdir -m 0700 "$t2" || exit 99
ip link set lo up
unshare --net sleep 600 &
p2=$!
sleep 0.2
in2() { nsenter -t $p2 -n env RDMAEMU_RUNTIME_DIR="$t2" "$@"; }
N2="nsenter -t $p2 -n env RDMAEMU_RUNTIME_DIR=$t2"
trap 'in2 "$rdmaemu" daemon stop >/dev/null 2>&1; kill $p2; cleanup' EXIT
ip link add xd0 type veth peer name xd1 netns $p2 &&
	ip addr add 198.18.0.1/24 dev xd0 && ip link set xd0 up &&
	in2 sh -c 'ip link set lo up && ip addr add 198.18.0.2/24 dev xd1 && ip link set xd1 up' ||
	{ echo "FAIL: cannot set up the veth pair"; exit 1; }
# only lo and the veth end, and the veth's own subnet as the only route, on either side
for side in "" in2; do
	links=$($side ip -o link | awk -F': ' '{print $2}' | sed 's/@.*//' | sort | tr '\n' ' ')
	routes=$($side ip route | awk '{print $1}' | tr '\n' ' ')
	case "$links/$routes" in
	"lo xd0 /198.18.0.0/24 " | "lo xd1 /198.18.0.0/24 ") ;;
	*) echo "FAIL: namespace has links '$links', routes '$routes': refused"; exit 1 ;;
	esac
done

"$rdmaemu" daemon start --fabric "$F" --as D1 ||
	{ echo "FAIL: D1 did not start"; cat "$t/rdmaemud.log"; exit 1; }
in2 "$rdmaemu" daemon start --fabric "$F" --as D2 ||
	{ echo "FAIL: D2 did not start"; cat "$t2/rdmaemud.log"; exit 1; }

# check NAME GOT WANT
check() {
	if [ "$2" = "$3" ]; then
		echo "ok $1"
	else
		printf 'FAIL %s:\n  got:  %s\n  want: %s\n' "$1" "$2" "$3"
		fail=1
	fi
}
udp1() { in2 "$rdmaemu" daemon status | grep '^udp '; }
udp_of() { "$@" daemon status | grep '^udp ' | sed 's/^udp sent [0-9]* //; s/received [0-9]* //'; }

# ---- datagrams: what D2 accepts and refuses ----
id=$(in2 "$rdmaemu" daemon status | sed -n 's/^daemon D2 udp .* fabric-id //p')
M=0x52444558
send() { "$b/emu/daemon/tests/udp_send" 198.18.0.1 "$1" 198.18.0.2 7471 "$2" ${3:+$3}; }
send 7472 20                                      # short
send 7472 12313                                   # 24 + 12288 + 1: oversized
send 7472 100 "0x12345678 1 1 2 1 1 $id"          # another magic
send 7472 100 "$M 2 1 2 1 1 $id"                  # another version
send 7472 100 "$M 1 1 2 1 1 0x1"                  # another fabric
send 7472 100 "$M 1 1 0 0 1 $id"                  # says D1, comes from D3's address
send 7473 100 "$M 1 1 2 1 1 $id"                  # D3 from another port
send 7472 100 "$M 1 1 2 9 1 $id"                  # no link 9
send 7472 100 "$M 1 1 2 0 1 $id"                  # link 0 from A's end: A is D1's
send 7472 100 "$M 1 0 2 1 1 $id"                  # link 1 to C's end: C is no host of D2
send 7472 100 "$M 1 1 2 1 1 $id"                  # C to B: accepted, seq 1
send 7472 100 "$M 1 1 2 1 5 $id"                  # seq 5: 3 lost
send 7472 100 "$M 1 1 2 1 3 $id"                  # seq 3: late
# wait_udp2 LINE: until D2's counters are LINE (5 s at most)
wait_udp2() {
	i=0
	while [ "$(udp1)" != "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
want="udp sent 0 send-drops 0 received 3 short 1 oversized 1 bad-header 2 wrong-fabric 1 unknown-sender 2 unknown-link 3 lost 3 late 1 ghost-tx 0 down 0"
wait_udp2 "$want"
check "datagrams D2 refuses and accepts" "$(udp1)" "$want"
# B's eth1 down at D2: its port has no carrier, a frame arriving for it is dropped
in2 "$rdmaemu" daemon link-set B eth1 down
send 7472 100 "$M 1 1 2 1 6 $id"
want="udp sent 0 send-drops 0 received 4 short 1 oversized 1 bad-header 2 wrong-fabric 1 unknown-sender 2 unknown-link 3 lost 3 late 1 ghost-tx 0 down 1"
wait_udp2 "$want"
check "a datagram for a port whose netdev is down" "$(udp1)" "$want"
in2 "$rdmaemu" daemon link-set B eth1 up

# ---- refusals ----
d=$b/emu/daemon/rdmaemud
err=$("$d" --fabric "$F" --socket "$t/x.sock" 2>&1)
check "no --as: exit $?" "$err" "rdmaemud: fabric $F is run by several daemons (its \`daemon\` lines): --as NAME says which one this is"
err=$("$d" --fabric "$F" --as D9 --socket "$t/x.sock" 2>&1)
check "--as D9: exit $?" "$err" "rdmaemud: --as D9: fabric $F declares no such daemon"
err=$("$d" --fabric "$F" --as D3 --virtual-time --socket "$t/x.sock" 2>&1)
check "--virtual-time: exit $?" "$err" "rdmaemud: --virtual-time: fabric $F is run by 3 daemons, each with its own clock; virtual time needs a single daemon (run in real time)"
r2=$(realpath "$s/fixtures/rxe-ref2.fabric")
err=$("$d" --fabric "$r2" --as D1 --socket "$t/x.sock" 2>&1)
check "--as without daemons: exit $?" "$err" "rdmaemud: --as D1: fabric $r2 declares no daemons"
err=$("$rdmaemu" run --fabric "$F" --node B --no-sandbox -- ibv_devices 2>&1 | head -1)
check "B at D1" "$err" "rdmaemu: host 'B' of fabric '$(realpath "$F")' runs under another of the fabric's daemons (its daemon=), not the rdmaemud at $t/rdmaemud.sock"
for cmd in "link-set B eth0 down" "remove-device B rxe0" "neigh-flush B"; do
	err=$("$rdmaemu" daemon $cmd 2>&1)
	check "$cmd at D1: exit $?" "$err" "rdmaemu: $cmd: Object is remote"
done

# ---- programs: server on A (D1), client on B (D2) ----
# pair NAME "SERVER ARGS" "CLIENT ARGS" PROGRAM: the server on $SN (D1), the client on $CN
# (D2); both exit 0; outputs in $t/srv.out, cli.out
pair() {
	"$rdmaemu" run --fabric "$F" --node $SN --no-sandbox -- $4 $2 >"$t/srv.out" 2>&1 &
	spid=$!
	lpids=$spid
	daemon_test_wait_status '^rdma_cm file .* listen [1-9]' || { echo "FAIL $1: no listener"; cat "$t/srv.out"; fail=1; }
	timeout 60 $N2 "$rdmaemu" run --fabric "$F" --node $CN --no-sandbox -- $4 $3 \
		>"$t/cli.out" 2>&1
	crc=$?
	i=0
	while kill -0 $spid 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL $spid 2>/dev/null
	wait $spid
	src=$?
	lpids=
	# the programs' own races (test_daemon_rdmacm.sh, docs/daemon.md "Limits"): rping's CM
	# thread meeting its closed channel (EBADF), perftest -R's second REQ before the second
	# listen (REJ reason 8, then its client crashes): the pair runs again, 8 times at most
	if [ "${retry:-0}" -lt 8 ] &&
	   { grep -q "^rdma_get_cm_event: Bad file descriptor" "$t/cli.out" "$t/srv.out" ||
	     { [ $crc -ne 0 ] && grep -q "RDMA_CM_EVENT_REJECTED; error: 8" "$t/cli.out"; }; }
	then
		retry=$((${retry:-0} + 1))
		echo "# $1: a race of the program itself: again"
		pair "$@"
		return
	fi
	retry=0
	check "$1: exits" "server $src client $crc" "server 0 client 0"
}
# rping's -v lines: the 64-byte buffer, "rdma-ping-N: " and 50 characters from 'A' + N
rping_lines() {
	awk -v pre="$1" 'BEGIN { for (n = 0; n < 5; n++) { s = ""
		for (c = 0; c < 50; c++) s = s sprintf("%c", 65 + (n + c) % 62)
		printf "%sping data: rdma-ping-%d: %s\n", pre, n, s } }'
}
SN=A CN=B
pair rping-v "-s -a 203.0.113.1 -C 5 -v" "-c -a 203.0.113.1 -C 5 -v" rping
check "rping-v: client lines" "$(grep "ping data" "$t/cli.out")" "$(rping_lines "")"
check "rping-v: server lines" "$(grep 'ping data' "$t/srv.out")" "$(rping_lines "server ")"
pair rping-V "-s -a 203.0.113.1 -V -S 4096 -C 20" "-c -a 203.0.113.1 -V -S 4096 -C 20" rping
check "rping-V: client (its own DISCONNECT line aside: a race of its threads)" \
	"$(grep -v "^client DISCONNECT EVENT...$" "$t/cli.out")" ""
check "rping-V: server" "$(cat "$t/srv.out")" "server DISCONNECT EVENT...
wait for RDMA_READ_ADV state 10"
if command -v ib_write_bw >/dev/null 2>&1; then
	pair ib_write_bw "-d rxe0 -R -F -n 100 -s 16384" "-d rxe0 -R -F -n 100 -s 16384 203.0.113.1" \
		ib_write_bw
	check "ib_write_bw: client" "$(grep -Ec '^ 16384 +100 ' "$t/cli.out")" 1
	check "ib_write_bw: server" "$(grep -Ec '^ 16384 +100 ' "$t/srv.out")" 1
else
	echo "# perftest not installed: ib_write_bw not run"
fi
# what crossed: D2's refusals as before, nothing refused at D1, nothing lost, no ghost sends
check "D1 counters" "$(udp_of "$rdmaemu")" "send-drops 0 short 0 oversized 0 bad-header 0 wrong-fabric 0 unknown-sender 0 unknown-link 0 lost 0 late 0 ghost-tx 0 down 0"
check "D2 counters" "$(udp_of in2 "$rdmaemu")" "send-drops 0 short 1 oversized 1 bad-header 2 wrong-fabric 1 unknown-sender 2 unknown-link 3 lost 3 late 1 ghost-tx 0 down 1"
s1=$("$rdmaemu" daemon status | sed -n 's/^udp sent \([0-9]*\) send-drops 0 received \([0-9]*\) .*/\1 \2/p')
s2=$(in2 "$rdmaemu" daemon status | sed -n 's/^udp sent \([0-9]*\) send-drops 0 received \([0-9]*\) .*/\1 \2/p')
# every datagram one daemon sent, the other received (D2's 4 more are udp_send's)
check "D1 sent = D2 received - 4, D2 sent = D1 received" \
	"$(echo "$s1 $s2" | awk '{ print ($1 == $4 - 4 && $3 == $2) ? "yes" : $0 }')" yes
echo "# D1 sent/received: $s1; D2: $s2"

# ---- InfiniBand: ib-a (D1) and ib-b (D2) behind one switch that both daemons keep ----
in2 "$rdmaemu" daemon stop >/dev/null && "$rdmaemu" daemon stop >/dev/null ||
	{ echo "FAIL: daemon stop"; fail=1; }
F=$(realpath "$s/fixtures/xdaemon-ib.fabric")
# D2 is started by the client's `rdmaemu run --node ib-b`: as the daemon of ib-b
"$rdmaemu" daemon start --fabric "$F" --as D1 ||
	{ echo "FAIL: IB daemon D1 did not start"; cat "$t/rdmaemud.log"; exit 1; }
SN=ib-a CN=ib-b
pair ib-rping-v "-s -a 203.0.113.129 -C 5 -v" "-c -a 203.0.113.129 -C 5 -v" rping
check "ib-rping-v: client lines" "$(grep "ping data" "$t/cli.out")" "$(rping_lines "")"
check "ib-rping-v: server lines" "$(grep 'ping data' "$t/srv.out")" "$(rping_lines "server ")"
check "D2 started by rdmaemu run --node ib-b" \
	"$(in2 "$rdmaemu" daemon status | sed -n 's/ fabric-id .*//p')" "daemon D2 udp 198.18.0.2:7471"
check "ib D2 counters" "$(udp_of in2 "$rdmaemu")" "send-drops 0 short 0 oversized 0 bad-header 0 wrong-fabric 0 unknown-sender 0 unknown-link 0 lost 0 late 0 ghost-tx 0 down 0"
exit $fail
