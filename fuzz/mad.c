/* Fuzz target: MADs a hostile host sends to the others' QP1 on fixtures/ib.fabric: the SA on
 * the switch's management port (SA records, RMPP, ServiceRecord leases, MCMember joins), the
 * CM agents of the other hosts (REQ..DREP, SIDR, LAP, MRA), their SA clients (unsolicited
 * responses) and the MAD layer below them all (emu/ib/gsi*.c). The harness puts each MAD in a
 * valid UD SEND_ONLY packet to QP1 (LRH, BTH, DETH with the GSI Q_Key, ICRC, VCRC), so that
 * every byte the fuzzer changes is a MAD byte, and sends it from a host port onto the wire.
 *
 * Input: records of one selector byte and one MAD of 256 bytes (a short last one is padded
 * with zeros). Selector: bits 0-1 the sending host (ib-a, ib-b, ib-c; 3 is ib-a), bits 2-3 the
 * destination LID - 1 (1: the switch and its SM, 2-4: the hosts), bit 4 a GRH, bits 5-7 the
 * virtual microseconds to let pass before the next record (x 64). After the last record the
 * clock runs 30 virtual seconds, so that every retry, RMPP window and timeout has fired and
 * the next input starts from a quiet fabric. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/hca/pkt.h"
#include "emu/ib/cm_host.h"
#include "emu/ib/mad.h"
#include "emu/ib/sa_agent.h"
#include "emu/net/neigh.h"
#include "emu/sim/clock.h"
#include "emu/sim/engine.h"
#include "emu/sim/fabric.h"
#include "fuzz/fuzz_env.h"

#define REC_LEN (1 + EMU_MAD_LEN)

static struct emu_engine *eng;
static const struct emu_fabric *fab;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	if (fuzz_attach("ib.fabric", "ib-a"))
		abort();
	eng = emu_engine_get();
	emu_engine_lock(eng);
	emu_engine_set_quiesce_ns(eng, 0);
	fab = emu_engine_fabric(eng);
	/* every host's MAD layer, CM agent and the SA up front, as rdmaemud starts them
	 * (emu/daemon/stacks.c): in a process alone they would start on first use only */
	if (!emu_neigh_get(eng) || emu_sa_agent_start(eng))
		abort();
	for (size_t h = 0; h < fab->nhosts; h++)
		if (!emu_cm_host_agent(eng, h, 0))
			abort();
	emu_engine_unlock(eng);
	return 0;
}

static void send_mad(uint8_t sel, const uint8_t *mad)
{
	static const uint8_t gid_pfx[8] = { 0xfe, 0x80 };
	size_t host = (sel & 3) % 3;
	const struct emu_port *p = &fab->hosts[host].devices[0].ports[0];
	struct emu_pkt_addr a = { .link_layer = EMU_LL_INFINIBAND };
	struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY, .pkey = 0xffff, .dqpn = 1 };
	struct emu_pkt_ext ext = { .deth = { .qkey = EMU_QP1_QKEY, .sqpn = 1 } };
	uint8_t frame[512];
	ssize_t len;

	a.slid = p->lid;
	a.dlid = (uint16_t)(((sel >> 2) & 3) + 1);
	a.grh = sel & 0x10;
	memcpy(a.sgid, gid_pfx, 8);
	for (int i = 0; i < 8; i++)
		a.sgid[8 + i] = (uint8_t)(p->port_guid >> (56 - 8 * i));
	memcpy(a.dgid, a.sgid, 16);
	len = emu_pkt_build(frame, sizeof(frame), &a, &bth, &ext, mad, EMU_MAD_LEN, NULL);
	if (len < 0)
		abort();
	emu_engine_port_send(eng, host, 0, 1, frame, (size_t)len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	emu_engine_lock(eng);
	for (size_t off = 0; off < size; off += REC_LEN) {
		uint8_t mad[EMU_MAD_LEN] = { 0 };
		size_t n = size - off - 1 < EMU_MAD_LEN ? size - off - 1 : EMU_MAD_LEN;

		if (size - off < 2)
			break;
		memcpy(mad, data + off + 1, n);
		send_mad(data[off], mad);
		emu_engine_advance(eng, (uint64_t)(data[off] >> 5) * 64 * EMU_NSEC_PER_USEC);
	}
	emu_engine_advance(eng, 30 * EMU_NSEC_PER_SEC);
	emu_engine_unlock(eng);
	return 0;
}
