/* Emptying a QP's queues: rxe_qp_error() (the state to ERR, then every queued WQE completes
 * with IBV_WC_WR_FLUSH_ERR, the send queue's first, then a receive in progress, then the
 * receive queue), and the reset / destroy clear, which frees them without completions.
 * Engine lock held (emu/verbs/datapath.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"

void emu_dp_qp_clear(struct emu_vqp *q)
{
	emu_dp_ack_drop(q);
	emu_dp_retry_cancel(q);
	__atomic_fetch_add(&emu_dp_fast_epoch, 1, __ATOMIC_RELAXED);
	q->dp.fast_peer = NULL;
	q->dp.req_done = NULL;
	while (!emu_list_empty(&q->sq.list)) {
		struct emu_swqe *w = emu_list_entry(q->sq.list.next, struct emu_swqe, link);

		emu_list_del(&w->link);
		emu_xclaim_cancel(w);
		emu_dp_swqe_free(q, w);
	}
	while (!emu_list_empty(&q->rq.list)) {
		struct emu_list *n = q->rq.list.next;

		emu_list_del(n);
		emu_dp_rwqe_recycle(q, emu_list_entry(n, struct emu_rwqe, link));
	}
	free(q->dp.resp_wqe);
	q->dp.resp_wqe = NULL;
	q->sq.count = q->rq.count = 0;
	q->dp.rd_atomic_out = 0;
	q->dp.need_rd_atomic = false;
	q->dp.resp_drop = false;
	q->dp.resp_nak_sent = false;
	q->dp.retry_started = false;
	free(q->dp.res);
	q->dp.res = NULL;
	q->dp.nres = q->dp.res_next = 0;
}

static void flush_wc(struct emu_vcq *cq, uint64_t wr_id, uint32_t qpn)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = IBV_WC_WR_FLUSH_ERR;
	wc.qp_num = qpn;
	emu_cq_push(cq, &wc, false);
}

void emu_dp_flush(struct emu_vqp *q)
{
	if (q->attr.qp_state != IBV_QPS_ERR)
		return;
	emu_dp_retry_cancel(q);
	q->dp.rd_atomic_out = 0; /* every WQE that held a slot is flushed below */
	q->dp.need_rd_atomic = false;
	q->dp.req_done = NULL;
	while (!emu_list_empty(&q->sq.list)) {
		struct emu_list *n = q->sq.list.next;
		struct emu_swqe *w = emu_list_entry(n, struct emu_swqe, link);

		emu_xclaim_cancel(w); /* before its flush completion gives it back */
		flush_wc(q->send_cq, w->wr.wr_id, q->qp.qp_num);
		emu_list_del(n);
		q->sq.count--;
		emu_dp_swqe_free(q, w);
	}
	if (q->dp.resp_wqe) { /* a SEND in progress: rxe completes its WQE first */
		flush_wc(q->recv_cq, q->dp.resp_wqe->wr_id, q->qp.qp_num);
		free(q->dp.resp_wqe);
		q->dp.resp_wqe = NULL;
	}
	while (!emu_list_empty(&q->rq.list)) {
		struct emu_list *n = q->rq.list.next;
		struct emu_rwqe *w = emu_list_entry(n, struct emu_rwqe, link);

		flush_wc(q->recv_cq, w->wr_id, q->qp.qp_num);
		emu_list_del(n);
		q->rq.count--;
		free(w);
	}
}

void emu_dp_qp_error(struct emu_vqp *q)
{
	emu_dp_ack_flush(q); /* a message received before the error is acknowledged */
	if (q->attr.qp_state != IBV_QPS_ERR)
		emu_dp_trace("qp %u: %s --error--> ERR", q->qp.qp_num,
			     emu_qp_state_name(q->attr.qp_state));
	pthread_mutex_lock(&q->lock); /* query_qp reads the state under it */
	q->attr.qp_state = IBV_QPS_ERR;
	q->qp.state = IBV_QPS_ERR;
	pthread_mutex_unlock(&q->lock);
	emu_dp_flush(q);
}
