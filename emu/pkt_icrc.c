/* The packet CRCs (IBTA vol. 1 7.8; RoCEv2 annex A17.4.1).
 *
 * ICRC: CRC-32 with the 802.3 polynomial, reflected, preset to ones, complemented, sent least
 * significant byte first (as rxe stores ~crc32_le, and as a ConnectX-4 Lx does: the known-answer
 * test in emu/tests/test_pkt.c is a CNP it sent). It covers the packet from the network header
 * to the end of the pad with every field a switch or router may change replaced by ones:
 *   IB local (no GRH): LRH VL; BTH resv8a (FECN, BECN, 6 reserved bits).
 *   IB global (GRH):   the whole LRH (a router rewrites it); GRH TClass, FlowLabel, HopLmt;
 *                      BTH resv8a.
 *   RoCEv2: a global packet whose LRH is absent, so 8 bytes of ones stand for it; IPv4 TOS,
 *           TTL and header checksum, or IPv6 traffic class, flow label and hop limit; the UDP
 *           checksum; BTH resv8a.
 *
 * VCRC: CRC-16 with polynomial 0x100B, reflected, preset to ones, complemented, over the LRH to
 * the ICRC inclusive; sent least significant byte first like the ICRC (the bit order the link
 * sends both CRCs in).
 *
 * Both use nibble tables: 16 constants each, no run-time initialisation, fast enough for an
 * emulator. The tests check them against bitwise implementations.
 */
#include <string.h>

#include "emu/pkt.h"

static const uint32_t crc32_nibble[16] = {
	0x00000000, 0x1db71064, 0x3b6e20c8, 0x26d930ac, 0x76dc4190, 0x6b6b51f4,
	0x4db26158, 0x5005713c, 0xedb88320, 0xf00f9344, 0xd6d6a3e8, 0xcb61b38c,
	0x9b64c2b0, 0x86d3d2d4, 0xa00ae278, 0xbdbdf21c,
};

static const uint16_t crc16_nibble[16] = {
	0x0000, 0x1a01, 0x3402, 0x2e03, 0x6804, 0x7205, 0x5c06, 0x4607,
	0xd008, 0xca09, 0xe40a, 0xfe0b, 0xb80c, 0xa20d, 0x8c0e, 0x960f,
};

uint32_t emu_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		crc ^= *b++;
		crc = (crc >> 4) ^ crc32_nibble[crc & 0xf];
		crc = (crc >> 4) ^ crc32_nibble[crc & 0xf];
	}
	return crc;
}

uint16_t emu_vcrc16(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint16_t crc = 0xffff;

	while (n--) {
		crc ^= *b++;
		crc = (uint16_t)((crc >> 4) ^ crc16_nibble[crc & 0xf]);
		crc = (uint16_t)((crc >> 4) ^ crc16_nibble[crc & 0xf]);
	}
	return (uint16_t)~crc;
}

/* The masked copy of the headers below and including the BTH: at most a GRH/IPv6+UDP+BTH. */
#define PSEUDO_MAX (EMU_IPV6_LEN + EMU_UDP_LEN + EMU_BTH_LEN)

uint32_t emu_pkt_icrc(const uint8_t *frame, const struct emu_pkt_info *info)
{
	static const uint8_t ones[EMU_LRH_LEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t ps[PSEUDO_MAX];
	uint32_t start, n, crc = ~0u;

	switch (info->net) {
	case EMU_PKT_NET_IB_LOCAL:
		start = info->lrh_off;
		n = EMU_LRH_LEN + EMU_BTH_LEN;
		memcpy(ps, frame + start, n);
		ps[0] |= 0xf0; /* VL */
		break;
	case EMU_PKT_NET_IB_GLOBAL:
	case EMU_PKT_NET_IPV6:
		crc = emu_crc32(crc, ones, sizeof(ones));
		start = info->net == EMU_PKT_NET_IPV6 ? info->ip_off : info->grh_off;
		n = info->bth_off + EMU_BTH_LEN - start;
		memcpy(ps, frame + start, n);
		/* TClass and FlowLabel share bytes 0-3 with the 4-bit version; HopLmt is byte 7. */
		ps[0] |= 0x0f;
		memset(ps + 1, 0xff, 3);
		ps[7] = 0xff;
		break;
	case EMU_PKT_NET_IPV4:
		crc = emu_crc32(crc, ones, sizeof(ones));
		start = info->ip_off;
		n = info->bth_off + EMU_BTH_LEN - start;
		memcpy(ps, frame + start, n);
		ps[1] = 0xff;		  /* TOS */
		ps[8] = 0xff;		  /* TTL */
		memset(ps + 10, 0xff, 2); /* header checksum */
		break;
	default:
		return 0;
	}
	if (info->udp_off != EMU_PKT_NO_HDR)
		memset(ps + (info->udp_off - start) + 6, 0xff, 2); /* UDP checksum */
	ps[n - EMU_BTH_LEN + 4] = 0xff; /* BTH resv8a */
	crc = emu_crc32(crc, ps, n);
	crc = emu_crc32(crc, frame + info->bth_off + EMU_BTH_LEN,
			info->icrc_off - (info->bth_off + EMU_BTH_LEN));
	return ~crc;
}
