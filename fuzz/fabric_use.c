/* A loaded fabric put to use (fabric_use.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "emu/ib/sa.h"
#include "emu/sim/clock.h"
#include "emu/sim/topology.h"
#include "fuzz/fabric_use.h"

void fuzz_fabric_use(const struct emu_fabric *f)
{
	static FILE *null;
	struct emu_clock clk;
	struct emu_topology *t;
	struct emu_sa *sa;

	if (!null)
		null = fopen("/dev/null", "w");
	if (!null)
		abort();
	emu_fabric_show(f, null);
	emu_clock_init(&clk, 0);
	t = emu_topology_build(f, &clk, NULL, NULL);
	sa = emu_sa_new(f, t);
	emu_sa_free(sa);
	emu_topology_free(t);
	emu_clock_fini(&clk);
}
