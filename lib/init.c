/* Library initialisation: the emulated ucma_init().
 *
 * The real library asks the kernel for its ABI version and libibverbs for the device list; with
 * no device every init-dependent call fails with ENODEV. Here "the kernel" is the emulated host
 * the process is attached to (emu/sim/process.c), and its device list is the fabric's. */
#include "config.h"

#include <stdio.h>

#include "lib/cma.h"

int cma_init(const struct emu_host **hostp)
{
	const struct emu_host *h = emu_process_host();

	/* A fabric that does not load leaves the process without devices; emu_process_host() has
	 * already said why on stderr. */
	if (!h)
		return cma_err(ENODEV);
	/* check_abi_version() comes before the device list: the library speaks rdma_cm ABI 3
	 * and 4 only */
	if (h->cm_abi < 3 || h->cm_abi > 4)
		return cma_err(EPERM);
	if (h->ndevices == 0)
		return cma_err(ENODEV);
	/* ucma_set_af_ib_support, last, as in ucma_init (the probe's own calls come back here) */
	cma_set_af_ib_support();
	if (hostp)
		*hostp = h;
	return 0;
}
