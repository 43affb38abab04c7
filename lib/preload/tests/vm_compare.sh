#!/bin/sh
# tcp_echo under rdma-core's librspreload.so and under this project's, between the two VMs of
# the reference (scripts/rxe-vm run --two): servers on A, clients on B, each case's packets
# counted on B (rxe0's sent_pkts, the kernel's TCP OutSegs). docs/reference/rsockets-preload.md
# holds what it printed. From a build tree:
#   cp /usr/lib/x86_64-linux-gnu/rsocket/librspreload.so DIR/librspreload-debian.so
#   cp lib/preload/.libs/librspreload.so.1.0.0 DIR/librspreload-ours.so
#   scripts/rxe-vm run --two --copy ../lib/preload/tests/vm_compare.sh \
#       --copy lib/preload/tests/tcp_echo --copy DIR/librspreload-debian.so \
#       --copy DIR/librspreload-ours.so -- sh /opt/rdmaemu/vm_compare.sh
D=/opt/rdmaemu
E=$D/tcp_echo
C=/sys/class/infiniband/rxe0/ports/1/hw_counters
pk() { cat $C/sent_pkts 2>/dev/null || echo 0; }
tcp() { awk '/^Tcp:/ { n++; if (n == 2) print $12 }' /proc/net/snmp; }
case_run() { # name, then command
	name=$1; shift
	p0=$(pk); t0=$(tcp)
	out=$("$@" 2>&1 | tr '\n' ' ')
	echo "B $name: $out| rxe0 sent_pkts +$(( $(pk) - p0 )) tcp OutSegs +$(( $(tcp) - t0 ))"
}
if [ "$RXEVM_NODE" = A ]; then
	port=7000
	for lib in debian ours; do
		L=$D/librspreload-$lib.so
		LD_PRELOAD=$L timeout 120 $E server $((port+1)) > /tmp/s1.$lib 2>&1 &
		LD_PRELOAD=$L timeout 120 $E server -s $((port+2)) > /tmp/s2.$lib 2>&1 &
		RDMAV_FORK_SAFE=1 LD_PRELOAD=$L timeout 120 $E server -f $((port+3)) > /tmp/s3.$lib 2>&1 &
		timeout 120 $E server $((port+4)) > /tmp/s4.$lib 2>&1 &
		LD_PRELOAD=$L timeout 120 $E server $((port+5)) > /tmp/s5.$lib 2>&1 &
		port=$((port+10))
	done
	wait
	for f in /tmp/s[1-5].*; do echo "A $f: $(tr '\n' ' ' < $f)"; done
else
	sleep 8
	port=7000
	for lib in debian ours; do
		L=$D/librspreload-$lib.so
		echo "B == $lib"
		case_run "both preloaded, 1 MiB" env LD_PRELOAD=$L $E client 192.0.2.65 $((port+1)) 1048576
		case_run "both preloaded, select" env LD_PRELOAD=$L $E client -s 192.0.2.65 $((port+2)) 262144
		case_run "fork support, server forks" env RDMAV_FORK_SAFE=1 LD_PRELOAD=$L $E client 192.0.2.65 $((port+3)) 262144
		case_run "client preloaded, plain server" env LD_PRELOAD=$L $E client 192.0.2.65 $((port+4)) 262144
		echo "B probe:"
		LD_PRELOAD=$L timeout 60 $E probe 192.0.2.65 $((port+5)) 7999 2>&1 | sed 's/^/B   /'
		port=$((port+10))
	done
	# preload_config's rules, one file after another
	mkdir -p /etc/rdma/rsocket
	for lib in debian ours; do
		L=$D/librspreload-$lib.so
		for rules in "" "tcp_ INET STREAM TCP" "other INET STREAM TCP" "* INET6 * *" \
			"* INET STREAM UDP" "TCP_ECHO AF_INET SOCK_STREAM IPPROTO_TCP" \
			"* inet stream bogus"; do
			if [ -n "$rules" ]; then
				echo "$rules" > /etc/rdma/rsocket/preload_config
			else
				rm -f /etc/rdma/rsocket/preload_config
			fi
			echo "B $lib rules [$rules]: $(LD_PRELOAD=$L $E kinds | tr '\n' ' ')"
		done
		rm -f /etc/rdma/rsocket/preload_config
	done
fi
