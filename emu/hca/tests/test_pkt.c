/* The data-path wire formats: the opcode table against IBTA/rxe facts, CRC check values,
 * known-answer ICRCs from packets made elsewhere (a CNP sent by a ConnectX-4 Lx, scapy's RoCE
 * test packet), golden packets whose bytes were written out independently (headers by hand,
 * CRCs with zlib and a bitwise CRC-16), round trips of every opcode on every network layer,
 * truncation at every length, bit flips, and each parse error. */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "emu/hca/pkt.h"

/* ---- golden packets ----
 * gold_ib_send_only: IB, no GRH, RC_SEND_ONLY "abc" (PadCnt 1), SE, VL 1, SL 3, DLID 2,
 *   SLID 1, DestQP 0x11, PSN 100, AckReq.
 * gold_roce4_ack: RoCEv2/IPv4 RC_ACKNOWLEDGE (AETH 0x1f, MSN 7), 192.0.2.65 -> .66, IP ID
 *   0x1234, TTL 64, UDP source port emu_roce_sport_rxe(0x11) = 0xdf94, DestQP 0x11, PSN 100.
 * gold_roce6_write_first: RoCEv2/IPv6 RC_RDMA_WRITE_FIRST, traffic class 0x12, flow label
 *   0x12345, hop limit 64, UDP port 0xc123 (checksum computed), P_Key 0x8001, DestQP
 *   0x123456, PSN 0xabcdef, RETH va 0x0102030405060708 rkey 0xaabbccdd len 0x1000, "hi".
 * gold_ib_grh_ud_imm: IB with GRH (TClass 0x34, flow 0xabcde, HopLmt 7), SL 0, DLID 3,
 *   SLID 4, UD_SEND_ONLY_WITH_IMMEDIATE, Q_Key 0x80010000, SrcQP 1, DestQP 1, PSN 5,
 *   ImmDt de ad be ef, 8 bytes 00..07. */
static const uint8_t gold_ib_send_only[30] = {
	0x10, 0x32, 0x00, 0x02, 0x00, 0x07, 0x00, 0x01, 0x04, 0x90, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x64, 0x61, 0x62, 0x63, 0x00,
	0x38, 0xdf, 0xc4, 0x66, 0xe7, 0xef,
};
static const uint8_t gold_roce4_ack[62] = {
	0x02, 0x00, 0x5e, 0x00, 0x00, 0x42, 0x02, 0x00, 0x5e, 0x00, 0x00, 0x41,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x30, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11,
	0xa4, 0x05, 0xc0, 0x00, 0x02, 0x41, 0xc0, 0x00, 0x02, 0x42, 0xdf, 0x94,
	0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x11, 0x00, 0x00, 0x00, 0x64, 0x1f, 0x00, 0x00, 0x07, 0x64, 0xe7,
	0xf7, 0xba,
};
/* sport 0xdf94 */
static const uint8_t gold_roce6_write_first[98] = {
	0x02, 0x00, 0x5e, 0x00, 0x00, 0x42, 0x02, 0x00, 0x5e, 0x00, 0x00, 0x41,
	0x86, 0xdd, 0x61, 0x21, 0x23, 0x45, 0x00, 0x2c, 0x11, 0x40, 0xfe, 0x80,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x5e, 0xff, 0xfe, 0x00,
	0x00, 0x41, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
	0x5e, 0xff, 0xfe, 0x00, 0x00, 0x42, 0xc1, 0x23, 0x12, 0xb7, 0x00, 0x2c,
	0x10, 0x6b, 0x06, 0x20, 0x80, 0x01, 0x00, 0x12, 0x34, 0x56, 0x00, 0xab,
	0xcd, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xaa, 0xbb,
	0xcc, 0xdd, 0x00, 0x00, 0x10, 0x00, 0x68, 0x69, 0x00, 0x00, 0xd0, 0xf0,
	0x05, 0x9f,
};
static const uint8_t gold_ib_grh_ud_imm[86] = {
	0x00, 0x03, 0x00, 0x03, 0x00, 0x15, 0x00, 0x04, 0x63, 0x4a, 0xbc, 0xde,
	0x00, 0x24, 0x1b, 0x07, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x00, 0x01, 0xfe, 0x80, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x00, 0x00, 0x02,
	0x65, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05,
	0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xa2, 0xc7, 0x39, 0xf9,
	0x4a, 0x58,
};

/* A CNP sent by a ConnectX-4 Lx (published with scapy's RoCE tests, test/contrib/roce.uts):
 * its ICRC 82 fd 00 2a was computed by the NIC. */
static const uint8_t kat_cnp_cx4[74] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00,
	0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x82, 0xfd, 0x00, 0x2a,
};

/* scapy's UC_SEND_ONLY example (same file): IPv4 checksum 0xb4d5, UDP checksum 0xaca2 and ICRC
 * 0x78f353f3 as scapy asserts them; 18 data bytes and PadCnt 2. */
static const uint8_t kat_scapy_uc[78] = {
	0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22, 0x08, 0x00,
	0x45, 0x01, 0x00, 0x40, 0x04, 0x78, 0x40, 0x00, 0x40, 0x11, 0xb4, 0xd5, 0xc0, 0xa8,
	0x00, 0x07, 0xc0, 0xa8, 0x00, 0x07, 0xc0, 0x00, 0x12, 0xb7, 0x00, 0x2c, 0xac, 0xa2,
	0x24, 0x60, 0xff, 0xff, 0x00, 0x00, 0x00, 0xd3, 0x00, 0xcf, 0x17, 0x10,
	'F', '0', 0x81, 0x8b, 0xe2, 0x89, '5', 0xd9, 0x0e, 0x9a, 0x95, 'P', 'T', 0x01, 0xbe,
	0x88, '^', 'P', 0x00, 0x00,
	0x78, 0xf3, 0x53, 0xf3,
};

static void gid_v4(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	gid[12] = a;
	gid[13] = b;
	gid[14] = c;
	gid[15] = d;
}

static void hex_gid(uint8_t *gid, const char *hex)
{
	for (int i = 0; i < 16; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		gid[i] = (uint8_t)v;
	}
}

static const uint8_t mac41[6] = { 0x02, 0x00, 0x5e, 0, 0, 0x41 };
static const uint8_t mac42[6] = { 0x02, 0x00, 0x5e, 0, 0, 0x42 };

static void assert_same_info(const struct emu_pkt_info *a, const struct emu_pkt_info *b);

/* ---- the opcode table ---- */

struct row {
	uint8_t op;
	const char *name;
	uint32_t hdrs; /* extension headers and PAYLOAD */
	uint8_t length;
};

#define R(o, n, h, l) { o, n, h, l }
#define PL EMU_PKT_PAYLOAD
#define RE EMU_PKT_RETH
#define AE EMU_PKT_AETH
#define IM EMU_PKT_IMMDT
#define AT EMU_PKT_ATMETH
#define AK EMU_PKT_ATMACK
#define IE EMU_PKT_IETH
#define DE EMU_PKT_DETH
#define RDE EMU_PKT_RDETH

/* IBTA vol. 1 table 38 / rxe_opcode.c, written out: every opcode, its headers and length. */
static const struct row rows[] = {
	R(0x00, "RC_SEND_FIRST", PL, 12), R(0x01, "RC_SEND_MIDDLE", PL, 12),
	R(0x02, "RC_SEND_LAST", PL, 12), R(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", PL | IM, 16),
	R(0x04, "RC_SEND_ONLY", PL, 12), R(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", PL | IM, 16),
	R(0x06, "RC_RDMA_WRITE_FIRST", PL | RE, 28), R(0x07, "RC_RDMA_WRITE_MIDDLE", PL, 12),
	R(0x08, "RC_RDMA_WRITE_LAST", PL, 12),
	R(0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", PL | IM, 16),
	R(0x0a, "RC_RDMA_WRITE_ONLY", PL | RE, 28),
	R(0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", PL | RE | IM, 32),
	R(0x0c, "RC_RDMA_READ_REQUEST", RE, 28),
	R(0x0d, "RC_RDMA_READ_RESPONSE_FIRST", PL | AE, 16),
	R(0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", PL, 12),
	R(0x0f, "RC_RDMA_READ_RESPONSE_LAST", PL | AE, 16),
	R(0x10, "RC_RDMA_READ_RESPONSE_ONLY", PL | AE, 16), R(0x11, "RC_ACKNOWLEDGE", AE, 16),
	R(0x12, "RC_ATOMIC_ACKNOWLEDGE", AE | AK, 24), R(0x13, "RC_COMPARE_SWAP", AT, 40),
	R(0x14, "RC_FETCH_ADD", AT, 40), R(0x16, "RC_SEND_LAST_WITH_INVALIDATE", PL | IE, 16),
	R(0x17, "RC_SEND_ONLY_WITH_INVALIDATE", PL | IE, 16),

	R(0x20, "UC_SEND_FIRST", PL, 12), R(0x21, "UC_SEND_MIDDLE", PL, 12),
	R(0x22, "UC_SEND_LAST", PL, 12), R(0x23, "UC_SEND_LAST_WITH_IMMEDIATE", PL | IM, 16),
	R(0x24, "UC_SEND_ONLY", PL, 12), R(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", PL | IM, 16),
	R(0x26, "UC_RDMA_WRITE_FIRST", PL | RE, 28), R(0x27, "UC_RDMA_WRITE_MIDDLE", PL, 12),
	R(0x28, "UC_RDMA_WRITE_LAST", PL, 12),
	R(0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", PL | IM, 16),
	R(0x2a, "UC_RDMA_WRITE_ONLY", PL | RE, 28),
	R(0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", PL | RE | IM, 32),

	R(0x40, "RD_SEND_FIRST", PL | RDE | DE, 24), R(0x41, "RD_SEND_MIDDLE", PL | RDE | DE, 24),
	R(0x42, "RD_SEND_LAST", PL | RDE | DE, 24),
	R(0x43, "RD_SEND_LAST_WITH_IMMEDIATE", PL | RDE | DE | IM, 28),
	R(0x44, "RD_SEND_ONLY", PL | RDE | DE, 24),
	R(0x45, "RD_SEND_ONLY_WITH_IMMEDIATE", PL | RDE | DE | IM, 28),
	R(0x46, "RD_RDMA_WRITE_FIRST", PL | RDE | DE | RE, 40),
	R(0x47, "RD_RDMA_WRITE_MIDDLE", PL | RDE | DE, 24),
	R(0x48, "RD_RDMA_WRITE_LAST", PL | RDE | DE, 24),
	R(0x49, "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE", PL | RDE | DE | IM, 28),
	R(0x4a, "RD_RDMA_WRITE_ONLY", PL | RDE | DE | RE, 40),
	R(0x4b, "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE", PL | RDE | DE | RE | IM, 44),
	R(0x4c, "RD_RDMA_READ_REQUEST", RDE | DE | RE, 40),
	R(0x4d, "RD_RDMA_READ_RESPONSE_FIRST", PL | RDE | AE, 20),
	R(0x4e, "RD_RDMA_READ_RESPONSE_MIDDLE", PL | RDE, 16),
	R(0x4f, "RD_RDMA_READ_RESPONSE_LAST", PL | RDE | AE, 20),
	R(0x50, "RD_RDMA_READ_RESPONSE_ONLY", PL | RDE | AE, 20),
	R(0x51, "RD_ACKNOWLEDGE", RDE | AE, 20), R(0x52, "RD_ATOMIC_ACKNOWLEDGE", RDE | AE | AK, 28),
	R(0x53, "RD_COMPARE_SWAP", RDE | DE | AT, 52), R(0x54, "RD_FETCH_ADD", RDE | DE | AT, 52),
	R(0x55, "RD_RESYNC", RDE | DE, 24),

	R(0x64, "UD_SEND_ONLY", PL | DE, 20), R(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", PL | DE | IM, 24),
	R(0x81, "CNP", 0, 28),
};

#define HDR_MASK (EMU_PKT_RDETH | EMU_PKT_DETH | EMU_PKT_RETH | EMU_PKT_ATMETH | EMU_PKT_AETH | \
		  EMU_PKT_ATMACK | EMU_PKT_IMMDT | EMU_PKT_IETH | EMU_PKT_PAYLOAD)

static void test_opcode_rows(void **state)
{
	unsigned valid = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct emu_pkt_opcode_info *oi = &emu_pkt_opcode[rows[i].op];

		assert_non_null(oi->name);
		assert_string_equal(oi->name, rows[i].name);
		assert_string_equal(emu_pkt_opcode_name(rows[i].op), rows[i].name);
		assert_int_equal(oi->mask & HDR_MASK, rows[i].hdrs);
		assert_int_equal(oi->length, rows[i].length);
		assert_int_equal(oi->offset[EMU_PKT_H_PAYLOAD], rows[i].length);
	}
	for (unsigned op = 0; op < 256; op++)
		valid += emu_pkt_opcode_valid((uint8_t)op);
	assert_int_equal(valid, sizeof(rows) / sizeof(rows[0]));
	assert_string_equal(emu_pkt_opcode_name(0x18), "UNKNOWN");
	assert_string_equal(emu_pkt_opcode_name(0x66), "UNKNOWN");
	assert_string_equal(emu_pkt_hdr_name(EMU_PKT_H_ATMACK), "AtomicAckETH");
	assert_string_equal(emu_pkt_hdr_name(EMU_PKT_H_NUM), "?");
}

/* Offsets where several headers meet, as rxe_opcode.c has them. */
static void test_opcode_offsets(void **state)
{
	const struct emu_pkt_opcode_info *t = emu_pkt_opcode;

	(void)state;
	assert_int_equal(t[0x0b].offset[EMU_PKT_H_RETH], 12);
	assert_int_equal(t[0x0b].offset[EMU_PKT_H_IMMDT], 28);
	assert_int_equal(t[0x12].offset[EMU_PKT_H_AETH], 12);
	assert_int_equal(t[0x12].offset[EMU_PKT_H_ATMACK], 16);
	assert_int_equal(t[0x13].offset[EMU_PKT_H_ATMETH], 12);
	assert_int_equal(t[0x17].offset[EMU_PKT_H_IETH], 12);
	assert_int_equal(t[0x4b].offset[EMU_PKT_H_RDETH], 12);
	assert_int_equal(t[0x4b].offset[EMU_PKT_H_DETH], 16);
	assert_int_equal(t[0x4b].offset[EMU_PKT_H_RETH], 24);
	assert_int_equal(t[0x4b].offset[EMU_PKT_H_IMMDT], 40);
	assert_int_equal(t[0x52].offset[EMU_PKT_H_AETH], 16);
	assert_int_equal(t[0x52].offset[EMU_PKT_H_ATMACK], 20);
	assert_int_equal(t[0x53].offset[EMU_PKT_H_ATMETH], 24);
	assert_int_equal(t[0x65].offset[EMU_PKT_H_DETH], 12);
	assert_int_equal(t[0x65].offset[EMU_PKT_H_IMMDT], 20);
	/* absent headers: 0 */
	assert_int_equal(t[0x04].offset[EMU_PKT_H_RETH], 0);
}

/* The packet-kind flags follow from the opcode's name. */
static void test_opcode_flags(void **state)
{
	(void)state;
	for (unsigned op = 0; op < 256; op++) {
		const struct emu_pkt_opcode_info *oi = &emu_pkt_opcode[op];
		uint32_t m = oi->mask;

		if (!oi->name)
			continue;
		const char *n = oi->name;
		bool first = strstr(n, "FIRST"), middle = strstr(n, "MIDDLE"),
		     last = strstr(n, "LAST");

		assert_int_equal(!!(m & EMU_PKT_MIDDLE), middle);
		assert_int_equal(!!(m & EMU_PKT_START), !middle && !last);
		assert_int_equal(!!(m & EMU_PKT_END), !middle && !first);
		assert_int_equal(!!(m & EMU_PKT_RD), (op & 0xe0) == EMU_OP_RD);
		assert_int_equal(!!(m & EMU_PKT_IMMDT), strstr(n, "IMMEDIATE") != NULL);
		assert_int_equal(!!(m & EMU_PKT_IETH), strstr(n, "INVALIDATE") != NULL);
		if (op == EMU_OP_CNP) {
			assert_int_equal(m & (EMU_PKT_REQ | EMU_PKT_RESP), 0);
			continue;
		}
		/* exactly one of requester / responder */
		assert_int_equal(!!(m & EMU_PKT_REQ) + !!(m & EMU_PKT_RESP), 1);
		assert_int_equal(!!(m & EMU_PKT_RESP),
				 strstr(n, "RESPONSE") || strstr(n, "ACKNOWLEDGE"));
		/* a receive WQE is consumed by the first packet of a send or by a write with
		 * immediate's last, and completed by the last */
		if (m & EMU_PKT_RWR)
			assert_true((m & EMU_PKT_SEND && m & EMU_PKT_START) ||
				    (m & EMU_PKT_WRITE && m & EMU_PKT_IMMDT));
		if (m & EMU_PKT_COMP)
			assert_true(m & EMU_PKT_END);
	}
	assert_int_equal(emu_pkt_opcode[0x00].mask & (EMU_PKT_RWR | EMU_PKT_COMP), EMU_PKT_RWR);
	assert_int_equal(emu_pkt_opcode[0x02].mask & (EMU_PKT_RWR | EMU_PKT_COMP), EMU_PKT_COMP);
	assert_int_equal(emu_pkt_opcode[0x08].mask & (EMU_PKT_RWR | EMU_PKT_COMP), 0);
}

/* ---- CRCs ---- */

/* Bitwise CRC-16, the polynomial written MSB-first (0x100B) on bit-reversed data: an
 * independent formulation of the reflected VCRC. */
static uint16_t vcrc_ref(const uint8_t *p, size_t n)
{
	uint16_t crc = 0xffff;

	for (size_t i = 0; i < n; i++) {
		for (int b = 0; b < 8; b++) {
			int in = (p[i] >> b) & 1; /* least significant bit first */
			int top = (crc >> 15) & 1;

			crc = (uint16_t)(crc << 1);
			if (in ^ top)
				crc ^= 0x100b;
		}
	}
	/* the register holds the reflected value */
	uint16_t r = 0;
	for (int b = 0; b < 16; b++)
		if (crc & (1u << b))
			r |= (uint16_t)(1u << (15 - b));
	return (uint16_t)~r;
}

/* Bitwise reflected CRC-32 (802.3), no table: the reference for the slice-by-8 emu_crc32. */
static uint32_t crc32_ref(uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (crc & 1 ? 0xedb88320u : 0);
	}
	return crc;
}

static void test_crc_check_values(void **state)
{
	static const char check[] = "123456789";
	static uint8_t buf[4400];

	(void)state;
	assert_int_equal(~emu_crc32(~0u, check, 9), 0xcbf43926u); /* CRC-32/ISO-HDLC */
	assert_int_equal(emu_vcrc16(check, 9), 0x0a3d);
	assert_int_equal(vcrc_ref((const uint8_t *)check, 9), 0x0a3d);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	for (size_t n = 0; n < 300; n += 37)
		assert_int_equal(emu_vcrc16(buf, n), vcrc_ref(buf, n));
	/* every length 0..150 (the folding path starts at 64, 16 bytes a step) and longer ones
	 * up to more than a 1024-byte payload, at every alignment mod 16, chained in two parts;
	 * both implementations */
	/* ... at every level the CPU has (tables, 128-bit and 512-bit carry-less folds: the
	 * latter from 256 bytes, four registers, to a path MTU 4096 packet and beyond) */
	for (int level = 2; level >= 0; level--) {
		int got = emu_crc32_select(level);

		assert_true(got <= level);
		if (got < level)
			continue;
		for (size_t off = 0; off < 16; off++)
			for (size_t n = 0; off + n <= sizeof(buf); n += n < 150 ? 1 : n < 600 ? 7 : 53) {
				size_t h = n / 3;
				uint32_t want = crc32_ref(~0u, buf + off, n);

				assert_int_equal(emu_crc32(~0u, buf + off, n), want);
				assert_int_equal(emu_crc32_slice8(~0u, buf + off, n), want);
				assert_int_equal(emu_crc32(emu_crc32(0x12345678u, buf + off, h),
							   buf + off + h, n - h),
						 crc32_ref(0x12345678u, buf + off, n));
			}
	}
	emu_crc32_select(2);
	/* the masked-LRH seed rxe starts from */
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	assert_int_equal(emu_crc32(~0u, ones, 8), 0xdebb20e3u);
}

/* ---- known answers ---- */

static void test_kat_cnp_connectx(void **state)
{
	struct emu_pkt_info in;
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET, .tclass = 0xc2, .hop_limit = 0x40,
				  .ip_id = 0x718c, .sport = 0 };
	struct emu_bth bth = { .opcode = EMU_OP_CNP, .pkey = 0xffff, .becn = true,
			       .dqpn = 0x118 };
	uint8_t buf[128];

	(void)state;
	assert_int_equal(emu_pkt_parse(kat_cnp_cx4, sizeof(kat_cnp_cx4), EMU_LL_ETHERNET, &in), 0);
	assert_int_equal(in.net, EMU_PKT_NET_IPV4);
	assert_int_equal(in.opcode, EMU_OP_CNP);
	assert_true(in.bth.becn);
	assert_false(in.bth.fecn);
	assert_int_equal(in.dqpn, 0x118);
	assert_int_equal(in.paylen, 0);
	assert_int_equal(in.icrc_off, 70);
	assert_int_equal(emu_pkt_icrc(kat_cnp_cx4, &in), 0x2a00fd82u);

	/* and the builder makes the same bytes */
	memcpy(a.dmac, kat_cnp_cx4, 6);
	memcpy(a.smac, kat_cnp_cx4 + 6, 6);
	gid_v4(a.sgid, 10, 0, 17, 1);
	gid_v4(a.dgid, 10, 0, 18, 1);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, NULL, NULL, 0, NULL),
			 sizeof(kat_cnp_cx4));
	assert_memory_equal(buf, kat_cnp_cx4, sizeof(kat_cnp_cx4));
}

static void test_kat_scapy_uc(void **state)
{
	struct emu_pkt_info in;
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET, .tclass = 1, .hop_limit = 64,
				  .ip_id = 1144, .sport = 49152 };
	struct emu_bth bth = { .opcode = EMU_OP_UC | EMU_OP_SEND_ONLY, .mig = true, .pkey = 0xffff,
			       .dqpn = 211, .psn = 13571856 };
	uint8_t buf[128];

	(void)state;
	assert_int_equal(emu_pkt_parse(kat_scapy_uc, sizeof(kat_scapy_uc), EMU_LL_ETHERNET, &in), 0);
	assert_int_equal(in.opcode, 0x24);
	assert_int_equal(in.pad, 2);
	assert_int_equal(in.paylen, 18);
	assert_int_equal(in.hdr_off[EMU_PKT_H_PAYLOAD], 54);
	assert_int_equal(in.psn, 13571856);
	assert_true(in.bth.mig);

	memcpy(a.dmac, kat_scapy_uc, 6);
	memcpy(a.smac, kat_scapy_uc + 6, 6);
	gid_v4(a.sgid, 192, 168, 0, 7);
	gid_v4(a.dgid, 192, 168, 0, 7);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, NULL, kat_scapy_uc + 54, 18, NULL),
			 sizeof(kat_scapy_uc));
	/* all equal but the UDP checksum: scapy fills it in, RoCEv2 over IPv4 sends 0 */
	assert_memory_equal(buf, kat_scapy_uc, 40);
	assert_int_equal(buf[40], 0);
	assert_int_equal(buf[41], 0);
	assert_memory_equal(buf + 42, kat_scapy_uc + 42, sizeof(kat_scapy_uc) - 42);
}

/* ---- golden packets ---- */

static void test_golden_ib_send_only(void **state)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_INFINIBAND, .slid = 1, .dlid = 2, .sl = 3,
				  .vl = 1 };
	struct emu_bth bth = { .opcode = 0x04, .se = true, .pkey = 0xffff, .dqpn = 0x11,
			       .ackreq = true, .psn = 100, .padcnt = 3 /* ignored */ };
	struct emu_pkt_info in, out;
	struct emu_lrh lrh;
	uint8_t buf[64];

	(void)state;
	assert_int_equal(emu_pkt_frame_len(&a, 0x04, 3), sizeof(gold_ib_send_only));
	assert_int_equal(emu_pkt_payload_offset(&a, 0x04), 20);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, NULL, "abc", 3, &in),
			 sizeof(gold_ib_send_only));
	assert_memory_equal(buf, gold_ib_send_only, sizeof(gold_ib_send_only));
	assert_int_equal(emu_pkt_parse(buf, sizeof(gold_ib_send_only), EMU_LL_INFINIBAND, &out), 0);
	assert_same_info(&in, &out);
	assert_int_equal(out.net, EMU_PKT_NET_IB_LOCAL);
	assert_int_equal(out.pad, 1);
	assert_int_equal(out.paylen, 3);
	assert_int_equal(out.icrc_off, 24);
	assert_int_equal(out.vcrc_off, 28);
	emu_lrh_get(buf, &lrh);
	assert_int_equal(lrh.vl, 1);
	assert_int_equal(lrh.sl, 3);
	assert_int_equal(lrh.lnh, EMU_LNH_IBA_LOCAL);
	assert_int_equal(lrh.pkt_len, 7);
}

static void test_golden_roce4_ack(void **state)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET, .ip_id = 0x1234,
				  .sport = emu_roce_sport_rxe(0x11) };
	struct emu_bth bth = { .opcode = EMU_OP_ACK, .pkey = 0xffff, .dqpn = 0x11, .psn = 100 };
	struct emu_pkt_ext x = { .aeth = { .syndrome = emu_aeth_ack(EMU_AETH_CREDITS_INVALID),
					   .msn = 7 } };
	struct emu_pkt_info in;
	struct emu_aeth aeth;
	uint8_t buf[64];

	(void)state;
	memcpy(a.smac, mac41, 6);
	memcpy(a.dmac, mac42, 6);
	gid_v4(a.sgid, 192, 0, 2, 65);
	gid_v4(a.dgid, 192, 0, 2, 66);
	assert_int_equal(a.sport, 0xdf94);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, &x, NULL, 0, NULL),
			 sizeof(gold_roce4_ack));
	assert_memory_equal(buf, gold_roce4_ack, sizeof(gold_roce4_ack));
	assert_int_equal(emu_pkt_parse(gold_roce4_ack, sizeof(gold_roce4_ack), EMU_LL_ETHERNET, &in),
			 0);
	assert_int_equal(in.hdr_off[EMU_PKT_H_AETH], 54);
	emu_aeth_get(gold_roce4_ack + in.hdr_off[EMU_PKT_H_AETH], &aeth);
	assert_int_equal(aeth.syndrome, 0x1f);
	assert_int_equal(aeth.msn, 7);
}

static void test_golden_roce6_write_first(void **state)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_ETHERNET, .tclass = 0x12,
				  .flow_label = 0x12345, .sport = 0xc123 };
	struct emu_bth bth = { .opcode = 0x06, .pkey = 0x8001, .dqpn = 0x123456, .psn = 0xabcdef };
	struct emu_pkt_ext x = { .reth = { .va = 0x0102030405060708ull, .rkey = 0xaabbccdd,
					   .dma_len = 0x1000 } };
	struct emu_pkt_info in;
	struct emu_ipv6 ip;
	struct emu_reth reth;
	uint8_t buf[128];
	ssize_t off;

	(void)state;
	memcpy(a.smac, mac41, 6);
	memcpy(a.dmac, mac42, 6);
	hex_gid(a.sgid, "fe8000000000000002005efffe000041");
	hex_gid(a.dgid, "fe8000000000000002005efffe000042");
	/* the two-step build the requester uses: data first, then the headers around it */
	off = emu_pkt_payload_offset(&a, 0x06);
	assert_int_equal(off, 14 + 40 + 8 + 12 + 16);
	memset(buf, 0xee, sizeof(buf));
	memcpy(buf + off, "hi", 2);
	assert_int_equal(emu_pkt_build_finish(buf, sizeof(buf), &a, &bth, &x, 2, &in),
			 sizeof(gold_roce6_write_first));
	assert_memory_equal(buf, gold_roce6_write_first, sizeof(gold_roce6_write_first));
	assert_int_equal(emu_pkt_parse(buf, sizeof(gold_roce6_write_first), EMU_LL_ETHERNET, &in), 0);
	assert_int_equal(in.net, EMU_PKT_NET_IPV6);
	emu_ipv6_get(buf + 14, &ip);
	assert_int_equal(ip.tclass, 0x12);
	assert_int_equal(ip.flow_label, 0x12345);
	assert_int_equal(ip.payload_len, 44);
	assert_int_equal(ip.hop_limit, 64);
	emu_reth_get(buf + in.hdr_off[EMU_PKT_H_RETH], &reth);
	assert_true(reth.va == 0x0102030405060708ull);
	assert_int_equal(reth.rkey, 0xaabbccdd);
	assert_int_equal(reth.dma_len, 0x1000);
	assert_int_equal(in.psn, 0xabcdef);
	assert_int_equal(in.dqpn, 0x123456);

	/* rxe's choice for IPv6: UDP checksum 0, which the parser accepts */
	a.udp6_csum_zero = true;
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, &x, "hi", 2, NULL),
			 sizeof(gold_roce6_write_first));
	assert_int_equal(buf[60], 0);
	assert_int_equal(buf[61], 0);
	assert_memory_equal(buf + 62, gold_roce6_write_first + 62, sizeof(gold_roce6_write_first) - 62);
	assert_int_equal(emu_pkt_parse(buf, sizeof(gold_roce6_write_first), EMU_LL_ETHERNET, NULL), 0);
}

static void test_golden_ib_grh_ud_imm(void **state)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_INFINIBAND, .grh = true, .slid = 4,
				  .dlid = 3, .tclass = 0x34, .flow_label = 0xabcde, .hop_limit = 7 };
	struct emu_bth bth = { .opcode = 0x65, .pkey = 0xffff, .dqpn = 1, .psn = 5 };
	struct emu_pkt_ext x = { .deth = { .qkey = 0x80010000, .sqpn = 1 } };
	static const uint8_t data[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct emu_pkt_info in;
	struct emu_grh grh;
	struct emu_deth deth;
	uint8_t buf[128];

	(void)state;
	memcpy(&x.imm, (const uint8_t[4]){ 0xde, 0xad, 0xbe, 0xef }, 4);
	hex_gid(a.sgid, "fe800000000000000002c90300000001");
	hex_gid(a.dgid, "fe800000000000000002c90300000002");
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, &x, data, 8, NULL),
			 sizeof(gold_ib_grh_ud_imm));
	assert_memory_equal(buf, gold_ib_grh_ud_imm, sizeof(gold_ib_grh_ud_imm));
	assert_int_equal(emu_pkt_parse(buf, sizeof(gold_ib_grh_ud_imm), EMU_LL_INFINIBAND, &in), 0);
	assert_int_equal(in.net, EMU_PKT_NET_IB_GLOBAL);
	assert_int_equal(in.grh_off, 8);
	assert_int_equal(in.bth_off, 48);
	emu_grh_get(buf + 8, &grh);
	assert_int_equal(grh.ipver, 6);
	assert_int_equal(grh.tclass, 0x34);
	assert_int_equal(grh.flow_label, 0xabcde);
	assert_int_equal(grh.paylen, 36);
	assert_int_equal(grh.nxthdr, 0x1b);
	assert_int_equal(grh.hoplmt, 7);
	emu_deth_get(buf + in.hdr_off[EMU_PKT_H_DETH], &deth);
	assert_int_equal(deth.qkey, 0x80010000);
	assert_int_equal(deth.sqpn, 1);
	assert_memory_equal(buf + in.hdr_off[EMU_PKT_H_IMMDT], "\xde\xad\xbe\xef", 4);
	assert_memory_equal(buf + in.hdr_off[EMU_PKT_H_PAYLOAD], data, 8);
}

/* ---- round trips ---- */

/* Field by field: the structs have padding. */
static void assert_same_info(const struct emu_pkt_info *a, const struct emu_pkt_info *b)
{
	assert_int_equal(a->link_layer, b->link_layer);
	assert_int_equal(a->net, b->net);
	assert_int_equal(a->frame_len, b->frame_len);
	assert_int_equal(a->lrh_off, b->lrh_off);
	assert_int_equal(a->grh_off, b->grh_off);
	assert_int_equal(a->eth_off, b->eth_off);
	assert_int_equal(a->ip_off, b->ip_off);
	assert_int_equal(a->udp_off, b->udp_off);
	assert_int_equal(a->bth_off, b->bth_off);
	for (int h = 0; h < EMU_PKT_H_NUM; h++)
		assert_int_equal(a->hdr_off[h], b->hdr_off[h]);
	assert_int_equal(a->icrc_off, b->icrc_off);
	assert_int_equal(a->vcrc_off, b->vcrc_off);
	assert_int_equal(a->paylen, b->paylen);
	assert_int_equal(a->pad, b->pad);
	assert_int_equal(a->opcode, b->opcode);
	assert_int_equal(a->mask, b->mask);
	assert_int_equal(a->psn, b->psn);
	assert_int_equal(a->dqpn, b->dqpn);
	assert_int_equal(a->bth.opcode, b->bth.opcode);
	assert_int_equal(a->bth.se, b->bth.se);
	assert_int_equal(a->bth.mig, b->bth.mig);
	assert_int_equal(a->bth.padcnt, b->bth.padcnt);
	assert_int_equal(a->bth.tver, b->bth.tver);
	assert_int_equal(a->bth.pkey, b->bth.pkey);
	assert_int_equal(a->bth.fecn, b->bth.fecn);
	assert_int_equal(a->bth.becn, b->bth.becn);
	assert_int_equal(a->bth.dqpn, b->bth.dqpn);
	assert_int_equal(a->bth.ackreq, b->bth.ackreq);
	assert_int_equal(a->bth.psn, b->bth.psn);
}

static void addr_for(struct emu_pkt_addr *a, enum emu_pkt_net net)
{
	memset(a, 0, sizeof(*a));
	memcpy(a->smac, mac41, 6);
	memcpy(a->dmac, mac42, 6);
	a->slid = 0x11;
	a->dlid = 0x22;
	a->sl = 5;
	a->vl = 2;
	a->tclass = 0xa8;
	a->flow_label = 0xfedcb;
	a->hop_limit = 33;
	a->ip_id = 77;
	a->sport = 0xc001;
	switch (net) {
	case EMU_PKT_NET_IB_LOCAL:
	case EMU_PKT_NET_IB_GLOBAL:
		a->link_layer = EMU_LL_INFINIBAND;
		a->grh = net == EMU_PKT_NET_IB_GLOBAL;
		hex_gid(a->sgid, "fe800000000000000002c90300000011");
		hex_gid(a->dgid, "fe800000000000000002c90300000022");
		break;
	case EMU_PKT_NET_IPV4:
		a->link_layer = EMU_LL_ETHERNET;
		gid_v4(a->sgid, 198, 51, 100, 1);
		gid_v4(a->dgid, 198, 51, 100, 2);
		break;
	case EMU_PKT_NET_IPV6:
		a->link_layer = EMU_LL_ETHERNET;
		hex_gid(a->sgid, "20010db8000000000000000000000001");
		hex_gid(a->dgid, "20010db8000000000000000000000002");
		break;
	}
}

static void ext_for(struct emu_pkt_ext *x, uint8_t op)
{
	x->reth = (struct emu_reth){ .va = 0x1122334455667700ull + op, .rkey = 0x1000u + op,
				     .dma_len = 0x10000u + op };
	x->aeth = (struct emu_aeth){ .syndrome = (uint8_t)(0x60 + op % 5), .msn = 0xabc000u + op };
	x->atmeth = (struct emu_atmeth){ .va = 0x8000000000000000ull + op, .rkey = 0x2000u + op,
					 .swap_add = 0x0102030405060708ull * op,
					 .compare = ~(uint64_t)op };
	x->atmack = 0xfedcba9876543210ull ^ op;
	x->imm = 0x01020300u + op;
	x->ieth_rkey = 0x3000u + op;
	x->deth = (struct emu_deth){ .qkey = 0x80010000u + op, .sqpn = 0xa00000u + op };
	x->rdeth_een = 0x500000u + op;
}

static void check_round_trip(enum emu_pkt_net net, uint8_t op, size_t plen)
{
	static uint8_t buf[8192], data[4096];
	struct emu_pkt_addr a;
	struct emu_pkt_ext x, y;
	struct emu_bth bth = { .opcode = op, .se = op & 1, .mig = op & 2, .pkey = 0x8000u | op,
			       .fecn = op & 4, .becn = op & 8, .dqpn = 0xfff000u | op,
			       .ackreq = op & 16, .psn = 0xffffffu - op };
	struct emu_pkt_info in, out;
	uint32_t m = emu_pkt_opcode[op].mask;
	ssize_t len;

	for (size_t i = 0; i < plen; i++)
		data[i] = (uint8_t)(i ^ op);
	addr_for(&a, net);
	ext_for(&x, op);
	len = emu_pkt_build(buf, sizeof(buf), &a, &bth, &x, data, plen, &in);
	assert_true(len > 0);
	assert_int_equal(len, emu_pkt_frame_len(&a, op, plen));
	/* planned, the data put in by the caller, finished: the same bytes (over a buffer
	 * that is not zero) */
	{
		static uint8_t two[8192];
		struct emu_pkt_info pl;

		memset(two, 0xee, sizeof(two));
		assert_int_equal(emu_pkt_plan(&a, op, plen, sizeof(two), &pl), len);
		memcpy(two + pl.hdr_off[EMU_PKT_H_PAYLOAD], data, plen);
		assert_int_equal(emu_pkt_finish(two, (size_t)len, &a, &bth, &x, &pl, NULL), len);
		assert_memory_equal(two, buf, (size_t)len);
	}
	assert_int_equal(emu_pkt_parse(buf, (size_t)len, a.link_layer, &out), 0);
	assert_same_info(&in, &out);
	assert_int_equal(out.net, net);
	assert_int_equal(out.opcode, op);
	assert_int_equal(out.paylen, plen);
	assert_int_equal(out.pad, (4 - plen % 4) % 4);
	assert_int_equal((out.icrc_off - out.bth_off) % 4, 0);
	assert_int_equal(out.bth.padcnt, out.pad);
	assert_int_equal(out.bth.se, bth.se);
	assert_int_equal(out.bth.mig, bth.mig);
	assert_int_equal(out.bth.pkey, bth.pkey);
	assert_int_equal(out.bth.fecn, bth.fecn);
	assert_int_equal(out.bth.becn, bth.becn);
	assert_int_equal(out.dqpn, bth.dqpn);
	assert_int_equal(out.bth.ackreq, bth.ackreq);
	assert_int_equal(out.psn, bth.psn);
	assert_memory_equal(buf + out.hdr_off[EMU_PKT_H_PAYLOAD], data, plen);
	for (uint32_t i = 0; i < out.pad; i++)
		assert_int_equal(buf[out.hdr_off[EMU_PKT_H_PAYLOAD] + plen + i], 0);

	memset(&y, 0, sizeof(y));
	if (m & EMU_PKT_RETH)
		emu_reth_get(buf + out.hdr_off[EMU_PKT_H_RETH], &y.reth);
	if (m & EMU_PKT_AETH)
		emu_aeth_get(buf + out.hdr_off[EMU_PKT_H_AETH], &y.aeth);
	if (m & EMU_PKT_ATMETH)
		emu_atmeth_get(buf + out.hdr_off[EMU_PKT_H_ATMETH], &y.atmeth);
	if (m & EMU_PKT_ATMACK)
		y.atmack = emu_be64_get(buf + out.hdr_off[EMU_PKT_H_ATMACK]);
	if (m & EMU_PKT_IMMDT)
		memcpy(&y.imm, buf + out.hdr_off[EMU_PKT_H_IMMDT], 4);
	if (m & EMU_PKT_IETH)
		y.ieth_rkey = emu_be32_get(buf + out.hdr_off[EMU_PKT_H_IETH]);
	if (m & EMU_PKT_DETH)
		emu_deth_get(buf + out.hdr_off[EMU_PKT_H_DETH], &y.deth);
	if (m & EMU_PKT_RDETH)
		y.rdeth_een = emu_be24_get(buf + out.hdr_off[EMU_PKT_H_RDETH] + 1);
	for (int h = 0; h < EMU_PKT_H_PAYLOAD; h++) {
		if (!(m & (1u << h))) {
			assert_int_equal(out.hdr_off[h], EMU_PKT_NO_HDR);
			continue;
		}
		assert_int_equal(out.hdr_off[h], out.bth_off + emu_pkt_opcode[op].offset[h]);
	}
#define SAME(f) assert_true(x.f == y.f)
	if (m & EMU_PKT_RETH) {
		SAME(reth.va);
		SAME(reth.rkey);
		SAME(reth.dma_len);
	}
	if (m & EMU_PKT_AETH) {
		SAME(aeth.syndrome);
		SAME(aeth.msn);
	}
	if (m & EMU_PKT_ATMETH) {
		SAME(atmeth.va);
		SAME(atmeth.rkey);
		SAME(atmeth.swap_add);
		SAME(atmeth.compare);
	}
	if (m & EMU_PKT_ATMACK)
		SAME(atmack);
	if (m & EMU_PKT_IMMDT)
		SAME(imm);
	if (m & EMU_PKT_IETH)
		SAME(ieth_rkey);
	if (m & EMU_PKT_DETH) {
		SAME(deth.qkey);
		SAME(deth.sqpn);
	}
	if (m & EMU_PKT_RDETH)
		SAME(rdeth_een);
#undef SAME
}

/* no_crc (the shared-memory loopback frames): the golden frames with their ICRC (and the IB
 * VCRC) left zero and every other byte the same; such a frame parses only while trusted. */
static void test_no_crc(void **state)
{
	struct emu_pkt_addr ib = { .link_layer = EMU_LL_INFINIBAND, .slid = 1, .dlid = 2, .sl = 3,
				   .vl = 1, .no_crc = true };
	struct emu_bth bth = { .opcode = 0x04, .se = true, .pkey = 0xffff, .dqpn = 0x11,
			       .ackreq = true, .psn = 100 };
	struct emu_pkt_addr eth = { .link_layer = EMU_LL_ETHERNET, .ip_id = 0x1234,
				    .sport = emu_roce_sport_rxe(0x11), .no_crc = true };
	struct emu_bth ack = { .opcode = EMU_OP_ACK, .pkey = 0xffff, .dqpn = 0x11, .psn = 100 };
	struct emu_pkt_ext x = { .aeth = { .syndrome = emu_aeth_ack(EMU_AETH_CREDITS_INVALID),
					   .msn = 7 } };
	struct emu_pkt_info in;
	uint8_t buf[64], want[64];
	size_t n;

	(void)state;
	n = sizeof(gold_ib_send_only);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &ib, &bth, NULL, "abc", 3, &in), n);
	memcpy(want, gold_ib_send_only, n);
	memset(want + 24, 0, 4); /* ICRC */
	memset(want + 28, 0, 2); /* VCRC */
	assert_memory_equal(buf, want, n);
	assert_int_equal(emu_pkt_parse(buf, n, EMU_LL_INFINIBAND, &in), -EMU_PKT_EVCRC);
	emu_pkt_trust(true);
	assert_int_equal(emu_pkt_parse(buf, n, EMU_LL_INFINIBAND, &in), 0);
	emu_pkt_trust(false);
	assert_int_equal(in.paylen, 3);

	memcpy(eth.smac, mac41, 6);
	memcpy(eth.dmac, mac42, 6);
	gid_v4(eth.sgid, 192, 0, 2, 65);
	gid_v4(eth.dgid, 192, 0, 2, 66);
	n = sizeof(gold_roce4_ack);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &eth, &ack, &x, NULL, 0, &in), n);
	memcpy(want, gold_roce4_ack, n);
	memset(want + in.icrc_off, 0, 4);
	memset(want + in.ip_off + 10, 0, 2); /* the IPv4 header checksum */
	assert_memory_equal(buf, want, n);
	assert_int_equal(emu_pkt_parse(buf, n, EMU_LL_ETHERNET, &in), -EMU_PKT_ECSUM);
	emu_pkt_trust(true);
	assert_int_equal(emu_pkt_parse(buf, n, EMU_LL_ETHERNET, &in), 0);
	emu_pkt_trust(false);
}

static void test_round_trip_all(void **state)
{
	static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 255, 1024, 4096 };
	unsigned n = 0;

	(void)state;
	for (int net = EMU_PKT_NET_IB_LOCAL; net <= EMU_PKT_NET_IPV6; net++)
		for (unsigned op = 0; op < 256; op++) {
			if (!emu_pkt_opcode_valid((uint8_t)op))
				continue;
			for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
				if (lens[i] && !(emu_pkt_opcode[op].mask & EMU_PKT_PAYLOAD))
					break;
				check_round_trip((enum emu_pkt_net)net, (uint8_t)op, lens[i]);
				n++;
			}
		}
	/* 60 opcodes x 4 network layers; 48 carry data (11 lengths each), 12 do not */
	assert_int_equal(n, 4 * (12 + 48 * 11));
}

/* ---- errors ---- */

static size_t build_for(uint8_t *buf, size_t cap, enum emu_pkt_net net, uint8_t op, size_t plen,
			struct emu_pkt_info *in)
{
	static const uint8_t data[64] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct emu_pkt_addr a;
	struct emu_pkt_ext x;
	struct emu_bth bth = { .opcode = op, .pkey = 0xffff, .dqpn = 0x42, .psn = 9 };
	ssize_t len;

	addr_for(&a, net);
	ext_for(&x, op);
	len = emu_pkt_build(buf, cap, &a, &bth, &x, data, plen, in);
	assert_true(len > 0);
	return (size_t)len;
}

static int ll_of(enum emu_pkt_net net)
{
	return net <= EMU_PKT_NET_IB_GLOBAL ? EMU_LL_INFINIBAND : EMU_LL_ETHERNET;
}

static void test_truncation(void **state)
{
	static const struct {
		uint8_t op;
		size_t plen;
	} cases[] = { { 0x04, 0 }, { 0x04, 5 }, { 0x11, 0 }, { 0x13, 0 }, { 0x65, 3 }, { 0x81, 0 } };
	uint8_t buf[256];
	struct emu_pkt_info in;

	(void)state;
	for (int net = EMU_PKT_NET_IB_LOCAL; net <= EMU_PKT_NET_IPV6; net++)
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			size_t len = build_for(buf, sizeof(buf), (enum emu_pkt_net)net, cases[c].op,
					       cases[c].plen, &in);

			for (size_t l = 0; l < len; l++) {
				int ret = emu_pkt_parse(buf, l, ll_of((enum emu_pkt_net)net), NULL);

				/* cutting into the Ethernet padding to 60 loses nothing */
				if (l >= in.frame_len)
					assert_int_equal(ret, 0);
				else
					assert_int_equal(ret, -EMU_PKT_ETRUNC);
			}
			assert_int_equal(emu_pkt_parse(buf, len, ll_of((enum emu_pkt_net)net), NULL), 0);
		}
	/* the padded case was there: RC_SEND_ONLY with no data over IPv4 is 58 bytes + 2 */
	assert_int_equal(build_for(buf, sizeof(buf), EMU_PKT_NET_IPV4, 0x04, 0, &in), 60);
	assert_int_equal(in.frame_len, 58);
	assert_int_equal(buf[58], 0);
	assert_int_equal(buf[59], 0);
}

static void flip(uint8_t *buf, size_t bit)
{
	buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* IB: the VCRC covers every byte, so every single-bit error is caught. */
static void test_bit_flips_ib(void **state)
{
	uint8_t buf[256];
	struct emu_pkt_info in;

	(void)state;
	for (int net = EMU_PKT_NET_IB_LOCAL; net <= EMU_PKT_NET_IB_GLOBAL; net++) {
		size_t len = build_for(buf, sizeof(buf), (enum emu_pkt_net)net, 0x0a, 9, &in);

		for (size_t bit = 0; bit < len * 8; bit++) {
			flip(buf, bit);
			assert_int_not_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), 0);
			flip(buf, bit);
		}
	}
}

static void fix_vcrc(uint8_t *buf, const struct emu_pkt_info *in)
{
	uint16_t v = emu_vcrc16(buf, in->vcrc_off);

	buf[in->vcrc_off] = (uint8_t)v;
	buf[in->vcrc_off + 1] = (uint8_t)(v >> 8);
}

/* Which bits the ICRC leaves out (IBTA 7.8.1, A17.4.1), and that it covers every other bit
 * from the network header to the end of the pad: flip each bit and see whether the ICRC moves. */
static void test_icrc_coverage(void **state)
{
	uint8_t buf[256];
	struct emu_pkt_info in;
	unsigned variant_bits[4] = { 0 };

	(void)state;
	for (int net = EMU_PKT_NET_IB_LOCAL; net <= EMU_PKT_NET_IPV6; net++) {
		build_for(buf, sizeof(buf), (enum emu_pkt_net)net, 0x0a, 9, &in);
		uint32_t from = in.ip_off != EMU_PKT_NO_HDR ? in.ip_off : 0;
		uint32_t icrc = emu_pkt_icrc(buf, &in), ip = in.ip_off, udp = in.udp_off;

		for (size_t bit = from * 8; bit < (size_t)in.icrc_off * 8; bit++) {
			size_t byte = bit / 8, b = bit % 8; /* as flip() numbers them: LSB 0 */
			bool variant = byte == in.bth_off + 4; /* BTH resv8a */

			switch (net) {
			case EMU_PKT_NET_IB_LOCAL:
				variant |= byte == 0 && b >= 4; /* LRH VL */
				break;
			case EMU_PKT_NET_IB_GLOBAL:
				variant |= byte < 8 ||			    /* the whole LRH */
					   (byte == 8 && b < 4) ||	    /* TClass high nibble */
					   (byte >= 9 && byte <= 11) ||	    /* TClass, FlowLabel */
					   byte == 15;			    /* HopLmt */
				break;
			case EMU_PKT_NET_IPV4:
				variant |= byte == ip + 1 || byte == ip + 8 || /* TOS, TTL */
					   byte == ip + 10 || byte == ip + 11 || /* checksum */
					   byte == udp + 6 || byte == udp + 7;
				break;
			case EMU_PKT_NET_IPV6:
				variant |= (byte == ip && b < 4) || (byte >= ip + 1 && byte <= ip + 3) ||
					   byte == ip + 7 || byte == udp + 6 || byte == udp + 7;
				break;
			}
			flip(buf, bit);
			if (variant)
				assert_int_equal(emu_pkt_icrc(buf, &in), icrc);
			else
				assert_int_not_equal(emu_pkt_icrc(buf, &in), icrc);
			flip(buf, bit);
			variant_bits[net] += variant;
		}
	}
	/* 4 + 8; 64 + 8 + 20 + 8 + 8; 8 + 8 + 16 + 16 + 8; 8 + 20 + 8 + 16 + 8 */
	assert_int_equal(variant_bits[EMU_PKT_NET_IB_LOCAL], 12);
	assert_int_equal(variant_bits[EMU_PKT_NET_IB_GLOBAL], 108);
	assert_int_equal(variant_bits[EMU_PKT_NET_IPV4], 56);
	assert_int_equal(variant_bits[EMU_PKT_NET_IPV6], 60);
}

/* The ICRC as one folding pass (masked headers topped up from the payload) against the
 * bitwise CRC of the masked frame, built independently here from IBTA 7.8.1 / A17.4.1, on
 * every network layer, at lengths around the 64-byte start of the fold and up to a path MTU
 * 4096 packet, at every CRC level the CPU has. */
static void test_icrc_reference(void **state)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const size_t lens[] = { 0, 1, 3, 4, 8, 12, 13, 16, 17, 20, 28, 32, 40, 44, 48,
				       60, 64, 100, 255, 1024, 1500, 4096 };
	static const uint8_t ops[] = { 0x04, 0x06, 0x07, 0x0b, 0x11, 0x64 };
	static uint8_t data[4096], buf[4400], m[4400];
	struct emu_pkt_info in;
	int checked = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
	for (int level = 2; level >= 0; level--) {
		if (emu_crc32_select(level) < level)
			continue;
		for (int net = EMU_PKT_NET_IB_LOCAL; net <= EMU_PKT_NET_IPV6; net++)
			for (size_t o = 0; o < sizeof(ops); o++)
				for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
					struct emu_pkt_addr a;
					struct emu_pkt_ext x;
					struct emu_bth bth = { .opcode = ops[o], .pkey = 0xffff,
							       .dqpn = 0x42, .psn = 9 };
					size_t plen = emu_pkt_opcode[ops[o]].mask & EMU_PKT_PAYLOAD ?
							      lens[l] : 0;
					uint32_t ip, udp, from, want;

					addr_for(&a, (enum emu_pkt_net)net);
					ext_for(&x, ops[o]);
					assert_true(emu_pkt_build(buf, sizeof(buf), &a, &bth, &x, data,
								  plen, &in) > 0);
					memcpy(m, buf, in.icrc_off);
					ip = in.ip_off;
					udp = in.udp_off;
					m[in.bth_off + 4] = 0xff; /* resv8a */
					switch (net) {
					case EMU_PKT_NET_IB_LOCAL:
						m[0] |= 0xf0;
						break;
					case EMU_PKT_NET_IB_GLOBAL:
						memset(m, 0xff, 8);
						m[8] |= 0x0f;
						memset(m + 9, 0xff, 3);
						m[15] = 0xff;
						break;
					case EMU_PKT_NET_IPV4:
						m[ip + 1] = m[ip + 8] = m[ip + 10] = m[ip + 11] = 0xff;
						m[udp + 6] = m[udp + 7] = 0xff;
						break;
					case EMU_PKT_NET_IPV6:
						m[ip] |= 0x0f;
						memset(m + ip + 1, 0xff, 3);
						m[ip + 7] = m[udp + 6] = m[udp + 7] = 0xff;
						break;
					}
					from = ip != EMU_PKT_NO_HDR ? ip : 0;
					want = ip != EMU_PKT_NO_HDR ? crc32_ref(~0u, ones, 8) : ~0u;
					want = ~crc32_ref(want, m + from, in.icrc_off - from);
					assert_int_equal(emu_pkt_icrc(buf, &in), want);
					/* and what the builder wrote, least significant byte first */
					assert_int_equal(buf[in.icrc_off] | buf[in.icrc_off + 1] << 8 |
								 buf[in.icrc_off + 2] << 16 |
								 (uint32_t)buf[in.icrc_off + 3] << 24,
							 want);
					checked++;
				}
	}
	emu_crc32_select(2);
	assert_true(checked >= 4 * 6 * 22);
}

/* Bits the ICRC leaves out are still caught on their way: a flipped FECN goes through (a switch
 * may set it), a payload bit is a bad ICRC over IPv4 and a bad UDP checksum over IPv6. */
static void test_flips_roce(void **state)
{
	uint8_t buf[256];
	struct emu_pkt_info in;
	size_t len;

	(void)state;
	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IPV4, 0x0a, 9, &in);
	buf[in.bth_off + 4] |= 0x80;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, &in), 0);
	assert_true(in.bth.fecn);
	for (size_t bit = in.hdr_off[EMU_PKT_H_PAYLOAD] * 8; bit < (in.icrc_off + 4) * 8; bit++) {
		flip(buf, bit);
		assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EICRC);
		flip(buf, bit);
	}
	for (size_t bit = in.ip_off * 8; bit < in.udp_off * 8; bit++) {
		flip(buf, bit);
		assert_int_not_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), 0);
		flip(buf, bit);
	}
	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IPV6, 0x0a, 9, &in);
	for (size_t bit = in.hdr_off[EMU_PKT_H_PAYLOAD] * 8; bit < (in.icrc_off + 4) * 8; bit++) {
		flip(buf, bit);
		assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ECSUM);
		flip(buf, bit);
	}
}

static void test_parse_errors(void **state)
{
	uint8_t buf[256];
	struct emu_pkt_info in;
	size_t len;

	(void)state;
	/* IPv4 */
	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IPV4, 0x04, 8, &in);
	buf[in.icrc_off] ^= 1;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EICRC);
	buf[in.icrc_off] ^= 1;
	buf[in.ip_off + 10] ^= 0x80; /* header checksum */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ECSUM);
	buf[in.ip_off + 10] ^= 0x80;
	buf[in.ip_off] = 0x65; /* version 6 in an IPv4 frame */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EVERSION);
	buf[in.ip_off] = 0x44; /* IHL 4 */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EVERSION);
	buf[in.ip_off] = 0x46; /* options */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ENOTIBA);
	buf[in.ip_off] = 0x45;
	buf[in.ip_off + 9] = 6; /* TCP */
	emu_ipv4_csum_fill(buf + in.ip_off);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ENOTIBA);
	buf[in.ip_off + 9] = 17;
	buf[in.ip_off + 6] |= 0x20; /* MF: a fragment */
	emu_ipv4_csum_fill(buf + in.ip_off);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ENOTIBA);
	buf[in.ip_off + 6] &= (uint8_t)~0x20;
	emu_ipv4_csum_fill(buf + in.ip_off);
	buf[12] = 0x89; /* ethertype 0x8915: RoCE v1 */
	buf[13] = 0x15;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ENOTIBA);
	buf[12] = 0x08;
	buf[13] = 0x00;
	emu_be16_put(buf + in.udp_off + 2, 4790);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ENOTIBA);
	emu_be16_put(buf + in.udp_off + 2, 4791);
	emu_be16_put(buf + in.udp_off + 4, (uint16_t)(len - in.udp_off - 4)); /* UDP length */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ELEN);
	emu_be16_put(buf + in.udp_off + 4, (uint16_t)(len - in.udp_off));
	emu_be16_put(buf + in.udp_off + 6, 0x1234); /* a wrong non-zero UDP checksum */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ECSUM);
	emu_be16_put(buf + in.udp_off + 6, 0);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), 0);
	/* trailing bytes past the IP datagram beyond the 60-byte padding */
	buf[len] = 0;
	assert_int_equal(emu_pkt_parse(buf, len + 1, EMU_LL_ETHERNET, NULL), -EMU_PKT_ELEN);

	/* BTH: TVer, opcode, PadCnt, data on an opcode without, transport length % 4 */
	buf[in.bth_off + 1] |= 1;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EVERSION);
	buf[in.bth_off + 1] &= (uint8_t)~1;
	buf[in.bth_off] = 0x18;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EOPCODE);
	buf[in.bth_off] = EMU_OP_ACK; /* 8 data bytes after an AETH-sized header: 4 too many */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ELEN);
	buf[in.bth_off] = EMU_OP_CMP_SWAP; /* 28-byte AtomicETH, only 8 bytes there */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ELEN);
	buf[in.bth_off] = 0x04;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), 0);

	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IPV4, 0x11, 0, &in); /* ACK: no data */
	buf[in.bth_off + 1] |= 0x10; /* PadCnt 1 */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EPAD);
	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IPV4, 0x04, 1, &in); /* 1 byte, PadCnt 3 */
	buf[in.bth_off] = 0x03; /* SEND_LAST_WITH_IMMEDIATE: ImmDt eats the 4 bytes */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EPAD);
	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IPV4, 0x04, 8, &in);
	buf[len] = 0; /* one more byte in IP and UDP: 4791 payload not a multiple of 4 */
	emu_be16_put(buf + in.ip_off + 2, (uint16_t)(len + 1 - in.ip_off));
	emu_ipv4_csum_fill(buf + in.ip_off);
	emu_be16_put(buf + in.udp_off + 4, (uint16_t)(len + 1 - in.udp_off));
	assert_int_equal(emu_pkt_parse(buf, len + 1, EMU_LL_ETHERNET, NULL), -EMU_PKT_EPAD);

	/* IPv6 */
	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IPV6, 0x04, 8, &in);
	buf[in.icrc_off] ^= 1; /* the UDP checksum covers the ICRC: caught there first */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ECSUM);
	buf[in.icrc_off] ^= 1;
	buf[in.ip_off] = 0x40;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_EVERSION);
	buf[in.ip_off] = 0x6a;
	buf[in.ip_off + 6] = 0; /* hop-by-hop options */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_ETHERNET, NULL), -EMU_PKT_ENOTIBA);

	/* IB */
	len = build_for(buf, sizeof(buf), EMU_PKT_NET_IB_GLOBAL, 0x04, 8, &in);
	buf[in.icrc_off] ^= 1;
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_EVCRC);
	fix_vcrc(buf, &in);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_EICRC);
	buf[in.icrc_off] ^= 1;
	fix_vcrc(buf, &in);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), 0);
	buf[len] = 0;
	assert_int_equal(emu_pkt_parse(buf, len + 1, EMU_LL_INFINIBAND, NULL), -EMU_PKT_ELEN);
	buf[0] |= 1; /* LVer */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_EVERSION);
	buf[0] &= (uint8_t)~1;
	buf[1] &= (uint8_t)~3; /* LNH raw */
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_ENOTIBA);
	buf[1] |= 3;
	buf[8] = 0x40 | (buf[8] & 0xf); /* GRH IPVer 4 */
	fix_vcrc(buf, &in);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_EVERSION);
	buf[8] = 0x60 | (buf[8] & 0xf);
	buf[14] = 0x11; /* NxtHdr */
	fix_vcrc(buf, &in);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_ENOTIBA);
	buf[14] = 0x1b;
	buf[13] ^= 4; /* PayLen */
	fix_vcrc(buf, &in);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), -EMU_PKT_ELEN);
	buf[13] ^= 4;
	fix_vcrc(buf, &in);
	assert_int_equal(emu_pkt_parse(buf, len, EMU_LL_INFINIBAND, NULL), 0);

	/* arguments */
	assert_int_equal(emu_pkt_parse(buf, len, 7, &in), -EINVAL);
	assert_int_equal(emu_pkt_parse(NULL, 4, EMU_LL_INFINIBAND, &in), -EINVAL);
	assert_int_equal(emu_pkt_parse(NULL, 0, EMU_LL_INFINIBAND, &in), -EMU_PKT_ETRUNC);
}

static void test_build_errors(void **state)
{
	uint8_t buf[64];
	struct emu_pkt_addr a;
	struct emu_bth bth = { .opcode = 0x04 };
	static uint8_t big[9000];

	(void)state;
	addr_for(&a, EMU_PKT_NET_IB_LOCAL);
	/* LRH 8 + BTH 12 + 1 + pad 3 + ICRC 4 + VCRC 2 */
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, NULL, "x", 1, NULL), 30);
	assert_int_equal(emu_pkt_build(buf, 29, &a, &bth, NULL, "x", 1, NULL), -EMSGSIZE);
	assert_int_equal(emu_pkt_build_finish(buf, 29, &a, &bth, NULL, 1, NULL), -EMSGSIZE);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, NULL, NULL, 1, NULL), -EINVAL);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), NULL, &bth, NULL, "x", 1, NULL), -EINVAL);
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, NULL, NULL, "x", 1, NULL), -EINVAL);
	bth.opcode = 0x18;
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, NULL, "x", 1, NULL), -EINVAL);
	assert_int_equal(emu_pkt_payload_offset(&a, 0x18), -EINVAL);
	bth.opcode = EMU_OP_ACK;
	assert_int_equal(emu_pkt_build(buf, sizeof(buf), &a, &bth, NULL, "x", 1, NULL), -EMSGSIZE);
	assert_int_equal(emu_pkt_frame_len(&a, EMU_OP_ACK, 1), -EMSGSIZE);
	a.link_layer = 0;
	assert_int_equal(emu_pkt_frame_len(&a, EMU_OP_ACK, 0), -EINVAL);
	/* IB PktLen has 11 bits of words: at most 8188 bytes from LRH to ICRC */
	addr_for(&a, EMU_PKT_NET_IB_LOCAL);
	assert_int_equal(emu_pkt_frame_len(&a, 0x04, 8188 - 24), 8188 + 2);
	assert_int_equal(emu_pkt_frame_len(&a, 0x04, 8188 - 23), -EMSGSIZE);
	bth.opcode = 0x04;
	assert_int_equal(emu_pkt_build(big, sizeof(big), &a, &bth, NULL, big, 8188 - 24, NULL),
			 8190);
	assert_int_equal(emu_pkt_parse(big, 8190, EMU_LL_INFINIBAND, NULL), 0);
	addr_for(&a, EMU_PKT_NET_IPV4);
	/* IPv4 total length: at most 65535, and UDP 8 + BTH 12 + data + pad + ICRC 4 a multiple
	 * of 4 leaves 65532 - 44 = 65488 bytes of data */
	assert_int_equal(emu_pkt_frame_len(&a, 0x04, 65488), 14 + 65532);
	assert_int_equal(emu_pkt_frame_len(&a, 0x04, 65489), -EMSGSIZE);
	addr_for(&a, EMU_PKT_NET_IPV6);
	assert_int_equal(emu_pkt_frame_len(&a, 0x04, 65532 - 24), 14 + 40 + 65532);
	assert_int_equal(emu_pkt_frame_len(&a, 0x04, 65532 - 23), -EMSGSIZE);
}

static void test_misc(void **state)
{
	(void)state;
	/* rxe: 0xc000 + hash_32(qpn, 14) */
	assert_int_equal(emu_roce_sport_rxe(0x11), 0xdf94);
	assert_int_equal(emu_roce_sport_rxe(0), 0xc000);
	for (uint32_t q = 1; q < 5000; q += 7)
		assert_true(emu_roce_sport_rxe(q) >= 0xc000);
	/* IB core: flow label folded into 14 bits; 0 derives one from the QPNs */
	assert_int_equal(emu_roce_sport_flow(0x12345, 1, 2), 0xc000 | (0x2345 ^ 0x4));
	assert_int_equal(emu_roce_sport_flow(0, 0x11, 0x12),
			 emu_roce_sport_flow(0x11 * 0x12, 0, 0));
	assert_int_equal(emu_aeth_ack(31), 0x1f);
	assert_int_equal(emu_aeth_rnr_nak(14), 0x2e);
	assert_int_equal(emu_aeth_rnr_nak(0x3f), 0x3f);
	assert_string_equal(emu_pkt_strerror(-EMU_PKT_EICRC), "bad ICRC");
	assert_string_equal(emu_pkt_strerror(EMU_PKT_EVCRC), "bad VCRC");
	assert_string_equal(emu_pkt_strerror(0), "no error");
	assert_string_equal(emu_pkt_strerror(-ENOMEM), "unknown error");
	/* the nine error codes are distinct */
	static const int codes[] = { EMU_PKT_ETRUNC, EMU_PKT_ELEN,  EMU_PKT_EVERSION,
				     EMU_PKT_ENOTIBA, EMU_PKT_EOPCODE, EMU_PKT_EPAD,
				     EMU_PKT_ECSUM,  EMU_PKT_EICRC, EMU_PKT_EVCRC };
	for (size_t i = 0; i < 9; i++)
		for (size_t j = i + 1; j < 9; j++)
			assert_int_not_equal(codes[i], codes[j]);
}

/* Header encoders put every field where IBTA says, and the decoders read back what they put. */
static void test_header_fields(void **state)
{
	uint8_t b[40];
	struct emu_bth bth = { .opcode = 0xab, .se = true, .mig = false, .padcnt = 2, .tver = 0,
			       .pkey = 0x7fff, .fecn = true, .becn = false, .dqpn = 0x1abcdef,
			       .ackreq = true, .psn = 0x2123456 }, bb;
	struct emu_lrh lrh = { .vl = 15, .lver = 0, .sl = 9, .lnh = 3, .dlid = 0xc001,
			       .pkt_len = 0xfff, .slid = 0xbeef }, ll;
	static const uint8_t bth_bytes[12] = { 0xab, 0xa0, 0x7f, 0xff, 0x80, 0xab, 0xcd, 0xef,
					       0x80, 0x12, 0x34, 0x56 };
	static const uint8_t lrh_bytes[8] = { 0xf0, 0x93, 0xc0, 0x01, 0x07, 0xff, 0xbe, 0xef };
	struct emu_atmeth at = { .va = 1, .rkey = 2, .swap_add = 3, .compare = 4 };

	(void)state;
	emu_bth_put(b, &bth);
	assert_memory_equal(b, bth_bytes, 12);
	emu_bth_get(b, &bb);
	assert_int_equal(bb.dqpn, 0xabcdef);
	assert_int_equal(bb.psn, 0x123456);
	assert_int_equal(bb.padcnt, 2);
	assert_true(bb.se && bb.fecn && bb.ackreq && !bb.becn && !bb.mig);
	emu_lrh_put(b, &lrh);
	assert_memory_equal(b, lrh_bytes, 8);
	emu_lrh_get(b, &ll);
	assert_int_equal(ll.pkt_len, 0x7ff);
	assert_int_equal(ll.vl, 15);
	assert_int_equal(ll.sl, 9);
	emu_atmeth_put(b, &at);
	assert_memory_equal(b, "\0\0\0\0\0\0\0\1\0\0\0\2\0\0\0\0\0\0\0\3\0\0\0\0\0\0\0\4", 28);
	struct emu_deth d = { .qkey = 0x80010000, .sqpn = 0x1000001 };
	emu_deth_put(b, &d);
	assert_memory_equal(b, "\x80\x01\0\0\0\0\0\x01", 8);
}

/* rdma_ip2gid / rdma_gid2ip: IPv4-mapped GIDs for IPv4, the address itself for IPv6. */
static void test_gid_sockaddr(void **state)
{
	static const uint8_t v4gid[16] = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 65 };
	struct sockaddr_storage ss;
	struct sockaddr_in in4 = { .sin_family = AF_INET, .sin_port = htons(7471) };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct sockaddr unk = { .sa_family = AF_UNIX };
	uint8_t gid[16];

	(void)state;
	inet_pton(AF_INET, "192.0.2.65", &in4.sin_addr);
	emu_gid_from_sockaddr((struct sockaddr *)&in4, gid);
	assert_memory_equal(gid, v4gid, 16);
	assert_true(emu_gid_is_v4mapped(gid));
	emu_gid_to_sockaddr(gid, &ss);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(((struct sockaddr_in *)&ss)->sin_port, 0);
	assert_memory_equal(&((struct sockaddr_in *)&ss)->sin_addr, &in4.sin_addr, 4);

	inet_pton(AF_INET6, "2001:db8::1", &in6.sin6_addr);
	emu_gid_from_sockaddr((struct sockaddr *)&in6, gid);
	assert_memory_equal(gid, &in6.sin6_addr, 16);
	assert_false(emu_gid_is_v4mapped(gid));
	emu_gid_to_sockaddr(gid, &ss);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_memory_equal(&((struct sockaddr_in6 *)&ss)->sin6_addr, &in6.sin6_addr, 16);

	memset(gid, 0xaa, sizeof(gid));
	emu_gid_from_sockaddr(&unk, gid);
	assert_memory_equal(gid, (uint8_t[16]){ 0 }, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_rows),
		cmocka_unit_test(test_opcode_offsets),
		cmocka_unit_test(test_opcode_flags),
		cmocka_unit_test(test_crc_check_values),
		cmocka_unit_test(test_kat_cnp_connectx),
		cmocka_unit_test(test_kat_scapy_uc),
		cmocka_unit_test(test_golden_ib_send_only),
		cmocka_unit_test(test_golden_roce4_ack),
		cmocka_unit_test(test_golden_roce6_write_first),
		cmocka_unit_test(test_golden_ib_grh_ud_imm),
		cmocka_unit_test(test_header_fields),
		cmocka_unit_test(test_no_crc),
		cmocka_unit_test(test_round_trip_all),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_bit_flips_ib),
		cmocka_unit_test(test_icrc_coverage),
		cmocka_unit_test(test_icrc_reference),
		cmocka_unit_test(test_flips_roce),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_misc),
		cmocka_unit_test(test_gid_sockaddr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
