#!/bin/sh
# `rdmaemu run --rdma-core 44|61` and RDMAEMU_RDMA_CORE choose the librdmacm personality of the
# program it runs (docs/rdma-core-generations.md): the conformance suite's header names the
# library loaded and its level, STR-19 passes with that generation's strings; without either
# the default personality (`rdmaemu --version`) runs; a RDMAEMU_RDMA_CORE that the loaded
# library does not match gets the library's one line; a personality that does not exist is a
# usage error.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
. "$s/emu/daemon/tests/daemon_test_env.sh"
unset RDMAEMU_RDMA_CORE RDMAEMU_LIBDIR
conf="$b/conformance/rdmaemu-conformance"
lib=$(cd "$b/lib" && pwd)

# header LEVEL PATH: the suite ran STR-19 on personality LEVEL from PATH, and passed
header() {
	if ! grep -qx "librdmacm: $2 (rdma-core level $1, from rdmaemu_ctl_rdmacm_level)" "$t/out" ||
		! grep -qx 'conformance: 1 passed, 0 failed, 0 skipped' "$t/out"; then
		echo "FAIL: $3: not personality $1 from $2"; sed 's/^/  /' "$t/out" "$t/err"; fail=1
	else
		echo "ok: $3"
	fi
}

"$rdmaemu" daemon start >/dev/null 2>"$t/err" || { echo "FAIL: daemon start"; cat "$t/err"; exit 1; }
for v in 44 61; do
	timeout 60 "$rdmaemu" run --no-sandbox --rdma-core $v -- "$conf" --target emu \
		--case STR-19 >"$t/out" 2>"$t/err"
	header $v "$lib/rdma-core-$v/.libs/librdmacm.so.1" "run --rdma-core $v"
	RDMAEMU_RDMA_CORE=$v timeout 60 "$rdmaemu" run --no-sandbox -- "$conf" --target emu \
		--case STR-19 >"$t/out" 2>"$t/err"
	header $v "$lib/rdma-core-$v/.libs/librdmacm.so.1" "RDMAEMU_RDMA_CORE=$v run"
done
def=$("$rdmaemu" --version | sed -n 's/^rdmaemu .* (librdmacm personality: rdma-core \([0-9]*\), libibverbs: .*)$/\1/p')
timeout 60 "$rdmaemu" run --no-sandbox -- "$conf" --target emu --case STR-19 >"$t/out" 2>"$t/err"
header "$def" "$lib/.libs/librdmacm.so.1" "run without --rdma-core: the default ($def)"

# the library loaded is 44, the program's environment asks for 61
timeout 60 "$rdmaemu" run --no-sandbox --rdma-core 44 -- env RDMAEMU_RDMA_CORE=61 "$conf" \
	--target emu --case STR-19 >"$t/out" 2>"$t/err"
header 44 "$lib/rdma-core-44/.libs/librdmacm.so.1" "a mismatching RDMAEMU_RDMA_CORE runs the library loaded"
want="rdmaemu: RDMAEMU_RDMA_CORE=61, but the librdmacm.so.1 loaded is personality 44"
if [ "$(grep -c "^$want\$" "$t/err")" -lt 1 ] || grep -v "^$want\$" "$t/err" | grep -q RDMAEMU_RDMA_CORE; then
	echo "FAIL: the mismatch line"; sed 's/^/  /' "$t/err"; fail=1
else
	echo "ok: the mismatch line"
fi

timeout 60 "$rdmaemu" run --no-sandbox --rdma-core 45 -- true >"$t/out" 2>"$t/err"
rc=$?
if [ $rc -ne 2 ] || [ "$(cat "$t/err")" != "rdmaemu: --rdma-core / RDMAEMU_RDMA_CORE: '45': the personalities are 44 and 61" ]; then
	echo "FAIL: --rdma-core 45: exit $rc"; sed 's/^/  /' "$t/err"; fail=1
else
	echo "ok: --rdma-core 45 is a usage error"
fi
exit $fail
