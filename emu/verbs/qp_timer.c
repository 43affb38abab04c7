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

/* In real time the timer is not cancelled and armed again at every ACK (rxe's mod_timer) nor
 * when nothing is outstanding: a pending timeout's deadline is noted in retry_due, and the
 * timer, whose own deadline is never later, waits on to it when it fires (emu_dp_retry_due).
 * Cancelling and arming it at every message was ~500 instructions a round trip of
 * ib_send_lat (callgrind). The timeout counts from the same instants. In virtual time the
 * timer is cancelled and armed as rxe does, so the clock's order of events is unchanged. */
static void timer_arm(struct emu_engine *e, struct emu_vqp *q, uint64_t ns)
{
	emu_timer_arm_in(emu_engine_clock(e), &q->dp.retry, ns);
	q->dp.retry_timer_on = true;
	q->dp.retry_due = 0;
}

static void timer_cancel(struct emu_engine *e, struct emu_vqp *q)
{
	if (q->dp.retry_timer_on && e)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.retry);
	q->dp.retry_timer_on = false;
	q->dp.retry_due = 0;
}

void emu_dp_retry_arm(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	if (!e || !q->attr.timeout || q->dp.retry_armed)
		return;
	q->dp.retry_armed = true;
	if (q->dp.retry_timer_on) /* running out idle (real time only) */
		q->dp.retry_due = emu_clock_now(emu_engine_clock(e)) + retry_ns(q);
	else
		timer_arm(e, q, retry_ns(q));
}

void emu_dp_retry_restart(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	/* rxe mod_timer()s the retransmission timer at every request it sends and at every
	 * ACK that makes progress: the timeout counts from the last sign of life */
	if (!e || !q->attr.timeout)
		return;
	if (q->dp.retry_armed && emu_engine_is_realtime(e)) {
		q->dp.retry_due = emu_clock_now(emu_engine_clock(e)) + retry_ns(q);
		return;
	}
	if (q->dp.retry_armed)
		timer_cancel(e, q);
	q->dp.retry_armed = false;
	emu_dp_retry_arm(q);
}

void emu_dp_retry_idle(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	if (!q->dp.retry_armed)
		return;
	q->dp.retry_armed = false;
	if (e && q->dp.retry_timer_on && emu_engine_is_realtime(e))
		q->dp.retry_due = EMU_DP_RETRY_IDLE;
	else
		timer_cancel(e, q);
}

bool emu_dp_retry_due(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();
	uint64_t now, due = q->dp.retry_due;

	q->dp.retry_timer_on = false;
	q->dp.retry_due = 0;
	if (due == EMU_DP_RETRY_IDLE) {
		q->dp.retry_armed = false;
		return false;
	}
	if (!e || !due)
		return true;
	now = emu_clock_now(emu_engine_clock(e));
	if (now >= due)
		return true;
	timer_arm(e, q, due - now);
	q->dp.retry_armed = true;
	return false;
}

void emu_dp_retry_cancel(struct emu_vqp *q)
{
	struct emu_engine *e = emu_dp_engine();

	timer_cancel(e, q);
	q->dp.retry_armed = false;
	if (q->dp.rnr_armed && e)
		emu_timer_cancel(emu_engine_clock(e), &q->dp.rnr);
	q->dp.rnr_armed = false;
}
