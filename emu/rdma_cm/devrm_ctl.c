/* `rdma link delete DEV` in the control API (include/rdmaemu/ctl.h): unregisters an emulated
 * RDMA device as Linux 6.1's ib_unregister_device does it to an rxe device, in the order the
 * clients go (docs/cma.md "Address changes and device removal"):
 *   - the device leaves the device lists (ibv_get_device_list, hence librdmacm's next resync,
 *     and every rdma_cm lookup: binds to its netdev's addresses then fail with ENODEV);
 *   - the rdma_cm delivers DEVICE_REMOVAL to the ids on it and closes them (emu/rdma_cm/cma_devrm.c);
 *   - its IB CM agent stops taking MADs (cm_remove_one);
 *   - open verbs contexts get no async event and keep working: rxe has no disassociate, so
 *     the real unregister waits for them, and the device object lives on meanwhile.
 * The netdev stays, with its addresses and neighbours. There is no way back (a re-added rxe
 * device would be a new device).
 *
 * Under rdmaemud the fabric, its rdma_cm and its CM agents are the daemon's: the request goes
 * there (the link installs the forwarder, emu_device_remove_set_remote), the daemon removes the
 * device in its engine and tells every attached process, whose device lists then drop it
 * (docs/daemon.md "Device removal"). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "emu/sim/engine.h"
#include "emu/rdma_cm/ucma.h"
#include "rdmaemu/ctl.h"

static emu_device_remove_fn *remote_remove;

void emu_device_remove_set_remote(emu_device_remove_fn *fn)
{
	__atomic_store_n(&remote_remove, fn, __ATOMIC_RELEASE);
}

int emu_device_remove_locked(struct emu_host *h, const char *dev, size_t *idx)
{
	size_t d;
	int rc;

	for (d = 0; d < h->ndevices; d++)
		if (!h->devices[d].removed && !strcmp(h->devices[d].name, dev))
			break;
	if (d == h->ndevices)
		return -ENOENT;
	/* off the lists first: the DEVICE_REMOVAL handlers' lookups no longer find it */
	__atomic_store_n(&h->devices[d].removed, true, __ATOMIC_RELEASE);
	rc = emu_cma_device_remove(h, d);
	if (rc) {
		h->devices[d].removed = false;
		return rc;
	}
	*idx = d;
	return 0;
}

int rdmaemu_ctl_device_remove(const char *node, const char *dev)
{
	emu_device_remove_fn *remote;
	struct emu_engine *e;
	struct emu_host *h;
	size_t d;
	int rc = -ENOENT;

	if (!dev) {
		errno = EINVAL;
		return -1;
	}
	if (!node) {
		node = rdmaemu_ctl_node();
		if (!node)
			return -1;
	}
	remote = __atomic_load_n(&remote_remove, __ATOMIC_ACQUIRE);
	if (remote) {
		rc = remote(node, dev);
		if (rc) {
			errno = -rc;
			return -1;
		}
		return 0;
	}
	e = emu_engine_get();
	if (!e)
		return -1;
	emu_engine_lock(e);
	h = emu_fabric_find_host(emu_engine_fabric(e), node);
	if (h)
		rc = emu_device_remove_locked(h, dev, &d);
	emu_engine_unlock(e);
	if (rc) {
		errno = -rc;
		return -1;
	}
	return 0;
}
