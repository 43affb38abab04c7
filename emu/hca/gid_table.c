/* The generation of the ports' GID tables (emu/hca/gid_table.h). */
#include "config.h"

#include "emu/hca/gid_table.h"

static unsigned long generation;

unsigned long emu_gid_table_generation(void)
{
	return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}

void emu_gid_table_changed(void)
{
	__atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
}
