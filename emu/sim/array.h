/* Growable arrays: a pointer and a count, the capacity implied by the count (4, then doubling
 * at each power of two). Shared by the fabric loader's model arrays and the CM agent's small
 * id tables. */
#ifndef RDMAEMU_EMU_ARRAY_H
#define RDMAEMU_EMU_ARRAY_H

#include <stddef.h>

/* Appends one zeroed element to *arr (of *n elements of size sz); returns its index or -1
 * (no memory: *arr and *n unchanged). Removing elements by lowering *n keeps the rule: a
 * later append reallocates whenever the implied capacity could be short. */
int emu_array_push(void *arr, size_t *n, size_t sz);

#endif
