#!/bin/sh
# examples/cmake: a user's CMake project whose CTest test runs under `rdmaemu run` (the target's
# CROSSCOMPILING_EMULATOR), configured, built and tested with cmake and ctest against rdmaemu on
# PATH. The test's output must hold both sides' lines.
set -u
. "${RDMAEMU_TOP_SRCDIR:-.}/examples/tests/example_env.sh"
command -v cmake >/dev/null 2>&1 || { echo "SKIP: cmake is not installed (scripts/bootstrap)"; exit 77; }
example_copy cmake
cmake -S . -B build >"$t/cmake.log" 2>&1 || { cat "$t/cmake.log"; exit 1; }
cmake --build build >"$t/build.log" 2>&1 || { cat "$t/build.log"; exit 1; }
(cd build && ctest --output-on-failure -V) >"$t/ctest.log" 2>&1 || { cat "$t/ctest.log"; exit 1; }
grep -qF "Test command: $bin/rdmaemu \"run\" \"--\" " "$t/ctest.log" || { echo "FAIL: ctest did not run rdmaemu run"; cat "$t/ctest.log"; exit 1; }
for want in 'cm_ping: server received "ping"' 'cm_ping: client received "pong"' \
	'100% tests passed, 0 tests failed out of 1'; do
	grep -qF "$want" "$t/ctest.log" || { echo "FAIL: ctest output lacks $want"; cat "$t/ctest.log"; exit 1; }
done
echo "ok cmake: ctest ran cm_ping under rdmaemu run"
