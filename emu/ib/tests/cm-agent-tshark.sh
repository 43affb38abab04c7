#!/bin/sh
# Checks that tshark decodes the MADs two CM agents exchanged (cm_agent_gen: connect, REQ with
# no listener, SIDR, disconnect) as the CM messages of the manifest, in order, with the
# communication IDs the agents used (each answer carries the IDs of what it answers), the
# reject reason 8 of the unmatched REQ, the rdma_cm IP header in the REQ, and no Malformed or
# Expert error/warning. Skips (77) without tshark.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
top=${RDMAEMU_TOP_BUILDDIR:-.}
gen=$top/emu/ib/tests/cm_agent_gen
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cm-agent-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"

fail() { echo "FAIL: $*"; exit 1; }
ts() { "$TSHARK" -n -r "$tmp/cm-agent.pcap" -o ip.check_checksum:TRUE "$@" 2>"$tmp/err"; }
hex8() { printf '0x%08x' "$1"; }

"$gen" "$tmp" >"$tmp/manifest" || fail "cm_agent_gen"
[ "$(wc -l <"$tmp/manifest")" -eq 9 ] || fail "cm_agent_gen wrote $(wc -l <"$tmp/manifest") frames"

ts -V >"$tmp/all.txt" || { cat "$tmp/err"; fail "tshark failed"; }
if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/all.txt" >/dev/null; then
	grep -E -m 5 'Malformed|Expert Info' "$tmp/all.txt"
	fail "tshark reports errors"
fi
ts -T fields -e _ws.col.Info >"$tmp/info"
cat >"$tmp/info.want" <<'W'
CM: ConnectRequest
CM: ConnectReply
CM: ReadyToUse
CM: ConnectRequest
CM: ConnectReject
CM: ServiceIDResReq
CM: ServiceIDResReqResp
CM: DisconnectRequest
CM: DisconnectReply
W
diff "$tmp/info.want" "$tmp/info" || fail "Info column differs"
awk '{ printf "%d 0x%04x\n", $1, $2 }' "$tmp/manifest" >"$tmp/want"
ts -T fields -E separator=' ' -e frame.number -e infiniband.mad.attributeid >"$tmp/got"
diff "$tmp/want" "$tmp/got" || fail "attribute IDs differ from what was sent"

field() { # frame field expected
	got=$(ts -Y "frame.number == $1" -T fields -e "$2")
	[ "$got" = "$3" ] || fail "frame $1 $2 = '$got', want '$3'"
}
# the comm IDs of the manifest: frame 1 = a's id, frame 2 = b's
a=$(hex8 "$(awk 'NR == 1 { print $3 }' "$tmp/manifest")")
b=$(hex8 "$(awk 'NR == 2 { print $3 }' "$tmp/manifest")")
a2=$(hex8 "$(awk 'NR == 4 { print $3 }' "$tmp/manifest")")
field 1 infiniband.cm.req "$a"
field 1 infiniband.cm.req.serviceid 0x0000000001064e20
field 1 infiniband.cm.req.maxcmretr 0x0f
field 1 infiniband.cm.req.remoteresptout 0x14
field 1 infiniband.cm.req.prim_localacktout 0x11
field 1 infiniband.cm.req.ip_cm.ipv 0x04
field 1 infiniband.cm.req.ip_cm.sip4 192.0.2.65
field 1 infiniband.cm.req.ip_cm.dip4 192.0.2.66
field 2 infiniband.cm.rep "$b"
field 2 infiniband.cm.rep.remotecommid "$a"
field 2 infiniband.cm.rep.tgtackdelay 0x0f
field 3 infiniband.cm.rtu.localcommid "$a"
field 3 infiniband.cm.rtu.remotecommid "$b"
field 4 infiniband.cm.req "$a2"
field 5 infiniband.cm.rej.reason 0x0008
field 5 infiniband.cm.rej.msgrej 0x00
field 5 infiniband.cm.rej.remotecommid "$a2"
field 8 infiniband.cm.dreq.localcommid "$a"
field 8 infiniband.cm.req.remoteqpneecn 0x000012
field 9 infiniband.cm.drsp.localcommid "$b"
field 9 infiniband.cm.drsp.remotecommid "$a"
# the TIDs: the REP, RTU answer with the REQ's; the REJ with the unmatched REQ's
t1=$(ts -Y 'frame.number == 1' -T fields -e infiniband.mad.transactionid)
for f in 2 3; do field $f infiniband.mad.transactionid "$t1"; done
t4=$(ts -Y 'frame.number == 4' -T fields -e infiniband.mad.transactionid)
field 5 infiniband.mad.transactionid "$t4"
echo "cm-agent: 9 MADs of two agents decoded in order with consistent comm IDs and TIDs, no errors"
exit 0
