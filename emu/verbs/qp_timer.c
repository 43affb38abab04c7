/* A QP's requester timers (rxe's retrans_timer and rnr_nak_timer): the retransmission timer
 * armed and restarted, and both cancelled (an RNR wait begins, the queues are emptied). What
 * their expiry does is the completer's and the requester's, registered with the timers when
 * the QP is made (emu/verbs/qp_dp.c). Engine lock held (emu/verbs/datapath.h). */
#include "config.h"

#include "emu/verbs/datapath.h"

void emu_dp_retry_arm(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	if (!e || !q->attr.timeout || q->dp.retry_armed)
		return;
	/* local ACK timeout: 4.096 us * 2^timeout (IBTA 9.7.6.1.3); 0: none, as rxe */
	emu_timer_arm_in(emu_engine_clock(e), &q->dp.retry, 4096ull << q->attr.timeout);
	q->dp.retry_armed = true;
}

void emu_dp_retry_restart(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	/* rxe mod_timer()s the retransmission timer at every request it sends and at every
	 * ACK that makes progress: the timeout counts from the last sign of life */
	if (!e || !q->attr.timeout)
		return;
	if (q->dp.retry_armed)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.retry);
	q->dp.retry_armed = false;
	emu_dp_retry_arm(q);
}

void emu_dp_retry_cancel(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	if (q->dp.retry_armed && e)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.retry);
	q->dp.retry_armed = false;
	if (q->dp.rnr_armed && e)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.rnr);
	q->dp.rnr_armed = false;
}
