/* What librdmacm learns of the emulated host outside the rdma_cm commands (ucma_api.h): the
 * facts the real library reads from sysfs and libibverbs before or beside the char device,
 * and the engine's accounting of a library thread that blocks on the application. They are
 * answered in the calling process, also under rdmaemud: the attached host is the process's
 * own (emu/sim/process.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "emu/rdma_cm/ucma_api.h"
#include "emu/sim/engine.h"
#include "emu/sim/process.h"

int emu_ucma_sysfs(struct emu_ucma_sysfs *out)
{
	const struct emu_host *h = emu_process_host();

	if (!h)
		return -ENODEV;
	out->abi_version = h->cm_abi;
	out->ndevices = h->ndevices;
	return 0;
}

int emu_ucma_ib_port_gid(size_t i, uint8_t gid[16])
{
	const struct emu_host *h = emu_process_host();

	if (!h)
		return -ENODEV;
	for (size_t d = 0; d < h->ndevices; d++) {
		const struct emu_device *dev = &h->devices[d];

		for (size_t p = 0; p < dev->nports; p++) {
			const struct emu_port *port = &dev->ports[p];

			if (port->link_layer != IBV_LINK_LAYER_INFINIBAND ||
			    port->state < IBV_PORT_ACTIVE || !port->ngids)
				continue;
			if (i--)
				continue;
			memcpy(gid, port->gids[0].raw, 16);
			return 0;
		}
	}
	return -ENOENT;
}

void emu_ucma_thread_idle(void)
{
	struct emu_engine *e = emu_engine_get();

	if (e)
		emu_engine_thread_forget(e);
}
