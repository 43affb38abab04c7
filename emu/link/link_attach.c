/* What a process's link to rdmaemud installs in the layers below it (docs/daemon.md): the
 * layers never call the link; they run what it registered here when the library loaded. */
#include "config.h"

#include <stdlib.h>

#include "emu/sim/engine.h"
#include "emu/sim/process.h"
#include "emu/link/link.h"

/* Under rdmaemud (rdmaemu run): the daemon owns the fabric's wire and hands this process its
 * share of the host. */
static int process_attach(struct emu_fabric *f, const struct emu_host *h, const char *path)
{
	const char *daemon = getenv("RDMAEMU_DAEMON");

	if (!daemon || !*daemon)
		return 0;
	return emu_link_attach(f, h, path);
}

/* Attached through a daemon: real time, port sends go to the daemon. */
static int engine_created(struct emu_engine *e)
{
	emu_link_engine_created(e);
	return 0;
}

static struct emu_engine_hook engine_hook = { .order = 5, .created = engine_created };
static struct emu_process_reset_hook reset_hook = { .order = 5, .reset = emu_link_reset };

__attribute__((constructor)) static void install(void)
{
	emu_process_set_attach_hook(process_attach);
	emu_engine_on_create(&engine_hook);
	emu_process_on_reset(&reset_hook);
}
