/* Validation and queueing of posted WRs, as rdma-core 44's rxe provider + the kernel answer
 * (measured, emu/verbs/VM-CHECKS.md). The return values are positive errnos, errno untouched,
 * *bad set to the failing WR (NULL when the whole list went in):
 *   post_recv: RESET -> EINVAL (bad untouched: the provider checks the cached state first);
 *              num_sge > max_sge -> EINVAL; queue full -> ENOMEM
 *   post_send: RESET/INIT/RTR -> EINVAL after queueing (the kernel refuses the doorbell, bad
 *              NULL); num_sge > max_sge, inline > max_inline, an atomic under 8 bytes or
 *              unaligned -> EINVAL; queue full -> ENOMEM. rxe does not check the opcode here.
 * Nothing consumes the queues yet: ctx->ops.post_* stay EOPNOTSUPP until the data path runs
 * the WRs, so an application never sees a post accepted that will never complete. */
#include "config.h"

#include <errno.h>

#include "emu/verbs/objects.h"

int emu_qp_post_recv(struct emu_vqp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int err = 0;

	if (q->qp.state == IBV_QPS_RESET)
		return EINVAL;
	if (q->srq)
		return EINVAL; /* rxe: a QP with an SRQ has no receive queue */
	*bad = NULL;
	pthread_mutex_lock(&q->lock);
	for (; wr; wr = wr->next) {
		if (q->rq.count == q->rq.max_wr)
			err = ENOMEM;
		else if ((uint32_t)wr->num_sge > q->rq.max_sge)
			err = EINVAL;
		if (err) {
			*bad = wr;
			break;
		}
		q->rq.count++;
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}

int emu_srq_post_recv(struct emu_vsrq *s, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int err = 0;

	*bad = NULL;
	pthread_mutex_lock(&s->lock);
	for (; wr; wr = wr->next) {
		if (s->count == s->max_wr)
			err = ENOMEM;
		else if ((uint32_t)wr->num_sge > s->max_sge)
			err = EINVAL;
		if (err) {
			*bad = wr;
			break;
		}
		s->count++;
	}
	pthread_mutex_unlock(&s->lock);
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
	if (q->qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL; /* the rxe provider dereferences it (a segfault on the VM) */
	return 0;
}

int emu_qp_post_send_check(struct emu_vqp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	int err = 0;

	*bad = NULL;
	pthread_mutex_lock(&q->lock);
	for (; wr; wr = wr->next) {
		err = send_wr_chk(q, wr);
		if (!err && q->sq.count == q->sq.max_wr)
			err = ENOMEM;
		if (err) {
			*bad = wr;
			break;
		}
		q->sq.count++;
	}
	if (!err && (q->attr.qp_state == IBV_QPS_RESET || q->attr.qp_state == IBV_QPS_INIT ||
		     q->attr.qp_state == IBV_QPS_RTR))
		err = EINVAL; /* kernel rxe_post_send: req.state < QP_STATE_READY */
	pthread_mutex_unlock(&q->lock);
	return err;
}
