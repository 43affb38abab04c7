#!/bin/sh
# wire-rxe-live.sh WIRE_SEQ OUTDIR: probes/wire/wire_seq.c on kernel rxe, the server on VM A
# and the client on VM B of `scripts/rxe-vm run --two`, with the A-B wire captured. Writes
# OUTDIR/wire-seq.pcap and the two roles' outputs OUTDIR/wire-seq-A.out and -B.out (the files
# fixtures/golden/rxe keeps). Exit 77 where QEMU cannot run the VMs.
set -u
[ $# -eq 2 ] || { echo "usage: wire-rxe-live.sh WIRE_SEQ OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
vm=$here/../../scripts/rxe-vm
sh "$vm" check-usable >/dev/null 2>&1 || { echo "QEMU cannot run the reference VMs here: skipped"; exit 77; }
mkdir -p "$2" || exit 99
out=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wire-rxe-live.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
cp "$1" "$tmp/wire_seq" || exit 99
# -w: the client waits for the server's TCP port (the VMs boot at their own pace)
sh "$vm" run --two --copy "$tmp/wire_seq" --pcap "$tmp/wire-seq.pcap" --timeout 300 \
	--b-cmd '/opt/rdmaemu/wire_seq client 192.0.2.65 -w' \
	-- /opt/rdmaemu/wire_seq server -w >"$tmp/console" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	cat "$tmp/console"
	echo "wire_seq on kernel rxe failed (exit $rc)"
	exit 1
fi
sed -n 's/^A: //p' "$tmp/console" >"$out/wire-seq-A.out"
sed -n 's/^B: //p' "$tmp/console" >"$out/wire-seq-B.out"
cp "$tmp/wire-seq.pcap" "$out/wire-seq.pcap"
echo "wire-rxe-live: $(wc -l <"$out/wire-seq-A.out") + $(wc -l <"$out/wire-seq-B.out") lines, $(wc -c <"$out/wire-seq.pcap") bytes of capture in $out"
