/* The event queue of an rdma_cm file (emu/rdma_cm/ucma_event.h). */
#include "config.h"

#include <string.h>

#include "emu/sim/engine.h"
#include "util/kmem.h"
#include "emu/rdma_cm/ucma_event.h"

/* Event records come from kmem, whose per-thread free lists make a record read or dropped
 * the next one made (a per-file list of up to 1,024 spares did that before kmem). */
struct emu_ucma_event *emu_ucma_event_get(struct emu_ucma_file *f, size_t data)
{
	(void)f;
	return emu_kmem_alloc(sizeof(struct emu_ucma_event) + data);
}

void emu_ucma_event_resp(const struct emu_ucma_event *ev, struct rdma_ucm_event_resp *resp)
{
	uint8_t *r = (uint8_t *)resp;

	memset(resp, 0, sizeof *resp);
	resp->uid = ev->uid;
	resp->id = ev->handle;
	resp->event = ev->event;
	resp->status = ev->status;
	memcpy(r + EMU_UCMA_EV_PARAM, ev->data, ev->param_len);
	if (ev->tail)
		memcpy(r + EMU_UCMA_EV_TAIL, ev->data + ev->param_len, EMU_UCMA_EV_TAIL_LEN);
}

void emu_ucma_event_put(struct emu_ucma_file *f, struct emu_ucma_event *ev)
{
	(void)f;
	emu_kmem_free(ev);
}

void emu_ucma_event_queue(struct emu_ucma_file *f, struct emu_ucma_event *ev)
{
	struct rdma_ucm_event_resp resp;

	emu_list_add_tail(&f->events, &ev->node);
	f->nevents++;
	if (!f->push) {
		ev->seq = 0;
		if (f->nevents == 1)
			emu_engine_fd_signal(f->fd);
		return;
	}
	/* the semaphore counts every event the client has been sent and not read: push()
	 * adds its 1 */
	ev->seq = ++f->push_seq;
	emu_ucma_event_resp(ev, &resp);
	f->push(f->push_ctx, f->fd, EMU_UCMA_PUSH_EVENT, ev->seq, &resp);
}

void emu_ucma_event_unqueue(struct emu_ucma_file *f, struct emu_ucma_event *ev)
{
	emu_list_del(&ev->node);
	f->nevents--;
	if (f->quiet)
		return;
	if (!f->push) {
		/* the 1->0 edge only: an empty queue's fd is clear already */
		if (!f->nevents)
			emu_engine_fd_clear(f->fd);
		return;
	}
	/* push() takes this event's 1 off the semaphore */
	f->push(f->push_ctx, f->fd, EMU_UCMA_PUSH_DROP, ev->seq, NULL);
}

void emu_ucma_forget(const struct emu_cma_id *id)
{
	struct emu_ucma_file *f = id->file;

	if (f && f->push)
		f->push(f->push_ctx, f->fd, EMU_UCMA_PUSH_FORGET, id->handle, NULL);
}
