/* Fuzz target: the daemon protocol (emu/link/proto.h, emu/link/ucma_ring.h) from hostile
 * processes: every message type with hostile bodies, in any order, from up to four clients
 * that may name another host or pid than their own, break the header, lie in their command
 * ring or hang up at any point (fuzz/daemon_harness.h runs rdmaemud's own handlers).
 *
 * Input: operations, each one byte of op (bits 0-1 the client, bits 2-4 the kind) and its
 * arguments:
 *   0 message:     u16 type, u32 arg, u32 pad, u16 length, body
 *   1 raw header:  16 header bytes, u16 length, body
 *   2 HELLO or UCMA_OPEN of the right shape: u8 (bit 0 UCMA_OPEN, bit 1 a wrong fabric,
 *                  bits 2-3 the node: A, B, a name from the input, none, bit 4 the pid
 *                  from the input, else the process's own), [u8 length, name], i32 pid,
 *                  u32 flags, u64 sent
 *   3 ring record: u16 type, u16 seq16, u32 arg, u32 pad, u16 length, body
 *   4 ring head:   u64 head
 *   5 hang up
 *   6, 7 the main loop's turn only
 * The main loop's turn follows every operation; after the input every client hangs up, and a
 * daemon whose fabric an input changed (DEVICE_REMOVE, LINK_SET, CM_FAULT, also in a raw
 * header) is built again. A connection's peer is this process (SO_PEERCRED), so only a claim
 * of getpid() attaches; the input's pid is another process's, refused. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/link/proto.h"
#include "fuzz/daemon_harness.h"
#include "fuzz/fuzz_env.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	fzd_init();
	return 0;
}

static void hello(unsigned client, struct fuzz_in *in)
{
	static struct emu_dmsg_hello h;
	uint8_t how = fuzz_u8(in);
	const uint8_t *name;
	size_t n;

	memset(&h, 0, sizeof(h));
	switch (how >> 2 & 3) {
	case 0:
		strcpy(h.node, "A");
		break;
	case 1:
		strcpy(h.node, "B");
		break;
	case 2:
		name = fuzz_take(in, fuzz_u8(in) % (sizeof(h.node) + 1), &n);
		memcpy(h.node, name, n);
		break;
	default:
		break;
	}
	snprintf(h.fabric, sizeof(h.fabric), "%s%s", fzd_fabric_path(), how & 2 ? "x" : "");
	h.pid = (int32_t)fuzz_u32(in);
	if (!(how & 0x10))
		h.pid = getpid();
	h.flags = fuzz_u32(in);
	h.sent = fuzz_u32(in);
	h.sent |= (uint64_t)fuzz_u32(in) << 32;
	fzd_send(client, NULL, how & 1 ? EMU_DMSG_UCMA_OPEN : EMU_DMSG_HELLO, 0, 0, &h,
		 sizeof(h));
}

/* The messages after which the harness builds the daemon again. */
static bool changes_fabric(uint16_t type)
{
	return type == EMU_DMSG_DEVICE_REMOVE || type == EMU_DMSG_LINK_SET ||
	       type == EMU_DMSG_CM_FAULT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	bool changed = false;

	while (in.n) {
		uint8_t op = fuzz_u8(&in), hdr[16];
		struct emu_dmsg rawh;
		unsigned c = op & 3;
		uint16_t type, seq;
		uint32_t arg, pad;
		const uint8_t *body, *raw;
		size_t len, got;
		uint64_t head;

		switch (op >> 2 & 7) {
		case 0:
			type = fuzz_u16(&in);
			arg = fuzz_u32(&in);
			pad = fuzz_u32(&in);
			body = fuzz_take(&in, fuzz_u16(&in), &len);
			changed |= changes_fabric(type);
			fzd_send(c, NULL, type, arg, pad, body, len);
			break;
		case 1:
			raw = fuzz_take(&in, sizeof(hdr), &got);
			memset(hdr, 0, sizeof(hdr));
			memcpy(hdr, raw, got);
			body = fuzz_take(&in, fuzz_u16(&in), &len);
			/* rebuilt only for a type the daemon reads as one of those: a
			 * rebuild is the costliest step of an input */
			memcpy(&rawh, hdr, sizeof(rawh));
			changed |= changes_fabric(rawh.type);
			fzd_send(c, hdr, 0, 0, 0, body, len);
			break;
		case 2:
			hello(c, &in);
			break;
		case 3:
			type = fuzz_u16(&in);
			seq = fuzz_u16(&in);
			arg = fuzz_u32(&in);
			pad = fuzz_u32(&in);
			body = fuzz_take(&in, fuzz_u16(&in), &len);
			fzd_ring(c, type, seq, arg, pad, body, len);
			break;
		case 4:
			head = fuzz_u32(&in);
			head |= (uint64_t)fuzz_u32(&in) << 32;
			fzd_ring_head(c, head);
			break;
		case 5:
			fzd_close(c);
			break;
		default:
			break;
		}
		fzd_turn();
	}
	fzd_reset(changed);
	return 0;
}
