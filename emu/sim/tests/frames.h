/* Test-only frame builder: real-looking RoCEv2 (Ethernet II / IPv4 / UDP 4791 / BTH) and IB
 * (LRH / BTH) packets, so the wire and pcap tests carry what the emulator will carry and tshark
 * can check the captures. The ICRC (and IB VCRC) are placeholders: computing them is the HCA
 * model's job, not the wire's. */
#ifndef RDMAEMU_EMU_TESTS_FRAMES_H
#define RDMAEMU_EMU_TESTS_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_ROCE_PORT 4791
#define FRAME_BTH_LEN 12
#define FRAME_ICRC_LEN 4
#define FRAME_VCRC_LEN 2

/* BTH opcodes used by the tests (IBTA vol. 1, table 38). */
#define FRAME_OP_RC_SEND_ONLY 0x04
#define FRAME_OP_RC_ACK 0x11

struct frame_bth {
	uint8_t opcode;
	bool solicited, ack_req;
	uint16_t pkey;
	uint32_t dqpn; /* 24 bits */
	uint32_t psn;  /* 24 bits */
};

struct frame_roce_addr {
	uint8_t smac[6], dmac[6];
	uint32_t saddr, daddr; /* IPv4, host byte order */
	uint16_t sport;
};

struct frame_ib_addr {
	uint16_t slid, dlid;
	uint8_t sl, vl;
};

/* Internet checksum (RFC 1071) of buf; 0 when buf already holds a correct checksum. */
uint16_t frame_inet_csum(const uint8_t *buf, size_t len);

/* Build a frame into buf (cap bytes): headers, `ext` (extension headers, e.g. AETH), payload,
 * pad to a multiple of 4 (BTH PadCnt), ICRC (and VCRC for IB). Returns its length, 0 if it does
 * not fit. */
size_t frame_build_roce(uint8_t *buf, size_t cap, const struct frame_roce_addr *a,
			const struct frame_bth *bth, const void *ext, size_t extlen,
			const void *payload, size_t plen);
size_t frame_build_ib(uint8_t *buf, size_t cap, const struct frame_ib_addr *a,
		      const struct frame_bth *bth, const void *ext, size_t extlen,
		      const void *payload, size_t plen);

/* Where the BTH starts in a frame built above. */
#define FRAME_ROCE_BTH_OFF (14 + 20 + 8)
#define FRAME_IB_BTH_OFF 8

/* Parse back the BTH fields the tests need. */
void frame_parse_bth(const uint8_t *bth, struct frame_bth *out);

#endif
