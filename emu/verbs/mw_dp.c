/* Memory windows as the data path uses them (rxe_mw.c, rxe_resp.c check_rkey, rxe_req.c
 * rxe_do_local_ops, Linux 6.1): a BIND_MW WQE binds a window, LOCAL_INV and SEND_WITH_INV
 * invalidate one, and the responder's R_Key check finds a window or an MR behind a key. The
 * windows themselves are made and freed by the verbs (emu/verbs/mw.c). Engine lock held; the
 * pool lookup takes the HCA mutex. */
#include "config.h"

#include <errno.h>

#include "emu/verbs/mw_dp.h"

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
