#!/bin/sh
# The raw RDMA netlink exchange on the emulated host: probes/host/rdma_nl_probe (socket, bind,
# getsockname, setsockopt, sendto, write, recvmsg, recvfrom, poll; every nldev command with
# good and bad devices, ports and ids, dumps, acks with and without NETLINK_CAP_ACK, batches)
# run with LD_PRELOAD=librdmaemu-host.so over the reference host's sysfs, its output compared
# byte for byte with what it printed on kernel rxe (fixtures/golden/rxe/rdma-nl-probe.out).
# The VM ran it as root; without CAP_NET_ADMIN in the initial user namespace the kernel
# refuses the administrator's commands with EPERM before it looks at them, and so does the
# emulated host.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
s=${RDMAEMU_TOP_SRCDIR:-$b}
golden=$s/fixtures/golden/rxe/rdma-nl-probe.out
so=$b/emu/host/.libs/librdmaemu-host.so
# a sanitizer build's library needs the sanitizer's runtime loaded first
asan=$(ldd "$so" 2>/dev/null | awk '/libasan/ {print $3}')
preload=$so
[ -n "$asan" ] && preload="$asan:$so" && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
probe=$b/probes/host/rdma_nl_probe
for f in "$so" "$probe"; do [ -x "$f" ] || [ -f "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
. "$s/emu/host/tests/rxe_ref_sysfs.sh"
rxe_ref_sysfs "$t/class" || exit 99

admin=0
if [ "$(id -u)" = 0 ] && [ "$(tr -s ' \t' '  ' </proc/self/uid_map 2>/dev/null)" = " 0 0 4294967295" ]; then
	admin=1
fi
awk -v admin=$admin '
	/^== / { section = $0 }
	!admin && (section == "== newlink no attributes" || section == "== set 7") {
		sub(/error EINVAL \(-22\)/, "error EPERM (-1)")
	}
	{ print }' "$golden" >"$t/want"

RDMAEMU_HOST_SYSFS=$t/class LD_PRELOAD=$preload "$probe" >"$t/got" 2>&1
echo "rc=$?" >>"$t/got"
if ! diff -u "$t/want" "$t/got"; then
	echo "FAIL: the RDMA netlink exchange differs from kernel rxe's (- kernel, + emulated)"
	exit 1
fi
echo "PASS: $(grep -c '^== ' "$t/want") exchanges as on kernel rxe"
