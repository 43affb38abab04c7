#!/bin/sh
# librspreload.so under `rdmaemu run --rsockets` between hosts A (servers) and B (clients) of
# fixtures/rxe-ref2.fabric, with the plain TCP program lib/preload/tests/tcp_echo:
#   - 1 MiB echoed end to end (poll, then select), and the traffic on the daemon's wire: RoCE
#     frames, no TCP on the connection's port;
#   - a client under the library to a plain TCP server: rsockets refused, the connection made
#     over TCP (in the capture) and the bytes echoed;
#   - fork support (RDMAV_FORK_SAFE=1, the server serving in a forked child): TCP first, then
#     RDMA, the bytes echoed;
#   - the probe's answers, as rdma-core v44's library gives them on kernel rxe
#     (docs/reference/rsockets-preload.md);
#   - without a sandbox (--no-sandbox, and plain LD_PRELOAD in-process) the fallback to TCP
#     towards a fabric address is refused with ENETUNREACH and one line on stderr.
# Where namespaces are not permitted the sandboxed part is skipped.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
echo_bin="$b/lib/preload/tests/tcp_echo"
ref2="$s/fixtures/rxe-ref2.fabric"
port=7100

check() { # NAME EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then
		echo "ok $1"
	else
		printf 'FAIL %s:\n--- expected\n%s\n--- got\n%s\n' "$1" "$2" "$3"
		fail=1
	fi
}

inB() { timeout 120 "$rdmaemu" run --rsockets --fabric "$ref2" --node B -- "$@" 2>&1; }

# Only tcp_echo runs under the library: the environment is set outside `rdmaemu run`.
# Starts `tcp_echo server ARGS` on A under the library (--plain: without it, --fork-safe: with
# RDMAV_FORK_SAFE=1) and waits until it listens; its output goes to $t/server.out.
server_on_A() {
	case $1 in
	--plain) shift; set -- "$rdmaemu" run --fabric "$ref2" --node A -- "$echo_bin" server "$@" ;;
	--fork-safe) shift; set -- env RDMAV_FORK_SAFE=1 "$rdmaemu" run --rsockets --fabric "$ref2" \
		--node A -- "$echo_bin" server "$@" ;;
	*) set -- "$rdmaemu" run --rsockets --fabric "$ref2" --node A -- "$echo_bin" server "$@" ;;
	esac
	timeout 120 "$@" >"$t/server.out" 2>&1 &
	spid=$!
	lpids=$spid
	for _ in $(seq 100); do
		grep -q "^server: listening" "$t/server.out" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "FAIL: the server on A did not listen"; cat "$t/server.out"; fail=1
}

# Waits for the server (in this shell: its child) and prints what it printed, and its exit
# status when it failed.
server_done() {
	wait "$spid"
	st=$?
	lpids=
	sed '/^server: listening/d; s/^server: echoed/echoed/' "$t/server.out" >"$t/server.res"
	[ $st = 0 ] || echo "exit status $st" >>"$t/server.res"
}

# tshark's count of the capture's frames that match FILTER.
frames() {
	tshark -r "$t/cap-eth.pcap" -Y "$1" -T fields -e frame.number 2>/dev/null | wc -l
}

# the library calls librdmacm's rsocket functions: an emulated librdmacm built without them
# cannot load it
if ! nm -D --defined-only "$b/lib/.libs/librdmacm.so.1" 2>/dev/null | grep -q ' rsocket@@RDMACM_1.0$'; then
	echo "the emulated librdmacm.so.1 has no rsocket calls: skipped"
	exit 77
fi
# The bytes TCP carried both ways on a port: each direction's highest next sequence number
# (relative, the SYN counting 1, the FIN 1 when seen), retransmissions counted once.
tcp_bytes() {
	tshark -r "$t/cap-eth.pcap" -Y "tcp.port == $1 && tcp.len > 0" \
		-T fields -e tcp.srcport -e tcp.seq -e tcp.len 2>/dev/null |
		awk '{ end = $2 + $3; if (end > top[$1]) top[$1] = end }
			END { for (p in top) n += top[p] - 1; print n + 0 }'
}

daemon_test_sandbox_start "$ref2" A "$t"

B=$(cd "$b" && pwd)
check "the library in LD_PRELOAD, before the host library" \
	"${LD_PRELOAD:+$LD_PRELOAD:}$B/lib/preload/.libs/librspreload.so.1:$B/emu/host/.libs/librdmaemu-host.so" \
	"$(inB sh -c 'echo "$LD_PRELOAD"')"

server_on_A $port
check "1 MiB B -> A over rsockets" "client: sent 1048576 received 1048576 match" \
	"$(inB "$echo_bin" client 192.0.2.65 $port 1048576)"
server_done
check "the server echoed" "echoed 1048576 bytes" "$(cat "$t/server.res")"

server_on_A -s $((port + 1))
check "select: 256 KiB B -> A" "client: sent 262144 received 262144 match" \
	"$(inB "$echo_bin" client -s 192.0.2.65 $((port + 1)) 262144)"
server_done
check "select: the server echoed" "echoed 262144 bytes" "$(cat "$t/server.res")"

server_on_A --plain $((port + 2))
check "fallback to TCP: a plain server" "client: sent 262144 received 262144 match" \
	"$(inB "$echo_bin" client 192.0.2.65 $((port + 2)) 262144)"
server_done
check "fallback: the server echoed" "echoed 262144 bytes" "$(cat "$t/server.res")"

server_on_A --fork-safe -f $((port + 3))
check "fork support: 256 KiB" "client: sent 262144 received 262144 match" \
	"$(RDMAV_FORK_SAFE=1 timeout 120 "$rdmaemu" run --rsockets --fabric "$ref2" --node B -- \
		"$echo_bin" client 192.0.2.65 $((port + 3)) 262144 2>&1)"
server_done
check "fork support: the child echoed" "echoed 262144 bytes in a child" "$(cat "$t/server.res")"

server_on_A $((port + 4))
check "the probe (as rdma-core v44 on kernel rxe)" "socket(STREAM|CLOEXEC) is a socket
socket(AF_UNIX) is a socket
socket(STREAM) is a chardev
fcntl(F_GETFD): -1 ENOTSUP
fcntl(F_SETFD): -1 ENOTSUP
fcntl(F_GETFL): 0 
select(0, 10 ms): -1 ENOMEM
accept4(not listening): -1 ENOTSOCK
connect(no listener): -1 ECONNREFUSED
after the failed connect, a chardev
connect(echo server): 0 
sendfile(4096): -1 EINVAL
dup2(fd, 100): 100 
write(100, 5): 5 
wait readable: 1 
read(fd): 5 
close(100): 0 
close(fd): 9 " "$(inB "$echo_bin" probe 192.0.2.65 $((port + 4)) 7999)"
server_done
check "the probe: the server echoed" "echoed 5 bytes" "$(cat "$t/server.res")"

# preload_config's rules, from $RDMAEMU_RSOCKET_CONF (the reference VM's table)
mkdir "$t/conf"
for rule in "tcp_ INET STREAM TCP" "other INET STREAM TCP" "* INET6 * *" "* INET STREAM UDP" \
	"TCP_ECHO AF_INET SOCK_STREAM IPPROTO_TCP" "* inet stream bogus"; do
	echo "$rule" >"$t/conf/preload_config"
	echo "[$rule] $(RDMAEMU_RSOCKET_CONF=$t/conf inB "$echo_bin" kinds | tr '\n' ' ')"
done >"$t/rules.out"
check "preload_config's rules" "[tcp_ INET STREAM TCP] INET STREAM: chardev INET6 STREAM: socket INET STREAM|CLOEXEC: socket UNIX STREAM: socket 
[other INET STREAM TCP] INET STREAM: socket INET6 STREAM: socket INET STREAM|CLOEXEC: socket UNIX STREAM: socket 
[* INET6 * *] INET STREAM: socket INET6 STREAM: chardev INET STREAM|CLOEXEC: socket UNIX STREAM: socket 
[* INET STREAM UDP] INET STREAM: socket INET6 STREAM: socket INET STREAM|CLOEXEC: socket UNIX STREAM: socket 
[TCP_ECHO AF_INET SOCK_STREAM IPPROTO_TCP] INET STREAM: chardev INET6 STREAM: socket INET STREAM|CLOEXEC: socket UNIX STREAM: socket 
[* inet stream bogus] INET STREAM: chardev INET6 STREAM: chardev INET STREAM|CLOEXEC: socket UNIX STREAM: socket " "$(cat "$t/rules.out")"

# Without a sandbox the fallback's TCP to a fabric address would leave on this machine's
# network: refused (nothing listens there over rsockets, so rconnect fails first).
check "no sandbox: the fallback refused" "rdmaemu: TCP to 192.0.2.65 refused: without a sandbox, the rsockets fallback to a real socket would reach this machine's real network
client: connect: ENETUNREACH" \
	"$("$rdmaemu" run --no-sandbox --rsockets --fabric "$ref2" --node B -- \
		"$echo_bin" client 192.0.2.65 $((port + 5)) 100 2>&1)"
check "plain LD_PRELOAD in-process: the fallback refused" "rdmaemu: TCP to 192.0.2.65 refused: without a sandbox, the rsockets fallback to a real socket would reach this machine's real network
client: connect: ENETUNREACH" \
	"$(env -u RDMAEMU_DAEMON -u RDMAEMU_SANDBOX RDMAEMU_FABRIC="$ref2" RDMAEMU_NODE=B \
		LD_LIBRARY_PATH="$b/lib/.libs:$b/emu/verbs/.libs:$b/emu/.libs" \
		LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$b/lib/preload/.libs/librspreload.so.1" \
		"$echo_bin" client 192.0.2.65 $((port + 5)) 100 2>&1)"

"$rdmaemu" daemon stop >/dev/null
if command -v tshark >/dev/null 2>&1; then
	# rsockets: RoCE v2 frames both ways, and not one TCP segment on the connections' ports
	check "RoCE frames A -> B and B -> A" "2" "$(tshark -r "$t/cap-eth.pcap" \
		-Y "udp.dstport == 4791" -T fields -e ip.src 2>/dev/null | LC_ALL=C sort -u | wc -l)"
	check "no TCP on the rsockets' ports" "0" \
		"$(frames "tcp.port == $port || tcp.port == $((port + 1)) || tcp.port == $((port + 4))")"
	# the fallback went over TCP, its bytes in the segments
	check "the fallback's TCP payload" "524288" "$(tcp_bytes $((port + 2)))"
	# fork support: the 4-byte word on TCP, the data over RDMA
	check "fork support: TCP carried the word only" "4" "$(tcp_bytes $((port + 3)))"
else
	echo "tshark not installed: the capture is not checked"
fi
exit $fail
