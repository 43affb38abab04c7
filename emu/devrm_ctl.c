/* `rdma link delete DEV` in the control API (include/rdmaemu/ctl.h): unregisters an emulated
 * RDMA device as Linux 6.1's ib_unregister_device does it to an rxe device, in the order the
 * clients go (docs/cma.md "Address changes and device removal"):
 *   - the device leaves the device lists (ibv_get_device_list, hence librdmacm's next resync,
 *     and every rdma_cm lookup: binds to its netdev's addresses then fail with ENODEV);
 *   - the rdma_cm delivers DEVICE_REMOVAL to the ids on it and closes them (emu/cma_devrm.c);
 *   - its IB CM agent stops taking MADs (cm_remove_one);
 *   - open verbs contexts get no async event and keep working: rxe has no disassociate, so
 *     the real unregister waits for them, and the device object lives on meanwhile.
 * The netdev stays, with its addresses and neighbours. There is no way back (a re-added rxe
 * device would be a new device). In-process hosting only: under rdmaemud the fabric is the
 * daemon's. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/engine.h"
#include "emu/link.h"
#include "emu/ucma.h"
#include "rdmaemu/ctl.h"

int rdmaemu_ctl_device_remove(const char *node, const char *dev)
{
	struct emu_engine *e;
	struct emu_host *h;
	size_t d;
	int rc = -ENOENT;

	if (!dev) {
		errno = EINVAL;
		return -1;
	}
	if (emu_link_active()) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (!node) {
		node = rdmaemu_ctl_node();
		if (!node)
			return -1;
	}
	e = emu_engine_get();
	if (!e)
		return -1;
	emu_engine_lock(e);
	h = emu_fabric_find_host(emu_engine_fabric(e), node);
	for (d = 0; h && d < h->ndevices; d++)
		if (!h->devices[d].removed && !strcmp(h->devices[d].name, dev))
			break;
	if (h && d < h->ndevices) {
		__atomic_store_n(&h->devices[d].removed, true, __ATOMIC_RELEASE);
		rc = emu_cma_device_remove(h, d);
		if (rc)
			h->devices[d].removed = false;
	}
	emu_engine_unlock(e);
	if (rc) {
		errno = -rc;
		return -1;
	}
	return 0;
}
