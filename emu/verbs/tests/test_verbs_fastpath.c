/* The loopback fast path (emu/verbs/fast.c) is indistinguishable from the packet path.
 *
 * One mixed workload runs twice, each time in a child process forked before any verbs call:
 * once as is (fast path on) and once with RDMAEMU_FASTPATH=0 (packet path only). Each run
 * writes a transcript: the return value of every post, every field of every CQE in polling
 * order (one CQ is shared by A's send queue and B's receive queue, so the interleaving of
 * send and receive completions is compared too), ibv_query_qp of both QPs (state, the live
 * sq_psn / rq_psn of rxe_qp_to_attr, ...), a hash of both buffers after every step, the completion events of the shared
 * CQ's channel, and the virtual time. The transcripts must be identical, line for line, and
 * the fast run must really have used the fast path (rdmaemu_verbs_fast_count), the other not.
 * test_threads: a receiver thread blocked in ibv_get_cq_event gets B's completions while the
 * main thread posts (threads polling another thread's QP, completion channel wake-ups).
 *
 * The workload: SEND / SEND_WITH_IMM / WRITE / WRITE_WITH_IMM / READ / FETCH_AND_ADD /
 * CMP_AND_SWP, inline and not, signaled and not, solicited, multi-SGE on both sides, 0 bytes
 * to 20000 across the 1024-byte MTU, chains of mixed WRs in one post, chains whose WRs read
 * what an earlier one writes (the fast path must decline them), more READs than
 * max_rd_atomic, WRs queued in RTR, PSNs wrapping at 2^24, and the errors: bad lkey, bad
 * rkey, a SEND longer than the receive WQE, RNR with rnr_retry 0, a READ at a QP without
 * REMOTE_READ, a misaligned atomic (refused at post) and one at an MR without
 * REMOTE_ATOMIC. */
#include "config.h"

#include <endian.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/wait.h>

#include "emu/verbs/tests/verbs_test.h"

#define BUF 32768
#define PAT(i) ((uint8_t)((i) * 13 + 5))

#define CHECK(x)                                                                         \
	do {                                                                             \
		if (!(x)) {                                                              \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #x); \
			_exit(2);                                                        \
		}                                                                        \
	} while (0)

static FILE *out;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid1;
static struct ibv_comp_channel *ch;
static struct ibv_cq *cqx, *cqa, *cqb; /* X: A's send + B's receive; A's receive; B's send */
static struct ibv_qp *qa, *qb;
static uint8_t *ba, *bb;
static struct ibv_mr *ma, *mb, *mb_noatomic;
static int (*now_ns)(uint64_t *);
static unsigned step;

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void drain(const char *name, struct ibv_cq *cq)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(cq, 1, &wc) == 1)
		fprintf(out, "  %s wr_id=%llu status=%s opcode=%d vendor_err=%u byte_len=%u imm=%#x "
			     "qp=%s src_qp=%u flags=%#x pkey=%u slid=%u sl=%u dlid_bits=%u\n",
			name, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
			(int)wc.opcode, wc.vendor_err, wc.byte_len, (unsigned)wc.imm_data,
			wc.qp_num == qa->qp_num ? "A" : wc.qp_num == qb->qp_num ? "B" : "?",
			wc.src_qp, wc.wc_flags, wc.pkey_index, wc.slid, wc.sl, wc.dlid_path_bits);
}

static void qp_line(const char *name, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	CHECK(!ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
				      IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
				      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_EN_SQD_ASYNC_NOTIFY |
				      IBV_QP_ACCESS_FLAGS, &ia));
	fprintf(out, "  qp %s state=%d cur=%d sq_psn=%#x rq_psn=%#x rd=%u/%u retry=%u rnr=%u "
		     "draining=%u access=%#x\n",
		name, a.qp_state, a.cur_qp_state, a.sq_psn, a.rq_psn, a.max_rd_atomic,
		a.max_dest_rd_atomic, a.retry_cnt, a.rnr_retry, a.sq_draining, a.qp_access_flags);
}

/* Everything observable after a step, in a fixed order. */
static void snap(const char *what)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	uint64_t t = 0;

	fprintf(out, "step %u %s\n", step++, what);
	/* the channel before polling: did this step raise a completion event? */
	if (poll(&p, 1, 0) == 1) {
		struct ibv_cq *ev;
		void *c;

		CHECK(!ibv_get_cq_event(ch, &ev, &c));
		fprintf(out, "  event on %s\n", ev == cqx ? "X" : "?");
		ibv_ack_cq_events(ev, 1);
	}
	drain("X", cqx);
	drain("Ar", cqa);
	drain("Bs", cqb);
	CHECK(!ibv_req_notify_cq(cqx, step % 3 == 0)); /* solicited-only every third step */
	qp_line("A", qa);
	qp_line("B", qb);
	CHECK(!now_ns(&t));
	fprintf(out, "  mem A=%016llx B=%016llx t=%llu\n", (unsigned long long)fnv(ba, BUF),
		(unsigned long long)fnv(bb, BUF), (unsigned long long)t);
}

/* ---- posting ---- */

enum { MAX_SGE = 4 };

struct wr {
	enum ibv_wr_opcode op;
	uint64_t id;
	unsigned flags;
	int nsge;
	struct ibv_sge sge[MAX_SGE];
	uint64_t raddr;
	uint32_t rkey;
	uint64_t add, swap;
};

static struct ibv_sge sg(uint8_t *buf, struct ibv_mr *mr, size_t off, uint32_t len)
{
	return (struct ibv_sge){ (uintptr_t)(buf + off), len, mr->lkey };
}

/* Posts n WRs as one chain from qp; writes the result. */
static void post(struct ibv_qp *qp, const struct wr *w, int n)
{
	struct ibv_send_wr wr[16], *bad = NULL;
	int err;

	CHECK(n <= 16);
	memset(wr, 0, sizeof(wr));
	for (int i = 0; i < n; i++) {
		wr[i].wr_id = w[i].id;
		wr[i].opcode = w[i].op;
		wr[i].send_flags = w[i].flags;
		wr[i].num_sge = w[i].nsge;
		wr[i].sg_list = (struct ibv_sge *)w[i].sge;
		wr[i].imm_data = htobe32((uint32_t)(0x1000 + w[i].id));
		if (w[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD || w[i].op == IBV_WR_ATOMIC_CMP_AND_SWP) {
			wr[i].wr.atomic.remote_addr = w[i].raddr;
			wr[i].wr.atomic.rkey = w[i].rkey;
			wr[i].wr.atomic.compare_add = w[i].add;
			wr[i].wr.atomic.swap = w[i].swap;
		} else {
			wr[i].wr.rdma.remote_addr = w[i].raddr;
			wr[i].wr.rdma.rkey = w[i].rkey;
		}
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	err = ibv_post_send(qp, wr, &bad);
	fprintf(out, "  post %s n=%d -> %d bad=%d\n", qp == qa ? "A" : "B", n, err,
		bad ? (int)(bad - wr) : -1);
}

static void recv_post(struct ibv_qp *qp, uint64_t id, int nsge, const uint32_t *lens, size_t off)
{
	struct ibv_sge s[MAX_SGE];
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = s, .num_sge = nsge }, *bad = NULL;
	uint8_t *buf = qp == qb ? bb : ba;
	struct ibv_mr *mr = qp == qb ? mb : ma;

	for (int i = 0; i < nsge; i++) {
		s[i] = sg(buf, mr, off, lens[i]);
		off += lens[i] + 16;
	}
	fprintf(out, "  recv %s -> %d\n", qp == qb ? "B" : "A", ibv_post_recv(qp, &wr, &bad));
}

static void recv1(struct ibv_qp *qp, uint64_t id, uint32_t len, size_t off)
{
	recv_post(qp, id, 1, &len, off);
}

/* ---- connection ---- */

static void to_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE));
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, uint32_t psn, unsigned access,
		       uint8_t rnr_retry, bool rts)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access };

	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					     IBV_QP_ACCESS_FLAGS));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 3;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					     IBV_QP_MIN_RNR_TIMER));
	if (!rts)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 4;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_MAX_QP_RD_ATOMIC));
}

#define ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	     IBV_ACCESS_REMOTE_ATOMIC)

/* Both QPs back to RESET, then connected again (A always RTS). */
static void reconnect(uint32_t psn, unsigned access_b, uint8_t rnr_retry)
{
	to_reset(qa);
	to_reset(qb);
	connect_qp(qa, qb->qp_num, psn, ALL, rnr_retry, true);
	connect_qp(qb, qa->qp_num, psn, access_b, rnr_retry, true);
	snap("reconnect");
}

static void setup(void)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE, .max_inline_data = 64 },
	};

	now_ns = (int (*)(uint64_t *))dlsym(RTLD_DEFAULT, "rdmaemu_ctl_now_ns");
	CHECK(now_ns);
	ctx = vt_open("rxe0");
	CHECK(!ibv_query_gid(ctx, 1, 1, &gid1));
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	CHECK(pd && ch);
	cqx = ibv_create_cq(ctx, 256, NULL, ch, 0);
	cqa = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	cqb = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	CHECK(cqx && cqa && cqb);
	CHECK(!ibv_req_notify_cq(cqx, 0));
	ba = aligned_alloc(64, BUF);
	bb = aligned_alloc(64, BUF);
	CHECK(ba && bb);
	for (int i = 0; i < BUF; i++) {
		ba[i] = PAT(i);
		bb[i] = (uint8_t)~PAT(i);
	}
	ma = ibv_reg_mr(pd, ba, BUF, ALL);
	mb = ibv_reg_mr(pd, bb, BUF, ALL);
	/* the second half of B's buffer again, without REMOTE_ATOMIC */
	mb_noatomic = ibv_reg_mr(pd, bb + BUF / 2, BUF / 2,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					 IBV_ACCESS_REMOTE_READ);
	CHECK(ma && mb && mb_noatomic);
	a.send_cq = cqx;
	a.recv_cq = cqa;
	qa = ibv_create_qp(pd, &a);
	a.send_cq = cqb;
	a.recv_cq = cqx;
	qb = ibv_create_qp(pd, &a);
	CHECK(qa && qb);
	connect_qp(qa, qb->qp_num, 0x100, ALL, 7, true);
	connect_qp(qb, qa->qp_num, 0x100, ALL, 7, true);
	snap("setup");
}

/* ---- the workload ---- */

#define RB(off) ((uintptr_t)(bb + (off)))
#define RA(off) ((uintptr_t)(ba + (off)))

static void sends(void)
{
	static const uint32_t sizes[] = { 0, 1, 8, 1023, 1024, 1025, 3000, 4096, 9000 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		struct wr w = { .op = i % 3 == 1 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, .id = 100 + i,
				.flags = (i % 2 ? IBV_SEND_SIGNALED : 0) |
					 (i % 4 == 3 ? IBV_SEND_SOLICITED : 0),
				.nsge = 1, .sge = { sg(ba, ma, 64 * i, sizes[i]) } };

		recv1(qb, 200 + i, 10000, 128 * i);
		post(qa, &w, 1);
		snap("send");
	}
	/* inline */
	for (int i = 0; i < 2; i++) {
		struct wr w = { .op = IBV_WR_SEND, .id = 300 + (uint64_t)i,
				.flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED, .nsge = 2,
				.sge = { sg(ba, ma, 1000, i ? 40 : 5), sg(ba, ma, 3000, 20) } };

		recv1(qb, 400 + (uint64_t)i, 100, 20000);
		post(qa, &w, 1);
		snap("send inline");
	}
	/* multi-SGE on both sides, a zero-length SGE among them */
	{
		static const uint32_t rl[3] = { 500, 500, 2000 };
		struct wr w = { .op = IBV_WR_SEND_WITH_IMM, .id = 310, .flags = IBV_SEND_SIGNALED,
				.nsge = 3,
				.sge = { sg(ba, ma, 5000, 700), sg(ba, ma, 7000, 0),
					 sg(ba, ma, 9000, 900) } };

		recv_post(qb, 410, 3, rl, 24000);
		post(qa, &w, 1);
		snap("send multi-sge");
	}
	/* the other direction: B -> A, receive on A's own CQ */
	{
		struct wr w = { .op = IBV_WR_SEND, .id = 320, .flags = IBV_SEND_SIGNALED, .nsge = 1,
				.sge = { sg(bb, mb, 100, 2048) } };

		recv1(qa, 420, 4096, 16000);
		post(qb, &w, 1);
		snap("send B->A");
	}
}

static void writes(void)
{
	static const uint32_t sizes[] = { 0, 8, 1024, 1025, 5000, 20000 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		struct wr w = { .op = IBV_WR_RDMA_WRITE, .id = 500 + i,
				.flags = i % 2 ? 0 : IBV_SEND_SIGNALED, .nsge = 1,
				.sge = { sg(ba, ma, 32 * i, sizes[i]) }, .raddr = RB(100 * i),
				.rkey = mb->rkey };

		post(qa, &w, 1);
		snap("write");
	}
	{
		struct wr w = { .op = IBV_WR_RDMA_WRITE_WITH_IMM, .id = 520,
				.flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, .nsge = 2,
				.sge = { sg(ba, ma, 11000, 1500), sg(ba, ma, 14000, 600) },
				.raddr = RB(3), .rkey = mb->rkey };
		struct wr z = { .op = IBV_WR_RDMA_WRITE_WITH_IMM, .id = 521, .flags = 0, .nsge = 0 };

		recv1(qb, 620, 0, 0);
		post(qa, &w, 1);
		snap("write imm");
		recv1(qb, 621, 16, 0);
		post(qa, &z, 1);
		snap("write imm zero");
	}
	{
		struct wr w = { .op = IBV_WR_RDMA_WRITE, .id = 530,
				.flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED, .nsge = 1,
				.sge = { sg(ba, ma, 77, 33) }, .raddr = RB(31000), .rkey = mb->rkey };

		post(qa, &w, 1);
		snap("write inline");
	}
}

static void reads_atomics(void)
{
	static const uint32_t sizes[] = { 0, 8, 1024, 3000 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		struct wr w = { .op = IBV_WR_RDMA_READ, .id = 700 + i,
				.flags = i == 1 ? 0 : IBV_SEND_SIGNALED, .nsge = 2,
				.sge = { sg(ba, ma, 20000 + 64 * i, sizes[i] / 2),
					 sg(ba, ma, 26000, sizes[i] - sizes[i] / 2) },
				.raddr = RB(500 * i + 1), .rkey = mb->rkey };

		post(qa, &w, 1);
		snap("read");
	}
	{
		struct wr w[3] = {
			{ .op = IBV_WR_ATOMIC_FETCH_AND_ADD, .id = 800, .flags = IBV_SEND_SIGNALED,
			  .nsge = 1, .sge = { sg(ba, ma, 128, 8) }, .raddr = RB(4096),
			  .rkey = mb->rkey, .add = 5 },
			{ .op = IBV_WR_ATOMIC_CMP_AND_SWP, .id = 801, .flags = IBV_SEND_SIGNALED,
			  .nsge = 1, .sge = { sg(ba, ma, 136, 16) }, .raddr = RB(4096),
			  .rkey = mb->rkey, .add = 1, .swap = 77 }, /* compare fails */
			{ .op = IBV_WR_ATOMIC_CMP_AND_SWP, .id = 802, .flags = 0, .nsge = 1,
			  .sge = { sg(ba, ma, 152, 8) }, .raddr = RB(4104), .rkey = mb->rkey },
		};

		memcpy(&w[2].add, bb + 4104, 8); /* compare succeeds */
		w[2].swap = 0x1122334455667788ull;
		for (int i = 0; i < 3; i++) {
			post(qa, &w[i], 1);
			snap("atomic");
		}
	}
}

static void chains(void)
{
	struct wr c[10] = {
		{ .op = IBV_WR_SEND, .id = 900, .flags = 0, .nsge = 1, .sge = { sg(ba, ma, 0, 1500) } },
		{ .op = IBV_WR_RDMA_WRITE, .id = 901, .flags = IBV_SEND_SIGNALED, .nsge = 1,
		  .sge = { sg(ba, ma, 2000, 3000) }, .raddr = RB(8000), .rkey = mb->rkey },
		{ .op = IBV_WR_RDMA_READ, .id = 902, .flags = IBV_SEND_SIGNALED, .nsge = 1,
		  .sge = { sg(ba, ma, 12000, 2500) }, .raddr = RB(20000), .rkey = mb->rkey },
		{ .op = IBV_WR_ATOMIC_FETCH_AND_ADD, .id = 903, .flags = 0, .nsge = 1,
		  .sge = { sg(ba, ma, 15000, 8) }, .raddr = RB(4096), .rkey = mb->rkey, .add = 3 },
		{ .op = IBV_WR_RDMA_WRITE_WITH_IMM, .id = 904, .flags = IBV_SEND_SIGNALED, .nsge = 1,
		  .sge = { sg(ba, ma, 100, 10) }, .raddr = RB(30000), .rkey = mb->rkey },
		{ .op = IBV_WR_SEND_WITH_IMM, .id = 905, .flags = IBV_SEND_SOLICITED, .nsge = 1,
		  .sge = { sg(ba, ma, 300, 4000) } },
		{ .op = IBV_WR_SEND, .id = 906, .flags = IBV_SEND_INLINE, .nsge = 1,
		  .sge = { sg(ba, ma, 50, 64) } },
		{ .op = IBV_WR_RDMA_READ, .id = 907, .flags = 0, .nsge = 1,
		  .sge = { sg(ba, ma, 16000, 100) }, .raddr = RB(0), .rkey = mb->rkey },
		{ .op = IBV_WR_RDMA_WRITE, .id = 908, .flags = 0, .nsge = 1,
		  .sge = { sg(ba, ma, 9000, 5) }, .raddr = RB(9000), .rkey = mb->rkey },
		{ .op = IBV_WR_SEND, .id = 909, .flags = IBV_SEND_SIGNALED, .nsge = 0 },
	};

	for (int i = 0; i < 4; i++)
		recv1(qb, 1000 + (uint64_t)i, 5000, 5000 * (size_t)i + 1);
	recv1(qb, 1004, 10, 26000); /* too short for nothing: 909 is empty */
	post(qa, c, 10);
	snap("chain of 10");

	/* hazards: a later WR reads what an earlier one writes (fast path declines) */
	{
		struct wr h[2] = {
			{ .op = IBV_WR_RDMA_WRITE, .id = 950, .flags = IBV_SEND_SIGNALED, .nsge = 1,
			  .sge = { sg(ba, ma, 0, 200) }, .raddr = RB(1000), .rkey = mb->rkey },
			{ .op = IBV_WR_SEND, .id = 951, .flags = IBV_SEND_SIGNALED, .nsge = 1,
			  .sge = { sg(bb, mb, 1100, 200) } },
		};
		struct wr r[2] = {
			{ .op = IBV_WR_RDMA_READ, .id = 952, .flags = IBV_SEND_SIGNALED, .nsge = 1,
			  .sge = { sg(ba, ma, 500, 300) }, .raddr = RB(7000), .rkey = mb->rkey },
			{ .op = IBV_WR_RDMA_WRITE, .id = 953, .flags = IBV_SEND_SIGNALED, .nsge = 1,
			  .sge = { sg(ba, ma, 600, 300) }, .raddr = RB(12000), .rkey = mb->rkey },
		};
		struct wr s[1] = { /* source and destination the same bytes */
			{ .op = IBV_WR_RDMA_WRITE, .id = 954, .flags = IBV_SEND_SIGNALED, .nsge = 1,
			  .sge = { sg(bb, mb, 2000, 1000) }, .raddr = RB(2500), .rkey = mb->rkey },
		};

		recv1(qb, 1050, 4096, 14000);
		post(qa, h, 2);
		snap("hazard write then send");
		post(qa, r, 2);
		snap("hazard read then write");
		post(qa, s, 1);
		snap("overlapping write");
	}
	/* more READs than max_rd_atomic (4) in one chain */
	{
		struct wr r[6];

		for (int i = 0; i < 6; i++)
			r[i] = (struct wr){ .op = IBV_WR_RDMA_READ, .id = 960 + (uint64_t)i,
					    .flags = IBV_SEND_SIGNALED, .nsge = 1,
					    .sge = { sg(ba, ma, 17000 + 1200 * (size_t)i, 1100) },
					    .raddr = RB(100 * (size_t)i), .rkey = mb->rkey };
		post(qa, r, 6);
		snap("six reads");
	}
}

static void errors(void)
{
	/* bad lkey: LOC_QP_OP_ERR, flush */
	{
		struct wr w[2] = {
			{ .op = IBV_WR_SEND, .id = 1100, .flags = IBV_SEND_SIGNALED, .nsge = 1,
			  .sge = { { RA(0), 16, ma->lkey + 0x100 } } },
			{ .op = IBV_WR_RDMA_WRITE, .id = 1101, .flags = 0, .nsge = 1,
			  .sge = { sg(ba, ma, 0, 16) }, .raddr = RB(0), .rkey = mb->rkey },
		};

		recv1(qb, 1200, 100, 0);
		post(qa, w, 2);
		snap("bad lkey");
		reconnect(0x2000, ALL, 7);
	}
	/* bad rkey */
	{
		struct wr w = { .op = IBV_WR_RDMA_WRITE, .id = 1110, .flags = 0, .nsge = 1,
				.sge = { sg(ba, ma, 0, 3000) }, .raddr = RB(BUF - 100),
				.rkey = mb->rkey };

		post(qa, &w, 1);
		snap("write beyond the MR");
		reconnect(0x3000, ALL, 7);
	}
	/* SEND longer than the receive WQE */
	{
		struct wr w = { .op = IBV_WR_SEND, .id = 1120, .flags = IBV_SEND_SIGNALED, .nsge = 1,
				.sge = { sg(ba, ma, 0, 2000) } };

		recv1(qb, 1220, 1500, 0);
		post(qa, &w, 1);
		snap("send too long");
		reconnect(0x4000, ALL, 0);
	}
	/* RNR, no retry */
	{
		struct wr w = { .op = IBV_WR_SEND, .id = 1130, .flags = IBV_SEND_SIGNALED, .nsge = 1,
				.sge = { sg(ba, ma, 0, 20) } };
		/* the RNR NAK comes back at once, and with rnr_retry 0 ends the WR */
		post(qa, &w, 1);
		snap("rnr");
		reconnect(0x5000, ALL & ~(unsigned)IBV_ACCESS_REMOTE_READ, 7);
	}
	/* READ at a QP without REMOTE_READ */
	{
		struct wr w = { .op = IBV_WR_RDMA_READ, .id = 1140, .flags = IBV_SEND_SIGNALED,
				.nsge = 1, .sge = { sg(ba, ma, 0, 64) }, .raddr = RB(0),
				.rkey = mb->rkey };

		post(qa, &w, 1);
		snap("read, no REMOTE_READ");
		reconnect(0x6000, ALL, 7);
	}
	/* atomics: misaligned (refused at post), an MR without REMOTE_ATOMIC */
	{
		struct wr w = { .op = IBV_WR_ATOMIC_FETCH_AND_ADD, .id = 1150,
				.flags = IBV_SEND_SIGNALED, .nsge = 1, .sge = { sg(ba, ma, 0, 8) },
				.raddr = RB(BUF / 2 + 4), .rkey = mb_noatomic->rkey, .add = 1 };

		post(qa, &w, 1);
		snap("atomic misaligned");
		w.raddr = RB(BUF / 2 + 8);
		post(qa, &w, 1);
		snap("atomic, MR without REMOTE_ATOMIC");
	}
}

static void queued_and_wrap(void)
{
	struct wr w[3] = {
		{ .op = IBV_WR_RDMA_WRITE, .id = 1300, .flags = IBV_SEND_SIGNALED, .nsge = 1,
		  .sge = { sg(ba, ma, 0, 20000) }, .raddr = RB(0), .rkey = mb->rkey },
		{ .op = IBV_WR_SEND, .id = 1301, .flags = IBV_SEND_SIGNALED, .nsge = 1,
		  .sge = { sg(ba, ma, 20000, 6000) } },
		{ .op = IBV_WR_RDMA_READ, .id = 1302, .flags = IBV_SEND_SIGNALED, .nsge = 1,
		  .sge = { sg(ba, ma, 26000, 6000) }, .raddr = RB(20000), .rkey = mb->rkey },
	};

	/* PSNs wrap at 2^24 in the middle of the first WRITE; A is in RTR when it posts */
	to_reset(qa);
	to_reset(qb);
	connect_qp(qa, qb->qp_num, 0xfffff8, ALL, 7, false);
	connect_qp(qb, qa->qp_num, 0xfffff8, ALL, 7, true);
	recv1(qb, 1400, 8000, 24000);
	post(qa, w, 2); /* queued: EINVAL in RTR */
	snap("queued in RTR");
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = 0xfffff8, .timeout = 14,
					 .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4 };

		CHECK(!ibv_modify_qp(qa, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
						     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
						     IBV_QP_MAX_QP_RD_ATOMIC));
	}
	post(qa, &w[2], 1);
	snap("across the PSN wrap");
}

static void teardown(void)
{
	CHECK(!ibv_destroy_qp(qa) && !ibv_destroy_qp(qb));
	CHECK(!ibv_dereg_mr(ma) && !ibv_dereg_mr(mb) && !ibv_dereg_mr(mb_noatomic));
	CHECK(!ibv_destroy_cq(cqx) && !ibv_destroy_cq(cqa) && !ibv_destroy_cq(cqb));
	CHECK(!ibv_destroy_comp_channel(ch) && !ibv_dealloc_pd(pd) && !ibv_close_device(ctx));
	free(ba);
	free(bb);
}

static void workload(void)
{
	setup();
	sends();
	writes();
	reads_atomics();
	chains();
	queued_and_wrap();
	errors();
	teardown();
}

/* Runs the workload in a child (fast path on or off); its transcript in *text. */
static void run_child(bool fast, char **text, uint64_t *fast_count)
{
	int fd[2];
	pid_t pid;
	FILE *f;
	size_t len = 0;
	int status;
	char *nl;

	assert_int_equal(pipe(fd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint64_t (*count)(void);

		close(fd[0]);
		/* whatever the test's own environment says (read at the first post) */
		setenv("RDMAEMU_FASTPATH", fast ? "1" : "0", 1);
		unsetenv("RDMAEMU_TRACE");
		out = fdopen(fd[1], "w");
		CHECK(out);
		workload();
		count = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "rdmaemu_verbs_fast_count");
		CHECK(count);
		fprintf(out, "fast %llu\n", (unsigned long long)count());
		fclose(out);
		_exit(0);
	}
	close(fd[1]);
	f = fdopen(fd[0], "r");
	assert_non_null(f);
	*text = NULL;
	assert_true(getdelim(text, &len, '\0', f) > 0);
	fclose(f);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* the last line is the count, not part of the comparison */
	nl = strrchr(*text, '\n');
	assert_non_null(nl);
	*nl = 0;
	nl = strrchr(*text, '\n');
	assert_non_null(nl);
	assert_int_equal(sscanf(nl + 1, "fast %llu", (unsigned long long *)fast_count), 1);
	nl[1] = 0;
}

static void test_equivalence(void **state)
{
	char *fast = NULL, *slow = NULL;
	uint64_t nfast = 0, nslow = 0;
	const char *a, *b;
	unsigned line = 1;

	(void)state;
	run_child(true, &fast, &nfast);
	run_child(false, &slow, &nslow);
	if (getenv("RDMAEMU_FASTPATH_TEST_DUMP"))
		fputs(fast, stderr);
	/* where they first differ, for the log */
	for (a = fast, b = slow; *a && *a == *b; a++, b++)
		line += *a == '\n';
	if (*a || *b) {
		const char *la = a, *lb = b;

		while (la > fast && la[-1] != '\n')
			la--;
		while (lb > slow && lb[-1] != '\n')
			lb--;
		fprintf(stderr, "transcripts differ at line %u:\n fast: %.*s\n slow: %.*s\n", line,
			(int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
	}
	assert_string_equal(fast, slow);
	assert_int_equal(nslow, 0);
	/* ibv_query_qp's PSNs are the live ones (rxe_qp_to_attr), so the transcript compares the
	 * PSNs each path left behind: they must really move along the workload */
	{
		char seen[64][24];
		unsigned nseen = 0;

		for (const char *p = strstr(fast, "sq_psn="); p && nseen < 64;
		     p = strstr(p + 1, "sq_psn=")) {
			char v[24];
			unsigned i;

			snprintf(v, sizeof(v), "%.*s", (int)strcspn(p, " \n"), p);
			for (i = 0; i < nseen && strcmp(seen[i], v); i++)
				;
			if (i == nseen)
				memcpy(seen[nseen++], v, sizeof(v));
		}
		assert_true(nseen >= 20);
	}
	/* the single WRs before the chains and the chain of 10 at least */
	assert_true(nfast >= 40);
	fprintf(stderr, "fastpath: %llu WQEs on the fast path, transcript of %zu bytes\n",
		(unsigned long long)nfast, strlen(fast));
	free(fast);
	free(slow);
}

/* ---- threads: completions of the fast path reach a thread blocked on the channel ---- */

#define TH_ROUNDS 40
#define TH_WIN 32
#define TH_LEN 200

static int th_got;	/* receive CQEs the receiver thread checked */
static int th_events;	/* completion events it took */
static int th_bad;	/* CQEs out of order or with wrong fields, bytes wrong */
static pthread_barrier_t th_bar;

/* The classic loop: arm, poll, block in ibv_get_cq_event only when the CQ is empty. Polls
 * cqx, the CQ of another thread's QP (B's receives), while the main thread posts. */
static void *th_receiver(void *arg)
{
	(void)arg;
	for (int r = 0; r < TH_ROUNDS; r++) {
		int got = 0;

		while (got < TH_WIN) {
			struct ibv_wc wc;
			int n;

			CHECK(!ibv_req_notify_cq(cqx, 0));
			while ((n = ibv_poll_cq(cqx, 1, &wc)) == 1) {
				uint64_t want = (uint64_t)r * TH_WIN + (uint64_t)got;
				const uint8_t *m = bb + (size_t)got * (TH_LEN + 56);

				if (wc.status != IBV_WC_SUCCESS || wc.wr_id != want ||
				    wc.opcode != IBV_WC_RECV || wc.byte_len != TH_LEN ||
				    wc.qp_num != qb->qp_num)
					th_bad++;
				for (int i = 0; i < TH_LEN; i++)
					if (m[i] != (uint8_t)(want + (uint64_t)i))
						th_bad++;
				got++;
			}
			CHECK(n == 0);
			if (got < TH_WIN) {
				struct ibv_cq *ev;
				void *c;

				CHECK(!ibv_get_cq_event(ch, &ev, &c)); /* blocks in read() */
				CHECK(ev == cqx);
				ibv_ack_cq_events(ev, 1);
				th_events++;
			}
		}
		th_got += got;
		pthread_barrier_wait(&th_bar); /* round checked: the sender may reuse the buffers */
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t t;
	struct ibv_wc wc;

	(void)state;
	out = fopen("/dev/null", "w");
	assert_non_null(out);
	setup();
	assert_int_equal(pthread_barrier_init(&th_bar, NULL, 2), 0);
	assert_int_equal(pthread_create(&t, NULL, th_receiver, NULL), 0);
	for (int r = 0; r < TH_ROUNDS; r++) {
		for (int i = 0; i < TH_WIN; i++)
			recv1(qb, (uint64_t)r * TH_WIN + (uint64_t)i, TH_LEN,
			      (size_t)i * (TH_LEN + 56));
		for (int i = 0; i < TH_WIN; i++) {
			uint64_t id = (uint64_t)r * TH_WIN + (uint64_t)i;
			struct wr w = { .op = IBV_WR_SEND, .id = id, .flags = 0, .nsge = 1,
					.sge = { sg(ba, ma, (size_t)i * TH_LEN, TH_LEN) } };

			for (int k = 0; k < TH_LEN; k++)
				ba[(size_t)i * TH_LEN + (size_t)k] = (uint8_t)(id + (uint64_t)k);
			post(qa, &w, 1);
		}
		pthread_barrier_wait(&th_bar);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(th_bad, 0);
	assert_int_equal(th_got, TH_ROUNDS * TH_WIN);
	/* how often the receiver had to block depends on the scheduling; never more than
	 * once a message (one event per arming) */
	assert_true(th_events <= TH_ROUNDS * TH_WIN);
	/* the sends were unsignaled: nothing else anywhere */
	assert_int_equal(ibv_poll_cq(cqx, 1, &wc), 0);
	assert_int_equal(ibv_poll_cq(cqb, 1, &wc), 0);
	teardown();
	pthread_barrier_destroy(&th_bar);
	fclose(out);
	fprintf(stderr, "threads: %d messages, %d completion events\n", th_got, th_events);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equivalence),
		cmocka_unit_test(test_threads),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref.fabric", NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
