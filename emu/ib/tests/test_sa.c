/* The fake SA as a request -> response engine (emu/ib/sa.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "emu/sim/tests/fabric_test.h"
#include "emu/hca/pkt.h"
#include "emu/ib/tests/sa_test.h"

struct fx {
	struct emu_fabric *f;
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_sa *sa;
};

static void fx_open(struct fx *x, const char *fixture, const char *text)
{
	struct emu_error err;

	x->f = text ? emu_fabric_load_text(text, "test", fixture_dir(), &err)
		    : emu_fabric_load(fixture_path(fixture), &err);
	if (!x->f)
		fail_msg("%s:%u: %s", err.file, err.line, err.msg);
	emu_clock_init(&x->clk, 0);
	x->t = emu_topology_build(x->f, &x->clk, NULL, &err);
	assert_non_null(x->t);
	x->sa = emu_sa_new(x->f, x->t);
	assert_non_null(x->sa);
}

static void fx_close(struct fx *x)
{
	emu_sa_free(x->sa);
	assert_int_equal(emu_topology_free(x->t), 0);
	emu_clock_fini(&x->clk);
	emu_fabric_free(x->f);
}

/* Sends one request, returns the response status; the response is left in out, len. */
static uint16_t ask(struct fx *x, uint8_t method, const struct emu_mad_record_desc *d,
		    uint64_t mask, const void *rec, uint8_t **out, size_t *len)
{
	uint8_t mad[EMU_MAD_LEN];

	sa_req(mad, method, 0x1234, d, mask, rec);
	assert_int_equal(emu_sa_handle(x->sa, mad, sizeof(mad), out, len), 0);
	assert_int_equal((*out)[3], method == EMU_MAD_METHOD_GET_TABLE ? 0x92
				    : method == EMU_MAD_METHOD_DELETE  ? 0x95
									 : 0x81);
	assert_int_equal(emu_be64_get(*out + 8), 0x1234);
	return emu_be16_get(*out + 4);
}

static size_t nrecs(const uint8_t *resp, size_t len, const struct emu_mad_record_desc *d)
{
	return (len - EMU_SA_HDR_LEN) / (d->attr_offset * 8u);
}

#define A_GUID 0x0002c90300000a01ull
#define B_GUID 0x0002c90300000b01ull

static void path_get_exact_bytes(void **state)
{
	struct fx x;
	struct emu_sa_path_rec q = { 0 };
	uint8_t *r;
	size_t len;
	static const uint8_t want[64] = {
		0, 0, 0, 0, 0, 0, 0, 0, /* ServiceID: not asked, 0 */
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0, 0, 0x0b, 0x01, /* DGID */
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0, 0, 0x0a, 0x01, /* SGID */
		0x00, 0x03, 0x00, 0x02, /* DLID 3 (ib-b), SLID 2 (ib-a) */
		0, 0, 0, 0,		/* RawTraffic 0, FlowLabel 0, HopLimit 0 (local subnet) */
		0x00,			/* TClass */
		0x80,			/* Reversible 1, NumbPath 0: as OpenSM answers */
		0xff, 0xff,		/* P_Key: the default partition both ports hold */
		0x00, 0x00,		/* QosClass 0, SL 0 (sm sl=0) */
		0x85,			/* MTUSelector 2 (exactly), MTU 5 = 4096 (both ports) */
		0x87,			/* RateSelector 2, Rate 7 = 40 Gb/s (4x QDR links) */
		0x92,			/* PacketLifeTimeSelector 2, 18 (sm packet-lifetime=18) */
		0x00,			/* Preference 0: the first (only) LID pair */
		0, 0, 0, 0, 0, 0,
	};

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	gid_of(q.sgid, A_GUID);
	gid_of(q.dgid, B_GUID);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q, &r, &len), 0);
	assert_int_equal(len, EMU_MAD_LEN);
	assert_int_equal(r[0], 1);
	assert_int_equal(r[1], 3);
	assert_int_equal(r[2], 2);
	assert_int_equal(emu_be16_get(r + 16), EMU_SA_ATTR_PATH_RECORD);
	assert_int_equal(emu_be16_get(r + 44), 8); /* AttributeOffset: 64 bytes */
	assert_int_equal(emu_be64_get(r + 48), EMU_PR_COMP_SGID | EMU_PR_COMP_DGID);
	assert_memory_equal(r + EMU_SA_HDR_LEN, want, 64);
	free(r);
	/* The same by LIDs. */
	memset(&q, 0, sizeof(q));
	q.slid = 2;
	q.dlid = 3;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     EMU_PR_COMP_SLID | EMU_PR_COMP_DLID, &q, &r, &len), 0);
	assert_memory_equal(r + EMU_SA_HDR_LEN, want, 64);
	free(r);
	fx_close(&x);
}

static void path_selectors(void **state)
{
	struct fx x;
	struct emu_sa_path_rec q = { 0 }, p;
	uint64_t base = EMU_PR_COMP_SGID | EMU_PR_COMP_DGID;
	uint8_t *r;
	size_t len;

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	gid_of(q.sgid, A_GUID);
	gid_of(q.dgid, B_GUID);
	/* MTU < 4096: OpenSM lowers it to 2048. */
	q.mtu_selector = EMU_SA_SEL_LT;
	q.mtu = 5;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     base | EMU_PR_COMP_MTU_SELECTOR | EMU_PR_COMP_MTU, &q, &r, &len), 0);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.mtu, 4);
	assert_int_equal(p.mtu_selector, 2);
	free(r);
	/* MTU > 4096: none. */
	q.mtu_selector = EMU_SA_SEL_GT;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     base | EMU_PR_COMP_MTU_SELECTOR | EMU_PR_COMP_MTU, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	/* Rate exactly 10 Gb/s on a 40 Gb/s path; rate > 40: none; largest: 40. */
	q.rate_selector = EMU_SA_SEL_EQ;
	q.rate = 3;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     base | EMU_PR_COMP_RATE_SELECTOR | EMU_PR_COMP_RATE, &q, &r, &len), 0);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.rate, 3);
	free(r);
	q.rate_selector = EMU_SA_SEL_GT;
	q.rate = 7;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     base | EMU_PR_COMP_RATE_SELECTOR | EMU_PR_COMP_RATE, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	q.rate_selector = EMU_SA_SEL_BEST;
	q.rate = 2;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     base | EMU_PR_COMP_RATE_SELECTOR | EMU_PR_COMP_RATE, &q, &r, &len), 0);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.rate, 7);
	free(r);
	/* Packet lifetime < 18 -> 17; SL and ServiceID taken from the request. */
	q.packet_life_time_selector = EMU_SA_SEL_LT;
	q.packet_life_time = 18;
	q.sl = 5;
	q.service_id = 0x0000000001060000ull | 0x106;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     base | EMU_PR_COMP_PKT_LIFE_SELECTOR | EMU_PR_COMP_PKT_LIFE |
				     EMU_PR_COMP_SL | EMU_PR_COMP_SERVICE_ID,
			     &q, &r, &len),
			 0);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.packet_life_time, 17);
	assert_int_equal(p.sl, 5);
	assert_int_equal(p.service_id, q.service_id);
	free(r);
	/* A DLID that contradicts the DGID: no records. */
	q.dlid = 4;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     base | EMU_PR_COMP_DLID, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	/* Unknown DGID: ERR_REQ_INVALID_GID (OpenSM). Missing destination: insufficient. */
	gid_of(q.dgid, 0x1234);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc, base, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID_GID));
	free(r);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc, EMU_PR_COMP_SGID, &q,
			     &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS));
	free(r);
	/* Unreachable destination (fault): no records; GetTable from A: B and C minus B. */
	gid_of(q.dgid, B_GUID);
	assert_int_equal(emu_sa_set_unreachable(x.sa, q.dgid, true), 0);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc, base, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_path_rec_desc,
			     EMU_PR_COMP_SGID, &q, &r, &len), 0);
	assert_int_equal(nrecs(r, len, &emu_sa_path_rec_desc), 2); /* A->A, A->C */
	free(r);
	fx_close(&x);
}

/* Two CAs with LMC 1 (two LIDs each) behind one switch; a third in another partition. */
static const char lmc_fabric[] =
	"seed 7\n"
	"sm lid=1 sl=3 packet-lifetime=16\n"
	"switch sw ports=8 lid=1\n"
	"host a\n  device mlx5_0 link=ib\n    port 1 lid=0x10 lmc=1 guid=0xa1 pkeys=0xffff,0x8001\n"
	"host b\n  device mlx5_0 link=ib\n    port 1 lid=0x20 lmc=1 guid=0xb1 active-mtu=2048\n"
	"host c\n  device mlx5_0 link=ib\n    port 1 lid=0x30 guid=0xc1 pkeys=0x8002\n"
	"link a/mlx5_0/1 sw/1 width=4x speed=EDR\n"
	"link b/mlx5_0/1 sw/2 width=4x speed=FDR\n"
	"link c/mlx5_0/1 sw/3\n";

static void path_numb_path_lmc(void **state)
{
	struct fx x;
	struct emu_sa_path_rec q = { 0 }, p;
	uint64_t m = EMU_PR_COMP_SGID | EMU_PR_COMP_DGID | EMU_PR_COMP_NUMB_PATH;
	uint8_t *r;
	size_t len;
	static const uint16_t want[4][3] = { /* slid, dlid, preference */
		{ 0x10, 0x20, 0 }, { 0x11, 0x21, 0 }, { 0x10, 0x21, 2 }, { 0x11, 0x20, 2 } };

	(void)state;
	fx_open(&x, NULL, lmc_fabric);
	gid_of(q.sgid, 0xa1);
	gid_of(q.dgid, 0xb1);
	q.numb_path = 4;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_path_rec_desc, m, &q, &r, &len),
			 0);
	assert_int_equal(nrecs(r, len, &emu_sa_path_rec_desc), 4);
	for (int i = 0; i < 4; i++) {
		emu_mad_record_unpack(&emu_sa_path_rec_desc, r + EMU_SA_HDR_LEN + 64 * i, &p);
		assert_int_equal(p.slid, want[i][0]);
		assert_int_equal(p.dlid, want[i][1]);
		assert_int_equal(p.preference, want[i][2]);
		assert_int_equal(p.mtu, 4);   /* b's active MTU 2048 */
		assert_int_equal(p.rate, 12); /* 4x FDR = 56 Gb/s, the slower link */
		assert_int_equal(p.sl, 3);
		assert_int_equal(p.packet_life_time, 16);
	}
	/* RMPP: one segment, PayloadLength = SA header + 4 records. */
	assert_int_equal(r[24], 1);
	assert_int_equal(r[25], 1);
	assert_int_equal(r[26] & 7, 7);
	assert_int_equal(emu_be32_get(r + 28), 1);
	assert_int_equal(emu_be32_get(r + 32), 20 + 4 * 64);
	assert_int_equal(emu_sa_rmpp_nsegs(len), 2);
	{
		uint8_t s1[EMU_MAD_LEN], s2[EMU_MAD_LEN];

		assert_int_equal(emu_sa_rmpp_segment(r, len, 1, s1), 0);
		assert_int_equal(emu_sa_rmpp_segment(r, len, 2, s2), 0);
		assert_int_equal(emu_sa_rmpp_segment(r, len, 3, s2), -EINVAL);
		assert_int_equal(s1[26] & 7, EMU_RMPP_FLAG_ACTIVE | EMU_RMPP_FLAG_FIRST);
		assert_int_equal(s2[26] & 7, EMU_RMPP_FLAG_ACTIVE | EMU_RMPP_FLAG_LAST);
		assert_int_equal(emu_be32_get(s1 + 32), 256 + 2 * 20);
		assert_int_equal(emu_be32_get(s2 + 28), 2);
		assert_int_equal(emu_be32_get(s2 + 32), 20 + 56);
		assert_memory_equal(s2 + EMU_SA_HDR_LEN, r + EMU_SA_HDR_LEN + 200, 56);
	}
	free(r);
	q.numb_path = 1;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_path_rec_desc, m, &q, &r, &len),
			 0);
	assert_int_equal(nrecs(r, len, &emu_sa_path_rec_desc), 1);
	free(r);
	/* P_Key: a and c share nothing (0x8001 vs 0x8002, 0xffff only on a) -> no record. */
	gid_of(q.dgid, 0xc1);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	/* A P_Key a has but b lacks. */
	gid_of(q.dgid, 0xb1);
	q.pkey = 0x8001;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     EMU_PR_COMP_SGID | EMU_PR_COMP_DGID | EMU_PR_COMP_PKEY, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	fx_close(&x);
}

static uint64_t mc_mask(void)
{
	return EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_QKEY | EMU_MCR_COMP_PKEY |
	       EMU_MCR_COMP_SL | EMU_MCR_COMP_FLOW_LABEL | EMU_MCR_COMP_TCLASS |
	       EMU_MCR_COMP_JOIN_STATE;
}

static void mcmember_join_leave(void **state)
{
	struct fx x;
	struct emu_sa_mcmember_rec q = { 0 }, p;
	uint8_t *r, mgid[16];
	size_t len;
	static const uint8_t bcast[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
					   0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t alloc0[16] = { 0xff, 0x12, 0xa0, 0x1b, 0xfe, 0x80, 0, 0,
					    0, 0, 0, 0, 0, 0, 0, 0 };

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	assert_int_equal(emu_sa_mcgroup_count(x.sa), 1);
	/* IPoIB joins the broadcast group: MLID 0xC000, Q_Key 0x0b1b, MTU 2048. */
	memcpy(q.mgid, bcast, 16);
	gid_of(q.port_gid, A_GUID);
	q.join_state = EMU_MC_JOIN_FULL;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc,
			     EMU_MCR_COMP_MGID | EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE,
			     &q, &r, &len), 0);
	emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.mlid, 0xc000);
	assert_int_equal(p.qkey, 0x0b1b);
	assert_int_equal(p.mtu, 4);
	assert_int_equal(p.join_state, 1);
	assert_int_equal(emu_be16_get(r + 44), 7); /* AttributeOffset: 52 bytes -> 7 words */
	free(r);
	/* A new group with MGID 0: allocated as OpenSM does; MLID 0xC001. */
	memset(q.mgid, 0, 16);
	q.qkey = 0x1234;
	q.pkey = 0xffff;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(), &q, &r,
			     &len), 0);
	emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_memory_equal(p.mgid, alloc0, 16);
	assert_int_equal(p.mlid, 0xc001);
	assert_int_equal(p.qkey, 0x1234);
	assert_int_equal(p.mtu, 5); /* every port of ib.fabric does 4096 */
	assert_int_equal(p.rate, 7);
	memcpy(mgid, p.mgid, 16);
	free(r);
	assert_int_equal(emu_sa_mcgroup_count(x.sa), 2);
	/* A send-only non-member cannot create a group ... */
	gid_of(q.port_gid, B_GUID);
	q.mgid[0] = 0xff;
	q.mgid[1] = 0x12;
	q.mgid[15] = 0x77;
	q.join_state = EMU_MC_JOIN_SEND_ONLY;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(), &q, &r,
			     &len), EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID));
	free(r);
	/* ... but joins an existing one; a wrong Q_Key is refused. */
	memcpy(q.mgid, mgid, 16);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(), &q, &r,
			     &len), 0);
	emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.join_state, EMU_MC_JOIN_SEND_ONLY);
	assert_int_equal(p.mlid, 0xc001);
	free(r);
	q.qkey = 0x9999;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(), &q, &r,
			     &len), EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID));
	free(r);
	/* Creating without Q_Key etc.: insufficient components. */
	memset(q.mgid, 0, 16);
	q.join_state = EMU_MC_JOIN_FULL;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc,
			     EMU_MCR_COMP_PORT_GID | EMU_MCR_COMP_JOIN_STATE, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS));
	free(r);
	/* GetTable by MGID: two members. */
	memcpy(q.mgid, mgid, 16);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_mcmember_rec_desc,
			     EMU_MCR_COMP_MGID, &q, &r, &len), 0);
	assert_int_equal(nrecs(r, len, &emu_sa_mcmember_rec_desc), 2);
	free(r);
	/* Both leave: the group goes; a rejoin recreates it with the same MLID. */
	q.join_state = EMU_MC_JOIN_SEND_ONLY;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_DELETE, &emu_sa_mcmember_rec_desc, mc_mask(), &q,
			     &r, &len), 0);
	free(r);
	gid_of(q.port_gid, A_GUID);
	q.join_state = EMU_MC_JOIN_FULL;
	q.qkey = 0x1234;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_DELETE, &emu_sa_mcmember_rec_desc, mc_mask(), &q,
			     &r, &len), 0);
	free(r);
	assert_int_equal(emu_sa_mcgroup_count(x.sa), 1);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_DELETE, &emu_sa_mcmember_rec_desc, mc_mask(), &q,
			     &r, &len), EMU_SA_STATUS(EMU_SA_ERR_REQ_INVALID));
	free(r);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(), &q, &r,
			     &len), 0);
	emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.mlid, 0xc001);
	free(r);
	fx_close(&x);
}

/* Every multicast LID taken (0xC000..0xFFFE, 16,383 groups with the broadcast one): the next
 * creation is refused with ERR_NO_RESOURCES; a group that goes frees its MLID, and the next
 * group takes it (the lowest free one). */
static void mcmember_mlids_run_out(void **state)
{
	struct fx x;
	struct emu_sa_mcmember_rec q = { 0 }, p;
	uint8_t *r, mgid[16] = { 0 };
	size_t len;

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	gid_of(q.port_gid, A_GUID);
	q.join_state = EMU_MC_JOIN_FULL;
	q.qkey = 0x1234;
	q.pkey = 0xffff;
	for (unsigned m = 0xc001; m <= 0xfffe; m++) {
		assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(),
				     &q, &r, &len), 0);
		emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
		assert_int_equal(p.mlid, m);
		if (m == 0xd234)
			memcpy(mgid, p.mgid, 16);
		free(r);
	}
	assert_int_equal(emu_sa_mcgroup_count(x.sa), 16383);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(), &q, &r,
			     &len), EMU_SA_STATUS(EMU_SA_ERR_NO_RESOURCES));
	free(r);
	memcpy(q.mgid, mgid, 16);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_DELETE, &emu_sa_mcmember_rec_desc, mc_mask(), &q,
			     &r, &len), 0);
	free(r);
	assert_int_equal(emu_sa_mcgroup_count(x.sa), 16382);
	memset(q.mgid, 0, 16);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(), &q, &r,
			     &len), 0);
	emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.mlid, 0xd234);
	free(r);
	fx_close(&x);
}

/* Groups found by MGID after leaves all over the table: a left group moves the last one into
 * its place and its MGID's neighbours in the SA's index back; every other group keeps its MLID
 * and answers by MGID, a left one is gone. */
static void mcmember_index_after_leaves(void **state)
{
	enum { N = 3000 };
	static uint8_t mgids[N][16];
	struct fx x;
	struct emu_sa_mcmember_rec q = { 0 }, p;
	uint8_t *r, a_gid[16];
	size_t len;
	uint16_t mlid;

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	gid_of(a_gid, A_GUID);
	memcpy(q.port_gid, a_gid, 16);
	q.join_state = EMU_MC_JOIN_FULL;
	q.qkey = 0x1234;
	q.pkey = 0xffff;
	for (unsigned i = 0; i < N; i++) {
		assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_mcmember_rec_desc, mc_mask(),
				     &q, &r, &len), 0);
		emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
		assert_int_equal(p.mlid, 0xc001 + i);
		memcpy(mgids[i], p.mgid, 16);
		free(r);
	}
	for (unsigned i = 0; i < N; i += 3) {
		memcpy(q.mgid, mgids[i], 16);
		assert_int_equal(ask(&x, EMU_MAD_METHOD_DELETE, &emu_sa_mcmember_rec_desc,
				     mc_mask(), &q, &r, &len), 0);
		free(r);
	}
	assert_int_equal(emu_sa_mcgroup_count(x.sa), 1 + N - N / 3);
	for (unsigned i = 0; i < N; i++) {
		mlid = 0;
		memcpy(q.mgid, mgids[i], 16);
		if (i % 3 == 0) {
			assert_int_equal(emu_sa_mcgroup_member(x.sa, mgids[i], a_gid, &mlid),
					 -ENOENT);
			assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_mcmember_rec_desc,
					     EMU_MCR_COMP_MGID, &q, &r, &len),
					 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
			free(r);
			continue;
		}
		assert_int_equal(emu_sa_mcgroup_member(x.sa, mgids[i], a_gid, &mlid),
				 EMU_MC_JOIN_FULL);
		assert_int_equal(mlid, 0xc001 + i);
		assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_mcmember_rec_desc,
				     EMU_MCR_COMP_MGID, &q, &r, &len), 0);
		emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, r + EMU_SA_HDR_LEN, &p);
		assert_memory_equal(p.mgid, mgids[i], 16);
		assert_int_equal(p.mlid, 0xc001 + i);
		free(r);
	}
	/* without an MGID, a query still lists every group's member */
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_mcmember_rec_desc,
			     EMU_MCR_COMP_QKEY, &q, &r, &len), 0);
	assert_int_equal(nrecs(r, len, &emu_sa_mcmember_rec_desc), N - N / 3);
	free(r);
	fx_close(&x);
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* emu_mad_record_comp_bits and emu_mad_bits_agree decide as emu_mad_record_match does, for
 * every record kind, on records that differ from the query in a few random bits, under random
 * component masks and skips (sub-byte fields, arrays, bits past the last field). */
static void record_comp_bits_as_match(void **state)
{
	const struct emu_mad_record_desc *descs[] = {
		&emu_sa_path_rec_desc, &emu_sa_mcmember_rec_desc, &emu_sa_service_rec_desc,
		&emu_sa_node_rec_desc, &emu_sa_portinfo_rec_desc, &emu_sa_sminfo_rec_desc,
	};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned agree = 0, differ = 0;

	(void)state;
	for (unsigned i = 0; i < 60000; i++) {
		const struct emu_mad_record_desc *d = descs[i % 6];
		uint8_t q[256], r[256], bits[256];
		uint64_t mask, skip;

		for (unsigned b = 0; b < d->wire_len; b++)
			q[b] = r[b] = (uint8_t)xorshift(&x);
		for (unsigned f = xorshift(&x) % 3; f; f--) {
			unsigned b = (unsigned)(xorshift(&x) % (d->wire_len * 8u));

			r[b / 8] ^= (uint8_t)(0x80u >> (b % 8));
		}
		mask = xorshift(&x); /* a quarter of the bits */
		mask &= xorshift(&x);
		skip = xorshift(&x);
		skip &= xorshift(&x) & xorshift(&x);
		emu_mad_record_comp_bits(d, mask, skip, bits);
		assert_int_equal(emu_mad_record_match(d, q, r, mask, skip),
				 emu_mad_bits_agree(q, r, bits, d->wire_len));
		if (emu_mad_record_match(d, q, r, mask, skip))
			agree++;
		else
			differ++;
	}
	assert_true(agree > 10000 && differ > 10000);
}

static void service_set_get_delete(void **state)
{
	struct fx x;
	struct emu_sa_service_rec q = { 0 }, p;
	uint8_t *r;
	size_t len;

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	q.id = 0x1000000000000001ull;
	gid_of(q.gid, A_GUID);
	q.pkey = 0xffff;
	q.lease = 10;
	strcpy((char *)q.name, "rdmaemu.test");
	q.data16[1] = 0xbeef;
	q.data64[1] = 0x1122334455667788ull;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_service_rec_desc,
			     EMU_SR_COMP_ID | EMU_SR_COMP_GID | EMU_SR_COMP_PKEY | EMU_SR_COMP_NAME,
			     &q, &r, &len), 0);
	free(r);
	assert_int_equal(emu_sa_service_count(x.sa), 1);
	/* Get by name. */
	struct emu_sa_service_rec byname = { 0 };

	strcpy((char *)byname.name, "rdmaemu.test");
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_service_rec_desc, EMU_SR_COMP_NAME,
			     &byname, &r, &len), 0);
	emu_mad_record_unpack(&emu_sa_service_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_memory_equal(&p, &q, sizeof(p));
	assert_int_equal(emu_be16_get(r + EMU_SA_HDR_LEN + 128 + 2), 0xbeef); /* data16[1] */
	free(r);
	/* By ServiceData16.1 alone; a different value matches nothing. */
	byname.data16[1] = 0xbeef;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_service_rec_desc,
			     EMU_SR_COMP_DATA16(1), &byname, &r, &len), 0);
	free(r);
	byname.data16[1] = 0xbeee;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_service_rec_desc,
			     EMU_SR_COMP_DATA16(1), &byname, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	/* The lease runs out after 10 s of virtual time. */
	emu_sa_set_time(x.sa, 9999999999ull);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_service_rec_desc, 0, &q, &r,
			     &len), 0);
	assert_int_equal(nrecs(r, len, &emu_sa_service_rec_desc), 1);
	free(r);
	emu_sa_set_time(x.sa, 10000000000ull);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_service_rec_desc, 0, &q, &r,
			     &len), 0);
	assert_int_equal(nrecs(r, len, &emu_sa_service_rec_desc), 0);
	free(r);
	/* Register again (indefinitely), delete, delete again. */
	q.lease = EMU_SR_LEASE_INFINITE;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_service_rec_desc,
			     EMU_SR_COMP_ID | EMU_SR_COMP_GID, &q, &r, &len), 0);
	free(r);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_DELETE, &emu_sa_service_rec_desc,
			     EMU_SR_COMP_ID | EMU_SR_COMP_GID, &q, &r, &len), 0);
	free(r);
	assert_int_equal(emu_sa_service_count(x.sa), 0);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_DELETE, &emu_sa_service_rec_desc,
			     EMU_SR_COMP_ID | EMU_SR_COMP_GID, &q, &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(r);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_service_rec_desc, EMU_SR_COMP_ID, &q,
			     &r, &len),
			 EMU_SA_STATUS(EMU_SA_ERR_REQ_INSUFFICIENT_COMPONENTS));
	free(r);
	fx_close(&x);
}

static void faults_deterministic(void **state)
{
	struct fx x, y;
	enum emu_sa_verdict a[64], b[64];
	uint64_t delay;
	unsigned drops = 0, busy = 0;

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	fx_open(&y, "ib.fabric", NULL);
	assert_int_equal(emu_sa_policy(x.sa)->response_delay_ns, 50000); /* response-delay=50us */
	emu_sa_policy(x.sa)->drop_next = 2;
	emu_sa_policy(x.sa)->drop = 0.25;
	emu_sa_policy(x.sa)->busy = 0.25;
	*emu_sa_policy(y.sa) = *emu_sa_policy(x.sa);
	for (int i = 0; i < 64; i++) {
		a[i] = emu_sa_decide(x.sa, &delay);
		b[i] = emu_sa_decide(y.sa, NULL);
		drops += a[i] == EMU_SA_DROP;
		busy += a[i] == EMU_SA_BUSY;
	}
	assert_int_equal(delay, 50000);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(a[0], EMU_SA_DROP);
	assert_int_equal(a[1], EMU_SA_DROP);
	assert_true(drops > 2 && drops < 40);
	assert_true(busy > 0 && busy < 40);
	/* BUSY and forced errors through emu_sa_process. */
	{
		struct emu_sa_path_rec q = { 0 };
		uint8_t mad[EMU_MAD_LEN], *r;
		size_t len;

		*emu_sa_policy(x.sa) = (struct emu_sa_policy){ .busy_next = 1,
							       .error_status = EMU_SA_STATUS(7) };
		gid_of(q.sgid, A_GUID);
		gid_of(q.dgid, B_GUID);
		sa_req(mad, EMU_MAD_METHOD_GET, 9, &emu_sa_path_rec_desc,
		       EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q);
		assert_int_equal(emu_sa_process(x.sa, mad, sizeof(mad), &r, &len, &delay), 0);
		assert_int_equal(emu_be16_get(r + 4), EMU_MAD_STATUS_BUSY);
		free(r);
		assert_int_equal(emu_sa_process(x.sa, mad, sizeof(mad), &r, &len, &delay), 0);
		assert_int_equal(emu_be16_get(r + 4), EMU_SA_STATUS(EMU_SA_ERR_REQ_DENIED));
		assert_string_equal(emu_mad_status_name(emu_be16_get(r + 4)), "ERR_REQ_DENIED");
		free(r);
		emu_sa_policy(x.sa)->error_status = 0;
		emu_sa_policy(x.sa)->drop_next = 1;
		assert_int_equal(emu_sa_process(x.sa, mad, sizeof(mad), &r, &len, &delay), 0);
		assert_null(r);
		assert_int_equal(emu_sa_process(x.sa, mad, sizeof(mad), &r, &len, &delay), 0);
		assert_int_equal(emu_be16_get(r + 4), 0);
		free(r);
	}
	fx_close(&y);
	fx_close(&x);
}

static void bad_mads(void **state)
{
	struct fx x;
	uint8_t mad[EMU_MAD_LEN], *r;
	size_t len;

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	sa_req(mad, EMU_MAD_METHOD_GET, 1, &emu_sa_path_rec_desc, 0, NULL);
	mad[0] = 2; /* base version */
	assert_int_equal(emu_sa_handle(x.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), EMU_MAD_STATUS_BAD_VERSION);
	assert_int_equal(r[3], 0x81);
	free(r);
	mad[0] = 1;
	mad[2] = 1; /* class version */
	assert_int_equal(emu_sa_handle(x.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), EMU_MAD_STATUS_BAD_VERSION);
	free(r);
	mad[2] = 2;
	mad[3] = EMU_MAD_METHOD_GET_MULTI;
	assert_int_equal(emu_sa_handle(x.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), EMU_MAD_STATUS_UNSUP_METHOD);
	assert_int_equal(r[3], 0x94);
	free(r);
	mad[3] = EMU_MAD_METHOD_SET; /* PathRecord cannot be Set */
	assert_int_equal(emu_sa_handle(x.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), EMU_MAD_STATUS_UNSUP_METHOD_ATTR);
	free(r);
	mad[3] = EMU_MAD_METHOD_GET;
	emu_be16_put(mad + 16, 0x7777); /* unknown attribute */
	assert_int_equal(emu_sa_handle(x.sa, mad, sizeof(mad), &r, &len), 0);
	assert_int_equal(emu_be16_get(r + 4), EMU_MAD_STATUS_UNSUP_METHOD_ATTR);
	assert_string_equal(emu_mad_status_name(emu_be16_get(r + 4)), "UNSUP_METHOD_ATTR");
	free(r);
	/* Ignored without an answer: short, other class, responses. */
	assert_int_equal(emu_sa_handle(x.sa, mad, 40, &r, &len), -EINVAL);
	mad[1] = 0x07;
	assert_int_equal(emu_sa_handle(x.sa, mad, sizeof(mad), &r, &len), -EINVAL);
	mad[1] = 0x03;
	mad[3] = 0x81;
	assert_int_equal(emu_sa_handle(x.sa, mad, sizeof(mad), &r, &len), -EINVAL);
	assert_null(r);
	fx_close(&x);
	/* No SA on a RoCE-only fabric. */
	{
		struct emu_error err;
		struct emu_fabric *f = emu_fabric_load(fixture_path("rxe-ref.fabric"), &err);

		assert_non_null(f);
		errno = 0;
		assert_null(emu_sa_new(f, NULL));
		assert_int_equal(errno, ENODEV);
		emu_fabric_free(f);
	}
}

static void table_driven_layouts(void **state)
{
	(void)state;
	/* Field positions against IBA tables 206/208/210 (and the kernel's sa_query.c). */
	const struct emu_mad_field *f;

	f = emu_mad_field_find(&emu_sa_path_rec_desc, "numb_path");
	assert_int_equal(f->bit_off, 12 * 32 + 9);
	assert_int_equal(f->bits, 7);
	assert_int_equal(f->comp_bit, 12);
	f = emu_mad_field_find(&emu_sa_path_rec_desc, "packet_life_time");
	assert_int_equal(f->bit_off, 14 * 32 + 2);
	assert_int_equal(f->comp_bit, 21);
	f = emu_mad_field_find(&emu_sa_mcmember_rec_desc, "join_state");
	assert_int_equal(f->bit_off, 12 * 32 + 4);
	assert_int_equal(f->comp_bit, 16);
	f = emu_mad_field_find(&emu_sa_service_rec_desc, "data64");
	assert_int_equal(f->bit_off, 40 * 32);
	assert_int_equal(f->comp_bit, 35);
	/* Every record's fields tile it exactly. */
	const struct emu_mad_record_desc *d[] = {
		&emu_sa_path_rec_desc,	   &emu_sa_mcmember_rec_desc, &emu_sa_service_rec_desc,
		&emu_sa_node_rec_desc,	   &emu_sa_portinfo_rec_desc, &emu_sa_sminfo_rec_desc,
	};
	const size_t nd = sizeof(d) / sizeof(d[0]);

	for (size_t i = 0; i < nd; i++) {
		unsigned at = 0;

		for (size_t j = 0; j < d[i]->nfields; j++) {
			assert_int_equal(d[i]->fields[j].bit_off, at);
			at += d[i]->fields[j].bits * d[i]->fields[j].count;
		}
		assert_int_equal(at, d[i]->wire_len * 8u);
	}
	/* Each field element alone, all its bits set: pack puts them where its row says (read a
	 * bit at a time; the packers are code expanded from the rows, not a walk of this table)
	 * and nowhere else, and unpack gives the struct back. */
	for (size_t i = 0; i < nd; i++) {
		for (size_t j = 0; j < d[i]->nfields; j++) {
			const struct emu_mad_field *g = &d[i]->fields[j];

			for (unsigned e = 0; g->kind != EMU_MF_RESERVED && e < g->count; e++) {
				uint8_t s1[256], s2[256], wire[176];
				unsigned off = g->bit_off + e * g->bits, ones = 0;
				uint8_t *mp = s1 + g->struct_off + e * g->struct_size;

				assert_true(d[i]->struct_size <= sizeof(s1));
				memset(s1, 0, sizeof(s1));
				if (g->kind == EMU_MF_BYTES) {
					memset(mp, 0xff, g->bits / 8);
				} else {
					uint64_t v = g->bits >= 64 ? UINT64_MAX : (1ull << g->bits) - 1;

					memcpy(mp, &v, g->struct_size); /* little-endian host */
				}
				emu_mad_record_pack(d[i], s1, wire);
				for (unsigned b = 0; b < d[i]->wire_len * 8u; b++) {
					unsigned bit = wire[b / 8] >> (7 - b % 8) & 1u;

					assert_int_equal(bit, b >= off && b < off + g->bits);
					ones += bit;
				}
				assert_int_equal(ones, g->bits);
				memset(s2, 0xee, sizeof(s2));
				emu_mad_record_unpack(d[i], wire, s2);
				assert_memory_equal(s1, s2, d[i]->struct_size);
			}
		}
	}
	/* Round trip with all bits set where fields are. */
	struct emu_sa_mcmember_rec m, m2;

	memset(&m, 0, sizeof(m));
	m.flow_label = 0xfffff;
	m.sl = 0xf;
	m.hop_limit = 0x12;
	m.scope = 5;
	m.join_state = 0xa;
	m.proxy_join = 1;
	uint8_t w[52];

	emu_mad_record_pack(&emu_sa_mcmember_rec_desc, &m, w);
	assert_int_equal(emu_be32_get(w + 44), 0xffffff12); /* SL 15, FlowLabel, HopLimit */
	assert_int_equal(w[48], 0x5a);
	assert_int_equal(w[49], 0x80);
	emu_mad_record_unpack(&emu_sa_mcmember_rec_desc, w, &m2);
	assert_memory_equal(&m, &m2, sizeof(m));
	assert_int_equal(emu_sa_rate_from_mbps(40000), 7);
	assert_int_equal(emu_sa_rate_from_mbps(56000), 12);
	assert_string_equal(emu_sa_attr_name(0x38), "MCMemberRecord");
}

static void replay_saquery(void **state)
{
	struct fx x;
	struct emu_error err;
	struct emu_sa_path_rec q = { 0 }, p;
	uint8_t *r;
	size_t len;

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	assert_int_equal(emu_sa_replay_saquery_file(x.sa, fixture_path("ib-paths.saquery"), &err),
			 2);
	gid_of(q.sgid, A_GUID);
	gid_of(q.dgid, B_GUID);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q, &r, &len), 0);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, r + EMU_SA_HDR_LEN, &p);
	/* The recorded values, not the computed ones: MTU 2048, 56 Gb/s, SL 1, lifetime 20. */
	assert_int_equal(p.mtu, 4);
	assert_int_equal(p.rate, 12);
	assert_int_equal(p.sl, 1);
	assert_int_equal(p.packet_life_time, 20);
	assert_int_equal(p.dlid, 3);
	assert_int_equal(p.reversible, 1);
	free(r);
	/* A->C is not replayed: computed. */
	gid_of(q.dgid, 0x0002c90300000c01ull);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_path_rec_desc,
			     EMU_PR_COMP_SGID | EMU_PR_COMP_DGID, &q, &r, &len), 0);
	emu_mad_record_unpack(&emu_sa_path_rec_desc, r + EMU_SA_HDR_LEN, &p);
	assert_int_equal(p.mtu, 5);
	free(r);
	assert_int_equal(emu_sa_replay_saquery(x.sa, "PathRecord dump:\n\t\tdlid....zz\n", "t",
					       &err), -1);
	assert_int_equal(err.line, 2);
	fx_close(&x);
}

/* NodeRecords: OpenSM's order (node GUID bytes reversed: ib-a, ib-b, ib-c, the switch), Get by
 * node GUID, a Get with no match and with several. */
static void node_records(void **state)
{
	struct fx x;
	struct emu_sa_node_rec q = { 0 }, r;
	uint8_t *resp;
	size_t len;
	static const uint16_t lids[] = { 2, 3, 4, 1 };

	(void)state;
	fx_open(&x, "ib.fabric", NULL);
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET_TABLE, &emu_sa_node_rec_desc, 0, &q, &resp,
			     &len), 0);
	assert_int_equal(nrecs(resp, len, &emu_sa_node_rec_desc), 4);
	assert_int_equal(emu_be16_get(resp + 44), 14); /* AttributeOffset: 112 bytes */
	for (size_t i = 0; i < 4; i++) {
		emu_mad_record_unpack(&emu_sa_node_rec_desc, resp + EMU_SA_HDR_LEN + i * 112, &r);
		assert_int_equal(r.lid, lids[i]);
	}
	/* the switch: port 0, its GUID as port GUID, 36 ports, vendid/devid of ib.topo */
	assert_int_equal(r.node_type, 2);
	assert_int_equal(r.num_ports, 36);
	assert_int_equal(r.local_port_num, 0);
	assert_int_equal(r.port_guid, 0x0002c90200000001ull);
	assert_int_equal(r.vendor_id, 0x2c9);
	assert_int_equal(r.device_id, 0xc738);
	assert_string_equal((char *)r.node_desc, "SwitchX -  Mellanox Technologies");
	free(resp);
	q.node_guid = 0x0002c90300000b00ull;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_node_rec_desc, EMU_NR_COMP_NODE_GUID,
			     &q, &resp, &len), 0);
	emu_mad_record_unpack(&emu_sa_node_rec_desc, resp + EMU_SA_HDR_LEN, &r);
	assert_int_equal(r.lid, 3);
	assert_int_equal(r.node_type, 1);
	assert_int_equal(r.num_ports, 1);
	assert_int_equal(r.local_port_num, 1);
	assert_int_equal(r.sys_guid, 0x0002c90300000b00ull);
	assert_int_equal(r.port_guid, 0x0002c90300000b01ull);
	assert_int_equal(r.partition_cap, 64);
	assert_int_equal(r.device_id, 0x1017);
	assert_int_equal(r.vendor_id, 0x2c9);
	assert_string_equal((char *)r.node_desc, "ib-b mlx5_0");
	free(resp);
	q.node_guid = 0x1234;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_node_rec_desc, EMU_NR_COMP_NODE_GUID,
			     &q, &resp, &len), EMU_SA_STATUS(EMU_SA_ERR_NO_RECORDS));
	free(resp);
	q.node_type = 1;
	assert_int_equal(ask(&x, EMU_MAD_METHOD_GET, &emu_sa_node_rec_desc, EMU_NR_COMP_NODE_TYPE,
			     &q, &resp, &len), EMU_SA_STATUS(EMU_SA_ERR_TOO_MANY_RECORDS));
	free(resp);
	/* Set is not a NodeRecord method */
	assert_int_equal(ask(&x, EMU_MAD_METHOD_SET, &emu_sa_node_rec_desc, 0, &q, &resp, &len),
			 EMU_MAD_STATUS_UNSUP_METHOD_ATTR);
	free(resp);
	fx_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_driven_layouts),
		cmocka_unit_test(path_get_exact_bytes),
		cmocka_unit_test(path_selectors),
		cmocka_unit_test(path_numb_path_lmc),
		cmocka_unit_test(mcmember_join_leave),
		cmocka_unit_test(mcmember_mlids_run_out),
		cmocka_unit_test(mcmember_index_after_leaves),
		cmocka_unit_test(record_comp_bits_as_match),
		cmocka_unit_test(service_set_get_delete),
		cmocka_unit_test(faults_deterministic),
		cmocka_unit_test(bad_mads),
		cmocka_unit_test(replay_saquery),
		cmocka_unit_test(node_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
