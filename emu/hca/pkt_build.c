/* Building whole packets: the headers below the BTH come from the address (emu_pkt_addr), the
 * BTH and extension headers from the caller and the opcode table; lengths, PadCnt, checksums,
 * ICRC and VCRC are always computed here, never taken from the caller, so every frame the
 * emulator sends is well formed unless a test corrupts it afterwards. */
#include <string.h>

#include "emu/hca/pkt.h"

/* Header offsets for a packet of this address and opcode, and the payload offset. */
static int layout(const struct emu_pkt_addr *a, uint8_t opcode, struct emu_pkt_info *in)
{
	const struct emu_pkt_opcode_info *oi = &emu_pkt_opcode[opcode];
	int h;

	if (!a || !oi->name)
		return -EINVAL;
	memset(in, 0, sizeof(*in));
	in->link_layer = a->link_layer;
	in->lrh_off = in->grh_off = in->eth_off = in->ip_off = in->udp_off = EMU_PKT_NO_HDR;
	in->vcrc_off = EMU_PKT_NO_HDR;
	switch (a->link_layer) {
	case EMU_LL_ETHERNET:
		in->eth_off = 0;
		in->ip_off = EMU_ETH_LEN;
		/* rxe sends IPv4 when the GIDs are IPv4-mapped (rdma_gid2ip) */
		if (emu_gid_is_v4mapped(a->sgid) && emu_gid_is_v4mapped(a->dgid)) {
			in->net = EMU_PKT_NET_IPV4;
			in->udp_off = in->ip_off + EMU_IPV4_LEN;
		} else {
			in->net = EMU_PKT_NET_IPV6;
			in->udp_off = in->ip_off + EMU_IPV6_LEN;
		}
		in->bth_off = in->udp_off + EMU_UDP_LEN;
		break;
	case EMU_LL_INFINIBAND:
		in->lrh_off = 0;
		if (a->grh) {
			in->net = EMU_PKT_NET_IB_GLOBAL;
			in->grh_off = EMU_LRH_LEN;
			in->bth_off = in->grh_off + EMU_GRH_LEN;
		} else {
			in->net = EMU_PKT_NET_IB_LOCAL;
			in->bth_off = EMU_LRH_LEN;
		}
		break;
	default:
		return -EINVAL;
	}
	for (h = 0; h < EMU_PKT_H_PAYLOAD; h++)
		in->hdr_off[h] = oi->mask & (1u << h) ? in->bth_off + oi->offset[h] : EMU_PKT_NO_HDR;
	in->hdr_off[EMU_PKT_H_PAYLOAD] = in->bth_off + oi->length;
	in->opcode = opcode;
	in->mask = oi->mask;
	return 0;
}

/* Completes the layout with the data length: pad, ICRC, VCRC and frame length. */
static void layout_len(struct emu_pkt_info *in, size_t paylen)
{
	in->paylen = (uint32_t)paylen;
	in->pad = (uint8_t)(-paylen & 3);
	in->icrc_off = in->hdr_off[EMU_PKT_H_PAYLOAD] + in->paylen + in->pad;
	in->frame_len = in->icrc_off + EMU_ICRC_LEN;
	if (in->link_layer == EMU_LL_INFINIBAND) {
		in->vcrc_off = in->frame_len;
		in->frame_len += EMU_VCRC_LEN;
	}
}

/* What goes on the wire: Ethernet frames are padded to the 60-byte minimum. */
static size_t wire_len(const struct emu_pkt_info *in)
{
	if (in->link_layer == EMU_LL_ETHERNET && in->frame_len < EMU_ETH_ZLEN)
		return EMU_ETH_ZLEN;
	return in->frame_len;
}

/* Largest data length that keeps every length field in range; data + pad is a multiple of 4,
 * so the room left is rounded down to one. */
static size_t max_paylen(const struct emu_pkt_info *in)
{
	size_t fixed = in->hdr_off[EMU_PKT_H_PAYLOAD] + EMU_ICRC_LEN;
	size_t limit;

	switch (in->net) {
	case EMU_PKT_NET_IPV4:
		limit = 0xffff + (size_t)in->ip_off; /* IPv4 total length */
		break;
	case EMU_PKT_NET_IPV6:
		limit = 0xffff + (size_t)in->udp_off; /* IPv6 payload length = UDP length */
		break;
	default:
		limit = 0x7ff * 4; /* LRH PktLen: 11 bits of words */
		break;
	}
	return limit > fixed ? (limit - fixed) & ~(size_t)3 : 0;
}

ssize_t emu_pkt_payload_offset(const struct emu_pkt_addr *a, uint8_t opcode)
{
	struct emu_pkt_info in;
	int ret = layout(a, opcode, &in);

	return ret ? ret : (ssize_t)in.hdr_off[EMU_PKT_H_PAYLOAD];
}

ssize_t emu_pkt_frame_len(const struct emu_pkt_addr *a, uint8_t opcode, size_t paylen)
{
	struct emu_pkt_info in;
	int ret = layout(a, opcode, &in);

	if (ret)
		return ret;
	if (paylen > max_paylen(&in) || (paylen && !(in.mask & EMU_PKT_PAYLOAD)))
		return -EMSGSIZE;
	layout_len(&in, paylen);
	return (ssize_t)wire_len(&in);
}

static void put_ext(uint8_t *buf, const struct emu_pkt_info *in, const struct emu_pkt_ext *x)
{
	static const struct emu_pkt_ext none;
	const uint32_t *off = in->hdr_off;

	if (!x)
		x = &none;
	if (in->mask & EMU_PKT_RDETH) {
		buf[off[EMU_PKT_H_RDETH]] = 0;
		emu_be24_put(buf + off[EMU_PKT_H_RDETH] + 1, x->rdeth_een);
	}
	if (in->mask & EMU_PKT_DETH)
		emu_deth_put(buf + off[EMU_PKT_H_DETH], &x->deth);
	if (in->mask & EMU_PKT_RETH)
		emu_reth_put(buf + off[EMU_PKT_H_RETH], &x->reth);
	if (in->mask & EMU_PKT_ATMETH)
		emu_atmeth_put(buf + off[EMU_PKT_H_ATMETH], &x->atmeth);
	if (in->mask & EMU_PKT_AETH)
		emu_aeth_put(buf + off[EMU_PKT_H_AETH], &x->aeth);
	if (in->mask & EMU_PKT_ATMACK)
		emu_be64_put(buf + off[EMU_PKT_H_ATMACK], x->atmack);
	if (in->mask & EMU_PKT_IMMDT)
		memcpy(buf + off[EMU_PKT_H_IMMDT], &x->imm, EMU_IMMDT_LEN);
	if (in->mask & EMU_PKT_IETH)
		emu_be32_put(buf + off[EMU_PKT_H_IETH], x->ieth_rkey);
	if (in->mask & EMU_PKT_CNP) /* its reserved block */
		memset(buf + in->bth_off + EMU_BTH_LEN, 0, EMU_CNP_RSVD_LEN);
}

/* UDP checksum over the IPv6 pseudo-header (RFC 8200 8.1) and the datagram. */
static uint16_t udp6_csum(const uint8_t *ip6, const uint8_t *udp, uint32_t len)
{
	uint8_t tail[8] = { 0 };
	uint32_t sum;
	uint16_t c;

	emu_be32_put(tail, len);
	tail[7] = EMU_IPPROTO_UDP;
	sum = emu_inet_sum(0, ip6 + 8, 32); /* source and destination addresses */
	sum = emu_inet_sum(sum, tail, sizeof(tail));
	sum = emu_inet_sum(sum, udp, len);
	c = emu_inet_csum_fold(sum);
	return c ? c : 0xffff; /* 0 means "no checksum" */
}

static void put_net(uint8_t *buf, const struct emu_pkt_addr *a, const struct emu_pkt_info *in)
{
	uint8_t hop = a->hop_limit ? a->hop_limit : 64;
	uint32_t tlen = in->frame_len - in->bth_off; /* BTH to ICRC */

	if (in->link_layer == EMU_LL_INFINIBAND) {
		struct emu_lrh lrh = {
			.vl = a->vl, .lver = 0, .sl = a->sl,
			.lnh = a->grh ? EMU_LNH_IBA_GLOBAL : EMU_LNH_IBA_LOCAL,
			.dlid = a->dlid, .slid = a->slid,
			.pkt_len = (uint16_t)((in->icrc_off + EMU_ICRC_LEN) / 4),
		};

		emu_lrh_put(buf, &lrh);
		if (a->grh) {
			struct emu_grh grh = {
				.ipver = 6, .tclass = a->tclass, .flow_label = a->flow_label,
				.paylen = (uint16_t)(tlen - EMU_VCRC_LEN),
				.nxthdr = EMU_GRH_NXTHDR_IBA, .hoplmt = hop,
			};

			memcpy(grh.sgid, a->sgid, 16);
			memcpy(grh.dgid, a->dgid, 16);
			emu_grh_put(buf + in->grh_off, &grh);
		}
		return;
	}

	struct emu_eth eth = { .type = in->net == EMU_PKT_NET_IPV4 ? EMU_ETHERTYPE_IPV4
								    : EMU_ETHERTYPE_IPV6 };
	struct emu_udp udp = { .sport = a->sport, .dport = EMU_ROCE_UDP_DPORT,
			       .len = (uint16_t)(EMU_UDP_LEN + tlen), .csum = 0 };

	memcpy(eth.dst, a->dmac, 6);
	memcpy(eth.src, a->smac, 6);
	emu_eth_put(buf, &eth);
	if (in->net == EMU_PKT_NET_IPV4) {
		/* rxe: DF set, TOS from the traffic class, TTL from the hop limit */
		struct emu_ipv4 ip = { .tos = a->tclass, .id = a->ip_id, .df = true, .ttl = hop,
				       .proto = EMU_IPPROTO_UDP,
				       .tot_len = (uint16_t)(EMU_IPV4_LEN + udp.len) };

		memcpy(ip.saddr, a->sgid + 12, 4);
		memcpy(ip.daddr, a->dgid + 12, 4);
		emu_ipv4_put(buf + in->ip_off, &ip);
		if (!a->no_crc)
			emu_ipv4_csum_fill(buf + in->ip_off);
	} else {
		struct emu_ipv6 ip = { .tclass = a->tclass, .flow_label = a->flow_label,
				       .payload_len = udp.len, .next_hdr = EMU_IPPROTO_UDP,
				       .hop_limit = hop };

		memcpy(ip.saddr, a->sgid, 16);
		memcpy(ip.daddr, a->dgid, 16);
		emu_ipv6_put(buf + in->ip_off, &ip);
	}
	/* UDP checksum 0 for now: IPv4 RoCEv2 sends 0 (A17.4.3, and rxe); IPv6 fills it in at
	 * the end, because it covers the ICRC. */
	emu_udp_put(buf + in->udp_off, &udp);
}

/* The layout of a packet with paylen data bytes and its length on the wire, checked against
 * the length fields and cap; a negative errno otherwise. Done once a packet: emu_pkt_build
 * used to lay it out three times (frame length, payload offset, finish). */
ssize_t emu_pkt_plan(const struct emu_pkt_addr *a, uint8_t opcode, size_t paylen, size_t cap,
		     struct emu_pkt_info *in)
{
	size_t len;
	int ret = layout(a, opcode, in);

	if (ret)
		return ret;
	if (paylen > max_paylen(in) || (paylen && !(in->mask & EMU_PKT_PAYLOAD)))
		return -EMSGSIZE;
	layout_len(in, paylen);
	len = wire_len(in);
	if (cap < len)
		return -EMSGSIZE;
	return (ssize_t)len;
}

/* Everything but the payload, on a planned layout. The BTH is read back into the caller's
 * info only: the senders that ask for none (every data packet) skip that parse. */
ssize_t emu_pkt_finish(uint8_t *buf, size_t len, const struct emu_pkt_addr *a,
		       const struct emu_bth *bth, const struct emu_pkt_ext *ext,
		       const struct emu_pkt_info *in, struct emu_pkt_info *info)
{
	size_t paylen = in->paylen;
	struct emu_bth b;

	/* pad bytes (zero, 9.2.3) and Ethernet padding */
	memset(buf + in->hdr_off[EMU_PKT_H_PAYLOAD] + paylen, 0, in->pad);
	memset(buf + in->frame_len, 0, len - in->frame_len);
	put_net(buf, a, in);
	b = *bth;
	b.padcnt = in->pad;
	emu_bth_put(buf + in->bth_off, &b);
	put_ext(buf, in, ext);

	emu_be32_put(buf + in->icrc_off, 0);
	if (a->no_crc) {
		if (in->link_layer == EMU_LL_INFINIBAND)
			emu_be16_put(buf + in->vcrc_off, 0);
	} else {
		uint32_t icrc = emu_pkt_icrc(buf, in);

		for (int i = 0; i < EMU_ICRC_LEN; i++) /* least significant byte first */
			buf[in->icrc_off + i] = (uint8_t)(icrc >> (8 * i));
		if (in->net == EMU_PKT_NET_IPV6 && !a->udp6_csum_zero)
			emu_be16_put(buf + in->udp_off + 6,
				     udp6_csum(buf + in->ip_off, buf + in->udp_off,
					       in->frame_len - in->udp_off));
		if (in->link_layer == EMU_LL_INFINIBAND) {
			uint16_t v = emu_vcrc16(buf, in->vcrc_off);

			buf[in->vcrc_off] = (uint8_t)v;
			buf[in->vcrc_off + 1] = (uint8_t)(v >> 8);
		}
		emu_pkt_known_note(buf, len);
	}
	if (info) {
		*info = *in;
		emu_bth_get(buf + in->bth_off, &info->bth);
		info->psn = info->bth.psn;
		info->dqpn = info->bth.dqpn;
	}
	return (ssize_t)len;
}

ssize_t emu_pkt_build_finish(uint8_t *buf, size_t cap, const struct emu_pkt_addr *a,
			     const struct emu_bth *bth, const struct emu_pkt_ext *ext, size_t paylen,
			     struct emu_pkt_info *info)
{
	struct emu_pkt_info in;
	ssize_t len;

	if (!buf || !bth)
		return -EINVAL;
	len = emu_pkt_plan(a, bth->opcode, paylen, cap, &in);
	return len < 0 ? len : emu_pkt_finish(buf, (size_t)len, a, bth, ext, &in, info);
}

ssize_t emu_pkt_build(uint8_t *buf, size_t cap, const struct emu_pkt_addr *a,
		      const struct emu_bth *bth, const struct emu_pkt_ext *ext, const void *payload,
		      size_t paylen, struct emu_pkt_info *info)
{
	struct emu_pkt_info in;
	ssize_t len;

	if (!buf || !bth || (paylen && !payload))
		return -EINVAL;
	len = emu_pkt_plan(a, bth->opcode, paylen, cap, &in);
	if (len < 0)
		return len;
	if (paylen)
		memmove(buf + in.hdr_off[EMU_PKT_H_PAYLOAD], payload, paylen);
	return emu_pkt_finish(buf, (size_t)len, a, bth, ext, &in, info);
}
