/* Verbs probe, third part: the live PSNs ibv_query_qp reports (rxe_qp_to_attr: req.psn and
 * resp.psn), the UC / UD length and R_Key errors, and memory windows (rxe_mw.c: type 1 bound
 * with ibv_bind_mw, type 2 with IBV_WR_BIND_MW; LOCAL_INV; SEND_WITH_INV; the responder's
 * R_Key checks against MWs). Two QPs on the first device looped back through GID 1, as
 * verbs_probe_datapath.c. Run on kernel rxe in the reference VM its output is
 * fixtures/golden/rxe/verbs-probe-mw.out; make check compares the emulator's
 * (probes/probe-diff.sh). Keys are printed only as what does not depend on the
 * kernel's random key byte: an MW's index (rkey >> 8) and whether keys match. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define BUF 4096
#define FULL_ACCESS                                                                                \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid1;
static struct side A, B;
static uint32_t last_inv; /* invalidated_rkey of the last completion shown */
static int last_status;

static const char *who(uint32_t qpn)
{
	if (A.qp && qpn == A.qp->qp_num)
		return "A";
	if (B.qp && qpn == B.qp->qp_num)
		return "B";
	return qpn ? "other" : "0";
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void show(const char *label, struct ibv_cq *cq)
{
	double until = now_s() + 0.3;
	struct ibv_wc wc;
	int n;

	do
		n = ibv_poll_cq(cq, 1, &wc);
	while (n == 0 && now_s() < until);
	if (n <= 0) {
		last_status = -1;
		printf("%-34s -> none\n", label);
		return;
	}
	last_status = wc.status;
	last_inv = wc.invalidated_rkey; /* flags: see below */
	printf("%-34s -> id=%llu st=%d op=%d len=%u flags=0x%x qp=%s\n", label,
	       (unsigned long long)wc.wr_id, wc.status, wc.opcode, wc.byte_len, wc.wc_flags,
	       who(wc.qp_num));
}

static void show_state(const char *label, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN, &i);
	printf("%-34s -> state=%d sq_psn=0x%x rq_psn=0x%x\n", label, a.qp_state, a.sq_psn,
	       a.rq_psn);
}

static void psns(const char *label)
{
	char l[64];

	snprintf(l, sizeof(l), "%s: A", label);
	show_state(l, A.qp);
	snprintf(l, sizeof(l), "%s: B", label);
	show_state(l, B.qp);
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, int access, uint32_t psn)
{
	int rc = qp->qp_type == IBV_QPT_RC, ud = qp->qp_type == IBV_QPT_UD;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access, .qkey = 0x11 };

	ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				      (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  ud ? IBV_QP_STATE
			     : IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				       IBV_QP_RQ_PSN |
				       (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		printf("modify RTR failed\n");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN |
				  (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_MAX_QP_RD_ATOMIC
				      : 0)))
		printf("modify RTS failed\n");
}

static void side_up(struct side *s, enum ibv_qp_type t, int mr_access)
{
	struct ibv_qp_init_attr ia = { .qp_type = t,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 2,
						.max_recv_sge = 2 } };

	s->mem = calloc(1, BUF);
	s->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	s->mr = ibv_reg_mr(pd, s->mem, BUF, mr_access);
	if (!s->mem || !s->cq || !s->qp || !s->mr) {
		printf("setup failed\n");
		exit(1);
	}
}

/* An MR a window is still bound to cannot be deregistered: the refusal is printed, and the MR
 * and its memory are kept (the window may still reach it) until the windows are gone. */
static struct side kept[16];
static int nkept;

static void side_down(struct side *s)
{
	int r;

	ibv_destroy_qp(s->qp);
	ibv_destroy_cq(s->cq);
	r = ibv_dereg_mr(s->mr);
	if (r) {
		printf("%-34s -> %d\n", "dereg_mr with a bound window", r);
		if (nkept < 16)
			kept[nkept++] = *s;
	} else {
		free(s->mem);
	}
	memset(s, 0, sizeof(*s));
}

static void pair(enum ibv_qp_type t, int access_b, int mr_access_b, uint32_t psn)
{
	side_up(&A, t, FULL_ACCESS);
	side_up(&B, t, mr_access_b);
	connect_qp(A.qp, B.qp->qp_num, FULL_ACCESS, psn);
	connect_qp(B.qp, A.qp->qp_num, access_b, psn);
}

static void unpair(void)
{
	side_down(&A);
	side_down(&B);
}

static void post_recv(struct side *s, uint64_t id, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)s->mem + 2048, len, s->mr->lkey };
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->qp, &w, &bad))
		printf("post_recv failed\n");
}

/* Posts from A to B's buffer + off with rkey (for SEND_WITH_INV: the key to invalidate). */
static void post_k(const char *label, uint64_t id, enum ibv_wr_opcode op, uint32_t len,
		   uint32_t rkey, uint64_t off)
{
	struct ibv_sge sg = { (uintptr_t)A.mem, len, A.mr->lkey };
	struct ibv_send_wr w = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid1, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_ah *ah = NULL;
	int r;

	if (A.qp->qp_type == IBV_QPT_UD) {
		ah = ibv_create_ah(pd, &aa);
		w.wr.ud.ah = ah;
		w.wr.ud.remote_qpn = B.qp->qp_num;
		w.wr.ud.remote_qkey = 0x11;
	} else if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w.wr.atomic.remote_addr = (uintptr_t)B.mem + off;
		w.wr.atomic.rkey = rkey;
		w.wr.atomic.compare_add = 1;
	} else if (op == IBV_WR_SEND_WITH_INV) {
		w.invalidate_rkey = rkey;
	} else {
		w.wr.rdma.remote_addr = (uintptr_t)B.mem + off;
		w.wr.rdma.rkey = rkey;
	}
	r = ibv_post_send(A.qp, &w, &bad);
	printf("%-34s -> %d\n", label, r);
	show(label, A.cq);
	if (ah)
		ibv_destroy_ah(ah);
}

/* B posts a BIND_MW WR for a type 2 MW (key byte `key`) or a LOCAL_INV of rkey. */
static int post_b(uint64_t id, enum ibv_wr_opcode op, struct ibv_mw *mw, uint32_t rkey,
		  struct ibv_mr *mr, uint64_t off, uint64_t len, unsigned access)
{
	struct ibv_send_wr w = { .wr_id = id, .opcode = op, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	if (op == IBV_WR_BIND_MW) {
		w.bind_mw.mw = mw;
		w.bind_mw.rkey = rkey;
		w.bind_mw.bind_info.mr = mr;
		w.bind_mw.bind_info.addr = (uintptr_t)B.mem + off;
		w.bind_mw.bind_info.length = len;
		w.bind_mw.bind_info.mw_access_flags = access;
	} else {
		w.invalidate_rkey = rkey;
	}
	return ibv_post_send(B.qp, &w, &bad);
}

static int bind1(uint64_t id, struct ibv_mw *mw, struct ibv_mr *mr, uint64_t off, uint64_t len,
		 unsigned access)
{
	struct ibv_mw_bind b = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED,
				 .bind_info = { .mr = mr, .addr = (uintptr_t)B.mem + off,
						.length = len, .mw_access_flags = access } };

	return ibv_bind_mw(B.qp, mw, &b);
}

/* The bind's completion; a failed one leaves the MW's key as it was (the application undoes
 * ibv_bind_mw's increment, as rdma-core's rxe_bind_mw asks). */
static void bind_done(const char *label, struct ibv_mw *mw, uint32_t before)
{
	show(label, B.cq);
	if (last_status)
		mw->rkey = before;
}

static void psn_part(void)
{
	pair(IBV_QPT_RC, FULL_ACCESS, FULL_ACCESS, 0x123);
	psns("psn fresh");
	post_recv(&B, 1, 200);
	post_k("psn rc send 100", 1, IBV_WR_SEND, 100, 0, 0);
	show("psn rc send 100: receiver", B.cq);
	psns("psn after send");
	post_k("psn rc write 3000", 2, IBV_WR_RDMA_WRITE, 3000, B.mr->rkey, 0);
	psns("psn after write 3000");
	post_k("psn rc read 3000", 3, IBV_WR_RDMA_READ, 3000, B.mr->rkey, 0);
	psns("psn after read 3000");
	post_k("psn rc fetch_add", 4, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, B.mr->rkey, 0);
	psns("psn after atomic");
	post_k("psn rc write 0", 5, IBV_WR_RDMA_WRITE, 0, B.mr->rkey, 0);
	psns("psn after write 0");
	post_recv(&B, 2, 10);
	post_k("psn rc send too long", 6, IBV_WR_SEND, 100, 0, 0);
	show("psn rc send too long: receiver", B.cq);
	psns("psn after error");
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

		ibv_modify_qp(A.qp, &a, IBV_QP_STATE);
		ibv_modify_qp(B.qp, &a, IBV_QP_STATE);
	}
	psns("psn after reset");
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, FULL_ACCESS, 0xfffffe);
	post_k("psn wrap write 3000", 7, IBV_WR_RDMA_WRITE, 3000, B.mr->rkey, 0);
	psns("psn wrap");
	unpair();

	pair(IBV_QPT_UC, FULL_ACCESS, FULL_ACCESS, 0x200);
	post_recv(&B, 3, 200);
	post_k("psn uc send 2000", 8, IBV_WR_SEND, 2000, 0, 0);
	show("psn uc send 2000: receiver", B.cq);
	psns("psn uc");
	unpair();

	pair(IBV_QPT_UD, 0, FULL_ACCESS, 0x300);
	post_recv(&B, 4, 200);
	post_k("psn ud send 100", 9, IBV_WR_SEND, 100, 0, 0);
	show("psn ud send 100: receiver", B.cq);
	psns("psn ud");
	unpair();
}

static void ucud_part(void)
{
	pair(IBV_QPT_UC, FULL_ACCESS, FULL_ACCESS, 0x10);
	post_recv(&B, 41, 10);
	post_k("uc send too long", 11, IBV_WR_SEND, 100, 0, 0);
	show("uc send too long: receiver", B.cq);
	show_state("uc send too long: B", B.qp);
	post_k("uc send 5 after", 12, IBV_WR_SEND, 5, 0, 0);
	show("uc send 5 after: receiver", B.cq);
	unpair();
	pair(IBV_QPT_UC, FULL_ACCESS, FULL_ACCESS, 0x10);
	post_recv(&B, 42, 10);
	post_k("uc write bad rkey", 13, IBV_WR_RDMA_WRITE, 100, B.mr->rkey ^ 0x100, 0);
	show("uc write bad rkey: receiver", B.cq);
	show_state("uc write bad rkey: B", B.qp);
	unpair();
	pair(IBV_QPT_UC, FULL_ACCESS, FULL_ACCESS, 0x10);
	memset(A.mem, 0x5a, 100);
	post_k("uc write beyond mr", 14, IBV_WR_RDMA_WRITE, 100, B.mr->rkey, BUF - 50);
	show_state("uc write beyond mr: B", B.qp);
	unpair();
	pair(IBV_QPT_UC, FULL_ACCESS, FULL_ACCESS, 0x10);
	memset(A.mem, 0x5a, 100);
	post_k("uc write good", 15, IBV_WR_RDMA_WRITE, 100, B.mr->rkey, 0);
	printf("%-34s -> %d %d\n", "uc write good: bytes", B.mem[0], B.mem[99]);
	psns("uc after errors");
	unpair();

	pair(IBV_QPT_UD, 0, FULL_ACCESS, 0x20);
	post_recv(&B, 51, 50);
	post_k("ud send too long", 16, IBV_WR_SEND, 100, 0, 0);
	show("ud send too long: receiver", B.cq);
	show_state("ud send too long: B", B.qp);
	unpair();
	pair(IBV_QPT_UD, 0, FULL_ACCESS, 0x20);
	post_recv(&B, 52, 200);
	post_k("ud send 5 after", 17, IBV_WR_SEND, 5, 0, 0);
	show("ud send 5 after: receiver", B.cq);
	show("ud send 5 after: receiver 2", B.cq);
	unpair();
}

static void mw_part(void)
{
	const int mwa = FULL_ACCESS | IBV_ACCESS_MW_BIND;
	struct ibv_mw *mw1, *mw2, *mw3;
	uint32_t k, k1;
	int r;

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	printf("%-34s -> %s type=%d\n", "alloc_mw type 1", mw1 ? "ok" : "NULL",
	       mw1 ? (int)mw1->type : -1);
	mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	printf("%-34s -> %s type=%d\n", "alloc_mw type 2", mw2 ? "ok" : "NULL",
	       mw2 ? (int)mw2->type : -1);
	if (!mw1 || !mw2)
		exit(1);
	printf("%-34s -> %u\n", "mw index difference", (mw2->rkey >> 8) - (mw1->rkey >> 8));
	errno = 0;
	mw3 = ibv_alloc_mw(pd, (enum ibv_mw_type)3);
	printf("%-34s -> %s errno=%d\n", "alloc_mw type 3", mw3 ? "ok" : "NULL", mw3 ? 0 : errno);
	if (mw3)
		ibv_dealloc_mw(mw3);

	/* type 1 through ibv_bind_mw */
	k = mw1->rkey;
	k1 = mw1->rkey;
	r = bind1(61, mw1, B.mr, 0, 1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	printf("%-34s -> %d key+1=%d\n", "bind_mw type 1", r,
	       mw1->rkey == ((k & ~0xffu) | ((k + 1) & 0xff)));
	show("bind_mw type 1: B", B.cq);
	k1 = mw1->rkey;
	r = bind1(62, mw1, B.mr, 0, 1024, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED);
	printf("%-34s -> %d\n", "bind_mw zero based", r);
	k1 = mw1->rkey;
	r = bind1(63, mw2, B.mr, 0, 1024, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "bind_mw on a type 2 MW", r);
	memset(A.mem, 0x77, 200);
	post_k("write via mw1", 20, IBV_WR_RDMA_WRITE, 100, mw1->rkey, 10);
	printf("%-34s -> %d %d %d\n", "write via mw1: bytes", B.mem[9], B.mem[10], B.mem[109]);
	post_k("read via mw1", 21, IBV_WR_RDMA_READ, 100, mw1->rkey, 0);
	post_k("write via mw1 beyond window", 23, IBV_WR_RDMA_WRITE, 100, mw1->rkey, 1000);
	show_state("write beyond window: B", B.qp);
	post_k("write via old mw1 key", 22, IBV_WR_RDMA_WRITE, 10, k, 0);
	show_state("write via old mw1 key: B", B.qp);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	post_k("atomic via mw1 (no atomic)", 24, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, mw1->rkey, 0);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	/* rebinding type 1 with more rights; the MR of B changed (new pair) */
	k1 = mw1->rkey;
	r = bind1(64, mw1, B.mr, 0, 64, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "rebind type 1 atomic", r);
	bind_done("rebind type 1 atomic: B", mw1, k1);
	post_k("atomic via mw1", 25, IBV_WR_ATOMIC_FETCH_AND_ADD, 8, mw1->rkey, 8);
	/* type 2 through a BIND_MW WR */
	k = (mw2->rkey & ~0xffu) | 0x42;
	r = post_b(65, IBV_WR_BIND_MW, mw2, k, B.mr, 100, 200, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d user rkey unchanged=%d\n", "post BIND_MW type 2", r,
	       mw2->rkey != k);
	show("post BIND_MW type 2: B", B.cq);
	post_k("write via mw2", 26, IBV_WR_RDMA_WRITE, 50, k, 150);
	post_k("write via mw2's old key", 27, IBV_WR_RDMA_WRITE, 50, mw2->rkey, 150);
	unpair();
	mw2->rkey = k; /* the kernel checks the WR's mw->rkey: the application follows the key */

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	/* mw2 is bound to the destroyed QP: a type 2 MW answers only its own QP */
	post_k("write via mw2 other qp", 28, IBV_WR_RDMA_WRITE, 50, k, 150);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	r = post_b(66, IBV_WR_BIND_MW, mw2, k + 1, B.mr, 100, 200, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "bind type 2 still valid", r);
	show("bind type 2 still valid: B", B.cq);
	show_state("bind type 2 still valid: B", B.qp);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	r = post_b(67, IBV_WR_LOCAL_INV, NULL, k, NULL, 0, 0, 0);
	printf("%-34s -> %d\n", "local_inv mw2 (other qp's)", r);
	show("local_inv mw2: B", B.cq);
	show_state("local_inv mw2: B", B.qp);
	k = (k & ~0xffu) | 0x43;
	r = post_b(68, IBV_WR_BIND_MW, mw2, k, B.mr, 100, 200, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "bind type 2 after inv", r);
	show("bind type 2 after inv: B", B.cq);
	if (!last_status)
		mw2->rkey = k;
	r = post_b(69, IBV_WR_LOCAL_INV, NULL, k, NULL, 0, 0, 0);
	printf("%-34s -> %d\n", "local_inv mw2", r);
	show("local_inv mw2 again: B", B.cq);
	post_k("write via invalidated mw2", 29, IBV_WR_RDMA_WRITE, 50, k, 150);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	k = (k & ~0xffu) | 0x44;
	r = post_b(70, IBV_WR_BIND_MW, mw2, k, B.mr, 100, 200, IBV_ACCESS_REMOTE_WRITE);
	show("bind for send_inv: B", B.cq);
	if (!last_status)
		mw2->rkey = k;
	post_recv(&B, 71, 200);
	post_k("send_with_inv mw2", 30, IBV_WR_SEND_WITH_INV, 20, k, 0);
	show("send_with_inv mw2: receiver", B.cq);
	printf("%-34s -> %d %d\n", "invalidated_rkey: key, swapped", last_inv == k,
	       last_inv == __builtin_bswap32(k));
	post_k("write after send_inv", 31, IBV_WR_RDMA_WRITE, 50, k, 150);
	show_state("write after send_inv: B", B.qp);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	post_recv(&B, 72, 200);
	post_k("send_with_inv type 1", 32, IBV_WR_SEND_WITH_INV, 20, mw1->rkey, 0);
	show("send_with_inv type 1: receiver", B.cq);
	psns("send_with_inv type 1");
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	post_recv(&B, 73, 200);
	post_k("send_with_inv mr rkey", 33, IBV_WR_SEND_WITH_INV, 20, B.mr->rkey, 0);
	show("send_with_inv mr rkey: receiver", B.cq);
	psns("send_with_inv mr rkey");
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	r = post_b(74, IBV_WR_LOCAL_INV, NULL, mw1->rkey, NULL, 0, 0, 0);
	printf("%-34s -> %d\n", "local_inv type 1", r);
	show("local_inv type 1: B", B.cq);
	show_state("local_inv type 1: B", B.qp);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, FULL_ACCESS, 0x40);
	k1 = mw1->rkey;
	r = bind1(75, mw1, B.mr, 0, 64, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "bind to mr without MW_BIND", r);
	bind_done("bind to mr without MW_BIND: B", mw1, k1);
	show_state("bind to mr without MW_BIND: B", B.qp);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	k1 = mw1->rkey;
	r = bind1(76, mw1, B.mr, 4000, 200, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "bind beyond the mr", r);
	bind_done("bind beyond the mr: B", mw1, k1);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, IBV_ACCESS_MW_BIND | IBV_ACCESS_REMOTE_READ, 0x40);
	k1 = mw1->rkey;
	r = bind1(77, mw1, B.mr, 0, 64, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "bind writable, mr read only", r);
	bind_done("bind writable, mr read only: B", mw1, k1);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, mwa, 0x40);
	k1 = mw1->rkey;
	r = bind1(78, mw1, B.mr, 0, 0, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "bind type 1 length 0", r);
	bind_done("bind type 1 length 0: B", mw1, k1);
	post_k("write via unbound mw1", 34, IBV_WR_RDMA_WRITE, 10, mw1->rkey, 0);
	unpair();

	pair(IBV_QPT_UD, 0, mwa, 0x40);
	r = post_b(79, IBV_WR_BIND_MW, mw2, k, B.mr, 0, 64, IBV_ACCESS_REMOTE_WRITE);
	printf("%-34s -> %d\n", "post BIND_MW on UD", r);
	unpair();

	printf("%-34s -> %d\n", "dealloc_mw type 1", ibv_dealloc_mw(mw1));
	printf("%-34s -> %d\n", "dealloc_mw type 2", ibv_dealloc_mw(mw2));
	for (int i = 0; i < nkept; i++) {
		printf("%-34s -> %d\n", "dereg_mr after dealloc_mw", ibv_dereg_mr(kept[i].mr));
		free(kept[i].mem);
	}
}

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	ctx = ibv_open_device(l[0]);
	pd = ibv_alloc_pd(ctx);
	ibv_query_gid(ctx, 1, 1, &gid1);
	psn_part();
	ucud_part();
	mw_part();
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return 0;
}
