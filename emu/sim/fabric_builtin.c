/* The built-in default fabric.
 *
 * The default fabric is the host of fixtures/rxe-ref.fabric, the single-VM real-stack
 * reference: `rdmaemu run -- rping -s -a 192.0.2.1` works with no fabric file, and gives the
 * same results as kernel rxe in scripts/rxe-vm. It is kept as text (identical to the shipped
 * fixtures/default.fabric; test_fabric_fixtures checks that both load to the same model) so
 * that the defaults and derivations are exactly those of the loader. */
#include "config.h"

#include <stdio.h>

#include "emu/sim/fabric_priv.h"

/* Keep in step with fixtures/default.fabric (a unit test compares them). */
static const char builtin_text[] =
	"# The built-in default fabric of rdmaemu: the host of fixtures/rxe-ref.fabric.\n"
	"seed 1\n"
	"resolver files\n"
	"\n"
	"host rxe-ref\n"
	"  device rxe0 link=eth\n"
	"  netdev d0 mac=02:00:00:00:01:01 mtu=1500 rdma=rxe0/1 arp=off\n"
	"    addr 192.0.2.1/28\n"
	"  device rxe1 link=eth\n"
	"  port 1 speed=FDR10\n"
	"  netdev s0 mac=02:00:00:00:01:02 mtu=1500 rdma=rxe1/1\n"
	"    addr 192.0.2.17/28\n"
	"\n"
	"link rxe-ref/rxe0/1 none\n"
	"link rxe-ref/rxe1/1 none\n";

const char *emu_fabric_builtin_text(void)
{
	return builtin_text;
}

struct emu_fabric *emu_fabric_builtin(void)
{
	struct emu_error err;
	struct emu_fabric *f = emu_fabric_load_text(builtin_text, "(built-in default)", ".", &err);

	if (f)
		snprintf(f->source, sizeof(f->source), "(built-in default)");
	return f;
}
