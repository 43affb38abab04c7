/* The loopback fast path of the data path (docs/datapath.md, "Fast path").
 *
 * The reference behaviour is the packet path (req.c / resp.c / comp.c): every packet a
 * byte-exact RoCEv2 frame, delivered back into the HCA through a zero-delay engine timer. For
 * RC messages between two QPs of this process on one device, with nobody able to observe
 * packets (no trace, no capture; loopback frames never touch the wire, so no wire fault can
 * apply), that machinery computes a result that depends only on the QPs' state and memory.
 * This file computes the same result directly: a whole batch of send WQEs is validated
 * exactly as the packet path would check it, then executed with one copy a byte, advancing
 * every PSN / MSN / ePSN / rd_atomic / retry counter as the packets would have, and writing
 * the same CQEs in the same order. Whenever anything could come out differently (any error,
 * RNR, a receive WQE from an SRQ, a packet of this QP still outstanding, a responder in the
 * middle of a message, memory hazards between the WQEs of the batch, ...) it declines before
 * touching anything, and the packet path runs as before: it produces the exact error
 * behaviour the tests pin.
 *
 * Why the order of effects is the packet path's. A doorbell (emu_dp_post_send) runs the
 * requester over every POSTED WQE, which queues all their request frames at the current
 * instant; nothing else is due at that instant (every engine call ends with run_now), so when
 * the call's emu_engine_unlock runs them, the responder handles the batch's requests in order
 * (receive CQEs, memory writes, READ data read, atomics executed), and only then, behind them
 * in the FIFO, the completer sees the ACKs / read responses / atomic ACKs (READ and atomic
 * data land in the local SGEs, send CQEs in order). So the observable order is:
 *   phase 0  gathers of every SEND / WRITE payload          (requester, at the doorbell)
 *   phase 1  every responder effect, WQE by WQE             (receive CQEs, remote memory)
 *   phase 2  every completer effect, WQE by WQE             (local READ / atomic data, send CQEs)
 * The fast path runs phases 0 and 1 of each WQE together (the gather is the copy) and leaves
 * the send CQEs to the completer (emu_dp_comp_run) after the batch, as the packet path does.
 * Merging the phases of different WQEs is only invisible when their memory does not overlap
 * across phases; fast_hazard() checks it (conservatively, by bounding boxes) and declines
 * otherwise. Virtual time is not involved: loopback frames are delivered at the same instant.
 * The ports' counters (emu/sim/wire.h) do not see the packets this path does not build: it
 * runs on RoCE ports only, which have no PMA to show them (docs/umad.md); a packet counter
 * that could be read there (rxe's hw_counters) would have to be told about them.
 *
 * Locking: the same as the packet path, nothing more. emu_dp_post_send holds the engine lock,
 * which serialises every QP's data-path state (emu_qp_dp, the work queues) against the other
 * threads' posts, timers and frame deliveries; MR lookups take the HCA mutex
 * (emu_hca_mr_check) and CQEs go through emu_cq_push (CQ mutex, completion channel), as in
 * resp.c / comp.c, so pollers on other threads, completion channels and ibv_req_notify_cq see
 * exactly what the packet path would show them. The engine_unlock that ends the post call still
 * starts a new generation and wakes the waiters. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"

#define FAST_MAX_SGE 4	 /* SGEs per side of one message */
#define FAST_MAX_BATCH 64 /* WQEs per doorbell (the plan is on the stack: ~11 KiB) */

/* How many send WQEs went through the fast path (tests read it through
 * rdmaemu_verbs_fast_count to show that the equivalence test exercised it). */
static uint64_t fast_count;

uint64_t rdmaemu_verbs_fast_count(void) __attribute__((visibility("default")));
uint64_t rdmaemu_verbs_fast_count(void)
{
	return __atomic_load_n(&fast_count, __ATOMIC_RELAXED);
}

struct fast_seg {
	uint8_t *p;
	uint64_t len;
};

struct fast_box { /* [lo, hi) host addresses; empty when lo >= hi */
	uintptr_t lo, hi;
};

struct fast_op {
	struct emu_swqe *w;
	struct emu_rwqe *rw;	 /* SEND / WRITE_WITH_IMM: the receive WQE it takes */
	int nsrc, ndst;
	struct fast_seg src[FAST_MAX_SGE], dst[FAST_MAX_SGE];
	uint64_t *atom;		 /* atomic: the remote 64-bit word */
	uint32_t npkts;
};

static void box_add(struct fast_box *b, const void *p, uint64_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;

	if (!len)
		return;
	if (b->lo >= b->hi) {
		b->lo = lo;
		b->hi = hi;
		return;
	}
	if (lo < b->lo)
		b->lo = lo;
	if (hi > b->hi)
		b->hi = hi;
}

static bool box_meet(const struct fast_box *a, const struct fast_box *b)
{
	return a->lo < a->hi && b->lo < b->hi && a->lo < b->hi && b->lo < a->hi;
}

/* The destination GID is one of the port's own (rxe_net.c's loopback), on a RoCE port, with
 * a valid source GID index: emu_dp_xmit would loop the frame back into this HCA. */
static bool fast_av_local(struct emu_vqp *q)
{
	const struct emu_port *p = emu_verbs_port(q->qp.context, q->av.port_num);

	if (!p || p->link_layer != IBV_LINK_LAYER_ETHERNET || q->av.sgid_index >= p->ngids)
		return false;
	for (size_t i = 0; i < p->ngids; i++)
		if (!memcmp(p->gids[i].raw, q->av.dgid.raw, 16))
			return true;
	return false;
}

/* The QP q's requests loop back to, when its answers loop back to q: what only a state change
 * (AV, destination QPN, path MTU are set on the way to RTR / RTS) or a destroy can alter, so
 * it is cached in q until emu_dp_fast_epoch moves. */
static struct emu_vqp *fast_peer_lookup(struct emu_vqp *q)
{
	struct emu_hca *hca = emu_dp_hca(q);
	struct emu_obj *obj;
	struct emu_vqp *b;

	if (!fast_av_local(q))
		return NULL;
	pthread_mutex_lock(emu_hca_lock(hca));
	obj = emu_hca_obj_find_locked(hca, EMU_OBJ_QP, q->attr.dest_qp_num & EMU_QPN_MASK);
	pthread_mutex_unlock(emu_hca_lock(hca));
	if (!obj)
		return NULL;
	b = container_of(obj, struct emu_vqp, obj);
	/* no SRQ: its limit and accounting stay with resp.c */
	if (b == q || b->qp.qp_type != IBV_QPT_RC || emu_dp_hca(b) != hca || b->srq)
		return NULL;
	/* its answers must come back to q (ACKs, read responses) */
	if ((b->attr.dest_qp_num & EMU_QPN_MASK) != q->qp.qp_num || !fast_av_local(b))
		return NULL;
	/* segmentation: READ responses are cut at the responder's MTU, requests at ours */
	if (emu_dp_mtu(b) != emu_dp_mtu(q))
		return NULL;
	return b;
}

/* The responder QP, when it also receives now and waits for exactly q's next PSN with no
 * message in progress (no NAK state, no SEND half received). */
static struct emu_vqp *fast_peer(struct emu_vqp *q)
{
	uint64_t epoch = __atomic_load_n(&emu_dp_fast_epoch, __ATOMIC_RELAXED);
	struct emu_vqp *b;

	if (q->dp.fast_epoch != epoch) {
		q->dp.fast_peer = fast_peer_lookup(q);
		q->dp.fast_epoch = epoch;
	}
	b = q->dp.fast_peer;
	if (!b)
		return NULL;
	if (b->attr.qp_state != IBV_QPS_RTR && b->attr.qp_state != IBV_QPS_RTS &&
	    b->attr.qp_state != IBV_QPS_SQD)
		return NULL;
	if (b->dp.resp_psn != q->dp.req_psn || b->dp.resp_nak_sent || b->dp.resp_wqe)
		return NULL;
	return b;
}

/* Checks SGEs as emu_dp_copy_sge would for `len` bytes from the start (the packet path
 * checks each packet's piece; a whole used range inside its MR is the same verdict) and
 * records their host addresses. */
static bool fast_sges(struct emu_vqp *q, const struct ibv_sge *sge, int n, uint64_t len,
		      unsigned access, struct fast_seg *out, int *nout)
{
	*nout = 0;
	for (int i = 0; i < n && len; i++) {
		uint64_t take = sge[i].length < len ? sge[i].length : len;
		void *host;

		if (!take)
			continue;
		if (*nout == FAST_MAX_SGE ||
		    emu_hca_mr_check(emu_dp_hca(q), q->pd, sge[i].lkey, false, sge[i].addr, take,
				     access, &host) != EMU_MR_OK)
			return false;
		out[*nout].p = host;
		out[*nout].len = take;
		(*nout)++;
		len -= take;
	}
	return !len;
}

static bool fast_rkey(struct emu_vqp *b, uint32_t rkey, uint64_t va, uint64_t len,
		      unsigned access, void **host)
{
	return emu_hca_mr_check(emu_dp_hca(b), b->pd, rkey, true, va, len, access, host) ==
	       EMU_MR_OK;
}

static void segs_box(struct fast_box *bx, const struct fast_seg *s, int n)
{
	for (int i = 0; i < n; i++)
		box_add(bx, s[i].p, s[i].len);
}

/* Validates one WQE as the packet path would, without side effects: false when anything
 * would not be a plain success (the packet path then runs the whole batch). */
static bool fast_plan(struct emu_vqp *q, struct emu_vqp *b, struct fast_op *op,
		      struct emu_list **rnext, uint32_t mtu)
{
	struct emu_swqe *w = op->w;
	void *host = NULL;

	if (w->length > (1u << 31) || w->wr.num_sge > FAST_MAX_SGE)
		return false;
	op->rw = NULL;
	op->nsrc = op->ndst = 0;
	op->atom = NULL;
	op->npkts = w->length ? (uint32_t)((w->length + mtu - 1) / mtu) : 1;
	switch (w->wr.opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		/* gather (req_wqe): inline data was copied at post time */
		if (w->is_inline) {
			if (w->length) {
				op->src[0].p = w->inl;
				op->src[0].len = w->length;
				op->nsrc = 1;
			}
		} else if (!fast_sges(q, w->sge, w->wr.num_sge, w->length, 0, op->src, &op->nsrc)) {
			return false;
		}
		if (w->wr.opcode == IBV_WR_SEND || w->wr.opcode == IBV_WR_SEND_WITH_IMM ||
		    w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
			/* a receive WQE (none: RNR) */
			if (*rnext == &b->rq.list)
				return false;
			op->rw = emu_list_entry(*rnext, struct emu_rwqe, link);
			*rnext = (*rnext)->next;
		}
		if (w->wr.opcode == IBV_WR_SEND || w->wr.opcode == IBV_WR_SEND_WITH_IMM) {
			/* longer than the receive WQE, or a scatter lkey error: class A/C */
			if (w->length > op->rw->length || op->rw->num_sge > FAST_MAX_SGE ||
			    !fast_sges(b, op->rw->sge, op->rw->num_sge, w->length,
				       EMU_ACCESS_LOCAL_WRITE, op->dst, &op->ndst))
				return false;
			return true;
		}
		if (!(b->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE))
			return false;
		if (w->length) { /* rxe: a zero-byte WRITE needs neither address nor rkey */
			if (!fast_rkey(b, w->wr.wr.rdma.rkey, w->wr.wr.rdma.remote_addr, w->length,
				       EMU_ACCESS_REMOTE_WRITE, &host))
				return false;
			op->dst[0].p = host;
			op->dst[0].len = w->length;
			op->ndst = 1;
		}
		return true;
	case IBV_WR_RDMA_READ:
		if (!(b->attr.qp_access_flags & IBV_ACCESS_REMOTE_READ) || !b->attr.max_dest_rd_atomic)
			return false;
		if (w->length) {
			if (!fast_rkey(b, w->wr.wr.rdma.rkey, w->wr.wr.rdma.remote_addr, w->length,
				       EMU_ACCESS_REMOTE_READ, &host))
				return false;
			op->src[0].p = host;
			op->src[0].len = w->length;
			op->nsrc = 1;
		}
		return fast_sges(q, w->sge, w->wr.num_sge, w->length, EMU_ACCESS_LOCAL_WRITE, op->dst,
				 &op->ndst);
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		op->npkts = 1;
		if (!(b->attr.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC) ||
		    !b->attr.max_dest_rd_atomic ||
		    !fast_rkey(b, w->wr.wr.atomic.rkey, w->wr.wr.atomic.remote_addr,
			       sizeof(uint64_t), EMU_ACCESS_REMOTE_ATOMIC, &host) ||
		    (uintptr_t)host & 7)
			return false;
		op->atom = host;
		return fast_sges(q, w->sge, w->wr.num_sge, sizeof(uint64_t), EMU_ACCESS_LOCAL_WRITE,
				 op->dst, &op->ndst);
	default:
		return false;
	}
}

/* Memory touched in a phase the fast path moves (see the head comment): a WQE's gather
 * (phase 0) or its responder effect (phase 1) must not overlap what an earlier WQE of the
 * batch writes in a later phase than the packet path gives it, nor its own writes (the packet
 * path copies through a frame; here source and destination would alias). */
static bool fast_hazard(const struct fast_op *op, struct fast_box *w1, struct fast_box *w2)
{
	struct fast_box r0 = { 0, 0 }, x1 = { 0, 0 }, r1 = { 0, 0 }, x2 = { 0, 0 };
	enum ibv_wr_opcode o = op->w->wr.opcode;

	if (o == IBV_WR_RDMA_READ) {
		segs_box(&r1, op->src, op->nsrc);
		segs_box(&x2, op->dst, op->ndst);
	} else if (emu_wr_is_atomic(o)) {
		box_add(&r1, op->atom, sizeof(uint64_t));
		box_add(&x1, op->atom, sizeof(uint64_t));
		segs_box(&x2, op->dst, op->ndst);
	} else {
		if (!op->w->is_inline)
			segs_box(&r0, op->src, op->nsrc);
		segs_box(&x1, op->dst, op->ndst);
	}
	if (box_meet(&r0, w1) || box_meet(&r0, w2) || box_meet(&r0, &x1) ||
	    box_meet(&x1, w2) || box_meet(&r1, w2) || box_meet(&r1, &x2) || box_meet(&x1, &x2))
		return true;
	if (x1.lo < x1.hi)
		box_add(w1, (void *)x1.lo, x1.hi - x1.lo);
	if (x2.lo < x2.hi)
		box_add(w2, (void *)x2.lo, x2.hi - x2.lo);
	return false;
}

/* Copies between two segment lists of the same total length. */
static void seg_copy(struct fast_seg *dst, int nd, const struct fast_seg *src, int ns)
{
	int i = 0, j = 0;
	uint64_t di = 0, sj = 0;

	while (i < nd && j < ns) {
		uint64_t n = dst[i].len - di;

		if (src[j].len - sj < n)
			n = src[j].len - sj;
		memcpy(dst[i].p + di, src[j].p + sj, n);
		di += n;
		sj += n;
		if (di == dst[i].len)
			i++, di = 0;
		if (sj == src[j].len)
			j++, sj = 0;
	}
}

/* What rxe's completer does when a WQE is acknowledged (comp.c's set_state to DONE). */
static void fast_done(struct emu_vqp *q, struct emu_swqe *w)
{
	w->state = EMU_WQE_DONE;
	w->status = 0;
	emu_dp_rd_atomic_put(q, w);
	q->dp.rnr_left = q->attr.rnr_retry;
	q->dp.retry_left = q->attr.retry_cnt;
	q->dp.retry_started = false;
}

/* Phases 0-2 of one validated WQE, minus the send CQE (left to emu_dp_comp_run). */
static void fast_exec(struct emu_vqp *q, struct emu_vqp *b, struct fast_op *op)
{
	struct emu_swqe *w = op->w;
	uint32_t psn = q->dp.req_psn;
	enum ibv_wr_opcode o = w->wr.opcode;

	/* requester */
	w->first_psn = psn;
	w->last_psn = (psn + op->npkts - 1) & EMU_PSN_MASK;
	q->dp.req_psn = (psn + op->npkts) & EMU_PSN_MASK;
	if (o == IBV_WR_RDMA_READ || emu_wr_is_atomic(o)) {
		/* rd_atomic_get then, at the answer, emu_dp_rd_atomic_put */
		q->dp.need_rd_atomic = false;
	} else {
		q->dp.noack_pkts = 0; /* the last packet asks for an ACK */
	}
	/* responder (resp.c), with the state its packets would leave */
	b->dp.resp_psn = q->dp.req_psn;
	b->dp.resp_msn++;
	switch (o) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		seg_copy(op->dst, op->ndst, op->src, op->nsrc);
		b->dp.resp_off = (uint32_t)w->length;
		emu_dp_fast_recv_wc(b, op->rw, IBV_WC_RECV, (uint32_t)w->length, w);
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		seg_copy(op->dst, op->ndst, op->src, op->nsrc);
		b->dp.resp_va = w->wr.wr.rdma.remote_addr + w->length;
		b->dp.resp_rkey = w->wr.wr.rdma.rkey;
		b->dp.resp_resid = 0;
		b->dp.resp_length = (uint32_t)w->length;
		if (op->rw) {
			b->dp.resp_off = 0;
			emu_dp_fast_recv_wc(b, op->rw, IBV_WC_RECV_RDMA_WITH_IMM, (uint32_t)w->length, w);
		}
		break;
	case IBV_WR_RDMA_READ:
		b->dp.resp_va = w->wr.wr.rdma.remote_addr;
		b->dp.resp_rkey = w->wr.wr.rdma.rkey;
		b->dp.resp_resid = b->dp.resp_length = (uint32_t)w->length;
		emu_dp_res_add(b, false, psn, w->last_psn, 0);
		/* completer: the response data into the local SGEs */
		seg_copy(op->dst, op->ndst, op->src, op->nsrc);
		w->read_off = w->length;
		break;
	default: { /* atomics: rxe's atomic_reply, then the completer's do_atomic */
		uint64_t orig;
		struct fast_seg s = { (uint8_t *)&orig, sizeof(orig) };

		if (o == IBV_WR_ATOMIC_CMP_AND_SWP) {
			orig = w->wr.wr.atomic.compare_add;
			__atomic_compare_exchange_n(op->atom, &orig, w->wr.wr.atomic.swap, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		} else {
			orig = __atomic_fetch_add(op->atom, w->wr.wr.atomic.compare_add,
						  __ATOMIC_SEQ_CST);
		}
		emu_dp_res_add(b, true, psn, psn, orig);
		seg_copy(op->dst, op->ndst, &s, 1);
		break;
	}
	}
	fast_done(q, w);
}

bool emu_dp_fast_run(struct emu_engine *e, struct emu_vqp *q)
{
	struct fast_op ops[FAST_MAX_BATCH];
	struct fast_box w1 = { 0, 0 }, w2 = { 0, 0 };
	struct emu_list *rnext;
	struct emu_vqp *b;
	uint32_t mtu, rd = 0;
	uint64_t due;
	int n = 0;

	if (q->qp.qp_type != IBV_QPT_RC || q->attr.qp_state != IBV_QPS_RTS || q->dp.rnr_armed ||
	    q->dp.retry_armed || emu_list_empty(&q->sq.list) || !emu_dp_fast_on())
		return false;
	/* every queued WQE is new: none of this QP's packets is in flight or to be resent */
	for (struct emu_list *l = q->sq.list.next; l != &q->sq.list; l = l->next) {
		struct emu_swqe *w = emu_list_entry(l, struct emu_swqe, link);

		if (w->state != EMU_WQE_POSTED || n == FAST_MAX_BATCH)
			return false;
		ops[n++].w = w;
	}
	b = fast_peer(q);
	if (!b)
		return false;
	/* nothing else due now (the head comment's argument; an engine call that ran into the
	 * step limit could leave work at this instant, which the batch's frames would queue
	 * behind) */
	if (emu_clock_next_deadline(emu_engine_clock(e), &due) && due <= emu_engine_now(e))
		return false;
	mtu = emu_dp_mtu(q);
	rnext = b->rq.list.next;
	for (int i = 0; i < n; i++) {
		enum ibv_wr_opcode o = ops[i].w->wr.opcode;

		/* rxe's check_init_depth: all READs / atomics of the batch get a slot at once */
		if ((o == IBV_WR_RDMA_READ || emu_wr_is_atomic(o)) &&
		    q->dp.rd_atomic_out + ++rd > q->attr.max_rd_atomic)
			return false;
		if (!fast_plan(q, b, &ops[i], &rnext, mtu) || fast_hazard(&ops[i], &w1, &w2))
			return false;
	}
	for (int i = 0; i < n; i++)
		fast_exec(q, b, &ops[i]);
	__atomic_fetch_add(&fast_count, (uint64_t)n, __ATOMIC_RELAXED);
	/* the completer: send CQEs in order, after every receive CQE of the batch */
	emu_dp_comp_run(q);
	return true;
}
