#!/bin/sh
# Checks that tshark decodes the neighbour exchanges (neigh_gen) with no Malformed packet or
# Expert error/warning: ARP request/reply and IPv6 NS/NA (ICMPv6 checksums verified) between
# rxe-ref2's hosts, IPoIB ARP (IB UD packets to the broadcast group and back) on ib.fabric, and
# IPv6 ND over IPoIB there (the SA joins, then NS to the solicited-node group, the answerer's
# PathRecord query, NA back).
# Skips (77) without tshark. IB frames use DLT_USER0 mapped to the infiniband dissector, as
# pkt-tshark.sh explains.
set -u
TSHARK=${TSHARK:-tshark}
command -v "$TSHARK" >/dev/null 2>&1 || { echo "tshark not found: skipped"; exit 77; }
top=${RDMAEMU_TOP_BUILDDIR:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/neigh-tshark.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
WIRESHARK_CONFIG_DIR=$tmp/wsconf
export WIRESHARK_CONFIG_DIR
mkdir -p "$WIRESHARK_CONFIG_DIR"
UAT='uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""'
fail() { echo "FAIL: $*"; exit 1; }

"$top/emu/net/tests/neigh_gen" "$tmp" >"$tmp/manifest" || { cat "$tmp/manifest"; fail "neigh_gen"; }
cat "$tmp/manifest"
ts() { f=$1; shift; "$TSHARK" -n -o "$UAT" -r "$tmp/$f" "$@" 2>"$tmp/err"; }
for f in neigh-eth.pcap neigh-ib.pcap neigh-ib6.pcap; do
	ts $f -V >"$tmp/$f.txt" || { cat "$tmp/err"; fail "$f: tshark failed"; }
	if grep -E 'Malformed|Expert Info \((Error|Warning)' "$tmp/$f.txt" >/dev/null; then
		grep -E -m 5 'Malformed|Expert Info' "$tmp/$f.txt"
		fail "$f: tshark reports errors"
	fi
done
# Ethernet: request, reply, NS, NA, then the three unanswered requests.
ts neigh-eth.pcap -T fields -e frame.number -e arp.opcode -e icmpv6.type >"$tmp/eth.got"
printf '1\t1\t\n2\t2\t\n3\t\t135\n4\t\t136\n5\t1\t\n6\t1\t\n7\t1\t\n' >"$tmp/eth.want"
diff "$tmp/eth.want" "$tmp/eth.got" || fail "Ethernet frames differ from what was sent"
grep -q 'Checksum Status: Good' "$tmp/neigh-eth.pcap.txt" || fail "ICMPv6 checksums not verified"
[ "$(grep -c 'Checksum Status: Good' "$tmp/neigh-eth.pcap.txt")" -eq 2 ] ||
	fail "ICMPv6 checksums: not both good"
grep -q 'Target IP address: 192.0.2.66' "$tmp/neigh-eth.pcap.txt" || fail "ARP target"
# IPoIB: the request on ib-a's link and its two copies, ib-b's SA PathRecord query to the SM
# (LID 1) and its answer (the path the unicast reply needs, as ipoib's unicast_arp_send), the
# reply on two links; each an IB UD SEND, the ARP ones decoded down to ARP with 20-byte
# hardware addresses.
ts neigh-ib.pcap -T fields -e frame.number -e infiniband.lrh.dlid -e infiniband.bth.opcode \
	-e arp.opcode -e arp.hw.size >"$tmp/ib.got"
printf '1\t49152\t100\t1\t20\n2\t49152\t100\t1\t20\n3\t49152\t100\t1\t20\n4\t1\t100\t\t\n5\t3\t100\t\t\n6\t2\t100\t2\t20\n7\t2\t100\t2\t20\n' >"$tmp/ib.want"
diff "$tmp/ib.want" "$tmp/ib.got" || fail "IPoIB frames differ from what was sent"
# IPv6 over IPoIB: the 9 listening joins (FullMember) of ib-a, ib-b, ib-c (all-nodes and two
# solicited-node groups each) and ib-a's send-only join (JoinState 8) to MCMemberRecord Set at
# the SA (LID 1), the answers, then the NS to the group's MLID (0xc004 = 49156) on ib-a's link
# and ib-b's, ib-b's PathRecord Get (method 0x01) to the SM and its answer (0x81 to ib-b, LID 3:
# the NA is unicast, so it waits for the path as ipoib's neigh_add_path -> path_rec_start), and
# the unicast NA on ib-b's link and ib-a's.
ts neigh-ib6.pcap -T fields -e frame.number -e infiniband.lrh.dlid -e infiniband.mad.method \
	-e infiniband.mcmemberrecord.joinstate -e infiniband.mcmemberrecord.mgid \
	-e icmpv6.type -E separator=, >"$tmp/ib6.got"
cat >"$tmp/ib6.want" <<'EOF2'
1,1,0x02,0x01,ff12:601b:ffff::1,
2,1,0x02,0x01,ff12:601b:ffff::1:ff00:a,
3,1,0x02,0x01,ff12:601b:ffff::1:ff00:a01,
4,1,0x02,0x01,ff12:601b:ffff::1,
5,1,0x02,0x01,ff12:601b:ffff::1:ff00:b,
6,1,0x02,0x01,ff12:601b:ffff::1:ff00:b01,
7,1,0x02,0x01,ff12:601b:ffff::1,
8,1,0x02,0x01,ff12:601b:ffff::1:ff00:c,
9,1,0x02,0x01,ff12:601b:ffff::1:ff00:c01,
10,1,0x02,0x08,ff12:601b:ffff::1:ff00:b,
11,2,0x81,0x01,ff12:601b:ffff::1,
12,2,0x81,0x01,ff12:601b:ffff::1:ff00:a,
13,2,0x81,0x01,ff12:601b:ffff::1:ff00:a01,
14,3,0x81,0x01,ff12:601b:ffff::1,
15,3,0x81,0x01,ff12:601b:ffff::1:ff00:b,
16,3,0x81,0x01,ff12:601b:ffff::1:ff00:b01,
17,4,0x81,0x01,ff12:601b:ffff::1,
18,4,0x81,0x01,ff12:601b:ffff::1:ff00:c,
19,4,0x81,0x01,ff12:601b:ffff::1:ff00:c01,
20,2,0x81,0x08,ff12:601b:ffff::1:ff00:b,
21,49156,,,,135
22,49156,,,,135
23,1,0x01,,,
24,3,0x81,,,
25,2,,,,136
26,2,,,,136
EOF2
diff "$tmp/ib6.want" "$tmp/ib6.got" || fail "IPv6-over-IPoIB frames differ from what was sent"
[ "$(grep -c 'Checksum Status: Good' "$tmp/neigh-ib6.pcap.txt")" -eq 4 ] ||
	fail "IPoIB ICMPv6 checksums: not all 4 good"
grep -q 'Length: 3 (24 bytes)' "$tmp/neigh-ib6.pcap.txt" || fail "IPoIB link-layer option length"
echo "neigh: $(wc -l <"$tmp/eth.got") Ethernet, $(wc -l <"$tmp/ib.got") IPoIB ARP and $(wc -l <"$tmp/ib6.got") IPoIB IPv6 frames decoded, no errors"
exit 0
