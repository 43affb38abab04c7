/* The library's memory for ids, path records and event records (lib/cma.h, cma_mem_*): for
 * now the emulated kernel's kmem, whose huge-page slabs spare connection setup the page
 * faults of fresh malloc memory (docs/cma.md "Connection setup cost"). */
#include "config.h"

#include "emu/sim/kmem.h"
#include "lib/cma.h"

void *cma_mem_alloc_class(int cls, size_t size)
{
	(void)cls;
	return emu_kmem_alloc(size);
}

void *cma_mem_zalloc_class(int cls, size_t size)
{
	(void)cls;
	return emu_kmem_zalloc(size);
}

void cma_mem_free_class(int cls, void *p)
{
	(void)cls;
	emu_kmem_free(p);
}
