/* The data path on an InfiniBand link layer: hosts ib-a (LID 2) and ib-b (LID 3) of
 * fixtures/ib.fabric, cabled to one switch (LID 1) by fixtures/ib.topo, in one process (ib-b's
 * mlx5_0 opened through rdmaemu_ctl_open_host_devices). Frames carry an LRH (and a GRH when the
 * path is global), ICRC and VCRC, and cross the switch, which forwards them by DLID. RC SEND
 * with immediate over several packets, RDMA WRITE, RDMA READ; UD with and without GRH, with the
 * receive completion's IB fields and an AH made from it for the reply; UD in loopback. */
#include "config.h"

#include <endian.h>
#include <stdbool.h>

#include "emu/verbs/tests/verbs_test.h"

#define BUF 16384

struct host {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *mem;
	struct ibv_mr *mr;
	uint16_t lid;
	union ibv_gid gid;
};

static struct host H[3]; /* ib-a, ib-b, a second QP on ib-a */

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
	h->mr = ibv_reg_mr(h->pd, h->mem, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ);
	assert_non_null(h->mr);
	a.send_cq = a.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &a);
	assert_non_null(h->qp);
	assert_int_not_equal(h->qp->qp_num, 1); /* QP1 belongs to the MAD layer */
}

static void host_down(struct host *h)
{
	assert_int_equal(ibv_destroy_qp(h->qp), 0);
	assert_int_equal(ibv_dereg_mr(h->mr), 0);
	assert_int_equal(ibv_destroy_cq(h->cq), 0);
	assert_int_equal(ibv_dealloc_pd(h->pd), 0);
	free(h->mem);
}

static int teardown(void **state)
{
	(void)state;
	host_down(&H[0]);
	host_down(&H[1]);
	return 0;
}

/* RESET -> RTS of an RC QP towards peer's LID (no GRH unless global), SL 3, MTU 2048. */
static void rc_connect(struct host *h, const struct host *peer, bool global)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ };

	assert_int_equal(ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							 IBV_QP_ACCESS_FLAGS), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_2048;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x10;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = peer->lid;
	a.ah_attr.sl = 3;
	a.ah_attr.port_num = 1;
	if (global) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.hop_limit = 1;
	}
	assert_int_equal(ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
							 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
							 IBV_QP_MAX_DEST_RD_ATOMIC |
							 IBV_QP_MIN_RNR_TIMER), 0);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x10;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	assert_int_equal(ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
							 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
							 IBV_QP_MAX_QP_RD_ATOMIC), 0);
}

static void post_send(struct host *h, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	assert_int_equal(ibv_post_send(h->qp, wr, &bad), 0);
}

static void post_recv(struct host *h, uint64_t wr_id, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)h->mem + off, len, h->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = wr_id, .sg_list = &sg, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(h->qp, &w, &bad), 0);
}

static void rc_exchange(bool global)
{
	struct host *a = &H[0], *b = &H[1];
	struct ibv_sge sg = { 0, 5000, 0 };
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				 .imm_data = htobe32(0xabcd) };
	struct ibv_wc wc;

	host_up(a, IBV_QPT_RC);
	host_up(b, IBV_QPT_RC);
	rc_connect(a, b, global);
	rc_connect(b, a, global);
	sg.addr = (uintptr_t)a->mem;
	sg.lkey = a->mr->lkey;
	for (int i = 0; i < BUF; i++)
		a->mem[i] = (uint8_t)(i * 13 + 1);
	/* SEND with immediate: 3 packets at MTU 2048 */
	post_recv(b, 7, 0, 8192);
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	assert_int_equal(vt_poll_wait(b->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 7);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.byte_len, 5000);
	assert_int_equal(wc.wc_flags, IBV_WC_WITH_IMM | (global ? IBV_WC_GRH : 0));
	assert_int_equal(be32toh(wc.imm_data), 0xabcd);
	assert_int_equal(wc.slid, 2);
	assert_int_equal(wc.sl, 3);
	assert_int_equal(wc.dlid_path_bits, 0);
	assert_int_equal(wc.qp_num, b->qp->qp_num);
	assert_memory_equal(b->mem, a->mem, 5000);
	/* RDMA WRITE of 3000 bytes to b + 8192 */
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr_id = 2;
	sg.length = 3000;
	sg.addr = (uintptr_t)a->mem + 100;
	w.wr.rdma.remote_addr = (uintptr_t)b->mem + 8192;
	w.wr.rdma.rkey = b->mr->rkey;
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_WRITE);
	assert_memory_equal(b->mem + 8192, a->mem + 100, 3000);
	/* RDMA READ of 4500 bytes from b back into a + 12000 */
	for (int i = 0; i < 4500; i++)
		b->mem[i] = (uint8_t)(i * 5 + 2);
	w.opcode = IBV_WR_RDMA_READ;
	w.wr_id = 3;
	sg.addr = (uintptr_t)a->mem + 11000;
	sg.length = 4500;
	w.wr.rdma.remote_addr = (uintptr_t)b->mem;
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc.byte_len, 4500);
	assert_memory_equal(a->mem + 11000, b->mem, 4500);
}

static void test_rc_lrh(void **state)
{
	(void)state;
	rc_exchange(false);
}

static void test_rc_grh(void **state)
{
	(void)state;
	rc_exchange(true);
}

static void ud_up(struct host *h)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x3333 };

	host_up(h, IBV_QPT_UD);
	assert_int_equal(ibv_modify_qp(h->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
							 IBV_QP_QKEY), 0);
	qa.qp_state = IBV_QPS_RTR;
	assert_int_equal(ibv_modify_qp(h->qp, &qa, IBV_QP_STATE), 0);
	qa.qp_state = IBV_QPS_RTS;
	assert_int_equal(ibv_modify_qp(h->qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

/* `len` bytes of `pat` from `from` through ah to `to`'s QP; to's area is first set to 0xee. */
static void ud_send(struct host *from, struct ibv_ah *ah, struct host *to, uint8_t pat,
		    uint32_t len, struct ibv_wc *rwc)
{
	struct ibv_sge sg = { (uintptr_t)from->mem + 8192, len, from->mr->lkey };
	struct ibv_send_wr w = { .wr_id = 5, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	memset(from->mem + 8192, pat, len);
	memset(to->mem, 0xee, 4096);
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = to->qp->qp_num;
	w.wr.ud.remote_qkey = 0x3333;
	post_recv(to, 9, 0, 4096);
	post_send(from, &w);
	assert_int_equal(vt_poll_wait(from->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(vt_poll_wait(to->cq, rwc), 1);
	assert_int_equal(rwc->status, IBV_WC_SUCCESS);
	assert_int_equal(rwc->wr_id, 9);
	assert_int_equal(rwc->byte_len, 40 + len);
	assert_int_equal(rwc->src_qp, from->qp->qp_num);
	assert_int_equal(rwc->pkey_index, 0);
	for (uint32_t i = 0; i < len; i++)
		assert_int_equal(to->mem[40 + i], pat);
}

static void ud_exchange(struct host *a, struct host *b, bool global)
{
	struct ibv_ah_attr aa = { .dlid = b->lid, .sl = 2, .port_num = 1 };
	struct ibv_ah_attr got;
	struct ibv_ah *ah, *back;
	struct ibv_wc wc;

	if (global) {
		aa.is_global = 1;
		aa.grh.dgid = b->gid;
		aa.grh.hop_limit = 1;
		aa.grh.traffic_class = 0x20;
		aa.grh.flow_label = 0x12345;
	}
	ah = ibv_create_ah(a->pd, &aa);
	assert_non_null(ah);
	ud_send(a, ah, b, 0x5a, 300, &wc);
	assert_int_equal(wc.slid, a->lid);
	assert_int_equal(wc.sl, 2);
	assert_int_equal(wc.dlid_path_bits, 0);
	if (global) {
		/* the GRH as sent: version 6, class, flow, PayLen, NxtHdr 0x1b, HopLmt, GIDs */
		assert_int_equal(wc.wc_flags, IBV_WC_GRH);
		assert_int_equal(b->mem[0], 0x62);
		assert_int_equal(b->mem[1], 0x01);
		assert_int_equal(b->mem[2], 0x23);
		assert_int_equal(b->mem[3], 0x45);
		assert_int_equal(b->mem[4] << 8 | b->mem[5], 12 + 8 + 300 + 4); /* BTH DETH data ICRC */
		assert_int_equal(b->mem[6], 0x1b);
		assert_int_equal(b->mem[7], 1);
		assert_memory_equal(b->mem + 8, a->gid.raw, 16);
		assert_memory_equal(b->mem + 24, b->gid.raw, 16);
	} else {
		assert_int_equal(wc.wc_flags, 0);
		for (int i = 0; i < 40; i++) /* no GRH: the area is not written */
			assert_int_equal(b->mem[i], 0xee);
	}
	assert_int_equal(ibv_init_ah_from_wc(b->ctx, 1, &wc, (struct ibv_grh *)b->mem, &got), 0);
	assert_int_equal(got.dlid, a->lid);
	assert_int_equal(got.sl, 2);
	assert_int_equal(got.is_global, global);
	if (global) {
		assert_memory_equal(got.grh.dgid.raw, a->gid.raw, 16);
		assert_int_equal(got.grh.sgid_index, 0);
		assert_int_equal(got.grh.hop_limit, 1);
		assert_int_equal(got.grh.traffic_class, 0x20);
		assert_int_equal(got.grh.flow_label, 0x12345);
	}
	back = ibv_create_ah_from_wc(b->pd, &wc, (struct ibv_grh *)b->mem, 1);
	assert_non_null(back);
	ud_send(b, back, a, 0xa5, 64, &wc);
	assert_int_equal(wc.slid, b->lid);
	assert_int_equal(wc.sl, 2);
	assert_int_equal(wc.wc_flags, global ? IBV_WC_GRH : 0);
	assert_int_equal(ibv_destroy_ah(back), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
}

static void test_ud_lrh(void **state)
{
	(void)state;
	ud_up(&H[0]);
	ud_up(&H[1]);
	ud_exchange(&H[0], &H[1], false);
}

static void test_ud_grh(void **state)
{
	(void)state;
	ud_up(&H[0]);
	ud_up(&H[1]);
	ud_exchange(&H[0], &H[1], true);
}

/* Two QPs of ib-a: the DLID is the port's own LID, so the HCA loops the packet back. */
static void test_ud_loopback(void **state)
{
	(void)state;
	H[2].ctx = H[0].ctx;
	H[2].lid = H[0].lid;
	H[2].gid = H[0].gid;
	ud_up(&H[0]);
	ud_up(&H[2]);
	ud_exchange(&H[0], &H[2], false);
	host_down(&H[2]);
	ud_up(&H[2]);
	ud_exchange(&H[2], &H[0], true);
	host_down(&H[2]);
	host_down(&H[0]);
	ud_up(&H[0]);
	ud_up(&H[2]);
	host_down(&H[2]);
	/* the teardown's pair */
	ud_up(&H[1]);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_rc_lrh, teardown),
		cmocka_unit_test_teardown(test_rc_grh, teardown),
		cmocka_unit_test_teardown(test_ud_lrh, teardown),
		cmocka_unit_test_teardown(test_ud_grh, teardown),
		cmocka_unit_test_teardown(test_ud_loopback, teardown),
	};
	int rc;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "ib.fabric", NULL, "ib-a");
	{
		struct ibv_context *c[2];

		vt_open_pair("ib-b", c);
		for (int i = 0; i < 2; i++) {
			struct ibv_port_attr pa;

			H[i].ctx = c[i];
			if (ibv_query_port(c[i], 1, &pa) ||
			    pa.link_layer != IBV_LINK_LAYER_INFINIBAND ||
			    ibv_query_gid(c[i], 1, 0, &H[i].gid))
				return 99;
			H[i].lid = pa.lid;
		}
	}
	if (H[0].lid != 2 || H[1].lid != 3)
		return 99;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < 2; i++)
		ibv_close_device(H[i].ctx);
	return rc;
}
