#!/bin/sh
# wire-rxe-live.sh WIRE_SEQ WIRE_RELAY OUTDIR: probes/wire/wire_seq.c on kernel rxe, the server
# on VM A and the client on VM B of `scripts/rxe-vm run --two`, with the A-B wire captured:
# the sequence (OUTDIR/wire-seq.pcap, wire-seq-A.out, wire-seq-B.out), then the loss sequence
# through probes/wire/wire_relay with fixtures/wire-loss.fabric's drop-match rules
# (OUTDIR/wire-loss.pcap, wire-loss-A.out, wire-loss-B.out): the files fixtures/golden/rxe
# keeps. Exit 77 where QEMU cannot run the VMs.
set -u
[ $# -eq 3 ] || { echo "usage: wire-rxe-live.sh WIRE_SEQ WIRE_RELAY OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
vm=$here/../../scripts/rxe-vm
sh "$vm" check-usable >/dev/null 2>&1 || { echo "QEMU cannot run the reference VMs here: skipped"; exit 77; }
relay=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
rules=$(sed -n 's/^link [^ ]* [^ ]* //p' "$here/../../fixtures/wire-loss.fabric" |
	sed 's/drop-match=//g')
[ -n "$rules" ] || { echo "no drop-match rules in fixtures/wire-loss.fabric"; exit 1; }
mkdir -p "$3" || exit 99
out=$(cd "$3" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wire-rxe-live.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
cp "$1" "$tmp/wire_seq" || exit 99

# run NAME MODE [rxe-vm option...]: -w, the client waits for the server's TCP port (the VMs
# boot at their own pace)
run() {
	name=$1 mode=$2
	shift 2
	sh "$vm" run --two --copy "$tmp/wire_seq" --pcap "$tmp/$name.pcap" --timeout 300 "$@" \
		--b-cmd "/opt/rdmaemu/wire_seq client 192.0.2.65 $mode -w" \
		-- /opt/rdmaemu/wire_seq server $mode -w >"$tmp/console" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		cat "$tmp/console"
		echo "wire_seq $mode on kernel rxe failed (exit $rc)"
		exit 1
	fi
	sed -n 's/^A: //p' "$tmp/console" >"$out/$name-A.out"
	sed -n 's/^B: //p' "$tmp/console" >"$out/$name-B.out"
	cp "$tmp/$name.pcap" "$out/$name.pcap"
	echo "wire-rxe-live: $name: $(wc -l <"$out/$name-A.out") + $(wc -l <"$out/$name-B.out") lines, $(wc -c <"$out/$name.pcap") bytes of capture"
}
run wire-seq ""
# shellcheck disable=SC2086 # the rules are words
run wire-loss loss --relay "$relay $rules"
