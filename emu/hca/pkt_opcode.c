/* The BTH opcode table (IBTA vol. 1 table 38 and 9.2-9.3; A17.9.3 for the CNP): for each
 * opcode, the extension headers it carries, what kind of packet it is, and where each header
 * sits. Extension headers always come in one order after the BTH (RDETH, DETH, RETH,
 * AtomicETH, AETH, AtomicAckETH, ImmDt, IETH), so the offsets are derived from the mask at
 * compile time instead of being written out 70 times. */
#include "emu/hca/pkt.h"

/* Size of header h if the mask holds it. */
#define HSZ(m, h, len) (((m) & (1u << (h))) ? (len) : 0)
/* Offset from the BTH of header h: the BTH plus every present header before it. */
#define OFF(m, h)                                                                     \
	(EMU_BTH_LEN + ((h) > EMU_PKT_H_RDETH ? HSZ(m, EMU_PKT_H_RDETH, EMU_RDETH_LEN) : 0) + \
	 ((h) > EMU_PKT_H_DETH ? HSZ(m, EMU_PKT_H_DETH, EMU_DETH_LEN) : 0) +          \
	 ((h) > EMU_PKT_H_RETH ? HSZ(m, EMU_PKT_H_RETH, EMU_RETH_LEN) : 0) +          \
	 ((h) > EMU_PKT_H_ATMETH ? HSZ(m, EMU_PKT_H_ATMETH, EMU_ATMETH_LEN) : 0) +    \
	 ((h) > EMU_PKT_H_AETH ? HSZ(m, EMU_PKT_H_AETH, EMU_AETH_LEN) : 0) +          \
	 ((h) > EMU_PKT_H_ATMACK ? HSZ(m, EMU_PKT_H_ATMACK, EMU_ATMACK_LEN) : 0) +    \
	 ((h) > EMU_PKT_H_IMMDT ? HSZ(m, EMU_PKT_H_IMMDT, EMU_IMMDT_LEN) : 0) +       \
	 ((h) > EMU_PKT_H_IETH ? HSZ(m, EMU_PKT_H_IETH, EMU_IETH_LEN) : 0))

/* Absent headers have offset 0, as in rxe's table. */
#define OFF_IF(m, h) (((m) & (1u << (h))) ? OFF(m, h) : 0)

#define ENTRY(str, m)                                                                     \
	{                                                                                 \
		.name = (str), .mask = (m), .length = OFF(m, EMU_PKT_H_PAYLOAD),          \
		.offset = {                                                               \
			[EMU_PKT_H_RDETH] = OFF_IF(m, EMU_PKT_H_RDETH),                      \
			[EMU_PKT_H_DETH] = OFF_IF(m, EMU_PKT_H_DETH),                        \
			[EMU_PKT_H_RETH] = OFF_IF(m, EMU_PKT_H_RETH),                        \
			[EMU_PKT_H_ATMETH] = OFF_IF(m, EMU_PKT_H_ATMETH),                    \
			[EMU_PKT_H_AETH] = OFF_IF(m, EMU_PKT_H_AETH),                        \
			[EMU_PKT_H_ATMACK] = OFF_IF(m, EMU_PKT_H_ATMACK),                    \
			[EMU_PKT_H_IMMDT] = OFF_IF(m, EMU_PKT_H_IMMDT),                      \
			[EMU_PKT_H_IETH] = OFF_IF(m, EMU_PKT_H_IETH),                        \
			[EMU_PKT_H_PAYLOAD] = OFF(m, EMU_PKT_H_PAYLOAD),                  \
		},                                                                        \
	}

/* Abbreviations for the table only. */
#define P EMU_PKT_PAYLOAD
#define RQ EMU_PKT_REQ
#define RS EMU_PKT_RESP
#define ST EMU_PKT_START
#define MI EMU_PKT_MIDDLE
#define EN EMU_PKT_END
#define ON EMU_PKT_ONLY
#define SND (EMU_PKT_SEND | RQ | P)
#define WR (EMU_PKT_WRITE | RQ | P)
#define IMM EMU_PKT_IMMDT
#define RECV EMU_PKT_RWR /* consumes a receive WQE (first packet of a send, write with imm) */
#define CMP EMU_PKT_COMP /* completes it (last packet) */
#define RD_REQ (EMU_PKT_RD | EMU_PKT_RDETH | EMU_PKT_DETH)
#define RD_RSP (EMU_PKT_RD | EMU_PKT_RDETH)

/* The operations common to RC, UC and RD requesters; `x` adds the transport's headers. */
#define SEND_OPS(t, x)                                                                        \
	[t | EMU_OP_SEND_FIRST] = ENTRY(#t "_SEND_FIRST", (x) | SND | ST | RECV),              \
	[t | EMU_OP_SEND_MIDDLE] = ENTRY(#t "_SEND_MIDDLE", (x) | SND | MI),                   \
	[t | EMU_OP_SEND_LAST] = ENTRY(#t "_SEND_LAST", (x) | SND | EN | CMP),                 \
	[t | EMU_OP_SEND_LAST_IMM] = ENTRY(#t "_SEND_LAST_WITH_IMMEDIATE",                     \
					   (x) | SND | EN | CMP | IMM),                        \
	[t | EMU_OP_SEND_ONLY] = ENTRY(#t "_SEND_ONLY", (x) | SND | ON | RECV | CMP),          \
	[t | EMU_OP_SEND_ONLY_IMM] = ENTRY(#t "_SEND_ONLY_WITH_IMMEDIATE",                     \
					   (x) | SND | ON | RECV | CMP | IMM)
#define WRITE_OPS(t, x)                                                                        \
	[t | EMU_OP_WRITE_FIRST] = ENTRY(#t "_RDMA_WRITE_FIRST", (x) | WR | ST | EMU_PKT_RETH), \
	[t | EMU_OP_WRITE_MIDDLE] = ENTRY(#t "_RDMA_WRITE_MIDDLE", (x) | WR | MI),             \
	[t | EMU_OP_WRITE_LAST] = ENTRY(#t "_RDMA_WRITE_LAST", (x) | WR | EN),                 \
	[t | EMU_OP_WRITE_LAST_IMM] = ENTRY(#t "_RDMA_WRITE_LAST_WITH_IMMEDIATE",              \
					    (x) | WR | EN | IMM | RECV | CMP),                 \
	[t | EMU_OP_WRITE_ONLY] = ENTRY(#t "_RDMA_WRITE_ONLY", (x) | WR | ON | EMU_PKT_RETH),  \
	[t | EMU_OP_WRITE_ONLY_IMM] = ENTRY(#t "_RDMA_WRITE_ONLY_WITH_IMMEDIATE",              \
					    (x) | WR | ON | EMU_PKT_RETH | IMM | RECV | CMP)
/* Reads, atomics and their responses: RC and RD only. */
#define RELIABLE_OPS(t, xq, xs)                                                                  \
	[t | EMU_OP_READ_REQ] = ENTRY(#t "_RDMA_READ_REQUEST",                                   \
				      (xq) | RQ | EMU_PKT_READ | ON | EMU_PKT_RETH),             \
	[t | EMU_OP_READ_RESP_FIRST] = ENTRY(#t "_RDMA_READ_RESPONSE_FIRST",                     \
					     (xs) | RS | P | ST | EMU_PKT_AETH),                 \
	[t | EMU_OP_READ_RESP_MIDDLE] = ENTRY(#t "_RDMA_READ_RESPONSE_MIDDLE", (xs) | RS | P | MI), \
	[t | EMU_OP_READ_RESP_LAST] = ENTRY(#t "_RDMA_READ_RESPONSE_LAST",                       \
					    (xs) | RS | P | EN | EMU_PKT_AETH),                  \
	[t | EMU_OP_READ_RESP_ONLY] = ENTRY(#t "_RDMA_READ_RESPONSE_ONLY",                       \
					    (xs) | RS | P | ON | EMU_PKT_AETH),                  \
	[t | EMU_OP_ACK] = ENTRY(#t "_ACKNOWLEDGE", (xs) | RS | ON | EMU_PKT_AETH),               \
	[t | EMU_OP_ATOMIC_ACK] = ENTRY(#t "_ATOMIC_ACKNOWLEDGE",                                \
					(xs) | RS | ON | EMU_PKT_AETH | EMU_PKT_ATMACK),         \
	[t | EMU_OP_CMP_SWAP] = ENTRY(#t "_COMPARE_SWAP",                                        \
				      (xq) | RQ | EMU_PKT_ATOMIC | ON | EMU_PKT_ATMETH),         \
	[t | EMU_OP_FETCH_ADD] = ENTRY(#t "_FETCH_ADD",                                          \
				       (xq) | RQ | EMU_PKT_ATOMIC | ON | EMU_PKT_ATMETH)

/* The transport names as the table spells them (and as Wireshark does, bar its spacing). */
#define RC EMU_OP_RC
#define UC EMU_OP_UC
#define RD EMU_OP_RD
#define UD EMU_OP_UD

const struct emu_pkt_opcode_info emu_pkt_opcode[256] = {
	SEND_OPS(RC, 0),
	WRITE_OPS(RC, 0),
	RELIABLE_OPS(RC, 0, 0),
	[RC | EMU_OP_SEND_LAST_INV] = ENTRY("RC_SEND_LAST_WITH_INVALIDATE",
					    SND | EN | CMP | EMU_PKT_IETH),
	[RC | EMU_OP_SEND_ONLY_INV] = ENTRY("RC_SEND_ONLY_WITH_INVALIDATE",
					    SND | ON | RECV | CMP | EMU_PKT_IETH),

	SEND_OPS(UC, 0),
	WRITE_OPS(UC, 0),

	/* RD is decoded and built so captures can hold it, but no QP type here speaks it. */
	SEND_OPS(RD, RD_REQ),
	WRITE_OPS(RD, RD_REQ),
	RELIABLE_OPS(RD, RD_REQ, RD_RSP),
	[RD | EMU_OP_RESYNC] = ENTRY("RD_RESYNC", RD_REQ | RQ | ON),

	[UD | EMU_OP_SEND_ONLY] = ENTRY("UD_SEND_ONLY", EMU_PKT_DETH | SND | ON | RECV | CMP),
	[UD | EMU_OP_SEND_ONLY_IMM] = ENTRY("UD_SEND_ONLY_WITH_IMMEDIATE",
					    EMU_PKT_DETH | SND | ON | RECV | CMP | IMM),

	/* The CNP's 16 reserved bytes are counted in its length: it carries no data. */
	[EMU_OP_CNP] = { .name = "CNP", .mask = EMU_PKT_CNP | ON,
			 .length = EMU_BTH_LEN + EMU_CNP_RSVD_LEN,
			 .offset = { [EMU_PKT_H_PAYLOAD] = EMU_BTH_LEN + EMU_CNP_RSVD_LEN } },
};

const char *emu_pkt_opcode_name(uint8_t op)
{
	return emu_pkt_opcode[op].name ? emu_pkt_opcode[op].name : "UNKNOWN";
}

const char *emu_pkt_hdr_name(enum emu_pkt_hdr h)
{
	static const char *const names[EMU_PKT_H_NUM] = {
		[EMU_PKT_H_RDETH] = "RDETH", [EMU_PKT_H_DETH] = "DETH",
		[EMU_PKT_H_RETH] = "RETH",   [EMU_PKT_H_ATMETH] = "AtomicETH",
		[EMU_PKT_H_AETH] = "AETH",   [EMU_PKT_H_ATMACK] = "AtomicAckETH",
		[EMU_PKT_H_IMMDT] = "ImmDt", [EMU_PKT_H_IETH] = "IETH",
		[EMU_PKT_H_PAYLOAD] = "payload",
	};

	return (unsigned)h < EMU_PKT_H_NUM ? names[h] : "?";
}
