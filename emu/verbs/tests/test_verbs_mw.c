/* Memory windows (emu/verbs/mw.c) as an application sees them: two RC QPs of rxe0 looped back
 * through GID 1; B's memory is reached through windows bound on B. Every value asserted here
 * was measured on kernel rxe (probes/verbs/verbs_probe_mw.c, fixtures/golden/rxe/
 * verbs-probe-mw.out) unless a comment says otherwise. Also: the loopback fast path declines
 * every window operation (rdmaemu_verbs_fast_count does not move) and still runs for plain
 * ones afterwards. */
#include "config.h"

#include <stdbool.h>

#include "emu/verbs/tests/verbs_test.h"

#define BUF 8192
#define FULL                                                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)

struct side {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint8_t *mem;
	struct ibv_mr *mr;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid1;
static struct side A, B;
static uint64_t (*fast_count)(void);

static void side_up(struct side *s, int mr_access, uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2, .max_recv_sge = 2 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
	};

	s->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	assert_non_null(s->cq);
	a.send_cq = a.recv_cq = s->cq;
	if (send_ops) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = send_ops;
	}
	s->qp = ibv_create_qp_ex(ctx, &a);
	assert_non_null(s->qp);
	s->mem = calloc(1, BUF);
	assert_non_null(s->mem);
	s->mr = ibv_reg_mr(pd, s->mem, BUF, mr_access);
	assert_non_null(s->mr);
}

static void pair_up(int mr_access_b, uint64_t send_ops)
{
	struct vt_conn c = { .dgid = gid1, .psn = 0x40, .access = FULL, .rd_atomic = 1,
			     .min_rnr_timer = 12, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7 };

	side_up(&A, FULL, send_ops);
	side_up(&B, mr_access_b, send_ops);
	c.dest_qpn = B.qp->qp_num;
	vt_connect(A.qp, &c);
	c.dest_qpn = A.qp->qp_num;
	vt_connect(B.qp, &c);
}

static void side_down(struct side *s)
{
	assert_int_equal(ibv_destroy_qp(s->qp), 0);
	assert_int_equal(ibv_destroy_cq(s->cq), 0);
	if (s->mr) {
		assert_int_equal(ibv_dereg_mr(s->mr), 0);
		free(s->mem);
	}
	memset(s, 0, sizeof(*s));
}

static int teardown(void **state)
{
	(void)state;
	side_down(&A);
	side_down(&B);
	return 0;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &i), 0);
	return a.qp_state;
}

static uint32_t rq_psn(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_RQ_PSN, &i), 0);
	return a.rq_psn;
}

static void wc1(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st, enum ibv_wc_opcode op,
		uint32_t len, unsigned flags, struct ibv_wc *out)
{
	struct ibv_wc wc;

	assert_int_equal(ibv_poll_cq(cq, 1, &wc), 1);
	assert_int_equal(wc.wr_id, id);
	assert_int_equal(wc.status, st);
	if (st == IBV_WC_SUCCESS) {
		assert_int_equal(wc.opcode, op);
		assert_int_equal(wc.byte_len, len);
		assert_int_equal(wc.wc_flags, flags);
	}
	if (out)
		*out = wc;
}

static void empty(struct ibv_cq *cq)
{
	struct ibv_wc wc;

	assert_int_equal(ibv_poll_cq(cq, 1, &wc), 0);
}

/* A posts op (WRITE / READ / FETCH_ADD / SEND_WITH_INV) to B's memory + off with rkey. */
static int a_post(uint64_t id, enum ibv_wr_opcode op, uint32_t len, uint32_t rkey, uint64_t off)
{
	struct ibv_sge sg = { (uintptr_t)A.mem, len, A.mr->lkey };
	struct ibv_send_wr w = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w.wr.atomic.remote_addr = (uintptr_t)B.mem + off;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = 1;
	} else if (op == IBV_WR_SEND_WITH_INV) {
		w.invalidate_rkey = rkey;
	} else {
		w.wr.rdma.remote_addr = (uintptr_t)B.mem + off;
		w.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(A.qp, &w, &bad);
}

static int b_post(uint64_t id, enum ibv_wr_opcode op, struct ibv_mw *mw, uint32_t rkey,
		  uint64_t off, uint64_t len, unsigned access)
{
	struct ibv_send_wr w = { .wr_id = id, .opcode = op, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	if (op == IBV_WR_BIND_MW) {
		w.bind_mw.mw = mw;
		w.bind_mw.rkey = rkey;
		w.bind_mw.bind_info = (struct ibv_mw_bind_info){ B.mr, (uintptr_t)B.mem + off, len,
								 access };
	} else {
		w.invalidate_rkey = rkey;
	}
	return ibv_post_send(B.qp, &w, &bad);
}

static int bind1(uint64_t id, struct ibv_mw *mw, uint64_t off, uint64_t len, unsigned access)
{
	struct ibv_mw_bind b = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = { B.mr, (uintptr_t)B.mem + off, len, access } };

	return ibv_bind_mw(B.qp, mw, &b);
}

static void test_alloc(void **state)
{
	struct ibv_mw *m1, *m2;

	(void)state;
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	m2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	assert_non_null(m1);
	assert_non_null(m2);
	assert_int_equal(m1->type, IBV_MW_TYPE_1);
	assert_ptr_equal(m1->pd, pd);
	assert_ptr_equal(m1->context, ctx);
	/* the MW pool's indices (rxe: above the MR range), allocated one after the other */
	assert_true(m1->rkey >> 8 > (1u << 19));
	assert_int_equal((m2->rkey >> 8) - (m1->rkey >> 8), 1);
	errno = 0;
	assert_null(ibv_alloc_mw(pd, (enum ibv_mw_type)3));
	assert_int_equal(errno, EINVAL);
	/* a PD with a window is in use (uverbs' usecnt; not measured) */
	{
		struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
		struct ibv_mw *m3 = ibv_alloc_mw(pd2, IBV_MW_TYPE_1);

		assert_non_null(m3);
		assert_int_equal(ibv_dealloc_pd(pd2), EBUSY);
		assert_int_equal(ibv_dealloc_mw(m3), 0);
		assert_int_equal(ibv_dealloc_pd(pd2), 0);
	}
	/* the inline ibv_bind_mw takes type 1 only; the provider refuses ZERO_BASED */
	assert_int_equal(bind1(1, m2, 0, 64, IBV_ACCESS_REMOTE_WRITE), EINVAL);
	assert_int_equal(bind1(1, m1, 0, 64, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED),
			 EINVAL);
	empty(B.cq);
	assert_int_equal(ibv_dealloc_mw(m1), 0);
	assert_int_equal(ibv_dealloc_mw(m2), 0);
}

static void test_type1(void **state)
{
	struct ibv_mw *mw;
	uint32_t k;
	uint64_t fast0 = fast_count();

	(void)state;
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	assert_non_null(mw);
	k = mw->rkey;
	assert_int_equal(bind1(61, mw, 0, 1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
			 0);
	assert_int_equal(mw->rkey, (k & ~0xffu) | ((k + 1) & 0xff)); /* the provider's next key */
	wc1(B.cq, 61, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	/* a dereg of the MR under a bound window: rxe_dereg_mr's EINVAL (measured) */
	assert_int_equal(ibv_dereg_mr(B.mr), EINVAL);
	memset(A.mem, 0x77, 200);
	assert_int_equal(a_post(20, IBV_WR_RDMA_WRITE, 100, mw->rkey, 10), 0);
	wc1(A.cq, 20, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 100, 0, NULL);
	assert_int_equal(B.mem[9], 0);
	assert_int_equal(B.mem[10], 0x77);
	assert_int_equal(B.mem[109], 0x77);
	assert_int_equal(B.mem[110], 0);
	memset(A.mem, 0, 200);
	assert_int_equal(a_post(21, IBV_WR_RDMA_READ, 100, mw->rkey, 10), 0);
	wc1(A.cq, 21, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 100, 0, NULL);
	assert_int_equal(A.mem[0], 0x77);
	/* rxe 6.1 checks the range against the window's MR, not the window */
	assert_int_equal(a_post(22, IBV_WR_RDMA_WRITE, 100, mw->rkey, 1000), 0);
	wc1(A.cq, 22, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 100, 0, NULL);
	/* nothing of this went the fast path */
	assert_int_equal(fast_count(), fast0);
	/* no REMOTE_ATOMIC in the window: REM_ACCESS_ERR, both QPs to ERR */
	assert_int_equal(a_post(23, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, mw->rkey, 0), 0);
	wc1(A.cq, 23, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, NULL);
	assert_int_equal(qp_state(A.qp), IBV_QPS_ERR);
	assert_int_equal(qp_state(B.qp), IBV_QPS_ERR);
	assert_int_equal(rq_psn(B.qp), 0x43);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void test_type1_old_key(void **state)
{
	struct ibv_mw *mw;
	uint32_t k;

	(void)state;
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	k = mw->rkey;
	assert_int_equal(bind1(1, mw, 0, 64, IBV_ACCESS_REMOTE_WRITE), 0);
	wc1(B.cq, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	assert_int_equal(a_post(2, IBV_WR_RDMA_WRITE, 10, k, 0), 0);
	wc1(A.cq, 2, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, NULL);
	assert_int_equal(qp_state(B.qp), IBV_QPS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void test_bind_errors(void **state)
{
	struct ibv_mw *mw;

	(void)state;
	pair_up(FULL, 0); /* no MW_BIND on B's MR */
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	assert_int_equal(bind1(75, mw, 0, 64, IBV_ACCESS_REMOTE_WRITE), 0);
	wc1(B.cq, 75, IBV_WC_MW_BIND_ERR, 0, 0, 0, NULL);
	assert_int_equal(qp_state(B.qp), IBV_QPS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	teardown(NULL);

	/* LOCAL_INV of a type 1 window: LOC_QP_OP_ERR (o10-37.2.26) */
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	assert_int_equal(b_post(74, IBV_WR_LOCAL_INV, NULL, mw->rkey, 0, 0, 0), 0);
	wc1(B.cq, 74, IBV_WC_LOC_QP_OP_ERR, 0, 0, 0, NULL);
	assert_int_equal(qp_state(B.qp), IBV_QPS_ERR);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
	teardown(NULL);

	/* a writable window on an MR without LOCAL_WRITE (C10-74), and one past the MR (C10-75) */
	pair_up(IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ, 0);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	assert_int_equal(bind1(77, mw, 0, 64, IBV_ACCESS_REMOTE_WRITE), 0);
	wc1(B.cq, 77, IBV_WC_MW_BIND_ERR, 0, 0, 0, NULL);
	teardown(NULL);
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	mw->rkey = mw->rkey - 1; /* undo the failed bind's key, as rdma-core asks */
	assert_int_equal(bind1(76, mw, BUF - 100, 200, IBV_ACCESS_REMOTE_WRITE), 0);
	wc1(B.cq, 76, IBV_WC_MW_BIND_ERR, 0, 0, 0, NULL);
	teardown(NULL);
	/* length 0 unbinds: the window then answers nothing */
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	mw->rkey = mw->rkey - 1;
	assert_int_equal(bind1(78, mw, 0, 0, IBV_ACCESS_REMOTE_WRITE), 0);
	wc1(B.cq, 78, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	assert_int_equal(a_post(34, IBV_WR_RDMA_WRITE, 10, mw->rkey, 0), 0);
	wc1(A.cq, 34, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, NULL);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void test_type2(void **state)
{
	struct ibv_mw *mw;
	uint32_t k;
	struct ibv_send_wr w = { .opcode = IBV_WR_BIND_MW, .num_sge = 0 }, *bad;
	struct ibv_sge sg = { 0, 0, 0 };
	struct ibv_mr *old_mr;
	uint8_t *old_mem;

	(void)state;
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	/* the provider's validate_send_wr: a BIND_MW WR carries no SGE, no data, no imm */
	w.bind_mw.mw = mw;
	w.bind_mw.bind_info.mr = B.mr;
	w.num_sge = 1;
	w.sg_list = &sg;
	assert_int_equal(ibv_post_send(B.qp, &w, &bad), EINVAL);
	assert_ptr_equal(bad, &w);
	w.num_sge = 0;
	w.imm_data = 1;
	assert_int_equal(ibv_post_send(B.qp, &w, &bad), EINVAL);
	k = (mw->rkey & ~0xffu) | 0x42;
	assert_int_equal(b_post(65, IBV_WR_BIND_MW, mw, k, 100, 200, IBV_ACCESS_REMOTE_WRITE), 0);
	assert_int_not_equal(mw->rkey, k); /* a WR does not touch the application's copy */
	wc1(B.cq, 65, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	memset(A.mem, 0x31, 50);
	assert_int_equal(a_post(26, IBV_WR_RDMA_WRITE, 50, k, 150), 0);
	wc1(A.cq, 26, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 50, 0, NULL);
	assert_int_equal(B.mem[150], 0x31);
	assert_int_equal(B.mem[199], 0x31);
	mw->rkey = k;
	/* bound: a second bind fails (o10-37.2.30), MW_BIND_ERR, B to ERR */
	assert_int_equal(b_post(66, IBV_WR_BIND_MW, mw, k + 1, 100, 200, IBV_ACCESS_REMOTE_WRITE),
			 0);
	wc1(B.cq, 66, IBV_WC_MW_BIND_ERR, 0, 0, 0, NULL);
	assert_int_equal(qp_state(B.qp), IBV_QPS_ERR);
	/* the window holds B's MR (rxe_dereg_mr: EINVAL, measured): it outlives the pair */
	assert_int_equal(ibv_dereg_mr(B.mr), EINVAL);
	old_mr = B.mr;
	old_mem = B.mem;
	B.mr = NULL;
	teardown(NULL);

	/* bound to the destroyed QP: another QP's packets are refused; LOCAL_INV from any QP */
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	assert_int_equal(a_post(28, IBV_WR_RDMA_WRITE, 50, k, 150), 0);
	wc1(A.cq, 28, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, NULL);
	teardown(NULL);
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	assert_int_equal(b_post(67, IBV_WR_LOCAL_INV, NULL, k, 0, 0, 0), 0);
	wc1(B.cq, 67, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0, 0, NULL);
	assert_int_equal(qp_state(B.qp), IBV_QPS_RTS);
	assert_int_equal(ibv_dereg_mr(old_mr), 0); /* unbound now */
	free(old_mem);
	/* FREE again: it binds (here) with a new key; invalidated, it answers nothing */
	k = (k & ~0xffu) | 0x43;
	assert_int_equal(b_post(68, IBV_WR_BIND_MW, mw, k, 100, 200, IBV_ACCESS_REMOTE_WRITE), 0);
	wc1(B.cq, 68, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	mw->rkey = k;
	assert_int_equal(b_post(69, IBV_WR_LOCAL_INV, NULL, k, 0, 0, 0), 0);
	wc1(B.cq, 69, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0, 0, NULL);
	assert_int_equal(a_post(29, IBV_WR_RDMA_WRITE, 50, k, 150), 0);
	wc1(A.cq, 29, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, NULL);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

static void test_send_with_inv(void **state)
{
	struct ibv_mw *mw, *m1;
	struct ibv_recv_wr rw = { .wr_id = 71, .num_sge = 1 }, *rbad;
	struct ibv_sge rs;
	struct ibv_wc wc;
	uint32_t k;

	(void)state;
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	rs = (struct ibv_sge){ (uintptr_t)B.mem + 2048, 200, B.mr->lkey };
	rw.sg_list = &rs;
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	k = (mw->rkey & ~0xffu) | 0x44;
	assert_int_equal(b_post(70, IBV_WR_BIND_MW, mw, k, 100, 200, IBV_ACCESS_REMOTE_WRITE), 0);
	wc1(B.cq, 70, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	assert_int_equal(ibv_post_recv(B.qp, &rw, &rbad), 0);
	memset(A.mem, 0x5c, 20);
	assert_int_equal(a_post(30, IBV_WR_SEND_WITH_INV, 20, k, 0), 0);
	wc1(A.cq, 30, IBV_WC_SUCCESS, IBV_WC_SEND, 20, 0, NULL);
	/* rxe's raw kernel flag IB_WC_WITH_INVALIDATE (bit 2) reads as IBV_WC_IP_CSUM_OK */
	wc1(B.cq, 71, IBV_WC_SUCCESS, IBV_WC_RECV, 20, IBV_WC_GRH | IBV_WC_IP_CSUM_OK, &wc);
	assert_int_equal(wc.invalidated_rkey, k);
	assert_int_equal(B.mem[2048], 0x5c);
	assert_int_equal(rq_psn(B.qp), 0x41);
	assert_int_equal(a_post(31, IBV_WR_RDMA_WRITE, 50, k, 150), 0);
	wc1(A.cq, 31, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, NULL);
	assert_int_equal(rq_psn(B.qp), 0x41);
	teardown(NULL);

	/* a type 1 window's key (and an MR's) cannot be invalidated: class J, REM_INV_REQ_ERR at
	 * the receiver, the SEND itself acknowledged, B to ERR with its ePSN where it was */
	m1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	for (int i = 0; i < 2; i++) {
		pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
		rs = (struct ibv_sge){ (uintptr_t)B.mem + 2048, 200, B.mr->lkey };
		rw.wr_id = 72 + i;
		assert_int_equal(ibv_post_recv(B.qp, &rw, &rbad), 0);
		assert_int_equal(a_post(32 + i, IBV_WR_SEND_WITH_INV, 20, i ? B.mr->rkey : m1->rkey,
					0), 0);
		wc1(A.cq, 32 + i, IBV_WC_SUCCESS, IBV_WC_SEND, 20, 0, NULL);
		wc1(B.cq, 72 + i, IBV_WC_REM_INV_REQ_ERR, 0, 0, 0, &wc);
		assert_int_equal(wc.byte_len, 0);
		assert_int_equal(qp_state(A.qp), IBV_QPS_RTS);
		assert_int_equal(qp_state(B.qp), IBV_QPS_ERR);
		assert_int_equal(rq_psn(B.qp), 0x40);
		if (!i)
			teardown(NULL);
	}
	assert_int_equal(ibv_dealloc_mw(m1), 0);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

/* The ibv_wr_* builders of rxe's provider: wr_bind_mw names the window by its current key and
 * the new one, wr_local_inv / wr_send_inv the key to invalidate (not measured on the VM: they
 * fill the same kernel WQE as ibv_post_send's WRs). */
static void test_wr_ex(void **state)
{
	const uint64_t ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_BIND_MW |
			     IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV;
	struct ibv_qp_ex *bx, *ax;
	struct ibv_mw *mw;
	struct ibv_mw_bind_info bi;
	struct ibv_recv_wr rw = { .wr_id = 5, .num_sge = 1 }, *rbad;
	struct ibv_sge rs;
	struct ibv_wc wc;
	uint32_t k;

	(void)state;
	pair_up(FULL | IBV_ACCESS_MW_BIND, ops);
	bx = ibv_qp_to_qp_ex(B.qp);
	ax = ibv_qp_to_qp_ex(A.qp);
	assert_non_null(bx);
	assert_non_null(ax);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	k = (mw->rkey & ~0xffu) | 0x10;
	bi = (struct ibv_mw_bind_info){ B.mr, (uintptr_t)B.mem, 256, IBV_ACCESS_REMOTE_WRITE };
	ibv_wr_start(bx);
	bx->wr_id = 1;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(bx, mw, k, &bi);
	assert_int_equal(ibv_wr_complete(bx), 0);
	wc1(B.cq, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	mw->rkey = k;
	rs = (struct ibv_sge){ (uintptr_t)B.mem + 4096, 64, B.mr->lkey };
	rw.sg_list = &rs;
	assert_int_equal(ibv_post_recv(B.qp, &rw, &rbad), 0);
	ibv_wr_start(ax);
	ax->wr_id = 2;
	ax->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(ax, k, (uintptr_t)B.mem + 8);
	ibv_wr_set_sge(ax, A.mr->lkey, (uintptr_t)A.mem, 16);
	ax->wr_id = 3;
	ibv_wr_send_inv(ax, k);
	ibv_wr_set_sge(ax, A.mr->lkey, (uintptr_t)A.mem, 4);
	assert_int_equal(ibv_wr_complete(ax), 0);
	wc1(A.cq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 16, 0, NULL);
	wc1(A.cq, 3, IBV_WC_SUCCESS, IBV_WC_SEND, 4, 0, NULL);
	wc1(B.cq, 5, IBV_WC_SUCCESS, IBV_WC_RECV, 4, IBV_WC_GRH | IBV_WC_IP_CSUM_OK, &wc);
	assert_int_equal(wc.invalidated_rkey, k);
	/* FREE again: bind and LOCAL_INV it through the builders */
	k = (k & ~0xffu) | 0x11;
	ibv_wr_start(bx);
	bx->wr_id = 6;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(bx, mw, k, &bi);
	assert_int_equal(ibv_wr_complete(bx), 0);
	wc1(B.cq, 6, IBV_WC_SUCCESS, IBV_WC_BIND_MW, 0, 0, NULL);
	mw->rkey = k;
	ibv_wr_start(bx);
	bx->wr_id = 7;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(bx, k);
	assert_int_equal(ibv_wr_complete(bx), 0);
	wc1(B.cq, 7, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0, 0, NULL);
	empty(A.cq);
	empty(B.cq);
	assert_int_equal(ibv_dealloc_mw(mw), 0);
}

/* Plain traffic after window traffic still takes the fast path. */
static void test_fast_path_after(void **state)
{
	uint64_t fast0 = fast_count();

	(void)state;
	pair_up(FULL | IBV_ACCESS_MW_BIND, 0);
	assert_int_equal(a_post(1, IBV_WR_RDMA_WRITE, 64, B.mr->rkey, 0), 0);
	wc1(A.cq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, 64, 0, NULL);
	assert_int_equal(fast_count(), fast0 + 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_alloc, teardown),
		cmocka_unit_test_teardown(test_type1, teardown),
		cmocka_unit_test_teardown(test_type1_old_key, teardown),
		cmocka_unit_test_teardown(test_bind_errors, teardown),
		cmocka_unit_test_teardown(test_type2, teardown),
		cmocka_unit_test_teardown(test_send_with_inv, teardown),
		cmocka_unit_test_teardown(test_wr_ex, teardown),
		cmocka_unit_test_teardown(test_fast_path_after, teardown),
	};
	int rc;

	(void)argc;
	setenv("RDMAEMU_QUIESCE_US", "0", 0);
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	fast_count = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "rdmaemu_verbs_fast_count");
	if (!fast_count)
		return 99;
	ctx = vt_open("rxe0");
	pd = ibv_alloc_pd(ctx);
	assert_non_null(pd);
	assert_int_equal(ibv_query_gid(ctx, 1, 1, &gid1), 0);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return rc;
}
