#!/bin/sh
# Checks that tshark decodes the wire's captures without errors: the RoCE capture as
# Ethernet/IPv4 (checksums verified)/UDP 4791/InfiniBand, and the IB frames as InfiniBand.
# Skips (77) without tshark.
#
# Wireshark (4.0 at least) cannot open LINKTYPE_INFINIBAND (247) files, so the IB frames are
# checked through a DLT_USER0 copy of the same capture mapped to the "infiniband" dissector;
# the two files must differ in the link type field only.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
top=${RDMAEMU_TOP_BUILDDIR:-.}
gen=$top/emu/sim/tests/pcap_gen
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pcap-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
# A private, empty configuration: the user's preferences must not change the decoding.
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"

fail() { echo "FAIL: $*"; exit 1; }

"$gen" "$tmp" 1 || fail "pcap_gen"
"$gen" -u "$tmp" 1 >/dev/null || fail "pcap_gen -u"

# Everything but bytes 20..23 (the link type) must be equal.
cmp -s -n 20 "$tmp/ib.pcap" "$tmp/ib-user0.pcap" || fail "ib headers differ"
cmp -s -i 24 "$tmp/ib.pcap" "$tmp/ib-user0.pcap" || fail "ib frames differ"

check() { # name file tshark-options...
	name=$1 file=$2
	shift 2
	"$TSHARK" -n "$@" -r "$file" -V >"$tmp/$name.txt" 2>"$tmp/$name.err" ||
		{ cat "$tmp/$name.err"; fail "$name: tshark failed"; }
	if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/$name.txt" >/dev/null; then
		grep -E -m 5 'Malformed|Expert Info' "$tmp/$name.txt"
		fail "$name: tshark reports errors"
	fi
	total=$("$TSHARK" -n "$@" -r "$file" 2>/dev/null | wc -l)
	ib=$("$TSHARK" -n "$@" -r "$file" -Y "infiniband.bth" 2>/dev/null | wc -l)
	[ "$total" -gt 0 ] || fail "$name: no frames"
	[ "$total" -eq "$ib" ] || fail "$name: $ib of $total frames decode as InfiniBand"
	echo "$name: $total frames decode as InfiniBand, no errors"
}

check eth "$tmp/eth.pcap" -o ip.check_checksum:TRUE -o infiniband.rroce.port:4791
grep -q 'User Datagram Protocol, Src Port: [0-9]*, Dst Port: 4791' "$tmp/eth.txt" ||
	fail "eth: no UDP 4791"
grep -q 'Header checksum status: Good' "$tmp/eth.txt" || fail "eth: IPv4 checksum not verified"
check ib "$tmp/ib-user0.pcap" -o 'uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
grep -q 'Local Route Header' "$tmp/ib.txt" || fail "ib: no LRH decoded"
exit 0
