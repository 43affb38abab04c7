/* Verbs probe: ibv_dereg_mr right after posting an RDMA READ into (or from) the region. Two
 * RC QPs on the first device looped back through GID 1, as verbs_probe_datapath.c; A READs
 * SIZE bytes (1 MiB by default, argv[1]) of B's region into its own. Each case posts the READ,
 * deregisters one side's MR at once, then prints the deregistration's result, A's completion
 * (status and length), both QPs' states, and how many bytes of A's region hold B's data
 * (from the start). Run on kernel rxe in the reference VM its output is
 * fixtures/golden/rxe/verbs-probe-dereg.out; make check compares the emulator's
 * (probes/probe-diff.sh). On one device kernel rxe has the whole READ done when
 * ibv_dereg_mr runs right after ibv_post_send (the VM's output: success, every byte), so
 * the deregistration finds nothing outstanding; the emulator's loopback does the same
 * (VM-CHECKS.md "Deregistering right after a READ's post"). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid1;
static size_t size = 1 << 20;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ACCESS };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					  IBV_QP_ACCESS_FLAGS))
		printf("modify INIT failed\n");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
					  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER))
		printf("modify RTR failed\n");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
					  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					  IBV_QP_MAX_QP_RD_ATOMIC))
		printf("modify RTS failed\n");
}

static void side_up(struct side *s, uint8_t fill)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
						.max_recv_sge = 1 } };

	s->mem = aligned_alloc(4096, size);
	s->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	ia.send_cq = ia.recv_cq = s->cq;
	s->qp = s->cq ? ibv_create_qp(pd, &ia) : NULL;
	if (!s->mem || !s->qp) {
		printf("setup failed\n");
		exit(1);
	}
	for (size_t i = 0; i < size; i++)
		s->mem[i] = (uint8_t)(fill + i * 7 + (i >> 12));
	s->mr = ibv_reg_mr(pd, s->mem, size, ACCESS);
	if (!s->mr) {
		printf("reg_mr failed: %s\n", strerror(errno));
		exit(1);
	}
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? -1 : (int)a.qp_state;
}

/* One case: which side's MR to deregister right after the post ('A' the READ's target, 'B'
 * its source). */
static void one(char which)
{
	struct side A, B;
	struct ibv_sge sg;
	struct ibv_send_wr w = { .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_mr *gone;
	struct ibv_wc wc;
	double until;
	size_t same = 0;
	int n, r, e;

	side_up(&A, 0x11);
	side_up(&B, 0x5a);
	connect_qp(A.qp, B.qp->qp_num);
	connect_qp(B.qp, A.qp->qp_num);
	sg = (struct ibv_sge){ (uintptr_t)A.mem, (uint32_t)size, A.mr->lkey };
	w.wr.rdma.remote_addr = (uintptr_t)B.mem;
	w.wr.rdma.rkey = B.mr->rkey;
	gone = which == 'A' ? A.mr : B.mr;
	if (ibv_post_send(A.qp, &w, &bad)) {
		printf("post_send failed\n");
		exit(1);
	}
	errno = 0;
	r = ibv_dereg_mr(gone);
	e = errno;
	printf("READ %zu bytes, %s MR deregistered at once: dereg_mr -> %d (%s)\n", size,
	       which == 'A' ? "target (A's)" : "source (B's)", r, r ? strerror(e) : "ok");
	until = now_s() + 5;
	do
		n = ibv_poll_cq(A.cq, 1, &wc);
	while (n == 0 && now_s() < until);
	if (n <= 0)
		printf("  A's completion -> none in 5 s\n");
	else
		printf("  A's completion -> st=%d (%s) op=%d len=%u\n", wc.status,
		       ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
	n = ibv_poll_cq(B.cq, 1, &wc);
	if (n > 0)
		printf("  B's completion -> st=%d (%s)\n", wc.status, ibv_wc_status_str(wc.status));
	printf("  QP states: A %d, B %d\n", qp_state(A.qp), qp_state(B.qp));
	while (same < size && A.mem[same] == (uint8_t)(0x5a + same * 7 + (same >> 12)))
		same++;
	printf("  A's region: the first %zu bytes are B's data\n", same);
	ibv_destroy_qp(A.qp);
	ibv_destroy_qp(B.qp);
	ibv_destroy_cq(A.cq);
	ibv_destroy_cq(B.cq);
	if (which != 'A')
		ibv_dereg_mr(A.mr);
	if (which != 'B')
		ibv_dereg_mr(B.mr);
	free(A.mem);
	free(B.mem);
}

int main(int argc, char **argv)
{
	struct ibv_device **devs = ibv_get_device_list(NULL);

	if (argc > 1)
		size = strtoul(argv[1], NULL, 0);
	if (!devs || !devs[0] || !(ctx = ibv_open_device(devs[0])) || !(pd = ibv_alloc_pd(ctx)) ||
	    ibv_query_gid(ctx, 1, 1, &gid1)) {
		printf("no device\n");
		return 1;
	}
	one('A');
	one('B');
	return 0;
}
