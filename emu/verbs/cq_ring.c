/* A CQ's completion ring (rxe maps its ring into user space; here it stays in the library):
 * the data path pushes completions (rxe_cq_post), the poll verbs pop them (emu/verbs/cq.c).
 * The CQ's mutex guards the ring and its notify state; the count is also read without it, to
 * tell an empty ring (written with atomic stores under the mutex). */
#include "config.h"

#include <errno.h>

#include "emu/verbs/objects.h"

int emu_cq_push(struct emu_vcq *c, const struct ibv_wc *wc, bool solicited)
{
	bool notify = false;

	pthread_mutex_lock(&c->lock);
	if (c->count == c->nslots - 1) {
		pthread_mutex_unlock(&c->lock);
		/* rxe_cq_post(): "queue full", IB_EVENT_CQ_ERR to the event handler, -EBUSY */
		emu_verbs_post_async_event(c->cq.context, IBV_EVENT_CQ_ERR, (uintptr_t)&c->cq);
		return EBUSY;
	}
	c->ring[(c->head + c->count) % c->nslots] = *wc;
	__atomic_store_n(&c->count, c->count + 1, __ATOMIC_RELEASE);
	if (c->notify == EMU_CQ_NOTIFY_NEXT ||
	    (c->notify == EMU_CQ_NOTIFY_SOLICITED && solicited)) {
		c->notify = EMU_CQ_NOTIFY_NONE;
		notify = true;
	}
	pthread_mutex_unlock(&c->lock);
	if (notify && c->cq.channel)
		emu_verbs_comp_event_post(c->cq.channel, &c->cq);
	return 0;
}

int emu_cq_pop(struct emu_vcq *c, struct ibv_wc *wc)
{
	int n = 0;

	/* an empty ring is told without the mutex: a busy poller looks at it between every
	 * look at the rings (a lock and unlock a poll were a seventh of ib_write_lat's time); a
	 * completion being pushed meanwhile is found by the next poll */
	if (!__atomic_load_n(&c->count, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&c->lock);
	if (c->count) {
		*wc = c->ring[c->head];
		c->head = (c->head + 1) % c->nslots;
		__atomic_store_n(&c->count, c->count - 1, __ATOMIC_RELAXED);
		n = 1;
	}
	pthread_mutex_unlock(&c->lock);
	return n;
}
