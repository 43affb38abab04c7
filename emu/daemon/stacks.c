/* The hosts' kernel stacks in rdmaemud (emu/daemon/stacks.h). In-process, each stack starts
 * on first use; the daemon starts the MAD layer, the CM agents and the SA up front, as a
 * booted kernel has ib_cm and the subnet manager running before any program asks, so that
 * a request reaching a host finds its CM however the host's processes come and go. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "emu/ib/cm_host.h"
#include "emu/daemon/stacks.h"
#include "emu/sim/engine.h"
#include "emu/ib/gsi.h"
#include "emu/net/neigh.h"
#include "emu/ib/sa_agent.h"

int emu_dstacks_start(struct emu_engine *e)
{
	const struct emu_fabric *f = emu_engine_fabric(e);
	int rc;

	if (!emu_neigh_get(e)) {
		fprintf(stderr, "rdmaemud: cannot start the neighbour stacks: %s\n",
			strerror(errno));
		return -1;
	}
	for (size_t h = 0; h < f->nhosts; h++)
		for (size_t dev = 0; dev < f->hosts[h].ndevices; dev++)
			if (!emu_cm_host_agent(e, h, dev)) {
				fprintf(stderr, "rdmaemud: cannot start the CM of %s/%s: %s\n",
					f->hosts[h].name, f->hosts[h].devices[dev].name,
					strerror(errno));
				return -1;
			}
	rc = emu_sa_agent_start(e);
	if (rc && rc != -ENODEV) { /* -ENODEV: a fabric without an SM, as a subnet with none */
		fprintf(stderr, "rdmaemud: cannot start the SA: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}
