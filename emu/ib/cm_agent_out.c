/* The CM agent's send path: the MAD layer's retransmission of a MAD that expects an answer
 * (ib_post_send_mad with timeout_ms and retries: drivers/infiniband/core/mad.c timeout_sends /
 * retry_send), and the fault stage every MAD crosses before the transport. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/cm_agent_priv.h"
#include "util/kmem.h"
#include "util/failcall.h"

static uint16_t mad_attr(const uint8_t mad[EMU_MAD_LEN])
{
	return (uint16_t)(mad[16] << 8 | mad[17]);
}

static void cm_transmit(struct emu_cm_agent *a, const struct emu_cm_addr *dst,
			const uint8_t mad[EMU_MAD_LEN])
{
	if (a->ops->send_mad(a->ctx, dst, mad) < 0)
		a->cnt.send_errors++;
}

static void cm_delayed_timer(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct cm_delayed *d = arg;
	struct emu_cm_agent *a = d->agent;

	(void)clk;
	(void)t;
	emu_list_del(&d->node);
	emu_cm_agent_enter(a);
	cm_transmit(a, &d->dst, d->mad);
	emu_cm_agent_leave(a);
	free(d);
}

void emu_cm_delayed_flush(struct emu_cm_agent *a)
{
	struct emu_list *pos, *tmp;

	emu_list_for_each_safe(pos, tmp, &a->delayed) {
		struct cm_delayed *d = emu_list_entry(pos, struct cm_delayed, node);

		emu_timer_cancel(a->clk, &d->timer);
		emu_list_del(&d->node);
		free(d);
	}
}

static bool fault_take(uint32_t *next, double p, bool draw)
{
	if (*next) {
		(*next)--;
		return true;
	}
	return draw && p > 0;
}

void emu_cm_output(struct emu_cm_agent *a, const struct emu_cm_addr *dst,
		   const uint8_t mad[EMU_MAD_LEN], bool retry)
{
	int c = emu_cm_class(mad_attr(mad));
	struct emu_cm_fault *f;
	bool drop, dup, delay;
	bool d1, d2, d3;

	if (c < 0)
		return;
	a->cnt.tx[c]++;
	if (retry)
		a->cnt.tx_retries[c]++;
	f = &a->faults[c];
	/* three draws for every MAD, whatever the rules (see emu_cm_fault) */
	d1 = emu_prng_chance(&a->fault_rng, f->p_drop);
	d2 = emu_prng_chance(&a->fault_rng, f->p_dup);
	d3 = emu_prng_chance(&a->fault_rng, f->p_delay);
	drop = fault_take(&f->drop_next, f->p_drop, d1);
	if (drop) {
		a->cnt.dropped[c]++;
		emu_cm_trace(a, "fault: %s dropped", emu_cm_attr_name(mad_attr(mad)));
		return;
	}
	dup = fault_take(&f->dup_next, f->p_dup, d2);
	delay = fault_take(&f->delay_next, f->p_delay, d3);
	if (dup)
		a->cnt.duplicated[c]++;
	if (delay) {
		a->cnt.delayed[c]++;
		emu_cm_trace(a, "fault: %s%s delayed %llu ns", emu_cm_attr_name(mad_attr(mad)),
			     dup ? " (duplicated)" : "", (unsigned long long)f->delay_ns);
		for (int i = 0; i < 1 + dup; i++) {
			struct cm_delayed *d = emu_calloc(1, sizeof(*d));

			if (!d) {
				a->cnt.send_errors++;
				continue;
			}
			d->agent = a;
			d->dst = *dst;
			memcpy(d->mad, mad, EMU_MAD_LEN);
			emu_timer_init(&d->timer, cm_delayed_timer, d);
			emu_list_add_tail(&a->delayed, &d->node);
			emu_timer_arm_in(a->clk, &d->timer, f->delay_ns);
		}
		return;
	}
	if (dup)
		emu_cm_trace(a, "fault: %s duplicated", emu_cm_attr_name(mad_attr(mad)));
	cm_transmit(a, dst, mad);
	if (dup)
		cm_transmit(a, dst, mad);
}

void emu_cm_send_expect(struct emu_cm_id *id, const uint8_t mad[EMU_MAD_LEN], unsigned state)
{
	struct cm_out *o = &id->out;

	/* One outstanding MAD per id (cm_id_priv->msg): a new one replaces the old. */
	emu_timer_cancel(id->agent->clk, &o->timer);
	if (!o->mad)
		o->mad = emu_kmem_alloc(EMU_MAD_LEN);
	o->dst = id->av;
	o->timeout_ms = id->timeout_ms;
	o->retries_left = id->max_cm_retries;
	if (o->mad) {
		memcpy(o->mad, mad, EMU_MAD_LEN);
	} else {
		/* no copy to resend: the MAD goes once and the id gets its response timeout
		 * after one timeout_ms, as after the last retry */
		emu_cm_trace(id->agent, "cm 0x%x: no memory to keep %s for resending: no retries",
			     id->local_id, emu_cm_attr_name(mad_attr(mad)));
		o->retries_left = 0;
	}
	o->state = (uint8_t)state;
	o->active = true;
	/* wait_for_response: the timeout runs from the send completion, which is immediate;
	 * armed before the send so that an answer handled during it can cancel it */
	emu_timer_arm_in(id->agent->clk, &o->timer, (uint64_t)o->timeout_ms * EMU_NSEC_PER_MSEC);
	emu_cm_output(id->agent, &o->dst, mad, false);
}

void emu_cm_out_done(struct emu_cm_id *id)
{
	id->out.active = false;
	emu_kmem_free(id->out.mad);
	id->out.mad = NULL;
}

void emu_cm_out_timer(struct emu_clock *clk, struct emu_timer *t, void *arg)
{
	struct emu_cm_id *id = arg;
	struct emu_cm_agent *a = id->agent;
	struct cm_out *o = &id->out;
	struct emu_cm_trans tr;
	struct emu_cm_event ev = { .type = EMU_CM_UE_NONE, .status = -ETIMEDOUT };

	(void)t;
	if (!o->active)
		return;
	emu_cm_agent_enter(a);
	if (o->retries_left) { /* retry_send: same MAD, same TID, the current timeout_ms */
		o->retries_left--;
		emu_cm_trace(a, "cm 0x%x: %s: %s resent (%u retries left)", id->local_id,
			     emu_cm_state_name(id->state), emu_cm_attr_name(mad_attr(o->mad)),
			     o->retries_left);
		emu_cm_output(a, &o->dst, o->mad, true);
		emu_timer_arm_in(clk, &o->timer, (uint64_t)o->timeout_ms * EMU_NSEC_PER_MSEC);
		emu_cm_agent_leave(a);
		return;
	}
	/* IB_WC_RESP_TIMEOUT_ERR -> cm_process_send_error: only for the id's current MAD and the
	 * state it was sent in (MRA handling updates that state) */
	emu_cm_out_done(id);
	if (o->state == id->state && !emu_cm_step(id, EMU_CM_EV_RESPONSE_TIMEOUT, &tr) &&
	    tr.disp == EMU_CM_OK && (tr.actions & EMU_CM_A_EVENT)) {
		ev.type = (enum emu_cm_uevent)tr.uevent;
		emu_cm_deliver(id, &ev);
	}
	emu_cm_agent_leave(a);
}

/* ---- the fault rules ---- */

int emu_cm_fault_set(struct emu_cm_agent *a, uint16_t attr_id, const struct emu_cm_fault *f)
{
	int c = emu_cm_class(attr_id);

	if (!a || !f || c < 0 || f->p_drop != f->p_drop || f->p_dup != f->p_dup ||
	    f->p_delay != f->p_delay)
		return -EINVAL;
	a->faults[c] = *f;
	return 0;
}

int emu_cm_fault_get(const struct emu_cm_agent *a, uint16_t attr_id, struct emu_cm_fault *f)
{
	int c = emu_cm_class(attr_id);

	if (!a || !f || c < 0)
		return -EINVAL;
	*f = a->faults[c];
	return 0;
}

void emu_cm_fault_clear(struct emu_cm_agent *a)
{
	if (a)
		memset(a->faults, 0, sizeof(a->faults));
}
