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
 * The ICRC covers every payload byte of every packet, twice in loopback (built, then checked on
 * receipt), so it is slice-by-8: eight 256-entry tables built once (pthread_once) from the
 * reflected polynomial, eight bytes per step (about 10x the nibble table's speed; the nibble
 * table made up 87% of a 1 MiB RDMA WRITE's time, bench/README). The VCRC (IB link layer
 * only) is slice-by-4 from tables built with them (a nibble table was 15% of an SA query
 * round trip, a byte table still 40%). The tests check both against bitwise implementations.
 */
#include <pthread.h>
#include <string.h>

#include "emu/pkt.h"

static uint32_t crc32_tab[8][256];
static uint16_t crc16_tab[4][256]; /* the VCRC, slice-by-4 (reflected 0x100B = 0xd008) */
static pthread_once_t crc32_once = PTHREAD_ONCE_INIT;

static void crc32_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (c & 1 ? 0xedb88320u : 0);
		crc32_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc32_tab[t][i] = (crc32_tab[t - 1][i] >> 8) ^
					  crc32_tab[0][crc32_tab[t - 1][i] & 0xff];
	for (uint32_t i = 0; i < 256; i++) {
		uint16_t c = (uint16_t)i;

		for (int k = 0; k < 8; k++)
			c = (uint16_t)((c >> 1) ^ (c & 1 ? 0xd008u : 0));
		crc16_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 4; t++)
			crc16_tab[t][i] = (uint16_t)((crc16_tab[t - 1][i] >> 8) ^
						     crc16_tab[0][crc16_tab[t - 1][i] & 0xff]);
}

uint32_t emu_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	const uint32_t(*t)[256] = crc32_tab;

	pthread_once(&crc32_once, crc32_init);
	/* The word is assembled from bytes, so this holds on any byte order. */
	for (; n >= 8; n -= 8, b += 8) {
		crc ^= (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
		       (uint32_t)b[3] << 24;
		crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^ t[5][(crc >> 16) & 0xff] ^
		      t[4][crc >> 24] ^ t[3][b[4]] ^ t[2][b[5]] ^ t[1][b[6]] ^ t[0][b[7]];
	}
	while (n--)
		crc = (crc >> 8) ^ t[0][(crc ^ *b++) & 0xff];
	return crc;
}

uint16_t emu_vcrc16(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint16_t crc = 0xffff;

	pthread_once(&crc32_once, crc32_init);
	/* four bytes a step: the two that meet the register, and two that only shift in */
	for (; n >= 4; n -= 4, b += 4) {
		uint16_t x = (uint16_t)(crc ^ (b[0] | b[1] << 8));

		crc = (uint16_t)(crc16_tab[3][x & 0xff] ^ crc16_tab[2][x >> 8] ^ crc16_tab[1][b[2]] ^
				 crc16_tab[0][b[3]]);
	}
	while (n--)
		crc = (uint16_t)((crc >> 8) ^ crc16_tab[0][(crc ^ *b++) & 0xff]);
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
