#!/bin/sh
# A data-path run on the wire decodes in tshark with no malformed packet: test_verbs_wire
# (rxe-ref2's hosts A and B in one process: the ARP request and reply of A's modify_qp to RTR,
# which resolves B's MAC as ib_resolve_eth_dmac does (B's own RTR finds the entry A's request
# left), RC SEND_WITH_IMM over 5 packets, RDMA READ, FETCH_AND_ADD, a UD SEND, a UD SEND to an
# IPv4 multicast group) runs with RDMAEMU_PCAP set, and tshark must show exactly that
# exchange, with no Malformed or Expert error/warning. Exit 77 without tshark. The UDP source
# ports are rxe's: an RC QP's from its address vector's flow label (A: 0x60cc9 -> 0xccd1; B: 0,
# so the label of the QPN pair 0x11 x 0x11 -> 0xc121), a UD QP's the hash of its QPN.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
b=${RDMAEMU_TOP_BUILDDIR:-$(cd "$(dirname "$0")/../../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/datapath-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"
fail() { echo "FAIL: $*"; exit 1; }

RDMAEMU_PCAP=$tmp/dp "$b/emu/verbs/tests/test_verbs_wire" >"$tmp/run.log" 2>&1 ||
	{ tail -n 20 "$tmp/run.log"; fail "test_verbs_wire failed"; }
[ -f "$tmp/dp-eth.pcap" ] || fail "no capture written ($tmp/dp-eth.pcap)"

# rpcordma would try to reassemble the test payloads as RPC-over-RDMA
"$TSHARK" -n --disable-protocol rpcordma -r "$tmp/dp-eth.pcap" -V >"$tmp/v.txt" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "tshark failed"; }
if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/v.txt" >/dev/null; then
	grep -E -m 5 'Malformed|Expert Info' "$tmp/v.txt"
	fail "tshark reports errors"
fi
"$TSHARK" -n --disable-protocol rpcordma -r "$tmp/dp-eth.pcap" -T fields \
	-e ip.src -e ip.dst -e frame.len -e infiniband.bth.opcode -e udp.srcport 2>/dev/null >"$tmp/f.txt"
cat >"$tmp/want.txt" <<'WANT'
		60		
		60		
192.0.2.65	192.0.2.66	1082	0	52433
192.0.2.65	192.0.2.66	1082	1	52433
192.0.2.65	192.0.2.66	1082	1	52433
192.0.2.65	192.0.2.66	1082	1	52433
192.0.2.65	192.0.2.66	966	3	52433
192.0.2.66	192.0.2.65	62	17	49441
192.0.2.65	192.0.2.66	74	12	52433
192.0.2.66	192.0.2.65	1086	13	49441
192.0.2.66	192.0.2.65	1082	14	49441
192.0.2.66	192.0.2.65	1082	14	49441
192.0.2.66	192.0.2.65	1082	14	49441
192.0.2.66	192.0.2.65	966	15	49441
192.0.2.65	192.0.2.66	86	20	52433
192.0.2.66	192.0.2.65	70	18	49441
192.0.2.65	192.0.2.66	166	100	63494
192.0.2.65	239.0.2.1	130	100	53368
WANT
if ! diff "$tmp/want.txt" "$tmp/f.txt" >"$tmp/diff"; then
	cat "$tmp/diff"
	fail "the capture is not the expected exchange (src, dst, frame length, BTH opcode, UDP source port)"
fi
echo "datapath-tshark: $(wc -l <"$tmp/f.txt") frames decoded, 0 malformed; 1 passed, 0 failed"
