/* Memory windows as Linux 6.1 rxe implements them (rxe_mw.c, rxe_resp.c check_rkey,
 * rxe_req.c rxe_do_local_ops) under rdma-core 44's rxe provider (rxe_alloc_mw, rxe_bind_mw).
 * Measured on kernel rxe with probes/verbs/verbs_probe_mw.c (docs/mw.md).
 *
 * Locking: a window's binding (state, rkey, MR, QP, range, access) changes only in the data
 * path (BIND_MW / LOCAL_INV WQEs at the requester, SEND_WITH_INV at the responder) and is read
 * there, all with the engine lock held; the pool lookup takes the HCA mutex. dealloc takes
 * both. The list of windows (for dereg's "bound to this MR" check) has its own mutex. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "emu/verbs/mw.h"
#include "emu/verbs/mw_dp.h"
#include "util/failcall.h"

static pthread_mutex_t mw_all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_list mw_all = { &mw_all, &mw_all };

static void mw_unlist(struct emu_vmw *m)
{
	pthread_mutex_lock(&mw_all_lock);
	emu_list_del(&m->link);
	pthread_mutex_unlock(&mw_all_lock);
}

/* The context closes with the window still allocated (HCA mutex held). */
static void vmw_destroy(struct emu_obj *obj)
{
	struct emu_vmw *m = container_of(obj, struct emu_vmw, obj);

	m->pd->obj.usecnt--;
	mw_unlist(m);
	free(m);
}

/* rxe_alloc_mw(): a pool index, a fresh key byte, type 1 VALID (bound to nothing: length 0),
 * type 2 FREE. ib_uverbs_alloc_mw refuses other types with EINVAL (measured). */
struct ibv_mw *emu_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct emu_vpd *p = container_of(pd, struct emu_vpd, pd);
	struct emu_vctx *c = to_vctx(pd->context);
	struct emu_vmw *m;
	int err;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	m = emu_calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->obj.type = EMU_OBJ_MW;
	m->obj.destroy = vmw_destroy;
	m->obj.user = &m->mw;
	pthread_mutex_lock(emu_hca_lock(c->hca));
	err = emu_hca_obj_add_locked(c->hctx, &m->obj);
	if (!err) {
		p->epd.obj.usecnt++; /* uverbs: the PD is in use while the window exists */
		m->pd = &p->epd;
		m->rkey = m->obj.index << 8 | emu_hca_key_next_locked(c->hca);
		m->state = type == IBV_MW_TYPE_2 ? EMU_MW_FREE : EMU_MW_VALID;
	}
	pthread_mutex_unlock(emu_hca_lock(c->hca));
	if (err) {
		free(m);
		errno = err;
		return NULL;
	}
	pthread_mutex_lock(&mw_all_lock);
	emu_list_add_tail(&mw_all, &m->link);
	pthread_mutex_unlock(&mw_all_lock);
	m->mw.context = pd->context;
	m->mw.pd = pd;
	m->mw.rkey = m->rkey;
	m->mw.type = type;
	m->mw.handle = emu_verbs_handle_get(c);
	return &m->mw;
}

/* rxe_dealloc_mw(): always succeeds; the window's MR and QP are let go (rxe_mw_cleanup). */
int emu_dealloc_mw(struct ibv_mw *mw)
{
	struct emu_vmw *m = container_of(mw, struct emu_vmw, mw);
	struct emu_vctx *c = to_vctx(mw->context);
	struct emu_engine *e = emu_dp_engine();
	int err;

	if (e)
		emu_engine_lock(e); /* no packet is checked against the window meanwhile */
	pthread_mutex_lock(emu_hca_lock(c->hca));
	err = emu_hca_obj_remove_locked(&m->obj);
	if (!err)
		m->pd->obj.usecnt--;
	pthread_mutex_unlock(emu_hca_lock(c->hca));
	if (!err)
		mw_unlist(m);
	if (e)
		emu_engine_unlock(e);
	if (err) {
		errno = err;
		return err;
	}
	emu_verbs_handle_put(c, mw->handle);
	free(m);
	return 0;
}

/* rdma-core 44 rxe_bind_mw(): ZERO_BASED is refused here; otherwise a BIND_MW WR with the
 * window's next key byte goes through post_send, and the application's copy of the rkey
 * moves on only when that post succeeded (an error completion leaves it to the application
 * to undo, as the provider's comment says). The inline ibv_bind_mw has already checked the
 * type (1), the MR's PD and an MR-less bind's range. A NULL MR (an unbind) is dereferenced by
 * the real provider (a segfault); here it binds with lkey 0 and length 0. */
int emu_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	int err;

	if (bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED) {
		errno = EINVAL;
		return EINVAL;
	}
	wr.wr_id = bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.bind_info = bind->bind_info;
	wr.bind_mw.rkey = (mw->rkey & 0xffffff00u) | ((mw->rkey + 1) & 0xff);
	err = qp->context->ops.post_send(qp, &wr, &bad);
	if (err) {
		errno = err;
		return err;
	}
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

bool emu_mw_mr_bound(const struct emu_mr *mr)
{
	struct emu_engine *e = emu_dp_engine();
	bool bound = false;

	if (e)
		emu_engine_lock(e); /* bindings change in the data path, under this lock */
	pthread_mutex_lock(&mw_all_lock);
	for (struct emu_list *l = mw_all.next; l != &mw_all && !bound; l = l->next)
		bound = container_of(l, struct emu_vmw, link)->mr == mr;
	pthread_mutex_unlock(&mw_all_lock);
	if (e)
		emu_engine_unlock(e);
	return bound;
}
