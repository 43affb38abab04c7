#!/bin/sh
# Tests of the differential gate itself (conformance/golden-compare) on small TAP and JUnit
# files: pins written by --update hold; a pinned row that disappears or moves to one-sided
# without a manifest reason fails, with one it passes; a new compared row must be pinned; a
# one-sided row needs a manifest entry and a stale entry fails; verdict and observed-value
# differences fail unless listed; normalisation rules apply; rows by construction are not
# counted as agreement. Every expectation is an exact output line.
set -u
src=${RDMAEMU_TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
fail=0 passed=0
T=$(printf '\t')

run() { # run [EXTRA OPTIONS]: the gate on $t/ref.tap against $t/obs.tap with the test's files
	sh "$src/conformance/golden-compare" --pins "$t/pins" --one-sided "$t/one" \
		--by-construction "$t/byc" --deviations "$t/dev" --observed-deviations "$t/odev" \
		--normalise "$t/norm" "$@" "$t/ref.tap" "$t/obs.tap" >"$t/out" 2>&1
	rc=$?
}
expect() { # expect NAME WANT_RC LINE...: rc and every LINE exactly, in the output of the last run
	name=$1 want=$2 ok=1
	shift 2
	[ "$rc" -eq "$want" ] || ok=0
	for line in "$@"; do grep -qxF -- "$line" "$t/out" || ok=0; done
	if [ $ok -eq 1 ]; then
		echo "ok $name"; passed=$((passed + 1))
	else
		echo "FAIL $name: rc $rc (want $want), output:"; cat "$t/out"; fail=$((fail + 1))
	fi
}
tap() { # tap FILE LINE...: a TAP file with one row per LINE ("ok - ID words" style bodies)
	f=$1; shift
	{ echo "TAP version 13"; echo "1..$#"; i=0
	  for l in "$@"; do i=$((i + 1)); case $l in
		"not ok "*) echo "not ok $i - ${l#not ok }" ;;
		*) echo "ok $i - ${l#ok }" ;;
	  esac; done; } >"$f"
}
xml() { # xml FILE ID=TEXT...: a JUnit file whose testcases carry "observed: TEXT"
	f=$1; shift
	{ echo '<?xml version="1.0" encoding="UTF-8"?>'; echo '<testsuites name="t">'
	  echo '  <testsuite name="A">'
	  for p in "$@"; do
		echo "    <testcase classname=\"t.A\" name=\"${p%%=*}\" time=\"0.001\">"
		echo "      <system-out>row ${p%%=*}"
		echo "observed: ${p#*=}</system-out>"
		echo "    </testcase>"
	  done
	  echo '  </testsuite>'; echo '</testsuites>'; } >"$f"
}

printf '# comment\n' >"$t/dev"
printf '# comment\n' >"$t/odev"
printf 'K-1   checks a header constant\n' >"$t/byc"
printf 'port\tboth\t.\tsrc port [0-9]+\t[0-9]+$\t<port>\n' >"$t/norm"
base_ref() {
	tap "$t/ref.tap" "ok A-1 first" "ok A-2 second" "not ok A-3 third" \
		"ok A-4 fourth # SKIP needs an InfiniBand port (port 1 of the first device is Ethernet)" \
		"ok A-5 fifth" "ok K-1 constant"
	xml "$t/ref.xml" "A-1=bind -> 0" "A-2=bind -> 0, src port 51450" "A-3=connect -> -1 errno EINVAL" \
		"A-5=listen -> 0" "K-1=size 80"
}
base_obs() {
	tap "$t/obs.tap" "ok A-1 first" "ok A-2 second" "not ok A-3 third" "ok A-4 fourth" \
		"ok A-5 fifth" "ok K-1 constant"
	xml "$t/obs.xml" "A-1=bind -> 0" "A-2=bind -> 0, src port 48866" "A-3=connect -> -1 errno EINVAL" \
		"A-4=ib bind -> 0" "A-5=listen -> 0" "K-1=size 80"
}
base_ref; base_obs

# --update writes the pins and the one-sided manifest and prints what it added
run --update
expect update-writes-pins 0 \
	"golden-compare: update: pins: added A-1" "golden-compare: update: pins: added A-5" \
	"golden-compare: update: one: added A-4 (ib, ref side): reference: needs an InfiniBand port (port 1 of the first device is Ethernet)"
run
expect pinned-run-passes 0 \
	"golden: 4 passed, 0 failed, 2 skipped" \
	"golden-compare: 4 rows compared (pinned 4), 4 agree, 0 listed, 0 unexplained; observed: 3 equal, 1 normalised, 0 listed, 0 different, 0 without text; 1 by construction; 1 one-sided (manifest: ib 1)"
expect by-construction-not-agreement 0 \
	"golden-compare: by construction (compile-time, not counted as agreement): K-1"
run --update
expect update-reports-unchanged 0 "golden-compare: update: pins: unchanged" "golden-compare: update: one: unchanged"

# a compared row disappears from the emulator's run
tap "$t/obs.tap" "ok A-1 first" "ok A-2 second" "not ok A-3 third" "ok A-4 fourth" "ok K-1 constant"
run
expect compared-row-disappears-fails 1 \
	"LOST A-5 pinned as compared, now one-sided (absent, obs side) without a manifest reason" \
	"golden-compare: 3 rows compared, below the pinned 4" \
	"golden: 3 passed, 1 failed, 2 skipped"

# a compared row is skipped at run time (moves to one-sided): fails without a manifest reason
tap "$t/obs.tap" "ok A-1 first" "ok A-2 second" "not ok A-3 third" "ok A-4 fourth" \
	"ok A-5 fifth # SKIP emulator-only case" "ok K-1 constant"
run
expect one-sided-without-reason-fails 1 \
	"LOST A-5 pinned as compared, now one-sided (emu-only, obs side) without a manifest reason"
cp "$t/one" "$t/one.saved"
printf 'A-5\temu-only\tobs\tthe row is being reworked\n' >>"$t/one"
run
expect one-sided-with-reason-passes 0 \
	"MOVED A-5 pinned as compared, now one-sided: the row is being reworked" \
	"golden: 3 passed, 0 failed, 3 skipped"
printf 'A-5\texcluded\tobs\tonce excluded\n' >>"$t/one.saved"
mv "$t/one.saved" "$t/one"
run
expect one-sided-other-class-fails 1 \
	"RECLASSED A-5 not compared as emu-only (obs side); the manifest says excluded (obs side)"
base_obs
run
expect stale-manifest-row-fails 1 "STALE A-5 in the one-sided manifest but compared (remove it)"
run --update
expect update-removes-stale 0 "golden-compare: update: one: removed A-5 (excluded, obs side)" \
	"golden-compare: update: pins: unchanged"

# a row newly compared must be pinned
tap "$t/ref.tap" "ok A-1 first" "ok A-2 second" "not ok A-3 third" "ok A-4 fourth" \
	"ok A-5 fifth" "ok K-1 constant"
run
expect new-compared-row-unpinned-fails 1 "UNPINNED A-4 compared but not pinned" "STALE A-4 in the one-sided manifest but compared (remove it)"
base_ref

# a one-sided row without a manifest entry
tap "$t/obs.tap" "ok A-1 first" "ok A-2 second" "not ok A-3 third" "ok A-4 fourth" \
	"ok A-5 fifth" "ok K-1 constant" "ok A-6 sixth"
run
expect unexplained-one-sided-fails 1 "UNEXPLAINED A-6 not compared (absent, ref side) and not in the one-sided manifest"
base_obs

# verdict differences
tap "$t/obs.tap" "ok A-1 first" "not ok A-2 second" "not ok A-3 third" "ok A-4 fourth" \
	"ok A-5 fifth" "ok K-1 constant"
run
expect verdict-difference-fails 1 \
	"DIFFERENT A-2        reference pass, observed fail (not in the deviation manifest)" \
	"golden: 3 passed, 1 failed, 2 skipped"
printf 'A-2   emulator lacks X\nA-1 was different once\n' >"$t/dev"
run
expect verdict-listed-passes 0 \
	"DEVIATION A-2        reference pass, observed fail: emulator lacks X" \
	"golden-compare: listed deviations that no longer differ (stale): A-1"
printf 'A-2\n' >"$t/dev"
run
expect entry-without-reason-refused 2 "golden-compare: $t/dev: A-2 has no reason"
printf '# comment\n' >"$t/dev"
base_obs

# observed values
xml "$t/obs.xml" "A-1=bind -> 0" "A-2=bind -> 0, src port 48866" "A-3=connect -> -1 errno ENODEV" \
	"A-5=listen -> 0" "K-1=size 96"
run
expect observed-difference-fails 1 "OBSERVED-DIFFERENT A-3" \
	"  reference: connect -> -1 errno EINVAL" "  emulator:  connect -> -1 errno ENODEV" \
	"golden: 3 passed, 1 failed, 2 skipped"
printf 'A-3   the emulator has no such device\nA-1   stale entry\n' >"$t/odev"
run
expect observed-listed-passes-stale-fails 1 \
	"OBSERVED-DEVIATION A-3: the emulator has no such device" \
	"golden-compare: listed observed deviations that no longer differ (stale, remove them): A-1"
run --update
expect update-drops-stale-observed 0 "golden-compare: update: odev: removed stale A-1"
grep -q '^A-1' "$t/odev" && { echo "FAIL update-drops-stale-observed: A-1 still listed"; fail=$((fail + 1)); }
run
expect observed-listed-passes 0 \
	"golden-compare: 4 rows compared (pinned 4), 4 agree, 0 listed, 0 unexplained; observed: 2 equal, 1 normalised, 1 listed, 0 different, 0 without text; 1 by construction; 1 one-sided (manifest: ib 1)"
printf 'port\tboth\t^B-\tsrc port [0-9]+\t[0-9]+$\t<port>\n' >"$t/norm"
run
expect normalisation-rule-rows 1 "OBSERVED-DIFFERENT A-2" "  reference: bind -> 0, src port 51450"
printf 'port\tboth\t.\tsrc port [0-9]+\n' >"$t/norm"
run
expect bad-rule-refused 2 "golden-compare: bad normalisation rule: port${T}both${T}.${T}src port [0-9]+"

rm -f "$t/obs.xml"
run
expect missing-junit-file 2 "golden-compare: cannot read $t/obs.xml"

echo "golden-compare tests: $passed passed, $fail failed"
[ $fail -eq 0 ]
