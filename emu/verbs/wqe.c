/* Work queues of the data path: the entries of a QP's send and receive queues (and an
 * SRQ's), from per-QP pools; what posting stores in them (copies of the WRs, inline data
 * copied at post time, as rxe's provider does, emu/verbs/post.c); the responder's take of the
 * next receive WQE with the SRQ's limit event; SGE scatter/gather with rxe's copy_data()
 * checks. Engine lock held throughout (emu/verbs/datapath.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"
#include "util/failcall.h"

static const char *const wqe_state_names[] = {
	[EMU_WQE_POSTED] = "POSTED",
	[EMU_WQE_PENDING] = "PENDING",
	[EMU_WQE_DONE] = "DONE",
	[EMU_WQE_ERROR] = "ERROR",
};

const char *emu_wqe_state_name(enum emu_wqe_state s)
{
	return (unsigned)s < sizeof(wqe_state_names) / sizeof(*wqe_state_names) ?
		       wqe_state_names[s] : "?";
}

void emu_dp_rwqe_list_free(struct emu_list *l)
{
	while (!emu_list_empty(l)) {
		struct emu_list *n = l->next;

		emu_list_del(n);
		free(emu_list_entry(n, struct emu_rwqe, link));
	}
}

uint64_t emu_dp_fast_epoch = 1; /* a QP's fast_epoch starts at 0: looked up at first use */

static void swqe_size_set(struct emu_vqp *q)
{
	if (!q->dp.swqe_size)
		q->dp.swqe_size = sizeof(struct emu_swqe) + q->sq.max_sge * sizeof(struct ibv_sge) +
				  q->sq.max_inline;
}

static size_t rwqe_size(const struct emu_vqp *q)
{
	return sizeof(struct emu_rwqe) + q->rq.max_sge * sizeof(struct ibv_sge);
}

/* rxe allocates a QP's queues when the QP is created (rxe_queue_init), so posting never
 * asks for memory: the pools get one entry per usable WR of each queue here, and a
 * failure is the create's ENOMEM. A receive queue of an SRQ takes the SRQ's WQEs. */
int emu_dp_pools_fill(struct emu_vqp *q)
{
	swqe_size_set(q);
	for (uint32_t i = 0; i < q->sq.max_wr; i++) {
		struct emu_swqe *w = emu_malloc(q->dp.swqe_size);

		if (!w)
			return -ENOMEM;
		*(struct emu_swqe **)w = q->dp.swqe_pool;
		q->dp.swqe_pool = w;
	}
	for (uint32_t i = 0; !q->srq && i < q->rq.max_wr; i++) {
		struct emu_rwqe *w = emu_malloc(rwqe_size(q));

		if (!w)
			return -ENOMEM;
		emu_dp_rwqe_recycle(q, w);
	}
	return 0;
}

void emu_dp_pools_free(struct emu_vqp *q)
{
	while (q->dp.rwqe_pool) {
		struct emu_rwqe *w = q->dp.rwqe_pool;

		q->dp.rwqe_pool = *(struct emu_rwqe **)w;
		free(w);
	}
	while (q->dp.swqe_pool) {
		struct emu_swqe *w = q->dp.swqe_pool;

		q->dp.swqe_pool = *(struct emu_swqe **)w;
		free(w);
	}
}

struct emu_swqe *emu_dp_swqe_alloc(struct emu_vqp *q, size_t extra)
{
	struct emu_swqe *w;

	swqe_size_set(q);
	if (sizeof(*w) + extra > q->dp.swqe_size) {
		w = emu_calloc(1, sizeof(*w) + extra);
		return w;
	}
	w = q->dp.swqe_pool;
	if (w)
		q->dp.swqe_pool = *(struct emu_swqe **)w;
	else if (!(w = emu_malloc(q->dp.swqe_size)))
		return NULL;
	memset(w, 0, sizeof(*w)); /* the SGEs and inline bytes are written by the caller */
	w->pooled = true;
	return w;
}

void emu_dp_swqe_free(struct emu_vqp *q, struct emu_swqe *w)
{
	if (!w->pooled) {
		free(w);
		return;
	}
	*(struct emu_swqe **)w = q->dp.swqe_pool;
	q->dp.swqe_pool = w;
}

struct emu_rwqe *emu_dp_rwqe_alloc(struct emu_vqp *q)
{
	struct emu_rwqe *w = q->dp.rwqe_pool;

	if (w) {
		q->dp.rwqe_pool = *(struct emu_rwqe **)w;
		return w;
	}
	return emu_malloc(rwqe_size(q));
}

void emu_dp_rwqe_recycle(struct emu_vqp *q, struct emu_rwqe *w)
{
	*(struct emu_rwqe **)w = q->dp.rwqe_pool;
	q->dp.rwqe_pool = w;
}

struct emu_rwqe *emu_dp_rwqe_fill(struct emu_rwqe *w, const struct ibv_recv_wr *wr)
{
	if (!w)
		return NULL;
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->length = 0;
	for (int i = 0; i < wr->num_sge; i++) {
		w->sge[i] = wr->sg_list[i];
		w->length += wr->sg_list[i].length;
	}
	/* rxe's provider sums the lengths into 32 bits: two SGEs of 2^31 make a 0-byte WQE
	 * (measured, verbs_probe_limits "rc send 100 into 2x2^31") */
	w->length = (uint32_t)w->length;
	return w;
}

/* After the responder took a receive WQE (the engine lock held): when fewer than srq_limit
 * WQEs are left, the limit disarms (query then reports 0) and one async event goes out, as in
 * get_srq_wqe(), which tests count < srq->limit after advancing the consumer index. */
static void srq_wqe_taken(struct emu_vsrq *s)
{
	bool fire = false;

	pthread_mutex_lock(&s->lock);
	if (s->limit && s->count < s->limit) {
		s->limit = 0;
		fire = true;
	}
	pthread_mutex_unlock(&s->lock);
	if (fire) {
		emu_dp_trace("srq %u: %u WQEs left: SRQ_LIMIT_REACHED, limit disarmed",
			     s->srq.handle, s->count);
		emu_verbs_post_async_event(s->srq.context, IBV_EVENT_SRQ_LIMIT_REACHED,
					   (uintptr_t)&s->srq);
	}
}

/* Puts a receive WQE back at the head of its queue (the next message takes it again). */
void emu_dp_rq_put_back(struct emu_vqp *q, struct emu_rwqe *w)
{
	emu_list_add_tail((q->srq ? &q->srq->rq : &q->rq.list)->next, &w->link);
	if (q->srq)
		q->srq->count++;
	else
		q->rq.count++;
}

/* The head of q's receive queue, or of its SRQ with the limit check (rxe's get_srq_wqe). */
struct emu_rwqe *emu_dp_rq_take(struct emu_vqp *q)
{
	struct emu_list *l = q->srq ? &q->srq->rq : &q->rq.list;
	struct emu_rwqe *w;

	if (emu_list_empty(l))
		return NULL;
	w = emu_list_entry(l->next, struct emu_rwqe, link);
	emu_list_del(&w->link);
	if (q->srq) {
		q->srq->count--;
		srq_wqe_taken(q->srq);
	} else
		q->rq.count--;
	return w;
}

enum emu_mr_status emu_dp_copy_sge(struct emu_vqp *q, const struct ibv_sge *sge, int n,
				   uint64_t off, void *buf, uint64_t len, bool to_sge)
{
	uint8_t *b = buf;

	for (int i = 0; i < n && len; i++) {
		uint64_t take;
		void *host;
		enum emu_mr_status st;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		take = sge[i].length - off;
		if (take > len)
			take = len;
		st = emu_hca_mr_check(emu_dp_hca(q), q->pd, sge[i].lkey, false, sge[i].addr + off,
				      take, to_sge ? EMU_ACCESS_LOCAL_WRITE : 0, &host);
		if (st != EMU_MR_OK)
			return st;
		if (b) { /* NULL: the checks only */
			if (to_sge)
				memcpy(host, b, take);
			else
				memcpy(b, host, take);
			b += take;
		}
		len -= take;
		off = 0;
	}
	return EMU_MR_OK;
}

/* The responder's receive CQE (resp.c's recv_wc for a success) and the WQE freed. */
void emu_dp_fast_recv_wc(struct emu_vqp *b, struct emu_rwqe *rw, int opcode, uint32_t len,
			 const struct emu_swqe *w)
{
	bool imm = w->wr.opcode == IBV_WR_SEND_WITH_IMM ||
		   w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = rw->wr_id;
	wc.status = IBV_WC_SUCCESS;
	wc.qp_num = b->qp.qp_num;
	wc.opcode = opcode;
	wc.byte_len = len;
	wc.wc_flags = IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0);
	wc.imm_data = imm ? w->wr.imm_data : 0;
	/* the Solicited Event bit of the last packet (req_wqe) */
	emu_cq_push(b->recv_cq, &wc,
		    w->wr.send_flags & IBV_SEND_SOLICITED && w->wr.opcode != IBV_WR_RDMA_WRITE);
	emu_list_del(&rw->link);
	b->rq.count--;
	emu_dp_rwqe_recycle(b, rw); /* b has no SRQ: rw came from emu_dp_rwqe_alloc(b) */
}

