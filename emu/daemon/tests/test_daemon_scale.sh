#!/bin/sh
# 40 pairs of Debian's rping (`rping -s`, `rping -c -V -C 3`) and 30 persistent listeners, 110
# processes on host rxe-ref of fixtures/rxe-ref.fabric, 70 of them at once at least: past the
# 64 processes a host once held. Every pair must
# validate, the daemon must have given slots past 63 (QPNs from 16 + 64 * 16384 = 1048592 on),
# and the rings must pair only the first 64 slots (no process has more than 63 ring peers).
# Then the fabric's process-qpns: 4194304 QP numbers a process leave a host 3 slots, the fourth
# process is refused with EUSERS and both sides say which limit; 1024 a process make the
# 1024th QP of a process fail with rxe's EINVAL, one line saying which limit.
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

# process-qpns 4194304: (2^24 - 16) / 2^22 = 3 slots on the host
"$rdmaemu" daemon stop >/dev/null 2>&1
{ echo "process-qpns 4194304"; cat "$fab"; } >"$t/big.fabric"
"$rdmaemu" daemon start --fabric "$t/big.fabric" >"$t/d2.out" 2>&1 || { cat "$t/d2.out"; exit 1; }
held=
j=0
while [ $j -lt 3 ]; do
	timeout 120 "$rdmaemu" run --fabric "$t/big.fabric" -- rping -s -P -a 192.0.2.1 \
		-p $((port + 200 + j)) >"$t/held$j.out" 2>&1 &
	held="$held $!"
	j=$((j + 1))
done
lpids=$held
i=0
while [ $i -lt 600 ] &&
      [ "$("$rdmaemu" daemon status | grep -c '^rdma_cm file .* listen [1-9]')" -lt 3 ]; do
	sleep 0.1; i=$((i + 1))
done
"$rdmaemu" daemon status >"$t/status2.out" 2>&1
"$rdmaemu" run --fabric "$t/big.fabric" -- rping -c -a 192.0.2.1 -p $((port + 200)) -C 1 \
	>"$t/refused.out" 2>&1
rc=$?
kill $held 2>/dev/null
for p in $held; do wait "$p"; done
lpids=
slices=$(awk '$1 == "process" && $5 == "qpn" { print $6 }' "$t/status2.out" | sort -n | tr '\n' ' ')
if [ "$slices" != "16-4194319 4194320-8388623 8388624-12582927 " ] ||
   ! grep -q "^rdmaemu: host 'rxe-ref' has all its process slots in use (each process takes a slice of the host's 24-bit QP numbers, the fabric's process-qpns, 16384 by default; rdmaemud's log says how many): a smaller process-qpns gives a host more processes, or run more processes on other hosts of the fabric$" "$t/refused.out" ||
   ! grep -q "rdmaemud: pid [0-9]* refused: host rxe-ref has all its 3 process slots in use (each process takes 4194304 of the host's 24-bit QP numbers: the fabric's process-qpns); a smaller process-qpns gives a host more processes, or run them on other hosts of the fabric" "$t/rdmaemud.log" ||
   [ $rc -eq 0 ]; then
	echo "FAIL: process-qpns 4194304: slices '$slices', exit $rc:"
	cat "$t/refused.out"; grep refused "$t/rdmaemud.log"
	fail=1
else
	echo "ok process-qpns 4194304: 3 slots on the host, the fourth process refused by name (exit $rc)"
fi
"$rdmaemu" daemon stop >/dev/null 2>&1

# process-qpns 1024: QP1's index and 1023 QPs fill a process's slice; cmtime's 1030 ids get
# 1023 QPs, the other 7 ibv_create_qp fail with EINVAL, the limit named once
if command -v cmtime >/dev/null 2>&1; then
	{ echo "process-qpns 1024"; cat "$fab"; } >"$t/small.fabric"
	"$rdmaemu" daemon start --fabric "$t/small.fabric" >"$t/d3.out" 2>&1 ||
		{ cat "$t/d3.out"; exit 1; }
	timeout 120 "$rdmaemu" run --fabric "$t/small.fabric" -- cmtime -s 192.0.2.1 \
		-p $((port + 300)) -c 1030 >"$t/qps.out" 2>&1
	notes=$(grep -c "^rdmaemu: this process has used all 1024 QP numbers rdmaemud gave it on host 'rxe-ref' (its slice of the host's 24-bit QP numbers, the fabric's process-qpns): ibv_create_qp fails with EINVAL; a larger process-qpns gives each process more (rdmaemu-fabric(5)), or create the QPs in more processes$" "$t/qps.out")
	einval=$(grep -c "^failure creating qp: Invalid argument$" "$t/qps.out")
	if [ "$notes" -ne 1 ] || [ "$einval" -ne 7 ]; then
		echo "FAIL: process-qpns 1024: $notes notes, $einval EINVAL (want 1 and 7):"
		grep -v "^failure creating qp" "$t/qps.out" | head -n 20
		fail=1
	else
		echo "ok process-qpns 1024: 1023 QPs a process, then EINVAL with the limit named once"
	fi
	"$rdmaemu" daemon stop >/dev/null 2>&1
fi
exit $fail
