/* The PMAs through libibumad.so.3 in the process where the traffic runs: an RC SEND of 5000
 * bytes from ib-a (LID 2) to ib-b (LID 3) of fixtures/ib.fabric through the switch (LID 1;
 * ib-a on its port 1, ib-b on its port 2), and the exact counter deltas every port on the path
 * reports: PortXmitData/PortRcvData in 4-byte words of the packets from the LRH through the
 * ICRC, packets, unicast packets; Set with CounterSelect clearing what it selects, on one port
 * and on the switch's every port (PortSelect 0xFF); a frame with a bad ICRC in the receiving
 * port's PortRcvErrors; a UD SEND to a multicast group in the multicast counters of every port
 * it crosses. Built as an application (verbs_test.h), with the library's calls
 * declared by umad_priv.h. */
#include "config.h"

#include <endian.h>
#include <stdbool.h>

#include "emu/verbs/tests/verbs_test.h"
#include "emu/sim/engine.h"
#include "emu/umad/umad_priv.h"
#include "rdmaemu/ctl.h"

#define BUF 8192
#define PERF 0x04
#define CPI 0x0001
#define PC 0x0012
#define PCX 0x001d
#define GET 0x01
#define SET 0x02

struct host {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *mem;
	struct ibv_mr *mr;
	uint16_t lid;
};

static struct host H[2]; /* ib-a, ib-b */
static int fd, agent;

/* One PerfMgt request to lid; the answer's 192 data bytes in d (PortSelect `sel`, CounterSelect
 * `mask` for a Set). Returns the MAD status. */
static uint16_t pma(uint16_t lid, uint8_t method, uint16_t attr, uint8_t sel, uint16_t mask,
		    uint8_t d[192])
{
	static uint32_t tid = 0x100;
	uint8_t buf[sizeof(ib_user_mad_t) + 256];
	ib_user_mad_t *u = (ib_user_mad_t *)buf;
	uint8_t *m = u->data;
	int len = 256;

	memset(buf, 0, sizeof(buf));
	m[0] = 1;
	m[1] = PERF;
	m[2] = 1;
	m[3] = method;
	m[12] = (uint8_t)(++tid >> 24);
	m[13] = (uint8_t)(tid >> 16);
	m[14] = (uint8_t)(tid >> 8);
	m[15] = (uint8_t)tid;
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	m[65] = sel;
	m[66] = (uint8_t)(mask >> 8);
	m[67] = (uint8_t)mask;
	assert_int_equal(umad_set_addr(buf, lid, 1, 0, (int)0x80010000u), 0);
	assert_int_equal(umad_send(fd, agent, buf, 256, 100, 0), 0);
	assert_int_equal(umad_recv(fd, buf, &len, 1000), agent);
	assert_int_equal(umad_status(buf), 0);
	assert_int_equal(m[3], 0x81);
	assert_int_equal(m[1], PERF);
	memcpy(d, m + 64, 192);
	return (uint16_t)(m[4] << 8 | m[5]);
}

static uint32_t be32at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64at(const uint8_t *p)
{
	return (uint64_t)be32at(p) << 32 | be32at(p + 4);
}

struct pc {
	uint32_t xdata, rdata, xpkts, rpkts;
	uint16_t rcv_errors, discards;
};

static struct pc get_pc(uint16_t lid, uint8_t port)
{
	uint8_t d[192];
	struct pc c;

	assert_int_equal(pma(lid, GET, PC, port, 0, d), 0);
	assert_int_equal(d[1], port);
	c.rcv_errors = (uint16_t)(d[8] << 8 | d[9]);
	c.discards = (uint16_t)(d[14] << 8 | d[15]);
	c.xdata = be32at(d + 24);
	c.rdata = be32at(d + 28);
	c.xpkts = be32at(d + 32);
	c.rpkts = be32at(d + 36);
	return c;
}

static void assert_pc(uint16_t lid, uint8_t port, uint32_t xdata, uint32_t rdata, uint32_t xpkts,
		      uint32_t rpkts)
{
	struct pc c = get_pc(lid, port);

	assert_int_equal(c.xdata, xdata);
	assert_int_equal(c.rdata, rdata);
	assert_int_equal(c.xpkts, xpkts);
	assert_int_equal(c.rpkts, rpkts);
	assert_int_equal(c.rcv_errors, 0);
	assert_int_equal(c.discards, 0);
}

/* Every counter of the three nodes to 0: perfquery -r's masks (0xffff, and 0xff with -x). */
static void reset_all(void)
{
	uint8_t d[192];

	assert_int_equal(pma(2, SET, PC, 1, 0xffff, d), 0);
	assert_int_equal(pma(3, SET, PC, 1, 0xffff, d), 0);
	assert_int_equal(pma(1, SET, PC, 0xff, 0xffff, d), 0);
	assert_int_equal(pma(2, SET, PCX, 1, 0xff, d), 0);
	assert_int_equal(pma(3, SET, PCX, 1, 0xff, d), 0);
	assert_int_equal(pma(1, SET, PCX, 0xff, 0xff, d), 0);
	assert_pc(2, 1, 0, 0, 0, 0);
	assert_pc(3, 1, 0, 0, 0, 0);
	assert_pc(1, 0xff, 0, 0, 0, 0);
}

static void host_up(struct host *h, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr a = {
		.qp_type = t,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	h->pd = ibv_alloc_pd(h->ctx);
	assert_non_null(h->pd);
	h->cq = ibv_create_cq(h->ctx, 16, NULL, NULL, 0);
	assert_non_null(h->cq);
	h->mem = calloc(1, BUF);
	assert_non_null(h->mem);
	h->mr = ibv_reg_mr(h->pd, h->mem, BUF, IBV_ACCESS_LOCAL_WRITE);
	assert_non_null(h->mr);
	a.send_cq = a.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &a);
	assert_non_null(h->qp);
}

static void host_down(struct host *h)
{
	assert_int_equal(ibv_destroy_qp(h->qp), 0);
	assert_int_equal(ibv_dereg_mr(h->mr), 0);
	assert_int_equal(ibv_destroy_cq(h->cq), 0);
	assert_int_equal(ibv_dealloc_pd(h->pd), 0);
	free(h->mem);
}

/* RESET -> RTS of an RC QP towards peer's LID, no GRH, path MTU 2048. */
static void rc_connect(struct host *h, const struct host *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	assert_int_equal(ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							 IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_2048;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = peer->lid;
	a.ah_attr.port_num = 1;
	assert_int_equal(ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
							 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
							 IBV_QP_MAX_DEST_RD_ATOMIC |
							 IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	assert_int_equal(ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
							 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
							 IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

/* An RC SEND of `len` bytes from ib-a to ib-b, both completions checked. */
static void rc_send(uint32_t len)
{
	struct host *a = &H[0], *b = &H[1];
	struct ibv_sge sg = { (uintptr_t)a->mem, len, a->mr->lkey };
	struct ibv_sge rs = { (uintptr_t)b->mem, BUF, b->mr->lkey };
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr r = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	assert_int_equal(ibv_post_recv(b->qp, &r, &rbad), 0);
	assert_int_equal(ibv_post_send(a->qp, &w, &bad), 0);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(vt_poll_wait(b->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, len);
}

/* Words of an RC packet without a GRH (IBA 16.1.3.5: LRH through ICRC, divided by 4): LRH 8,
 * BTH 12, the payload padded to 4 bytes, ICRC 4. An ACK adds an AETH of 4 and carries no
 * payload. */
static uint32_t words(uint32_t payload)
{
	return (8 + 12 + ((payload + 3) & ~3u) + 4) / 4;
}

#define ACK_WORDS ((8 + 12 + 4 + 4) / 4)

/* ib-b's port sends ib-a an RC SEND_ONLY of 4 bytes whose ICRC is wrong: it crosses the switch
 * (which does not look at the ICRC), ib-a's HCA drops it: PortRcvErrors 1, and the packet is
 * counted as received all the same (IBA: PortRcvPkts may include packets with errors). */
static void rcv_error(void)
{
	uint8_t fr[30] = { 0x00, 0x02, 0x00, 0x02, 0x00, 0x07, 0x00, 0x03, /* LRH: DLID 2, 7 words, SLID 3 */
			   0x04, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, /* BTH: SEND_ONLY, QP 0x11 */
			   0x00, 0x00, 0x00, 0x01,
			   0xde, 0xad, 0xbe, 0xef,                          /* payload */
			   0x00, 0x00, 0x00, 0x00,                          /* ICRC: wrong */
			   0x00, 0x00 };                                    /* VCRC */
	struct emu_engine *e = emu_engine_get();
	size_t b;
	struct pc c;

	assert_non_null(e);
	assert_int_equal(pma(2, SET, PC, 1, 0xffff, (uint8_t[192]){ 0 }), 0);
	assert_int_equal(pma(3, SET, PC, 1, 0xffff, (uint8_t[192]){ 0 }), 0);
	emu_engine_lock(e);
	b = (size_t)(emu_fabric_find_host(emu_engine_fabric(e), "ib-b") - emu_engine_fabric(e)->hosts);
	assert_int_equal(emu_engine_port_send(e, b, 0, 1, fr, sizeof(fr)), 0);
	emu_engine_unlock(e);
	assert_int_equal(rdmaemu_ctl_advance_ns(1000000), 0);
	c = get_pc(2, 1);
	assert_int_equal(c.rcv_errors, 1);
	assert_int_equal(c.rpkts, 1);
	assert_int_equal(c.rdata, 7);
	assert_int_equal(c.xpkts, 0);
	assert_pc(3, 1, 7, 0, 1, 0);
}

static void test_rc_send(void **state)
{
	/* 5000 bytes at MTU 2048: SEND_FIRST 2048, SEND_LAST 2048... FIRST, MIDDLE, LAST; the
	 * last packet asks for the ACK, one ACK comes back */
	uint32_t req = words(2048) + words(2048) + words(904);
	uint8_t d[192];

	(void)state;
	host_up(&H[0], IBV_QPT_RC);
	host_up(&H[1], IBV_QPT_RC);
	rc_connect(&H[0], &H[1]);
	rc_connect(&H[1], &H[0]);
	reset_all();
	rc_send(5000);
	assert_int_equal(req, 518 + 518 + 232);
	assert_pc(2, 1, req, ACK_WORDS, 3, 1);      /* ib-a */
	assert_pc(1, 1, ACK_WORDS, req, 1, 3);      /* the switch, towards ib-a */
	assert_pc(1, 2, req, ACK_WORDS, 3, 1);      /* the switch, towards ib-b */
	assert_pc(1, 3, 0, 0, 0, 0);                /* towards ib-c: nothing */
	assert_pc(3, 1, ACK_WORDS, req, 1, 3);      /* ib-b */
	assert_pc(1, 0xff, req + ACK_WORDS, req + ACK_WORDS, 4, 4);
	/* the extended counters count the same packets, all unicast */
	assert_int_equal(pma(2, GET, PCX, 1, 0, d), 0);
	assert_int_equal(be64at(d + 8), req);
	assert_int_equal(be64at(d + 16), ACK_WORDS);
	assert_int_equal(be64at(d + 24), 3);
	assert_int_equal(be64at(d + 32), 1);
	assert_int_equal(be64at(d + 40), 3);
	assert_int_equal(be64at(d + 48), 1);
	assert_int_equal(be64at(d + 56), 0);
	assert_int_equal(be64at(d + 64), 0);
	/* a second message adds to them */
	rc_send(100);
	assert_pc(2, 1, req + words(100), 2 * ACK_WORDS, 4, 2);
	/* Set PortXmitData only (CounterSelect 0x1000): the rest stays; the answer is the Get's
	 * after the Set (CounterSelect 0) */
	assert_int_equal(pma(2, SET, PC, 1, 0x1000, d), 0);
	assert_int_equal(d[2] << 8 | d[3], 0);
	assert_int_equal(be32at(d + 24), 0);
	assert_int_equal(be32at(d + 28), 2 * ACK_WORDS);
	assert_int_equal(be32at(d + 32), 4);
	/* ... which is the extended counter too */
	assert_int_equal(pma(2, GET, PCX, 1, 0, d), 0);
	assert_int_equal(be64at(d + 8), 0);
	assert_int_equal(be64at(d + 24), 4);
	/* the extended Set of the unicast counters only (0x30) */
	assert_int_equal(pma(2, SET, PCX, 1, 0x30, d), 0);
	assert_int_equal(be64at(d + 24), 4);
	assert_int_equal(be64at(d + 40), 0);
	assert_int_equal(be64at(d + 48), 0);
	/* the switch's ports all at once */
	assert_int_equal(pma(1, SET, PC, 0xff, 0xffff, d), 0);
	assert_pc(1, 1, 0, 0, 0, 0);
	assert_pc(1, 2, 0, 0, 0, 0);
	rcv_error();
	host_down(&H[0]);
	host_down(&H[1]);
}

static uint64_t pcx(uint16_t lid, uint8_t port, unsigned off)
{
	uint8_t d[192];

	assert_int_equal(pma(lid, GET, PCX, port, 0, d), 0);
	return be64at(d + off);
}

/* A UD SEND of 64 bytes from ib-a to the IPoIB broadcast group (MLID 0xC000, which every
 * host's IPoIB port joined): the switch sends it out of its ports to ib-b and ib-c, not back
 * to ib-a; every port on the way counts one multicast packet of (8 LRH + 40 GRH + 12 BTH +
 * 8 DETH + 64 + 4 ICRC) / 4 = 34 words, and no unicast one. */
static void test_ud_multicast(void **state)
{
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
					  0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	struct host *a = &H[0];
	struct ibv_ah_attr aa = { .dlid = 0xc000, .is_global = 1, .port_num = 1 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11 };
	struct ibv_sge sg;
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	struct ibv_ah *ah;

	(void)state;
	host_up(a, IBV_QPT_UD);
	assert_int_equal(ibv_modify_qp(a->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
							 IBV_QP_PORT | IBV_QP_QKEY), 0);
	qa.qp_state = IBV_QPS_RTR;
	assert_int_equal(ibv_modify_qp(a->qp, &qa, IBV_QP_STATE), 0);
	qa.qp_state = IBV_QPS_RTS;
	assert_int_equal(ibv_modify_qp(a->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	memcpy(aa.grh.dgid.raw, mgid, 16);
	aa.grh.hop_limit = 1;
	ah = ibv_create_ah(a->pd, &aa);
	assert_non_null(ah);
	sg = (struct ibv_sge){ (uintptr_t)a->mem, 64, a->mr->lkey };
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0xffffff;
	w.wr.ud.remote_qkey = 0x11;
	reset_all();
	assert_int_equal(pma(4, SET, PCX, 1, 0xff, (uint8_t[192]){ 0 }), 0);
	assert_int_equal(ibv_post_send(a->qp, &w, &bad), 0);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(rdmaemu_ctl_advance_ns(1000000), 0);
	/* ib-a sent it */
	assert_int_equal(pcx(2, 1, 8), 34);
	assert_int_equal(pcx(2, 1, 24), 1);
	assert_int_equal(pcx(2, 1, 56), 1);
	assert_int_equal(pcx(2, 1, 40), 0);
	/* the switch: in at port 1, out at ports 2 and 3 */
	assert_int_equal(pcx(1, 1, 64), 1);
	assert_int_equal(pcx(1, 1, 56), 0);
	assert_int_equal(pcx(1, 2, 56), 1);
	assert_int_equal(pcx(1, 3, 56), 1);
	assert_int_equal(pcx(1, 2, 8), 34);
	assert_int_equal(pcx(1, 0xff, 56), 2);
	assert_int_equal(pcx(1, 0xff, 40), 0);
	/* ib-b and ib-c received it */
	assert_int_equal(pcx(3, 1, 64), 1);
	assert_int_equal(pcx(3, 1, 16), 34);
	assert_int_equal(pcx(4, 1, 64), 1);
	assert_int_equal(pcx(4, 1, 48), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	host_down(a);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_send),
		cmocka_unit_test(test_ud_multicast),
	};
	const char *b = getenv("RDMAEMU_TOP_BUILDDIR");
	int rc;

	(void)argc;
	if (!getenv(VT_CHILD_ENV)) {
		const char *old = getenv("LD_LIBRARY_PATH");
		char *path;

		/* the drop-in libibumad.so.3 first, beside the emulated libibverbs.so.1 */
		if (asprintf(&path, "%s/emu/umad/.libs%s%s", b ? b : RDMAEMU_BUILDDIR,
			     old ? ":" : "", old ? old : "") < 0)
			return 99;
		setenv("LD_LIBRARY_PATH", path, 1);
		free(path);
	}
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "ib.fabric", NULL, "ib-a");
	{
		struct ibv_context *c[2];

		vt_open_pair("ib-b", c);
		for (int i = 0; i < 2; i++) {
			struct ibv_port_attr pa;

			H[i].ctx = c[i];
			if (ibv_query_port(c[i], 1, &pa))
				return 99;
			H[i].lid = pa.lid;
		}
	}
	if (H[0].lid != 2 || H[1].lid != 3 || umad_init() < 0)
		return 99;
	fd = umad_open_port("mlx5_0", 1);
	if (fd < 0)
		return 99;
	agent = umad_register(fd, PERF, 1, 0, NULL);
	if (agent < 0)
		return 99;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	umad_close_port(fd);
	for (int i = 0; i < 2; i++)
		ibv_close_device(H[i].ctx);
	return rc;
}
