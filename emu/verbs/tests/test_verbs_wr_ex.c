/* The ibv_wr_* send API on the emulated data path: RC QPs of rxe0 connected to each other
 * (loopback, fixtures/rxe-ref.fabric) and UD, created with ibv_create_qp_ex and
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS. A batch of every opcode with each setter, exact completions
 * and memory; abort; the sticky ENOSPC errors; rxe's per-QP-type send ops; and the two slips
 * of rxe v44's setters, measured (probes/verbs/verbs_probe_wr.c): an SGE list's message is
 * num_sge times the first length, an inline data list's is 0 bytes. */
#include "config.h"

#include <endian.h>

#include "emu/verbs/tests/verbs_test.h"

#define BUF 8192

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid1;
static struct ibv_cq *cq;
static uint8_t *mem;
static struct ibv_mr *mr;

enum {
	RC_OPS = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
		 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
		 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
};

static struct ibv_qp *qp_ex(enum ibv_qp_type t, uint64_t ops, uint32_t max_send_wr)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = t, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
		.cap = { .max_send_wr = max_send_wr, .max_recv_wr = 8, .max_send_sge = 4,
			 .max_recv_sge = 4, .max_inline_data = 64 },
	};

	return ibv_create_qp_ex(ctx, &a);
}

static void connect_rc(struct ibv_qp *qp, uint32_t dqpn)
{
	const struct vt_conn c = {
		.dest_qpn = dqpn, .dgid = gid1, .psn = 0x55,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 4, .min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	vt_connect(qp, &c);
}

static void post_recv(struct ibv_qp *qp, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)mem + off, len, mr->lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	assert_int_equal(ibv_post_recv(qp, &w, &bad), 0);
}

static void expect_wc(uint64_t id, enum ibv_wc_opcode op, uint32_t len, uint32_t qpn)
{
	struct ibv_wc wc;

	assert_int_equal(vt_poll_wait(cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, id);
	assert_int_equal(wc.opcode, op);
	assert_int_equal(wc.qp_num, qpn);
	if (op != IBV_WC_RDMA_WRITE && op != IBV_WC_SEND)
		assert_int_equal(wc.byte_len, len);
}

static void expect_empty(void)
{
	struct ibv_wc wc;

	for (int i = 0; i < 1000; i++)
		assert_int_equal(ibv_poll_cq(cq, 1, &wc), 0);
}

static void test_rc_batch(void **state)
{
	struct ibv_qp *a = qp_ex(IBV_QPT_RC, RC_OPS, 16), *b = qp_ex(IBV_QPT_RC, RC_OPS, 16);
	struct ibv_qp_ex *x;
	uint64_t *target = (uint64_t *)(mem + 4096);
	uint8_t in1[5] = { 1, 2, 3, 4, 5 }, in2[3] = { 6, 7, 8 };
	struct ibv_data_buf bufs[2] = { { in1, 5 }, { in2, 3 } };
	struct ibv_sge two[2];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	connect_rc(a, b->qp_num);
	connect_rc(b, a->qp_num);
	x = ibv_qp_to_qp_ex(a);
	assert_ptr_equal(x, a);
	assert_non_null(x->wr_send);
	assert_null(x->wr_local_inv); /* not requested */
	assert_null(x->wr_bind_mw);
	for (int i = 0; i < 1024; i++)
		mem[i] = (uint8_t)(i * 3 + 1);
	memset(mem + 1024, 0, 3072);
	*target = 100;
	post_recv(b, 70, 2048, 512);
	post_recv(b, 71, 2560, 512);
	two[0] = (struct ibv_sge){ (uintptr_t)mem + 10, 30, mr->lkey };
	two[1] = (struct ibv_sge){ (uintptr_t)mem + 200, 50, mr->lkey };

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htobe32(0x1234));
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem, 300);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
	ibv_wr_set_sge_list(x, 2, two);
	x->wr_id = 3;
	ibv_wr_rdma_read(x, mr->rkey, (uintptr_t)mem + 500);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem + 1500, 40);
	x->wr_id = 4;
	ibv_wr_atomic_fetch_add(x, mr->rkey, (uintptr_t)target, 23);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem + 1600, 8);
	x->wr_id = 5;
	ibv_wr_atomic_cmp_swp(x, mr->rkey, (uintptr_t)target, 123, 777);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem + 1608, 8);
	x->wr_id = 6;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(x);
	ibv_wr_set_inline_data_list(x, 2, bufs);
	/* copied when set: the buffers are free again */
	memset(in1, 0xee, sizeof(in1));
	memset(in2, 0xee, sizeof(in2));
	x->wr_id = 7;
	x->wr_flags = 0; /* unsignaled: no completion */
	ibv_wr_rdma_write_imm(x, mr->rkey, (uintptr_t)mem + 3000, htobe32(9));
	ibv_wr_set_inline_data(x, "xyz", 3);
	assert_int_equal(ibv_wr_complete(x), 0);

	/* one CQ: B's completions arrive as the packets do, interleaved with A's (in order) */
	{
		struct ibv_wc wc[11];
		int n = 0, recv = 0, send = 0;

		while (n < 8) {
			assert_int_equal(vt_poll_wait(cq, &wc[n]), 1);
			assert_int_equal(wc[n].status, IBV_WC_SUCCESS);
			n++;
		}
		for (int i = 0; i < n; i++) {
			if (wc[i].qp_num == b->qp_num) {
				recv++;
				if (wc[i].wr_id == 70) {
					assert_int_equal(wc[i].opcode, IBV_WC_RECV);
					assert_int_equal(wc[i].byte_len, 300);
					assert_int_equal(wc[i].wc_flags & IBV_WC_WITH_IMM, IBV_WC_WITH_IMM);
					assert_int_equal(be32toh(wc[i].imm_data), 0x1234);
				} else if (wc[i].wr_id == 71) {
					/* rxe's inline data list: a 0-byte message */
					assert_int_equal(wc[i].opcode, IBV_WC_RECV);
					assert_int_equal(wc[i].byte_len, 0);
				} else {
					fail();
				}
				continue;
			}
			send++;
			assert_int_equal(wc[i].wr_id, (uint64_t)send);
			switch (wc[i].wr_id) {
			case 1:
				assert_int_equal(wc[i].opcode, IBV_WC_SEND);
				break;
			case 2:
				assert_int_equal(wc[i].opcode, IBV_WC_RDMA_WRITE);
				break;
			case 3:
				assert_int_equal(wc[i].opcode, IBV_WC_RDMA_READ);
				assert_int_equal(wc[i].byte_len, 40);
				break;
			case 4:
				assert_int_equal(wc[i].opcode, IBV_WC_FETCH_ADD);
				assert_int_equal(wc[i].byte_len, 8);
				break;
			case 5:
				assert_int_equal(wc[i].opcode, IBV_WC_COMP_SWAP);
				assert_int_equal(wc[i].byte_len, 8);
				break;
			case 6:
				assert_int_equal(wc[i].opcode, IBV_WC_SEND);
				break;
			default:
				fail();
			}
		}
		assert_int_equal(recv, 2);
		assert_int_equal(send, 6);
		/* WRITE_WITH_IMM consumes a receive WQE: none was left, so B's responder sends
		 * an RNR NAK and A retries until a receive WQE is posted */
		post_recv(b, 72, 3500, 16);
		assert_int_equal(vt_poll_wait(cq, &wc[8]), 1);
		assert_int_equal(wc[8].wr_id, 72);
		assert_int_equal(wc[8].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
		assert_int_equal(wc[8].byte_len, 3);
		assert_int_equal(be32toh(wc[8].imm_data), 9);
	}
	expect_empty();
	assert_memory_equal(mem + 2048, mem, 300);            /* SEND_WITH_IMM */
	/* WRITE with an SGE list of 30 + 50: 2 x 30 bytes go, 30 from each SGE */
	assert_memory_equal(mem + 1024, mem + 10, 30);
	assert_memory_equal(mem + 1054, mem + 200, 30);
	for (int i = 1084; i < 1104; i++)
		assert_int_equal(mem[i], 0);
	assert_memory_equal(mem + 1500, mem + 500, 40);       /* READ */
	{
		uint64_t v;
		static const uint8_t none[8];

		memcpy(&v, mem + 1600, 8);
		assert_int_equal(v, 100);                      /* FETCH_ADD's original */
		memcpy(&v, mem + 1608, 8);
		assert_int_equal(v, 123);                      /* CMP_SWP's original: swapped */
		assert_int_equal(*target, 777);
		assert_memory_equal(mem + 2560, none, 8);      /* the inline list sent nothing */
		assert_memory_equal(mem + 3000, "xyz", 3);     /* inline WRITE_WITH_IMM */
	}
	assert_int_equal(ibv_destroy_qp(a), 0);
	assert_int_equal(ibv_destroy_qp(b), 0);
}

/* wr_abort drops the batch; errors are sticky and wr_complete then posts nothing. */
static void test_abort_and_errors(void **state)
{
	struct ibv_qp *a = qp_ex(IBV_QPT_RC, RC_OPS, 4), *b = qp_ex(IBV_QPT_RC, RC_OPS, 4);
	struct ibv_qp_ex *x;
	struct ibv_sge five[5];
	char big[65];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	connect_rc(a, b->qp_num);
	connect_rc(b, a->qp_num);
	x = ibv_qp_to_qp_ex(a);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_start(x);
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem, 8);
	ibv_wr_abort(x);
	expect_empty();
	/* one WQE more than the queue holds (max_send_wr 4 is rounded up to 7, as rxe does):
	 * ENOSPC, and the seven before it are not posted either */
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr ia;

		assert_int_equal(ibv_query_qp(a, &qa, IBV_QP_CAP, &ia), 0);
		assert_int_equal(ia.cap.max_send_wr, 7);
	}
	ibv_wr_start(x);
	for (int i = 0; i < 8; i++) {
		x->wr_id = (uint64_t)i;
		ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
		ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem, 8);
	}
	assert_int_equal(ibv_wr_complete(x), ENOSPC);
	expect_empty();
	/* inline data over max_inline (64) */
	memset(big, 'q', sizeof(big));
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
	ibv_wr_set_inline_data(x, big, 65);
	assert_int_equal(ibv_wr_complete(x), ENOSPC);
	/* exactly max_inline is fine */
	ibv_wr_start(x);
	x->wr_id = 40;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
	ibv_wr_set_inline_data(x, big, 64);
	assert_int_equal(ibv_wr_complete(x), 0);
	expect_wc(40, IBV_WC_RDMA_WRITE, 0, a->qp_num);
	assert_memory_equal(mem + 1024, big, 64);
	/* an SGE list longer than max_sge (4) */
	for (int i = 0; i < 5; i++)
		five[i] = (struct ibv_sge){ (uintptr_t)mem, 1, mr->lkey };
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
	ibv_wr_set_sge_list(x, 5, five);
	assert_int_equal(ibv_wr_complete(x), ENOSPC);
	expect_empty();
	/* inline data lists: each buffer alone against max_inline (40 + 40 passes) */
	{
		static uint8_t forty[40];
		struct ibv_data_buf b40[2] = { { forty, 40 }, { forty, 40 } };
		struct ibv_data_buf b65[1] = { { big, 65 } };

		ibv_wr_start(x);
		x->wr_id = 41;
		ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
		ibv_wr_set_inline_data_list(x, 2, b40);
		assert_int_equal(ibv_wr_complete(x), 0);
		expect_wc(41, IBV_WC_RDMA_WRITE, 0, a->qp_num);
		ibv_wr_start(x);
		ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
		ibv_wr_set_inline_data_list(x, 1, b65);
		assert_int_equal(ibv_wr_complete(x), ENOSPC);
	}
	/* an empty batch */
	ibv_wr_start(x);
	assert_int_equal(ibv_wr_complete(x), 0);
	expect_empty();
	/* an SGE list whose first length times num_sge exceeds the SGEs (50 + 30 -> 100 > 80):
	 * the gather runs out, LOC_QP_OP_ERR, and the QP is in the error state */
	{
		struct ibv_sge two[2] = { { (uintptr_t)mem, 50, mr->lkey },
					  { (uintptr_t)mem + 100, 30, mr->lkey } };
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr ia;
		struct ibv_wc wc;

		ibv_wr_start(x);
		x->wr_id = 42;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 1024);
		ibv_wr_set_sge_list(x, 2, two);
		assert_int_equal(ibv_wr_complete(x), 0);
		assert_int_equal(vt_poll_wait(cq, &wc), 1);
		assert_int_equal(wc.wr_id, 42);
		assert_int_equal(wc.status, IBV_WC_LOC_QP_OP_ERR);
		assert_int_equal(ibv_query_qp(a, &qa, IBV_QP_STATE, &ia), 0);
		assert_int_equal(qa.qp_state, IBV_QPS_ERR);
	}
	assert_int_equal(ibv_destroy_qp(a), 0);
	assert_int_equal(ibv_destroy_qp(b), 0);
}

static void test_ud(void **state)
{
	struct ibv_qp *a = qp_ex(IBV_QPT_UD, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM, 8);
	struct ibv_qp *b = qp_ex(IBV_QPT_UD, IBV_QP_EX_WITH_SEND, 8);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x77 };
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;
	struct ibv_wc wc;

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	for (int i = 0; i < 2; i++) {
		struct ibv_qp *q = i ? b : a;

		qa.qp_state = IBV_QPS_INIT;
		assert_int_equal(ibv_modify_qp(q, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
							IBV_QP_PORT | IBV_QP_QKEY), 0);
		qa.qp_state = IBV_QPS_RTR;
		assert_int_equal(ibv_modify_qp(q, &qa, IBV_QP_STATE), 0);
		qa.qp_state = IBV_QPS_RTS;
		assert_int_equal(ibv_modify_qp(q, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	}
	aa.grh.dgid = gid1;
	ah = ibv_create_ah(pd, &aa);
	assert_non_null(ah);
	x = ibv_qp_to_qp_ex(a);
	assert_null(x->wr_rdma_write); /* UD: send and send_imm only */
	assert_null(ibv_qp_to_qp_ex(b)->wr_send_imm);
	memset(mem, 0x3c, 100);
	post_recv(b, 80, 2048, 200);
	ibv_wr_start(x);
	x->wr_id = 8;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htobe32(0xabc));
	ibv_wr_set_ud_addr(x, ah, b->qp_num, 0x77);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem, 100);
	assert_int_equal(ibv_wr_complete(x), 0);
	/* UD: the send completes when the packet leaves, the receive after the loopback */
	expect_wc(8, IBV_WC_SEND, 0, a->qp_num);
	assert_int_equal(vt_poll_wait(cq, &wc), 1);
	assert_int_equal(wc.status, IBV_WC_SUCCESS);
	assert_int_equal(wc.wr_id, 80);
	assert_int_equal(wc.byte_len, 140);
	assert_int_equal(wc.src_qp, a->qp_num);
	assert_int_equal(be32toh(wc.imm_data), 0xabc);
	assert_memory_equal(mem + 2048 + 40, mem, 100);
	assert_int_equal(ibv_destroy_ah(ah), 0);
	assert_int_equal(ibv_destroy_qp(a), 0);
	assert_int_equal(ibv_destroy_qp(b), 0);
}

/* rxe's check_qp_init_attr(): the send ops of each QP type; what the data path does not
 * execute (LOCAL_INV here) is accepted at create and refused when posted. */
static void test_send_ops_flags(void **state)
{
	struct ibv_qp *q;
	struct ibv_qp_ex *x;

	(void)state;
	errno = 0;
	assert_null(qp_ex(IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE, 8));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(qp_ex(IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ, 8));
	assert_int_equal(errno, EOPNOTSUPP);
	errno = 0;
	assert_null(qp_ex(IBV_QPT_RC, IBV_QP_EX_WITH_TSO, 8));
	assert_int_equal(errno, EOPNOTSUPP);
	q = qp_ex(IBV_QPT_UC, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW |
				     IBV_QP_EX_WITH_SEND_WITH_INV, 8);
	assert_non_null(q);
	assert_int_equal(ibv_destroy_qp(q), 0);
	q = qp_ex(IBV_QPT_RC, RC_OPS | IBV_QP_EX_WITH_LOCAL_INV, 8);
	assert_non_null(q);
	x = ibv_qp_to_qp_ex(q);
	assert_non_null(x->wr_local_inv);
	ibv_wr_start(x);
	ibv_wr_local_inv(x, 0x1234);
	assert_int_equal(ibv_wr_complete(x), EINVAL);
	assert_int_equal(ibv_destroy_qp(q), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_batch),
		cmocka_unit_test(test_abort_and_errors),
		cmocka_unit_test(test_ud),
		cmocka_unit_test(test_send_ops_flags),
	};
	int rc;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	ctx = vt_open("rxe0");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mem = calloc(1, BUF);
	if (!pd || !cq || !mem || ibv_query_gid(ctx, 1, 1, &gid1))
		return 99;
	mr = ibv_reg_mr(pd, mem, BUF,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr)
		return 99;
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(mem);
	return rc;
}
