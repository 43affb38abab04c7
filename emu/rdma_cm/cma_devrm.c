/* Device removal in the emulated kernel rdma_cm (Linux 6.1's cma_remove_one ->
 * cma_process_remove -> cma_send_device_removal_put, and ucma's event handler and close_work;
 * docs/cma.md "Address changes and device removal").
 *
 * The kernel keeps one id list per RDMA device, appended to by cma_attach_to_dev; removal
 * walks it from the front. Here every id carries the position it took (attach_seq), and the
 * removal sorts the host's ids on the device by it. Per id:
 *   - state DESTROYING or DEVICE_REMOVAL already: nothing;
 *   - state becomes DEVICE_REMOVAL (one trace line);
 *   - ucma_event_handler queues RDMA_CM_EVENT_DEVICE_REMOVAL, status 0, unless the id is a
 *     new connection the application has not accepted (uid 0);
 *   - close_work (queued only for contexts in ucma's table, i.e. not for a connection whose
 *     CONNECT_REQUEST is still unread) destroys the kernel id: the IB CM id goes as
 *     ib_destroy_cm_id leaves it (DREQ on an established connection, REJ on a pending one),
 *     resolutions are cancelled, groups left, the port released. The ucma context stays until
 *     DESTROY_ID; every other command on it fails with ENXIO.
 * A wildcard listener is on no device list (its per-device child ids are, and those are
 * destroyed without an event): it only lets go of its listen on the device. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "emu/rdma_cm/cma.h"
#include "util/failcall.h"

/* cma_send_device_removal_put + ucma_event_handler + ucma_close_id for one id. */
static void remove_one(struct emu_cma_id *id, const char *devname)
{
	/* ucma_connect_event_handler reserved the context's slot without storing it: the
	 * removal handler finds no context there and queues no close_work */
	bool unread = id->listen != NULL;

	if (id->state == EMU_CMA_DESTROYING || id->state == EMU_CMA_DEVICE_REMOVAL)
		return;
	emu_cma_set_state(id, EMU_CMA_DEVICE_REMOVAL);
	if (id->uid)
		emu_cma_event(id, NULL, EMU_CMA_EVENT_DEVICE_REMOVAL, 0, NULL);
	else
		emu_cma_trace("cma %u: DEVICE_REMOVAL of %s not reported (not accepted yet)",
			      id->handle, devname);
	if (unread)
		return;
	emu_cma_id_teardown(id);
	id->closed = true;
	emu_cma_trace("cma %u: closed after the removal of %s (commands now ENXIO)", id->handle,
		      devname);
}

static int by_attach_seq(const void *a, const void *b)
{
	const struct emu_cma_id *x = *(struct emu_cma_id *const *)a;
	const struct emu_cma_id *y = *(struct emu_cma_id *const *)b;

	return x->attach_seq < y->attach_seq ? -1 : x->attach_seq > y->attach_seq;
}

int emu_cma_device_remove(const struct emu_host *h, size_t dev)
{
	uint32_t limit = emu_cma_id_limit(), n = 0;
	struct emu_cma_id **ids = emu_calloc(limit ? limit : 1, sizeof *ids);
	const char *devname = h->devices[dev].name;

	if (!ids)
		return -ENOMEM;
	emu_cma_trace("cma: device %s of %s removed", devname, h->name);
	for (uint32_t i = 0; i < limit; i++) {
		struct emu_cma_id *id = emu_cma_id_lookup(i);

		if (!id || id->host != h)
			continue;
		if (id->dev == (int)dev) {
			ids[n++] = id;
		} else if (id->dev < 0 && id->state == EMU_CMA_LISTEN) {
			emu_cma_cm_drop_dev(id, dev);
		}
	}
	qsort(ids, n, sizeof *ids, by_attach_seq);
	/* a close frees no context and delivers nothing synchronously (messages to a peer, even
	 * a loopback one, arrive later), so the collected pointers stay valid */
	for (uint32_t i = 0; i < n; i++)
		remove_one(ids[i], devname);
	free(ids);
	return 0;
}
