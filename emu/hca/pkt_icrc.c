/* The packet CRCs (IBTA vol. 1 7.8; RoCEv2 annex A17.4.1).
 *
 * ICRC: CRC-32 with the 802.3 polynomial, reflected, preset to ones, complemented, sent least
 * significant byte first (as rxe stores ~crc32_le, and as a ConnectX-4 Lx does: the known-answer
 * test in emu/hca/tests/test_pkt.c is a CNP it sent). It covers the packet from the network header
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
 *
 * On x86-64 CPUs with PCLMULQDQ the CRC-32 of 64 bytes and more folds 16 bytes a step with
 * carry-less multiplies (the method of Intel's "Fast CRC Computation for Generic Polynomials
 * Using PCLMULQDQ", as Linux's crc32-pclmul does for crc32_le): slice-by-8 was still half of a
 * receiving process's time at 64 KiB messages between two processes (docs/daemon.md). With
 * VPCLMULQDQ and AVX-512 the same folds run on four 128-bit lanes a register, 256 bytes a
 * step (twice the 128-bit loop's speed on the packet path at 1 KiB packets). The constants are
 * x^n mod P for the folding distances, computed by crc32_xpow_mod below rather than written
 * in, and the table path stays for short buffers, the ends, and other CPUs.
 *
 * The ICRC is one pass: the masked headers (the pseudo-header below), topped up to 64 bytes
 * with what follows the BTH, are the folding register's first value, and the rest of the
 * packet is folded in place; a separate table pass over the ~48 header bytes cost a quarter
 * of the CRC time of a 1 KiB packet.
 */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_CLMUL_CODE 1
#endif

#include "emu/hca/pkt.h"

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

uint32_t emu_crc32_slice8(uint32_t crc, const void *p, size_t n)
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

#ifdef HAVE_CLMUL_CODE
/* What the CPU has: 0 tables only, 1 PCLMULQDQ, 2 VPCLMULQDQ on 512-bit registers too. */
static int crc32_cpu_level, crc32_level;

/* The fold constant for a distance of n bits: x^n mod P(x), bit-reflected, shifted left by one
 * (the form reflected carry-less products need); n = 544, 480, 160, 96, 64 give Linux's
 * R1..R5 of crc32-pclmul_asm.S. */
static uint64_t crc32_xpow_mod(unsigned n)
{
	uint32_t r = 0x80000000u; /* x^0 in reflected order */

	for (unsigned i = 0; i < n; i++)
		r = (r >> 1) ^ (r & 1 ? 0xedb88320u : 0);
	return (uint64_t)r << 1;
}

/* floor(x^64 / P(x)) (33 bits), bit-reflected: Barrett's constant. */
static uint64_t crc32_barrett_mu(void)
{
	const uint64_t poly = 0x104c11db7ull; /* P in normal bit order, with x^32 */
	uint64_t rem = 0, q = 0, r = 0;

	/* long division of x^64 = 1 followed by 64 zero bits, one quotient bit per step */
	for (int i = 64; i >= 0; i--) {
		rem = (rem << 1) | (i == 64);
		if (rem & (1ull << 32)) {
			rem ^= poly;
			q |= 1ull << i;
		}
	}
	for (int b = 0; b <= 32; b++)
		if (q & (1ull << b))
			r |= 1ull << (32 - b);
	return r;
}

static uint64_t k_fold16[2], k_fold4[2], k_fold1[2], k_64to32, k_mu, k_poly;

static void crc32_clmul_init(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("pclmul") || !__builtin_cpu_supports("sse4.1"))
		return;
	/* fold 2048 bits ahead (four 512-bit registers), 512 bits (four 128-bit ones, or one
	 * 512-bit), 128 bits: x^(d+32) and x^(d-32) for each distance d */
	k_fold16[0] = crc32_xpow_mod(16 * 128 + 32);
	k_fold16[1] = crc32_xpow_mod(16 * 128 - 32);
	k_fold4[0] = crc32_xpow_mod(4 * 128 + 32);
	k_fold4[1] = crc32_xpow_mod(4 * 128 - 32);
	k_fold1[0] = crc32_xpow_mod(128 + 32);
	k_fold1[1] = crc32_xpow_mod(128 - 32);
	k_64to32 = crc32_xpow_mod(64);
	k_mu = crc32_barrett_mu();
	k_poly = 0x1db710641ull; /* P reflected, with x^32 */
	crc32_cpu_level = 1;
	if (__builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx512f"))
		crc32_cpu_level = 2;
	crc32_level = crc32_cpu_level;
}

__attribute__((target("pclmul,sse4.1"))) static inline __m128i
fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)), next);
}

/* The 128-bit remainder x0 down to the 32-bit CRC register. */
__attribute__((target("pclmul,sse4.1"))) static inline uint32_t crc32_reduce(__m128i x0)
{
	const __m128i k1 = _mm_set_epi64x((long long)k_fold1[1], (long long)k_fold1[0]);
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);

	/* 128 -> 64 bits: the low half times the 96-bit distance's constant, plus the high half */
	x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k1, 0x10), _mm_srli_si128(x0, 8));
	/* 64 -> 32 bits */
	__m128i k = _mm_set_epi64x(0, (long long)k_64to32);
	x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k, 0x00),
			   _mm_srli_si128(x0, 4));
	/* Barrett reduction to the 32-bit remainder */
	k = _mm_set_epi64x((long long)k_mu, (long long)k_poly);
	__m128i t = _mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k, 0x10);
	t = _mm_clmulepi64_si128(_mm_and_si128(t, mask32), k, 0x00);
	return (uint32_t)_mm_extract_epi32(_mm_xor_si128(t, x0), 1);
}

/* The CRC of the 64 bytes at head followed by the n bytes at b (n % 16 == 0): the register
 * starts as head's four 16-byte lanes, so a packet's masked headers, copied aside, and its
 * payload, in place, are one stream. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t
crc32_clmul(uint32_t crc, const uint8_t *head, const uint8_t *b, size_t n)
{
	const __m128i k4 = _mm_set_epi64x((long long)k_fold4[1], (long long)k_fold4[0]);
	const __m128i k1 = _mm_set_epi64x((long long)k_fold1[1], (long long)k_fold1[0]);
	__m128i x0 = _mm_loadu_si128((const __m128i *)head);
	__m128i x1 = _mm_loadu_si128((const __m128i *)(head + 16));
	__m128i x2 = _mm_loadu_si128((const __m128i *)(head + 32));
	__m128i x3 = _mm_loadu_si128((const __m128i *)(head + 48));

	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc));
	for (; n >= 64; b += 64, n -= 64) {
		x0 = fold(x0, k4, _mm_loadu_si128((const __m128i *)b));
		x1 = fold(x1, k4, _mm_loadu_si128((const __m128i *)(b + 16)));
		x2 = fold(x2, k4, _mm_loadu_si128((const __m128i *)(b + 32)));
		x3 = fold(x3, k4, _mm_loadu_si128((const __m128i *)(b + 48)));
	}
	x0 = fold(x0, k1, x1);
	x0 = fold(x0, k1, x2);
	x0 = fold(x0, k1, x3);
	for (; n >= 16; b += 16, n -= 16)
		x0 = fold(x0, k1, _mm_loadu_si128((const __m128i *)b));
	return crc32_reduce(x0);
}

#define VPCLMUL_TARGET "avx512f,vpclmulqdq,pclmul,sse4.1"

__attribute__((target(VPCLMUL_TARGET))) static inline __m512i zfold(__m512i x, __m512i k,
								     __m512i next)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

/* The same with four 128-bit lanes a register (VPCLMULQDQ): four registers fold 256 bytes a
 * step, 2048 bits ahead; then one folds 64 bytes a step, then 16-byte lanes as above. */
__attribute__((target(VPCLMUL_TARGET))) static uint32_t
crc32_vpclmul(uint32_t crc, const uint8_t *head, const uint8_t *b, size_t n)
{
	const __m512i k16 = _mm512_broadcast_i32x4(
		_mm_set_epi64x((long long)k_fold16[1], (long long)k_fold16[0]));
	const __m512i k4 = _mm512_broadcast_i32x4(
		_mm_set_epi64x((long long)k_fold4[1], (long long)k_fold4[0]));
	const __m128i k1 = _mm_set_epi64x((long long)k_fold1[1], (long long)k_fold1[0]);
	__m512i z0 = _mm512_xor_si512(_mm512_loadu_si512(head),
				      _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)crc)));
	__m128i x0;

	if (n >= 192) {
		__m512i z1 = _mm512_loadu_si512(b), z2 = _mm512_loadu_si512(b + 64),
			z3 = _mm512_loadu_si512(b + 128);

		for (b += 192, n -= 192; n >= 256; b += 256, n -= 256) {
			z0 = zfold(z0, k16, _mm512_loadu_si512(b));
			z1 = zfold(z1, k16, _mm512_loadu_si512(b + 64));
			z2 = zfold(z2, k16, _mm512_loadu_si512(b + 128));
			z3 = zfold(z3, k16, _mm512_loadu_si512(b + 192));
		}
		z0 = zfold(z0, k4, z1);
		z0 = zfold(z0, k4, z2);
		z0 = zfold(z0, k4, z3);
	}
	for (; n >= 64; b += 64, n -= 64)
		z0 = zfold(z0, k4, _mm512_loadu_si512(b));
	x0 = fold(_mm512_castsi512_si128(z0), k1, _mm512_extracti32x4_epi32(z0, 1));
	x0 = fold(x0, k1, _mm512_extracti32x4_epi32(z0, 2));
	x0 = fold(x0, k1, _mm512_extracti32x4_epi32(z0, 3));
	for (; n >= 16; b += 16, n -= 16)
		x0 = fold(x0, k1, _mm_loadu_si128((const __m128i *)b));
	return crc32_reduce(x0);
}

static pthread_once_t clmul_once = PTHREAD_ONCE_INIT;

int emu_crc32_select(int level)
{
	pthread_once(&clmul_once, crc32_clmul_init);
	crc32_level = level < crc32_cpu_level ? (level < 0 ? 0 : level) : crc32_cpu_level;
	return crc32_level;
}
#else
int emu_crc32_select(int level)
{
	(void)level;
	return 0;
}
#endif

/* The CRC of the 64 bytes at head followed by the n bytes at b. */
static uint32_t crc32_head64(uint32_t crc, const uint8_t *head, const uint8_t *b, size_t n)
{
#ifdef HAVE_CLMUL_CODE
	pthread_once(&clmul_once, crc32_clmul_init);
	if (crc32_level) {
		size_t m = n & ~(size_t)15;

		crc = crc32_level == 2 ? crc32_vpclmul(crc, head, b, m) :
					 crc32_clmul(crc, head, b, m);
		return emu_crc32_slice8(crc, b + m, n - m);
	}
#endif
	return emu_crc32_slice8(emu_crc32_slice8(crc, head, 64), b, n);
}

uint32_t emu_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	if (n >= 64)
		return crc32_head64(crc, b, b + 64, n - 64);
	return emu_crc32_slice8(crc, p, n);
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

/* The masked copy of the headers below and including the BTH: at most a GRH/IPv6+UDP+BTH,
 * after the 8 bytes of ones that stand for a RoCE packet's LRH. */
#define PSEUDO_MAX (EMU_LRH_LEN + EMU_IPV6_LEN + EMU_UDP_LEN + EMU_BTH_LEN)

uint32_t emu_pkt_icrc(const uint8_t *frame, const struct emu_pkt_info *info)
{
	uint8_t buf[PSEUDO_MAX + 64], *ps = buf;
	uint32_t start, n, h, rest;
	const uint8_t *tail;

	switch (info->net) {
	case EMU_PKT_NET_IB_LOCAL:
		start = info->lrh_off;
		n = EMU_LRH_LEN + EMU_BTH_LEN;
		memcpy(ps, frame + start, n);
		ps[0] |= 0xf0; /* VL */
		break;
	case EMU_PKT_NET_IB_GLOBAL:
	case EMU_PKT_NET_IPV6:
		memset(ps, 0xff, EMU_LRH_LEN);
		ps += EMU_LRH_LEN;
		start = info->net == EMU_PKT_NET_IPV6 ? info->ip_off : info->grh_off;
		n = info->bth_off + EMU_BTH_LEN - start;
		memcpy(ps, frame + start, n);
		/* TClass and FlowLabel share bytes 0-3 with the 4-bit version; HopLmt is byte 7. */
		ps[0] |= 0x0f;
		memset(ps + 1, 0xff, 3);
		ps[7] = 0xff;
		break;
	case EMU_PKT_NET_IPV4:
		memset(ps, 0xff, EMU_LRH_LEN);
		ps += EMU_LRH_LEN;
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
	/* one stream: the masked headers, topped up to 64 bytes from what follows the BTH, then
	 * the rest in place */
	h = (uint32_t)(ps - buf) + n;
	tail = frame + info->bth_off + EMU_BTH_LEN;
	rest = info->icrc_off - (info->bth_off + EMU_BTH_LEN);
	if (h <= 64 && rest >= 64 - h) {
		memcpy(buf + h, tail, 64 - h);
		return ~crc32_head64(~0u, buf, tail + (64 - h), rest - (64 - h));
	}
	return ~emu_crc32(emu_crc32(~0u, buf, h), tail, rest);
}
