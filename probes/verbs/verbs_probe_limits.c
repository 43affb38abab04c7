/* Verbs data-path limits probe: every send- and receive-side check, one table row per check.
 * Each row builds a fresh pair of QPs on the first device (A sends, B receives; connected to
 * each other through GID 1, rxe loops the packets back), makes one post, and prints one line:
 * the post's return value (errno name, and which WR was refused), the first completion of each
 * side (status name, opcode, byte_len, vendor_err) with the count of further ones, the QP
 * states afterwards and any asynchronous event. Run on kernel rxe in the reference VM its
 * output is fixtures/golden/rxe/verbs-probe-limits.out; make check runs it on the emulator and
 * compares (probes/probe-diff.sh). */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BUF 16384
#define RECV_OFF 8192
#define FULL                                                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |               \
	 IBV_ACCESS_REMOTE_ATOMIC)
#define NOACC (1 << 30) /* an access of 0 in the table, where 0 means FULL */
#define QKEY 0x11111111
#define SRQ 1           /* row.srq: B receives from an SRQ */

enum fault {
	F_NONE,
	F_LKEY,     /* A's SGE carries an lkey no MR has */
	F_LADDR,    /* A's SGE runs past the end of A's MR */
	F_RLKEY,    /* B's receive SGE carries an lkey no MR has */
	F_RKEY,     /* the remote key is one no MR has */
	F_RADDR,    /* the remote range runs past the end of B's MR */
	F_UNALIGN,  /* the atomic's remote address is 4 bytes off an 8-byte boundary */
	F_INV,      /* SEND_WITH_INV / LOCAL_INV name B's rkey / A's lkey */
};

enum kind {
	K_POST,   /* one send from A (and the receive of the row on B) */
	K_RECV,   /* a receive posted on A in the row's state */
	K_SQFULL, /* max_send_wr + 1 sends in one list */
	K_RQFULL, /* max_recv_wr + 1 receives in one list */
	K_CQFULL, /* more signaled sends than A's CQ holds */
	K_RNR7,   /* a send without a receive, rnr_retry 7, then the receive */
	K_SRQLIM, /* an armed SRQ limit crossed */
};

struct row {
	const char *name;
	enum kind kind;
	enum ibv_qp_type t;
	int srq;
	int op;
	int nsge;       /* A's SGEs, each slen bytes; -1: max_send_sge, -2: max_send_sge + 1 */
	uint32_t slen;
	int flags;      /* added to IBV_SEND_SIGNALED */
	int rnsge;      /* B's receive: SGEs of rlen bytes each; 0: none, -1: max_recv_sge,
			 * -2: max_recv_sge + 1, -3: a receive without SGEs */
	uint32_t rlen;
	int amr, bmr;   /* MR access of A / B; 0: FULL, NOACC: none */
	int bqp;        /* QP access of B; 0: FULL */
	enum fault fault;
	int rnr0;       /* rnr_retry 0 instead of 7 */
	int state;      /* A's state + 1; 0: RTS */
};

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	uint8_t *mem;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_ah *ah;
static union ibv_gid gid1;
static struct side A, B;
static int max_sge, max_srq_sge, max_inline;

static const char *const status_names[] = {
	"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR", "LOC_PROT_ERR",
	"WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR",
	"REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",
	"REM_INV_RD_REQ_ERR", "REM_ABORT_ERR", "INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR",
	"RESP_TIMEOUT_ERR", "GENERAL_ERR", "TM_ERR", "TM_RNDV_INCOMPLETE",
};
static const char *const state_names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

static const char *err_name(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "?";
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Appends the first completion of cq (waiting up to 0.5 s of real time; on the emulator the
 * empty polls move virtual time instead) and how many more were there. */
static void show_cq(char *out, size_t n, struct ibv_cq *cq)
{
	double until = now_s() + 0.5;
	struct ibv_wc wc;
	int r, more = 0;

	do
		r = ibv_poll_cq(cq, 1, &wc);
	while (r == 0 && now_s() < until);
	if (r <= 0) {
		snprintf(out, n, "none");
		return;
	}
	while (ibv_poll_cq(cq, 1, &(struct ibv_wc){ 0 }) > 0)
		more++;
	snprintf(out, n, "id=%llu %s op=%d len=%u ve=%u%s%.0d",
		 (unsigned long long)wc.wr_id,
		 (size_t)wc.status < sizeof(status_names) / sizeof(*status_names)
			 ? status_names[wc.status]
			 : "?",
		 wc.opcode, wc.byte_len, wc.vendor_err, more ? " +" : "", more);
}

static const char *state_of(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &i))
		return "?";
	return a.qp_state <= IBV_QPS_ERR ? state_names[a.qp_state] : "?";
}

/* The asynchronous events waiting on the context (its fd is non-blocking), acknowledged. */
static void show_events(char *out, size_t n)
{
	struct ibv_async_event ev;
	size_t used = 0;

	out[0] = 0;
	while (used < n && ibv_get_async_event(ctx, &ev) == 0) {
		used += snprintf(out + used, n - used, " ev=%s", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s, uint32_t dqpn, int access, int rnr)
{
	int rc = qp->qp_type == IBV_QPT_RC, ud = qp->qp_type == IBV_QPT_UD;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access, .qkey = QKEY };

	if (s == IBV_QPS_RESET)
		return 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS)))
		return -1;
	if (s == IBV_QPS_INIT)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0x123;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE |
				  (ud ? 0
				      : IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
						IBV_QP_RQ_PSN) |
				  (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		return -1;
	if (s == IBV_QPS_RTR)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = rnr;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN |
				  (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						IBV_QP_MAX_QP_RD_ATOMIC
				      : 0)))
		return -1;
	if (s == IBV_QPS_RTS)
		return 0;
	a.qp_state = s;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static void side_up(struct side *s, const struct row *r, int mr_access, int cqe, int with_srq)
{
	struct ibv_qp_init_attr ia = { .qp_type = r->t,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = max_sge, .max_recv_sge = max_sge } };
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = max_srq_sge } };

	s->mem = aligned_alloc(4096, BUF);
	memset(s->mem, 0x5a, BUF);
	s->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
	if (with_srq)
		ia.srq = s->srq = ibv_create_srq(pd, &sa);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	s->mr = ibv_reg_mr(pd, s->mem, BUF, mr_access == NOACC ? 0 : mr_access ? mr_access : FULL);
	if (!s->mem || !s->cq || !s->qp || !s->mr || (with_srq && !s->srq)) {
		printf("%s: setup failed (%s)\n", r->name, err_name(errno));
		exit(1);
	}
}

static void side_down(struct side *s)
{
	ibv_destroy_qp(s->qp);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	ibv_destroy_cq(s->cq);
	ibv_dereg_mr(s->mr);
	free(s->mem);
	memset(s, 0, sizeof(*s));
}

/* A to the row's state, B to RTS. */
static void pair_up(const struct row *r, int cqe_a)
{
	int sa = r->state ? r->state - 1 : IBV_QPS_RTS;

	side_up(&A, r, r->amr, cqe_a, 0);
	side_up(&B, r, r->bmr, 16, r->srq);
	if (to_state(B.qp, IBV_QPS_RTS, A.qp->qp_num, r->bqp ? r->bqp : FULL, 7))
		printf("%s: B to RTS failed (%s)\n", r->name, err_name(errno));
	if (to_state(A.qp, sa, B.qp->qp_num, FULL, r->rnr0 ? 0 : 7))
		printf("%s: A to %s failed (%s)\n", r->name, state_names[sa], err_name(errno));
}

/* Posts a receive on s (its SRQ if it has one): n SGEs of len bytes each at RECV_OFF. */
static int recv_on(struct side *s, int n, uint32_t len, int fault, uint64_t id, int *bad_at)
{
	struct ibv_sge sg[64];
	struct ibv_recv_wr w = { .wr_id = id, .sg_list = sg, .num_sge = n }, *bad = NULL;
	int i, ret;

	for (i = 0; i < n && i < 64; i++) {
		sg[i].addr = (uintptr_t)s->mem + RECV_OFF + (len < 0x10000 ? i * len : 0);
		sg[i].length = len;
		sg[i].lkey = fault == F_RLKEY ? s->mr->lkey + 0x1000 : s->mr->lkey;
	}
	ret = s->srq ? ibv_post_srq_recv(s->srq, &w, &bad) : ibv_post_recv(s->qp, &w, &bad);
	if (bad_at)
		*bad_at = bad == &w;
	return ret;
}

static void fill_wr(struct ibv_send_wr *w, struct ibv_sge *sg, const struct row *r, int nsge)
{
	uint64_t raddr = (uintptr_t)B.mem;
	int i;

	for (i = 0; i < nsge; i++) {
		sg[i].addr = (uintptr_t)A.mem + (r->slen < 0x10000 ? i * r->slen : 0);
		sg[i].length = r->slen;
		sg[i].lkey = r->fault == F_LKEY ? A.mr->lkey + 0x1000 : A.mr->lkey;
	}
	if (r->fault == F_LADDR && nsge)
		sg[0].addr = (uintptr_t)A.mem + BUF - r->slen / 2;
	if (r->fault == F_RADDR)
		raddr += BUF - r->slen / 2;
	if (r->fault == F_UNALIGN)
		raddr += 4;
	memset(w, 0, sizeof(*w));
	w->sg_list = sg;
	w->num_sge = nsge;
	w->opcode = r->op;
	w->send_flags = IBV_SEND_SIGNALED | r->flags;
	if (r->op == IBV_WR_SEND_WITH_INV)
		w->invalidate_rkey = B.mr->rkey;
	else if (r->op == IBV_WR_LOCAL_INV)
		w->invalidate_rkey = A.mr->lkey;
	else
		w->imm_data = htobe32(0x1234);
	if (r->t == IBV_QPT_UD) {
		w->wr.ud.ah = ah;
		w->wr.ud.remote_qpn = B.qp->qp_num;
		w->wr.ud.remote_qkey = QKEY;
	} else if (r->op == IBV_WR_ATOMIC_CMP_AND_SWP || r->op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.atomic.remote_addr = raddr;
		w->wr.atomic.rkey = r->fault == F_RKEY ? B.mr->rkey + 0x1000 : B.mr->rkey;
		w->wr.atomic.compare_add = 5;
		w->wr.atomic.swap = 9;
	} else {
		w->wr.rdma.remote_addr = raddr;
		w->wr.rdma.rkey = r->fault == F_RKEY ? B.mr->rkey + 0x1000 : B.mr->rkey;
	}
}

static void finish(const struct row *r, const char *post)
{
	char ca[160], cb[160], ev[160];

	show_cq(ca, sizeof(ca), A.cq);
	show_cq(cb, sizeof(cb), B.cq);
	show_events(ev, sizeof(ev));
	printf("%-40s post=%s | A: %s | B: %s | A=%s B=%s%s\n", r->name, post, ca, cb,
	       state_of(A.qp), state_of(B.qp), ev);
	side_down(&A);
	side_down(&B);
}

static void run_post(const struct row *r)
{
	struct ibv_sge sg[64];
	struct ibv_send_wr w, *bad = NULL;
	int nsge = r->nsge == -1 ? max_sge : r->nsge == -2 ? max_sge + 1 : r->nsge;
	int rn = r->rnsge == -2 ? max_sge + 1 : r->rnsge == -1 ? max_sge : r->rnsge,
	    nrecv = r->rnsge == -3 ? 0 : rn, ret, bad_at = 0;
	char post[80];

	pair_up(r, 16);
	if (rn) {
		ret = recv_on(&B, nrecv, r->rlen, r->fault, 100, &bad_at);
		if (ret) {
			snprintf(post, sizeof(post), "recv:%s%s", err_name(ret),
				 bad_at ? ",bad=wr" : "");
			finish(r, post);
			return;
		}
	}
	fill_wr(&w, sg, r, nsge > 64 ? 64 : nsge);
	w.num_sge = nsge;
	w.wr_id = 1;
	ret = ibv_post_send(A.qp, &w, &bad);
	snprintf(post, sizeof(post), "%s%s", err_name(ret),
		 bad == &w ? ",bad=wr" : bad ? ",bad=?" : "");
	finish(r, post);
}

/* A receive posted on A in the row's state (B is only its peer); with an SRQ on B, a receive
 * posted to B's QP itself instead. */
static void run_recv(const struct row *r)
{
	struct ibv_sge sg = { 0, 64, 0 };
	struct ibv_recv_wr w = { .wr_id = 7, .sg_list = &sg, .num_sge = 1 }, *bad = NULL;
	int bad_at = 0, ret;
	char post[80];

	pair_up(r, 16);
	if (r->srq) {
		sg.addr = (uintptr_t)B.mem;
		sg.lkey = B.mr->lkey;
		ret = ibv_post_recv(B.qp, &w, &bad);
		bad_at = bad == &w;
	} else {
		ret = recv_on(&A, 1, 64, F_NONE, 7, &bad_at);
	}
	snprintf(post, sizeof(post), "%s%s", err_name(ret), bad_at ? ",bad=wr" : "");
	finish(r, post);
}

/* n + 1 WRs in one list where the queue holds n: the provider stops at the first that does
 * not fit and names it in *bad. */
static void run_full(const struct row *r)
{
	struct ibv_sge sg[2];
	struct ibv_send_wr sw[64], *sbad = NULL;
	struct ibv_recv_wr rw[64], *rbad = NULL;
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int n, i, ret;
	char post[80];

	pair_up(r, 64);
	ibv_query_qp(A.qp, &a, IBV_QP_CAP, &ia);
	n = (r->kind == K_SQFULL ? ia.cap.max_send_wr : ia.cap.max_recv_wr) + 1;
	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++) {
		fill_wr(&sw[i], sg, r, 1);
		sw[i].wr_id = i + 1;
		sw[i].next = i + 1 < n ? &sw[i + 1] : NULL;
		rw[i] = (struct ibv_recv_wr){ .wr_id = i + 1, .sg_list = sg + 1, .num_sge = 1,
					      .next = i + 1 < n ? &rw[i + 1] : NULL };
	}
	sg[1] = (struct ibv_sge){ (uintptr_t)A.mem + RECV_OFF, 64, A.mr->lkey };
	if (r->kind == K_SQFULL)
		ret = ibv_post_send(A.qp, sw, &sbad);
	else
		ret = ibv_post_recv(A.qp, rw, &rbad);
	i = sbad ? (int)(sbad - sw) : rbad ? (int)(rbad - rw) : -1;
	snprintf(post, sizeof(post), "%s,wrs=%d,bad=#%d", err_name(ret), n, i);
	finish(r, post);
}

/* A's CQ holds fewer entries than the signaled sends A posts. */
static void run_cqfull(const struct row *r)
{
	struct ibv_sge sg[1];
	struct ibv_send_wr w[4], *bad = NULL;
	int i, ret;
	char post[80];

	pair_up(r, 1);
	for (i = 0; i < 4; i++) {
		fill_wr(&w[i], sg, r, 1);
		w[i].wr_id = i + 1;
		w[i].next = i < 3 ? &w[i + 1] : NULL;
	}
	ret = ibv_post_send(A.qp, w, &bad);
	snprintf(post, sizeof(post), "%s,cqe=%d,wrs=4", err_name(ret), A.cq->cqe);
	usleep(300000);
	finish(r, post);
}

/* rnr_retry 7 retries for ever: nothing completes until B posts its receive. */
static void run_rnr7(const struct row *r)
{
	struct ibv_sge sg[1];
	struct ibv_send_wr w, *bad = NULL;
	char ca[160], post[200];
	int ret;

	pair_up(r, 16);
	fill_wr(&w, sg, r, 1);
	w.wr_id = 1;
	ret = ibv_post_send(A.qp, &w, &bad);
	show_cq(ca, sizeof(ca), A.cq);
	recv_on(&B, 1, 256, F_NONE, 100, NULL);
	snprintf(post, sizeof(post), "%s,before_recv=%s", err_name(ret), ca);
	finish(r, post);
}

/* B's SRQ holds 4 receives and is armed at 3: the second send crosses the limit. */
static void run_srqlim(const struct row *r)
{
	struct ibv_srq_attr sa = { .srq_limit = 3 };
	struct ibv_sge sg[1];
	struct ibv_send_wr w[2], *bad = NULL;
	char post[80];
	int i, ret;

	pair_up(r, 16);
	for (i = 0; i < 4; i++)
		recv_on(&B, 1, 256, F_NONE, 100 + i, NULL);
	ret = ibv_modify_srq(B.srq, &sa, IBV_SRQ_LIMIT);
	for (i = 0; i < 2; i++) {
		fill_wr(&w[i], sg, r, 1);
		w[i].wr_id = i + 1;
		w[i].next = i ? NULL : &w[1];
	}
	snprintf(post, sizeof(post), "arm=%s,send=%s", err_name(ret),
		 err_name(ibv_post_send(A.qp, w, &bad)));
	usleep(300000);
	finish(r, post);
}

#define RC IBV_QPT_RC
#define UC IBV_QPT_UC
#define UD IBV_QPT_UD
#define SEND IBV_WR_SEND
#define SENDI IBV_WR_SEND_WITH_IMM
#define WRITE IBV_WR_RDMA_WRITE
#define WRITEI IBV_WR_RDMA_WRITE_WITH_IMM
#define READ IBV_WR_RDMA_READ
#define CAS IBV_WR_ATOMIC_CMP_AND_SWP
#define FADD IBV_WR_ATOMIC_FETCH_AND_ADD
#define INL IBV_SEND_INLINE
#define S(st) ((st) + 1)
#define NOWRITE (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define NOREAD (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)
#define NOATOMIC (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* name, kind, type, srq, opcode, nsge, slen, flags, rnsge, rlen, amr, bmr, bqp, fault,
 * rnr0, state. The inline rows' lengths are filled in from the QP's max_inline_data. */
/* A row names only the fields it sets; the rest are 0, which the table means. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static struct row rows[] = {
	/* message length */
	{ "rc send 0 (no sge)", K_POST, RC, 0, SEND, 0, 0, 0, 1, 256 },
	{ "rc send 0 (one sge of 0)", K_POST, RC, 0, SEND, 1, 0, 0, 1, 256 },
	{ "rc send 1", K_POST, RC, 0, SEND, 1, 1, 0, 1, 256 },
	{ "rc send inline max", K_POST, RC, 0, SEND, 1, 0, INL, 1, 4096 },
	{ "rc send inline max+1", K_POST, RC, 0, SEND, 1, 1, INL, 1, 4096 },
	{ "rc write inline max", K_POST, RC, 0, WRITE, 1, 0, INL },
	{ "rc write inline max+1", K_POST, RC, 0, WRITE, 1, 1, INL },
	{ "rc send 2000 into 1000", K_POST, RC, 0, SEND, 1, 2000, 0, 1, 1000 },
	{ "rc send 1000 into 1000", K_POST, RC, 0, SEND, 1, 1000, 0, 1, 1000 },
	{ "rc send 2x300 into 3x200", K_POST, RC, 0, SEND, 2, 300, 0, 3, 200 },
	{ "rc send 2x300 into 2x200", K_POST, RC, 0, SEND, 2, 300, 0, 2, 200 },
	{ "rc send 0 into no-sge recv", K_POST, RC, 0, SEND, 0, 0, 0, -3, 0 },
	{ "rc send 1 into no-sge recv", K_POST, RC, 0, SEND, 1, 1, 0, -3, 0 },
	{ "rc write 0", K_POST, RC, 0, WRITE, 0, 0 },
	{ "rc read 0", K_POST, RC, 0, READ, 0, 0 },
	{ "rc write 2^31", K_POST, RC, 0, WRITE, 1, 0x80000000u },
	{ "rc write 2^31+1", K_POST, RC, 0, WRITE, 1, 0x80000001u },
	{ "rc read 2^31+1", K_POST, RC, 0, READ, 1, 0x80000001u },
	{ "rc send 2^31+1 into 256", K_POST, RC, 0, SEND, 1, 0x80000001u, 0, 1, 256 },
	{ "rc send 100 into 2x2^31", K_POST, RC, 0, SEND, 1, 100, 0, 2, 0x80000000u },
	{ "uc send 0", K_POST, UC, 0, SEND, 0, 0, 0, 1, 256 },
	{ "uc send 1", K_POST, UC, 0, SEND, 1, 1, 0, 1, 256 },
	{ "uc send inline max+1", K_POST, UC, 0, SEND, 1, 1, INL, 1, 4096 },
	{ "uc send 2000 into 1000", K_POST, UC, 0, SEND, 1, 2000, 0, 1, 1000 },
	{ "uc write 2^31+1", K_POST, UC, 0, WRITE, 1, 0x80000001u },
	{ "ud send 0", K_POST, UD, 0, SEND, 0, 0, 0, 1, 256 },
	{ "ud send 1", K_POST, UD, 0, SEND, 1, 1, 0, 1, 256 },
	{ "ud send inline max", K_POST, UD, 0, SEND, 1, 0, INL, 1, 4096 },
	{ "ud send inline max+1", K_POST, UD, 0, SEND, 1, 1, INL, 1, 4096 },
	{ "ud send mtu (1024)", K_POST, UD, 0, SEND, 1, 1024, 0, 1, 1064 },
	{ "ud send mtu+1 (1025)", K_POST, UD, 0, SEND, 1, 1025, 0, 1, 2048 },
	{ "ud send 4096", K_POST, UD, 0, SEND, 1, 4096, 0, 1, 4200 },
	{ "ud send 100 into 100 (no room for grh)", K_POST, UD, 0, SEND, 1, 100, 0, 1, 100 },
	{ "ud send 100 into 140", K_POST, UD, 0, SEND, 1, 100, 0, 1, 140 },
	{ "ud send 100 into 139", K_POST, UD, 0, SEND, 1, 100, 0, 1, 139 },
	{ "srq rc send 2000 into 1000", K_POST, RC, SRQ, SEND, 1, 2000, 0, 1, 1000 },
	{ "srq rc send 100 into 256", K_POST, RC, SRQ, SEND, 1, 100, 0, 1, 256 },
	{ "srq ud send 100 into 100", K_POST, UD, SRQ, SEND, 1, 100, 0, 1, 100 },
	{ "srq ud send 100 into 256", K_POST, UD, SRQ, SEND, 1, 100, 0, 1, 256 },
	/* SGE counts and local keys */
	{ "rc send max_send_sge x8", K_POST, RC, 0, SEND, -1, 8, 0, 1, 4096 },
	{ "rc send max_send_sge+1 x8", K_POST, RC, 0, SEND, -2, 8, 0, 1, 4096 },
	{ "ud send max_send_sge+1 x8", K_POST, UD, 0, SEND, -2, 8, 0, 1, 4096 },
	{ "rc recv max_recv_sge x8", K_POST, RC, 0, SEND, 1, 100, 0, -1, 8 },
	{ "rc recv max_recv_sge+1", K_POST, RC, 0, SEND, 1, 100, 0, -2, 8 },
	{ "srq recv max_recv_sge+1", K_POST, RC, SRQ, SEND, 1, 100, 0, -2, 8 },
	{ "rc send lkey invalid", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_LKEY },
	{ "rc send lkey invalid, 0 bytes", K_POST, RC, 0, SEND, 1, 0, 0, 1, 256, 0, 0, 0, F_LKEY },
	{ "rc send inline lkey invalid", K_POST, RC, 0, SEND, 1, 100, INL, 1, 256, 0, 0, 0, F_LKEY },
	{ "rc send past the mr", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_LADDR },
	{ "rc write lkey invalid", K_POST, RC, 0, WRITE, 1, 100, 0, 0, 0, 0, 0, 0, F_LKEY },
	{ "rc read into lkey invalid", K_POST, RC, 0, READ, 1, 100, 0, 0, 0, 0, 0, 0, F_LKEY },
	{ "uc send lkey invalid", K_POST, UC, 0, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_LKEY },
	{ "ud send lkey invalid", K_POST, UD, 0, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_LKEY },
	{ "rc recv lkey invalid", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_RLKEY },
	{ "uc recv lkey invalid", K_POST, UC, 0, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_RLKEY },
	{ "ud recv lkey invalid", K_POST, UD, 0, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_RLKEY },
	{ "srq recv lkey invalid", K_POST, RC, SRQ, SEND, 1, 100, 0, 1, 256, 0, 0, 0, F_RLKEY },
	{ "rc recv into mr without local_write", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, 0,
	  NOACC },
	{ "ud recv into mr without local_write", K_POST, UD, 0, SEND, 1, 100, 0, 1, 256, 0,
	  NOACC },
	{ "rc read into mr without local_write", K_POST, RC, 0, READ, 1, 100, 0, 0, 0,
	  IBV_ACCESS_REMOTE_READ },
	{ "rc fadd into mr without local_write", K_POST, RC, 0, FADD, 1, 8, 0, 0, 0,
	  IBV_ACCESS_REMOTE_READ },
	{ "rc send from mr without local_write", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256,
	  IBV_ACCESS_REMOTE_READ },
	/* opcodes per QP type */
	{ "rc send_imm", K_POST, RC, 0, SENDI, 1, 100, 0, 1, 256 },
	{ "rc write", K_POST, RC, 0, WRITE, 1, 100 },
	{ "rc write_imm", K_POST, RC, 0, WRITEI, 1, 100, 0, 1, 256 },
	{ "rc write_imm, no recv", K_POST, RC, 0, WRITEI, 1, 100, 0, 0, 0, 0, 0, 0, 0, 1 },
	{ "rc read", K_POST, RC, 0, READ, 1, 100 },
	{ "rc cas", K_POST, RC, 0, CAS, 1, 8 },
	{ "rc fadd", K_POST, RC, 0, FADD, 1, 8 },
	{ "rc fadd 4 bytes", K_POST, RC, 0, FADD, 1, 4 },
	{ "rc fadd 0 sge", K_POST, RC, 0, FADD, 0, 0 },
	{ "rc cas 16 bytes", K_POST, RC, 0, CAS, 1, 16 },
	{ "rc fadd unaligned remote", K_POST, RC, 0, FADD, 1, 8, 0, 0, 0, 0, 0, 0, F_UNALIGN },
	{ "rc cas unaligned remote", K_POST, RC, 0, CAS, 1, 8, 0, 0, 0, 0, 0, 0, F_UNALIGN },
	{ "rc send_with_inv", K_POST, RC, 0, IBV_WR_SEND_WITH_INV, 1, 100, 0, 1, 256, 0, 0, 0,
	  F_INV },
	{ "rc local_inv of an mr", K_POST, RC, 0, IBV_WR_LOCAL_INV, 0, 0, 0, 0, 0, 0, 0, 0, F_INV },
	{ "uc write", K_POST, UC, 0, WRITE, 1, 100 },
	{ "uc write_imm", K_POST, UC, 0, WRITEI, 1, 100, 0, 1, 256 },
	{ "uc read", K_POST, UC, 0, READ, 1, 100 },
	{ "uc cas", K_POST, UC, 0, CAS, 1, 8 },
	{ "uc fadd", K_POST, UC, 0, FADD, 1, 8 },
	{ "uc send_with_inv", K_POST, UC, 0, IBV_WR_SEND_WITH_INV, 1, 100, 0, 1, 256, 0, 0, 0,
	  F_INV },
	{ "ud send_imm", K_POST, UD, 0, SENDI, 1, 100, 0, 1, 256 },
	{ "ud write", K_POST, UD, 0, WRITE, 1, 100, 0, 1, 256 },
	{ "ud write_imm", K_POST, UD, 0, WRITEI, 1, 100, 0, 1, 256 },
	{ "ud read", K_POST, UD, 0, READ, 1, 100, 0, 1, 256 },
	{ "ud cas", K_POST, UD, 0, CAS, 1, 8, 0, 1, 256 },
	{ "ud fadd", K_POST, UD, 0, FADD, 1, 8, 0, 1, 256 },
	{ "ud send_with_inv", K_POST, UD, 0, IBV_WR_SEND_WITH_INV, 1, 100, 0, 1, 256, 0, 0, 0,
	  F_INV },
	{ "ud local_inv", K_POST, UD, 0, IBV_WR_LOCAL_INV, 0, 0, 0, 1, 256, 0, 0, 0, F_INV },
	/* remote access */
	{ "rc write, mr without remote_write", K_POST, RC, 0, WRITE, 1, 100, 0, 0, 0, 0, NOWRITE },
	{ "rc write_imm, mr without remote_write", K_POST, RC, 0, WRITEI, 1, 100, 0, 1, 256, 0,
	  NOWRITE },
	{ "rc read, mr without remote_read", K_POST, RC, 0, READ, 1, 100, 0, 0, 0, 0, NOREAD },
	{ "rc fadd, mr without remote_atomic", K_POST, RC, 0, FADD, 1, 8, 0, 0, 0, 0, NOATOMIC },
	{ "rc write, qp without remote_write", K_POST, RC, 0, WRITE, 1, 100, 0, 0, 0, 0, 0,
	  NOWRITE },
	{ "rc read, qp without remote_read", K_POST, RC, 0, READ, 1, 100, 0, 0, 0, 0, 0, NOREAD },
	{ "rc cas, qp without remote_atomic", K_POST, RC, 0, CAS, 1, 8, 0, 0, 0, 0, 0, NOATOMIC },
	{ "rc write 0, mr without remote_write", K_POST, RC, 0, WRITE, 0, 0, 0, 0, 0, 0,
	  NOWRITE },
	{ "rc write, rkey invalid", K_POST, RC, 0, WRITE, 1, 100, 0, 0, 0, 0, 0, 0, F_RKEY },
	{ "rc write 0, rkey invalid", K_POST, RC, 0, WRITE, 0, 0, 0, 0, 0, 0, 0, 0, F_RKEY },
	{ "rc read, rkey invalid", K_POST, RC, 0, READ, 1, 100, 0, 0, 0, 0, 0, 0, F_RKEY },
	{ "rc read 0, rkey invalid", K_POST, RC, 0, READ, 0, 0, 0, 0, 0, 0, 0, 0, F_RKEY },
	{ "rc cas, rkey invalid", K_POST, RC, 0, CAS, 1, 8, 0, 0, 0, 0, 0, 0, F_RKEY },
	{ "rc write past the remote mr", K_POST, RC, 0, WRITE, 1, 100, 0, 0, 0, 0, 0, 0, F_RADDR },
	{ "rc read past the remote mr", K_POST, RC, 0, READ, 1, 100, 0, 0, 0, 0, 0, 0, F_RADDR },
	{ "uc write, rkey invalid", K_POST, UC, 0, WRITE, 1, 100, 0, 0, 0, 0, 0, 0, F_RKEY },
	{ "uc write_imm, rkey invalid", K_POST, UC, 0, WRITEI, 1, 100, 0, 1, 256, 0, 0, 0,
	  F_RKEY },
	{ "uc write, mr without remote_write", K_POST, UC, 0, WRITE, 1, 100, 0, 0, 0, 0, NOWRITE },
	{ "uc write past the remote mr", K_POST, UC, 0, WRITE, 1, 100, 0, 0, 0, 0, 0, 0, F_RADDR },
	/* QP states */
	{ "rc send in RESET", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, .state = S(IBV_QPS_RESET) },
	{ "rc send in INIT", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, .state = S(IBV_QPS_INIT) },
	{ "rc send in RTR", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, .state = S(IBV_QPS_RTR) },
	{ "rc send in SQD", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, .state = S(IBV_QPS_SQD) },
	{ "rc send in ERR", K_POST, RC, 0, SEND, 1, 100, 0, 1, 256, .state = S(IBV_QPS_ERR) },
	{ "ud send in RTR", K_POST, UD, 0, SEND, 1, 100, 0, 1, 256, .state = S(IBV_QPS_RTR) },
	{ "ud send in ERR", K_POST, UD, 0, SEND, 1, 100, 0, 1, 256, .state = S(IBV_QPS_ERR) },
	{ "rc recv in RESET", K_RECV, RC, .state = S(IBV_QPS_RESET) },
	{ "rc recv in INIT", K_RECV, RC, .state = S(IBV_QPS_INIT) },
	{ "rc recv in RTR", K_RECV, RC, .state = S(IBV_QPS_RTR) },
	{ "rc recv in RTS", K_RECV, RC },
	{ "rc recv in SQD", K_RECV, RC, .state = S(IBV_QPS_SQD) },
	{ "rc recv in ERR", K_RECV, RC, .state = S(IBV_QPS_ERR) },
	{ "ud recv in ERR", K_RECV, UD, .state = S(IBV_QPS_ERR) },
	{ "rc recv on a qp with an srq", K_RECV, RC, SRQ },
	{ "rc send queue overflow", K_SQFULL, RC, 0, WRITE, 1, 8 },
	{ "rc send queue overflow in INIT", K_SQFULL, RC, 0, WRITE, 1, 8,
	  .state = S(IBV_QPS_INIT) },
	{ "rc recv queue overflow", K_RQFULL, RC },
	{ "ud send queue overflow", K_SQFULL, UD, 0, SEND, 1, 8 },
	{ "rc cq overflow", K_CQFULL, RC, 0, WRITE, 1, 8 },
	/* receive side */
	{ "rc send, no recv, rnr_retry 0", K_POST, RC, 0, SEND, 1, 100, 0, 0, 0, 0, 0, 0, 0, 1 },
	{ "rc send, no recv, rnr_retry 7", K_RNR7, RC, 0, SEND, 1, 100 },
	{ "srq rc send, no recv, rnr_retry 0", K_POST, RC, SRQ, SEND, 1, 100, 0, 0, 0, 0, 0, 0, 0,
	  1 },
	{ "uc send, no recv", K_POST, UC, 0, SEND, 1, 100 },
	{ "ud send, no recv", K_POST, UD, 0, SEND, 1, 100 },
	{ "srq limit crossed", K_SRQLIM, RC, SRQ, SEND, 1, 100 },
};
#pragma GCC diagnostic pop

/* XRC: whether the device offers it at all. */
static void xrc(void)
{
	struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD |
						      IBV_XRCD_INIT_ATTR_OFLAGS,
					 .fd = -1, .oflags = O_CREAT };
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_XRC_SEND, .comp_mask =
							 IBV_QP_INIT_ATTR_PD, .pd = pd,
					  .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_xrcd *x;
	struct ibv_qp *qp;

	errno = 0;
	x = ibv_open_xrcd(ctx, &xa);
	printf("%-40s -> %s\n", "open_xrcd", x ? "ok" : err_name(errno));
	if (x)
		ibv_close_xrcd(x);
	qa.send_cq = qa.recv_cq = cq;
	errno = 0;
	qp = ibv_create_qp_ex(ctx, &qa);
	printf("%-40s -> %s\n", "create_qp XRC_SEND", qp ? "ok" : err_name(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
}

static void run(struct row *r)
{
	if (r->flags & INL)
		r->slen += max_inline;
	switch (r->kind) {
	case K_POST:
		run_post(r);
		break;
	case K_RECV:
		run_recv(r);
		break;
	case K_SQFULL:
	case K_RQFULL:
		run_full(r);
		break;
	case K_CQFULL:
		run_cqfull(r);
		break;
	case K_RNR7:
		run_rnr7(r);
		break;
	case K_SRQLIM:
		run_srqlim(r);
		break;
	}
}

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_device_attr da;
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC };
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = ibv_open_device(l[0]);
	pd = ibv_alloc_pd(ctx);
	ibv_query_gid(ctx, 1, 1, &gid1);
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	ibv_query_device(ctx, &da);
	ibv_query_port(ctx, 1, &pa);
	aa.grh.dgid = gid1;
	ah = ibv_create_ah(pd, &aa);
	max_sge = da.max_sge;
	max_srq_sge = da.max_srq_sge;
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = cq;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = max_sge;
	qp = ibv_create_qp(pd, &ia);
	if (!ctx || !pd || !ah || !cq || !qp) {
		printf("setup failed\n");
		return 1;
	}
	max_inline = ia.cap.max_inline_data;
	printf("%-40s -> max_sge=%d max_srq_sge=%d max_qp_wr=%d max_cqe=%d active_mtu=%d\n", "device", da.max_sge,
	       da.max_srq_sge,
	       da.max_qp_wr, da.max_cqe, pa.active_mtu);
	printf("%-40s -> send_wr=%u recv_wr=%u send_sge=%u recv_sge=%u inline=%u\n",
	       "qp caps (4, 4, max_sge, max_sge, 0)", ia.cap.max_send_wr, ia.cap.max_recv_wr,
	       ia.cap.max_send_sge, ia.cap.max_recv_sge, ia.cap.max_inline_data);
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	xrc();
	for (i = 0; i < sizeof(rows) / sizeof(*rows); i++)
		run(&rows[i]);
	ibv_destroy_ah(ah);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return 0;
}
