/* Header encode/decode and whole-packet build and parse (IBTA vol. 1 7.7 LRH, 8.3 GRH, 9.2-9.3
 * BTH and extension headers; RoCEv2 annex A17; RFC 791, 8200, 768). Everything is written byte
 * by byte in network order, so no struct layout or host endianness is involved. */
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "emu/hca/pkt.h"

/* The byte-order helpers are inline in emu/hca/pkt.h. */

/* ---- link and network headers ---- */

void emu_eth_put(uint8_t *p, const struct emu_eth *h)
{
	memcpy(p, h->dst, 6);
	memcpy(p + 6, h->src, 6);
	emu_be16_put(p + 12, h->type);
}

void emu_eth_get(const uint8_t *p, struct emu_eth *h)
{
	memcpy(h->dst, p, 6);
	memcpy(h->src, p + 6, 6);
	h->type = emu_be16_get(p + 12);
}

void emu_ipv4_put(uint8_t *p, const struct emu_ipv4 *h)
{
	p[0] = 0x45; /* version 4, IHL 5: RoCEv2 carries no IP options */
	p[1] = h->tos;
	emu_be16_put(p + 2, h->tot_len);
	emu_be16_put(p + 4, h->id);
	emu_be16_put(p + 6, h->df ? 0x4000 : 0); /* flags DF, MF = 0, fragment offset 0 */
	p[8] = h->ttl;
	p[9] = h->proto;
	emu_be16_put(p + 10, h->csum);
	memcpy(p + 12, h->saddr, 4);
	memcpy(p + 16, h->daddr, 4);
}

void emu_ipv4_get(const uint8_t *p, struct emu_ipv4 *h)
{
	h->tos = p[1];
	h->tot_len = emu_be16_get(p + 2);
	h->id = emu_be16_get(p + 4);
	h->df = (p[6] & 0x40) != 0;
	h->ttl = p[8];
	h->proto = p[9];
	h->csum = emu_be16_get(p + 10);
	memcpy(h->saddr, p + 12, 4);
	memcpy(h->daddr, p + 16, 4);
}

uint32_t emu_inet_sum(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	/* Fold now and then so that long buffers cannot overflow the accumulator. */
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

uint16_t emu_inet_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void emu_ipv4_csum_fill(uint8_t *p)
{
	emu_be16_put(p + 10, 0);
	emu_be16_put(p + 10, emu_inet_csum_fold(emu_inet_sum(0, p, EMU_IPV4_LEN)));
}

void emu_ipv6_put(uint8_t *p, const struct emu_ipv6 *h)
{
	emu_be32_put(p, 6u << 28 | (uint32_t)h->tclass << 20 | (h->flow_label & 0xfffff));
	emu_be16_put(p + 4, h->payload_len);
	p[6] = h->next_hdr;
	p[7] = h->hop_limit;
	memcpy(p + 8, h->saddr, 16);
	memcpy(p + 24, h->daddr, 16);
}

void emu_ipv6_get(const uint8_t *p, struct emu_ipv6 *h)
{
	uint32_t w = emu_be32_get(p);

	h->tclass = (uint8_t)(w >> 20);
	h->flow_label = w & 0xfffff;
	h->payload_len = emu_be16_get(p + 4);
	h->next_hdr = p[6];
	h->hop_limit = p[7];
	memcpy(h->saddr, p + 8, 16);
	memcpy(h->daddr, p + 24, 16);
}

void emu_udp_put(uint8_t *p, const struct emu_udp *h)
{
	emu_be16_put(p, h->sport);
	emu_be16_put(p + 2, h->dport);
	emu_be16_put(p + 4, h->len);
	emu_be16_put(p + 6, h->csum);
}

void emu_udp_get(const uint8_t *p, struct emu_udp *h)
{
	h->sport = emu_be16_get(p);
	h->dport = emu_be16_get(p + 2);
	h->len = emu_be16_get(p + 4);
	h->csum = emu_be16_get(p + 6);
}

/* ---- IB link and network headers ---- */

void emu_lrh_put(uint8_t *p, const struct emu_lrh *h)
{
	p[0] = (uint8_t)((h->vl & 0xf) << 4 | (h->lver & 0xf));
	p[1] = (uint8_t)((h->sl & 0xf) << 4 | (h->lnh & 0x3)); /* 2 reserved bits between */
	emu_be16_put(p + 2, h->dlid);
	emu_be16_put(p + 4, h->pkt_len & 0x7ff); /* 5 reserved bits above */
	emu_be16_put(p + 6, h->slid);
}

void emu_lrh_get(const uint8_t *p, struct emu_lrh *h)
{
	h->vl = p[0] >> 4;
	h->lver = p[0] & 0xf;
	h->sl = p[1] >> 4;
	h->lnh = p[1] & 0x3;
	h->dlid = emu_be16_get(p + 2);
	h->pkt_len = emu_be16_get(p + 4) & 0x7ff;
	h->slid = emu_be16_get(p + 6);
}

void emu_grh_put(uint8_t *p, const struct emu_grh *h)
{
	emu_be32_put(p, (uint32_t)(h->ipver & 0xf) << 28 | (uint32_t)h->tclass << 20 |
				(h->flow_label & 0xfffff));
	emu_be16_put(p + 4, h->paylen);
	p[6] = h->nxthdr;
	p[7] = h->hoplmt;
	memcpy(p + 8, h->sgid, 16);
	memcpy(p + 24, h->dgid, 16);
}

void emu_grh_get(const uint8_t *p, struct emu_grh *h)
{
	uint32_t w = emu_be32_get(p);

	h->ipver = (uint8_t)(w >> 28);
	h->tclass = (uint8_t)(w >> 20);
	h->flow_label = w & 0xfffff;
	h->paylen = emu_be16_get(p + 4);
	h->nxthdr = p[6];
	h->hoplmt = p[7];
	memcpy(h->sgid, p + 8, 16);
	memcpy(h->dgid, p + 24, 16);
}

/* ---- transport headers ---- */

void emu_bth_put(uint8_t *p, const struct emu_bth *h)
{
	p[0] = h->opcode;
	p[1] = (uint8_t)((h->se ? 0x80 : 0) | (h->mig ? 0x40 : 0) | (h->padcnt & 3) << 4 |
			 (h->tver & 0xf));
	emu_be16_put(p + 2, h->pkey);
	p[4] = (uint8_t)((h->fecn ? 0x80 : 0) | (h->becn ? 0x40 : 0)); /* resv6 = 0 */
	emu_be24_put(p + 5, h->dqpn & EMU_QPN_MASK);
	p[8] = h->ackreq ? 0x80 : 0; /* resv7 = 0 */
	emu_be24_put(p + 9, h->psn & EMU_PSN_MASK);
}

void emu_bth_get(const uint8_t *p, struct emu_bth *h)
{
	h->opcode = p[0];
	h->se = (p[1] & 0x80) != 0;
	h->mig = (p[1] & 0x40) != 0;
	h->padcnt = (p[1] >> 4) & 3;
	h->tver = p[1] & 0xf;
	h->pkey = emu_be16_get(p + 2);
	h->fecn = (p[4] & 0x80) != 0;
	h->becn = (p[4] & 0x40) != 0;
	h->dqpn = emu_be24_get(p + 5);
	h->ackreq = (p[8] & 0x80) != 0;
	h->psn = emu_be24_get(p + 9);
}

void emu_reth_put(uint8_t *p, const struct emu_reth *h)
{
	emu_be64_put(p, h->va);
	emu_be32_put(p + 8, h->rkey);
	emu_be32_put(p + 12, h->dma_len);
}

void emu_reth_get(const uint8_t *p, struct emu_reth *h)
{
	h->va = emu_be64_get(p);
	h->rkey = emu_be32_get(p + 8);
	h->dma_len = emu_be32_get(p + 12);
}

void emu_aeth_put(uint8_t *p, const struct emu_aeth *h)
{
	p[0] = h->syndrome;
	emu_be24_put(p + 1, h->msn & 0xffffff);
}

void emu_aeth_get(const uint8_t *p, struct emu_aeth *h)
{
	h->syndrome = p[0];
	h->msn = emu_be24_get(p + 1);
}

void emu_atmeth_put(uint8_t *p, const struct emu_atmeth *h)
{
	emu_be64_put(p, h->va);
	emu_be32_put(p + 8, h->rkey);
	emu_be64_put(p + 12, h->swap_add);
	emu_be64_put(p + 20, h->compare);
}

void emu_atmeth_get(const uint8_t *p, struct emu_atmeth *h)
{
	h->va = emu_be64_get(p);
	h->rkey = emu_be32_get(p + 8);
	h->swap_add = emu_be64_get(p + 12);
	h->compare = emu_be64_get(p + 20);
}

void emu_deth_put(uint8_t *p, const struct emu_deth *h)
{
	emu_be32_put(p, h->qkey);
	p[4] = 0;
	emu_be24_put(p + 5, h->sqpn & EMU_QPN_MASK);
}

void emu_deth_get(const uint8_t *p, struct emu_deth *h)
{
	h->qkey = emu_be32_get(p);
	h->sqpn = emu_be24_get(p + 5);
}

/* ---- UDP source ports ---- */

uint16_t emu_roce_sport_rxe(uint32_t qpn)
{
	/* the kernel's hash_32(qpn, 14): multiply by the 32-bit golden ratio, keep the top bits */
	return (uint16_t)(0xc000 | (((qpn * 0x61c88647u) >> 18) & 0x3fff));
}

uint16_t emu_roce_sport_flow(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = flow_label & 0xfffff;

	if (!fl) { /* rdma_calc_flow_label */
		uint64_t v = (uint64_t)lqpn * rqpn;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)v & 0xfffff;
	}
	/* rdma_flow_label_to_udp_sport: fold the top 6 bits into the low 14 */
	return (uint16_t)(0xc000 | ((fl & 0x3fff) ^ ((fl & 0xfc000) >> 14)));
}

/* ---- errors ---- */

const char *emu_pkt_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "no error";
	case EMU_PKT_ETRUNC:
		return "truncated: the frame ends inside a header or before the length it declares";
	case EMU_PKT_ELEN:
		return "bad length: length fields disagree with each other or with the frame";
	case EMU_PKT_EVERSION:
		return "bad version: IP version/IHL, LRH LVer, GRH IPVer or BTH TVer";
	case EMU_PKT_ENOTIBA:
		return "not an IBA transport packet (ethertype, protocol, UDP port, LNH, NxtHdr, IP options or fragment)";
	case EMU_PKT_EOPCODE:
		return "unknown BTH opcode";
	case EMU_PKT_EPAD:
		return "bad pad: PadCnt exceeds the data, or the transport length is not a multiple of 4";
	case EMU_PKT_ECSUM:
		return "bad IPv4 header or UDP checksum";
	case EMU_PKT_EICRC:
		return "bad ICRC";
	case EMU_PKT_EVCRC:
		return "bad VCRC";
	case EINVAL:
		return "invalid argument";
	default:
		return "unknown error";
	}
}

bool emu_gid_is_v4mapped(const uint8_t gid[16])
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

void emu_gid_from_sockaddr(const struct sockaddr *sa, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

void emu_gid_to_sockaddr(const uint8_t gid[16], struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (emu_gid_is_v4mapped(gid)) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, gid + 12, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, gid, 16);
	}
}
