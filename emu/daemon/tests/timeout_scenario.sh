# Sourced by test_daemon_timeouts.sh (real time) and test_daemon_timeouts_vt.sh (virtual
# time), after daemon_test_env.sh: the two-host run of probes/cma/timeout_probe.c whose output
# on the reference VMs (Linux 6.1 rxe, rdma-core 44) is fixtures/golden/rxe/timeout-probe-A.out
# and -B.out, on fixtures/rxe-ref2.fabric.
#   timeout_scenario DIR [DAEMON-OPTION...]: starts rdmaemud with the options and its capture
#       under DIR/cap, runs B (the server, which takes its own link down with `rdmaemu daemon
#       link-set B eth0 down`) and A (the client) to their ends (`rdmaemu run --virtual-time`
#       when --virtual-time is among the options), stops the daemon; DIR/a.out and DIR/b.out
#       hold their outputs. Non-zero, with the reason printed, when a role failed. Each role
#       runs in a sandbox of its own (another network namespace) when TIMEOUT_SANDBOX=1, else
#       with --no-sandbox.
#   timeout_golden DIR: both outputs against the VMs' with the seconds masked ("t+21 event"
#       -> "t+* event"), the two side by side; non-zero when one differs.
# shellcheck shell=sh
probe="$b/emu/daemon/tests/timeout_probe"
ref2="$s/fixtures/rxe-ref2.fabric"

timeout_mask() {
	sed -E 's/^t\+[0-9]+ /t+* /' "$1"
}

timeout_scenario() {
	dir=$1
	shift
	runopt=--no-sandbox
	[ "${TIMEOUT_SANDBOX:-0}" = 1 ] && runopt=
	for o in "$@"; do
		[ "$o" = --virtual-time ] && runopt="$runopt --virtual-time"
	done
	mkdir -p "$dir"
	"$rdmaemu" daemon start --fabric "$ref2" --pcap "$dir/cap" "$@" ||
		{ echo "daemon start failed"; return 1; }
	# shellcheck disable=SC2086
	timeout 300 "$rdmaemu" run $runopt --fabric "$ref2" --node B -- \
		"$probe" server "$rdmaemu daemon link-set B eth0 down" >"$dir/b.out" 2>&1 &
	bpid=$!
	lpids=$bpid
	n=0
	until grep -q ' listening$' "$dir/b.out" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -gt 300 ] || ! kill -0 $bpid 2>/dev/null; then
			echo "FAIL: the server did not listen"
			cat "$dir/b.out"
			return 1
		fi
		sleep 0.1
	done
	# shellcheck disable=SC2086
	timeout 300 "$rdmaemu" run $runopt --fabric "$ref2" --node A -- \
		"$probe" client >"$dir/a.out" 2>&1
	arc=$?
	wait $bpid
	brc=$?
	lpids=
	"$rdmaemu" daemon stop >/dev/null 2>&1
	[ $arc -eq 0 ] && [ $brc -eq 0 ] || { echo "FAIL: exits A $arc B $brc"; return 1; }
}

timeout_golden() {
	rc=0
	for r in A B; do
		out="$1/$(echo $r | tr AB ab).out"
		timeout_mask "$s/fixtures/golden/rxe/timeout-probe-$r.out" >"$1/golden-$r"
		timeout_mask "$out" >"$1/masked-$r"
		if ! diff -u "$1/golden-$r" "$1/masked-$r" >"$1/diff-$r"; then
			echo "FAIL: $r differs from kernel rxe (seconds masked):"
			cat "$1/diff-$r"
			rc=1
		fi
		echo "--- $r (emulator | kernel rxe):"
		paste -d'|' "$out" "$s/fixtures/golden/rxe/timeout-probe-$r.out" |
			awk -F'|' '{ printf "%-58s | %s\n", $1, $2 }'
	done
	return $rc
}
