/* The extended send API (ibv_wr_start ... ibv_wr_complete) of QPs created with
 * IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, as rdma-core 44's rxe provider implements it
 * (providers/rxe/rxe.c set_qp_send_ops): a builder (wr_send, wr_rdma_write, ...) takes one send
 * queue slot and records wr_id / wr_flags from the ibv_qp_ex; the setters (set_sge,
 * set_ud_addr, set_inline_data...) complete the last one; wr_complete rings the doorbell for
 * all of them at once, wr_abort drops them. Errors are sticky within a batch and returned by
 * wr_complete, which then posts nothing (rxe stores the producer index only without error):
 *   - a builder when the queue has no free slot: ENOSPC (check_qp_queue_full);
 *   - set_inline_data longer than max_inline, set_sge_list of more than max_sge: ENOSPC.
 * The batch is staged here and handed to the data path's post at wr_complete, so every WQE
 * then follows the same path as ibv_post_send's (emu/verbs/post.c, the requester).
 *
 * rxe v44's setters have two slips, and the emulator has them too, because applications on
 * the real stack see them (measured, probes/VM-CHECKS.md):
 *  - wr_set_sge_list takes the message length as num_sge times the first SGE's length (its
 *    summing loop does not advance the list): with SGEs of 30 and 50 bytes 60 bytes go, 30
 *    from each; when that length exceeds the SGEs' sum the WQE completes with
 *    IBV_WC_LOC_QP_OP_ERR and the QP goes to the error state;
 *  - wr_set_inline_data_list never adds to its total: the message is 0 bytes, and each
 *    buffer is checked alone against max_inline.
 * The message length is set on the queued WQEs after the data path's post checks
 * (emu_swqe.length; the requester gathers that many bytes from the SGEs, and refuses a length
 * beyond them). LOCAL_INV, BIND_MW and SEND_WITH_INV run as ibv_post_send's (emu/verbs/mw.c);
 * a batch holding an opcode the data path does not execute (ATOMIC_WRITE) is refused at
 * wr_complete with EINVAL, like ibv_post_send's. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"
#include "util/failcall.h"

struct wrx_ent {
	struct ibv_send_wr wr;
	bool set_len;         /* rxe's message length differs from the SGEs' sum: `len` */
	uint64_t len;
	struct ibv_sge *sge;  /* max_sge entries */
	uint8_t *inl;         /* max_inline bytes: inline data copied at set time */
};

struct emu_wrx {
	pthread_mutex_t lock; /* held from wr_start to wr_complete / wr_abort (rxe: sq.lock) */
	int err;
	uint32_t n, cap;
	struct wrx_ent *e;
};

static struct emu_vqp *qx_vqp(struct ibv_qp_ex *qx)
{
	return container_of(qx, struct emu_vqp, qpx);
}

/* check_qp_queue_full(): a builder needs a free slot beside what is queued and staged. */
static struct wrx_ent *build(struct ibv_qp_ex *qx, enum ibv_wr_opcode op)
{
	struct emu_vqp *q = qx_vqp(qx);
	struct emu_wrx *x = q->wrx;
	struct emu_engine *e = emu_dp_engine();
	struct wrx_ent *w;
	uint32_t queued;

	if (x->err)
		return NULL;
	if (e)
		emu_engine_lock(e);
	queued = q->sq.count;
	if (e)
		emu_engine_unlock(e);
	if (queued + x->n >= q->sq.max_wr || x->n == x->cap) {
		x->err = ENOSPC;
		return NULL;
	}
	w = &x->e[x->n++];
	memset(&w->wr, 0, sizeof(w->wr));
	w->set_len = false;
	w->wr.wr_id = qx->wr_id;
	w->wr.send_flags = qx->wr_flags;
	w->wr.opcode = op;
	w->wr.sg_list = w->sge;
	return w;
}

/* The WQE the setters complete: the last one built, none after an error. */
static struct wrx_ent *last(struct ibv_qp_ex *qx)
{
	struct emu_wrx *x = qx_vqp(qx)->wrx;

	return x->err || !x->n ? NULL : &x->e[x->n - 1];
}

static void wr_rdma(struct ibv_qp_ex *qx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		    __be32 imm)
{
	struct wrx_ent *w = build(qx, op);

	if (!w)
		return;
	w->wr.wr.rdma.rkey = rkey;
	w->wr.wr.rdma.remote_addr = addr;
	w->wr.imm_data = imm;
}

static void wr_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	wr_rdma(qx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr)
{
	wr_rdma(qx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

static void wr_atomic_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr,
			    const void *atomic_wr)
{
	(void)atomic_wr; /* refused at wr_complete: the data path has no ATOMIC_WRITE */
	wr_rdma(qx, IBV_WR_ATOMIC_WRITE, rkey, addr, 0);
}

static void wr_atomic(struct ibv_qp_ex *qx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
		      uint64_t compare_add, uint64_t swap)
{
	struct wrx_ent *w = build(qx, op);

	if (!w)
		return;
	w->wr.wr.atomic.rkey = rkey;
	w->wr.wr.atomic.remote_addr = addr;
	w->wr.wr.atomic.compare_add = compare_add;
	w->wr.wr.atomic.swap = swap;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr,
			      uint64_t compare, uint64_t swap)
{
	wr_atomic(qx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t addr,
				uint64_t add)
{
	wr_atomic(qx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void wr_send(struct ibv_qp_ex *qx)
{
	build(qx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	struct wrx_ent *w = build(qx, IBV_WR_SEND_WITH_IMM);

	if (w)
		w->wr.imm_data = imm;
}

static void wr_send_inv(struct ibv_qp_ex *qx, uint32_t rkey)
{
	struct wrx_ent *w = build(qx, IBV_WR_SEND_WITH_INV);

	if (w)
		w->wr.invalidate_rkey = rkey;
}

static void wr_local_inv(struct ibv_qp_ex *qx, uint32_t rkey)
{
	struct wrx_ent *w = build(qx, IBV_WR_LOCAL_INV);

	if (w)
		w->wr.invalidate_rkey = rkey;
}

static void wr_bind_mw(struct ibv_qp_ex *qx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *info)
{
	struct wrx_ent *w = build(qx, IBV_WR_BIND_MW);

	if (!w)
		return;
	w->wr.bind_mw.mw = mw;
	w->wr.bind_mw.rkey = rkey;
	w->wr.bind_mw.bind_info = *info;
}

static void wr_set_ud_addr(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t remote_qpn,
			   uint32_t remote_qkey)
{
	struct wrx_ent *w = last(qx);

	if (!w)
		return;
	w->wr.wr.ud.ah = ah;
	w->wr.wr.ud.remote_qpn = remote_qpn;
	w->wr.wr.ud.remote_qkey = remote_qkey;
}

/* rxe: a zero length leaves the WQE without SGE */
static void wr_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct wrx_ent *w = last(qx);

	if (!w || !length)
		return;
	w->sge[0] = (struct ibv_sge){ .addr = addr, .length = length, .lkey = lkey };
	w->wr.num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *qx, size_t num_sge, const struct ibv_sge *list)
{
	struct emu_vqp *q = qx_vqp(qx);
	struct wrx_ent *w = last(qx);

	if (!w)
		return;
	if (num_sge > q->sq.max_sge) {
		q->wrx->err = ENOSPC;
		return;
	}
	memcpy(w->sge, list, num_sge * sizeof(*list));
	w->wr.num_sge = (int)num_sge;
	w->set_len = true; /* rxe: num_sge * sg_list[0].length */
	w->len = num_sge ? num_sge * (uint64_t)list[0].length : 0;
}

/* rxe's wr_set_inline_data_list: each buffer alone against max_inline, a message of 0 bytes
 * (the data is never sent, so it is not kept). */
static void wr_set_inline_data_list(struct ibv_qp_ex *qx, size_t num_buf,
				    const struct ibv_data_buf *list)
{
	struct emu_vqp *q = qx_vqp(qx);
	struct wrx_ent *w = last(qx);

	if (!w)
		return;
	for (size_t i = 0; i < num_buf; i++)
		if (list[i].length > q->sq.max_inline) {
			q->wrx->err = ENOSPC;
			return;
		}
	w->wr.num_sge = 0;
	w->set_len = false;
}

/* One buffer: copied now (the caller may reuse it at once), posted as one inline SGE over the
 * copy. */
static void wr_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t length)
{
	struct emu_vqp *q = qx_vqp(qx);
	struct wrx_ent *w = last(qx);

	if (!w)
		return;
	if (length > q->sq.max_inline) {
		q->wrx->err = ENOSPC;
		return;
	}
	if (length)
		memcpy(w->inl, addr, length);
	w->sge[0] = (struct ibv_sge){ .addr = (uintptr_t)w->inl, .length = (uint32_t)length };
	w->wr.num_sge = length ? 1 : 0;
	w->wr.send_flags |= IBV_SEND_INLINE;
	w->set_len = false;
}

static void wr_start(struct ibv_qp_ex *qx)
{
	struct emu_wrx *x = qx_vqp(qx)->wrx;

	pthread_mutex_lock(&x->lock);
	x->err = 0;
	x->n = 0;
}

/* emu_dp_post_send's steps, with rxe's message lengths set on the WQEs just queued (the
 * last x->n of the send queue, in order). */
static int post_batch(struct emu_vqp *q, struct emu_wrx *x)
{
	struct emu_engine *e = emu_dp_engine();
	struct ibv_send_wr *bad = NULL;
	int err, saved;

	for (uint32_t i = 0; i + 1 < x->n; i++)
		x->e[i].wr.next = &x->e[i + 1].wr;
	x->e[x->n - 1].wr.next = NULL;
	if (e)
		emu_engine_lock(e);
	err = emu_qp_post_send_check(q, &x->e[0].wr, &bad);
	saved = errno;
	if (!err) {
		struct emu_list *l = q->sq.list.prev;

		for (uint32_t i = x->n; i-- > 0; l = l->prev) {
			struct emu_swqe *w = emu_list_entry(l, struct emu_swqe, link);

			if (x->e[i].set_len)
				w->length = x->e[i].len;
		}
	}
	if (q->attr.qp_state == IBV_QPS_RTS)
		emu_dp_req_run(q);
	else
		emu_dp_flush(q);
	if (e)
		emu_engine_unlock(e);
	errno = saved;
	return err;
}

static int wr_complete(struct ibv_qp_ex *qx)
{
	struct emu_vqp *q = qx_vqp(qx);
	struct emu_wrx *x = q->wrx;
	int err = x->err;

	if (!err && x->n) {
		emu_dp_trace("qp %u wr_complete: %u WQEs", q->qp.qp_num, x->n);
		err = post_batch(q, x);
	}
	x->n = 0;
	pthread_mutex_unlock(&x->lock);
	return err;
}

static void wr_abort(struct ibv_qp_ex *qx)
{
	struct emu_wrx *x = qx_vqp(qx)->wrx;

	x->n = 0;
	pthread_mutex_unlock(&x->lock);
}

int emu_wrx_init(struct emu_vqp *q, uint64_t flags)
{
	struct ibv_qp_ex *qx = &q->qpx;
	struct emu_wrx *x = emu_calloc(1, sizeof(*x));

	if (!x)
		return ENOMEM;
	x->cap = q->sq.max_wr;
	x->e = emu_calloc(x->cap ? x->cap : 1, sizeof(*x->e));
	if (!x->e) {
		free(x);
		return ENOMEM;
	}
	for (uint32_t i = 0; i < x->cap; i++) {
		x->e[i].sge = emu_calloc(q->sq.max_sge ? q->sq.max_sge : 1, sizeof(struct ibv_sge));
		x->e[i].inl = emu_malloc(q->sq.max_inline ? q->sq.max_inline : 1);
		if (!x->e[i].sge || !x->e[i].inl) {
			x->cap = i + 1;
			q->wrx = x;
			emu_wrx_free(q);
			return ENOMEM;
		}
	}
	pthread_mutex_init(&x->lock, NULL);
	q->wrx = x;
	if (flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	if (flags & IBV_QP_EX_WITH_BIND_MW)
		qx->wr_bind_mw = wr_bind_mw;
	if (flags & IBV_QP_EX_WITH_LOCAL_INV)
		qx->wr_local_inv = wr_local_inv;
	if (flags & IBV_QP_EX_WITH_ATOMIC_WRITE)
		qx->wr_atomic_write = wr_atomic_write;
	if (flags & IBV_QP_EX_WITH_RDMA_READ)
		qx->wr_rdma_read = wr_rdma_read;
	if (flags & IBV_QP_EX_WITH_RDMA_WRITE)
		qx->wr_rdma_write = wr_rdma_write;
	if (flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (flags & IBV_QP_EX_WITH_SEND)
		qx->wr_send = wr_send;
	if (flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qx->wr_send_imm = wr_send_imm;
	if (flags & IBV_QP_EX_WITH_SEND_WITH_INV)
		qx->wr_send_inv = wr_send_inv;
	qx->wr_set_ud_addr = wr_set_ud_addr;
	qx->wr_set_inline_data = wr_set_inline_data;
	qx->wr_set_inline_data_list = wr_set_inline_data_list;
	qx->wr_set_sge = wr_set_sge;
	qx->wr_set_sge_list = wr_set_sge_list;
	qx->wr_start = wr_start;
	qx->wr_complete = wr_complete;
	qx->wr_abort = wr_abort;
	return 0;
}

void emu_wrx_free(struct emu_vqp *q)
{
	struct emu_wrx *x = q->wrx;

	if (!x)
		return;
	for (uint32_t i = 0; i < x->cap; i++) {
		free(x->e[i].sge);
		free(x->e[i].inl);
	}
	free(x->e);
	pthread_mutex_destroy(&x->lock);
	free(x);
	q->wrx = NULL;
}
