/* Verbs data-path probe: what a completion looks like, field by field, for each RC/UC opcode
 * and for the error cases docs/datapath.md listed as "to measure on the VM". Two QPs on the
 * first device, connected to each other through GID 1 (rxe loops the packets back). Run on
 * kernel rxe in the reference VM its output is fixtures/golden/rxe/verbs-probe-datapath.out;
 * make check runs it on the emulator and compares (probes/probe-diff.sh). QP numbers
 * are printed as A/B so the output does not depend on the kernel's QPN counter. Last,
 * ibv_dereg_mr right after a 1 MiB READ's post, of its target and of its source
 * (VM-CHECKS.md "Deregistering right after a READ's post"). */
#include <endian.h>
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
static size_t buf_len = BUF; /* each side's buffer and MR */

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

/* Prints the next completion of cq, or "none" after 0.3 s of real time (on the emulator the
 * empty polls move virtual time instead). */
static void show(const char *label, struct ibv_cq *cq)
{
	double until = now_s() + 0.3;
	struct ibv_wc wc;
	int n;

	do
		n = ibv_poll_cq(cq, 1, &wc);
	while (n == 0 && now_s() < until);
	if (n <= 0) {
		printf("%-30s -> none\n", label);
		return;
	}
	printf("%-30s -> id=%llu st=%d op=%d len=%u imm=0x%x flags=0x%x qp=%s src_qp=%s pkey=%u "
	       "slid=%u sl=%u bits=%u\n",
	       label, (unsigned long long)wc.wr_id, wc.status, wc.opcode, wc.byte_len,
	       be32toh(wc.imm_data), wc.wc_flags, who(wc.qp_num), who(wc.src_qp), wc.pkey_index,
	       wc.slid, wc.sl, wc.dlid_path_bits);
}

static void show_state(const char *label, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	ibv_query_qp(qp, &a, IBV_QP_STATE, &i);
	printf("%-30s -> state=%d\n", label, a.qp_state);
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, int access)
{
	int rc = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = access };

	ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
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
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN |
				  (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0)))
		printf("modify RTR failed\n");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
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

	s->mem = calloc(1, buf_len);
	s->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	s->mr = s->mem ? ibv_reg_mr(pd, s->mem, buf_len, mr_access) : NULL;
	if (!s->mem || !s->cq || !s->qp || !s->mr) {
		printf("setup failed\n");
		exit(1);
	}
}

static void side_down(struct side *s)
{
	ibv_destroy_qp(s->qp);
	ibv_destroy_cq(s->cq);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	free(s->mem);
	memset(s, 0, sizeof(*s));
}

static void pair(enum ibv_qp_type t, int access_b, int mr_access_b)
{
	side_up(&A, t, FULL_ACCESS);
	side_up(&B, t, mr_access_b);
	connect_qp(A.qp, B.qp->qp_num, FULL_ACCESS);
	connect_qp(B.qp, A.qp->qp_num, access_b);
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

/* Sends from A; the remote address is B's buffer. */
static void post(uint64_t id, enum ibv_wr_opcode op, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)A.mem, len, A.mr->lkey };
	struct ibv_send_wr w = { .wr_id = id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x1234) },
			   *bad;

	w.wr.rdma.remote_addr = (uintptr_t)B.mem;
	w.wr.rdma.rkey = B.mr->rkey;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		w.wr.atomic.remote_addr = (uintptr_t)B.mem;
		w.wr.atomic.rkey = B.mr->rkey;
		w.wr.atomic.compare_add = 5;
		w.wr.atomic.swap = 9;
	}
	printf("%-30s -> %d\n", "post", ibv_post_send(A.qp, &w, &bad));
}

static uint8_t b_byte(size_t i)
{
	return (uint8_t)(0x5a + i * 7 + (i >> 12));
}

/* A READs all of B's buffer; the MR of A's (which 'A', the READ's target) or of B's (its
 * source) is deregistered right after the post. Then the deregistration's result, A's
 * completion, both QPs' states and how many bytes of A's buffer hold B's data. */
static void dereg_after_read(char which)
{
	struct ibv_mr **gone = which == 'A' ? &A.mr : &B.mr;
	const char *what = which == 'A' ? "target" : "source";
	size_t same = 0;
	char l[64];
	int r;

	pair(IBV_QPT_RC, FULL_ACCESS, FULL_ACCESS);
	for (size_t i = 0; i < buf_len; i++)
		B.mem[i] = b_byte(i);
	post(41 + (which == 'B'), IBV_WR_RDMA_READ, (uint32_t)buf_len);
	r = ibv_dereg_mr(*gone);
	*gone = NULL;
	snprintf(l, sizeof(l), "read 1M, %s dereg", what);
	printf("%-30s -> %d\n", l, r);
	snprintf(l, sizeof(l), "read 1M, %s gone: A", what);
	show(l, A.cq);
	show_state(l, A.qp);
	snprintf(l, sizeof(l), "read 1M, %s gone: B", what);
	show_state(l, B.qp);
	while (same < buf_len && A.mem[same] == b_byte(same))
		same++;
	snprintf(l, sizeof(l), "read 1M, %s gone: data", what);
	printf("%-30s -> %zu bytes of B's\n", l, same);
	unpair();
}

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	uint64_t v;

	ctx = ibv_open_device(l[0]);
	pd = ibv_alloc_pd(ctx);
	ibv_query_gid(ctx, 1, 1, &gid1);

	pair(IBV_QPT_RC, FULL_ACCESS, FULL_ACCESS);
	post_recv(&B, 11, 200);
	post(1, IBV_WR_SEND, 100);
	show("rc send: sender", A.cq);
	show("rc send: receiver", B.cq);
	post_recv(&B, 12, 200);
	post(2, IBV_WR_SEND_WITH_IMM, 100);
	show("rc send imm: sender", A.cq);
	show("rc send imm: receiver", B.cq);
	post(3, IBV_WR_RDMA_WRITE, 100);
	show("rc write: sender", A.cq);
	show("rc write: receiver", B.cq);
	post_recv(&B, 14, 200);
	post(4, IBV_WR_RDMA_WRITE_WITH_IMM, 100);
	show("rc write imm: sender", A.cq);
	show("rc write imm: receiver", B.cq);
	post(5, IBV_WR_RDMA_READ, 100);
	show("rc read: sender", A.cq);
	memset(B.mem, 0, 8);
	post(6, IBV_WR_ATOMIC_FETCH_AND_ADD, 16);
	show("rc fetch_add 16B sge: sender", A.cq);
	memcpy(&v, A.mem, 8);
	printf("%-30s -> %llu\n", "fetch_add original", (unsigned long long)v);
	memcpy(&v, B.mem, 8);
	printf("%-30s -> %llu\n", "fetch_add remote now", (unsigned long long)v);
	post(7, IBV_WR_ATOMIC_CMP_AND_SWP, 8);
	show("rc cmp_swp: sender", A.cq);
	memcpy(&v, B.mem, 8);
	printf("%-30s -> %llu\n", "cmp_swp remote now", (unsigned long long)v);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, FULL_ACCESS);
	post_recv(&B, 21, 10);
	post(8, IBV_WR_SEND, 100);
	show("rc send too long: sender", A.cq);
	show("rc send too long: receiver", B.cq);
	show_state("rc send too long: A", A.qp);
	show_state("rc send too long: B", B.qp);
	unpair();

	pair(IBV_QPT_RC, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, FULL_ACCESS);
	post(9, IBV_WR_ATOMIC_FETCH_AND_ADD, 8);
	show("rc atomic, qp no atomic: A", A.cq);
	show_state("rc atomic, qp no atomic: A", A.qp);
	show_state("rc atomic, qp no atomic: B", B.qp);
	unpair();

	pair(IBV_QPT_RC, FULL_ACCESS, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	post(10, IBV_WR_ATOMIC_FETCH_AND_ADD, 8);
	show("rc atomic, mr no atomic: A", A.cq);
	show_state("rc atomic, mr no atomic: A", A.qp);
	show_state("rc atomic, mr no atomic: B", B.qp);
	unpair();

	pair(IBV_QPT_UC, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, FULL_ACCESS);
	post_recv(&B, 31, 200);
	post(11, IBV_WR_SEND_WITH_IMM, 100);
	show("uc send imm: sender", A.cq);
	show("uc send imm: receiver", B.cq);
	post(12, IBV_WR_SEND, 100);
	show("uc send, no recv: sender", A.cq);
	show("uc send, no recv: receiver", B.cq);
	show_state("uc send, no recv: B", B.qp);
	unpair();

	buf_len = 1 << 20;
	dereg_after_read('A');
	dereg_after_read('B');
	buf_len = BUF;

	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(l);
	return 0;
}
