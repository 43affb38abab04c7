/* The personality of one linked librdmacm.so.1: the rdma-core generation it behaves as
 * (docs/rdma-core-generations.md). The library's sources are compiled once; each personality
 * links them with this object, compiled with its own CMA_RDMA_CORE, and its own version map.
 *
 * At load the library tells the emulator which personality it is (rdmaemu_ctl_rdmacm_level
 * answers with it), and says in one line when RDMAEMU_RDMA_CORE asked for another: the
 * program then runs with the library the dynamic linker found, not the one it asked for. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "lib/cma.h"
#include "rdmaemu/ctl.h"

const int cma_rdma_core = CMA_RDMA_CORE;

__attribute__((constructor)) static void personality_init(void)
{
	const char *want = getenv("RDMAEMU_RDMA_CORE");

	rdmaemu_ctl_rdmacm_loaded(cma_rdma_core);
	if (want && *want && atoi(want) != cma_rdma_core)
		fprintf(stderr, "rdmaemu: RDMAEMU_RDMA_CORE=%s, but the librdmacm.so.1 loaded is "
				"personality %d\n", want, cma_rdma_core);
}
