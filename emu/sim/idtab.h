/* idtab: pointers by 32-bit key in a sparse three-level table (12, 11 and 9 bits), as the
 * kernel keeps the CM's local IDs in an xarray (cm.local_id_table). Keys given out by a
 * counter (xa_alloc_cyclic) sit side by side in one leaf of 512 slots (a 4 KiB kmem object),
 * so looking up ids in the order they were made walks memory forward, and a lookup reads no
 * other object (a hash chain reads its neighbours'). A leaf is freed when its last key goes,
 * a middle node when its last leaf does (one emptied middle node is kept for the next).
 * Not thread-safe: the owner's lock covers it. */
#ifndef RDMAEMU_EMU_IDTAB_H
#define RDMAEMU_EMU_IDTAB_H

#include <stddef.h>
#include <stdint.h>

struct emu_idtab_mid;

struct emu_idtab {
	struct emu_idtab_mid **top; /* 4,096 slots, allocated at the first set */
	struct emu_idtab_mid *spare; /* an emptied middle node kept for the next */
	size_t n;                   /* keys set (the CM agent counts its ids by it) */
};

#define EMU_IDTAB_INIT {NULL, NULL, 0}

/* The pointer at key, NULL if none. */
void *emu_idtab_get(const struct emu_idtab *t, uint32_t key);
/* Sets key (not set: -EEXIST if it is) to p (not NULL); 0 or -ENOMEM/-EEXIST/-EINVAL. */
int emu_idtab_set(struct emu_idtab *t, uint32_t key, void *p);
/* Clears key; returns what it held (NULL if nothing). */
void *emu_idtab_del(struct emu_idtab *t, uint32_t key);
/* Frees the table's nodes (not the objects); the table is empty and usable after. */
void emu_idtab_destroy(struct emu_idtab *t);

#endif
