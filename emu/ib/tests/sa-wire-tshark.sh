#!/bin/sh
# SA queries on the emulated wire decode in tshark: sa_wire_gen runs queries from ib-a of
# fixtures/ib.fabric to the SM on the switch (the client, the MAD layer, the switch, the SA
# agent and back) with the capture on; every frame of the InfiniBand capture must decode as an
# SA (SUBN_ADM) MAD with no Malformed packet and no Expert error/warning, with the requests,
# the answers (GetResp, GetTableResp with its RMPP header, a BUSY status) and the client's RMPP
# ACK. Skips (77) without tshark. The capture's LINKTYPE_INFINIBAND is rewritten to DLT_USER0
# mapped to the "infiniband" dissector, as pcap-tshark.sh explains.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
top=${RDMAEMU_TOP_BUILDDIR:-.}
src=${RDMAEMU_TOP_SRCDIR:-$(dirname "$0")/../..}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sa-wire-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"
UAT='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
fail() { echo "FAIL: $*"; exit 1; }

RDMAEMU_FABRIC= RDMAEMU_NODE= "$top/emu/ib/tests/sa_wire_gen" "$src/fixtures" "$tmp" >"$tmp/manifest" ||
	{ cat "$tmp/manifest"; fail "sa_wire_gen"; }
cat "$tmp/manifest"
[ -s "$tmp/sa-ib.pcap" ] || fail "no InfiniBand capture"
# link type (bytes 20-23 of the little-endian pcap header): 247 -> 147
cp "$tmp/sa-ib.pcap" "$tmp/u0.pcap"
printf '\223\000\000\000' | dd of="$tmp/u0.pcap" bs=1 seek=20 conv=notrunc 2>/dev/null
ts() { "$TSHARK" -n -o "$UAT" -r "$tmp/u0.pcap" "$@" 2>"$tmp/err"; }
ts -V >"$tmp/all.txt" || { cat "$tmp/err"; fail "tshark failed"; }
if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/all.txt" >/dev/null; then
	grep -E -m 5 'Malformed|Expert Info' "$tmp/all.txt"
	fail "tshark reports errors"
fi
frames=$(ts | wc -l)
sa=$(ts -Y 'infiniband.mad.mgmtclass == 0x03' | wc -l)
[ "$frames" -gt 0 ] && [ "$sa" -eq "$frames" ] || fail "$sa of $frames frames decode as SUBN_ADM"
count() { ts -Y "$1" | wc -l; }
# The SM sits on the switch: each MAD crosses one link (ib-a - switch) and is recorded once.
# Gets: PathRecord, ServiceRecord, PathRecord (BUSY); the GetTable exchange: request, one DATA
# segment, the client's ACK.
[ "$(count 'infiniband.mad.method == 0x01')" -eq 3 ] || fail "Get requests"
[ "$(count 'infiniband.mad.method == 0x81')" -eq 5 ] || fail "GetResp answers"
[ "$(count 'infiniband.mad.method == 0x92')" -eq 1 ] || fail "GetTableResp segment"
[ "$(count 'infiniband.mad.method == 0x12 && infiniband.rmpp.rmpptype == 2')" -eq 1 ] ||
	fail "the client's RMPP ACK"
[ "$(count 'infiniband.mad.status == 0x0001')" -eq 1 ] || fail "the BUSY answer"
grep -q 'SubnAdmGetResp(PathRecord)' "$tmp/all.txt" || fail "PathRecord GetResp"
grep -q 'SubnAdmGetResp(MCMemberRecord)' "$tmp/all.txt" || fail "MCMemberRecord GetResp"
grep -q 'SubnAdmGetResp(ServiceRecord)' "$tmp/all.txt" || fail "ServiceRecord GetResp"
echo "sa-wire: $frames frames, all SUBN_ADM, no errors"
exit 0
