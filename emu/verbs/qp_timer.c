/* A QP's requester timers (rxe's retrans_timer and rnr_nak_timer): the retransmission timer
 * armed and restarted, and both cancelled (an RNR wait begins, the queues are emptied). What
 * their expiry does is the completer's and the requester's, registered with the timers when
 * the QP is made (emu/verbs/qp_dp.c). Engine lock held (emu/verbs/datapath.h). */
#include "config.h"

#include "emu/verbs/datapath.h"

/* local ACK timeout: 4.096 us * 2^timeout (IBTA 9.7.6.1.3); 0: none, as rxe */
static uint64_t retry_ns(const struct emu_vqp *q)
{
	return 4096ull << q->attr.timeout;
}

void emu_dp_retry_arm(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	if (!e || !q->attr.timeout || q->dp.retry_armed)
		return;
	emu_timer_arm_in(emu_engine_clock(e), &q->dp.retry, retry_ns(q));
	q->dp.retry_armed = true;
	q->dp.retry_due = 0;
}

void emu_dp_retry_restart(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	/* rxe mod_timer()s the retransmission timer at every request it sends and at every
	 * ACK that makes progress: the timeout counts from the last sign of life */
	if (!e || !q->attr.timeout)
		return;
	/* In real time, a running timer stays and the new deadline is noted: it fires at the
	 * old one and waits on (emu_dp_retry_due). Cancelling and arming it again at every ACK
	 * was ~500 instructions a message of ib_send_lat (callgrind). The timeout counts from
	 * the same instant; in virtual time the timer is re-armed exactly as before, so the
	 * clock's order of events stays what it was. */
	if (q->dp.retry_armed && emu_engine_is_realtime(e)) {
		q->dp.retry_due = emu_clock_now(emu_engine_clock(e)) + retry_ns(q);
		return;
	}
	if (q->dp.retry_armed)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.retry);
	q->dp.retry_armed = false;
	emu_dp_retry_arm(q);
}

bool emu_dp_retry_due(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();
	uint64_t now, due = q->dp.retry_due;

	q->dp.retry_due = 0;
	if (!e || !due)
		return true;
	now = emu_clock_now(emu_engine_clock(e));
	if (now >= due)
		return true;
	emu_timer_arm_in(emu_engine_clock(e), &q->dp.retry, due - now);
	q->dp.retry_armed = true;
	return false;
}

void emu_dp_retry_cancel(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	if (q->dp.retry_armed && e)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.retry);
	q->dp.retry_armed = false;
	q->dp.retry_due = 0;
	if (q->dp.rnr_armed && e)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.rnr);
	q->dp.rnr_armed = false;
}
