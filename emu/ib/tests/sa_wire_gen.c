/* Runs SA queries from ib-a of fixtures/ib.fabric through the emulated wire with the capture
 * on ($RDMAEMU_PCAP = OUT-DIR/sa): PathRecord Get, PathRecord GetTable (an RMPP answer and the
 * client's ACK), MCMemberRecord join, ServiceRecord Set and Get, and a BUSY answer. The frames
 * in OUT-DIR/sa-ib.pcap are the ones the switch carried, for sa-wire-tshark.sh. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/tests/sa_test.h"
#include "emu/sim/engine.h"
#include "emu/sim/process.h"
#include "emu/ib/sa_client.h"
#include "rdmaemu/ctl.h"

static int ndone, nfail;

static void cb(struct emu_sa_query *q, int status, uint16_t mad_status, const void *recs,
	       size_t n, size_t rec_size, void *ctx)
{
	(void)q, (void)recs, (void)rec_size;
	printf("%s: status %d mad status 0x%04x records %zu\n", (const char *)ctx, status,
	       mad_status, n);
	ndone++;
	if (status && mad_status != 0x0001)
		nfail++;
}

static bool all_done(void *arg)
{
	return ndone == *(int *)arg;
}

int main(int argc, char **argv)
{
	static const struct emu_sa_client_port a = { 0, 0, 1 };
	char path[1200];
	struct emu_engine *e;
	struct emu_sa_path_rec pr = { 0 };
	struct emu_sa_mcmember_rec mc = { 0 };
	struct emu_sa_service_rec sr = { 0 };
	struct rdmaemu_sa_policy busy = { .response_delay_ns = 50000, .busy_next = 1 };
	int err = 0, want = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: sa_wire_gen FIXTURES-DIR OUT-DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/sa", argv[2]);
	setenv("RDMAEMU_PCAP", path, 1);
	snprintf(path, sizeof(path), "%s/ib.fabric", argv[1]);
	if (rdmaemu_ctl_attach(path, "ib-a") || !(e = emu_engine_get()))
		return 1;
	emu_engine_lock(e);
	gid_of(pr.sgid, 0x0002c90300000a01ull);
	gid_of(pr.dgid, 0x0002c90300000b01ull);
	pr.numb_path = 1;
	pr.reversible = 1;
	want++;
	emu_sa_path_query(e, &a, &pr,
			  EMU_PR_COMP_SGID | EMU_PR_COMP_DGID | EMU_PR_COMP_NUMB_PATH |
				  EMU_PR_COMP_REVERSIBLE,
			  false, NULL, cb, "PathRecord Get", &err);
	emu_engine_wait(e, "sa", all_done, &want, EMU_ENGINE_FOREVER);
	want++;
	emu_sa_path_query(e, &a, &pr, EMU_PR_COMP_SGID, true, NULL, cb, "PathRecord GetTable",
			  &err);
	emu_engine_wait(e, "sa", all_done, &want, EMU_ENGINE_FOREVER);
	gid_of(mc.port_gid, 0x0002c90300000a01ull);
	mc.qkey = 0x1234;
	mc.pkey = 0xffff;
	mc.join_state = 1;
	want++;
	emu_sa_mcmember_join(e, &a, &mc,
			     EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_QKEY |
				     EMU_MCR_COMP_PKEY | EMU_MCR_COMP_SL | EMU_MCR_COMP_FLOW_LABEL |
				     EMU_MCR_COMP_TCLASS | EMU_MCR_COMP_JOIN_STATE,
			     NULL, cb, "MCMemberRecord Set", &err);
	emu_engine_wait(e, "sa", all_done, &want, EMU_ENGINE_FOREVER);
	sr.id = 0x1000000000000001ull;
	gid_of(sr.gid, 0x0002c90300000a01ull);
	sr.pkey = 0xffff;
	sr.lease = EMU_SR_LEASE_INFINITE;
	strcpy((char *)sr.name, "rdmaemu");
	want++;
	emu_sa_service_query(e, &a, EMU_MAD_METHOD_SET, &sr,
			     EMU_SR_COMP_ID | EMU_SR_COMP_GID | EMU_SR_COMP_PKEY |
				     EMU_SR_COMP_NAME,
			     NULL, cb, "ServiceRecord Set", &err);
	emu_engine_wait(e, "sa", all_done, &want, EMU_ENGINE_FOREVER);
	want++;
	emu_sa_service_query(e, &a, EMU_MAD_METHOD_GET, &sr, EMU_SR_COMP_ID, NULL, cb,
			     "ServiceRecord Get", &err);
	emu_engine_wait(e, "sa", all_done, &want, EMU_ENGINE_FOREVER);
	emu_engine_unlock(e);
	if (rdmaemu_ctl_sa_policy(&busy, NULL))
		return 1;
	emu_engine_lock(e);
	want++;
	emu_sa_path_query(e, &a, &pr, EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, false, NULL, cb,
			  "PathRecord Get (BUSY)", &err);
	emu_engine_wait(e, "sa", all_done, &want, EMU_ENGINE_FOREVER);
	emu_engine_unlock(e);
	emu_engine_reset(); /* closes the captures */
	return ndone == want && !nfail && !err ? 0 : 1;
}
