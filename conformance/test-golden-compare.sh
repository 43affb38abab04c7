#!/bin/sh
# Tests of the differential gate itself (conformance/golden-compare) on small TAP files: an
# unlisted difference fails, a listed one passes with its reason, a stale entry is reported,
# an entry without a reason is refused, rows run by one side only are not compared.
set -u
src=${RDMAEMU_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
gc="sh $src/conformance/golden-compare"
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
fail=0
expect() { # expect NAME WANT_RC WANT_TEXT -- output of the last run in $t/out, rc in $rc
	if [ "$rc" -ne "$2" ] || ! grep -qF -- "$3" "$t/out"; then
		echo "FAIL $1: rc $rc (want $2), output:"; cat "$t/out"; fail=1
	else
		echo "ok $1"
	fi
}
cat >"$t/ref.tap" <<'TAP'
TAP version 13
1..5
ok 1 - A-1 first
ok 2 - A-2 second
not ok 3 - A-3 third
ok 4 - A-4 fourth # SKIP needs a device
ok 5 - A-5 fifth
TAP
cat >"$t/obs.tap" <<'TAP'
TAP version 13
1..5
ok 1 - A-1 first
not ok 2 - A-2 second
not ok 3 - A-3 third
ok 4 - A-4 fourth
ok 5 - A-5 fifth # SKIP excluded: not yet
TAP
: >"$t/none"
$gc "$t/ref.tap" "$t/obs.tap" "$t/none" >"$t/out" 2>&1; rc=$?
expect unlisted-difference-fails 1 "DIFFERENT A-2        reference pass, observed fail"
expect counts 1 "golden: 2 passed, 1 failed, 2 skipped"
expect one-side-only 1 "run by one side only: A-4(obs) A-5(ref)"

printf '# comment\nA-2   emulator lacks X\nA-1 was different once\n' >"$t/dev"
$gc "$t/ref.tap" "$t/obs.tap" "$t/dev" >"$t/out" 2>&1; rc=$?
expect listed-difference-passes 0 "DEVIATION A-2        reference pass, observed fail: emulator lacks X"
expect stale-entry-reported 0 "listed deviations that no longer differ (stale): A-1"

printf 'A-2\n' >"$t/dev"
$gc "$t/ref.tap" "$t/obs.tap" "$t/dev" >"$t/out" 2>&1; rc=$?
expect entry-without-reason-refused 2 "deviation A-2 has no reason"

$gc "$t/ref.tap" "$t/missing.tap" >"$t/out" 2>&1; rc=$?
expect missing-file 2 "cannot read"

[ $fail -eq 0 ] && echo "golden-compare tests: 7 passed, 0 failed" || echo "golden-compare tests: failures"
exit $fail
