/* What librdmacm learns of the emulated host outside the rdma_cm commands (ucma_api.h): the
 * facts the real library reads from sysfs and libibverbs before or beside the char device,
 * and the engine's accounting of a library thread that blocks on the application. They are
 * answered in the calling process, also under rdmaemud: the attached host is the process's
 * own (emu/sim/process.h). */
#include "config.h"

#include <errno.h>

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

void emu_ucma_thread_idle(void)
{
	struct emu_engine *e = emu_engine_get();

	if (e)
		emu_engine_thread_forget(e);
}
