#!/bin/sh
# The InfiniBand data path decodes in tshark as InfiniBand with no malformed packet:
# test_verbs_ib (ib.fabric's ib-a, LID 2, and ib-b, LID 3, through the switch: RC SEND with
# immediate in 3 packets, RDMA WRITE in 2, RDMA READ of 3 responses, without then with a GRH;
# UD both ways without then with a GRH; the loopback sends never reach a wire) runs with
# RDMAEMU_PCAP set. The switch records each frame once per link it crosses, so every frame
# appears twice. The capture is LINKTYPE_INFINIBAND (247), which Wireshark 4.0 cannot open: the
# header's link type is rewritten to DLT_USER0 (147), mapped to the "infiniband" dissector (as
# emu/hca/tests/pkt-tshark.sh does). Exit 77 without tshark.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
b=${RDMAEMU_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ib-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"
UAT='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
fail() { echo "FAIL: $*"; exit 1; }

RDMAEMU_PCAP=$tmp/dp "$b/emu/verbs/tests/test_verbs_ib" >"$tmp/run.log" 2>&1 ||
	{ tail -n 20 "$tmp/run.log"; fail "test_verbs_ib failed"; }
[ -f "$tmp/dp-ib.pcap" ] || fail "no capture written ($tmp/dp-ib.pcap)"
[ ! -f "$tmp/dp-eth.pcap" ] || fail "an Ethernet capture on an IB-only fabric"
# the file's link type (bytes 20-23, little-endian as written on this host): 247
lt=$(od -A n -t u4 -j 20 -N 4 "$tmp/dp-ib.pcap" | tr -d ' ')
[ "$lt" = 247 ] || fail "link type $lt, not LINKTYPE_INFINIBAND (247)"
cp "$tmp/dp-ib.pcap" "$tmp/u.pcap"
printf '\223\000\000\000' | dd of="$tmp/u.pcap" bs=1 seek=20 conv=notrunc 2>/dev/null

ts() { "$TSHARK" -n --disable-protocol rpcordma -o "$UAT" -r "$tmp/u.pcap" "$@" 2>"$tmp/err"; }
ts -V >"$tmp/v.txt" || { cat "$tmp/err"; fail "tshark failed"; }
if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/v.txt" >/dev/null; then
	grep -E -m 5 'Malformed|Expert Info' "$tmp/v.txt"
	fail "tshark reports errors"
fi
n=$(grep -c '^InfiniBand$' "$tmp/v.txt")
icrc=$(grep -c 'Invariant CRC: 0x' "$tmp/v.txt")
vcrc=$(grep -c 'Variant CRC: 0x' "$tmp/v.txt")
ts -T fields -e frame.len -e infiniband.lrh.slid -e infiniband.lrh.dlid -e infiniband.lrh.sl \
	-e infiniband.lrh.lnh -e infiniband.bth.opcode >"$tmp/f.txt"
total=$(wc -l <"$tmp/f.txt")
[ "$n" -eq "$total" ] && [ "$icrc" -eq "$total" ] && [ "$vcrc" -eq "$total" ] ||
	fail "$total frames: $n decoded as InfiniBand, $icrc with an ICRC, $vcrc with a VCRC"
# frame length, SLID, DLID, SL, LNH (2 LRH only, 3 with GRH), BTH opcode
cat >"$tmp/want.txt" <<'WANT'
2074	2	3	3	0x02	0
2074	2	3	3	0x02	1
934	2	3	3	0x02	3
2074	2	3	3	0x02	0
2074	2	3	3	0x02	1
934	2	3	3	0x02	3
30	3	2	3	0x02	17
30	3	2	3	0x02	17
2090	2	3	3	0x02	6
978	2	3	3	0x02	8
2090	2	3	3	0x02	6
978	2	3	3	0x02	8
30	3	2	3	0x02	17
30	3	2	3	0x02	17
42	2	3	3	0x02	12
42	2	3	3	0x02	12
2078	3	2	3	0x02	13
2074	3	2	3	0x02	14
434	3	2	3	0x02	15
2078	3	2	3	0x02	13
2074	3	2	3	0x02	14
434	3	2	3	0x02	15
2114	2	3	3	0x03	0
2114	2	3	3	0x03	1
974	2	3	3	0x03	3
2114	2	3	3	0x03	0
2114	2	3	3	0x03	1
974	2	3	3	0x03	3
70	3	2	3	0x03	17
70	3	2	3	0x03	17
2130	2	3	3	0x03	6
1018	2	3	3	0x03	8
2130	2	3	3	0x03	6
1018	2	3	3	0x03	8
70	3	2	3	0x03	17
70	3	2	3	0x03	17
82	2	3	3	0x03	12
82	2	3	3	0x03	12
2118	3	2	3	0x03	13
2114	3	2	3	0x03	14
474	3	2	3	0x03	15
2118	3	2	3	0x03	13
2114	3	2	3	0x03	14
474	3	2	3	0x03	15
334	2	3	2	0x02	100
334	2	3	2	0x02	100
98	3	2	2	0x02	100
98	3	2	2	0x02	100
374	2	3	2	0x03	100
374	2	3	2	0x03	100
138	3	2	2	0x03	100
138	3	2	2	0x03	100
WANT
if ! diff "$tmp/want.txt" "$tmp/f.txt" >"$tmp/diff"; then
	head -n 20 "$tmp/diff"
	fail "the capture is not the expected exchange"
fi
echo "ib-tshark: $total frames decoded as InfiniBand (LRH, ICRC, VCRC), 0 malformed; 1 passed, 0 failed"
