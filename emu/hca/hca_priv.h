/* Internals of the HCA model shared by emu/hca/hca*.c. */
#ifndef RDMAEMU_EMU_HCA_PRIV_H
#define RDMAEMU_EMU_HCA_PRIV_H

#include "emu/hca/hca.h"
#include "emu/sim/prng.h"

struct hca_pool {
	/* slots[i] holds index min_index + i: a process given the QP numbers of a slice high in
	 * the host's range pays for the slice, not for every number below it */
	struct emu_obj **slots; /* grown on demand up to max_index - min_index + 1 */
	size_t nslots;
	uint32_t min_index, max_index, next;
	uint32_t count, max_elem;
	int full_errno; /* what the kernel returns when the pool is full */
	bool qp_slice;  /* QPs of a slice a daemon gave (emu_hca_set_qp_range) */
};

struct emu_hca {
	struct emu_list link; /* in the registry */
	const struct emu_device *dev;
	unsigned refcnt;      /* emu_hca_get() references (registry lock) */
	unsigned nctx;        /* open contexts (hca lock) */
	pthread_mutex_t lock;
	struct hca_pool pools[EMU_OBJ_NTYPES];
	struct emu_prng keys; /* the 8-bit key part of MR keys */
};

struct emu_hca_ctx {
	struct emu_hca *hca;
	struct emu_list objs[EMU_OBJ_NTYPES];
};

/* Seeds hca->keys from the fabric seed and the device's place in the fabric. */
void hca_keys_init(struct emu_hca *hca);

#endif
