/* HCA registry, user contexts and the per-type object pools (see emu/hca/hca.h).
 *
 * The pools follow rxe's (drivers/infiniband/sw/rxe/rxe_pool.c and rxe_param.h of Linux 6.1):
 * an index range per type, indices allocated cyclically (a freed index is not reused until the
 * range wraps), and a limit on the number of live objects taken from the device caps. What the
 * kernel returns when a pool is full differs by type: MRs come from rxe_alloc() (NULL, which
 * rxe_reg_user_mr turns into ENOMEM); the other objects are allocated by ib_core and added
 * with rxe_add_to_pool(), which returns EINVAL. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/hca/hca_priv.h"
#include "util/failcall.h"

/* rxe_param.h (6.1): DEFAULT_MAX_VALUE = 1 << 20. */
#define RXE_MAX_VALUE (1u << 20)

static const struct pool_info {
	const char *name;
	uint32_t min_index, max_index;
	int full_errno;
} pool_info[EMU_OBJ_NTYPES] = {
	[EMU_OBJ_AH] = { "ah", 1, 0x7fff, EINVAL },
	[EMU_OBJ_QP] = { "qp", 16, RXE_MAX_VALUE, EINVAL },
	[EMU_OBJ_SRQ] = { "srq", 0x20001, RXE_MAX_VALUE, EINVAL },
	[EMU_OBJ_CQ] = { "cq", 1, RXE_MAX_VALUE, EINVAL },
	[EMU_OBJ_MW] = { "mw", (RXE_MAX_VALUE >> 1) + 1, RXE_MAX_VALUE, EINVAL },
	[EMU_OBJ_MR] = { "mr", 1, RXE_MAX_VALUE >> 1, ENOMEM },
	[EMU_OBJ_PD] = { "pd", 1, RXE_MAX_VALUE, EINVAL },
};

/* QP numbers this process may hand out (emu_hca_set_qp_range): the whole rxe range unless a
 * daemon shares the host between processes and gave this one a slice of it. */
static uint32_t qp_range_min = 16, qp_range_max = RXE_MAX_VALUE, qp_range_first = 16;

void emu_hca_set_qp_range(uint32_t min, uint32_t max)
{
	qp_range_min = min;
	qp_range_max = max;
	qp_range_first = min;
}

/* What a process is told, once, when its slice is used up (emu_hca_set_qp_range_note). */
static const char *qp_range_note;

void emu_hca_set_qp_range_note(const char *note)
{
	qp_range_note = note;
}

void emu_hca_set_qp_first(uint32_t first)
{
	qp_range_first = first;
}

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_list registry = { &registry, &registry };

/* The count limit of a type: the device cap (rxe reports exactly its pool sizes). */
static uint32_t pool_cap(const struct emu_device_caps *c, enum emu_obj_type t)
{
	switch (t) {
	case EMU_OBJ_AH: return c->max_ah;
	case EMU_OBJ_QP: return c->max_qp;
	case EMU_OBJ_SRQ: return c->max_srq;
	case EMU_OBJ_CQ: return c->max_cq;
	case EMU_OBJ_MR: return c->max_mr;
	case EMU_OBJ_PD: return c->max_pd;
	default: return pool_info[t].max_index - pool_info[t].min_index + 1;
	}
}

static void pool_init(struct hca_pool *p, const struct emu_device_caps *caps, enum emu_obj_type t)
{
	uint32_t range = pool_info[t].max_index - pool_info[t].min_index + 1;

	memset(p, 0, sizeof(*p));
	p->min_index = pool_info[t].min_index;
	p->max_elem = pool_cap(caps, t);
	/* A fixture may raise a cap above rxe's range: widen the range so the cap can be met. */
	p->max_index = p->max_elem > range ? p->min_index + p->max_elem - 1 : pool_info[t].max_index;
	if (t == EMU_OBJ_QP && (qp_range_min != pool_info[t].min_index ||
				qp_range_max != pool_info[t].max_index)) {
		p->min_index = qp_range_min;
		p->max_index = qp_range_max;
		p->qp_slice = true;
	}
	p->next = p->min_index;
	if (t == EMU_OBJ_QP && qp_range_first > p->min_index && qp_range_first <= p->max_index)
		p->next = qp_range_first;
	p->full_errno = pool_info[t].full_errno;
}

/* Grows the slot array to hold `index` (slots are allocated lazily: a process using ten MRs
 * does not pay for rxe's half a million). */
static int pool_reserve(struct hca_pool *p, uint32_t index)
{
	size_t want = (size_t)(index - p->min_index) + 1, n;
	struct emu_obj **s;

	if (want <= p->nslots)
		return 0;
	n = p->nslots ? p->nslots : 64;
	while (n < want)
		n *= 2;
	if (n > (size_t)(p->max_index - p->min_index) + 1)
		n = (size_t)(p->max_index - p->min_index) + 1;
	s = emu_realloc(p->slots, n * sizeof(*s));
	if (!s)
		return ENOMEM;
	memset(s + p->nslots, 0, (n - p->nslots) * sizeof(*s));
	p->slots = s;
	p->nslots = n;
	return 0;
}

/* xa_alloc_cyclic(): the first free index at or after `next`, wrapping once to min_index. */
static int pool_alloc_index(struct hca_pool *p, uint32_t *index)
{
	uint64_t span = (uint64_t)p->max_index - p->min_index + 1;
	uint32_t i = p->next;

	for (uint64_t tried = 0; tried < span; tried++) {
		if (i < p->min_index || i > p->max_index)
			i = p->min_index;
		if (i - p->min_index >= p->nslots || !p->slots[i - p->min_index]) {
			if (pool_reserve(p, i))
				return ENOMEM;
			*index = i;
			p->next = i == p->max_index ? p->min_index : i + 1;
			return 0;
		}
		i++;
	}
	if (p->qp_slice && qp_range_note) {
		static bool told;

		if (!__atomic_exchange_n(&told, true, __ATOMIC_RELAXED))
			fprintf(stderr, "%s", qp_range_note);
	}
	return p->full_errno;
}

/* What the kernel itself allocates on every RDMA device before any user: ib_mad opens each port
 * with ib_alloc_pd(), and as rxe lacks IB_DEVICE_LOCAL_DMA_LKEY that PD comes with a DMA MR. So
 * on a one-port rxe the first user MR has index 2 (lkey 0x2xx, measured in scripts/rxe-vm), and
 * these objects count against max_pd/max_mr. A non-NULL sentinel holds their slots. */
static struct emu_obj kernel_obj;

static void hca_reserve_kernel_objects(struct emu_hca *hca)
{
	/* ib_mad also allocates a CQ and creates the GSI QP (QP1) per port: rxe gives QP1 the
	 * first QP index (16) although it answers to QPN 1, so the first user QP is 17 (measured
	 * in scripts/rxe-vm). */
	static const enum emu_obj_type types[] = { EMU_OBJ_PD, EMU_OBJ_MR, EMU_OBJ_CQ, EMU_OBJ_QP };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		struct hca_pool *p = &hca->pools[types[t]];

		for (size_t port = 0; port < hca->dev->nports && p->count < p->max_elem; port++) {
			uint32_t index;

			if (pool_alloc_index(p, &index))
				break;
			p->slots[index - p->min_index] = &kernel_obj;
			p->count++;
		}
	}
}

struct emu_hca *emu_hca_get(const struct emu_device *dev)
{
	struct emu_list *pos, *tmp;
	struct emu_hca *hca = NULL;

	pthread_mutex_lock(&registry_lock);
	emu_list_for_each_safe(pos, tmp, &registry) {
		struct emu_hca *h = emu_list_entry(pos, struct emu_hca, link);

		if (h->dev == dev) {
			hca = h;
			break;
		}
	}
	if (!hca) {
		hca = emu_calloc(1, sizeof(*hca));
		if (!hca) {
			pthread_mutex_unlock(&registry_lock);
			errno = ENOMEM;
			return NULL;
		}
		hca->dev = dev;
		pthread_mutex_init(&hca->lock, NULL);
		for (int t = 0; t < EMU_OBJ_NTYPES; t++)
			pool_init(&hca->pools[t], &dev->caps, t);
		hca_keys_init(hca);
		hca_reserve_kernel_objects(hca);
		emu_list_add_tail(&registry, &hca->link);
	}
	hca->refcnt++;
	pthread_mutex_unlock(&registry_lock);
	return hca;
}

void emu_hca_put(struct emu_hca *hca)
{
	if (!hca)
		return;
	pthread_mutex_lock(&registry_lock);
	if (--hca->refcnt == 0) {
		emu_list_del(&hca->link);
		for (int t = 0; t < EMU_OBJ_NTYPES; t++)
			free(hca->pools[t].slots);
		pthread_mutex_destroy(&hca->lock);
		free(hca);
	}
	pthread_mutex_unlock(&registry_lock);
}

const struct emu_device *emu_hca_device(const struct emu_hca *hca)
{
	return hca->dev;
}

pthread_mutex_t *emu_hca_lock(struct emu_hca *hca)
{
	return &hca->lock;
}

int emu_hca_ctx_open(struct emu_hca *hca, struct emu_hca_ctx **out)
{
	struct emu_hca_ctx *ctx = emu_calloc(1, sizeof(*ctx));

	if (!ctx)
		return ENOMEM;
	ctx->hca = hca;
	for (int t = 0; t < EMU_OBJ_NTYPES; t++)
		emu_list_init(&ctx->objs[t]);
	pthread_mutex_lock(&hca->lock);
	hca->nctx++;
	pthread_mutex_unlock(&hca->lock);
	*out = ctx;
	return 0;
}

/* Destroys what the context still holds, dependents first (the enum's order), like the
 * kernel's cleanup of a closed uverbs file. Use counts only come from objects of the same
 * context (a context cannot reference another's objects), so they drain to zero here. */
void emu_hca_ctx_close(struct emu_hca_ctx *ctx)
{
	struct emu_hca *hca;

	if (!ctx)
		return;
	hca = ctx->hca;
	pthread_mutex_lock(&hca->lock);
	for (int t = 0; t < EMU_OBJ_NTYPES; t++) {
		struct emu_list *pos, *tmp;

		emu_list_for_each_safe(pos, tmp, &ctx->objs[t]) {
			struct emu_obj *o = emu_list_entry(pos, struct emu_obj, link);

			o->usecnt = 0; /* its dependents went in an earlier pass */
			emu_hca_obj_remove_locked(o);
			if (o->destroy)
				o->destroy(o);
		}
	}
	hca->nctx--;
	pthread_mutex_unlock(&hca->lock);
	free(ctx);
}

struct emu_hca *emu_hca_ctx_hca(const struct emu_hca_ctx *ctx)
{
	return ctx->hca;
}

int emu_hca_obj_add_locked(struct emu_hca_ctx *ctx, struct emu_obj *obj)
{
	struct hca_pool *p = &ctx->hca->pools[obj->type];
	uint32_t index = 0;
	int err;

	if (p->count >= p->max_elem)
		return p->full_errno;
	err = pool_alloc_index(p, &index);
	if (err)
		return err;
	p->slots[index - p->min_index] = obj;
	__atomic_store_n(&p->count, p->count + 1, __ATOMIC_RELAXED); /* emu_hca_obj_any */
	obj->index = index;
	obj->hca = ctx->hca;
	obj->ctx = ctx;
	obj->usecnt = 0;
	emu_list_add_tail(&ctx->objs[obj->type], &obj->link);
	return 0;
}

int emu_hca_obj_remove_locked(struct emu_obj *obj)
{
	struct hca_pool *p = &obj->hca->pools[obj->type];

	if (obj->usecnt)
		return EBUSY;
	p->slots[obj->index - p->min_index] = NULL;
	__atomic_store_n(&p->count, p->count - 1, __ATOMIC_RELAXED);
	emu_list_del(&obj->link);
	return 0;
}

struct emu_obj *emu_hca_obj_find_locked(struct emu_hca *hca, enum emu_obj_type type,
					uint32_t index)
{
	struct hca_pool *p;

	if ((unsigned)type >= EMU_OBJ_NTYPES)
		return NULL;
	p = &hca->pools[type];
	return index >= p->min_index && index - p->min_index < p->nslots ?
		p->slots[index - p->min_index] : NULL;
}

void emu_hca_obj_span_locked(struct emu_hca *hca, enum emu_obj_type type, uint32_t *first,
			     uint32_t *end)
{
	const struct hca_pool *p = (unsigned)type < EMU_OBJ_NTYPES ? &hca->pools[type] : NULL;

	*first = p ? p->min_index : 0;
	*end = p ? p->min_index + (uint32_t)p->nslots : 0;
}

bool emu_hca_obj_any(struct emu_hca *hca, enum emu_obj_type type)
{
	return __atomic_load_n(&hca->pools[type].count, __ATOMIC_RELAXED) != 0;
}

unsigned emu_hca_obj_count(struct emu_hca *hca, enum emu_obj_type type)
{
	unsigned n;

	pthread_mutex_lock(&hca->lock);
	n = hca->pools[type].count;
	pthread_mutex_unlock(&hca->lock);
	return n;
}
