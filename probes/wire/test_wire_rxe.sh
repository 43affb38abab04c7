#!/bin/sh
# The emulator's frames against kernel rxe's, field by field: probes/wire/wire_seq.c runs as
# two processes of rdmaemud on its virtual clock (server A, client B) with the wire captured, its sequence on
# fixtures/rxe-ref2.fabric and its loss sequence on fixtures/wire-loss.fabric; each capture is
# compared with kernel rxe's for the same program between the reference VMs by
# probes/wire/wire-diff.sh under fixtures/conformance/wire-rxe.rules, and the roles' outputs
# with the VMs' (flow labels masked: rdma_cm hashes them from a random port). The kernel side
# is fixtures/golden/rxe/wire-{seq,loss}.{pcap,-A.out,-B.out}, or the files of WIRE_RXE_DIR
# (make check-rxe records them live). Exit 77 without tshark. The virtual clock, because an ACK
# timeout (2.1 s) that fires in real time on a loaded machine, before the answer it waits for
# was delivered, resends a packet the kernel's run did not: the frames would then be right
# for that timing and still not the reference's.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v "${TSHARK:-tshark}" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
. "$s/emu/daemon/tests/daemon_test_env.sh"
ref=${WIRE_RXE_DIR:-$s/fixtures/golden/rxe}
seq=$b/probes/wire/wire_seq
for f in wire-seq.pcap wire-seq-A.out wire-seq-B.out wire-loss.pcap wire-loss-A.out wire-loss-B.out; do
	[ -s "$ref/$f" ] || { echo "FAIL: kernel rxe's $f is missing or empty in $ref"; exit 1; }
done

# scenario NAME FABRIC MODE: the two roles under a daemon of their own, captured
scenario() {
	name=$1 fab=$2 mode=$3
	"$rdmaemu" daemon start --virtual-time --fabric "$fab" --pcap "$t/$name" >"$t/start.log" 2>&1 ||
		{ cat "$t/start.log"; echo "FAIL: daemon start"; return 1; }
	# shellcheck disable=SC2086 # mode is a word or none
	timeout 120 "$rdmaemu" run --virtual-time --no-sandbox --fabric "$fab" --node A -- "$seq" server $mode \
		>"$t/$name-a.out" 2>&1 &
	apid=$!
	lpids=$apid
	n=0
	until grep -q '^listening$' "$t/$name-a.out" 2>/dev/null; do
		n=$((n + 1))
		if [ $n -gt 300 ] || ! kill -0 $apid 2>/dev/null; then
			cat "$t/$name-a.out"
			echo "FAIL: the server did not listen"
			return 1
		fi
		sleep 0.1
	done
	# shellcheck disable=SC2086
	timeout 120 "$rdmaemu" run --virtual-time --no-sandbox --fabric "$fab" --node B -- "$seq" client \
		192.0.2.65 $mode >"$t/$name-b.out" 2>&1
	brc=$?
	wait $apid
	arc=$?
	lpids=
	"$rdmaemu" daemon stop >/dev/null 2>&1
	[ $arc -eq 0 ] && [ $brc -eq 0 ] ||
		{ cat "$t/$name-a.out" "$t/$name-b.out"; echo "FAIL: $name: exits A $arc B $brc"; return 1; }
}

mask() { sed -E 's/flow label 0x[0-9a-f]+/flow label */' "$1"; }

# compare NAME: outputs and capture against kernel rxe's
compare() {
	for r in A B; do
		o=$t/$1-$(echo $r | tr AB ab).out
		mask "$o" >"$o.masked"
		if mask "$ref/$1-$r.out" | diff -u - "$o.masked"; then
			echo "ok: $1: $r prints what it prints on kernel rxe"
		else
			echo "FAIL: $1: $r's output differs from kernel rxe's"
			fail=1
		fi
	done
	if sh "$s/probes/wire/wire-diff.sh" "$ref/$1.pcap" "$t/$1-eth.pcap" \
		"$s/fixtures/conformance/wire-rxe.rules" "$t/$1-fields.txt"; then
		echo "ok: $1: every RoCEv2 frame field equal to kernel rxe's or normalised by a listed rule"
	else
		fail=1
	fi
}

scenario wire-seq "$s/fixtures/rxe-ref2.fabric" "" || exit 1
compare wire-seq
scenario wire-loss "$s/fixtures/wire-loss.fabric" loss || exit 1
compare wire-loss
cat "$t/wire-seq-fields.txt" "$t/wire-loss-fields.txt" >"$t/fields.txt"
if [ -n "${WIRE_RXE_REPORT:-}" ]; then cp "$t/fields.txt" "$WIRE_RXE_REPORT"; fi
exit $fail
