/* Library initialisation: the emulated ucma_init().
 *
 * The real library asks the kernel for its ABI version and libibverbs for the device list; with
 * no device every init-dependent call fails with ENODEV. Here the emulated char device tells
 * both of the host the process is attached to (emu_ucma_sysfs). */
#include "config.h"

#include <stdio.h>

#include "lib/cma.h"

static bool (*af_ib_probe)(void);
static bool af_ib_probed; /* the probe said it is done: later inits need not call it */

void cma_init_set_af_ib_probe(bool (*probe)(void))
{
	af_ib_probe = probe;
}

int cma_init(void)
{
	struct emu_ucma_sysfs sys;

	/* A fabric that does not load leaves the process without devices; the emulator has
	 * already said why on stderr. */
	if (emu_ucma_sysfs(&sys))
		return cma_err(ENODEV);
	/* check_abi_version() comes before the device list: the library speaks rdma_cm ABI 3
	 * and 4 only */
	if (sys.abi_version < 3 || sys.abi_version > 4)
		return cma_err(EPERM);
	if (sys.ndevices == 0)
		return cma_err(ENODEV);
	/* ucma_set_af_ib_support, last, as in ucma_init (the probe's own calls come back here) */
	if (!__atomic_load_n(&af_ib_probed, __ATOMIC_ACQUIRE) && af_ib_probe && af_ib_probe())
		__atomic_store_n(&af_ib_probed, true, __ATOMIC_RELEASE);
	return 0;
}
