/* Queue pairs, control plane: ib_uverbs create/modify/query/destroy + rxe_qp.c (Linux 6.1) +
 * rdma-core 44's rxe provider, with the values measured in scripts/rxe-vm
 * (probes/VM-CHECKS.md). The QPN is the QP's pool index (rxe: 16.., the first taken by the
 * kernel's GSI QP). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/kmem.h"
#include "emu/verbs/datapath.h"

#define RXE_MAX_INLINE 512 /* RXE_MAX_WQE_SIZE - sizeof(struct rxe_send_wqe): 32 SGEs */
#define SGE_SIZE 16        /* sizeof(struct ib_sge) */

static void vqp_free(struct emu_vqp *q)
{
	while (q->mcast.next != &q->mcast) {
		struct emu_list *l = q->mcast.next;

		emu_list_del(l);
		free(emu_list_entry(l, struct emu_mcast_att, link));
	}
	emu_dp_qp_clear(q);
	emu_dp_pools_free(q);
	emu_wrx_free(q);
	pthread_mutex_destroy(&q->lock);
	pthread_mutex_destroy(&q->qp.mutex);
	pthread_cond_destroy(&q->qp.cond);
	emu_kmem_free(q);
}

static void vqp_destroy(struct emu_obj *obj)
{
	vqp_free(container_of(obj, struct emu_vqp, obj));
}

/* rxe_qp_chk_init + rxe_qp_chk_cap, and the caps rxe_qp_init_req/resp report. */
static int qp_chk_init(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	const struct emu_device_caps *c = &ctx_dev(ctx)->caps;

	switch (a->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		break;
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_RAW_PACKET:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
	/* rdma-core's rxe provider dereferences both CQs (a segfault on the VM): EINVAL here */
	if (!a->send_cq || !a->recv_cq)
		return EINVAL;
	if (a->cap.max_send_wr > c->max_qp_wr || a->cap.max_send_sge > c->max_sge)
		return EINVAL;
	if (!a->srq && (a->cap.max_recv_wr > c->max_qp_wr || a->cap.max_recv_sge > c->max_sge))
		return EINVAL;
	if (a->cap.max_inline_data > RXE_MAX_INLINE)
		return EINVAL;
	return 0;
}

static struct ibv_qp *qp_create(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct emu_vctx *vc = to_vctx(ctx);
	struct emu_vqp *q;
	uint32_t wqe;
	int err = qp_chk_init(ctx, a);

	if (err) {
		errno = err;
		return NULL;
	}
	/* kmem, as the kernel's QP and queues are slab memory: from malloc, each connection's QP
	 * grew and trimmed the thread's arena (an mprotect, i.e. a TLB shootdown, every ~128 KiB)
	 * and faulted its pages in; cmtime's server makes one per connection inside the step */
	q = emu_kmem_zalloc(sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	/* rxe_qp_init_req(): the send WQE holds max(sge * 16, inline) bytes, both reported */
	wqe = a->cap.max_send_sge * SGE_SIZE;
	if (a->cap.max_inline_data > wqe)
		wqe = a->cap.max_inline_data;
	a->cap.max_send_sge = wqe / SGE_SIZE;
	a->cap.max_inline_data = wqe;
	q->sq.max_wr = emu_queue_usable(a->cap.max_send_wr);
	q->sq.max_sge = a->cap.max_send_sge;
	q->sq.max_inline = wqe;
	if (!a->srq) {
		q->rq.max_wr = emu_queue_usable(a->cap.max_recv_wr);
		q->rq.max_sge = a->cap.max_recv_sge;
	}
	q->pd = &container_of(a->pd, struct emu_vpd, pd)->epd;
	q->send_cq = to_vcq(a->send_cq);
	q->recv_cq = to_vcq(a->recv_cq);
	q->srq = a->srq ? to_vsrq(a->srq) : NULL;
	q->obj.type = EMU_OBJ_QP;
	q->obj.destroy = vqp_destroy;
	q->obj.user = &q->qp;
	emu_list_init(&q->mcast);
	emu_dp_qp_init(q);
	if (emu_dp_pools_fill(q)) {
		emu_dp_pools_free(q);
		emu_kmem_free(q);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_add_locked(vc->hctx, &q->obj);
	if (!err) {
		q->pd->obj.usecnt++;
		q->send_cq->obj.usecnt++;
		q->recv_cq->obj.usecnt++;
		if (q->srq)
			q->srq->obj.usecnt++;
	}
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (err) {
		emu_dp_pools_free(q);
		emu_kmem_free(q);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	/* query_qp's init_attr: the rounded queue sizes; no receive queue with an SRQ */
	q->init.qp_context = a->qp_context;
	q->init.send_cq = a->send_cq;
	q->init.recv_cq = a->recv_cq;
	q->init.srq = a->srq;
	q->init.qp_type = a->qp_type;
	q->init.sq_sig_all = a->sq_sig_all;
	q->init.cap.max_send_wr = q->sq.max_wr;
	q->init.cap.max_send_sge = q->sq.max_sge;
	q->init.cap.max_inline_data = q->sq.max_inline;
	q->init.cap.max_recv_wr = q->rq.max_wr;
	q->init.cap.max_recv_sge = q->rq.max_sge;
	q->attr.cap = q->init.cap;
	q->attr.path_mtu = IBV_MTU_256; /* rxe's initial path MTU (query: mtu=1) */
	q->attr.ah_attr.is_global = 1;  /* rxe reports its AV as global (RoCE) */

	q->qp.context = ctx;
	q->qp.qp_context = a->qp_context;
	q->qp.pd = a->pd;
	q->qp.send_cq = a->send_cq;
	q->qp.recv_cq = a->recv_cq;
	q->qp.srq = a->srq;
	q->qp.handle = emu_verbs_handle_get(vc);
	q->qp.qp_num = q->obj.index;
	/* rxe_qp_init_req: the hash of the QPN, until an address vector says otherwise */
	q->sport = emu_roce_sport_rxe(q->qp.qp_num);
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_type = a->qp_type;
	pthread_mutex_init(&q->qp.mutex, NULL);
	pthread_cond_init(&q->qp.cond, NULL);
	return &q->qp;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a = { 0 };
	struct ibv_qp *qp;

	memcpy(&a, attr, sizeof(*attr));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	qp = qp_create(pd->context, &a);
	if (qp)
		attr->cap = a.cap;
	return qp;
}

/* rdma-core 44's rxe check_qp_init_attr(): comp_mask PD | CREATE_FLAGS | SEND_OPS_FLAGS, no
 * create flags, and per QP type the send ops rxe has (EOPNOTSUPP otherwise). A QP made here is
 * VERBS_QP_EX (ibv_qp_to_qp_ex); with SEND_OPS_FLAGS it gets the ibv_wr_* ops (wr_ex.c). */
enum {
	RXE_RC_SEND_OPS = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			  IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV |
			  IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV |
			  IBV_QP_EX_WITH_ATOMIC_WRITE,
	RXE_UC_SEND_OPS = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
			  IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
			  IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_SEND_WITH_INV,
	RXE_UD_SEND_OPS = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM,
};

static bool send_ops_ok(enum ibv_qp_type t, uint64_t flags)
{
	switch (t) {
	case IBV_QPT_RC:
		return !(flags & ~(uint64_t)RXE_RC_SEND_OPS);
	case IBV_QPT_UC:
		return !(flags & ~(uint64_t)RXE_UC_SEND_OPS);
	case IBV_QPT_UD:
		return !(flags & ~(uint64_t)RXE_UD_SEND_OPS);
	default:
		return false;
	}
}

struct ibv_qp *emu_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	bool ops = a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp *qp;
	int err;

	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
				       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
	    (a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS && a->create_flags) ||
	    (ops && !send_ops_ok(a->qp_type, a->send_ops_flags))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd) {
		errno = EINVAL;
		return NULL;
	}
	qp = qp_create(ctx, a);
	if (!qp)
		return NULL;
	to_vqp(qp)->qp_ex = true;
	if (ops) {
		err = emu_wrx_init(to_vqp(qp), a->send_ops_flags);
		if (err) {
			ibv_destroy_qp(qp);
			errno = err;
			return NULL;
		}
	}
	return qp;
}

static uint8_t rd_atomic_round(uint8_t v)
{
	unsigned r = 1;

	if (!v)
		return 0;
	while (r < v)
		r <<= 1;
	return (uint8_t)r; /* 256 wraps to 0, as rxe's u8 field does (measured: 200 -> 0) */
}

/* The checks of ib_uverbs_modify_qp and _ib_modify_qp that need no QP state, up to the
 * address vector. _ib_modify_qp resolves a RoCE destination's MAC for a connected QP when
 * the attributes come from user space (udata && IB_QP_AV && RoCE && RC/UC/XRC: "If the
 * user provided the qp_attr then we have to resolve it", Linux 6.1 verbs.c), before the
 * driver's checks: so a silent destination costs 1 s and ETIMEDOUT even when the state
 * change itself would be refused. Engine lock held, QP mutex not (the wait releases the
 * engine lock, and a receive callback may need the QP mutex meanwhile). */
static int qp_chk_av(struct emu_vqp *q, struct ibv_qp_attr *a, int mask, struct emu_av *av)
{
	struct ibv_context *ctx = q->qp.context;
	bool connected = q->qp.qp_type == IBV_QPT_RC || q->qp.qp_type == IBV_QPT_UC;

	if (mask & IBV_QP_PORT && !emu_verbs_port(ctx, a->port_num))
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE && a->cur_qp_state > IBV_QPS_ERR) ||
	    (mask & IBV_QP_STATE && a->qp_state > IBV_QPS_ERR))
		return EINVAL;
	if (mask & IBV_QP_AV)
		return emu_av_from_attr(ctx, &a->ah_attr, av, connected ? "ibv_modify_qp" : NULL);
	return 0;
}

/* The rest of the checks of _ib_modify_qp and rxe_qp_chk_attr, in that order. QP mutex held. */
static int qp_chk_attr(struct emu_vqp *q, struct ibv_qp_attr *a, int mask)
{
	struct ibv_context *ctx = q->qp.context;
	enum ibv_qp_state cur, next;

	cur = mask & IBV_QP_CUR_STATE ? a->cur_qp_state : q->attr.qp_state;
	next = mask & IBV_QP_STATE ? a->qp_state : cur;
	if (!emu_qp_modify_is_ok(cur, next, q->qp.qp_type, (unsigned)mask))
		return EINVAL;
	if (mask & IBV_QP_ALT_PATH && (!emu_verbs_port(ctx, a->alt_port_num) ||
				      a->alt_timeout > 31))
		return EINVAL;
	if (mask & IBV_QP_PATH_MTU && a->path_mtu > emu_verbs_port(ctx, q->attr.port_num ?
					q->attr.port_num : 1)->max_mtu)
		return EINVAL;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC && a->max_rd_atomic > ctx_dev(ctx)->caps.max_qp_rd_atom)
		return EINVAL;
	if (mask & IBV_QP_TIMEOUT && a->timeout > 31)
		return EINVAL;
	return 0;
}

/* rxe_qp_from_attr(): measured values are stored as given (retry_cnt and rnr_retry 8, path_mtu
 * 0, dest_qp_num >= 2^24 are accepted), PSNs masked to 24 bits, rd_atomic depths rounded up
 * to a power of two. */
static void qp_apply(struct emu_vqp *q, const struct ibv_qp_attr *a, int mask,
		     const struct emu_av *av)
{
	struct ibv_qp_attr *s = &q->attr;

	if (mask & IBV_QP_STATE)
		s->qp_state = a->qp_state;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		s->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & IBV_QP_ACCESS_FLAGS)
		s->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		s->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		s->port_num = a->port_num;
	if (mask & IBV_QP_QKEY)
		s->qkey = a->qkey;
	if (mask & IBV_QP_AV) {
		s->ah_attr = a->ah_attr;
		q->av = *av;
		/* rxe keeps a RoCE address vector as GRH + port only (rxe_av_to_attr), so
		 * query_qp reports SL, DLID, path bits and static rate as 0 (measured in the VM:
		 * SL 2 reads back as 0) */
		if (av->network != 0) {
			s->ah_attr.sl = 0;
			s->ah_attr.dlid = 0;
			s->ah_attr.src_path_bits = 0;
			s->ah_attr.static_rate = 0;
			/* ib_resolve_unicast_gid_dmac() wrote the route's hop limit into the
			 * attributes rxe copied (qp_chk_av) */
			s->ah_attr.grh.hop_limit = av->hop_limit;
		}
	}
	if (mask & IBV_QP_ALT_PATH) {
		s->alt_ah_attr = a->alt_ah_attr;
		s->alt_port_num = a->alt_port_num;
		s->alt_pkey_index = a->alt_pkey_index;
		s->alt_timeout = a->alt_timeout;
	}
	if (mask & IBV_QP_PATH_MTU)
		s->path_mtu = a->path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		s->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		s->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		s->rnr_retry = a->rnr_retry;
	/* rxe_qp_from_attr(): the PSNs go to the engines at once, whatever the state change;
	 * from then on query_qp reports the engines' live values (rxe_qp_to_attr) */
	if (mask & IBV_QP_RQ_PSN) {
		s->rq_psn = a->rq_psn & 0xffffff;
		q->dp.resp_psn = s->rq_psn;
	}
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		s->max_rd_atomic = rd_atomic_round(a->max_rd_atomic);
	if (mask & IBV_QP_MIN_RNR_TIMER)
		s->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_SQ_PSN) {
		s->sq_psn = a->sq_psn & 0xffffff;
		q->dp.req_psn = s->sq_psn;
	}
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		s->max_dest_rd_atomic = rd_atomic_round(a->max_dest_rd_atomic);
	if (mask & IBV_QP_PATH_MIG_STATE)
		s->path_mig_state = a->path_mig_state;
	if (mask & IBV_QP_DEST_QPN)
		s->dest_qp_num = a->dest_qp_num;
	/* rxe_modify_qp: a GRH address vector sets the UDP source port from its flow label, or
	 * from the QPN pair when the label is 0 (rdma_get_udp_sport; measured on Linux 6.1: an
	 * rdma_cm RC QP with flow label 0x60cc9 sends from port 0xccd1) */
	if ((mask & IBV_QP_AV) && a->ah_attr.is_global)
		q->sport = emu_roce_sport_flow(a->ah_attr.grh.flow_label, q->qp.qp_num,
					       s->dest_qp_num);
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct emu_vqp *q = to_vqp(qp);
	struct emu_engine *e = emu_dp_engine();
	enum ibv_qp_state old;
	struct emu_av av;
	int err;

	if (e)
		emu_engine_lock(e);
	if (attr_mask & IBV_QP_STATE) /* a held ACK leaves in the state that held it */
		emu_dp_ack_flush(q);
	err = qp_chk_av(q, attr, attr_mask, &av);
	pthread_mutex_lock(&q->lock);
	old = q->attr.qp_state;
	if (!err)
		err = qp_chk_attr(q, attr, attr_mask);
	if (!err)
		qp_apply(q, attr, attr_mask, &av);
	pthread_mutex_unlock(&q->lock);
	if (!err && attr_mask & IBV_QP_STATE) {
		qp->state = attr->qp_state;
		/* rxe_qp_reset() empties the queues; ERR flushes them; RTS starts the requester */
		emu_dp_qp_modified(q, old, attr->qp_state);
	}
	if (e)
		emu_engine_unlock(e);
	if (err) {
		errno = err;
		return err;
	}
	return 0;
}

/* Measured: cur_qp_state reads 0, en_sqd_async_notify is not written, the ah is global.
 * sq_psn / rq_psn are the requester's next PSN and the responder's ePSN as they are now
 * (rxe_qp_to_attr: req.psn, resp.psn), read under the engine lock that guards them: they
 * move with traffic, stay after an error and across RESET (measured, verbs_probe_mw). */
int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		 struct ibv_qp_init_attr *init_attr)
{
	struct emu_vqp *q = to_vqp(qp);
	struct emu_engine *e = emu_dp_engine();
	uint8_t sqd = attr->en_sqd_async_notify;

	(void)attr_mask;
	if (e)
		emu_engine_lock(e);
	pthread_mutex_lock(&q->lock);
	*attr = q->attr;
	attr->en_sqd_async_notify = sqd;
	attr->cur_qp_state = IBV_QPS_RESET;
	attr->sq_psn = q->dp.req_psn;
	attr->rq_psn = q->dp.resp_psn;
	*init_attr = q->init;
	pthread_mutex_unlock(&q->lock);
	if (e)
		emu_engine_unlock(e);
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct emu_vqp *q = to_vqp(qp);
	struct emu_vctx *vc = to_vctx(qp->context);
	struct emu_engine *e = emu_dp_engine();
	int err;

	if (e)
		emu_engine_lock(e); /* no packet for this QP is being handled meanwhile */
	emu_dp_ack_flush(q); /* the last message received is acknowledged, as it was at once */
	pthread_mutex_lock(emu_hca_lock(vc->hca));
	err = emu_hca_obj_remove_locked(&q->obj);
	if (!err) {
		q->pd->obj.usecnt--;
		q->send_cq->obj.usecnt--;
		q->recv_cq->obj.usecnt--;
		if (q->srq)
			q->srq->obj.usecnt--;
	}
	pthread_mutex_unlock(emu_hca_lock(vc->hca));
	if (!err)
		emu_dp_qp_clear(q);
	if (e)
		emu_engine_unlock(e);
	if (err) {
		errno = err;
		return err;
	}
	/* rdma-core waits for the acknowledgement of every async event reported on the QP */
	emu_verbs_handle_put(vc, qp->handle);
	vqp_free(q);
	return 0;
}

/* rxe has no IBV_QUERY_QP_DATA_IN_ORDER support: libibverbs answers 0 (not guaranteed). */
int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp, (void)op, (void)flags;
	return 0;
}
