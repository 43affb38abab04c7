/* Verbs object probe (CQ, QP state machine, SRQ, AH, posts): prints "call -> result" lines. Run on
 * kernel rxe in the reference VM its output is fixtures/golden/rxe/verbs-probe-objects.out;
 * make check runs it on the emulator and compares (probes/probe-diff.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <infiniband/verbs.h>
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
#define R(label, expr)                                                                             \
	do {                                                                                       \
		errno = 0;                                                                         \
		long _r = (long)(expr);                                                            \
		int _e = errno;                                                                    \
		printf("%-44s -> %ld errno=%d\n", label, _r, _e);                                  \
	} while (0)
static void pcq(const char *l, int cqe, int vec, struct ibv_comp_channel *ch)
{
	errno = 0;
	struct ibv_cq *c = ibv_create_cq(ctx, cqe, NULL, ch, vec);
	int e = errno;
	printf("create_cq %-34s -> %s errno=%d cqe=%d\n", l, c ? "OK" : "NULL", c ? 0 : e,
	       c ? c->cqe : -1);
	if (c)
		ibv_destroy_cq(c);
}
static struct ibv_qp *mkqp(const char *l, enum ibv_qp_type t, int sw, int rw, int ss, int rs,
			   int inl, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
	    .send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = t, .cap = {sw, rw, ss, rs, inl}};
	errno = 0;
	struct ibv_qp *q = ibv_create_qp(pd, &a);
	int e = errno;
	printf("create_qp %-34s -> %s errno=%d", l, q ? "OK" : "NULL", q ? 0 : e);
	if (q)
		printf(" qpn=%u caps sw=%u rw=%u ss=%u rs=%u inl=%u state=%d handle=%u", q->qp_num,
		       a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_send_sge, a.cap.max_recv_sge,
		       a.cap.max_inline_data, q->state, q->handle);
	printf("\n");
	return q;
}
static void pq(const char *l, struct ibv_qp *q)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;
	memset(&a, 0x55, sizeof(a));
	memset(&i, 0x55, sizeof(i));
	int rc = ibv_query_qp(q, &a, 0x1fffff, &i);
	printf("query_qp %s -> %d state=%d cur=%d mtu=%d mig=%d qkey=0x%x rq_psn=%u sq_psn=%u "
	       "dqp=%u acc=%d cap=%u/%u/%u/%u/%u pkey=%u alt_pkey=%u "
	       "sqd=%d sq_draining=%d mrd=%d mdrd=%d rnrt=%d port=%d to=%d retry=%d rnr=%d "
	       "altport=%d altto=%d "
	       "ah: dlid=%u sl=%d src=%d rate=%d flags=%d port=%d sgid=%d hop=%d tc=%d fl=%u "
	       "dgid0=%02x dgid15=%02x "
	       "init: type=%d sig=%d cap=%u/%u/%u/%u/%u srq=%p\n",
	       l, rc, a.qp_state, a.cur_qp_state, a.path_mtu, a.path_mig_state, a.qkey, a.rq_psn,
	       a.sq_psn, a.dest_qp_num, a.qp_access_flags, a.cap.max_send_wr, a.cap.max_recv_wr,
	       a.cap.max_send_sge, a.cap.max_recv_sge, a.cap.max_inline_data, a.pkey_index,
	       a.alt_pkey_index, a.en_sqd_async_notify, a.sq_draining, a.max_rd_atomic,
	       a.max_dest_rd_atomic, a.min_rnr_timer, a.port_num, a.timeout, a.retry_cnt,
	       a.rnr_retry, a.alt_port_num, a.alt_timeout, a.ah_attr.dlid, a.ah_attr.sl,
	       a.ah_attr.src_path_bits, a.ah_attr.static_rate, a.ah_attr.is_global,
	       a.ah_attr.port_num, a.ah_attr.grh.sgid_index, a.ah_attr.grh.hop_limit,
	       a.ah_attr.grh.traffic_class, a.ah_attr.grh.flow_label, a.ah_attr.grh.dgid.raw[0],
	       a.ah_attr.grh.dgid.raw[15], i.qp_type, i.sq_sig_all, i.cap.max_send_wr,
	       i.cap.max_recv_wr, i.cap.max_send_sge, i.cap.max_recv_sge, i.cap.max_inline_data,
	       (void *)i.srq);
}
static int mod(const char *l, struct ibv_qp *q, struct ibv_qp_attr *a, int mask)
{
	errno = 0;
	int rc = ibv_modify_qp(q, a, mask);
	int e = errno;
	printf("modify_qp %-34s -> %d errno=%d qp->state=%d\n", l, rc, e, q->state);
	return rc;
}
static union ibv_gid gid1, gid0;
static void init_rc(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = 1;
	a->qp_access_flags = 7;
}
static void rtr_rc(struct ibv_qp_attr *a, int dqp)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTR;
	a->path_mtu = IBV_MTU_1024;
	a->dest_qp_num = dqp;
	a->rq_psn = 0x123456;
	a->max_dest_rd_atomic = 3;
	a->min_rnr_timer = 12;
	a->ah_attr.is_global = 1;
	a->ah_attr.grh.dgid = gid1;
	a->ah_attr.grh.sgid_index = 1;
	a->ah_attr.grh.hop_limit = 64;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.flow_label = 5;
	a->ah_attr.grh.traffic_class = 3;
	a->ah_attr.sl = 2;
}
#define RTR_MASK                                                                                   \
	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |            \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
static void rts_rc(struct ibv_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = 0x654321;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->max_rd_atomic = 3;
}
#define RTS_MASK                                                                                   \
	(IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |     \
	 IBV_QP_MAX_QP_RD_ATOMIC)
static void posts(const char *l, struct ibv_qp *q)
{
	static char buf[64];
	struct ibv_sge sg = {(uintptr_t)buf, 8, 0};
	struct ibv_send_wr sw = {.wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND},
			   *bs = (void *)1;
	struct ibv_recv_wr rw = {.wr_id = 2, .sg_list = &sg, .num_sge = 1}, *br = (void *)1;
	errno = 0;
	int rc = ibv_post_recv(q, &rw, &br);
	printf("post_recv %-34s -> %d errno=%d bad=%s\n", l, rc, errno,
	       br == &rw ? "wr"
	       : br	 ? "untouched"
			 : "NULL");
	errno = 0;
	rc = ibv_post_send(q, &sw, &bs);
	printf("post_send %-34s -> %d errno=%d bad=%s\n", l, rc, errno,
	       bs == &sw ? "wr"
	       : bs	 ? "untouched"
			 : "NULL");
}
int main(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	pd = ibv_alloc_pd(ctx);
	struct ibv_port_attr pa;
	ibv_query_port(ctx, 1, &pa);
	printf("port active_mtu=%d max_mtu=%d gid_tbl=%d pkey_tbl=%d\n", pa.active_mtu, pa.max_mtu,
	       pa.gid_tbl_len, pa.pkey_tbl_len);
	ibv_query_gid(ctx, 1, 1, &gid1);
	ibv_query_gid(ctx, 1, 0, &gid0);
	/* CQ */
	pcq("cqe 1", 1, 0, NULL);
	pcq("cqe 2", 2, 0, NULL);
	pcq("cqe 3", 3, 0, NULL);
	pcq("cqe 4", 4, 0, NULL);
	pcq("cqe 100", 100, 0, NULL);
	pcq("cqe 32766", 32766, 0, NULL);
	pcq("cqe 32767", 32767, 0, NULL);
	pcq("cqe 32768", 32768, 0, NULL);
	pcq("cqe 0", 0, 0, NULL);
	pcq("cqe -1", -1, 0, NULL);
	pcq("vec 1", 4, 1, NULL);
	pcq("vec 2", 4, 2, NULL);
	pcq("vec -1", 4, -1, NULL);
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	printf("cq with channel cqe=%d handle=%u channel refcnt=%d comp_ev=%u\n", cq->cqe,
	       cq->handle, ch->refcnt, cq->comp_events_completed);
	R("destroy_comp_channel in use", ibv_destroy_comp_channel(ch));
	R("req_notify_cq next", ibv_req_notify_cq(cq, 0));
	R("req_notify_cq solicited", ibv_req_notify_cq(cq, 1));
	{
		struct ibv_wc wc[2];
		R("poll_cq empty", ibv_poll_cq(cq, 2, wc));
		R("poll_cq n=0", ibv_poll_cq(cq, 0, wc));
		R("poll_cq n=-1", ibv_poll_cq(cq, -1, wc));
	}
	R("resize_cq 100", ibv_resize_cq(cq, 100));
	printf("  cqe=%d\n", cq->cqe);
	R("resize_cq 1", ibv_resize_cq(cq, 1));
	printf("  cqe=%d\n", cq->cqe);
	R("resize_cq 0", ibv_resize_cq(cq, 0));
	R("resize_cq 32768", ibv_resize_cq(cq, 32768));
	R("resize_cq 16", ibv_resize_cq(cq, 16));
	printf("  cqe=%d\n", cq->cqe);
	{
		int fl = fcntl(ch->fd, F_GETFL);
		fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
		struct ibv_cq *ec;
		void *ectx;
		R("get_cq_event nonblock empty", ibv_get_cq_event(ch, &ec, &ectx));
		fcntl(ch->fd, F_SETFL, fl);
	}
	{
		struct ibv_cq_init_attr_ex ce = {.cqe = 10, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN};
		errno = 0;
		struct ibv_cq_ex *x = ibv_create_cq_ex(ctx, &ce);
		printf("create_cq_ex byte_len -> %s errno=%d cqe=%d\n", x ? "OK" : "NULL",
		       x ? 0 : errno, x ? x->cqe : -1);
		if (x)
			ibv_destroy_cq(ibv_cq_ex_to_cq(x));
		ce.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		errno = 0;
		x = ibv_create_cq_ex(ctx, &ce);
		printf("create_cq_ex timestamp -> %s errno=%d\n", x ? "OK" : "NULL", x ? 0 : errno);
		if (x)
			ibv_destroy_cq(ibv_cq_ex_to_cq(x));
		ce.wc_flags = 0x3f;
		errno = 0;
		x = ibv_create_cq_ex(ctx, &ce);
		printf("create_cq_ex wc 0x3f -> %s errno=%d\n", x ? "OK" : "NULL", x ? 0 : errno);
		if (x)
			ibv_destroy_cq(ibv_cq_ex_to_cq(x));
		ce.wc_flags = 0;
		ce.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
		ce.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
		errno = 0;
		x = ibv_create_cq_ex(ctx, &ce);
		printf("create_cq_ex single_threaded -> %s errno=%d\n", x ? "OK" : "NULL",
		       x ? 0 : errno);
		if (x)
			ibv_destroy_cq(ibv_cq_ex_to_cq(x));
		ce.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
		ce.flags = 0;
		ce.parent_domain = pd;
		errno = 0;
		x = ibv_create_cq_ex(ctx, &ce);
		printf("create_cq_ex mask PD -> %s errno=%d\n", x ? "OK" : "NULL", x ? 0 : errno);
		if (x)
			ibv_destroy_cq(ibv_cq_ex_to_cq(x));
	}
	/* QP create */
	struct ibv_qp *q;
	q = mkqp("RC 1/1/1/1/0", IBV_QPT_RC, 1, 1, 1, 1, 0, NULL);
	pq("fresh RC", q);
	ibv_destroy_qp(q);
	q = mkqp("RC 0/0/0/0/0", IBV_QPT_RC, 0, 0, 0, 0, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC 100/50/3/5/64", IBV_QPT_RC, 100, 50, 3, 5, 64, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC 16/16/2/2/100", IBV_QPT_RC, 16, 16, 2, 2, 100, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC sge 32 inl 512", IBV_QPT_RC, 16, 16, 32, 32, 512, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC send_sge 33", IBV_QPT_RC, 16, 16, 33, 1, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC recv_sge 33", IBV_QPT_RC, 16, 16, 1, 33, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC inline 513", IBV_QPT_RC, 16, 16, 1, 1, 513, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC send_wr 1048576", IBV_QPT_RC, 1048576, 1, 1, 1, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RC send_wr 1048577", IBV_QPT_RC, 1048577, 1, 1, 1, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("UC 8/8/1/1/0", IBV_QPT_UC, 8, 8, 1, 1, 0, NULL);
	if (q) {
		pq("fresh UC", q);
		ibv_destroy_qp(q);
	}
	q = mkqp("UD 8/8/1/1/0", IBV_QPT_UD, 8, 8, 1, 1, 0, NULL);
	if (q) {
		pq("fresh UD", q);
		ibv_destroy_qp(q);
	}
	q = mkqp("XRC_SEND", IBV_QPT_XRC_SEND, 8, 0, 1, 0, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("XRC_RECV", IBV_QPT_XRC_RECV, 0, 0, 0, 0, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("RAW_PACKET", IBV_QPT_RAW_PACKET, 8, 8, 1, 1, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	q = mkqp("type 99", 99, 8, 8, 1, 1, 0, NULL);
	if (q)
		ibv_destroy_qp(q);
	{
		struct ibv_qp_init_attr a = {
		    .send_cq = cq, .recv_cq = NULL, .qp_type = IBV_QPT_RC, .cap = {1, 1, 1, 1, 0}};
		if (0)
			q = ibv_create_qp(pd, &a);
		else
			q = NULL;
		printf("create_qp no recv_cq (skipped: segfaults in rxe provider) -> %s errno=%d\n",
		       q ? "OK" : "NULL", q ? 0 : errno);
		if (q)
			ibv_destroy_qp(q);
	}
	{
		struct ibv_qp_init_attr_ex a = {.send_cq = cq,
						.recv_cq = cq,
						.qp_type = IBV_QPT_RC,
						.cap = {1, 1, 1, 1, 0},
						.pd = pd,
						.comp_mask = IBV_QP_INIT_ATTR_PD |
							     IBV_QP_INIT_ATTR_CREATE_FLAGS,
						.create_flags = IBV_QP_CREATE_SCATTER_FCS};
		errno = 0;
		q = ibv_create_qp_ex(ctx, &a);
		printf("create_qp_ex SCATTER_FCS -> %s errno=%d\n", q ? "OK" : "NULL",
		       q ? 0 : errno);
		if (q)
			ibv_destroy_qp(q);
		a.create_flags = 0;
		errno = 0;
		q = ibv_create_qp_ex(ctx, &a);
		printf("create_qp_ex flags 0 -> %s errno=%d\n", q ? "OK" : "NULL", q ? 0 : errno);
		if (q)
			ibv_destroy_qp(q);
		a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
		errno = 0;
		q = ibv_create_qp_ex(ctx, &a);
		printf("create_qp_ex SEND_OPS send|write -> %s errno=%d\n", q ? "OK" : "NULL",
		       q ? 0 : errno);
		if (q)
			ibv_destroy_qp(q);
		a.send_ops_flags = IBV_QP_EX_WITH_TSO;
		errno = 0;
		q = ibv_create_qp_ex(ctx, &a);
		printf("create_qp_ex SEND_OPS TSO -> %s errno=%d\n", q ? "OK" : "NULL",
		       q ? 0 : errno);
		if (q)
			ibv_destroy_qp(q);
		a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
		errno = 0;
		q = ibv_create_qp_ex(ctx, &a);
		printf("create_qp_ex MAX_TSO_HEADER -> %s errno=%d\n", q ? "OK" : "NULL",
		       q ? 0 : errno);
		if (q)
			ibv_destroy_qp(q);
	}
	/* QPN sequence */
	{
		struct ibv_qp *a = mkqp("seq a", IBV_QPT_RC, 1, 1, 1, 1, 0, NULL),
			      *b = mkqp("seq b", IBV_QPT_UD, 1, 1, 1, 1, 0, NULL);
		ibv_destroy_qp(a);
		struct ibv_qp *c = mkqp("seq c after destroy a", IBV_QPT_RC, 1, 1, 1, 1, 0, NULL);
		ibv_destroy_qp(b);
		ibv_destroy_qp(c);
	}
	/* modify_qp RC */
	struct ibv_qp *peer = mkqp("peer", IBV_QPT_RC, 8, 8, 1, 1, 0, NULL);
	q = mkqp("rc", IBV_QPT_RC, 8, 8, 2, 2, 0, NULL);
	posts("RESET", q);
	struct ibv_qp_attr a;
	init_rc(&a);
	mod("RESET->INIT missing ACCESS", q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT);
	init_rc(&a);
	mod("RESET->INIT extra QKEY", q, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY);
	init_rc(&a);
	a.port_num = 2;
	mod("RESET->INIT port 2", q, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	init_rc(&a);
	a.port_num = 0;
	mod("RESET->INIT port 0", q, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	init_rc(&a);
	a.pkey_index = 1;
	mod("RESET->INIT pkey_index 1", q, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	init_rc(&a);
	a.qp_access_flags = 0x100;
	mod("RESET->INIT access 0x100", q, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	init_rc(&a);
	a.qp_state = IBV_QPS_RTR;
	mod("RESET->RTR", q, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	init_rc(&a);
	a.qp_state = 7;
	mod("RESET->state 7", q, &a, IBV_QP_STATE);
	init_rc(&a);
	a.cur_qp_state = IBV_QPS_INIT;
	mod("CUR_STATE INIT ->INIT (real RESET)", q, &a,
	    IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		IBV_QP_ACCESS_FLAGS);
	init_rc(&a);
	mod("no STATE, PKEY only in RESET", q, &a, IBV_QP_PKEY_INDEX);
	init_rc(&a);
	mod("mask 0", q, &a, 0);
	init_rc(&a);
	mod("RESET->RESET", q, &a, 0);
	a.qp_state = IBV_QPS_RESET;
	mod("RESET->RESET state", q, &a, IBV_QP_STATE);
	init_rc(&a);
	mod("RESET->INIT ok", q, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	pq("INIT", q);
	posts("INIT", q);
	init_rc(&a);
	a.qp_access_flags = 1;
	mod("INIT->INIT access", q, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
	rtr_rc(&a, peer->qp_num);
	mod("INIT->RTR missing MIN_RNR", q, &a, RTR_MASK & ~IBV_QP_MIN_RNR_TIMER);
	rtr_rc(&a, peer->qp_num);
	mod("INIT->RTR extra SQ_PSN", q, &a, RTR_MASK | IBV_QP_SQ_PSN);
	rtr_rc(&a, peer->qp_num);
	a.path_mtu = IBV_MTU_4096;
	mod("INIT->RTR mtu 4096 (active 1024)", q, &a, RTR_MASK);
	pq("after mtu4096", q);
	{
		struct ibv_qp_attr z;
		init_rc(&z);
		z.qp_state = IBV_QPS_RESET;
		mod("->RESET", q, &z, IBV_QP_STATE);
		pq("RESET again", q);
		init_rc(&z);
		mod("RESET->INIT again", q, &z,
		    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	}
	rtr_rc(&a, peer->qp_num);
	a.path_mtu = 6;
	mod("INIT->RTR mtu 6", q, &a, RTR_MASK);
	rtr_rc(&a, peer->qp_num);
	a.path_mtu = 0;
	mod("INIT->RTR mtu 0", q, &a, RTR_MASK);
	rtr_rc(&a, peer->qp_num);
	a.ah_attr.is_global = 0;
	a.ah_attr.dlid = 1;
	mod("INIT->RTR no GRH", q, &a, RTR_MASK);
	rtr_rc(&a, peer->qp_num);
	a.ah_attr.port_num = 2;
	mod("INIT->RTR ah port 2", q, &a, RTR_MASK);
	rtr_rc(&a, peer->qp_num);
	a.ah_attr.grh.sgid_index = 5;
	mod("INIT->RTR sgid_index 5 (empty)", q, &a, RTR_MASK);
	rtr_rc(&a, peer->qp_num);
	a.ah_attr.grh.sgid_index = 200;
	mod("INIT->RTR sgid_index 200", q, &a, RTR_MASK);
	rtr_rc(&a, peer->qp_num);
	a.ah_attr.grh.sgid_index = 0;
	mod("INIT->RTR sgid 0 (RoCEv1) -> dgid gid1", q, &a, RTR_MASK);
	{
		struct ibv_qp_attr z;
		init_rc(&z);
		z.qp_state = IBV_QPS_RESET;
		mod("->RESET", q, &z, IBV_QP_STATE);
		init_rc(&z);
		mod("RESET->INIT again", q, &z,
		    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	}
	rtr_rc(&a, peer->qp_num);
	a.dest_qp_num = 0x1000000;
	mod("INIT->RTR dest_qp 2^24", q, &a, RTR_MASK);
	pq("after dqp 2^24", q);
	{
		struct ibv_qp_attr z;
		init_rc(&z);
		z.qp_state = IBV_QPS_RESET;
		mod("->RESET", q, &z, IBV_QP_STATE);
		init_rc(&z);
		mod("RESET->INIT again", q, &z,
		    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	}
	rtr_rc(&a, peer->qp_num);
	a.rq_psn = 0x1abcdef;
	a.max_dest_rd_atomic = 200;
	mod("INIT->RTR rq_psn>24b mdrd 200", q, &a, RTR_MASK);
	pq("after psn", q);
	{
		struct ibv_qp_attr z;
		init_rc(&z);
		z.qp_state = IBV_QPS_RESET;
		mod("->RESET", q, &z, IBV_QP_STATE);
		init_rc(&z);
		mod("RESET->INIT again", q, &z,
		    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	}
	rtr_rc(&a, peer->qp_num);
	mod("INIT->RTR ok", q, &a, RTR_MASK);
	pq("RTR", q);
	posts("RTR", q);
	rts_rc(&a);
	a.rnr_retry = 8;
	mod("RTR->RTS rnr_retry 8", q, &a, RTS_MASK);
	rts_rc(&a);
	a.timeout = 32;
	mod("RTR->RTS timeout 32", q, &a, RTS_MASK);
	rts_rc(&a);
	a.max_rd_atomic = 129;
	mod("RTR->RTS max_rd_atomic 129", q, &a, RTS_MASK);
	rts_rc(&a);
	mod("RTR->RTS missing RNR_RETRY", q, &a, RTS_MASK & ~IBV_QP_RNR_RETRY);
	rts_rc(&a);
	mod("RTR->RTS extra PATH_MTU", q, &a, RTS_MASK | IBV_QP_PATH_MTU);
	rts_rc(&a);
	a.retry_cnt = 8;
	mod("RTR->RTS retry_cnt 8", q, &a, RTS_MASK);
	pq("RTS", q);
	a.qp_state = IBV_QPS_SQD;
	mod("RTS->SQD", q, &a, IBV_QP_STATE);
	pq("SQD", q);
	posts("SQD", q);
	a.qp_state = IBV_QPS_RTS;
	mod("SQD->RTS", q, &a, IBV_QP_STATE);
	pq("RTS from SQD", q);
	a.qp_state = IBV_QPS_SQE;
	mod("RTS->SQE", q, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_ERR;
	mod("RTS->ERR", q, &a, IBV_QP_STATE);
	pq("ERR", q);
	posts("ERR", q);
	a.qp_state = IBV_QPS_RTS;
	mod("ERR->RTS", q, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RESET;
	mod("ERR->RESET", q, &a, IBV_QP_STATE);
	pq("RESET from ERR", q);
	/* UD */
	struct ibv_qp *u = mkqp("ud", IBV_QPT_UD, 8, 8, 1, 1, 0, NULL);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	mod("UD RESET->INIT missing QKEY", u, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT);
	mod("UD RESET->INIT with ACCESS", u, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_ACCESS_FLAGS);
	mod("UD RESET->INIT ok", u, &a,
	    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	mod("UD INIT->RTR", u, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x42;
	mod("UD RTR->RTS", u, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	pq("UD RTS", u);
	{
		static char buf[64];
		struct ibv_sge sg = {(uintptr_t)buf, 8, 0};
		struct ibv_send_wr sw = {.wr_id = 1,
					 .sg_list = &sg,
					 .num_sge = 1,
					 .opcode = IBV_WR_RDMA_WRITE},
				   *bs = NULL;
		errno = 0;
		int rc = 0;
		(void)sw;
		(void)bs;
		printf("post_send UD RDMA_WRITE (skipped: no ah segfaults) -> %d errno=%d bad=%s\n",
		       rc, errno, bs == &sw ? "wr" : "NULL");
	}
	/* UD AH */
	{
		struct ibv_ah_attr ah = {.is_global = 1,
					 .grh = {.dgid = gid1, .sgid_index = 1, .hop_limit = 1},
					 .port_num = 1};
		struct ibv_ah *h;
		errno = 0;
		h = ibv_create_ah(pd, &ah);
		printf("create_ah ok -> %s errno=%d handle=%u\n", h ? "OK" : "NULL", h ? 0 : errno,
		       h ? h->handle : 0);
		R("dealloc_pd with AH+QP", ibv_dealloc_pd(pd));
		if (h)
			ibv_destroy_ah(h);
		ah.is_global = 0;
		ah.dlid = 3;
		errno = 0;
		h = ibv_create_ah(pd, &ah);
		printf("create_ah no GRH -> %s errno=%d\n", h ? "OK" : "NULL", h ? 0 : errno);
		if (h)
			ibv_destroy_ah(h);
		ah.is_global = 1;
		ah.port_num = 2;
		errno = 0;
		h = ibv_create_ah(pd, &ah);
		printf("create_ah port 2 -> %s errno=%d\n", h ? "OK" : "NULL", h ? 0 : errno);
		if (h)
			ibv_destroy_ah(h);
		ah.port_num = 1;
		ah.grh.sgid_index = 5;
		errno = 0;
		h = ibv_create_ah(pd, &ah);
		printf("create_ah sgid 5 -> %s errno=%d\n", h ? "OK" : "NULL", h ? 0 : errno);
		if (h)
			ibv_destroy_ah(h);
		ah.grh.sgid_index = 1;
		ah.static_rate = 3;
		errno = 0;
		h = ibv_create_ah(pd, &ah);
		printf("create_ah rate 3 -> %s errno=%d\n", h ? "OK" : "NULL", h ? 0 : errno);
		if (h)
			ibv_destroy_ah(h);
		ah.static_rate = 0;
		ah.grh.dgid.raw[0] = 0xff;
		ah.grh.dgid.raw[1] = 0x0e;
		errno = 0;
		h = ibv_create_ah(pd, &ah);
		printf("create_ah mcast dgid -> %s errno=%d\n", h ? "OK" : "NULL", h ? 0 : errno);
		if (h)
			ibv_destroy_ah(h);
		union ibv_gid mg = {.raw = {0xff, 0x0e, [15] = 1}};
		R("attach_mcast UD", ibv_attach_mcast(u, &mg, 0));
		R("attach_mcast UD twice", ibv_attach_mcast(u, &mg, 0));
		R("detach_mcast UD", ibv_detach_mcast(u, &mg, 0));
		R("detach_mcast UD again", ibv_detach_mcast(u, &mg, 0));
		R("attach_mcast RC", ibv_attach_mcast(peer, &mg, 0));
		R("attach_mcast UD non-mcast gid", ibv_attach_mcast(u, &gid1, 0));
	}
	/* SRQ */
	{
		struct ibv_srq_init_attr sa = {
		    .attr = {.max_wr = 10, .max_sge = 2, .srq_limit = 0}};
		errno = 0;
		struct ibv_srq *s = ibv_create_srq(pd, &sa);
		printf("create_srq 10/2 -> %s errno=%d max_wr=%u max_sge=%u handle=%u\n",
		       s ? "OK" : "NULL", s ? 0 : errno, sa.attr.max_wr, sa.attr.max_sge,
		       s ? s->handle : 0);
		struct ibv_srq_attr qa;
		memset(&qa, 0x55, sizeof(qa));
		R("query_srq", ibv_query_srq(s, &qa));
		printf("  max_wr=%u max_sge=%u limit=%u\n", qa.max_wr, qa.max_sge, qa.srq_limit);
		struct ibv_srq_init_attr sb = {.attr = {.max_wr = 1048577, .max_sge = 1}};
		errno = 0;
		struct ibv_srq *s2 = ibv_create_srq(pd, &sb);
		printf("create_srq max_wr 1048577 -> %s errno=%d\n", s2 ? "OK" : "NULL", errno);
		if (s2)
			ibv_destroy_srq(s2);
		sb.attr.max_wr = 4;
		sb.attr.max_sge = 28;
		errno = 0;
		s2 = ibv_create_srq(pd, &sb);
		printf("create_srq sge 28 -> %s errno=%d\n", s2 ? "OK" : "NULL", errno);
		if (s2)
			ibv_destroy_srq(s2);
		sb.attr.max_wr = 0;
		sb.attr.max_sge = 1;
		errno = 0;
		s2 = ibv_create_srq(pd, &sb);
		printf("create_srq max_wr 0 -> %s errno=%d max_wr=%u\n", s2 ? "OK" : "NULL", errno,
		       sb.attr.max_wr);
		if (s2)
			ibv_destroy_srq(s2);
		sb.attr.max_wr = 4;
		sb.attr.max_sge = 0;
		errno = 0;
		s2 = ibv_create_srq(pd, &sb);
		printf("create_srq max_sge 0 -> %s errno=%d max_sge=%u\n", s2 ? "OK" : "NULL",
		       errno, sb.attr.max_sge);
		if (s2)
			ibv_destroy_srq(s2);
		sb.attr.max_wr = 4;
		sb.attr.max_sge = 1;
		sb.attr.srq_limit = 5;
		errno = 0;
		s2 = ibv_create_srq(pd, &sb);
		printf("create_srq limit 5 > max_wr 4 -> %s errno=%d\n", s2 ? "OK" : "NULL", errno);
		if (s2)
			ibv_destroy_srq(s2);
		qa.srq_limit = 5;
		R("modify_srq LIMIT 5", ibv_modify_srq(s, &qa, IBV_SRQ_LIMIT));
		qa.srq_limit = 100;
		R("modify_srq LIMIT 100 > max_wr", ibv_modify_srq(s, &qa, IBV_SRQ_LIMIT));
		qa.max_wr = 20;
		R("modify_srq MAX_WR 20", ibv_modify_srq(s, &qa, IBV_SRQ_MAX_WR));
		qa.max_wr = 2;
		R("modify_srq MAX_WR 2", ibv_modify_srq(s, &qa, IBV_SRQ_MAX_WR));
		memset(&qa, 0x55, sizeof(qa));
		R("query_srq", ibv_query_srq(s, &qa));
		printf("  max_wr=%u max_sge=%u limit=%u\n", qa.max_wr, qa.max_sge, qa.srq_limit);
		struct ibv_qp *sq = mkqp("RC with srq 8/8/1/1", IBV_QPT_RC, 8, 8, 1, 1, 0, s);
		if (sq)
			pq("srq qp", sq);
		struct ibv_qp *sq2 = mkqp("RC with srq rw 0 rs 0", IBV_QPT_RC, 8, 0, 1, 0, 0, s);
		struct ibv_qp *sq3 = mkqp("RC with srq rs 40", IBV_QPT_RC, 8, 2000000, 1, 40, 0, s);
		if (sq)
			posts("with srq (RESET)", sq);
		R("destroy_srq with QP", ibv_destroy_srq(s));
		R("destroy_cq with QP", ibv_destroy_cq(cq));
		R("dealloc_pd with QP", ibv_dealloc_pd(pd));
		if (sq)
			ibv_destroy_qp(sq);
		if (sq2)
			ibv_destroy_qp(sq2);
		if (sq3)
			ibv_destroy_qp(sq3);
		{
			static char buf[64];
			struct ibv_sge sg = {(uintptr_t)buf, 8, 0};
			struct ibv_recv_wr rw = {.wr_id = 2, .sg_list = &sg, .num_sge = 1},
					   *br = NULL;
			for (int i = 0; i < 5; i++) {
				errno = 0;
				int rc = ibv_post_srq_recv(s, &rw, &br);
				printf("post_srq_recv #%d -> %d errno=%d\n", i, rc, errno);
			}
			rw.num_sge = 3;
			errno = 0;
			int rc = ibv_post_srq_recv(s, &rw, &br);
			printf("post_srq_recv num_sge 3 -> %d errno=%d\n", rc, errno);
		}
		R("destroy_srq", ibv_destroy_srq(s));
	}
	/* post checks in RTS */
	{
		struct ibv_qp *p2 = mkqp("posts", IBV_QPT_RC, 2, 2, 1, 1, 16, NULL);
		struct ibv_qp_attr z;
		init_rc(&z);
		mod("p2 INIT", p2, &z,
		    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		static char buf[256];
		struct ibv_sge sg[3] = {
		    {(uintptr_t)buf, 8, 0}, {(uintptr_t)buf, 8, 0}, {(uintptr_t)buf, 8, 0}};
		struct ibv_recv_wr rw = {.wr_id = 2, .sg_list = sg, .num_sge = 2}, *br = NULL;
		int rc;
		errno = 0;
		rc = ibv_post_recv(p2, &rw, &br);
		printf("post_recv num_sge 2 > 1 -> %d errno=%d bad=%s\n", rc, errno,
		       br ? "wr" : "NULL");
		rw.num_sge = 1;
		for (int i = 0; i < 4; i++) {
			br = NULL;
			errno = 0;
			rc = ibv_post_recv(p2, &rw, &br);
			printf("post_recv INIT #%d -> %d errno=%d bad=%s\n", i, rc, errno,
			       br ? "wr" : "NULL");
		}
		rtr_rc(&z, peer->qp_num);
		mod("p2 RTR", p2, &z, RTR_MASK);
		rts_rc(&z);
		mod("p2 RTS", p2, &z, RTS_MASK);
		struct ibv_send_wr sw = {.wr_id = 1,
					 .sg_list = sg,
					 .num_sge = 2,
					 .opcode = IBV_WR_SEND},
				   *bs = NULL;
		errno = 0;
		rc = ibv_post_send(p2, &sw, &bs);
		printf("post_send RTS num_sge 2 -> %d errno=%d bad=%s\n", rc, errno,
		       bs ? "wr" : "NULL");
		sw.num_sge = 1;
		sg[0].length = 17;
		sw.send_flags = IBV_SEND_INLINE;
		bs = NULL;
		errno = 0;
		rc = ibv_post_send(p2, &sw, &bs);
		printf("post_send RTS inline 17 > 16 -> %d errno=%d bad=%s\n", rc, errno,
		       bs ? "wr" : "NULL");
		sw.send_flags = 0;
		sw.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		sw.wr.atomic.remote_addr = 4;
		sg[0].length = 8;
		bs = NULL;
		errno = 0;
		rc = ibv_post_send(p2, &sw, &bs);
		printf("post_send RTS atomic unaligned -> %d errno=%d bad=%s\n", rc, errno,
		       bs ? "wr" : "NULL");
		sw.opcode = 77;
		bs = NULL;
		errno = 0;
		rc = ibv_post_send(p2, &sw, &bs);
		printf("post_send RTS opcode 77 -> %d errno=%d bad=%s\n", rc, errno,
		       bs ? "wr" : "NULL");
		sw.opcode = IBV_WR_SEND;
		sg[0].length = 0;
		for (int i = 0; i < 4; i++) {
			bs = NULL;
			errno = 0;
			rc = ibv_post_send(p2, &sw, &bs);
			printf("post_send RTS #%d -> %d errno=%d bad=%s\n", i, rc, errno,
			       bs ? "wr" : "NULL");
		}
		usleep(100000);
		{
			struct ibv_wc wc[8];
			int n = ibv_poll_cq(cq, 8, wc);
			printf("poll after sends -> %d", n);
			for (int i = 0; i < n; i++)
				printf(" [id=%lu st=%d op=%d qp=%u]", (unsigned long)wc[i].wr_id,
				       wc[i].status, wc[i].opcode, wc[i].qp_num);
			printf("\n");
		}
		ibv_destroy_qp(p2);
	}
	R("destroy_qp u", ibv_destroy_qp(u));
	R("destroy_qp q", ibv_destroy_qp(q));
	R("destroy_qp peer", ibv_destroy_qp(peer));
	R("destroy_cq", ibv_destroy_cq(cq));
	R("destroy_comp_channel", ibv_destroy_comp_channel(ch));
	R("dealloc_pd", ibv_dealloc_pd(pd));
	ibv_close_device(ctx);
	return 0;
}
