#!/bin/sh
# 40 pairs of Debian's rping (`rping -s`, `rping -c -V -C 3`) and 30 persistent listeners, 110
# processes on host rxe-ref of fixtures/rxe-ref.fabric, 70 of them at once at least: past the
# 64 processes a host once held. Every pair must
# validate, the daemon must have given slots past 63 (QPNs from 16 + 64 * 16384 = 1048592 on),
# and the rings must pair only the first 64 slots (no process has more than 63 ring peers).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v rping >/dev/null 2>&1 || { echo "rdmacm-utils not installed: skipped"; exit 77; }
. "$s/emu/daemon/tests/daemon_test_env.sh"
port=7000 # rdma_cm ports of this test's own daemon
fab="$s/fixtures/rxe-ref.fabric"
n=40
"$rdmaemu" daemon start --fabric "$fab" >"$t/d.out" 2>&1 || { cat "$t/d.out"; exit 1; }
# 30 listeners that stay (rping -s -P, persistent) before the pairs: with the pairs' 40
# servers, 70 processes hold slots together, whatever pace the pairs then go at (under the
# sanitizers a pair can end before the next client has started)
k=30
idle=
j=0
while [ $j -lt $k ]; do
	timeout 300 "$rdmaemu" run --fabric "$fab" -- rping -s -P -a 192.0.2.1 -p $((port + 100 + j)) \
		>"$t/idle$j.out" 2>&1 &
	idle="$idle $!"
	j=$((j + 1))
done
pids=
i=0
while [ $i -lt $n ]; do
	timeout 120 "$rdmaemu" run --fabric "$fab" -- rping -s -a 192.0.2.1 -p $((port + i)) \
		-C 3 >"$t/s$i.out" 2>&1 &
	pids="$pids $!"
	echo "$! s$i" >>"$t/pidfiles"
	i=$((i + 1))
done
lpids="$pids $idle"
i=0
while [ $i -lt 600 ] &&
      [ "$("$rdmaemu" daemon status | grep -c '^rdma_cm file .* listen [1-9]')" -lt $((n + k)) ]; do
	sleep 0.1; i=$((i + 1))
done
i=0
while [ $i -lt $n ]; do
	timeout 120 "$rdmaemu" run --fabric "$fab" -- rping -c -a 192.0.2.1 -p $((port + i)) \
		-V -C 3 >"$t/c$i.out" 2>&1 &
	pids="$pids $!"
	echo "$! c$i" >>"$t/pidfiles"
	i=$((i + 1))
done
lpids=$pids
# a moment when slots past 63 are held (the clients attach while the first pairs run)
i=0
while [ $i -lt 600 ]; do
	"$rdmaemu" daemon status >"$t/status.out" 2>&1
	awk '$1 == "process" && $5 == "qpn" { split($6, r, "-"); if (r[1] >= 1048592) f = 1 }
	     END { exit !f }' "$t/status.out" && break
	sleep 0.1; i=$((i + 1))
done
bad=0 races=0
for p in $pids; do
	wait "$p" && continue
	f=$t/$(awk -v p="$p" '$1 == p { print $2 }' "$t/pidfiles").out
	# rping's own teardown race, as on any stack (bench/soak): its server never joins its CM
	# thread, which, done with the DISCONNECTED, may read the channel main has just destroyed
	# (rping.c cm_thread: perror, exit) after the connection was served
	if grep -q "DISCONNECT EVENT" "$f" &&
	   tail -n 1 "$f" | grep -qx "rdma_get_cm_event: Bad file descriptor"; then
		races=$((races + 1))
		continue
	fi
	bad=$((bad + 1))
done
# the persistent listeners end here, by their signal
kill $idle 2>/dev/null
for p in $idle; do
	wait "$p"
done
lpids=
if [ $bad -ne 0 ]; then
	echo "FAIL: $bad of $((2 * n)) rping processes failed:"
	cat "$t"/[sc]*.out | sort | uniq -c | sort -rn | head -10
	fail=1
else
	echo "ok $n rping pairs on one host validated ($races ended by rping's own teardown race)"
fi
high=$(awk '$1 == "process" && $5 == "qpn" { split($6, r, "-"); if (r[1] >= 1048592) c++ }
	    END { print c + 0 }' "$t/status.out")
most=$(awk '$1 == "process" { for (k = 1; k < NF; k++) if ($k == "shm-peers" && $(k + 1) > m)
	    m = $(k + 1) } END { print m + 0 }' "$t/status.out")
if [ "$high" -lt 1 ] || [ "$most" -gt 63 ]; then
	echo "FAIL: slots past 63: $high processes, most ring peers: $most"; cat "$t/status.out"
	fail=1
else
	echo "ok slots past 63 in use ($high processes), at most $most ring peers a process"
fi
exit $fail
