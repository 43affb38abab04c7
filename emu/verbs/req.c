/* The requester (rxe_req.c in miniature): turns posted send WQEs into packets, segmented at
 * the path MTU with a PSN each (their frames: emu/verbs/net.c), and runs the local
 * operations (BIND_MW, LOCAL_INV) itself. Engine lock held (emu/verbs/datapath.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/link/link.h"
#include "emu/verbs/datapath.h"
#include "emu/verbs/mw_dp.h"

#define RXE_MAX_UNACKED_PSNS 128 /* rxe: an AckReq at least this often */

static const char *const req_state_names[] = { "NEXT_WQE", "SEND_PKT", "DONE", "ERROR" };
enum req_state { REQ_NEXT_WQE, REQ_SEND_PKT, REQ_DONE, REQ_ERROR };

/* The opcode of one packet of a SEND / RDMA WRITE on RC or UC: the same low five bits on
 * both transports (IBTA table 39), the transport in the top three. */
static uint8_t conn_opcode(const struct emu_swqe *w, bool first, bool last)
{
	bool imm = w->wr.opcode == IBV_WR_SEND_WITH_IMM || w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;

	bool inv = w->wr.opcode == IBV_WR_SEND_WITH_INV;

	if (w->wr.opcode == IBV_WR_SEND || w->wr.opcode == IBV_WR_SEND_WITH_IMM || inv) {
		if (first && last)
			return imm ? EMU_OP_SEND_ONLY_IMM :
				     inv ? EMU_OP_SEND_ONLY_INV : EMU_OP_SEND_ONLY;
		if (first)
			return EMU_OP_SEND_FIRST;
		if (!last)
			return EMU_OP_SEND_MIDDLE;
		return imm ? EMU_OP_SEND_LAST_IMM : inv ? EMU_OP_SEND_LAST_INV : EMU_OP_SEND_LAST;
	}
	if (first && last)
		return imm ? EMU_OP_WRITE_ONLY_IMM : EMU_OP_WRITE_ONLY;
	if (first)
		return EMU_OP_WRITE_FIRST;
	return last ? (imm ? EMU_OP_WRITE_LAST_IMM : EMU_OP_WRITE_LAST) : EMU_OP_WRITE_MIDDLE;
}

void emu_dp_rd_atomic_put(struct emu_vqp *q, struct emu_swqe *w)
{
	/* answered, failed or to be sent again: a responder's copy into its pages is over */
	emu_xclaim_cancel(w);
	if (!w->has_rd_atomic)
		return;
	w->has_rd_atomic = false;
	if (q->dp.rd_atomic_out)
		q->dp.rd_atomic_out--;
}

/* rxe's check_init_depth(): a READ or atomic takes one of the max_rd_atomic slots (the
 * initiator depth) before it is sent; none free, the requester stops at this WQE (later WQEs
 * wait behind it, in order) until the completer frees one. max_rd_atomic 0 never sends one,
 * as on rxe. */
static bool rd_atomic_get(struct emu_vqp *q, struct emu_swqe *w)
{
	if (w->has_rd_atomic)
		return true;
	if (q->dp.rd_atomic_out >= q->attr.max_rd_atomic) {
		q->dp.need_rd_atomic = true;
		return false;
	}
	q->dp.need_rd_atomic = false;
	w->has_rd_atomic = true;
	q->dp.rd_atomic_out++;
	return true;
}

static void req_trace(struct emu_vqp *q, enum req_state a, enum req_state b, uint64_t wr_id)
{
	emu_dp_trace("qp %u req: %s --> %s (wr_id %llu)", q->qp.qp_num, req_state_names[a],
		     req_state_names[b], (unsigned long long)wr_id);
}

/* A message longer than its SGEs, which only rxe's ibv_wr_set_sge_list makes
 * (emu/verbs/wr_ex.c): the gather would run out (rxe's copy_data() fails with -EINVAL). */
static bool req_sges_short(const struct emu_swqe *w)
{
	uint64_t sum = 0;

	if (w->is_inline || w->wr.opcode == IBV_WR_RDMA_READ || emu_wr_is_atomic(w->wr.opcode))
		return false;
	for (int i = 0; i < w->wr.num_sge; i++)
		sum += w->sge[i].length;
	return w->length > sum;
}

/* An atomic: one packet, no payload, the AtomicETH carries everything (rxe: 8 bytes at an
 * 8-byte aligned VA, checked at post time). */
static void req_atomic(struct emu_vqp *q, struct emu_swqe *w, struct emu_bth *bth,
		       struct emu_pkt_ext *ext)
{
	bth->opcode = EMU_OP_RC | (w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? EMU_OP_CMP_SWAP :
									EMU_OP_FETCH_ADD);
	bth->psn = q->dp.req_psn;
	bth->ackreq = true;
	ext->atmeth.va = w->wr.wr.atomic.remote_addr;
	ext->atmeth.rkey = w->wr.wr.atomic.rkey;
	/* verbs: compare_add is the compare value of a CMP_AND_SWP and the addend of a
	 * FETCH_AND_ADD (rxe's init_req_packet maps them the same way) */
	if (w->wr.opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		ext->atmeth.swap_add = w->wr.wr.atomic.swap;
		ext->atmeth.compare = w->wr.wr.atomic.compare_add;
	} else {
		ext->atmeth.swap_add = w->wr.wr.atomic.compare_add;
	}
	q->dp.req_psn = (q->dp.req_psn + 1) & EMU_PSN_MASK;
	w->last_psn = w->first_psn;
	emu_dp_xmit(q, &q->av, bth, ext, NULL, 0);
}

/* A READ: one request packet; its responses take a PSN each. */
static void req_read(struct emu_vqp *q, struct emu_swqe *w, struct emu_bth *bth,
		     struct emu_pkt_ext *ext, uint64_t npkts)
{
	bth->opcode = EMU_OP_RC | EMU_OP_READ_REQ;
	bth->psn = q->dp.req_psn;
	bth->ackreq = true;
	ext->reth.va = w->wr.wr.rdma.remote_addr;
	ext->reth.rkey = w->wr.wr.rdma.rkey;
	ext->reth.dma_len = (uint32_t)w->length;
	q->dp.req_psn = (uint32_t)(q->dp.req_psn + npkts) & EMU_PSN_MASK;
	w->last_psn = (q->dp.req_psn - 1) & EMU_PSN_MASK;
	emu_dp_xmit(q, &q->av, bth, ext, NULL, 0);
}

/* A SEND or RDMA WRITE: FIRST / MIDDLE / LAST / ONLY packets at the path MTU (UD: one), the
 * RETH on the first, immediate data and the IETH on the last, an AckReq on the last and at
 * least every RXE_MAX_UNACKED_PSNS. REQ_ERROR when a gather fails (nothing left for that
 * packet, its PSN unused). */
static enum req_state req_packets(struct emu_vqp *q, struct emu_swqe *w, struct emu_bth *bth,
				  struct emu_pkt_ext *ext, uint32_t mtu, uint64_t npkts)
{
	bool ud = q->qp.qp_type == IBV_QPT_UD;

	for (uint64_t i = w->resume_pkts; i < npkts; i++) {
		bool first = i == 0, last = i == npkts - 1;
		uint64_t off = i * mtu;
		uint32_t len = (uint32_t)(last ? w->length - off : mtu);
		bool imm = w->wr.opcode == IBV_WR_SEND_WITH_IMM ||
			   w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
		enum emu_mr_status st = EMU_MR_OK;
		int xerr;
		unsigned noack;

		if (ud) {
			bth->opcode = EMU_OP_UD | (imm ? EMU_OP_SEND_ONLY_IMM : EMU_OP_SEND_ONLY);
			ext->deth.qkey = w->ud_qkey;
			ext->deth.sqpn = q->qp.qp_num;
		} else {
			bth->opcode = (q->qp.qp_type == IBV_QPT_UC ? EMU_OP_UC : EMU_OP_RC) |
				      conn_opcode(w, first, last);
		}
		if (first && (w->wr.opcode == IBV_WR_RDMA_WRITE ||
			      w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)) {
			ext->reth.va = w->wr.wr.rdma.remote_addr;
			ext->reth.rkey = w->wr.wr.rdma.rkey;
			ext->reth.dma_len = (uint32_t)w->length;
		}
		if (last && imm)
			ext->imm = w->wr.imm_data;
		if (last && w->wr.opcode == IBV_WR_SEND_WITH_INV)
			ext->ieth_rkey = w->wr.invalidate_rkey; /* host order, as rxe's ieth_set_rkey */
		bth->se = last && w->wr.send_flags & IBV_SEND_SOLICITED &&
			  (w->wr.opcode != IBV_WR_RDMA_WRITE);
		noack = q->dp.noack_pkts;
		bth->psn = q->dp.req_psn;
		/* rxe asks for ACKs on RC only ("Don't set BTH_ACK_MASK for UC or UD QPs", in
		 * Linux 6.1.y: measured, a UD SEND_ONLY leaves with AckReq 0) */
		bth->ackreq = q->qp.qp_type == IBV_QPT_RC &&
			      (last || q->dp.noack_pkts++ > RXE_MAX_UNACKED_PSNS);
		if (bth->ackreq)
			q->dp.noack_pkts = 0;
		q->dp.req_psn = (q->dp.req_psn + 1) & EMU_PSN_MASK;
		if (w->is_inline)
			xerr = emu_dp_xmit(q, ud ? &w->av : &q->av, bth, ext, w->inl + off, len);
		else /* gathered straight into the frame (into the ring, for another process) */
			xerr = emu_dp_xmit_gather(q, ud ? &w->av : &q->av, bth, ext, w->sge,
						  w->wr.num_sge, off, len, &st);
		if (xerr == -ENOMEM) {
			/* no memory for the packet: rxe_requester's "Failed allocating skb", the
			 * WQE completes with LOC_QP_OP_ERR and the QP goes to the error state */
			q->dp.req_psn = bth->psn;
			q->dp.noack_pkts = noack;
			emu_dp_trace("qp %u req: no memory for a packet", q->qp.qp_num);
			w->status = IBV_WC_LOC_QP_OP_ERR;
			return REQ_ERROR;
		}
		if (w->is_inline)
			continue;
		if (st != EMU_MR_OK) {
			/* nothing went out for this packet: its PSN is not used */
			q->dp.req_psn = bth->psn;
			q->dp.noack_pkts = noack;
			emu_dp_trace("qp %u req: gather: %s", q->qp.qp_num, emu_mr_status_str(st));
			/* rxe's copy_data(): an lkey that finds no usable MR is -EINVAL, which
			 * the requester reports as LOC_QP_OP_ERR; only a range outside the MR
			 * (-EFAULT) is LOC_PROT_ERR (measured, verbs_probe_limits) */
			w->status = st == EMU_MR_BAD_RANGE ? emu_mr_status_wc(st, false) :
							     IBV_WC_LOC_QP_OP_ERR;
			return REQ_ERROR;
		}
	}
	w->last_psn = (q->dp.req_psn - 1) & EMU_PSN_MASK;
	w->resume_pkts = 0;
	return REQ_DONE;
}

/* Sends every packet of one WQE: REQ_DONE, or REQ_ERROR with w->status set. */
static enum req_state req_wqe(struct emu_vqp *q, struct emu_swqe *w, uint32_t mtu)
{
	bool ud = q->qp.qp_type == IBV_QPT_UD;
	uint64_t npkts = w->length ? (w->length + mtu - 1) / mtu : 1;
	struct emu_bth bth = { .pkey = EMU_PKEY_DEFAULT };
	struct emu_pkt_ext ext;

	memset(&ext, 0, sizeof(ext));
	bth.dqpn = (ud ? w->ud_dqpn : q->attr.dest_qp_num) & EMU_QPN_MASK;
	/* a SEND or WRITE sent again from its resume PSN keeps its first PSN */
	w->first_psn = (q->dp.req_psn - w->resume_pkts) & EMU_PSN_MASK;
	if (w->length >= 0x80000000u && w->wr.opcode != IBV_WR_RDMA_READ &&
	    !emu_wr_is_atomic(w->wr.opcode)) {
		/* rxe_requester() holds the payload in an int: from 2^31 on it is negative, the
		 * packet cannot be built and nothing is sent (measured, verbs_probe_limits) */
		w->status = IBV_WC_LOC_QP_OP_ERR;
		return REQ_ERROR;
	}
	if (ud && w->length > mtu) {
		/* C10-93.1.1, as rxe_requester() does it: no packet, no error, the WQE completes
		 * with success and uses one PSN (measured, verbs_probe_limits) */
		w->last_psn = q->dp.req_psn;
		q->dp.req_psn = (q->dp.req_psn + 1) & EMU_PSN_MASK;
		return REQ_DONE;
	}
	if (req_sges_short(w)) {
		w->status = IBV_WC_LOC_QP_OP_ERR; /* measured */
		return REQ_ERROR;
	}
	/* to another process of this host: one descriptor, the data copied once (xfast.c) */
	if (q->qp.qp_type == IBV_QPT_RC && !w->resume_pkts && emu_dp_xfast_send(q, w, mtu, npkts))
		return REQ_DONE;
	if (emu_wr_is_atomic(w->wr.opcode)) {
		req_atomic(q, w, &bth, &ext);
		return REQ_DONE;
	}
	if (w->wr.opcode == IBV_WR_RDMA_READ) {
		req_read(q, w, &bth, &ext, npkts);
		return REQ_DONE;
	}
	return req_packets(q, w, &bth, &ext, mtu, npkts);
}

void emu_dp_req_run(struct emu_vqp *q)
{
	uint32_t mtu, psn0;

	/* after a local error the loop stops at the WQE in ERROR (rxe's req.state ERROR); the
	 * ones before it may still have to be sent again (go back N) */
	if (q->attr.qp_state != IBV_QPS_RTS || q->dp.rnr_armed)
		return;
	mtu = emu_dp_mtu(q);
	psn0 = q->dp.req_psn;
	/* one doorbell per EMU_LINK_SHM_BELL_EVERY frames into a ring, and one at the end */
	emu_link_loopback_burst(true);
	/* from the first WQE that may be unsent: a walk from the head passed every outstanding
	 * one at every post (half of an 8-byte message-rate run's requester time at a send
	 * queue depth of 128, perf) */
	for (struct emu_list *l = q->dp.req_done ? q->dp.req_done->next : q->sq.list.next;
	     l != &q->sq.list; l = l->next) {
		struct emu_swqe *w = emu_list_entry(l, struct emu_swqe, link);
		enum req_state st;

		if (w->state == EMU_WQE_ERROR)
			break;
		if (w->state != EMU_WQE_POSTED) {
			q->dp.req_done = l;
			continue;
		}
		if (!emu_dp_opcode_ok(q->qp.qp_type, w->wr.opcode)) {
			/* rxe: next_opcode() finds none for this QP type (before any
			 * max_rd_atomic slot: UC and UD have none) */
			req_trace(q, REQ_NEXT_WQE, REQ_ERROR, w->wr.wr_id);
			w->status = IBV_WC_LOC_QP_OP_ERR;
			w->state = EMU_WQE_ERROR;
			break;
		}
		if ((w->wr.opcode == IBV_WR_RDMA_READ || emu_wr_is_atomic(w->wr.opcode)) &&
		    !rd_atomic_get(q, w)) {
			emu_dp_trace("qp %u req: wr_id %llu waits for a max_rd_atomic slot (%u of %u)",
				     q->qp.qp_num, (unsigned long long)w->wr.wr_id,
				     q->dp.rd_atomic_out, q->attr.max_rd_atomic);
			break;
		}
		if (emu_wr_is_local(w->wr.opcode)) {
			/* rxe_do_local_ops(): run here, no packet, no PSN; done at once, the
			 * completer retires it in queue order. A failure is the WQE's error
			 * (MW_BIND_ERR / LOC_QP_OP_ERR, measured), the QP then goes to ERR. */
			bool bind = w->wr.opcode == IBV_WR_BIND_MW;
			int err = bind ? emu_mw_bind_wqe(q, w) :
					 emu_mw_invalidate(q, w->wr.invalidate_rkey);

			req_trace(q, REQ_NEXT_WQE, err ? REQ_ERROR : REQ_DONE, w->wr.wr_id);
			if (err) {
				w->status = bind ? IBV_WC_MW_BIND_ERR : IBV_WC_LOC_QP_OP_ERR;
				w->state = EMU_WQE_ERROR;
				break;
			}
			w->state = EMU_WQE_DONE;
			q->dp.req_done = l;
			continue;
		}
		req_trace(q, REQ_NEXT_WQE, REQ_SEND_PKT, w->wr.wr_id);
		st = req_wqe(q, w, mtu);
		req_trace(q, REQ_SEND_PKT, st, w->wr.wr_id);
		if (st == REQ_ERROR) {
			/* rxe: the requester stops; the completer retires what came before,
			 * then completes this WQE with its status and moves the QP to ERR */
			w->state = EMU_WQE_ERROR;
			emu_dp_rd_atomic_put(q, w);
			break;
		}
		/* only RC waits for an acknowledgement; a UD or UC WQE is done when its last
		 * packet has left (rxe's completer retires it without an ACK) */
		w->state = q->qp.qp_type == IBV_QPT_RC ? EMU_WQE_PENDING : EMU_WQE_DONE;
		q->dp.req_done = l;
		if (w->state == EMU_WQE_PENDING)
			emu_dp_retry_restart(q); /* rxe: mod_timer at every request sent */
	}
	/* a held ACK follows the requests just sent (ack_hold.c): the peer's poll that finds it
	 * has delivered them first */
	if (q->dp.req_psn != psn0)
		emu_dp_ack_flush(q);
	emu_link_loopback_burst(false);
	emu_dp_comp_run(q);
}
