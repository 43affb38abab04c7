#!/bin/sh
# make check-sweep: the failure sweep (docs/failure-sweep.md). For each case, a run without
# injection counts the resource calls of each kind it makes (its "sweep-count:" line); then
# one run per call, SWEEP_FAIL=kind:N for N = 1 .. count, each of which must end with
# "sweep-result: ok" and exit 0: the failing call gave the real stack's error, the case went
# on to the end, and (in a build configured with --enable-sanitizers) AddressSanitizer saw
# no crash and LeakSanitizer no leak at exit. A run past 120 s is a hang.
#
# Usage: faults/check-sweep.sh [CASE...]  (default: every case). SWEEP_MAX=K runs at most K
# injections per kind, spread evenly over 1 .. count (every N by default); SWEEP_KEEP=DIR
# keeps each failed run's output there.
# Prints "sweep CASE: K injections, K ok" per case and last "sweep: N cases, M injections,
# F failed"; exits 1 when any failed.
builddir=${RDMAEMU_TOP_BUILDDIR:-$(pwd)}
srcdir=${RDMAEMU_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
export RDMAEMU_TOP_BUILDDIR="$builddir" RDMAEMU_TOP_SRCDIR="$srcdir"
# the sanitizers' reports go to stderr and fail the run with their own exit codes
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=23}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=24}
export ASAN_OPTIONS UBSAN_OPTIONS
unset RDMAEMU_FAIL_NTH SWEEP_FAIL

# name and command of each case
cases='cm-rc faults/sweep_cm rc
cm-ud faults/sweep_cm ud
rs faults/sweep_rs'
[ $# -gt 0 ] && want=" $* " || want=''

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
ncases=0; ninj=0; nfail=0

# run LABEL CMD...: one run; 0 when it ended "sweep-result: ok" with exit 0.
run() {
	label=$1; shift
	timeout -k 5 120 "$@" >"$tmp/out" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && tail -n 1 "$tmp/out" | grep -qx 'sweep-result: ok'; then
		return 0
	fi
	echo "sweep: FAIL $label (exit $rc):"
	grep -E 'sweep-result|ERROR: |runtime error|SUMMARY' "$tmp/out" | head -n 5 | sed 's/^/  /'
	if [ -n "$SWEEP_KEEP" ]; then
		mkdir -p "$SWEEP_KEEP" && cp "$tmp/out" "$SWEEP_KEEP/$(echo "$label" | tr ' :/' '___').log"
	fi
	return 1
}

echo "$cases" | while read -r name cmd; do
	[ -z "$want" ] || case "$want" in *" $name "*) ;; *) continue ;; esac
	echo "$name $cmd"
done >"$tmp/cases"

while read -r name cmd; do
	ncases=$((ncases + 1))
	# shellcheck disable=SC2086
	if ! run "$name count" $builddir/$cmd; then
		nfail=$((nfail + 1)); continue
	fi
	counts=$(grep '^sweep-count:' "$tmp/out" | tail -n 1)
	k=0; ok=0
	for kind in alloc mmap eventfd socket thread; do
		total=$(echo "$counts" | sed -n "s/.* $kind=\([0-9]*\).*/\1/p")
		[ -n "$total" ] || total=0
		step=1
		if [ -n "$SWEEP_MAX" ] && [ "$total" -gt "$SWEEP_MAX" ]; then
			step=$(( (total + SWEEP_MAX - 1) / SWEEP_MAX ))
		fi
		n=1
		while [ $n -le "$total" ]; do
			k=$((k + 1))
			export SWEEP_FAIL="$kind:$n"
			# shellcheck disable=SC2086
			if run "$name $kind:$n" $builddir/$cmd; then
				ok=$((ok + 1))
			fi
			unset SWEEP_FAIL
			n=$((n + step))
		done
	done
	echo "sweep $name: $k injections, $ok ok ($counts)"
	ninj=$((ninj + k)); nfail=$((nfail + k - ok))
done <"$tmp/cases"

echo "sweep: $ncases cases, $ninj injections, $nfail failed"
[ $nfail -eq 0 ]
