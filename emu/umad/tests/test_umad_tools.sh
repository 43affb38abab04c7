#!/bin/sh
# Debian's infiniband-diags (built against rdma-core 44's libibumad.so.3, unchanged) on the
# emulated libibumad.so.3 and fixtures/ib.fabric, from host ib-a: every command of the commands
# file (NAME<TAB>COMMAND) prints exactly NAME.out of the expected directory and exits 0.
#   UMAD_TOOLS_COMMANDS  the commands file (default fixtures/golden/umad/commands)
#   UMAD_TOOLS_EXPECTED  the directory of NAME.out files (default fixtures/golden/umad)
#   UMAD_TOOLS_RECORD=1  writes NAME.out instead of comparing
# ibnetdiscover's generation line holds the time and is left out of the comparison; its output
# must also describe the same nodes and cables as fixtures/ib.topo, the file the fabric is
# built from (node blocks compared in any order: libibnetdisc prints ib-c, ib-b, ib-a).
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
cmds=${UMAD_TOOLS_COMMANDS:-$s/fixtures/golden/umad/commands}
want=${UMAD_TOOLS_EXPECTED:-$s/fixtures/golden/umad}
. "$s/emu/umad/tests/umad_test_env.sh"
fail=0

# the tools bind to this library, not the system's
ldd "$(command -v ibstat)" | grep -q "libibumad.so.3 => $b/emu/umad/.libs/" ||
	{ echo "ibstat does not load the emulated libibumad.so.3"; fail=1; }

tab=$(printf '\t')
n=0
while IFS="$tab" read -r name cmd; do
	case $name in ''|'#'*) continue ;; esac
	n=$((n + 1))
	sh -c "$cmd" >"$tmp/$name.raw" 2>"$tmp/$name.err" </dev/null; rc=$?
	grep -v '^# Topology file: generated on ' "$tmp/$name.raw" >"$tmp/$name.out"
	if [ $rc -ne 0 ]; then
		echo "$name: '$cmd' exited $rc"; cat "$tmp/$name.err"; fail=1
	fi
	if [ "${UMAD_TOOLS_RECORD:-0}" = 1 ]; then
		cp "$tmp/$name.out" "$want/$name.out"
	elif ! diff -u "$want/$name.out" "$tmp/$name.out"; then
		echo "$name: '$cmd' printed other lines than $want/$name.out"; fail=1
	fi
done <"$cmds"
[ $n -gt 0 ] || { echo "no commands in $cmds"; fail=1; }

# ibnetdiscover against the topology file: its node blocks, comments dropped, sorted
blocks() {
	grep -v '^#' "$1" | awk 'BEGIN { RS = ""; ORS = "\n\n" } { print }' |
		awk 'BEGIN { RS = ""; ORS = "\0" } { print }' | sort -z | tr '\0' '\n'
}
if [ -f "$tmp/ibnetdiscover.out" ]; then
	blocks "$s/fixtures/ib.topo" >"$tmp/topo.blocks"
	blocks "$tmp/ibnetdiscover.out" >"$tmp/ibnd.blocks"
	diff -u "$tmp/topo.blocks" "$tmp/ibnd.blocks" ||
		{ echo "ibnetdiscover: other nodes or cables than fixtures/ib.topo"; fail=1; }
fi

# A directed route out of an unconnected switch port gets no answer: the tool gives up after
# its timeout and retries (3 x 100 ms), as on a real subnet.
start=$(date +%s%N)
smpquery -t 100 -D nodeinfo 0,1,5 >"$tmp/lost.out" 2>&1; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -ne 0 ] || { echo "smpquery through an unconnected port: exit 0"; fail=1; }
grep -q 'node info query failed' "$tmp/lost.out" ||
	{ echo "smpquery through an unconnected port:"; cat "$tmp/lost.out"; fail=1; }
[ $ms -ge 300 ] || { echo "smpquery through an unconnected port gave up after $ms ms (< 300)"; fail=1; }

exit $fail
