/* Parsing and checking a received frame, header by header, in the order a receiver meets the
 * problems: lengths first (a truncated frame is reported as such, not as a bad CRC), then
 * versions and protocol numbers, checksums and the VCRC as their headers are reached, the
 * transport layout, and the ICRC last. Every failure has its own code (EMU_PKT_E*). */
#include <string.h>

#include "emu/hca/pkt.h"

static void info_init(struct emu_pkt_info *in, int link_layer)
{
	memset(in, 0, sizeof(*in));
	in->link_layer = link_layer;
	in->lrh_off = in->grh_off = in->eth_off = in->ip_off = in->udp_off = in->bth_off =
		EMU_PKT_NO_HDR;
	for (int h = 0; h < EMU_PKT_H_NUM; h++)
		in->hdr_off[h] = EMU_PKT_NO_HDR;
	in->icrc_off = in->vcrc_off = EMU_PKT_NO_HDR;
}

/* Bytes an Ethernet frame may carry after the IP datagram: only the padding to 60. */
static int eth_tail_ok(size_t len, uint32_t end)
{
	return len == end || (len > end && len <= EMU_ETH_ZLEN) ? 0 : -EMU_PKT_ELEN;
}

static int parse_udp(const uint8_t *f, struct emu_pkt_info *in, uint32_t ip_end)
{
	struct emu_udp udp;
	uint32_t ulen;

	if (ip_end - in->udp_off < EMU_UDP_LEN)
		return -EMU_PKT_ELEN;
	emu_udp_get(f + in->udp_off, &udp);
	if (udp.dport != EMU_ROCE_UDP_DPORT)
		return -EMU_PKT_ENOTIBA;
	ulen = ip_end - in->udp_off;
	if (udp.len != ulen)
		return -EMU_PKT_ELEN;
	/* 0 is "no checksum": allowed for IPv4, and for IPv6 rxe both sends and accepts it */
	if (udp.csum) {
		uint32_t sum;

		if (in->net == EMU_PKT_NET_IPV4) {
			uint8_t ph[12] = { 0 };

			memcpy(ph, f + in->ip_off + 12, 8);
			ph[9] = EMU_IPPROTO_UDP;
			emu_be16_put(ph + 10, (uint16_t)ulen);
			sum = emu_inet_sum(0, ph, sizeof(ph));
		} else {
			uint8_t tail[8] = { 0 };

			emu_be32_put(tail, ulen);
			tail[7] = EMU_IPPROTO_UDP;
			sum = emu_inet_sum(0, f + in->ip_off + 8, 32);
			sum = emu_inet_sum(sum, tail, sizeof(tail));
		}
		sum = emu_inet_sum(sum, f + in->udp_off, ulen);
		if (emu_inet_csum_fold(sum) != 0)
			return -EMU_PKT_ECSUM;
	}
	in->bth_off = in->udp_off + EMU_UDP_LEN;
	in->frame_len = ip_end;
	return 0;
}

static int parse_eth(const uint8_t *f, size_t len, struct emu_pkt_info *in, bool known)
{
	uint16_t type;
	uint32_t end;
	int ret;

	if (len < EMU_ETH_LEN)
		return -EMU_PKT_ETRUNC;
	in->eth_off = 0;
	in->ip_off = EMU_ETH_LEN;
	type = emu_be16_get(f + 12);
	if (type == EMU_ETHERTYPE_IPV4) {
		struct emu_ipv4 ip;

		in->net = EMU_PKT_NET_IPV4;
		if (len < EMU_ETH_LEN + EMU_IPV4_LEN)
			return -EMU_PKT_ETRUNC;
		if (f[in->ip_off] >> 4 != 4 || (f[in->ip_off] & 0xf) < 5)
			return -EMU_PKT_EVERSION;
		if ((f[in->ip_off] & 0xf) != 5)
			return -EMU_PKT_ENOTIBA; /* options: RoCEv2 has none, the ICRC assumes none */
		emu_ipv4_get(f + in->ip_off, &ip);
		if (ip.tot_len < EMU_IPV4_LEN)
			return -EMU_PKT_ELEN;
		end = in->ip_off + ip.tot_len;
		if (len < end)
			return -EMU_PKT_ETRUNC;
		ret = eth_tail_ok(len, end);
		if (ret)
			return ret;
		/* a frame this program built and nobody altered (emu_pkt_known) has the checksum
		 * it was built with, or none at all where its only reader trusts it (no_crc) */
		if (!known && emu_inet_csum_fold(emu_inet_sum(0, f + in->ip_off, EMU_IPV4_LEN)) != 0)
			return -EMU_PKT_ECSUM;
		if (emu_be16_get(f + in->ip_off + 6) & 0x3fff)
			return -EMU_PKT_ENOTIBA; /* a fragment (MF or offset) */
		if (ip.proto != EMU_IPPROTO_UDP)
			return -EMU_PKT_ENOTIBA;
		in->udp_off = in->ip_off + EMU_IPV4_LEN;
	} else if (type == EMU_ETHERTYPE_IPV6) {
		struct emu_ipv6 ip;

		in->net = EMU_PKT_NET_IPV6;
		if (len < EMU_ETH_LEN + EMU_IPV6_LEN)
			return -EMU_PKT_ETRUNC;
		if (f[in->ip_off] >> 4 != 6)
			return -EMU_PKT_EVERSION;
		emu_ipv6_get(f + in->ip_off, &ip);
		end = in->ip_off + EMU_IPV6_LEN + ip.payload_len;
		if (len < end)
			return -EMU_PKT_ETRUNC;
		ret = eth_tail_ok(len, end);
		if (ret)
			return ret;
		if (ip.next_hdr != EMU_IPPROTO_UDP)
			return -EMU_PKT_ENOTIBA; /* extension headers included */
		in->udp_off = in->ip_off + EMU_IPV6_LEN;
	} else {
		return -EMU_PKT_ENOTIBA;
	}
	return parse_udp(f, in, end);
}

static int parse_ib(const uint8_t *f, size_t len, struct emu_pkt_info *in, bool known)
{
	struct emu_lrh lrh;
	uint32_t plen;
	uint16_t v;

	if (len < EMU_LRH_LEN)
		return -EMU_PKT_ETRUNC;
	in->lrh_off = 0;
	emu_lrh_get(f, &lrh);
	if (lrh.lver != 0)
		return -EMU_PKT_EVERSION;
	if (lrh.lnh != EMU_LNH_IBA_LOCAL && lrh.lnh != EMU_LNH_IBA_GLOBAL)
		return -EMU_PKT_ENOTIBA; /* raw packets carry no BTH */
	plen = (uint32_t)lrh.pkt_len * 4;
	if (len < plen + EMU_VCRC_LEN)
		return -EMU_PKT_ETRUNC;
	if (len > plen + EMU_VCRC_LEN || plen < EMU_LRH_LEN)
		return -EMU_PKT_ELEN;
	in->vcrc_off = plen;
	/* a frame built here, these very bytes, carries the builder's VCRC */
	v = known ? 0 : emu_vcrc16(f, plen);
	if (!known && (f[plen] != (uint8_t)v || f[plen + 1] != (uint8_t)(v >> 8)))
		return -EMU_PKT_EVCRC;
	in->frame_len = plen + EMU_VCRC_LEN;
	if (lrh.lnh == EMU_LNH_IBA_GLOBAL) {
		struct emu_grh grh;

		in->net = EMU_PKT_NET_IB_GLOBAL;
		if (plen < EMU_LRH_LEN + EMU_GRH_LEN)
			return -EMU_PKT_ELEN;
		in->grh_off = EMU_LRH_LEN;
		emu_grh_get(f + in->grh_off, &grh);
		if (grh.ipver != 6)
			return -EMU_PKT_EVERSION;
		if (grh.nxthdr != EMU_GRH_NXTHDR_IBA)
			return -EMU_PKT_ENOTIBA;
		if (grh.paylen != plen - EMU_LRH_LEN - EMU_GRH_LEN)
			return -EMU_PKT_ELEN;
		in->bth_off = in->grh_off + EMU_GRH_LEN;
	} else {
		in->net = EMU_PKT_NET_IB_LOCAL;
		in->bth_off = EMU_LRH_LEN;
	}
	return 0;
}

/* The BTH and what follows it, up to the end of the ICRC at `end`. */
static int parse_transport(const uint8_t *f, struct emu_pkt_info *in, uint32_t end, bool known)
{
	const struct emu_pkt_opcode_info *oi;
	uint32_t tlen = end - in->bth_off, data, icrc;
	int h;

	if (tlen < EMU_BTH_LEN + EMU_ICRC_LEN)
		return -EMU_PKT_ELEN;
	emu_bth_get(f + in->bth_off, &in->bth);
	in->opcode = in->bth.opcode;
	in->psn = in->bth.psn;
	in->dqpn = in->bth.dqpn;
	in->pad = in->bth.padcnt;
	if (in->bth.tver != 0)
		return -EMU_PKT_EVERSION;
	oi = &emu_pkt_opcode[in->opcode];
	if (!oi->name)
		return -EMU_PKT_EOPCODE;
	in->mask = oi->mask;
	if (tlen < (uint32_t)oi->length + EMU_ICRC_LEN)
		return -EMU_PKT_ELEN;
	if (tlen % 4)
		return -EMU_PKT_EPAD;
	data = tlen - oi->length - EMU_ICRC_LEN;
	if (in->pad > data)
		return -EMU_PKT_EPAD;
	if (data && !(oi->mask & EMU_PKT_PAYLOAD))
		return -EMU_PKT_ELEN;
	for (h = 0; h < EMU_PKT_H_PAYLOAD; h++)
		if (oi->mask & (1u << h))
			in->hdr_off[h] = in->bth_off + oi->offset[h];
	in->hdr_off[EMU_PKT_H_PAYLOAD] = in->bth_off + oi->length;
	in->paylen = data - in->pad;
	in->icrc_off = end - EMU_ICRC_LEN;
	if (known) /* built here, these very bytes: the builder's ICRC */
		return 0;
	icrc = emu_pkt_icrc(f, in);
	for (h = 0; h < EMU_ICRC_LEN; h++)
		if (f[in->icrc_off + h] != (uint8_t)(icrc >> (8 * h)))
			return -EMU_PKT_EICRC;
	return 0;
}

static int parse(const uint8_t *frame, size_t len, int link_layer, struct emu_pkt_info *info,
		 bool built)
{
	struct emu_pkt_info local;
	uint32_t end;
	bool known;
	int ret;

	if (!info)
		info = &local;
	info_init(info, link_layer);
	if (!frame && len)
		return -EINVAL;
	if (len > UINT16_MAX + (size_t)EMU_ETH_LEN + EMU_IPV6_LEN)
		return -EMU_PKT_ELEN; /* longer than any length field can describe */
	known = frame && (built || emu_pkt_known(frame, len));
	switch (link_layer) {
	case EMU_LL_ETHERNET:
		ret = parse_eth(frame, len, info, known);
		end = info->frame_len;
		break;
	case EMU_LL_INFINIBAND:
		ret = parse_ib(frame, len, info, known);
		end = info->vcrc_off;
		break;
	default:
		return -EINVAL;
	}
	if (ret)
		return ret;
	return parse_transport(frame, info, end, known);
}

int emu_pkt_parse(const uint8_t *frame, size_t len, int link_layer, struct emu_pkt_info *info)
{
	return parse(frame, len, link_layer, info, false);
}

int emu_pkt_parse_built(const uint8_t *frame, size_t len, int link_layer,
			struct emu_pkt_info *info)
{
	return parse(frame, len, link_layer, info, true);
}
