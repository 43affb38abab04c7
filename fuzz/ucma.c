/* Fuzz target: the rdma_cm command decoder as a hostile process reaches it: rdma_ucm_*
 * commands (the kernel's UAPI layouts) in the UCMA_WRITE and UCMA_POST records of an rdma_cm
 * file's command ring, decoded by the daemon (emu/daemon/ucma_srv.c) and run by the emulated
 * kernel (emu/rdma_cm/ucma*.c, cma*.c). Two files are open, one on host A and one on host B of
 * fixtures/rxe-ref2.fabric, so that ids of one can resolve, connect to and join with the
 * other's. The harness frames each command as a well-behaved client does (emu/link/ucma_proto.h:
 * in, out and opt sizes that agree), so every byte the fuzzer changes is the command's.
 *
 * Input: commands, each one byte of op (bit 0 the file: A or B; bits 1-2: 0 UCMA_WRITE,
 * 1 UCMA_POST, 2 UCMA_CONSUMED, 3 the clock moves; bits 3-7 the command number for a write
 * or post) and its arguments:
 *   write:    u16 out (the response size), u16 length, that many command bytes (after the
 *             header), u16 option length, the option's bytes
 *   post:     u32 flags, u32 val, u16 length, command bytes
 *   consumed: u32 seq, u32 count
 *   clock:    u8 milliseconds (x 16) of virtual time pass
 * After the input both files close (the kernel's ucma_close: every id destroyed) and the
 * clock runs 30 virtual seconds, so that the next input starts from a quiet fabric. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_user_cm.h>

#include "emu/link/proto.h"
#include "emu/link/ucma_proto.h"
#include "emu/sim/clock.h"
#include "emu/sim/engine.h"
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

static void open_file(unsigned client, const char *node)
{
	static struct emu_dmsg_hello h;

	memset(&h, 0, sizeof(h));
	snprintf(h.node, sizeof(h.node), "%s", node);
	snprintf(h.fabric, sizeof(h.fabric), "%s", fzd_fabric_path());
	h.pid = getpid(); /* the daemon believes no other (emu/daemon/peer.c) */
	h.flags = EMU_DPROTO_VIRTUAL_TIME;
	fzd_send(client, NULL, EMU_DMSG_UCMA_OPEN, 0, 0, &h, sizeof(h));
	fzd_turn();
	/* every input starts from a daemon with both files closed: a refusal here means that
	 * the harness no longer opens files as the daemon wants, and no command would reach
	 * the decoder */
	if (!fzd_attached(client))
		abort();
}

static void command(unsigned client, uint8_t op, struct fuzz_in *in)
{
	static uint8_t body[sizeof(struct emu_ducma_write) + sizeof(struct rdma_ucm_cmd_hdr) +
			    EMU_DUCMA_MAX_IN + EMU_DUCMA_MAX_OPT];
	struct rdma_ucm_cmd_hdr hdr = { .cmd = op >> 3 };
	struct emu_ducma_write w;
	struct emu_ducma_post p;
	const uint8_t *cmd, *opt;
	size_t len, olen;
	uint8_t *at;

	switch (op >> 1 & 3) {
	case 0:
		w.out = fuzz_u16(in) % (EMU_DUCMA_MAX_OUT + 1);
		cmd = fuzz_take(in, fuzz_u16(in) % (EMU_DUCMA_MAX_IN + 1), &len);
		opt = fuzz_take(in, fuzz_u16(in) % (EMU_DUCMA_MAX_OPT + 1), &olen);
		w.in = (uint32_t)(sizeof(hdr) + len);
		w.opt = (uint32_t)olen;
		hdr.in = (uint16_t)len;
		hdr.out = (uint16_t)w.out;
		at = body;
		memcpy(at, &w, sizeof(w));
		memcpy(at += sizeof(w), &hdr, sizeof(hdr));
		memcpy(at += sizeof(hdr), cmd, len);
		memcpy(at += len, opt, olen);
		fzd_ring(client, EMU_DMSG_UCMA_WRITE, 0, 0, 0, body, (size_t)(at + olen - body));
		break;
	case 1:
		p.flags = fuzz_u32(in);
		p.val = fuzz_u32(in);
		p.ret = 0;
		cmd = fuzz_take(in, fuzz_u16(in) % (EMU_DUCMA_MAX_IN + 1), &len);
		p.in = (uint32_t)(sizeof(hdr) + len);
		hdr.in = (uint16_t)len;
		at = body;
		memcpy(at, &p, sizeof(p));
		memcpy(at += sizeof(p), &hdr, sizeof(hdr));
		memcpy(at += sizeof(hdr), cmd, len);
		fzd_ring(client, EMU_DMSG_UCMA_POST, 0, 0, 0, body, (size_t)(at + len - body));
		break;
	case 2:
		w.in = fuzz_u32(in);
		w.out = fuzz_u32(in);
		fzd_ring(client, EMU_DMSG_UCMA_CONSUMED, 0, w.in, w.out, NULL, 0);
		break;
	default:
		fzd_advance((uint64_t)fuzz_u8(in) * 16 * EMU_NSEC_PER_MSEC);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	open_file(0, "A");
	open_file(1, "B");
	while (in.n) {
		uint8_t op = fuzz_u8(&in);

		command(op & 1, op, &in);
		fzd_turn();
	}
	fzd_reset(false);
	fzd_advance(30 * EMU_NSEC_PER_SEC);
	fzd_turn();
	return 0;
}
