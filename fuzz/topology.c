/* Fuzz target: an ibnetdiscover topology (emu/sim/fabric_ibnd.c), as a fabric file's
 * `topology` line reads it. The input is the topology file; the fabric around it names it and
 * puts two hosts on it, as fixtures/ib.fabric does with ib.topo. */
#include "config.h"

#include <stdlib.h>

#include "emu/sim/fabric.h"
#include "fuzz/fabric_use.h"
#include "fuzz/fuzz_env.h"

static const char fabric[] = "sm lid=1\n"
			     "topology fuzz.topo\n"
			     "host ib-a\n"
			     "  netdev ib0 rdma=mlx5_0/1\n"
			     "    addr 192.0.2.129/26\n"
			     "host ib-b\n"
			     "  netdev ib0 rdma=mlx5_0/1\n"
			     "    addr 192.0.2.130/26\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_error err;
	struct emu_fabric *f;

	fuzz_put("fuzz.topo", data, size);
	f = emu_fabric_load_text(fabric, "fuzz.fabric", fuzz_dir(), &err);
	if (f) {
		fuzz_fabric_use(f);
		emu_fabric_free(f);
	}
	return 0;
}
