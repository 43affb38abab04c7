/* Writes SA requests and the fake SA's answers on fixtures/ib.fabric as IB UD SEND_ONLY
 * packets to/from QP1 (LRH / BTH / DETH, Q_Key 0x80010000) into DIR/sa-user0.pcap (DLT_USER0,
 * for sa-tshark.sh): PathRecord Get + GetResp, PathRecord GetTable + GetTableResp, MCMember
 * join + response, ServiceRecord Set + response, and an error answer. */
#include <pcap/dlt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/pcap.h"
#include "emu/hca/pkt.h"
#include "emu/ib/tests/sa_test.h"

static unsigned n;

static int put(struct emu_pcap *p, uint16_t slid, uint16_t dlid, const uint8_t *mad)
{
	struct emu_pkt_addr a = { .link_layer = EMU_LL_INFINIBAND, .slid = slid, .dlid = dlid };
	struct emu_bth bth = { .opcode = EMU_OP_UD | EMU_OP_SEND_ONLY, .pkey = EMU_PKEY_DEFAULT,
			       .dqpn = 1, .psn = n };
	struct emu_pkt_ext x = { .deth = { .qkey = EMU_QP1_QKEY, .sqpn = 1 } };
	uint8_t buf[512];
	ssize_t len = emu_pkt_build(buf, sizeof(buf), &a, &bth, &x, mad, EMU_MAD_LEN, NULL);

	if (len < 0 || emu_pcap_write(p, (uint64_t)++n * 1000, buf, (size_t)len))
		return -1;
	return 0;
}

/* The request from ib-a (LID 2) to the SM (LID 1), and every RMPP segment of the answer. */
static int exchange(struct emu_pcap *p, struct emu_sa *sa, const uint8_t *req, const char *what)
{
	uint8_t *r, seg[EMU_MAD_LEN];
	size_t len;

	if (put(p, 2, 1, req) || emu_sa_handle(sa, req, EMU_MAD_LEN, &r, &len))
		return -1;
	if (r[3] == EMU_MAD_METHOD_GET_TABLE_RESP) {
		for (unsigned s = 1; s <= emu_sa_rmpp_nsegs(len); s++)
			if (emu_sa_rmpp_segment(r, len, s, seg) || put(p, 1, 2, seg))
				return free(r), -1;
	} else if (put(p, 1, 2, r)) {
		return free(r), -1;
	}
	printf("%s %s %s\n", what, emu_mad_method_name(r[3]),
	       emu_mad_status_name(emu_be16_get(r + 4)));
	free(r);
	return 0;
}

int main(int argc, char **argv)
{
	char path[1024];
	struct emu_error err;
	struct emu_fabric *f;
	struct emu_sa *sa;
	struct emu_pcap *p;
	uint8_t mad[EMU_MAD_LEN];
	int ret = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: sa_gen FIXTURES-DIR OUT-DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/ib.fabric", argv[1]);
	f = emu_fabric_load(path, &err);
	if (!f) {
		fprintf(stderr, "%s:%u: %s\n", err.file, err.line, err.msg);
		return 1;
	}
	sa = emu_sa_new(f, NULL);
	snprintf(path, sizeof(path), "%s/sa-user0.pcap", argv[2]);
	p = sa ? emu_pcap_open_dlt(path, EMU_LL_INFINIBAND, DLT_USER0) : NULL;
	if (!p) {
		emu_sa_free(sa);
		emu_fabric_free(f);
		return 1;
	}
	{
		struct emu_sa_path_rec q = { 0 };

		gid_of(q.sgid, 0x0002c90300000a01ull);
		gid_of(q.dgid, 0x0002c90300000b01ull);
		q.numb_path = 1;
		q.reversible = 1;
		sa_req(mad, EMU_MAD_METHOD_GET, 0x100, &emu_sa_path_rec_desc,
		       EMU_PR_COMP_SGID | EMU_PR_COMP_DGID | EMU_PR_COMP_NUMB_PATH |
			       EMU_PR_COMP_REVERSIBLE,
		       &q);
		ret |= exchange(p, sa, mad, "PathRecord");
		sa_req(mad, EMU_MAD_METHOD_GET_TABLE, 0x101, &emu_sa_path_rec_desc, 0, &q);
		ret |= exchange(p, sa, mad, "PathRecordTable");
	}
	{
		struct emu_sa_mcmember_rec q = { 0 };

		gid_of(q.port_gid, 0x0002c90300000a01ull);
		q.qkey = 0x1234;
		q.pkey = 0xffff;
		q.join_state = 1;
		sa_req(mad, EMU_MAD_METHOD_SET, 0x102, &emu_sa_mcmember_rec_desc,
		       EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_QKEY |
			       EMU_MCR_COMP_PKEY | EMU_MCR_COMP_SL | EMU_MCR_COMP_FLOW_LABEL |
			       EMU_MCR_COMP_TCLASS | EMU_MCR_COMP_JOIN_STATE,
		       &q);
		ret |= exchange(p, sa, mad, "MCMemberRecord");
	}
	{
		struct emu_sa_service_rec q = { 0 };

		q.id = 0x1000000000000001ull;
		gid_of(q.gid, 0x0002c90300000a01ull);
		q.pkey = 0xffff;
		q.lease = EMU_SR_LEASE_INFINITE;
		strcpy((char *)q.name, "rdmaemu");
		sa_req(mad, EMU_MAD_METHOD_SET, 0x103, &emu_sa_service_rec_desc,
		       EMU_SR_COMP_ID | EMU_SR_COMP_GID | EMU_SR_COMP_PKEY | EMU_SR_COMP_NAME,
		       &q);
		ret |= exchange(p, sa, mad, "ServiceRecord");
	}
	{
		struct emu_sa_path_rec q = { 0 };

		gid_of(q.sgid, 0x0002c90300000a01ull);
		gid_of(q.dgid, 0x99);
		sa_req(mad, EMU_MAD_METHOD_GET, 0x104, &emu_sa_path_rec_desc,
		       EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q);
		ret |= exchange(p, sa, mad, "PathRecordBadGid");
	}
	ret |= emu_pcap_close(p);
	emu_sa_free(sa);
	emu_fabric_free(f);
	return ret ? 1 : 0;
}
