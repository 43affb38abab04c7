/* Test-only frame builder; layouts from IBTA vol. 1 (LRH 7.7, BTH 9.2) and RoCEv2 annex A17. */
#include "frames.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

uint16_t frame_inet_csum(const uint8_t *buf, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(buf[i] << 8 | buf[i + 1]);
	if (len & 1)
		sum += (uint32_t)buf[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put_bth(uint8_t *p, const struct frame_bth *b, unsigned pad)
{
	p[0] = b->opcode;
	p[1] = (uint8_t)((b->solicited ? 0x80 : 0) | (pad & 3) << 4); /* SE, M=0, PadCnt, TVer=0 */
	put16(p + 2, b->pkey);
	p[4] = 0; /* FECN, BECN, reserved */
	put24(p + 5, b->dqpn & 0xffffff);
	p[8] = b->ack_req ? 0x80 : 0;
	put24(p + 9, b->psn & 0xffffff);
}

void frame_parse_bth(const uint8_t *p, struct frame_bth *out)
{
	out->opcode = p[0];
	out->solicited = p[1] & 0x80;
	out->pkey = (uint16_t)(p[2] << 8 | p[3]);
	out->dqpn = (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7];
	out->ack_req = p[8] & 0x80;
	out->psn = (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
}

/* BTH, extension headers, payload, pad and a placeholder ICRC; returns bytes written. */
static size_t put_transport(uint8_t *p, const struct frame_bth *bth, const void *ext,
			    size_t extlen, const void *payload, size_t plen)
{
	unsigned pad = (unsigned)((4 - plen % 4) % 4);
	size_t off = 0;

	put_bth(p, bth, pad);
	off += FRAME_BTH_LEN;
	if (extlen)
		memcpy(p + off, ext, extlen);
	off += extlen;
	if (plen)
		memcpy(p + off, payload, plen);
	off += plen;
	memset(p + off, 0, pad + FRAME_ICRC_LEN);
	return off + pad + FRAME_ICRC_LEN;
}

static size_t transport_len(size_t extlen, size_t plen)
{
	return FRAME_BTH_LEN + extlen + plen + (4 - plen % 4) % 4 + FRAME_ICRC_LEN;
}

size_t frame_build_roce(uint8_t *buf, size_t cap, const struct frame_roce_addr *a,
			const struct frame_bth *bth, const void *ext, size_t extlen,
			const void *payload, size_t plen)
{
	size_t tlen = transport_len(extlen, plen);
	size_t udp_len = 8 + tlen, ip_len = 20 + udp_len, len = 14 + ip_len;
	uint8_t *ip = buf + 14, *udp = ip + 20;

	if (len > cap || ip_len > 0xffff)
		return 0;
	memcpy(buf, a->dmac, 6);
	memcpy(buf + 6, a->smac, 6);
	put16(buf + 12, 0x0800);

	ip[0] = 0x45; /* version 4, IHL 5 */
	ip[1] = 0;    /* DSCP/ECN */
	put16(ip + 2, (uint16_t)ip_len);
	put16(ip + 4, 0);      /* identification: unused with DF */
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;            /* TTL */
	ip[9] = 17;            /* UDP */
	put16(ip + 10, 0);
	put32(ip + 12, a->saddr);
	put32(ip + 16, a->daddr);
	put16(ip + 10, frame_inet_csum(ip, 20));

	put16(udp, a->sport);
	put16(udp + 2, FRAME_ROCE_PORT);
	put16(udp + 4, (uint16_t)udp_len);
	put16(udp + 6, 0); /* RoCEv2 over IPv4 sends a zero UDP checksum */

	put_transport(udp + 8, bth, ext, extlen, payload, plen);
	return len;
}

size_t frame_build_ib(uint8_t *buf, size_t cap, const struct frame_ib_addr *a,
		      const struct frame_bth *bth, const void *ext, size_t extlen,
		      const void *payload, size_t plen)
{
	size_t tlen = transport_len(extlen, plen);
	size_t pktlen = 8 + tlen; /* LRH PktLen counts LRH..ICRC, not the VCRC */
	size_t len = pktlen + FRAME_VCRC_LEN;

	if (len > cap || pktlen / 4 > 0x7ff)
		return 0;
	buf[0] = (uint8_t)(a->vl << 4);          /* VL, LVer 0 */
	buf[1] = (uint8_t)(a->sl << 4 | 0x2);    /* SL, LNH = 2: IBA local, BTH follows */
	put16(buf + 2, a->dlid);
	put16(buf + 4, (uint16_t)(pktlen / 4)); /* 5 reserved bits, 11-bit PktLen in words */
	put16(buf + 6, a->slid);
	put_transport(buf + 8, bth, ext, extlen, payload, plen);
	memset(buf + pktlen, 0, FRAME_VCRC_LEN);
	return len;
}
