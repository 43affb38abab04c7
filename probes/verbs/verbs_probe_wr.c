/* Verbs probe of the ibv_wr_* send API on rxe (scripts/rxe-vm, single VM): two RC QPs of the
 * first device connected through GID 1. What rdma-core 44's rxe setters do with an SGE list of
 * unequal lengths and with an inline data list (emu/verbs/wr_ex.c), the queue depth at which
 * a builder gives ENOSPC, abort, and the too-long inline / SGE list errors. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr;
static uint8_t mem[16384];
static union ibv_gid gid1;

static struct ibv_qp *mk(void)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
		.cap = { .max_send_wr = 4, .max_recv_wr = 8, .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
	};
	struct ibv_qp *q = ibv_create_qp_ex(ctx, &a);

	if (!q) {
		perror("create_qp_ex");
		exit(1);
	}
	return q;
}

static void conn(struct ibv_qp *q, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 5;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid1;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		perror("rtr");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 5;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		perror("rts");
}

static void drain(const char *what)
{
	struct ibv_wc wc;
	int n = 0;

	for (long i = 0; i < 20000000L; i++) {
		if (!ibv_poll_cq(cq, 1, &wc))
			continue;
		printf("%s: wc wr_id %llu status %d opcode %d byte_len %u\n", what,
		       (unsigned long long)wc.wr_id, wc.status, wc.opcode, wc.byte_len);
		if (++n == 8)
			break;
	}
	if (!n)
		printf("%s: no completion\n", what);
}

static void recv1(struct ibv_qp *q, uint32_t off)
{
	struct ibv_sge sg = { (uintptr_t)mem + off, 512, mr->lkey };
	struct ibv_recv_wr w = { .wr_id = 70, .sg_list = &sg, .num_sge = 1 }, *bad;

	ibv_post_recv(q, &w, &bad);
}

int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	struct ibv_sge two[2];
	uint8_t in1[5] = { 1, 2, 3, 4, 5 }, in2[3] = { 6, 7, 8 };
	struct ibv_data_buf bufs[2] = { { in1, 5 }, { in2, 3 } };
	char big[65];
	int r;

	ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	mr = ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ibv_query_gid(ctx, 1, 1, &gid1);
	a = mk();
	b = mk();
	conn(a, b->qp_num);
	conn(b, a->qp_num);
	x = ibv_qp_to_qp_ex(a);
	for (int i = 0; i < 1024; i++)
		mem[i] = (uint8_t)(i * 3 + 1);

	/* inline list 5 + 3 as a SEND */
	recv1(b, 8192);
	memset(mem + 8192, 0xee, 16);
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(x);
	ibv_wr_set_inline_data_list(x, 2, bufs);
	r = ibv_wr_complete(x);
	/* a second one: two buffers of 40 (80 > max_inline 64, each alone under it) */
	if (!r) {
		static uint8_t forty[40];
		struct ibv_data_buf b40[2] = { { forty, 40 }, { forty, 40 } };

		drain("inline list 5+3");
		printf("inline list 5+3: receiver bytes %02x %02x %02x %02x %02x %02x %02x %02x %02x\n",
		       mem[8192], mem[8193], mem[8194], mem[8195], mem[8196], mem[8197], mem[8198],
		       mem[8199], mem[8200]);
		recv1(b, 8192);
		ibv_wr_start(x);
		x->wr_id = 4;
		ibv_wr_send(x);
		ibv_wr_set_inline_data_list(x, 2, b40);
		r = ibv_wr_complete(x);
		printf("inline list 40+40: complete %d\n", r);
		drain("inline list 40+40");
		r = -1;
	}
	/* (left as it ran on the VM: r is -1 here, these three lines print nothing new) */
	printf("inline list 5+3: complete %d\n", r);
	drain("inline list 5+3");
	printf("inline list 5+3: receiver bytes %02x %02x %02x %02x %02x %02x %02x %02x %02x\n",
	       mem[8192], mem[8193], mem[8194], mem[8195], mem[8196], mem[8197], mem[8198],
	       mem[8199], mem[8200]);
	/* SGE list of 30 + 50 bytes, RDMA WRITE to 4096 */
	memset(mem + 4096, 0, 200);
	two[0] = (struct ibv_sge){ (uintptr_t)mem + 10, 30, mr->lkey };
	two[1] = (struct ibv_sge){ (uintptr_t)mem + 200, 50, mr->lkey };
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 4096);
	ibv_wr_set_sge_list(x, 2, two);
	r = ibv_wr_complete(x);
	printf("sge list 30+50: complete %d\n", r);
	drain("sge list 30+50");
	{
		int last = -1;

		for (int i = 0; i < 200; i++)
			if (mem[4096 + i])
				last = i;
		printf("sge list 30+50: written up to byte %d; first 30 ok %d; next 50 ok %d\n", last,
		       !memcmp(mem + 4096, mem + 10, 30), !memcmp(mem + 4126, mem + 200, 50));
	}
	/* depth: max_send_wr 4 */
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr ia;

		ibv_query_qp(a, &qa, IBV_QP_CAP, &ia);
		printf("max_send_wr %u max_inline %u max_sge %u\n", ia.cap.max_send_wr,
		       ia.cap.max_inline_data, ia.cap.max_send_sge);
		for (uint32_t n = ia.cap.max_send_wr; n <= ia.cap.max_send_wr + 1; n++) {
			ibv_wr_start(x);
			x->wr_flags = IBV_SEND_SIGNALED;
			for (uint32_t i = 0; i < n; i++) {
				x->wr_id = 100 + i;
				ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 4096);
				ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem, 8);
			}
			r = ibv_wr_complete(x);
			printf("%u WQEs: complete %d\n", n, r);
			drain("depth");
		}
	}
	ibv_wr_start(x);
	x->wr_id = 200;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 4096);
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)mem, 8);
	ibv_wr_abort(x);
	drain("abort");
	memset(big, 'q', sizeof(big));
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 4096);
	ibv_wr_set_inline_data(x, big, 65);
	printf("inline 65: complete %d\n", ibv_wr_complete(x));
	ibv_wr_start(x);
	x->wr_id = 201;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 4096);
	ibv_wr_set_inline_data(x, big, 64);
	printf("inline 64: complete %d\n", ibv_wr_complete(x));
	drain("inline 64");
	{
		struct ibv_sge five[5];

		for (int i = 0; i < 5; i++)
			five[i] = (struct ibv_sge){ (uintptr_t)mem, 1, mr->lkey };
		ibv_wr_start(x);
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 4096);
		ibv_wr_set_sge_list(x, 5, five);
		printf("sge list 5: complete %d\n", ibv_wr_complete(x));
	}
	/* 50 + 30: the first length twice is 100 > 80 */
	memset(mem + 4096, 0, 200);
	two[0].length = 50;
	two[1].length = 30;
	ibv_wr_start(x);
	x->wr_id = 2;
	ibv_wr_rdma_write(x, mr->rkey, (uintptr_t)mem + 4096);
	ibv_wr_set_sge_list(x, 2, two);
	r = ibv_wr_complete(x);
	printf("sge list 50+30: complete %d\n", r);
	drain("sge list 50+30");
	printf("done\n");
	return 0;
}
