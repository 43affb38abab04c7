/* Wire formats of the data path: the BTH opcode table, header encode/decode, packet build and
 * parse, ICRC and VCRC. Everything here works on byte-exact packets as a real HCA sends them
 * (IBTA vol. 1: LRH 7.7, GRH 8.3, BTH and extension headers 9.2-9.3, CRCs 7.8; RoCEv2: annex
 * A17), so captures decode in Wireshark and the bytes could be sent to a kernel rxe peer.
 *
 * Two link layers (numbered as verbs numbers them, see emu/sim/pcap.h):
 *   EMU_LL_ETHERNET:   Ethernet II / IPv4 or IPv6 / UDP 4791 / BTH ... / ICRC
 *   EMU_LL_INFINIBAND: LRH [/ GRH] / BTH ... / ICRC / VCRC
 *
 * Header structs below are the decoded, host-order view of a header; *_put() writes one in
 * network order (reserved bits zero), *_get() reads one (reserved bits ignored). The table and
 * the builders are the single source of truth for which extension headers an opcode carries.
 */
#ifndef RDMAEMU_EMU_PKT_H
#define RDMAEMU_EMU_PKT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emu/sim/pcap.h" /* EMU_LL_INFINIBAND, EMU_LL_ETHERNET */

/* Header sizes in bytes. */
#define EMU_ETH_LEN 14
#define EMU_ETH_ZLEN 60 /* shortest Ethernet frame without FCS: shorter ones are padded */
#define EMU_IPV4_LEN 20
#define EMU_IPV6_LEN 40
#define EMU_UDP_LEN 8
#define EMU_LRH_LEN 8
#define EMU_GRH_LEN 40
#define EMU_BTH_LEN 12
#define EMU_RDETH_LEN 4
#define EMU_DETH_LEN 8
#define EMU_RETH_LEN 16
#define EMU_ATMETH_LEN 28
#define EMU_AETH_LEN 4
#define EMU_ATMACK_LEN 8
#define EMU_IMMDT_LEN 4
#define EMU_IETH_LEN 4
#define EMU_CNP_RSVD_LEN 16 /* a CNP carries 16 reserved bytes after the BTH (A17.9.3) */
#define EMU_ICRC_LEN 4
#define EMU_VCRC_LEN 2

#define EMU_ETHERTYPE_IPV4 0x0800
#define EMU_ETHERTYPE_IPV6 0x86dd
#define EMU_IPPROTO_UDP 17
#define EMU_ROCE_UDP_DPORT 4791
#define EMU_GRH_NXTHDR_IBA 0x1b /* GRH NxtHdr of an IBA transport packet */
#define EMU_LNH_RAW 0
#define EMU_LNH_IP 1
#define EMU_LNH_IBA_LOCAL 2
#define EMU_LNH_IBA_GLOBAL 3
#define EMU_PKEY_DEFAULT 0xffff
#define EMU_PSN_MASK 0xffffffu
#define EMU_QPN_MASK 0xffffffu

/* ---- the opcode table (emu/hca/pkt_opcode.c) ---- */

/* BTH opcodes: bits 7-5 the transport (IBTA table 38), 4-0 the operation. */
enum {
	EMU_OP_RC = 0x00,
	EMU_OP_UC = 0x20,
	EMU_OP_RD = 0x40,
	EMU_OP_UD = 0x60,
	EMU_OP_CNP_TRANSPORT = 0x80,

	EMU_OP_SEND_FIRST = 0x00,
	EMU_OP_SEND_MIDDLE = 0x01,
	EMU_OP_SEND_LAST = 0x02,
	EMU_OP_SEND_LAST_IMM = 0x03,
	EMU_OP_SEND_ONLY = 0x04,
	EMU_OP_SEND_ONLY_IMM = 0x05,
	EMU_OP_WRITE_FIRST = 0x06,
	EMU_OP_WRITE_MIDDLE = 0x07,
	EMU_OP_WRITE_LAST = 0x08,
	EMU_OP_WRITE_LAST_IMM = 0x09,
	EMU_OP_WRITE_ONLY = 0x0a,
	EMU_OP_WRITE_ONLY_IMM = 0x0b,
	EMU_OP_READ_REQ = 0x0c,
	EMU_OP_READ_RESP_FIRST = 0x0d,
	EMU_OP_READ_RESP_MIDDLE = 0x0e,
	EMU_OP_READ_RESP_LAST = 0x0f,
	EMU_OP_READ_RESP_ONLY = 0x10,
	EMU_OP_ACK = 0x11,
	EMU_OP_ATOMIC_ACK = 0x12,
	EMU_OP_CMP_SWAP = 0x13,
	EMU_OP_FETCH_ADD = 0x14,
	EMU_OP_RESYNC = 0x15, /* RD only */
	EMU_OP_SEND_LAST_INV = 0x16,
	EMU_OP_SEND_ONLY_INV = 0x17,

	EMU_OP_CNP = 0x81, /* RoCEv2 congestion notification (A17.9.3) */
};

/* Extension headers, in the order IBTA places them after the BTH (9.2); also the index into
 * emu_pkt_opcode_info.offset. EMU_PKT_H_PAYLOAD is where data (or the CNP's reserved block)
 * starts. */
enum emu_pkt_hdr {
	EMU_PKT_H_RDETH,
	EMU_PKT_H_DETH,
	EMU_PKT_H_RETH,
	EMU_PKT_H_ATMETH,
	EMU_PKT_H_AETH,
	EMU_PKT_H_ATMACK,
	EMU_PKT_H_IMMDT,
	EMU_PKT_H_IETH,
	EMU_PKT_H_PAYLOAD,
	EMU_PKT_H_NUM
};

/* emu_pkt_opcode_info.mask: the headers present (bit = 1 << enum emu_pkt_hdr) ... */
#define EMU_PKT_RDETH (1u << EMU_PKT_H_RDETH)
#define EMU_PKT_DETH (1u << EMU_PKT_H_DETH)
#define EMU_PKT_RETH (1u << EMU_PKT_H_RETH)
#define EMU_PKT_ATMETH (1u << EMU_PKT_H_ATMETH)
#define EMU_PKT_AETH (1u << EMU_PKT_H_AETH)
#define EMU_PKT_ATMACK (1u << EMU_PKT_H_ATMACK)
#define EMU_PKT_IMMDT (1u << EMU_PKT_H_IMMDT)
#define EMU_PKT_IETH (1u << EMU_PKT_H_IETH)
#define EMU_PKT_PAYLOAD (1u << EMU_PKT_H_PAYLOAD) /* may carry data (and so PadCnt) */
/* ... and what the packet is, for the requester/responder/completer. */
#define EMU_PKT_REQ (1u << 10)	  /* sent by a requester */
#define EMU_PKT_RESP (1u << 11)	  /* sent by a responder (ACK, read/atomic response) */
#define EMU_PKT_START (1u << 12)  /* first packet of a message */
#define EMU_PKT_MIDDLE (1u << 13) /* neither first nor last */
#define EMU_PKT_END (1u << 14)	  /* last packet of a message */
#define EMU_PKT_SEND (1u << 15)
#define EMU_PKT_WRITE (1u << 16)
#define EMU_PKT_READ (1u << 17)
#define EMU_PKT_ATOMIC (1u << 18)
#define EMU_PKT_RWR (1u << 19)	 /* consumes a receive WQE at the responder */
#define EMU_PKT_COMP (1u << 20)	 /* completes the receive WQE at the responder */
#define EMU_PKT_RD (1u << 21)	 /* Reliable Datagram: on the wire only, no RD QPs here */
#define EMU_PKT_CNP (1u << 22)	 /* congestion notification, no transport semantics */
#define EMU_PKT_ONLY (EMU_PKT_START | EMU_PKT_END)

struct emu_pkt_opcode_info {
	const char *name; /* "RC_SEND_FIRST"; NULL: not an opcode */
	uint32_t mask;
	uint8_t length;	  /* BTH + extension headers */
	/* offset from the BTH of each header in mask, and of the payload */
	uint8_t offset[EMU_PKT_H_NUM];
};

extern const struct emu_pkt_opcode_info emu_pkt_opcode[256];

static inline bool emu_pkt_opcode_valid(uint8_t op)
{
	return emu_pkt_opcode[op].name != NULL;
}
/* The table's name, or "UNKNOWN" for an opcode not in it. */
const char *emu_pkt_opcode_name(uint8_t op);
/* Header names for tracing: "BTH", "RETH", ... ("?" past the end). */
const char *emu_pkt_hdr_name(enum emu_pkt_hdr h);

/* ---- headers (emu/hca/pkt_hdr.c) ---- */

struct emu_eth {
	uint8_t dst[6], src[6];
	uint16_t type;
};

struct emu_ipv4 {
	uint8_t tos; /* DSCP << 2 | ECN */
	uint16_t tot_len, id;
	bool df;
	uint8_t ttl, proto;
	uint16_t csum;
	uint8_t saddr[4], daddr[4];
};

struct emu_ipv6 {
	uint8_t tclass;
	uint32_t flow_label; /* 20 bits */
	uint16_t payload_len;
	uint8_t next_hdr, hop_limit;
	uint8_t saddr[16], daddr[16];
};

struct emu_udp {
	uint16_t sport, dport, len, csum;
};

struct emu_lrh {
	uint8_t vl, lver, sl, lnh; /* 4, 4, 4, 2 bits */
	uint16_t dlid;
	uint16_t pkt_len; /* 11 bits: LRH to ICRC inclusive, in 4-byte words (no VCRC) */
	uint16_t slid;
};

struct emu_grh {
	uint8_t ipver, tclass; /* 4, 8 bits */
	uint32_t flow_label;   /* 20 bits */
	uint16_t paylen;       /* BTH to ICRC inclusive */
	uint8_t nxthdr, hoplmt;
	uint8_t sgid[16], dgid[16];
};

struct emu_bth {
	uint8_t opcode;
	bool se, mig;
	uint8_t padcnt, tver; /* 2, 4 bits */
	uint16_t pkey;
	bool fecn, becn;
	uint32_t dqpn; /* 24 bits */
	bool ackreq;
	uint32_t psn; /* 24 bits */
};

struct emu_reth {
	uint64_t va;
	uint32_t rkey, dma_len;
};

/* AETH syndrome (9.3.5): bit 7 reserved, bits 6-5 the kind, 4-0 credits / timer / NAK code. */
#define EMU_AETH_KIND_MASK 0x60
#define EMU_AETH_ACK 0x00
#define EMU_AETH_RNR_NAK 0x20
#define EMU_AETH_NAK 0x60
#define EMU_AETH_VALUE_MASK 0x1f
#define EMU_AETH_NAK_PSN_SEQ 0x60
#define EMU_AETH_NAK_INVALID_REQ 0x61
#define EMU_AETH_NAK_REM_ACCESS 0x62
#define EMU_AETH_NAK_REM_OP 0x63
#define EMU_AETH_NAK_INVALID_RD_REQ 0x64
#define EMU_AETH_CREDITS_INVALID 0x1f /* "no end-to-end credits": what rxe always sends */

struct emu_aeth {
	uint8_t syndrome;
	uint32_t msn; /* 24 bits */
};

static inline uint8_t emu_aeth_ack(uint8_t credits)
{
	return (uint8_t)(EMU_AETH_ACK | (credits & EMU_AETH_VALUE_MASK));
}
static inline uint8_t emu_aeth_rnr_nak(uint8_t timer)
{
	return (uint8_t)(EMU_AETH_RNR_NAK | (timer & EMU_AETH_VALUE_MASK));
}

struct emu_atmeth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add, compare;
};

struct emu_deth {
	uint32_t qkey;
	uint32_t sqpn; /* 24 bits */
};

void emu_eth_put(uint8_t *p, const struct emu_eth *h);
void emu_eth_get(const uint8_t *p, struct emu_eth *h);
/* Writes the header checksum as given: emu_ipv4_csum_fill() computes it. */
void emu_ipv4_put(uint8_t *p, const struct emu_ipv4 *h);
void emu_ipv4_get(const uint8_t *p, struct emu_ipv4 *h);
void emu_ipv4_csum_fill(uint8_t *p);
void emu_ipv6_put(uint8_t *p, const struct emu_ipv6 *h);
void emu_ipv6_get(const uint8_t *p, struct emu_ipv6 *h);
void emu_udp_put(uint8_t *p, const struct emu_udp *h);
void emu_udp_get(const uint8_t *p, struct emu_udp *h);
void emu_lrh_put(uint8_t *p, const struct emu_lrh *h);
void emu_lrh_get(const uint8_t *p, struct emu_lrh *h);
void emu_grh_put(uint8_t *p, const struct emu_grh *h);
void emu_grh_get(const uint8_t *p, struct emu_grh *h);
void emu_bth_put(uint8_t *p, const struct emu_bth *h);
void emu_bth_get(const uint8_t *p, struct emu_bth *h);
void emu_reth_put(uint8_t *p, const struct emu_reth *h);
void emu_reth_get(const uint8_t *p, struct emu_reth *h);
void emu_aeth_put(uint8_t *p, const struct emu_aeth *h);
void emu_aeth_get(const uint8_t *p, struct emu_aeth *h);
void emu_atmeth_put(uint8_t *p, const struct emu_atmeth *h);
void emu_atmeth_get(const uint8_t *p, struct emu_atmeth *h);
void emu_deth_put(uint8_t *p, const struct emu_deth *h);
void emu_deth_get(const uint8_t *p, struct emu_deth *h);
/* The one-field headers: AtomicAckETH (original data), ImmDt, IETH (R_Key), RDETH (EE
 * context, 24 bits). ImmDt is carried opaque, as verbs' __be32 imm_data: put/get do not swap. */
/* Inline: every header and MAD field goes through them (a CM connection makes ~600 calls),
 * and a call costs more than the two to eight byte moves. Byte by byte in network order, so
 * host endianness and alignment do not matter. */
static inline void emu_be16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline uint16_t emu_be16_get(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void emu_be24_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline uint32_t emu_be24_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline void emu_be32_put(uint8_t *p, uint32_t v)
{
	emu_be16_put(p, (uint16_t)(v >> 16));
	emu_be16_put(p + 2, (uint16_t)v);
}

static inline uint32_t emu_be32_get(const uint8_t *p)
{
	return (uint32_t)emu_be16_get(p) << 16 | emu_be16_get(p + 2);
}

static inline void emu_be64_put(uint8_t *p, uint64_t v)
{
	emu_be32_put(p, (uint32_t)(v >> 32));
	emu_be32_put(p + 4, (uint32_t)v);
}

static inline uint64_t emu_be64_get(const uint8_t *p)
{
	return (uint64_t)emu_be32_get(p) << 32 | emu_be32_get(p + 4);
}

/* The n bytes at p as one big-endian number, and back: one load or store for the widths
 * records and MADs use (1, 2, 3, 4, 8), a byte loop for the others (n <= 8). */
static inline uint64_t emu_be_load_n(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	switch (n) {
	case 1: return p[0];
	case 2: return emu_be16_get(p);
	case 3: return emu_be24_get(p);
	case 4: return emu_be32_get(p);
	case 8: return emu_be64_get(p);
	default:
		for (unsigned i = 0; i < n; i++)
			v = v << 8 | p[i];
		return v;
	}
}

static inline void emu_be_store_n(uint8_t *p, unsigned n, uint64_t v)
{
	switch (n) {
	case 1: p[0] = (uint8_t)v; return;
	case 2: emu_be16_put(p, (uint16_t)v); return;
	case 3: emu_be24_put(p, (uint32_t)v); return;
	case 4: emu_be32_put(p, (uint32_t)v); return;
	case 8: emu_be64_put(p, v); return;
	default:
		for (unsigned i = n; i--; v >>= 8)
			p[i] = (uint8_t)v;
	}
}

/* Bit fields of big-endian wire structures (IBA order: bit 0 is the MSB of byte 0), `bits`
 * <= 64. A field within 8 bytes is one load (and store) of those bytes plus a shift and a
 * mask, which the compiler folds when the position is a constant (the CM MAD and SA record
 * codecs: always inlined, or it would not see the constants); a 64-bit field off a byte boundary goes bit by bit. put clears the field's bits
 * first, so the buffer need not be zeroed. */
static inline uint64_t emu_bits_mask(unsigned bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

static inline __attribute__((always_inline)) uint64_t emu_bits_get(const uint8_t *p,
								    unsigned bit_off,
								    unsigned bits)
{
	unsigned first = bit_off / 8, last = (bit_off + bits - 1) / 8;
	uint64_t v = 0;

	if (!bits)
		return 0;
	if (last - first < 8)
		return emu_be_load_n(p + first, last - first + 1) >> (7 - (bit_off + bits - 1) % 8) &
		       emu_bits_mask(bits);
	for (unsigned i = 0; i < bits; i++) {
		unsigned b = bit_off + i;

		v = (v << 1) | ((p[b / 8] >> (7 - b % 8)) & 1u);
	}
	return v;
}

static inline __attribute__((always_inline)) void emu_bits_put(uint8_t *p, unsigned bit_off,
								unsigned bits, uint64_t v)
{
	unsigned first = bit_off / 8, last = (bit_off + bits - 1) / 8;

	if (!bits)
		return;
	if (!(bit_off % 8) && !(bits % 8)) { /* whole bytes: a store, no read-modify-write */
		emu_be_store_n(p + first, last - first + 1, v);
		return;
	}
	if (last - first < 8) {
		unsigned tail = 7 - (bit_off + bits - 1) % 8, n = last - first + 1;
		uint64_t m = emu_bits_mask(bits) << tail;

		emu_be_store_n(p + first, n, (emu_be_load_n(p + first, n) & ~m) | ((v << tail) & m));
		return;
	}
	for (unsigned i = 0; i < bits; i++) {
		unsigned b = bit_off + bits - 1 - i;
		uint8_t m = (uint8_t)(1u << (7 - b % 8));

		if ((v >> i) & 1)
			p[b / 8] |= m;
		else
			p[b / 8] &= (uint8_t)~m;
	}
}

/* Internet checksum (RFC 1071) of buf, folded and complemented; over a region that includes a
 * correct checksum it is 0. `sum` carries a partial (unfolded) sum, 0 to start. */
uint32_t emu_inet_sum(uint32_t sum, const void *buf, size_t len);
uint16_t emu_inet_csum_fold(uint32_t sum);

/* UDP source port of a RoCEv2 QP. rxe picks it at QP creation from a hash of the local QPN into
 * the dynamic range 0xc000..0xffff (rxe_qp.c); the IB core's flow-label rule
 * (rdma_get_udp_sport: a flow label from both QPNs when none is given) is the other one. */
uint16_t emu_roce_sport_rxe(uint32_t qpn);

/* RoCE GIDs and IP addresses (the kernel's rdma_ip2gid / rdma_gid2ip): an IPv4 address is the
 * IPv4-mapped GID ::ffff:a.b.c.d, an IPv6 address the GID itself. */
struct sockaddr;
struct sockaddr_storage;
bool emu_gid_is_v4mapped(const uint8_t gid[16]);
/* AF_INET / AF_INET6 -> GID; any other family gives 16 zero bytes. */
void emu_gid_from_sockaddr(const struct sockaddr *sa, uint8_t gid[16]);
/* GID -> AF_INET (IPv4-mapped) or AF_INET6, port 0, everything else zero. */
void emu_gid_to_sockaddr(const uint8_t gid[16], struct sockaddr_storage *ss);
uint16_t emu_roce_sport_flow(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/* ---- CRCs (emu/hca/pkt_icrc.c) ---- */

/* CRC-32 (802.3 polynomial, reflected) register update without pre/post inversion, like the
 * kernel's crc32_le: crc = emu_crc32(~0u, p, n) ... ~crc. */
uint32_t emu_crc32(uint32_t crc, const void *p, size_t n);
/* The same by tables alone (slice-by-8): what emu_crc32 uses on CPUs without PCLMULQDQ and
 * for buffers under 64 bytes; the tests compare the two. */
uint32_t emu_crc32_slice8(uint32_t crc, const void *p, size_t n);
/* Which implementation emu_crc32 (and the ICRC) uses: the fastest the CPU has, at most
 * `level` (0 the tables, 1 PCLMULQDQ on 128-bit registers, 2 VPCLMULQDQ on 512-bit ones);
 * returns the level now in effect. For the tests, which compare them; the default is the
 * CPU's best. */
int emu_crc32_select(int level);
/* The VCRC: CRC-16 with polynomial 0x100B (x^16+x^12+x^3+x+1), reflected, register preset to
 * all ones, result complemented (7.8.2). Over the LRH through the ICRC. */
uint16_t emu_vcrc16(const void *p, size_t n);

/* Frames this thread built (emu/hca/pkt_known.c): emu_pkt_build notes every frame it finishes,
 * emu_pkt_parse skips the ICRC and VCRC checks of a frame equal byte for byte to one noted
 * (its CRCs are the builder's own over these bytes). Frames up to EMU_PKT_KNOWN_MAX bytes. */
#define EMU_PKT_KNOWN_MAX 512
void emu_pkt_known_note(const uint8_t *frame, size_t len);
bool emu_pkt_known(const uint8_t *frame, size_t len);
/* While on, every frame this thread parses counts as known: for a thread delivering frames
 * that this program's builder made and nothing can have changed since (the loopback frames
 * of the shared-memory rings, emu/link/link_shm.c). */
void emu_pkt_trust(bool on);

/* ---- packets (emu/hca/pkt_hdr.c) ---- */

/* Errors of emu_pkt_parse (and the builders), as negative errno values. */
#define EMU_PKT_ETRUNC ENODATA	      /* the frame ends inside a header or before its length */
#define EMU_PKT_ELEN EMSGSIZE	      /* length fields disagree with each other or the frame */
#define EMU_PKT_EVERSION EPROTO	      /* IP version/IHL, LRH LVer, GRH IPVer, BTH TVer */
#define EMU_PKT_ENOTIBA EPROTONOSUPPORT /* not RoCEv2/IBA transport: ethertype, protocol, port, LNH, NxtHdr, options, fragments */
#define EMU_PKT_EOPCODE EOPNOTSUPP    /* BTH opcode not in the table */
#define EMU_PKT_EPAD ERANGE	      /* PadCnt larger than the data, or on an opcode without data; transport length not a multiple of 4 */
#define EMU_PKT_ECSUM EILSEQ	      /* IPv4 header or UDP checksum wrong */
#define EMU_PKT_EICRC EBADMSG	      /* ICRC wrong */
#define EMU_PKT_EVCRC EIO	      /* VCRC wrong */
/* A sentence for any of the above (or strerror's for other errno values). */
const char *emu_pkt_strerror(int err);

/* Network layer of a packet. */
enum emu_pkt_net {
	EMU_PKT_NET_IB_LOCAL, /* LRH / BTH */
	EMU_PKT_NET_IB_GLOBAL, /* LRH / GRH / BTH */
	EMU_PKT_NET_IPV4, /* Ethernet / IPv4 / UDP / BTH */
	EMU_PKT_NET_IPV6, /* Ethernet / IPv6 / UDP / BTH */
};

#define EMU_PKT_NO_HDR UINT32_MAX

/* A parsed (or built) packet: where everything is, and the BTH fields the engines switch on. */
struct emu_pkt_info {
	int link_layer;
	enum emu_pkt_net net;
	uint32_t frame_len; /* what the headers account for; an Ethernet frame may be longer (padding to 60) */
	/* offsets in the frame; EMU_PKT_NO_HDR when absent */
	uint32_t lrh_off, grh_off, eth_off, ip_off, udp_off, bth_off;
	uint32_t hdr_off[EMU_PKT_H_NUM]; /* extension headers and payload */
	uint32_t icrc_off, vcrc_off;
	uint32_t paylen; /* data bytes, without pad */
	uint8_t pad;	 /* BTH PadCnt */
	uint8_t opcode;
	uint32_t mask; /* emu_pkt_opcode[opcode].mask */
	uint32_t psn, dqpn;
	struct emu_bth bth;
};

/* Parses and checks a frame of the given link layer: every header, every length, the
 * checksums, PadCnt, ICRC and (IB) VCRC. 0 or a negative EMU_PKT_E* code; info is filled as far
 * as parsing got. */
int emu_pkt_parse(const uint8_t *frame, size_t len, int link_layer, struct emu_pkt_info *info);
/* The same for a frame this program's builder made that nothing can have changed since (one
 * the HCA looped back to itself, emu/verbs/net.c): every header and length is parsed and
 * checked, but the IPv4 header checksum, ICRC and VCRC are not computed again, as for a frame
 * emu_pkt_known knows: they are the builder's own over these very bytes. */
int emu_pkt_parse_built(const uint8_t *frame, size_t len, int link_layer,
			struct emu_pkt_info *info);

/* Where a packet goes: the addressing and the per-path fields of the headers below the BTH. */
struct emu_pkt_addr {
	int link_layer;
	/* RoCEv2. IPv4 when both GIDs are IPv4-mapped (::ffff:a.b.c.d), as rxe decides. */
	uint8_t smac[6], dmac[6];
	uint8_t sgid[16], dgid[16]; /* also the IB GRH's */
	uint8_t tclass;		    /* IPv4 TOS / IPv6 and GRH traffic class */
	uint32_t flow_label;	    /* IPv6 and GRH */
	uint8_t hop_limit;	    /* IPv4 TTL / IPv6 hop limit / GRH HopLmt; 0 means 64 */
	uint16_t ip_id;		    /* IPv4 identification */
	uint16_t sport;		    /* UDP source port (emu_roce_sport_*) */
	bool udp6_csum_zero;	    /* IPv6: send UDP checksum 0 as rxe does; default computes it */
	/* ICRC, VCRC, the IPv4 header checksum and the IPv6 UDP checksum left zero: only for a
	 * frame no capture sees and whose only reader trusts it (a shared-memory loopback frame,
	 * emu_pkt_trust, whose parse checks none of them); the CRC was a sixth of the sender's
	 * time at 64 KiB (docs/daemon.md, "Shared memory") */
	bool no_crc;
	/* InfiniBand */
	uint16_t slid, dlid;
	uint8_t sl, vl;
	bool grh; /* send a GRH (LNH 3) */
};

/* Extension header contents; the builder uses only those the opcode carries. */
struct emu_pkt_ext {
	struct emu_reth reth;
	struct emu_aeth aeth;
	struct emu_atmeth atmeth;
	uint64_t atmack;  /* original remote data */
	uint32_t imm;	  /* ImmDt, opaque (network order as verbs hands it) */
	uint32_t ieth_rkey;
	struct emu_deth deth;
	uint32_t rdeth_een;
};

/* Offset of the payload in a frame built for this address and opcode, or a negative code. A
 * requester writes the data there, then calls emu_pkt_build_finish. */
ssize_t emu_pkt_payload_offset(const struct emu_pkt_addr *a, uint8_t opcode);
/* Length of that frame with `paylen` data bytes (Ethernet frames padded to 60). */
ssize_t emu_pkt_frame_len(const struct emu_pkt_addr *a, uint8_t opcode, size_t paylen);
/* Writes every header around paylen data bytes already at emu_pkt_payload_offset(): lengths,
 * PadCnt (bth->padcnt is ignored) and zero pad bytes, the IPv4/UDP checksums, ICRC, VCRC.
 * Returns the frame length, or -EINVAL (bad opcode/link layer/argument), -EMSGSIZE (cap too
 * small, or data on an opcode that carries none, or a length field overflows). info, if not
 * NULL, describes the result. */
ssize_t emu_pkt_build_finish(uint8_t *buf, size_t cap, const struct emu_pkt_addr *a,
			     const struct emu_bth *bth, const struct emu_pkt_ext *ext, size_t paylen,
			     struct emu_pkt_info *info);
/* Same, copying the payload in first. */
ssize_t emu_pkt_build(uint8_t *buf, size_t cap, const struct emu_pkt_addr *a,
		      const struct emu_bth *bth, const struct emu_pkt_ext *ext, const void *payload,
		      size_t paylen, struct emu_pkt_info *info);
/* The two halves of emu_pkt_build_finish, for a sender that lays a packet out once and puts
 * the data in itself (gathered straight from memory into a ring, with no bounce buffer):
 * emu_pkt_plan lays out a frame of this address, opcode and data length into *in and returns
 * its length (errors as above); the data goes at in->hdr_off[EMU_PKT_H_PAYLOAD]; then
 * emu_pkt_finish writes every header around it, as emu_pkt_build_finish does, for the same
 * address and bth->opcode. */
ssize_t emu_pkt_plan(const struct emu_pkt_addr *a, uint8_t opcode, size_t paylen, size_t cap,
		     struct emu_pkt_info *in);
ssize_t emu_pkt_finish(uint8_t *buf, size_t len, const struct emu_pkt_addr *a,
		       const struct emu_bth *bth, const struct emu_pkt_ext *ext,
		       const struct emu_pkt_info *in, struct emu_pkt_info *info);

/* The ICRC a packet should carry (as the 32-bit value whose little-endian bytes go on the wire),
 * computed over the frame as IBTA 7.8.1 / A17.4.1 say: variant fields set to ones. info must
 * describe the frame (emu_pkt_parse or a builder filled it). */
uint32_t emu_pkt_icrc(const uint8_t *frame, const struct emu_pkt_info *info);

#endif
