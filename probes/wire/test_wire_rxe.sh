#!/bin/sh
# The emulator's frames against kernel rxe's, field by field: probes/wire/wire_seq.c runs as
# two processes of rdmaemud on fixtures/rxe-ref2.fabric (server A, client B) with the wire
# captured, and the capture is compared with kernel rxe's for the same program between the
# reference VMs by probes/wire/wire-diff.sh under fixtures/conformance/wire-rxe.rules; the
# roles' outputs are compared with the VMs' too (flow labels masked: rdma_cm hashes them from
# a random port). The kernel side is fixtures/golden/rxe/wire-seq.{pcap,A.out,B.out}, or the
# files of WIRE_RXE_DIR (make check-rxe records them live). Exit 77 without tshark.
set -u
b=${RDMAEMU_TOP_BUILDDIR:-.}
s=${RDMAEMU_TOP_SRCDIR:-.}
command -v "${TSHARK:-tshark}" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
. "$s/emu/daemon/tests/daemon_test_env.sh"
ref=${WIRE_RXE_DIR:-$s/fixtures/golden/rxe}
fab=$s/fixtures/rxe-ref2.fabric
seq=$b/probes/wire/wire_seq

"$rdmaemu" daemon start --fabric "$fab" --pcap "$t/cap" >"$t/start.log" 2>&1 ||
	{ cat "$t/start.log"; echo "FAIL: daemon start"; exit 1; }
timeout 120 "$rdmaemu" run --no-sandbox --fabric "$fab" --node A -- "$seq" server \
	>"$t/a.out" 2>&1 &
apid=$!
lpids=$apid
n=0
until grep -q '^listening$' "$t/a.out" 2>/dev/null; do
	n=$((n + 1))
	if [ $n -gt 300 ] || ! kill -0 $apid 2>/dev/null; then
		cat "$t/a.out"
		echo "FAIL: the server did not listen"
		exit 1
	fi
	sleep 0.1
done
timeout 120 "$rdmaemu" run --no-sandbox --fabric "$fab" --node B -- "$seq" client 192.0.2.65 \
	>"$t/b.out" 2>&1
brc=$?
wait $apid
arc=$?
lpids=
"$rdmaemu" daemon stop >/dev/null 2>&1
[ $arc -eq 0 ] && [ $brc -eq 0 ] || { cat "$t/a.out" "$t/b.out"; echo "FAIL: exits A $arc B $brc"; exit 1; }

mask() { sed -E 's/flow label 0x[0-9a-f]+/flow label */' "$1"; }
for r in A B; do
	o=$t/$(echo $r | tr AB ab).out
	mask "$o" >"$o.masked"
	if mask "$ref/wire-seq-$r.out" | diff -u - "$o.masked"; then
		echo "ok: $r prints what it prints on kernel rxe"
	else
		echo "FAIL: $r's output differs from kernel rxe's"
		fail=1
	fi
done
if sh "$s/probes/wire/wire-diff.sh" "$ref/wire-seq.pcap" "$t/cap-eth.pcap" \
	"$s/fixtures/conformance/wire-rxe.rules" "$t/fields.txt"; then
	echo "ok: every RoCEv2 frame field equal to kernel rxe's or normalised by a listed rule"
else
	fail=1
fi
if [ -n "${WIRE_RXE_REPORT:-}" ]; then cp "$t/fields.txt" "$WIRE_RXE_REPORT"; fi
exit $fail
