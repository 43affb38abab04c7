#!/bin/sh
# The verbs differential check: runs the probes of probes/verbs/ on the emulator (built
# like applications, against the system's rdma-core headers) and compares their output with
# what the same probes printed on kernel rxe in the reference VM (fixtures/golden/rxe/).
# Normalised first, because they legitimately differ: the key byte of lkey/rkey (random in the
# kernel, seeded here; only whether an rkey exists is kept), QP numbers (the kernel's counter
# is shared with earlier QPs) and pointers. Every remaining difference must be listed in
# fixtures/conformance/verbs-probe.deviations with a reason.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
s=${RDMAEMU_TOP_SRCDIR:-$b}
dev="$s/fixtures/conformance/verbs-probe.deviations"
t=$(mktemp -d) || exit 99
trap 'rm -rf "$t"' EXIT

norm() {
	sed -E -e 's/lkey=0x[0-9a-f]+/lkey=K/g' -e 's/rkey=0x0( |$)/rkey=none\1/g' \
		-e 's/rkey=0x[0-9a-f]+/rkey=K/g' -e 's/(qpn|dqp|qp)=[0-9]+/\1=N/g' \
		-e 's/srq=0x[0-9a-f]+/srq=P/g' -e 's/ +/ /g'
}
listed() { # listed LINE: 0 if LINE starts with a prefix of the deviation list
	line=$1
	while IFS='	' read -r prefix reason; do
		case $prefix in ''|'#'*) continue ;; esac
		case $line in "$prefix"*) return 0 ;; esac
	done <"$dev"
	return 1
}

status=0 total=0 same=0 dev_lines=0 unexplained=0
for p in device objects datapath ext wr mw limits; do
	bin="$b/probes/verbs/verbs_probe_$p"
	if ! RDMAEMU_FABRIC="$s/fixtures/rxe-ref.fabric" \
	     LD_LIBRARY_PATH="$b/emu/verbs/.libs:$b/emu/.libs" "$bin" >"$t/emu.out" 2>&1; then
		echo "FAIL probe $p exited with an error on the emulator:"; tail -n 20 "$t/emu.out"
		status=1
		continue
	fi
	norm <"$s/fixtures/golden/rxe/verbs-probe-$p.out" >"$t/vm"
	norm <"$t/emu.out" >"$t/emu"
	n=$(wc -l <"$t/vm")
	total=$((total + n))
	diff "$t/vm" "$t/emu" | grep '^[<>] ' >"$t/changed"
	same=$((same + n - $(grep -c '^< ' "$t/changed")))
	while IFS= read -r l; do
		side=${l%% *} text=${l#? }
		if listed "$text"; then
			dev_lines=$((dev_lines + 1))
		else
			unexplained=$((unexplained + 1))
			echo "DIFFERENT ($p, $( [ "$side" = '<' ] && echo 'kernel rxe' || echo emulator)): $text"
			status=1
		fi
	done <"$t/changed"
done
echo "probe-diff: $total kernel rxe lines, $same identical on the emulator, $dev_lines changed lines listed as deviations, $unexplained unexplained"
echo "verbs-probe: $same passed, $unexplained failed, $((total - same)) skipped"
exit $status
