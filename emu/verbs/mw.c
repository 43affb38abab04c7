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

struct emu_vmw {
	struct ibv_mw mw;
	struct emu_obj obj;
	struct emu_pd *pd;
	enum emu_mw_state state;
	uint32_t rkey;           /* the kernel's key (ibv_mw.rkey is the application's copy) */
	struct emu_mr *mr;       /* bound to (rxe: mw->mr, counted in mr->num_mw) */
	struct emu_vqp *qp;      /* type 2: the QP that bound it, with its QPN (the pointer */
	uint32_t qpn;            /* alone could be a later QP's at the same address) */
	uint64_t addr, length;
	unsigned access;
	struct emu_list link;    /* in mw_all */
};

static pthread_mutex_t mw_all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct emu_list mw_all = { &mw_all, &mw_all };

static const char *const mw_state_names[] = {
	[EMU_MW_INVALID] = "INVALID",
	[EMU_MW_FREE] = "FREE",
	[EMU_MW_VALID] = "VALID",
};

const char *emu_mw_state_name(enum emu_mw_state s)
{
	return (unsigned)s < sizeof(mw_state_names) / sizeof(*mw_state_names) ? mw_state_names[s] :
										 "?";
}

static void mw_set_state(struct emu_vmw *m, enum emu_mw_state s, const char *why)
{
	emu_dp_trace("mw %#x: %s --%s--> %s", m->rkey, emu_mw_state_name(m->state), why,
		     emu_mw_state_name(s));
	m->state = s;
}

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
	m = calloc(1, sizeof(*m));
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

/* The window of an rkey's index, or NULL (engine lock held; takes the HCA mutex). */
static struct emu_vmw *mw_find(struct emu_vqp *q, uint32_t rkey)
{
	struct emu_hca *hca = emu_dp_hca(q);
	struct emu_obj *o;

	if (!emu_hca_obj_any(hca, EMU_OBJ_MW)) /* no window on this HCA: every rkey is an MR's */
		return NULL;
	pthread_mutex_lock(emu_hca_lock(hca));
	o = emu_hca_obj_find_locked(hca, EMU_OBJ_MW, rkey >> 8);
	pthread_mutex_unlock(emu_hca_lock(hca));
	return o ? container_of(o, struct emu_vmw, obj) : NULL;
}

static struct emu_mr *mr_find(struct emu_vqp *q, uint32_t lkey)
{
	struct emu_hca *hca = emu_dp_hca(q);
	struct emu_obj *o;

	pthread_mutex_lock(emu_hca_lock(hca));
	o = emu_hca_obj_find_locked(hca, EMU_OBJ_MR, lkey >> 8);
	pthread_mutex_unlock(emu_hca_lock(hca));
	return o ? container_of(o, struct emu_mr, obj) : NULL;
}

/* rxe_check_bind_mw(): the IBTA rules rxe enforces, in its order. */
static int bind_check(struct emu_vqp *q, const struct emu_swqe *w, const struct emu_vmw *m,
		      const struct emu_mr *mr, unsigned access)
{
	const struct ibv_mw_bind_info *bi = &w->wr.bind_mw.bind_info;

	if (m->mw.type == IBV_MW_TYPE_1) {
		if (m->state != EMU_MW_VALID)
			return -EINVAL;
		if (access & IBV_ACCESS_ZERO_BASED) /* o10-36.2.2 */
			return -EINVAL;
	} else {
		if (m->state != EMU_MW_FREE) /* o10-37.2.30: a bound type 2 window */
			return -EINVAL;
		if (m->pd != q->pd) /* C10-72 */
			return -EINVAL;
		if (!mr || !bi->length) /* o10-37.2.40 */
			return -EINVAL;
	}
	if (!mr)
		return 0;
	if (mr->access & EMU_ACCESS_ZERO_BASED)
		return -EINVAL;
	if (!(mr->access & EMU_ACCESS_MW_BIND)) /* C10-73 */
		return -EINVAL;
	if (access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC) &&
	    !(mr->access & EMU_ACCESS_LOCAL_WRITE)) /* C10-74 */
		return -EINVAL;
	if (access & IBV_ACCESS_ZERO_BASED) { /* C10-75 */
		if (bi->length > mr->length)
			return -EINVAL;
	} else if (bi->addr < mr->iova || bi->addr + bi->length > mr->iova + mr->length) {
		return -EINVAL;
	}
	return 0;
}

/* rxe's RXE_ACCESS_SUPPORTED_MW: the remote rights, ZERO_BASED and MW_BIND... as a window
 * takes them */
#define MW_ACCESS_SUPPORTED                                                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |              \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED)

int emu_mw_bind_wqe(struct emu_vqp *q, const struct emu_swqe *w)
{
	const struct ibv_mw_bind_info *bi = &w->wr.bind_mw.bind_info;
	unsigned access = bi->mw_access_flags;
	struct emu_vmw *m = mw_find(q, w->mw_rkey);
	struct emu_mr *mr = NULL;
	int err;

	/* the key the WQE names must be the window's current one: a type 2 window's key moves
	 * with each bind, so an application that does not follow it fails here (measured) */
	if (!m || m->rkey != w->mw_rkey)
		return -EINVAL;
	if (bi->length) {
		mr = mr_find(q, w->mr_lkey);
		if (!mr || mr->lkey != w->mr_lkey)
			return -EINVAL;
	}
	if (access & ~MW_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;
	err = bind_check(q, w, m, mr, access);
	if (err) {
		emu_dp_trace("mw %#x: bind refused (%s)", m->rkey, emu_mw_state_name(m->state));
		return err;
	}
	/* rxe_do_bind_mw() */
	m->rkey = (m->rkey & ~0xffu) | (w->wr.bind_mw.rkey & 0xff);
	m->access = access;
	m->addr = bi->addr;
	m->length = bi->length;
	m->mr = bi->length ? mr : NULL;
	if (m->mw.type == IBV_MW_TYPE_2) {
		m->qp = q;
		m->qpn = q->qp.qp_num;
	}
	mw_set_state(m, EMU_MW_VALID, "bind");
	return 0;
}

int emu_mw_invalidate(struct emu_vqp *q, uint32_t rkey)
{
	struct emu_vmw *m = mw_find(q, rkey);

	/* an MR's key: rxe_invalidate_mr() invalidates only fast-registration MRs, which user
	 * space cannot make: every MR key fails (measured: REM_INV_REQ_ERR) */
	if (!m || m->rkey != rkey)
		return -EINVAL;
	if (m->state == EMU_MW_INVALID || m->mw.type == IBV_MW_TYPE_1) /* o10-37.2.26 */
		return -EINVAL;
	/* rxe_do_invalidate_mw() */
	m->qp = NULL;
	m->qpn = 0;
	m->mr = NULL;
	m->access = 0;
	m->addr = m->length = 0;
	mw_set_state(m, EMU_MW_FREE, "invalidate");
	return 0;
}

enum emu_mr_status emu_dp_rkey_check(struct emu_vqp *q, uint32_t rkey, uint64_t va, uint64_t len,
				     unsigned needed, void **host)
{
	struct emu_vmw *m = mw_find(q, rkey);
	struct emu_mr *mr;

	if (!m)
		return emu_hca_mr_check(emu_dp_hca(q), q->pd, rkey, true, va, len, needed, host);
	/* rxe_lookup_mw() */
	if (m->rkey != rkey || m->pd != q->pd ||
	    (m->mw.type == IBV_MW_TYPE_2 && (m->qp != q || m->qpn != q->qp.qp_num)) ||
	    !m->length || (needed & m->access) != needed || m->state != EMU_MW_VALID)
		return EMU_MR_BAD_KEY;
	mr = m->mr;
	if (!mr)
		return EMU_MR_BAD_KEY;
	if (m->access & IBV_ACCESS_ZERO_BASED)
		va += m->addr;
	/* rxe 6.1 checks the range against the window's MR, not the window (measured: a WRITE
	 * past the window's end but inside the MR succeeds) */
	if (va < mr->iova || len > mr->length || va > mr->iova + mr->length - len)
		return EMU_MR_BAD_RANGE;
	if (host)
		*host = mr->addr + (va - mr->iova);
	return EMU_MR_OK;
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
