#!/bin/sh
# The GSI fast path changes nothing the CM or rdma_cm can see: test_cma_conn (connections,
# rejects, timeouts, disconnects between hosts A and B in one process) runs with the CM, rdma_cm
# and MAD traces on, three ways: fast path (MADs as descriptions), RDMAEMU_CM_FASTPATH=0 (every
# MAD built and parsed) and fast path with a capture (frames built at send). Its results and
# every trace line (CM state transitions, events, MADs sent and received, in order) must be
# equal. The capture's file takes an fd, so fd numbers are masked in that comparison only.
set -u
top=${RDMAEMU_TOP_BUILDDIR:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cm-fastpath.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {
	out=$1
	shift
	env RDMAEMU_TRACE=cm,cma,mad "$@" "$top/lib/tests/test_cma_conn" >"$tmp/$out" 2>&1 ||
		{ tail -20 "$tmp/$out"; fail "test_cma_conn ($out)"; }
}
run fast
run wire RDMAEMU_CM_FASTPATH=0
run cap RDMAEMU_PCAP="$tmp/cap"
[ -s "$tmp/cap-eth.pcap" ] || fail "no capture written"
n=$(grep -c 'rx class 0x07' "$tmp/fast")
[ "$n" -ge 50 ] || fail "only $n CM MADs received"
cmp "$tmp/fast" "$tmp/wire" || { diff "$tmp/fast" "$tmp/wire" | head; fail "fast path != wire path"; }
sed 's/fd [0-9]*/fd N/g' "$tmp/fast" >"$tmp/fast.m"
sed 's/fd [0-9]*/fd N/g' "$tmp/cap" >"$tmp/cap.m"
cmp "$tmp/fast.m" "$tmp/cap.m" || { diff "$tmp/fast.m" "$tmp/cap.m" | head; fail "fast path != captured"; }
echo "same $(wc -l <"$tmp/fast") trace lines, $n CM MADs received, three ways"
