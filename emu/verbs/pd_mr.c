/* Protection domains and memory regions: rdma-core's libibverbs wrappers (verbs.c) over the
 * rxe provider's ops, over the HCA model (emu/hca/hca.h) standing in for ib_uverbs + rxe.
 *
 * Conventions (rdma-core 44): ibv_alloc_pd/ibv_reg_mr* return NULL with errno; ibv_dealloc_pd
 * and ibv_dereg_mr return an errno value (EBUSY for a PD still in use) and leave the same value
 * in errno, as the failed write(2) on the uverbs file does; ibv_rereg_mr returns one of
 * enum ibv_rereg_mr_err_code. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "emu/verbs/datapath.h"
#include "emu/verbs/mw.h"
#include "emu/verbs/verbs_priv.h"
#include "util/failcall.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

static void vpd_destroy(struct emu_obj *obj)
{
	free(container_of(obj, struct emu_vpd, epd.obj));
}

static void vmr_destroy(struct emu_obj *obj)
{
	free(container_of(obj, struct emu_vmr, emr.obj));
}

struct ibv_pd *emu_alloc_pd(struct ibv_context *ctx)
{
	struct emu_vctx *c = to_vctx(ctx);
	struct emu_vpd *p = emu_calloc(1, sizeof(*p));
	int err;

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->epd.obj.destroy = vpd_destroy;
	p->epd.obj.user = &p->pd;
	err = emu_hca_pd_alloc(c->hctx, &p->epd);
	if (err) {
		free(p);
		errno = err;
		return NULL;
	}
	p->pd.handle = emu_verbs_handle_get(c);
	return &p->pd;
}

int emu_dealloc_pd(struct ibv_pd *pd)
{
	struct emu_vpd *p = container_of(pd, struct emu_vpd, pd);
	int err = emu_hca_pd_dealloc(&p->epd);

	if (err) {
		errno = err;
		return err;
	}
	emu_verbs_handle_put(to_vctx(pd->context), pd->handle);
	free(p);
	return 0;
}

struct ibv_mr *emu_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			  unsigned access)
{
	struct emu_vpd *p = container_of(pd, struct emu_vpd, pd);
	struct emu_vmr *m = emu_calloc(1, sizeof(*m));
	int err;

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->emr.obj.destroy = vmr_destroy;
	m->emr.obj.user = &m->mr;
	err = emu_hca_mr_reg(&p->epd, addr, length, iova, access, &m->emr);
	if (err) {
		free(m);
		errno = err;
		return NULL;
	}
	m->mr.handle = emu_verbs_handle_get(to_vctx(pd->context));
	m->mr.lkey = m->emr.lkey;
	m->mr.rkey = m->emr.rkey;
	return &m->mr;
}

/* rxe's provider has no rereg_mr: libibverbs' dummy answers EOPNOTSUPP. */
int emu_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	(void)mr, (void)flags, (void)pd, (void)addr, (void)length, (void)access;
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
}

int emu_dereg_mr(struct ibv_mr *mr)
{
	struct emu_vmr *m = container_of(mr, struct emu_vmr, mr);
	int err;

	/* rxe_dereg_mr(): not while a memory window is bound to it (IBA 10.6.7.2.6) */
	if (emu_mw_mr_bound(&m->emr))
		return errno = EINVAL;
	/* a responder in another process placing a READ's data in it stops first (as an HCA
	 * writes no more into a region once it is deregistered) */
	if (emu_xclaim_armed()) {
		struct emu_engine *e = emu_dp_engine();

		if (e) {
			emu_engine_lock(e);
			emu_xclaim_mr_gone(mr->lkey);
			emu_engine_unlock(e);
		}
	}
	err = emu_hca_mr_dereg(&m->emr);
	if (err) {
		errno = err;
		return err;
	}
	emu_verbs_handle_put(to_vctx(mr->context), mr->handle);
	free(m);
	return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd = to_vctx(context)->ops->alloc_pd(context);

	if (pd)
		pd->context = context;
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	return to_vctx(pd->context)->ops->dealloc_pd(pd);
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	bool odp = access & IBV_ACCESS_ON_DEMAND;
	struct ibv_mr *mr;

	/* Linux 6.1 reports IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS: optional bits pass on */
	if (!odp && emu_fork_dontfork(addr, length))
		return NULL;
	mr = to_vctx(pd->context)->ops->reg_mr(pd, addr, length, iova, access);
	if (mr) {
		mr->context = pd->context;
		mr->pd = pd;
		mr->addr = addr;
		mr->length = length;
		/* its pages where a peer process can map them (one copy between processes) */
		if (!odp)
			emu_xmap_reg(addr, length);
	} else if (!odp) {
		int e = errno;

		emu_fork_dofork(addr, length);
		errno = e;
	}
	return mr;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
			       int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned)access);
}

int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		 int access)
{
	int err;

	/* libibverbs' own input checks come first (every MR here is IBV_MR_TYPE_MR) */
	if (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED ||
	    (flags & IBV_REREG_MR_CHANGE_TRANSLATION && (!length || !addr)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION && emu_fork_dontfork(addr, length))
		return IBV_REREG_MR_ERR_DONT_FORK_NEW;
	err = to_vctx(mr->context)->ops->rereg_mr(mr, flags, pd, addr, length, access);
	if (!err)
		return 0;
	err = errno;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION && emu_fork_dofork(addr, length)) {
		errno = err;
		return IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW;
	}
	errno = err;
	return IBV_REREG_MR_ERR_CMD;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	void *addr = mr->addr;
	size_t length = mr->length;
	int ret = to_vctx(mr->context)->ops->dereg_mr(mr);

	if (!ret) {
		emu_xmap_unreg(addr, length);
		emu_fork_dofork(addr, length);
	}
	return ret;
}
