/* Growable arrays (emu/sim/array.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/sim/array.h"
#include "util/failcall.h"

int emu_array_push(void *arr, size_t *n, size_t sz)
{
	void **p = arr;

	/* the capacity is implied by the count: 4, then doubling */
	if (*n == 0 || (*n >= 4 && !(*n & (*n - 1)))) {
		void *grown = emu_realloc(*p, (*n ? *n * 2 : 4) * sz);

		if (!grown)
			return -1;
		*p = grown;
	}
	memset((char *)*p + *n * sz, 0, sz);
	return (int)(*n)++;
}
