/* Work queues of the data path: the send and receive queues of a QP (and an SRQ's), what
 * posting stores (copies of the WRs, inline data copied at post time, as rxe's provider
 * does), the flush of rxe_qp_error(), SGE scatter/gather with rxe's copy_data() checks, and
 * the trace. Engine lock held throughout (emu/verbs/datapath.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/sim/trace.h"
#include "emu/verbs/datapath.h"

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

bool emu_dp_trace_on(void)
{
	static int on = -1;

	return emu_trace_enabled(&on, "qp");
}

void emu_dp_trace_print(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emu_trace_vprint("", fmt, ap);
	va_end(ap);
}

struct emu_engine *emu_dp_engine(void)
{
	int saved = errno;
	struct emu_engine *e = emu_engine_get();

	errno = saved;
	return e;
}

static void retry_fire(struct emu_clock *clk, struct emu_timer *t, void *arg);
static void rnr_fire(struct emu_clock *clk, struct emu_timer *t, void *arg);

void emu_dp_qp_init(struct emu_vqp *q)
{
	emu_list_init(&q->sq.list);
	emu_list_init(&q->rq.list);
	emu_timer_init(&q->dp.retry, retry_fire, q);
	emu_timer_init(&q->dp.rnr, rnr_fire, q);
}

static void rnr_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct emu_vqp *q = arg;

	(void)clk, (void)t;
	q->dp.rnr_armed = false;
	emu_dp_trace("qp %u req: RNR wait over, resending", q->qp.qp_num);
	emu_dp_req_run(q);
}

static void retry_fire(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	(void)clk, (void)t;
	emu_dp_retry_timeout(arg); /* comp.c: go back N, or RETRY_EXC_ERR when none is left */
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

struct emu_swqe *emu_dp_swqe_alloc(struct emu_vqp *q, size_t extra)
{
	struct emu_swqe *w;

	if (!q->dp.swqe_size)
		q->dp.swqe_size = sizeof(*w) + q->sq.max_sge * sizeof(struct ibv_sge) +
				  q->sq.max_inline;
	if (sizeof(*w) + extra > q->dp.swqe_size) {
		w = calloc(1, sizeof(*w) + extra);
		return w;
	}
	w = q->dp.swqe_pool;
	if (w)
		q->dp.swqe_pool = *(struct emu_swqe **)w;
	else if (!(w = malloc(q->dp.swqe_size)))
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
	return malloc(sizeof(*w) + q->rq.max_sge * sizeof(struct ibv_sge));
}

void emu_dp_rwqe_recycle(struct emu_vqp *q, struct emu_rwqe *w)
{
	*(struct emu_rwqe **)w = q->dp.rwqe_pool;
	q->dp.rwqe_pool = w;
}

void emu_dp_qp_clear(struct emu_vqp *q)
{
	emu_dp_ack_drop(q);
	emu_dp_retry_cancel(q);
	__atomic_fetch_add(&emu_dp_fast_epoch, 1, __ATOMIC_RELAXED);
	q->dp.fast_peer = NULL;
	while (!emu_list_empty(&q->sq.list)) {
		struct emu_list *n = q->sq.list.next;

		emu_list_del(n);
		emu_dp_swqe_free(q, emu_list_entry(n, struct emu_swqe, link));
	}
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
	emu_dp_rwqe_list_free(&q->rq.list);
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
	while (!emu_list_empty(&q->sq.list)) {
		struct emu_list *n = q->sq.list.next;
		struct emu_swqe *w = emu_list_entry(n, struct emu_swqe, link);

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

void emu_dp_qp_modified(struct emu_vqp *q, enum ibv_qp_state old, enum ibv_qp_state st)
{
	if (old != st)
		emu_dp_trace("qp %u: %s --modify--> %s", q->qp.qp_num, emu_qp_state_name(old),
			     emu_qp_state_name(st));
	__atomic_fetch_add(&emu_dp_fast_epoch, 1, __ATOMIC_RELAXED); /* AV, QPN, MTU may change */
	switch (st) {
	case IBV_QPS_RESET:
		emu_dp_qp_clear(q);
		break;
	case IBV_QPS_RTR: {
		struct emu_engine *e = emu_dp_engine();

		if (e) /* from here on the QP receives: frames from the wire must reach it */
			emu_dp_port_rx_attach(e, ctx_dev(q->qp.context));
		if (old == IBV_QPS_INIT) { /* the ePSN came with the attributes (qp_apply) */
			q->dp.resp_msn = 0;
			q->dp.resp_nak_sent = false;
		}
		break;
	}
	case IBV_QPS_RTS:
		/* rxe: the requester runs at the next post_send's doorbell, not here (WRs the
		 * provider queued in RESET..RTR wait for it) */
		if (old == IBV_QPS_RTR) { /* the PSN came with the attributes (qp_apply) */
			q->dp.rnr_left = q->attr.rnr_retry;
			q->dp.retry_left = q->attr.retry_cnt;
		}
		break;
	case IBV_QPS_ERR:
		emu_dp_flush(q);
		break;
	default:
		break;
	}
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

/* ---- the ops behind ibv_post_send / ibv_post_recv / ibv_post_srq_recv ---- */

int emu_dp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct emu_engine *e = emu_dp_engine();
	struct emu_vqp *q = to_vqp(qp);
	int err, saved;

	if (e)
		emu_engine_lock(e);
	err = emu_qp_post_send_check(q, wr, bad);
	saved = errno; /* EINVAL from the refused doorbell (RESET..RTR), as the kernel's write() */
	if (q->attr.qp_state == IBV_QPS_RTS) {
		/* loopback with no observer: the whole batch at once (fast.c), else packets */
		if (!e || !emu_dp_fast_run(e, q))
			emu_dp_req_run(q);
	} else
		emu_dp_flush(q);
	if (e)
		emu_engine_unlock(e);
	errno = saved;
	return err;
}

int emu_dp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct emu_engine *e = emu_dp_engine();
	struct emu_vqp *q = to_vqp(qp);
	int err;

	if (e)
		emu_engine_lock(e);
	err = emu_qp_post_recv(q, wr, bad);
	emu_dp_flush(q);
	if (e)
		emu_engine_unlock(e);
	return err;
}

int emu_dp_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct emu_engine *e = emu_dp_engine();
	int err;

	if (e)
		emu_engine_lock(e);
	err = emu_srq_post_recv(to_vsrq(srq), wr, bad);
	if (e)
		emu_engine_unlock(e);
	return err;
}
