/* The HCA model: what the kernel driver (rxe) and ib_uverbs hold for an emulated RDMA device.
 *
 * One struct emu_hca exists per (host, device) of the attached fabric while any context has it
 * open; every drop-in library of the process (libibverbs.so.1 now, librdmacm through it) sees
 * the same one, because it lives in librdmaemu.so.
 *
 * Objects (PD, MR, and later CQ, QP, SRQ, AH, MW) are kept the way rxe keeps them: one pool per
 * object type and HCA, indices handed out cyclically from the type's index range (rxe's
 * xa_alloc_cyclic), a count limited by the device caps. Every object has a use count of the
 * objects that depend on it (a PD's MRs and QPs, a CQ's QPs): destroying an object in use fails
 * with EBUSY, as ib_uverbs' ib_destroy_usecnt() does. Objects belong to an emu_hca_ctx (the
 * analogue of an open /dev/infiniband/uverbsN file): closing it destroys what is left, children
 * first, as uverbs_destroy_ufile_hw() does.
 *
 * Every function returns 0 or a positive errno value (the kernel's, for the same request), and
 * takes the HCA's mutex itself; none of them blocks on anything but that mutex.
 */
#ifndef RDMAEMU_EMU_HCA_H
#define RDMAEMU_EMU_HCA_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/sim/fabric.h"
#include "emu/sim/list.h"

struct emu_hca;
struct emu_hca_ctx;

/* Object types, in the order a context's objects are destroyed at close (dependents first). */
enum emu_obj_type {
	EMU_OBJ_AH,
	EMU_OBJ_QP,
	EMU_OBJ_SRQ,
	EMU_OBJ_CQ,
	EMU_OBJ_MW,
	EMU_OBJ_MR,
	EMU_OBJ_PD,
	EMU_OBJ_NTYPES
};

/* Header of every HCA object. `index` is the object's number in its pool: the upper 24 bits of
 * an MR's keys, a QP's number, and so on. `usecnt` counts the objects that reference this one. */
struct emu_obj {
	enum emu_obj_type type;
	uint32_t index;
	unsigned usecnt;
	struct emu_hca *hca;
	struct emu_hca_ctx *ctx;
	struct emu_list link;                /* in ctx->objs[type] */
	void (*destroy)(struct emu_obj *obj); /* frees the object (HCA mutex held); set by the owner */
	void *user;                          /* the verbs-side object, for events and cleanup */
};

struct emu_pd {
	struct emu_obj obj;
};

/* Access flags as the verbs and the kernel encode them (IB_ACCESS_* == IBV_ACCESS_*). */
enum {
	EMU_ACCESS_LOCAL_WRITE = 1 << 0,
	EMU_ACCESS_REMOTE_WRITE = 1 << 1,
	EMU_ACCESS_REMOTE_READ = 1 << 2,
	EMU_ACCESS_REMOTE_ATOMIC = 1 << 3,
	EMU_ACCESS_MW_BIND = 1 << 4,
	EMU_ACCESS_ZERO_BASED = 1 << 5,
	EMU_ACCESS_ON_DEMAND = 1 << 6,
	EMU_ACCESS_HUGETLB = 1 << 7,
	/* IB_UVERBS_ACCESS_OPTIONAL_RANGE: bits 20..29, accepted and ignored by the kernel */
	EMU_ACCESS_OPTIONAL_RANGE = 0x3ff00000,
	EMU_ACCESS_REMOTE = EMU_ACCESS_REMOTE_WRITE | EMU_ACCESS_REMOTE_READ | EMU_ACCESS_REMOTE_ATOMIC,
};

struct emu_mr {
	struct emu_obj obj;
	struct emu_pd *pd;
	uint8_t *addr;     /* start of the registered range in this process */
	uint64_t length;
	uint64_t iova;     /* the address the range has for the HCA (ibv_reg_mr: addr) */
	unsigned access;   /* EMU_ACCESS_* as registered */
	uint32_t lkey;     /* index << 8 | 8-bit key, as rxe_mr_init() */
	uint32_t rkey;     /* == lkey when any remote access was asked for, else 0 (rxe) */
	uint64_t npages;   /* pages pinned (counted against RLIMIT_MEMLOCK) */
};

/* Result of a memory access check; the data path turns it into a completion status with
 * emu_mr_status_wc(). */
enum emu_mr_status {
	EMU_MR_OK = 0,
	EMU_MR_BAD_KEY,    /* no MR with that index, or the key byte or rkey does not match */
	EMU_MR_BAD_PD,     /* the MR belongs to another PD than the QP's */
	EMU_MR_BAD_ACCESS, /* the MR was registered without an access the operation needs */
	EMU_MR_BAD_RANGE,  /* [iova, iova + len) is not inside the MR */
};

/* The HCA of `dev` (a device of the attached host), created on first open. NULL and errno
 * ENOMEM when out of memory. Each call takes a reference; release it with emu_hca_put(). */
/* Restricts the QP numbers of every HCA created afterwards to [min, max] (QP1's reserved index
 * comes from it too). A daemon sharing one host between processes gives each a disjoint slice
 * (docs/daemon.md) so their QPNs never collide; by default the range is rxe's, 16..2^20. */
void emu_hca_set_qp_range(uint32_t min, uint32_t max);
/* A line printed once on stderr the first time the range is used up (ibv_create_qp then fails
 * with rxe's EINVAL, as a full pool does): which limit, and how to raise it. NULL: none. */
void emu_hca_set_qp_range_note(const char *note);
/* Where the QP pool of every HCA created afterwards starts its cyclic search (QP1's reserved
 * index takes it, the first user QP the next one); ignored outside the range. The daemon
 * continues a host's QP numbers across its processes so (rxe's allocator is the host's). */
void emu_hca_set_qp_first(uint32_t first);

struct emu_hca *emu_hca_get(const struct emu_device *dev);
void emu_hca_put(struct emu_hca *hca);
const struct emu_device *emu_hca_device(const struct emu_hca *hca);
/* The HCA mutex, for callers (the data path) that walk objects themselves. */
pthread_mutex_t *emu_hca_lock(struct emu_hca *hca);

/* A user context (an open verbs device). Closing destroys every object still in it. */
int emu_hca_ctx_open(struct emu_hca *hca, struct emu_hca_ctx **out);
void emu_hca_ctx_close(struct emu_hca_ctx *ctx);
struct emu_hca *emu_hca_ctx_hca(const struct emu_hca_ctx *ctx);

/* Generic object table, for the object types of later steps (CQ, QP, SRQ, AH, MW): adds obj to
 * the pool of obj->type (assigning obj->index) and to ctx. ENOMEM when the pool is full (the
 * device cap, or the index range, is exhausted). Call with the HCA mutex held. */
int emu_hca_obj_add_locked(struct emu_hca_ctx *ctx, struct emu_obj *obj);
/* Removes obj from its pool and context; EBUSY (nothing done) while obj->usecnt != 0. */
int emu_hca_obj_remove_locked(struct emu_obj *obj);
/* Object of `type` with `index`, NULL if none. HCA mutex held. */
struct emu_obj *emu_hca_obj_find_locked(struct emu_hca *hca, enum emu_obj_type type,
					uint32_t index);
/* Number of live objects of a type (all contexts). */
unsigned emu_hca_obj_count(struct emu_hca *hca, enum emu_obj_type type);
/* Whether any object of a type lives, without the mutex (a relaxed read of the count): for a
 * data-path lookup that has nothing to find in the common case (memory windows), where the
 * mutex cost a locked instruction pair per packet. A key in a packet was learnt from its
 * owner after the object was made, so a count read as 0 there means no such object. */
bool emu_hca_obj_any(struct emu_hca *hca, enum emu_obj_type type);
/* The indices [*first, *end) that may hold the type's objects (to walk them with
 * emu_hca_obj_find_locked). HCA mutex held. */
void emu_hca_obj_span_locked(struct emu_hca *hca, enum emu_obj_type type, uint32_t *first,
			     uint32_t *end);

/* Objects are allocated by the caller, usually embedded in the verbs-side object (as rdma-core's
 * providers embed struct ibv_pd in their own), zeroed, with obj.destroy set to what frees the
 * container when the context closes with the object still in it. After a successful explicit
 * dealloc/dereg the caller frees the container itself. */

/* PDs: ENOMEM/EINVAL when max_pd PDs exist (see hca.c). */
int emu_hca_pd_alloc(struct emu_hca_ctx *ctx, struct emu_pd *pd);
int emu_hca_pd_dealloc(struct emu_pd *pd); /* EBUSY while MRs, QPs, SRQs or AHs use it */

/* MRs: the checks and errors of ib_uverbs_reg_mr() + ib_check_mr_access() + rxe_reg_user_mr()
 * + ib_umem_get(), in the kernel's order:
 *   EINVAL  addr and iova differ in their offset within a page
 *   EINVAL  REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE; an unknown access bit
 *   EINVAL  ON_DEMAND (rxe has no ODP; measured on 6.1)
 *   ENOMEM  the device's max_mr MRs exist
 *   EINVAL  addr + length wraps, or the range covers no page (length 0 on a page boundary)
 *   EPERM   RLIMIT_MEMLOCK is 0 and the process lacks CAP_IPC_LOCK
 *   ENOMEM  the pages would exceed RLIMIT_MEMLOCK (without CAP_IPC_LOCK)
 *   EFAULT  a page of the range is not mapped, or not writable when a write access is asked */
int emu_hca_mr_reg(struct emu_pd *pd, void *addr, uint64_t length, uint64_t iova,
		   unsigned access, struct emu_mr *mr);
int emu_hca_mr_dereg(struct emu_mr *mr);
/* The next 8-bit key of the HCA's seeded key stream (rxe_get_next_key(-1)): the key byte of an
 * MR's lkey, or of a memory window's rkey (emu/verbs/mw.c). HCA mutex held. */
uint8_t emu_hca_key_next_locked(struct emu_hca *hca);

/* The access check of the data path (rxe's lookup_mr() + mr_check_range()): is `key` (an lkey,
 * or an rkey when is_rkey) a valid key of an MR of `pd` that allows `needed` (EMU_ACCESS_*; 0 for
 * a local read) on [iova, iova + len)? On EMU_MR_OK, *host (if not NULL) is where iova lives in
 * this process. Takes the HCA mutex. */
enum emu_mr_status emu_hca_mr_check(struct emu_hca *hca, const struct emu_pd *pd, uint32_t key,
				    bool is_rkey, uint64_t iova, uint64_t len, unsigned needed,
				    void **host);
/* The completion status a failed check gives: IBV_WC_LOC_PROT_ERR (4) for a local key,
 * IBV_WC_REM_ACCESS_ERR (10) for a remote one; 0 (IBV_WC_SUCCESS) for EMU_MR_OK. */
int emu_mr_status_wc(enum emu_mr_status st, bool is_rkey);
const char *emu_mr_status_str(enum emu_mr_status st);

/* User memory as ib_umem_get() judges it (emu/hca/hca_mem.c). */
/* 0, or EFAULT when a page of [addr, addr + len) is unmapped, PROT_NONE, or (write) read-only. */
int emu_mem_check_mapped(uintptr_t start, uintptr_t end, bool write);
/* can_do_mlock(): 0, or EPERM when RLIMIT_MEMLOCK is 0 and the process lacks CAP_IPC_LOCK. */
int emu_mem_can_lock(void);
/* Pins npages against RLIMIT_MEMLOCK: 0, or ENOMEM past the limit without CAP_IPC_LOCK. */
int emu_mem_pin(uint64_t npages);
void emu_mem_unpin(uint64_t npages);

#endif
