/* What a process's link to rdmaemud installs in the layers below it (docs/daemon.md): the
 * layers never call the link; they run what it registered here when the library loads. */
#include "config.h"

#include "emu/sim/engine.h"
#include "emu/link/link.h"

/* Attached through a daemon: real time, port sends go to the daemon. */
static int engine_created(struct emu_engine *e)
{
	emu_link_engine_created(e);
	return 0;
}

static struct emu_engine_hook engine_hook = { .order = 5, .created = engine_created };

__attribute__((constructor)) static void install(void)
{
	emu_engine_on_create(&engine_hook);
}
