#!/bin/sh
# Checks that tshark decodes one packet of every BTH opcode the emulator builds (pkt_gen): as
# RoCEv2 over IPv4 and IPv6 (IPv4 header and IPv6 UDP checksums verified by tshark) and as IB
# with and without a GRH. Every frame must decode as InfiniBand with the opcode pkt_gen says it
# sent, with no Malformed or Expert error/warning, and with the ICRC (and IB VCRC) where
# Wireshark expects it, which holds only when all the length fields and PadCnt agree with the
# frame. Wireshark does not verify the ICRC or VCRC values (4.0 only displays them): test_pkt
# checks those against a capture from real hardware. Skips (77) without tshark.
#
# Wireshark 4.0 cannot open LINKTYPE_INFINIBAND (247) files: the IB frames are written with
# DLT_USER0 and mapped to the "infiniband" dissector (as pcap-tshark.sh does). Its RPC-over-RDMA
# heuristic would try to reassemble pkt_gen's unrelated SEND payloads, so it is disabled.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
top=${RDMAEMU_TOP_BUILDDIR:-.}
gen=$top/emu/hca/tests/pkt_gen
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pkt-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
# A private, empty configuration: the user's preferences must not change the decoding.
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"
UAT='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'

fail() { echo "FAIL: $*"; exit 1; }

"$gen" -u "$tmp" >"$tmp/manifest" || fail "pkt_gen"

ts() { "$TSHARK" -n --disable-protocol rpcordma "$@" 2>"$tmp/err"; }

check() { # name file tshark-options...
	name=$1 file=$2
	shift 2
	ts "$@" -r "$file" -V >"$tmp/$name.txt" || { cat "$tmp/err"; fail "$name: tshark failed"; }
	if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/$name.txt" >/dev/null; then
		grep -E -m 5 'Malformed|Expert Info' "$tmp/$name.txt"
		fail "$name: tshark reports errors"
	fi
	# frame number and opcode, as sent and as decoded
	awk -v n="$name" '$1 == n { print $2, $3 }' "$tmp/manifest" >"$tmp/$name.want"
	ts "$@" -r "$file" -T fields -E separator=' ' -e frame.number -e infiniband.bth.opcode \
		>"$tmp/$name.got"
	total=$(wc -l <"$tmp/$name.want")
	[ "$total" -gt 0 ] || fail "$name: no frames"
	diff "$tmp/$name.want" "$tmp/$name.got" >"$tmp/$name.diff" ||
		{ head "$tmp/$name.diff"; fail "$name: opcodes differ from what was sent"; }
	# Wireshark 4.0 does not know the RoCEv2 CNP (0x81): it shows the opcode as Unknown and
	# the rest as vendor data, so the CNPs have no ICRC field either.
	if grep 'Opcode: Unknown' "$tmp/$name.txt" | grep -qv 'Unknown (129)'; then
		fail "$name: an opcode Wireshark does not know"
	fi
	cnp=$(awk '$2 == 129' "$tmp/$name.want" | wc -l)
	icrc=$(ts "$@" -r "$file" -Y infiniband.invariant.crc | wc -l)
	[ "$icrc" -eq $((total - cnp)) ] || fail "$name: ICRC found in $icrc of $total frames"
	echo "$name: $total frames, opcodes as sent, ICRC in place, no errors"
}

check roce "$tmp/roce.pcap" -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE
v4=$(ts -r "$tmp/roce.pcap" -o ip.check_checksum:TRUE -Y 'ip.checksum.status == 1' | wc -l)
v6=$(ts -r "$tmp/roce.pcap" -o udp.check_checksum:TRUE -Y 'ipv6 && udp.checksum.status == 1' |
	wc -l)
half=$(($(awk '$1 == "roce"' "$tmp/manifest" | wc -l) - 6)) # the 6 extra ACKs are IPv4
[ "$v4" -eq $((half / 2 + 6)) ] || fail "roce: IPv4 header checksum good in $v4 frames"
[ "$v6" -eq $((half / 2)) ] || fail "roce: IPv6 UDP checksum good in $v6 frames"
syn=$(ts -r "$tmp/roce.pcap" -Y infiniband.aeth -T fields -e infiniband.aeth.syndrome |
	sort -n -u | tr '\n' ' ')
[ "$syn" = "31 46 96 97 98 99 100 " ] || fail "roce: AETH syndromes decoded as: $syn"
echo "roce: $v4 IPv4 header checksums and $v6 IPv6 UDP checksums good; AETH syndromes $syn"

check ib "$tmp/ib-user0.pcap" -o "$UAT"
vcrc=$(ts -o "$UAT" -r "$tmp/ib-user0.pcap" -Y infiniband.variant.crc | wc -l)
grh=$(ts -o "$UAT" -r "$tmp/ib-user0.pcap" -Y 'infiniband.grh && infiniband.lrh.lnh == 3' | wc -l)
[ "$vcrc" -eq $((half + 6 - cnp)) ] || fail "ib: VCRC in $vcrc frames"
[ "$grh" -eq $((half / 2)) ] || fail "ib: $grh frames with a GRH"
echo "ib: VCRC in place in $vcrc frames, $grh with a GRH"
exit 0
