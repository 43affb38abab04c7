/* The data path's side of a QP's life: creation registers what its timers do when they
 * fire (the requester's RNR wait, the completer's retransmission timeout), and modify_qp's
 * state changes reach the engines (reset clears them, RTR makes the device receive, ERR
 * flushes). Above the requester and the completer, which never call it. Engine lock held
 * (emu/verbs/datapath.h). */
#include "config.h"

#include "emu/verbs/datapath.h"

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

void emu_dp_qp_init(struct emu_vqp *q)
{
	emu_list_init(&q->sq.list);
	emu_list_init(&q->rq.list);
	emu_timer_init(&q->dp.retry, retry_fire, q);
	emu_timer_init(&q->dp.rnr, rnr_fire, q);
}

/* Whether a WQE of the send queue is still to be sent or acknowledged. */
static bool emu_dp_sq_busy(const struct emu_vqp *q)
{
	for (const struct emu_list *l = q->sq.list.next; l != &q->sq.list; l = l->next) {
		const struct emu_swqe *w = emu_list_entry(l, struct emu_swqe, link);

		if (w->state == EMU_WQE_POSTED || w->state == EMU_WQE_PENDING)
			return true;
	}
	return false;
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
	case IBV_QPS_SQD:
		/* rxe's requester finds the send queue drained and reports it whether or not
		 * en_sqd_async_notify was asked for (measured, verbs_probe_limits "in SQD") */
		if (old != IBV_QPS_SQD && !emu_dp_sq_busy(q))
			emu_verbs_post_async_event(q->qp.context, IBV_EVENT_SQ_DRAINED,
						   (uintptr_t)&q->qp);
		break;
	default:
		break;
	}
}
