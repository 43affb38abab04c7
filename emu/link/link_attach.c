/* What a process's link to rdmaemud installs in the layers below it (docs/daemon.md): the
 * layers never call the link; they run what it registered here when the library loaded, and
 * what it installs once the process has attached through the daemon. */
#include "config.h"

#include <stdlib.h>

#include "emu/sim/engine.h"
#include "emu/sim/process.h"
#include "emu/ib/cm_host.h"
#include "emu/net/neigh.h"
#include "emu/rdma_cm/ucma.h"
#include "emu/link/link.h"
#include "emu/link/ucma_link.h"

/* The control API's requests on the daemon's kernel, each on a control connection of its own. */
static int device_remove(const char *node, const char *dev)
{
	return emu_link_device_remove(NULL, node, dev);
}

static int neigh_flush(const char *node, const char *netdev)
{
	return emu_link_neigh_flush(NULL, node, netdev);
}

static int link_set(const char *node, const char *netdev, bool up)
{
	return emu_link_link_set(NULL, node, netdev, up);
}

/* Under rdmaemud (rdmaemu run): the daemon owns the fabric's wire and hands this process its
 * share of the host; its kernel (rdma_cm files, device removal, neighbour tables, interface
 * links) serves this process's requests. */
static int process_attach(struct emu_fabric *f, const struct emu_host *h, const char *path)
{
	const char *daemon = getenv("RDMAEMU_DAEMON");
	int err;

	if (!daemon || !*daemon)
		return 0;
	err = emu_link_attach(f, h, path);
	if (err)
		return err;
	emu_ucma_set_transport(&emu_link_ucma_transport);
	emu_device_remove_set_remote(device_remove);
	emu_neigh_set_flush_remote(neigh_flush);
	emu_neigh_set_link_remote(link_set);
	emu_cm_fault_set_remote(emu_link_cm_fault);
	return 0;
}

/* Attached through a daemon: real time, port sends go to the daemon. */
static int engine_created(struct emu_engine *e)
{
	emu_link_engine_created(e);
	return 0;
}

static void process_reset(void)
{
	emu_neigh_set_link_remote(NULL);
	emu_cm_fault_set_remote(NULL);
	emu_neigh_set_flush_remote(NULL);
	emu_device_remove_set_remote(NULL);
	emu_ucma_set_transport(NULL);
	emu_link_reset();
}

static struct emu_engine_hook engine_hook = { .order = 5, .created = engine_created };
static struct emu_process_reset_hook reset_hook = { .order = 5, .reset = process_reset };

__attribute__((constructor)) static void install(void)
{
	/* attached: a large fabric is mapped from the daemon's image, not parsed here */
	emu_fabric_set_image_dir_of(getenv("RDMAEMU_DAEMON"));
	emu_process_set_attach_hook(process_attach);
	emu_engine_on_create(&engine_hook);
	emu_process_on_reset(&reset_hook);
}
