#!/bin/sh
# make check-faults: the fault matrix (docs/faults.md). Each cell runs faults/fault_xfer.c as
# two processes of rdmaemud on the daemon's virtual clock (timeouts cost no wall time) on
# fixtures/rxe-ref2.fabric with one fault set, and checks the oracle:
#   RC: every message arrives once, in order, every byte as sent; or both sides end with the
#       real stack's error (a completion status, a CM event) and what arrived is in order;
#   UD: datagrams may be lost, never corrupt, never twice (except on a duplicating wire);
#   nothing hangs: every process ends within its wall-clock bound;
#   survivors keep working: after a process is killed a new transfer on the same daemon ends
#       like any other.
# A line per cell ("ok CELL ..." or "FAIL CELL: why"; XFAIL for a cell faults/known-failures
# lists with its reason, XPASS, a failure, when a listed cell passes), then
# "faults: N passed, M failed, K known failures".
# FAULTS_ONLY=REGEX runs only the cells whose names match it (grep -E).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/faults/kill_oracle.sh"
. "$s/emu/daemon/tests/daemon_test_env.sh"
xfer=$b/faults/fault_xfer
ref2=$s/fixtures/rxe-ref2.fabric
passed=0 failed=0

known=$s/faults/known-failures
ok() {
	if grep -q "^${1%%:*}	" "$known"; then
		echo "XPASS $* (listed in faults/known-failures: remove it)"
		failed=$((failed + 1))
	else
		echo "ok $*"
		passed=$((passed + 1))
	fi
}
bad() {
	reason=$(awk -F'\t' -v c="${1%%:*}" '$1 == c { print $2 }' "$known")
	if [ -n "$reason" ]; then
		echo "XFAIL $* (known: $reason)"
		xfailed=$((xfailed + 1))
	else
		echo "FAIL $*"
		failed=$((failed + 1))
	fi
}
xfailed=0
# xfer_pids SIDE: the fault_xfer programs of SIDE (client, server) of this run (`rdmaemu run`
# exec'd them under timeout(1): the programs themselves, not their timeout)
xfer_pids() {
	pgrep -x fault_xfer | while read -r p; do
		grep -q "RDMAEMU_RUNTIME_DIR=$t" "/proc/$p/environ" 2>/dev/null &&
			tr '\0' ' ' <"/proc/$p/cmdline" | grep -q "fault_xfer $1 " && echo "$p"
	done
}
# want NAME: whether cell NAME runs (FAULTS_ONLY)
want() { [ -z "${FAULTS_ONLY:-}" ] || echo "$1" | grep -Eq "$FAULTS_ONLY"; }

# start FABRIC: a daemon of its own on the virtual clock ($vtflag; empty: real time)
vtflag=--virtual-time
start() {
	"$rdmaemu" daemon stop >/dev/null 2>&1
	"$rdmaemu" daemon start $vtflag --fabric "$1" >"$t/start.log" 2>&1 ||
		{ cat "$t/start.log"; return 1; }
}

# serve FABRIC OUT ARGS...: the server on A (on $snode if set) in the background ($spid), once
# it listens
serve() {
	f=$1 out=$2
	shift 2
	timeout -k 5 180 "$rdmaemu" run $vtflag --no-sandbox --fabric "$f" --node "${snode:-A}" -- \
		"$xfer" server 7471 "$@" >"$out" 2>&1 &
	spid=$!
	lpids="$lpids $spid"
	tries=0
	until grep -q '^listening$' "$out" 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -le 300 ] && kill -0 $spid 2>/dev/null || return 1
		sleep 0.1
	done
}

# client FABRIC OUT ADDR ARGS...: the client on B (on $cnode if set), in the foreground
client() {
	f=$1 out=$2 addr=$3
	shift 3
	timeout -k 5 180 "$rdmaemu" run $vtflag --no-sandbox --fabric "$f" --node "${cnode:-B}" -- \
		"$xfer" client "$addr" 7471 "$@" >"$out" 2>&1
}

# cell NAME FAULTS MODE N SIZE: one transfer under a `faults` line
cell() {
	name=$1 faults=$2 mode=$3 n=$4 size=$5
	want "$name" || return 0
	f=$t/$name.fabric
	{ cat "$ref2"; echo "faults $faults"; } >"$f"
	start "$f" || { bad "$name: daemon start"; return; }
	serve "$f" "$t/$name.srv" "$mode" "$n" "$size" || { bad "$name: the server did not listen"; return; }
	client "$f" "$t/$name.cli" 192.0.2.65 "$mode" "$n" "$size"
	crc=$?
	wait $spid
	src=$?
	if [ "$mode" = rc ]; then
		if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
			grep -qx "server: rc: $n messages in order, every byte checked" "$t/$name.srv" &&
			grep -qx "client: $n messages sent" "$t/$name.cli"; then
			ok "$name: $n messages of $size bytes in order, every byte checked"
		else
			bad "$name: server exit $src: $(tail -n 1 "$t/$name.srv"); client exit $crc: $(tail -n 1 "$t/$name.cli")"
		fi
		return
	fi
	line=$(grep '^server: ud: ' "$t/$name.srv")
	r=$(echo "$line" | sed -n "s/^server: ud: \([0-9]*\) of $n received, 0 corrupt, \([0-9]*\) duplicate$/\1 \2/p")
	set -- $r
	# at most N, and no fewer than the wire's faults can explain (p lost at most thrice over)
	min=$(awk -v n="$n" -v f="$faults" 'BEGIN { split(f, a, "="); p = a[1] == "duplicate" || a[1] == "reorder" ? 0 : a[2]; printf "%d", n * (1 - 3 * p) - 5 }')
	# a duplicating wire duplicates datagrams on any stack (UD has no PSN check): those the
	# server counts twice are the wire's, never more than it could have made
	if [ $src -eq 0 ] && [ $crc -eq 0 ] && [ -n "$r" ] && [ "$1" -le $((n + $2)) ] &&
		[ "$1" -ge "$min" ] && { [ "$2" -eq 0 ] || [ "${faults#duplicate}" != "$faults" ]; }; then
		ok "$name: $1 of $n datagrams, none corrupt, $2 duplicated by the wire"
	else
		bad "$name: server exit $src: $line; client exit $crc: $(tail -n 1 "$t/$name.cli")"
	fi
}

for fault in loss duplicate reorder corrupt; do
	for p in 0.001 0.01 0.1; do
		cell "rc-$fault-$p" "$fault=$p" rc 2000 3000
		cell "ud-$fault-$p" "$fault=$p" ud 2000 512
	done
done

# The link down and up in the middle of a transfer, by the receiver itself: 1 s is within the
# requester's retries (retry_count 6, each after the ACK timeout of about 2.1 s); 60 s is not:
# the client ends with "transport retry counter exceeded"; the DREQs its death sends are lost
# on the down link (their retries end before it comes back), so the server, a receiver only,
# ends by its own deadline, as it would on any stack.
for down in 1000 60000; do
	name=rc-linkdown-$down
	want "$name" || continue
	start "$ref2" || { bad "$name: daemon start"; continue; }
	serve "$ref2" "$t/$name.srv" rc 2000 3000 500 "$rdmaemu daemon link-set A eth0 down" "$down" \
		"$rdmaemu daemon link-set A eth0 up" || { bad "$name: the server did not listen"; continue; }
	client "$ref2" "$t/$name.cli" 192.0.2.65 rc 2000 3000
	crc=$?
	wait $spid
	src=$?
	if [ $down = 1000 ]; then
		if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
			grep -qx "server: rc: 2000 messages in order, every byte checked" "$t/$name.srv"; then
			ok "$name: down 1 s after 500 messages: all 2000 in order"
		else
			bad "$name: server exit $src: $(tail -n 1 "$t/$name.srv"); client exit $crc: $(tail -n 1 "$t/$name.cli")"
		fi
	elif [ $crc -eq 3 ] && [ $src -eq 6 ] &&
		k=$(sed -n 's/^client: error: transport retry counter exceeded after \([0-9]*\) messages$/\1/p' "$t/$name.cli") &&
		ks=$(sed -n 's/^server: rc: no message for 120 s after \([0-9]*\) messages$/\1/p' "$t/$name.srv") &&
		[ -n "$k" ] && [ -n "$ks" ] && [ "$ks" -ge 500 ] && [ "$k" -le "$ks" ]; then
		# the server's receive queue takes what was on its way while its link-set ran
		# (up to its 64 receives); the client saw acknowledged no more than arrived
		ok "$name: down 60 s after 500 messages: $(tail -n 1 "$t/$name.cli" | sed 's/^client: //'); the server, whose link lost the DREQs, by its own deadline"
	else
		bad "$name: server exit $src: $(tail -n 1 "$t/$name.srv"); client exit $crc: $(tail -n 1 "$t/$name.cli")"
	fi
done

# kill -9 of either side in the middle of a long transfer: the other side ends with the real
# stack's answer, and a new transfer on the same daemon then runs like any other.
for victim in client server; do
	name=rc-kill-$victim
	want "$name" || continue
	start "$ref2" || { bad "$name: daemon start"; continue; }
	serve "$ref2" "$t/$name.srv" rc 5000000 3000 || { bad "$name: the server did not listen"; continue; }
	timeout -k 5 180 "$rdmaemu" run --virtual-time --no-sandbox --fabric "$ref2" --node B -- \
		"$xfer" client 192.0.2.65 7471 rc 5000000 3000 >"$t/$name.cli" 2>&1 &
	cpid=$!
	lpids="$lpids $cpid"
	sleep 1
	# the program itself: $cpid and $spid are timeout(1)'s, whose command (`rdmaemu run`,
	# which exec'd fault_xfer) would live on after timeout's own death
	if [ $victim = client ]; then vpid=$cpid; else vpid=$spid; fi
	kill -KILL $(pgrep -P $vpid) $vpid
	wait $cpid
	crc=$?
	wait $spid
	src=$?
	if [ $victim = client ]; then
		other=$(tail -n 1 "$t/$name.srv") orc=$src
	else
		other=$(tail -n 1 "$t/$name.cli") orc=$crc
	fi
	case $other in
	*": event: RDMA_CM_EVENT_DISCONNECTED status 0 after "*|*": error: transport retry counter exceeded after "*|*": error: Work Request Flushed Error after "*) good=1 ;;
	*) good=0 ;;
	esac
	serve "$ref2" "$t/$name.srv2" rc 100 3000 &&
		client "$ref2" "$t/$name.cli2" 192.0.2.65 rc 100 3000 && wait $spid &&
		grep -qx "server: rc: 100 messages in order, every byte checked" "$t/$name.srv2"
	again=$?
	if [ $good = 1 ] && [ $orc -ge 3 ] && [ $again -eq 0 ]; then
		ok "$name: the survivor: $(echo "$other" | sed 's/ after [0-9]* messages$//'); a new transfer afterwards: 100 in order"
	else
		bad "$name: the survivor exit $orc: $other; a new transfer afterwards: exit $again"
	fi
done

# kill -9 of either side at a point of connecting or disconnecting: the victim stops itself
# there (FAULT_XFER_STOP) and dies. The survivor ends as the real stack makes it end (below,
# per point), within its bound; then a new transfer on the same daemon runs like any other.
#   client at connect (its REQ sent): the server's request dies with the client's id, whose
#     CM REJects (cm_destroy_id: reason 28, consumer defined, once the REP came; 1, timeout,
#     before), and the server reads REJECTED; or it never came: the server serves the next
#   server at connect (the request read, not accepted): the new id dies with the server, its
#     CM REJects with reason 28 (consumer defined): the client's REJECTED
#   client at disconnect (its DREQ sent): the server has every message and its DISCONNECTED
#   server at disconnect (every message in): the client's DISCONNECTED comes as usual
for point in connect disconnect; do
	for victim in client server; do
		name=rc-kill-$victim-at-$point
		want "$name" || continue
		start "$ref2" || { bad "$name: daemon start"; continue; }
		if [ $victim = server ]; then
			export FAULT_XFER_STOP=$point
			serve "$ref2" "$t/$name.srv" rc 100 3000
			lrc=$?
			unset FAULT_XFER_STOP
			[ $lrc -eq 0 ] || { bad "$name: the server did not listen"; continue; }
			client "$ref2" "$t/$name.cli" 192.0.2.65 rc 100 3000 &
			cpid=$!
		else
			serve "$ref2" "$t/$name.srv" rc 100 3000 ||
				{ bad "$name: the server did not listen"; continue; }
			export FAULT_XFER_STOP=$point
			client "$ref2" "$t/$name.cli" 192.0.2.65 rc 100 3000 &
			cpid=$!
			unset FAULT_XFER_STOP
		fi
		lpids="$lpids $cpid"
		if [ $victim = client ]; then vpid=$cpid vout=$t/$name.cli; else vpid=$spid vout=$t/$name.srv; fi
		tries=0
		until grep -q "^$victim: stopped at $point\$" "$vout" 2>/dev/null; do
			tries=$((tries + 1))
			[ $tries -le 600 ] && kill -0 $vpid 2>/dev/null || break
			sleep 0.1
		done
		if ! grep -q "^$victim: stopped at $point\$" "$vout"; then
			bad "$name: the $victim never stopped at $point: $(tail -n 1 "$vout")"
			kill -KILL $(pgrep -P $vpid) $vpid 2>/dev/null
			continue
		fi
		kill -KILL $(xfer_pids $victim) 2>/dev/null
		if [ $victim = client ]; then
			wait $cpid 2>/dev/null
			# the server either ended with the request's death or waits for the next client
			sleep 1
			if kill -0 $spid 2>/dev/null; then
				client "$ref2" "$t/$name.cli2" 192.0.2.65 rc 100 3000
				wait $spid
				src=$?
				other="next client: $(tail -n 1 "$t/$name.srv")"
			else
				wait $spid
				src=$?
				other=$(tail -n 1 "$t/$name.srv")
			fi
			orc=$src
		else
			wait $spid 2>/dev/null
			wait $cpid
			orc=$?
			other=$(tail -n 1 "$t/$name.cli")
		fi
		kill_point_verdict "$victim" "$point" "$t/$name.srv"
		serve "$ref2" "$t/$name.srv2" rc 100 3000 &&
			client "$ref2" "$t/$name.cli3" 192.0.2.65 rc 100 3000 && wait $spid &&
			grep -qx "server: rc: 100 messages in order, every byte checked" "$t/$name.srv2"
		again=$?
		if [ $good = 1 ] && [ $again -eq 0 ]; then
			ok "$name: the survivor: $other (exit $orc); a new transfer afterwards: 100 in order"
		else
			bad "$name: the survivor exit $orc: $other; a new transfer afterwards: exit $again"
		fi
	done
done

# Device removal under a transfer: after 500 messages the server's host loses its device
# (rdmaemu daemon remove-device, as `rdma link delete` of an rxe device: the kernel's
# cma_remove_one). The server reads DEVICE_REMOVAL; the client, whose peer no longer answers,
# ends with the real stack's error; the client's host keeps working: a transfer within B.
name=rc-device-removal
if want "$name"; then
	start "$ref2" || bad "$name: daemon start"
	serve "$ref2" "$t/$name.srv" rc 2000 3000 500 "$rdmaemu daemon remove-device A rxe0" 0 true ||
		bad "$name: the server did not listen"
	client "$ref2" "$t/$name.cli" 192.0.2.65 rc 2000 3000
	crc=$?
	wait $spid
	src=$?
	ks=$(sed -n 's/^server: event: RDMA_CM_EVENT_DEVICE_REMOVAL status 0 after \([0-9]*\) messages$/\1/p' "$t/$name.srv")
	kc=$(sed -n -e 's/^client: event: RDMA_CM_EVENT_DISCONNECTED status 0 after \([0-9]*\) messages$/\1/p' \
		-e 's/^client: error: transport retry counter exceeded after \([0-9]*\) messages$/\1/p' "$t/$name.cli")
	snode=B
	serve "$ref2" "$t/$name.srv2" rc 100 3000 &&
		client "$ref2" "$t/$name.cli2" 192.0.2.66 rc 100 3000 && wait $spid &&
		grep -qx "server: rc: 100 messages in order, every byte checked" "$t/$name.srv2"
	again=$?
	snode=
	if [ $src -eq 4 ] && [ -n "$ks" ] && [ "$ks" -ge 500 ] && [ $crc -ge 3 ] && [ $crc -le 4 ] &&
		[ -n "$kc" ] && [ "$kc" -le "$ks" ] && [ $again -eq 0 ]; then
		ok "$name: after $ks messages the server's DEVICE_REMOVAL, $(tail -n 1 "$t/$name.cli" | sed 's/^client: //'); a transfer within B afterwards: 100 in order"
	else
		bad "$name: server exit $src: $(tail -n 1 "$t/$name.srv"); client exit $crc: $(tail -n 1 "$t/$name.cli"); a transfer within B afterwards: exit $again"
	fi
fi

# The daemon's queue limit: a UD receiver that stops reading (SIGSTOP after its first
# datagram) while 2000 datagrams come, on a daemon whose queue per process holds 256 KiB
# (RDMAEMU_DAEMON_OUTQ_MAX), in real time (a stopped process would hold the virtual clock).
# The daemon drops what does not fit, as a congested receiver does, and counts it: the
# receiver, let go after the sender has ended, takes what was queued, none corrupt, none
# twice; the daemon's memory stays bounded; a new transfer on the same daemon then works.
name=ud-queue-limit
if want "$name"; then
	vtflag=
	export RDMAEMU_DAEMON_OUTQ_MAX=262144
	start "$ref2" || bad "$name: daemon start"
	unset RDMAEMU_DAEMON_OUTQ_MAX
	export FAULT_XFER_STOP=received
	serve "$ref2" "$t/$name.srv" ud 2000 512 || bad "$name: the server did not listen"
	unset FAULT_XFER_STOP
	client "$ref2" "$t/$name.cli" 192.0.2.65 ud 2000 512
	crc=$?
	grep -qx "server: stopped at received" "$t/$name.srv"
	stopped=$?
	drops=$("$rdmaemu" daemon status 2>/dev/null | sed -n 's/^process [0-9]* host A .* drops \([0-9]*\) .*/\1/p')
	dpid=$("$rdmaemu" daemon status 2>/dev/null | sed -n 's/^rdmaemud [^ ]* pid \([0-9]*\)$/\1/p')
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$dpid/status" 2>/dev/null)
	kill -CONT $(xfer_pids server) 2>/dev/null
	wait $spid
	src=$?
	r=$(sed -n 's/^server: ud: \([0-9]*\) of 2000 received, 0 corrupt, 0 duplicate$/\1/p' "$t/$name.srv")
	serve "$ref2" "$t/$name.srv2" ud 100 512 &&
		client "$ref2" "$t/$name.cli2" 192.0.2.65 ud 100 512 && wait $spid &&
		grep -qx "server: ud: 100 of 100 received, 0 corrupt, 0 duplicate" "$t/$name.srv2"
	again=$?
	vtflag=--virtual-time
	if [ $stopped -eq 0 ] && [ $crc -eq 0 ] && [ $src -eq 0 ] && [ -n "$r" ] && [ "$r" -lt 2000 ] &&
		[ -n "$drops" ] && [ "$drops" -gt 0 ] && [ -n "$rss" ] && [ "$rss" -lt 65536 ] &&
		[ $again -eq 0 ]; then
		ok "$name: $r of 2000 datagrams, none corrupt, $drops frames dropped by the daemon (RSS $rss KiB); 100 of 100 afterwards"
	else
		bad "$name: stopped $stopped, server exit $src: $(tail -n 1 "$t/$name.srv"); client exit $crc; drops '$drops'; RSS '$rss' KiB; afterwards: exit $again"
	fi
fi

# SA silence: on the InfiniBand fabric (fixtures/ib.fabric) with an SA that answers nothing
# (its `sm` line's drop=1), ib-b cannot reach ib-a: IPoIB sends a unicast (the ARP reply)
# only with a path record from the SA (ipoib_start_xmit -> path_rec_start), so the address
# resolution already ends ADDR_ERROR with -ETIMEDOUT. Then, the SA answering again, the same
# connection resolves and a transfer runs.
name=sa-silence
if want "$name"; then
	f=$t/$name.fabric
	sed -e "s#^topology #topology $s/fixtures/#" -e "s#^hosts-data #hosts-data $s/fixtures/#" \
		-e 's/^sm \(.*\)$/sm \1 drop=1/' "$s/fixtures/ib.fabric" >"$f"
	start "$f" || bad "$name: daemon start"
	cnode=ib-b
	client "$f" "$t/$name.cli" 192.0.2.129 rc 1 64
	crc=$?
	start "$s/fixtures/ib.fabric" || bad "$name: daemon start"
	snode=ib-a
	serve "$s/fixtures/ib.fabric" "$t/$name.srv2" rc 100 3000 &&
		client "$s/fixtures/ib.fabric" "$t/$name.cli2" 192.0.2.129 rc 100 3000 && wait $spid &&
		grep -qx "server: rc: 100 messages in order, every byte checked" "$t/$name.srv2"
	again=$?
	snode= cnode=
	if [ $crc -eq 4 ] && grep -qx 'client: event: RDMA_CM_EVENT_ADDR_ERROR status -110 after 0 messages' "$t/$name.cli" &&
		[ $again -eq 0 ]; then
		ok "$name: ADDR_ERROR status -110 (ETIMEDOUT: no path for IPoIB's ARP reply); with the SA answering, 100 in order"
	else
		bad "$name: client exit $crc: $(tail -n 1 "$t/$name.cli"); with the SA answering: exit $again"
	fi
fi

# ARP silence: an address in the subnet that nobody has (192.0.2.70): ADDR_ERROR -110
name=arp-silence
if want "$name"; then
	start "$ref2" || bad "$name: daemon start"
	client "$ref2" "$t/$name.cli" 192.0.2.70 rc 1 64
	crc=$?
	if [ $crc -eq 4 ] && grep -qx 'client: event: RDMA_CM_EVENT_ADDR_ERROR status -110 after 0 messages' "$t/$name.cli"; then
		ok "$name: ADDR_ERROR status -110 (ETIMEDOUT)"
	else
		bad "$name: client exit $crc: $(tail -n 1 "$t/$name.cli")"
	fi
fi

"$rdmaemu" daemon stop >/dev/null 2>&1
echo "faults: $passed passed, $failed failed, $xfailed known failures (faults/known-failures)"
[ $failed -eq 0 ]
