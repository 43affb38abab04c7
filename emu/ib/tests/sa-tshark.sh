#!/bin/sh
# Checks that tshark decodes the fake SA's MADs (sa_gen: requests from ib-a and the SA's
# answers, as IB UD packets to QP1) as SUBN_ADM with the PathRecord fields we sent, and reports
# no Malformed or Expert error/warning. Skips (77) without tshark. IB frames are written with
# DLT_USER0 mapped to the infiniband dissector, as pkt-tshark.sh explains.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
top=${RDMAEMU_TOP_BUILDDIR:-.}
src=${RDMAEMU_TOP_SRCDIR:-$(dirname "$0")/../..}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sa-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"
UAT='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
fail() { echo "FAIL: $*"; exit 1; }

"$top/emu/ib/tests/sa_gen" "$src/fixtures" "$tmp" >"$tmp/manifest" || fail "sa_gen"
cat "$tmp/manifest"
ts() { "$TSHARK" -n -o "$UAT" -r "$tmp/sa-user0.pcap" "$@" 2>"$tmp/err"; }
ts -V >"$tmp/all.txt" || { cat "$tmp/err"; fail "tshark failed"; }
if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/all.txt" >/dev/null; then
	grep -E -m 5 'Malformed|Expert Info' "$tmp/all.txt"
	fail "tshark reports errors"
fi
frames=$(ts | wc -l)
sa=$(ts -Y 'infiniband.mad.mgmtclass == 0x03' | wc -l)
[ "$frames" -gt 0 ] && [ "$sa" -eq "$frames" ] || fail "$sa of $frames frames decode as SUBN_ADM"
grep -q '^    SA SubnAdm' "$tmp/all.txt" || fail "no SA (SUBN_ADM) layer in the decode"
# The PathRecord GetResp (frame 2): its fields as the SA computed them.
ts -Y 'frame.number == 2' -V >"$tmp/pr.txt"
for want in 'Method: GetResp() (0x81)' 'SA SubnAdmGetResp(PathRecord)' 'DLID: 0x0003' \
	'SLID: 0x0002' 'DGID: fe80::2:c903:0:b01' 'SGID: fe80::2:c903:0:a01' 'Reversible: 0x1' \
	'MTU: 0x05' 'Rate: 0x07' 'PacketLifeTime: 0x12' 'P_Key: 0xffff'; do
	grep -q "$want" "$tmp/pr.txt" || { grep -i -m 40 -E 'method|lid|gid|mtu|rate|record' "$tmp/pr.txt"; fail "PathRecord GetResp: no '$want'"; }
done
# GetTableResp segments and the MCMember/ServiceRecord answers decode too.
[ "$(ts -Y 'infiniband.mad.method == 0x92' | wc -l)" -eq 3 ] || fail "GetTableResp segments"
grep -q 'SubnAdmGetResp(MCMemberRecord)' "$tmp/all.txt" || fail "MCMemberRecord GetResp"
grep -q 'SubnAdmGetResp(ServiceRecord)' "$tmp/all.txt" || fail "ServiceRecord GetResp"
echo "sa: $frames frames, all SUBN_ADM, PathRecord decoded, no errors"
exit 0
