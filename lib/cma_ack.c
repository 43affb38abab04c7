/* Event records and their acks (spec §7): rdma_ack_cm_event, and the wait of rdma_destroy_id,
 * rdma_migrate_id and rdma_leave_multicast until the events already reported are acked.
 *
 * Acks come from application threads the engine may never have seen (a thread that only
 * acks), so the wait is on a condition variable, as rdma-core's is, and the waiting thread
 * tells the emulator it is out of the picture meanwhile (it neither runs nor waits on engine
 * state, so virtual time may move without it). Nothing acks: it waits forever, as the real
 * library does. */
#include "config.h"

#include <stdlib.h>

#include "lib/cma.h"

static pthread_mutex_t ack_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ack_cond = PTHREAD_COND_INITIALIZER;

/* From the shared allocator (util/kmem.h), whose per-thread cache makes an acked record the
 * next one read. */
struct cma_event *cma_event_alloc(void)
{
	return emu_kmem_alloc(sizeof(struct cma_event));
}

void cma_event_free(struct cma_event *evt)
{
	emu_kmem_free(evt);
}

void cma_wait_acked(const char *what, int *completed, int reported)
{
	(void)what;
	pthread_mutex_lock(&ack_lock);
	if (*completed >= reported) {
		pthread_mutex_unlock(&ack_lock);
		return;
	}
	emu_ucma_thread_idle();
	while (*completed < reported)
		pthread_cond_wait(&ack_cond, &ack_lock);
	pthread_mutex_unlock(&ack_lock);
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *evt;

	if (!event)
		return cma_err(EINVAL);
	evt = container_of(event, struct cma_event, event);
	pthread_mutex_lock(&ack_lock);
	/* ucma_complete_mc_event: a membership's event counts for the id too, as the kernel's
	 * ucma_get_event counts it in both ctx->events_reported and mc->events_reported */
	if (evt->mc)
		evt->mc->events_completed++;
	evt->id_priv->events_completed++;
	pthread_cond_broadcast(&ack_cond);
	pthread_mutex_unlock(&ack_lock);
	cma_event_free(evt);
	return 0;
}

void cma_ack_swallowed(struct cma_id_private *id_priv)
{
	pthread_mutex_lock(&ack_lock);
	id_priv->events_completed++;
	pthread_cond_broadcast(&ack_cond);
	pthread_mutex_unlock(&ack_lock);
}
