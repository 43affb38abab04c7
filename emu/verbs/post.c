/* Validation and queueing of posted WRs, as rdma-core 44's rxe provider + the kernel answer
 * (measured, probes/VM-CHECKS.md). The return values are positive errnos, errno untouched,
 * *bad set to the failing WR (NULL when the whole list went in):
 *   post_recv: RESET (or a QP with an SRQ) -> EINVAL, bad NULL (the provider clears it first);
 *              num_sge > max_sge -> EINVAL; queue full -> ENOMEM
 *   post_send: num_sge > max_sge, inline > max_inline, an atomic under 8 bytes or
 *              unaligned -> EINVAL; queue full -> ENOMEM; then in RESET/INIT/RTR EINVAL
 *              whatever came before (the kernel refuses the doorbell: errno EINVAL; *bad as
 *              the provider left it; the WRs stay queued and run at the next doorbell in
 *              RTS). rxe does not check the opcode against the QP type here.
 *   BIND_MW: any SGE, data or imm_data, or a QP other than RC / UC -> EINVAL (the provider's
 *              validate_send_wr); the window's key and the MR's lkey are taken at post time.
 * READ, atomics or SEND_WITH_INV on UC, anything but SEND / SEND_WITH_IMM on UD are queued
 * and fail at execution with IBV_WC_LOC_QP_OP_ERR, as on rxe (verbs_probe_limits). Opcodes no
 * QP type executes here (TSO, the driver's, unknown values) are refused with EINVAL, *bad the
 * WR: a deviation from rxe, which queues them, so that no post is accepted without a
 * completion. WRs are copied into the queues (emu/verbs/wqe.c); the engine lock is held. */
#include "config.h"

#include <errno.h>

#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"
#include "util/failcall.h"

static struct emu_rwqe *rwqe_new(const struct ibv_recv_wr *wr)
{
	struct emu_rwqe *w = emu_malloc(sizeof(*w) + (size_t)wr->num_sge * sizeof(struct ibv_sge));

	return w ? emu_dp_rwqe_fill(w, wr) : NULL;
}

int emu_qp_post_recv(struct emu_vqp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int err = 0;

	*bad = NULL; /* rdma-core's rxe_post_recv clears it before any check */
	if (q->srq)
		return EINVAL; /* rxe: a QP with an SRQ has no receive queue */
	if (q->qp.state == IBV_QPS_RESET)
		return EINVAL;
	for (; wr; wr = wr->next) {
		if (q->rq.count == q->rq.max_wr)
			err = ENOMEM;
		else if ((uint32_t)wr->num_sge > q->rq.max_sge)
			err = EINVAL;
		struct emu_rwqe *w = err ? NULL : emu_dp_rwqe_fill(emu_dp_rwqe_alloc(q), wr);

		if (!err && !w)
			err = ENOMEM;
		if (err) {
			*bad = wr;
			break;
		}
		emu_list_add_tail(&q->rq.list, &w->link);
		q->rq.count++;
	}
	return err;
}

int emu_srq_post_recv(struct emu_vsrq *s, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int err = 0;

	*bad = NULL;

	for (; wr; wr = wr->next) {
		if (s->count == s->max_wr)
			err = ENOMEM;
		else if ((uint32_t)wr->num_sge > s->max_sge)
			err = EINVAL;
		struct emu_rwqe *w = err ? NULL : rwqe_new(wr);

		if (!err && !w)
			err = ENOMEM;
		if (err) {
			*bad = wr;
			break;
		}
		emu_list_add_tail(&s->rq, &w->link);
		s->count++;
	}

	return err;
}

static int send_wr_chk(struct emu_vqp *q, const struct ibv_send_wr *wr)
{
	uint64_t len = 0;

	if ((uint32_t)wr->num_sge > q->sq.max_sge)
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if ((wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) &&
	    (len < 8 || wr->wr.atomic.remote_addr & 7))
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE && len > q->sq.max_inline)
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW) { /* the provider's validate_send_wr */
		if (len || wr->num_sge || wr->imm_data)
			return EINVAL;
		if (q->qp.qp_type != IBV_QPT_RC && q->qp.qp_type != IBV_QPT_UC)
			return EINVAL; /* measured on UD */
		if (!wr->bind_mw.mw)
			return EINVAL; /* the provider dereferences it */
	}
	if (q->qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL; /* the rxe provider dereferences it (a segfault on the VM) */
	/* Deviation from rxe (which queues any opcode and fails it at execution): what this
	 * data path does not execute is refused here, never accepted without a completion. */
	switch (q->qp.qp_type) {
	case IBV_QPT_RC:
		if (!emu_dp_opcode_ok(IBV_QPT_RC, wr->opcode))
			return EINVAL;
		/* READ and atomics write into the SGEs: inline data means nothing there */
		if ((wr->opcode == IBV_WR_RDMA_READ || emu_wr_is_atomic(wr->opcode)) &&
		    wr->send_flags & IBV_SEND_INLINE)
			return EINVAL;
		break;
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		/* an opcode RC has but this QP type has not is queued like rxe does; the
		 * requester fails it with LOC_QP_OP_ERR (emu_dp_opcode_ok, req.c) */
		if (!emu_dp_opcode_ok(IBV_QPT_RC, wr->opcode))
			return EINVAL;
		break;
	default:
		return EINVAL; /* no other QP types are created */
	}
	return 0;
}

static struct emu_swqe *swqe_new(struct emu_vqp *q, const struct ibv_send_wr *wr)
{
	bool inl = wr->send_flags & IBV_SEND_INLINE;
	uint64_t len = 0;
	struct emu_swqe *w;

	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	w = emu_dp_swqe_alloc(q, (size_t)wr->num_sge * sizeof(struct ibv_sge) + (inl ? len : 0));
	if (!w)
		return NULL;
	w->wr = *wr;
	w->wr.next = NULL;
	w->wr.sg_list = w->sge;
	w->length = len;
	w->inl = (uint8_t *)&w->sge[wr->num_sge];
	for (int i = 0; i < wr->num_sge; i++)
		w->sge[i] = wr->sg_list[i];
	if (inl) { /* copied at post time, from the application's addresses (no lkey) */
		uint8_t *p = w->inl;

		w->is_inline = true;
		for (int i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length)
				memcpy(p, (const void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
	}
	if (q->qp.qp_type == IBV_QPT_UD) {
		struct emu_vah *ah = container_of(wr->wr.ud.ah, struct emu_vah, ah);

		w->av = ah->av;
		w->ud_dqpn = wr->wr.ud.remote_qpn & EMU_QPN_MASK;
		/* a Q_Key with the high bit set means the QP's own (IBTA 10.2.5) */
		w->ud_qkey = wr->wr.ud.remote_qkey & 0x80000000u ? q->attr.qkey :
								    wr->wr.ud.remote_qkey;
	}
	if (wr->opcode == IBV_WR_BIND_MW) {
		w->mw_rkey = wr->bind_mw.mw->rkey;
		w->mr_lkey = wr->bind_mw.bind_info.mr ? wr->bind_mw.bind_info.mr->lkey : 0;
	}
	w->state = EMU_WQE_POSTED;
	return w;
}

int emu_qp_post_send_check(struct emu_vqp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	int err = 0;

	*bad = NULL;
	for (; wr; wr = wr->next) {
		err = send_wr_chk(q, wr);
		if (!err && q->sq.count == q->sq.max_wr)
			err = ENOMEM;
		struct emu_swqe *w = err ? NULL : swqe_new(q, wr);

		if (!err && !w)
			err = ENOMEM;
		if (err) {
			*bad = wr;
			break;
		}
		emu_list_add_tail(&q->sq.list, &w->link);
		q->sq.count++;
	}
	if (q->attr.qp_state == IBV_QPS_RESET || q->attr.qp_state == IBV_QPS_INIT ||
	    q->attr.qp_state == IBV_QPS_RTR)
		errno = err = EINVAL; /* kernel rxe_post_send: req.state < QP_STATE_READY; the
				       * provider rings the doorbell after a refused WR too and
				       * returns the write()'s error before its own (ENOMEM) */
	return err;
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
	bool short_lock = false;
	int err;

	/* a posted receive changes nothing a waiter or a timer depends on: in real time the
	 * short lock (no clock read), which ib_send_lat's round trip takes on both sides */
	if (e)
		short_lock = emu_engine_lock_short(e);
	/* no flush: in ERR rxe's provider only writes the queue; nothing completes these WRs
	 * (measured, verbs_probe_limits "rc recv in ERR") */
	err = emu_qp_post_recv(q, wr, bad);
	if (e)
		emu_engine_unlock_short(e, short_lock);
	return err;
}

int emu_dp_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct emu_engine *e = emu_dp_engine();
	bool short_lock = false;
	int err;

	if (e)
		short_lock = emu_engine_lock_short(e);
	err = emu_srq_post_recv(to_vsrq(srq), wr, bad);
	if (e)
		emu_engine_unlock_short(e, short_lock);
	return err;
}
