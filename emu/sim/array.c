/* Growable arrays (emu/sim/array.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/sim/array.h"
#include "util/failcall.h"

int emu_array_push(void *arr, size_t *n, size_t sz)
{
	void **p = arr;

	/* the capacity is implied by the count: the next power of two, so the many arrays of one
	 * element (a host's one device, a device's one port: 9,600 of each on the 10,000-node
	 * fabric) hold that element only */
	if (!(*n & (*n - 1))) {
		void *grown = emu_realloc(*p, (*n ? *n * 2 : 1) * sz);

		if (!grown)
			return -1;
		*p = grown;
	}
	memset((char *)*p + *n * sz, 0, sz);
	return (int)(*n)++;
}
