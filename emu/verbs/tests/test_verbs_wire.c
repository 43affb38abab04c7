/* The data path between two hosts: hosts A and B of fixtures/rxe-ref2.fabric (one Ethernet link
 * between their rxe0 ports) in one process, A attached and B's device opened through
 * rdmaemu_ctl_open_host_devices(). Frames leave through emu_engine_port_send with the
 * destination MAC resolved from the fabric and arrive through the ports' receivers after the
 * link's delay, so completions come from a busy-poll loop that lets virtual time move. */
#include "config.h"

#include <endian.h>
#include <stdbool.h>

#include "emu/verbs/tests/verbs_test.h"

#define BUF 8192

struct host {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *mem;
	struct ibv_mr *mr;
	union ibv_gid gid;
};

static struct host H[2]; /* 0: A (attached), 1: B */

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
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	assert_non_null(h->mr);
	a.send_cq = a.recv_cq = h->cq;
	h->qp = ibv_create_qp(h->pd, &a);
	assert_non_null(h->qp);
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		struct host *h = &H[i];

		assert_int_equal(ibv_destroy_qp(h->qp), 0);
		assert_int_equal(ibv_dereg_mr(h->mr), 0);
		assert_int_equal(ibv_destroy_cq(h->cq), 0);
		assert_int_equal(ibv_dealloc_pd(h->pd), 0);
		free(h->mem);
	}
	return 0;
}

/* A's address vector has flow label 0x60cc9, B's none: A sends from UDP port 0xccd1 (the
 * label folded), B from the one of its QPN pair's label (rdma_get_udp_sport); the capture's
 * ports are checked by datapath-tshark.sh. */
static void rc_connect(struct host *h, const struct host *peer)
{
	const struct vt_conn c = {
		.dest_qpn = peer->qp->qp_num, .dgid = peer->gid, .psn = 7,
		.flow_label = h == &H[0] ? 0x60cc9 : 0,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 1, .min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	vt_connect(h->qp, &c);
}

static void post_send(struct host *h, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	assert_int_equal(ibv_post_send(h->qp, wr, &bad), 0);
}

static void test_rc_between_hosts(void **state)
{
	struct host *a = &H[0], *b = &H[1];
	struct ibv_sge sg = { 0, 5000, 0 }, rsg = { 0, BUF, 0 };
	struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
				 .imm_data = htobe32(0x12345678) };
	struct ibv_wc wc;
	uint64_t v;

	(void)state;
	host_up(a, IBV_QPT_RC);
	host_up(b, IBV_QPT_RC);
	rc_connect(a, b);
	rc_connect(b, a);
	for (int i = 0; i < 5000; i++)
		a->mem[i] = (uint8_t)(i * 13 + 1);
	sg.addr = (uintptr_t)a->mem;
	sg.lkey = a->mr->lkey;
	rsg.addr = (uintptr_t)b->mem;
	rsg.lkey = b->mr->lkey;
	/* SEND over five packets: the receive completion on B, the ACK back to A */
	assert_int_equal(ibv_post_recv(b->qp, &rw, &rbad), 0);
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(b->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.opcode, IBV_WC_RECV);
	assert_int_equal(wc.byte_len, 5000);
	assert_int_equal(wc.imm_data, htobe32(0x12345678));
	assert_int_equal(wc.qp_num, b->qp->qp_num);
	assert_memory_equal(b->mem, a->mem, 5000);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 1);
	assert_int_equal(wc.opcode, IBV_WC_SEND);
	assert_int_equal(wc.byte_len, 5000);
	/* READ of B's memory into A */
	memset(a->mem, 0, BUF);
	w = (struct ibv_send_wr){ .wr_id = 3, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)b->mem, b->mr->rkey } };
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_RDMA_READ);
	assert_int_equal(wc.byte_len, 5000);
	assert_memory_equal(a->mem, b->mem, 5000);
	/* FETCH_AND_ADD on B */
	v = 40;
	memcpy(b->mem + 8, &v, 8);
	sg.length = 8;
	w = (struct ibv_send_wr){ .wr_id = 4, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.atomic = { (uintptr_t)b->mem + 8, 2, 0, b->mr->rkey } };
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.opcode, IBV_WC_FETCH_ADD);
	memcpy(&v, a->mem, 8);
	assert_int_equal(v, 40);
	memcpy(&v, b->mem + 8, 8);
	assert_int_equal(v, 42);
	assert_int_equal(ibv_poll_cq(a->cq, 1, &wc), 0);
	assert_int_equal(ibv_poll_cq(b->cq, 1, &wc), 0);
}

static void test_ud_between_hosts(void **state)
{
	struct host *a = &H[0], *b = &H[1];
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1111 };
	struct ibv_sge sg = { 0, 100, 0 }, rsg = { 0, 200, 0 };
	struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_ah *ah;
	struct ibv_wc wc;

	(void)state;
	host_up(a, IBV_QPT_UD);
	host_up(b, IBV_QPT_UD);
	for (int i = 0; i < 2; i++) {
		qa.qp_state = IBV_QPS_INIT;
		assert_int_equal(ibv_modify_qp(H[i].qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
								   IBV_QP_PORT | IBV_QP_QKEY), 0);
		qa.qp_state = IBV_QPS_RTR;
		assert_int_equal(ibv_modify_qp(H[i].qp, &qa, IBV_QP_STATE), 0);
		qa.qp_state = IBV_QPS_RTS;
		assert_int_equal(ibv_modify_qp(H[i].qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	}
	aa.grh.dgid = b->gid;
	ah = ibv_create_ah(a->pd, &aa);
	assert_non_null(ah);
	memset(a->mem, 0x5a, 100);
	sg.addr = (uintptr_t)a->mem;
	sg.lkey = a->mr->lkey;
	rsg.addr = (uintptr_t)b->mem;
	rsg.lkey = b->mr->lkey;
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = b->qp->qp_num;
	w.wr.ud.remote_qkey = 0x1111;
	assert_int_equal(ibv_post_recv(b->qp, &rw, &rbad), 0);
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(vt_poll_wait(b->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.byte_len, 140);
	assert_int_equal(wc.src_qp, a->qp->qp_num);
	/* the GRH area carries A's IPv4 header: source 192.0.2.65, destination .66 */
	assert_int_equal(b->mem[20 + 15], 65);
	assert_int_equal(b->mem[20 + 19], 66);
	for (int i = 0; i < 100; i++)
		assert_int_equal(b->mem[40 + i], 0x5a);
	assert_int_equal(ibv_destroy_ah(ah), 0);
}

/* UD multicast (rxe_rcv_mcast_pkt): A sends to DestQP 0xFFFFFF with the group's GID
 * ::ffff:239.0.2.1 (an rdma_cm RoCE join's); B's QP attached to the group receives it, with
 * the group as the IPv4 destination in its GRH area. */
static void test_ud_mcast_between_hosts(void **state)
{
	struct host *a = &H[0], *b = &H[1];
	union ibv_gid grp = { .raw = { [10] = 0xff, [11] = 0xff, 239, 0, 2, 1 } };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1111 };
	struct ibv_sge sg = { 0, 64, 0 }, rsg = { 0, 200, 0 };
	struct ibv_recv_wr rw = { .wr_id = 2, .sg_list = &rsg, .num_sge = 1 }, *rbad;
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_ah *ah;
	struct ibv_wc wc;

	(void)state;
	host_up(a, IBV_QPT_UD);
	host_up(b, IBV_QPT_UD);
	for (int i = 0; i < 2; i++) {
		qa.qp_state = IBV_QPS_INIT;
		assert_int_equal(ibv_modify_qp(H[i].qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
								   IBV_QP_PORT | IBV_QP_QKEY), 0);
		qa.qp_state = IBV_QPS_RTR;
		assert_int_equal(ibv_modify_qp(H[i].qp, &qa, IBV_QP_STATE), 0);
		qa.qp_state = IBV_QPS_RTS;
		assert_int_equal(ibv_modify_qp(H[i].qp, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	}
	assert_int_equal(ibv_attach_mcast(b->qp, &grp, 0), 0);
	aa.grh.dgid = grp;
	ah = ibv_create_ah(a->pd, &aa);
	assert_non_null(ah);
	memset(a->mem, 0x3c, 64);
	sg.addr = (uintptr_t)a->mem;
	sg.lkey = a->mr->lkey;
	rsg.addr = (uintptr_t)b->mem;
	rsg.lkey = b->mr->lkey;
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = 0xffffff;
	w.wr.ud.remote_qkey = 0x1111;
	assert_int_equal(ibv_post_recv(b->qp, &rw, &rbad), 0);
	post_send(a, &w);
	assert_int_equal(vt_poll_wait(a->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(vt_poll_wait(b->cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 2);
	assert_int_equal(wc.byte_len, 104);
	assert_int_equal(wc.src_qp, a->qp->qp_num);
	/* the IPv4 header in the GRH area: from 192.0.2.65 to the group */
	assert_int_equal(b->mem[20 + 15], 65);
	assert_memory_equal(b->mem + 20 + 16, grp.raw + 12, 4);
	for (int i = 0; i < 64; i++)
		assert_int_equal(b->mem[40 + i], 0x3c);
	assert_int_equal(ibv_detach_mcast(b->qp, &grp, 0), 0);
	assert_int_equal(ibv_destroy_ah(ah), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_rc_between_hosts, teardown),
		cmocka_unit_test_teardown(test_ud_between_hosts, teardown),
		cmocka_unit_test_teardown(test_ud_mcast_between_hosts, teardown),
	};
	int (*open_host)(const char *);
	struct ibv_device **l;
	int n, rc;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	open_host = (int (*)(const char *))dlsym(RTLD_DEFAULT, "rdmaemu_ctl_open_host_devices");
	if (!open_host || open_host("B")) {
		perror("rdmaemu_ctl_open_host_devices");
		return 99;
	}
	if (!open_host("no-such-node") || errno != ENOENT || !open_host("A") || errno != EINVAL)
		return 99;
	l = ibv_get_device_list(&n);
	if (!l || n != 2 || strcmp(ibv_get_device_name(l[0]), "rxe0") ||
	    strcmp(ibv_get_device_name(l[1]), "rxe0") ||
	    ibv_get_device_guid(l[0]) == ibv_get_device_guid(l[1]))
		return 99;
	if (!open_host("B") || errno != EBUSY) /* the device set is fixed now */
		return 99;
	for (int i = 0; i < 2; i++) {
		H[i].ctx = ibv_open_device(l[i]);
		if (!H[i].ctx || ibv_query_gid(H[i].ctx, 1, 1, &H[i].gid))
			return 99;
	}
	ibv_free_device_list(l);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	for (int i = 0; i < 2; i++)
		ibv_close_device(H[i].ctx);
	return rc;
}
