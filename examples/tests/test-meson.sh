#!/bin/sh
# examples/meson: a user's meson project whose tests run under `rdmaemu run` (a default test
# setup with exe_wrapper), set up, built and tested with meson and ninja against rdmaemu on
# PATH. The test's log must hold both sides' lines.
set -u
. "${RDMAEMU_TOP_SRCDIR:-.}/examples/tests/example_env.sh"
command -v meson >/dev/null 2>&1 || { echo "SKIP: meson is not installed (scripts/bootstrap)"; exit 77; }
example_copy meson
meson setup build >"$t/setup.log" 2>&1 || { cat "$t/setup.log"; exit 1; }
meson compile -C build >"$t/build.log" 2>&1 || { cat "$t/build.log"; exit 1; }
meson test -C build --print-errorlogs >"$t/test.log" 2>&1 || { cat "$t/test.log" build/meson-logs/testlog*.txt; exit 1; }
log=build/meson-logs/testlog.txt
[ -f "$log" ] || { echo "FAIL: no $log "; ls build/meson-logs; exit 1; }
grep -qF "command: CM_PING_ADDR=192.0.2.1 $bin/rdmaemu run -- " "$log" ||
	grep -qE "^command: .*$bin/rdmaemu run -- .*/cm_ping\$" "$log" ||
	{ echo "FAIL: meson test did not run rdmaemu run"; cat "$log"; exit 1; }
for want in 'cm_ping: server received "ping"' 'cm_ping: client received "pong"'; do
	grep -qF "$want" "$log" || { echo "FAIL: the test log lacks $want"; cat "$log"; exit 1; }
done
grep -qE '^Ok: +1 *$' "$t/test.log" || { echo "FAIL: meson test counted no pass"; cat "$t/test.log"; exit 1; }
echo "ok meson: meson test ran cm_ping under rdmaemu run"
