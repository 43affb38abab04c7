/* Fuzz target: an ibacm_hosts.data address map (emu/sim/fabric_hostsdata.c), as a fabric
 * file's `hosts-data` line reads it. The input is the map; the fabric around it is
 * fixtures/ib.fabric's subnet (its topology, three hosts with IPoIB netdevs). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "emu/sim/fabric.h"
#include "fuzz/fabric_use.h"
#include "fuzz/fuzz_env.h"

static char fabric[2048];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_env_init();
	snprintf(fabric, sizeof(fabric),
		 "sm lid=1\n"
		 "topology %s\n"
		 "host ib-a\n  netdev ib0 rdma=mlx5_0/1\n    addr 192.0.2.129/26\n"
		 "    addr 2001:db8:0:81::a/64\n"
		 "host ib-b\n  netdev ib0 rdma=mlx5_0/1\n    addr 192.0.2.130/26\n"
		 "host ib-c acm=on\n  netdev ib0 rdma=mlx5_0/1\n    addr 192.0.2.131/26\n"
		 "hosts-data fuzz.data\n",
		 fuzz_fixture("ib.topo"));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct emu_error err;
	struct emu_fabric *f;

	fuzz_put("fuzz.data", data, size);
	f = emu_fabric_load_text(fabric, "fuzz.fabric", fuzz_dir(), &err);
	if (f) {
		fuzz_fabric_use(f);
		emu_fabric_free(f);
	}
	return 0;
}
