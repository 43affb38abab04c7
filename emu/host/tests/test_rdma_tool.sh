#!/bin/sh
# iproute2's `rdma` on the emulated host: every command of fixtures/golden/rxe/rdma-tool.out
# (recorded on kernel rxe in the single reference VM, "### CMD", its output, "### rc=N") run
# again with LD_PRELOAD=librdmaemu-host.so over the reference host's sysfs, output and exit
# status compared line for line (standard output first, then standard error, as recorded). The PDs' local_dma_lkey holds a key byte rxe draws at random:
# only that number is not compared.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
s=${RDMAEMU_TOP_SRCDIR:-$b}
golden=$s/fixtures/golden/rxe/rdma-tool.out
so=$b/emu/host/.libs/librdmaemu-host.so
# a sanitizer build's library needs the sanitizer's runtime loaded first
asan=$(ldd "$so" 2>/dev/null | awk '/libasan/ {print $3}')
preload=$so
[ -n "$asan" ] && preload="$asan:$so" && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
rdma=$(command -v rdma) || { echo "SKIP: iproute2's rdma is not installed"; exit 77; }
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT
. "$s/emu/host/tests/rxe_ref_sysfs.sh"
rxe_ref_sysfs "$t/class" || exit 99

grep '^### rdma' "$golden" | sed 's/^### //' >"$t/cmds"
while read -r cmd; do
	echo "### $cmd"
	# shellcheck disable=SC2086 # the recorded command line, split as the shell did there
	RDMAEMU_HOST_SYSFS=$t/class LD_PRELOAD=$preload "$rdma" ${cmd#rdma } >"$t/out" 2>"$t/err"
	rc=$?
	cat "$t/out" "$t/err"
	echo "### rc=$rc"
done <"$t/cmds" >"$t/emu.out"

norm() { sed -E 's/local_dma_lkey 0x[0-9a-f]+/local_dma_lkey K/' "$1"; }
norm "$golden" >"$t/want"
norm "$t/emu.out" >"$t/got"
if ! diff -u "$t/want" "$t/got"; then
	echo "FAIL: rdma on the emulated host differs from kernel rxe (- kernel, + emulated)"
	exit 1
fi
echo "PASS: $(wc -l <"$t/cmds") rdma commands print what they print on kernel rxe"
