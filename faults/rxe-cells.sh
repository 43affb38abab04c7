#!/bin/sh
# The guest half of faults/check-faults-rxe.sh: the kill and device-removal cells of the fault
# matrix (docs/faults.md) on kernel rxe, in the two VMs of `scripts/rxe-vm run --two`. The
# server runs on B (192.0.2.66), the client on A (192.0.2.65), each fault_xfer exactly as
# faults/check-faults.sh runs it on the emulator (the same arguments, FAULT_XFER_STOP points,
# kill -9 of the program itself).
#   rxe-cells.sh drive [RE] on A: runs every cell (whose name matches the extended regular
#                           expression RE), driving B through its command port; each
#                           cell's outputs and exit statuses go to /out (NAME.srv, NAME.src,
#                           NAME.cli, NAME.crc, ...) and, with what was timed, to the console
#   rxe-cells.sh FUNC ARGS  one step on this VM (B runs them for A: `nc -ll -p 9000 -e /bin/sh`
#                           on B's command port, reached over the VMs' own wire only)
set -u
self=/opt/rdmaemu/rxe-cells.sh
xfer=/opt/rdmaemu/fault_xfer
d=/tmp/cells
ip_a=192.0.2.65
ip_b=192.0.2.66
mkdir -p "$d"

now() { cut -d' ' -f1 /proc/uptime; }

# start NAME SIDE STOP ARG...: `fault_xfer SIDE ARG...` in the background with
# FAULT_XFER_STOP=STOP; its output in d/NAME, its pid in d/NAME.pid, its exit status in
# d/NAME.rc (written when it ends, with the time in d/NAME.end)
start() {
	n=$1 side=$2 stop=$3
	shift 3
	rm -f "$d/$n" "$d/$n.pid" "$d/$n.rc" "$d/$n.end"
	(
		# shellcheck disable=SC2016,SC2094 # expands in the inner shell; NAME.pid is not NAME
		FAULT_XFER_STOP=$stop sh -c 'echo $$ >"$0.pid"; exec "$@"' "$d/$n" "$xfer" "$side" "$@" \
			>"$d/$n" 2>&1 </dev/null
		echo $? >"$d/$n.rc.new"
		now >"$d/$n.end"
		mv "$d/$n.rc.new" "$d/$n.rc"
	) >/dev/null 2>&1 </dev/null &
	w=0
	until [ -s "$d/$n.pid" ] || [ $w -ge 100 ]; do sleep 0.05; w=$((w + 1)); done
}

# waitline NAME REGEX S: until a line of NAME's output matches REGEX (0), NAME ends without
# one or S seconds pass (1)
waitline() {
	w=0
	while [ $w -lt $(($3 * 10)) ]; do
		grep -qE "$2" "$d/$1" 2>/dev/null && return 0
		[ -f "$d/$1.rc" ] && { grep -qE "$2" "$d/$1"; return; }
		sleep 0.1
		w=$((w + 1))
	done
	return 1
}

# waitend NAME S: until NAME has ended (0) or S seconds pass (1)
waitend() {
	w=0
	while [ $w -lt $(($2 * 10)) ]; do
		[ -f "$d/$1.rc" ] && return 0
		sleep 0.1
		w=$((w + 1))
	done
	return 1
}

# alive NAME: whether NAME still runs
alive() { [ ! -f "$d/$1.rc" ]; }

# kill9 NAME: kill -9 of the program itself; the time in d/NAME.killed
kill9() {
	now >"$d/$1.killed"
	kill -KILL "$(cat "$d/$1.pid")" 2>/dev/null
}

# result NAME: its output, then "rc N" (N: its exit status, "running" if it has not ended)
result() {
	cat "$d/$1" 2>/dev/null
	if [ -f "$d/$1.rc" ]; then echo "rc $(cat "$d/$1.rc")"; else echo "rc running"; fi
}

# sh_c CMD: a command line, run here (B runs the device-removal commands this way)
sh_c() { sh -c "$1"; }

q() {
	for a; do printf "'%s' " "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"; done
}

# on NODE FUNC ARG...: a step of this script on A (here) or B (through its command port)
on() {
	node=$1
	shift
	if [ "$node" = A ]; then
		"$@"
	else
		# shellcheck disable=SC2016 # expands on B
		printf 'sh %s %s; echo "<<rc=$?>>"\n' "$self" "$(q "$@")" |
			timeout 300 nc "$ip_b" 9000 >"$d/on.out"
		sed '/^<<rc=[0-9]*>>$/d' "$d/on.out"
		r=$(sed -n 's/^<<rc=\([0-9]*\)>>$/\1/p' "$d/on.out")
		return "${r:-255}"
	fi
}

# keep NODE NAME FILE: NAME's output and exit status (result) into /out/FILE and FILE's rc
keep() {
	on "$1" result "$2" >"$d/keep"
	sed '$d' "$d/keep" >"/out/$3"
	tail -n 1 "$d/keep" | sed 's/^rc //' >"/out/$3.rc"
	sed "s/^/  $3: /" "$d/keep"
}

secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# again NAME NODE ADDR: a new transfer, server on NODE (B, or A after B's device is gone),
# client on A: its server's output and status in /out/NAME.srv2
again() {
	on "$2" start "$1-srv2" server "" 7471 rc 100 3000
	on "$2" waitline "$1-srv2" '^listening$' 60
	start "$1-cli2" client "" "$3" 7471 rc 100 3000
	waitend "$1-cli2" 120
	on "$2" waitend "$1-srv2" 60
	keep "$2" "$1-srv2" "$1.srv2"
	keep A "$1-cli2" "$1.cli2"
}

# want NAME: whether cell NAME runs (drive's RE)
want() { [ -z "$only" ] || echo "$1" | grep -Eq "$only"; }

# The kill -9 of either side in a long transfer
cell_kill() {
	victim=$1 name=rc-kill-$1
	want "$name" || return 0
	echo "=== $name"
	on B start "$name-srv" server "" 7471 rc 5000000 3000
	on B waitline "$name-srv" '^listening$' 60 || echo "  the server did not listen"
	start "$name-cli" client "" "$ip_b" 7471 rc 5000000 3000
	sleep 5
	t0=$(now)
	if [ "$victim" = client ]; then
		kill9 "$name-cli"
		on B waitend "$name-srv" 150
	else
		on B kill9 "$name-srv"
		waitend "$name-cli" 150
	fi
	echo "  the survivor ended $(secs "$t0" "$(now)") s after the kill"
	keep B "$name-srv" "$name.srv"
	keep A "$name-cli" "$name.cli"
	again "$name" B "$ip_b"
}

# kill -9 of a side stopped at a point of connecting or disconnecting (FAULT_XFER_STOP)
cell_point() {
	victim=$1 point=$2 name=rc-kill-$1-at-$2
	want "$name" || return 0
	echo "=== $name"
	if [ "$victim" = server ]; then sstop=$point cstop=""; else sstop="" cstop=$point; fi
	on B start "$name-srv" server "$sstop" 7471 rc 100 3000
	on B waitline "$name-srv" '^listening$' 60 || echo "  the server did not listen"
	start "$name-cli" client "$cstop" "$ip_b" 7471 rc 100 3000
	if [ "$victim" = server ]; then
		on B waitline "$name-srv" "^server: stopped at $point\$" 60 ||
			echo "  the server never stopped at $point"
		t0=$(now)
		on B kill9 "$name-srv"
		waitend "$name-cli" 150
		echo "  the client ended $(secs "$t0" "$(now)") s after the kill"
	else
		waitline "$name-cli" "^client: stopped at $point\$" 60 ||
			echo "  the client never stopped at $point"
		t0=$(now)
		kill9 "$name-cli"
		if [ "$point" = connect ]; then
			# the server either ends with the request's death or waits for the next client
			on B waitend "$name-srv" 30
			if on B alive "$name-srv"; then
				echo "  the server still runs 30 s after the kill: a next client"
				start "$name-cli2" client "" "$ip_b" 7471 rc 100 3000
				waitend "$name-cli2" 120
				on B waitend "$name-srv" 60
				keep A "$name-cli2" "$name.next"
			fi
		else
			on B waitend "$name-srv" 150
		fi
		echo "  the server ended $(secs "$t0" "$(now)") s after the kill"
	fi
	keep B "$name-srv" "$name.srv"
	keep A "$name-cli" "$name.cli"
	again "$name" B "$ip_b"
}

# Device removal: after 500 messages the server runs `rdma link delete rxe0` in the
# background (the command waits until every process has closed its verbs context of rxe0,
# so the server itself must not wait for it)
cell_removal() {
	name=rc-device-removal
	want "$name" || return 0
	echo "=== $name"
	on B start "$name-srv" server "" 7471 rc 2000 3000 500 \
		"(s=\$(cut -d' ' -f1 /proc/uptime); rdma link delete rxe0; echo \"rc \$?, from \$s to \$(cut -d' ' -f1 /proc/uptime)\") >$d/delete.log 2>&1 &" \
		0 true
	on B waitline "$name-srv" '^listening$' 60 || echo "  the server did not listen"
	start "$name-cli" client "" "$ip_b" 7471 rc 2000 3000
	waitend "$name-cli" 150
	on B waitend "$name-srv" 150
	keep B "$name-srv" "$name.srv"
	keep A "$name-cli" "$name.cli"
	sleep 2
	echo "  B: rdma link delete: $(on B sh_c "cat $d/delete.log; echo the server ended at \$(cat $d/$name-srv.end); rdma link show | tr '\n' ' '")"
	# the client's host keeps working: a transfer within A
	again "$name" A "$ip_a"
	# the device back on B (rdma link add): a transfer from A to B
	on B sh_c "rdma link add rxe0 type rxe netdev eth0; sleep 1; rdma link show"
	again "$name-readd" B "$ip_b"
}

drive() {
	only=${1:-}
	t0=$(now)
	w=0
	until [ "$(echo 'echo up' | timeout 5 nc "$ip_b" 9000 2>/dev/null)" = up ]; do
		w=$((w + 1))
		[ $w -lt 120 ] || { echo "B's command port never answered"; exit 1; }
		sleep 0.5
	done
	echo "B answers after $(secs "$t0" "$(now)") s"
	cell_kill client
	cell_kill server
	for point in connect disconnect; do
		cell_point client "$point"
		cell_point server "$point"
	done
	cell_removal
	echo "cells took $(secs "$t0" "$(now)") s"
	uname -r -v >/out/uname
}

[ $# -gt 0 ] || exit 2
"$@"
