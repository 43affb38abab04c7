#!/bin/sh
# Checks that tshark decodes the CM MADs cm_gen writes (RoCEv2/IPv4 UD SEND_ONLY, QP1 -> QP1,
# Q_Key 0x80010000) as CM messages of the attribute sent, with the field values cm_samples.c
# put in (service ID, QPN, starting PSN, the rdma_cm IP header of the REQ, REJ reason, ...),
# an ICRC in every frame, good IPv4 header checksums, and no Malformed or Expert error/warning.
# Wireshark 4.0 dissects REQ, REP, RTU, REJ, DREQ, DREP fully; MRA and SIDR only by name
# ("Dissector Not Implemented"), so for those the MAD header is what is checked.
# Skips (77) without tshark.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
top=${RDMAEMU_TOP_BUILDDIR:-.}
gen=$top/emu/ib/tests/cm_gen
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cm-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"

fail() { echo "FAIL: $*"; exit 1; }
ts() { "$TSHARK" -n -r "$tmp/cm.pcap" -o ip.check_checksum:TRUE "$@" 2>"$tmp/err"; }

"$gen" "$tmp" >"$tmp/manifest" || fail "cm_gen"
n=$(wc -l <"$tmp/manifest")
[ "$n" -eq 9 ] || fail "cm_gen wrote $n frames"

ts -V >"$tmp/all.txt" || { cat "$tmp/err"; fail "tshark failed"; }
if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/all.txt" >/dev/null; then
	grep -E -m 5 'Malformed|Expert Info' "$tmp/all.txt"
	fail "tshark reports errors"
fi

# attribute IDs as sent, and the CM message names in the Info column
awk '{ printf "%d 0x%04x\n", $1, $2 }' "$tmp/manifest" >"$tmp/want"
ts -T fields -E separator=' ' -e frame.number -e infiniband.mad.attributeid >"$tmp/got"
diff "$tmp/want" "$tmp/got" || fail "attribute IDs differ from what was sent"
ts -T fields -e _ws.col.Info >"$tmp/info"
cat >"$tmp/info.want" <<'W'
CM: ConnectRequest
CM: MsgRcptAck
CM: ConnectReply
CM: ReadyToUse
CM: ConnectReject
CM: DisconnectRequest
CM: DisconnectReply
CM: ServiceIDResReq
CM: ServiceIDResReqResp
W
diff "$tmp/info.want" "$tmp/info" || fail "Info column differs"

# the MAD header of every frame: base version 1, class 7 (CM), class version 2, method Send
hdr=$(ts -T fields -E separator=' ' -e infiniband.mad.baseversion -e infiniband.mad.mgmtclass \
	-e infiniband.mad.classversion -e infiniband.mad.method -e infiniband.deth.q_key -e infiniband.deth.srcqp \
	-e infiniband.bth.destqp | sort -u)
[ "$hdr" = "0x01 0x07 0x02 0x03 0x0000000080010000 0x00000001 0x000001" ] || fail "MAD headers: $hdr"

field() { # frame field expected
	got=$(ts -Y "frame.number == $1" -T fields -e "$2")
	[ "$got" = "$3" ] || fail "frame $1 $2 = '$got', want '$3'"
}
field 1 infiniband.cm.req 0x11223344
field 1 infiniband.cm.req.serviceid 0x0000000001064e20
field 1 infiniband.cm.req.localcaguid 0x0002c90300a1b2c3
field 1 infiniband.cm.req.localqpn 0x000011
field 1 infiniband.cm.req.startpsn 0xabcdef
field 1 infiniband.cm.req.responderres 0x04
field 1 infiniband.cm.req.initdepth 0x04
field 1 infiniband.cm.req.remoteresptout 0x14
field 1 infiniband.cm.req.localresptout 0x14
field 1 infiniband.cm.req.e2eflowctrl 0x01
field 1 infiniband.cm.req.retrcount 0x07
field 1 infiniband.cm.req.rnrretrcount 0x07
field 1 infiniband.cm.req.maxcmretr 0x0f
field 1 infiniband.cm.req.pkey 0xffff
field 1 infiniband.cm.req.pppmtu 0x03
field 1 infiniband.cm.req.prim_hoplim 0x40
field 1 infiniband.cm.req.prim_localacktout 0x11
field 1 infiniband.cm.req.prim_localgid_ipv4 192.0.2.65
field 1 infiniband.cm.req.prim_remotegid_ipv4 192.0.2.66
# the rdma_cm IP private-data header (annex A11)
field 1 infiniband.cm.req.ip_cm.majv 0x00
field 1 infiniband.cm.req.ip_cm.minv 0x00
field 1 infiniband.cm.req.ip_cm.ipv 0x04
field 1 infiniband.cm.req.ip_cm.sport 0xc000
field 1 infiniband.cm.req.ip_cm.sip4 192.0.2.65
field 1 infiniband.cm.req.ip_cm.dip4 192.0.2.66
priv=$(ts -Y 'frame.number == 1' -T fields -e infiniband.cm.req.ip_cm.private)
[ "${#priv}" -eq 112 ] || fail "REQ consumer private data is ${#priv} hex digits, want 56 bytes"
case $priv in 68656c6c6f00*) ;; *) fail "REQ consumer private data $priv" ;; esac
field 3 infiniband.cm.rep 0x55667788
field 3 infiniband.cm.rep.remotecommid 0x11223344
field 3 infiniband.cm.rep.localqpn 0x000012
field 3 infiniband.cm.rep.startpsn 0x123456
field 3 infiniband.cm.rep.tgtackdelay 0x0f
field 3 infiniband.cm.rep.rnrretrcount 0x07
field 3 infiniband.cm.rep.localcaguid 0x0002c90300d4e5f6
priv=$(ts -Y 'frame.number == 3' -T fields -e infiniband.cm.rep.private)
[ "${#priv}" -eq 392 ] || fail "REP private data is ${#priv} hex digits, want 196 bytes"
field 4 infiniband.cm.rtu.localcommid 0x11223344
field 4 infiniband.cm.rtu.remotecommid 0x55667788
field 5 infiniband.cm.rej.reason 0x0004
field 5 infiniband.cm.rej.msgrej 0x02
field 5 infiniband.cm.rej.rejinfolen 0x08
priv=$(ts -Y 'frame.number == 5' -T fields -e infiniband.cm.rej.private)
[ "${#priv}" -eq 296 ] || fail "REJ private data is ${#priv} hex digits, want 148 bytes"
field 6 infiniband.cm.dreq.localcommid 0x11223344
field 6 infiniband.cm.req.remoteqpneecn 0x000012
field 7 infiniband.cm.drsp.localcommid 0x55667788
field 7 infiniband.cm.drsp.remotecommid 0x11223344

icrc=$(ts -Y infiniband.invariant.crc | wc -l)
[ "$icrc" -eq 9 ] || fail "ICRC found in $icrc of 9 frames"
good=$(ts -Y 'ip.checksum.status == 1' | wc -l)
[ "$good" -eq 9 ] || fail "IPv4 header checksum good in $good of 9 frames"
echo "cm: 9 CM MADs decoded as sent (attribute, Info, fields, rdma_cm IP header), ICRC in place, no errors"
exit 0
