/* The completer (rxe_comp.c in miniature): matches ACKs, NAKs and read responses against the
 * send WQEs in flight, scatters read data (lkey checks), and retires finished WQEs from the
 * head of the send queue in order with the completions rxe's make_send_cqe() writes; an error
 * completes its WQE with the status, then the QP goes to ERR and everything else is flushed.
 * Engine lock held. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"

static enum ibv_wc_opcode wr_to_wc(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	default: /* SEND, SEND_WITH_IMM, SEND_WITH_INV */
		return IBV_WC_SEND;
	}
}

static void set_state(struct emu_vqp *q, struct emu_swqe *w, enum emu_wqe_state s, int status)
{
	emu_dp_trace("qp %u comp: wr_id %llu %s --> %s", q->qp.qp_num,
		     (unsigned long long)w->wr.wr_id, emu_wqe_state_name(w->state),
		     emu_wqe_state_name(s));
	w->state = s;
	w->status = status;
	if (s != EMU_WQE_PENDING) /* answered (or failed): its max_rd_atomic slot is free */
		emu_dp_rd_atomic_put(q, w);
	if (s == EMU_WQE_DONE) { /* progress: rxe's reset_retry_counters() */
		q->dp.rnr_left = q->attr.rnr_retry;
		q->dp.retry_left = q->attr.retry_cnt;
		q->dp.retry_started = false;
	}
}

/* rxe's req_retry(), go-back-N (IBTA 9.7.5.2.5 / C9-129): every WQE from w on that was sent
 * goes back to POSTED and the requester sends it again, its payload gathered again from the
 * WQE (a READ restarts at its first byte). w itself, a SEND or WRITE, resumes at `psn` when
 * that lies inside it (retry_first_write_send: a PSN sequence NAK names the first packet the
 * responder lacks; measured on Linux 6.1, the resend starts with that SEND_MIDDLE), else at
 * its first PSN. The responder drops or re-ACKs the packets it already has and replays
 * READs / atomics from its resources, so nothing runs twice. The PSNs are the same as the
 * first time: the requester walks the same WQEs in the same order. */
static void go_back(struct emu_vqp *q, struct emu_swqe *w, uint32_t psn, const char *why)
{
	uint64_t pkts = 0;
	uint32_t skip = 0;

	if (w->wr.opcode != IBV_WR_RDMA_READ && !emu_wr_is_atomic(w->wr.opcode) &&
	    emu_psn_cmp(psn, w->first_psn) > 0 && emu_psn_cmp(psn, w->last_psn) <= 0)
		skip = (psn - w->first_psn) & EMU_PSN_MASK;
	q->dp.req_psn = (w->first_psn + skip) & EMU_PSN_MASK;
	q->dp.req_done = NULL; /* WQEs from w on go back to POSTED */
	for (struct emu_list *l = &w->link; l != &q->sq.list; l = l->next) {
		struct emu_swqe *x = emu_list_entry(l, struct emu_swqe, link);

		if (x->state != EMU_WQE_PENDING)
			continue;
		/* a READ's or atomic's request is one packet; SEND / WRITE one per PSN */
		pkts += x->wr.opcode == IBV_WR_RDMA_READ || emu_wr_is_atomic(x->wr.opcode) ?
				1 : ((x->last_psn - x->first_psn) & EMU_PSN_MASK) + 1;
		x->state = EMU_WQE_POSTED;
		x->xfast = false;
		x->xfast_no = true; /* sent again as packets */
		x->resume_pkts = x == w ? skip : 0;
		x->read_off = 0;
		emu_dp_rd_atomic_put(q, x); /* taken again when resent */
	}
	pkts -= skip;
	q->dp.retransmits += pkts;
	emu_dp_trace("qp %u comp: %s: go back to psn %#x (wr_id %llu), %llu packets again, "
		     "%d retries left", q->qp.qp_num, why, q->dp.req_psn,
		     (unsigned long long)w->wr.wr_id, (unsigned long long)pkts, q->dp.retry_left);
}

/* rxe's COMPST_ERROR_RETRY: one retry of the oldest unacknowledged WQE w. retry_cnt bounds
 * them (rxe counts 7 as "for ever", as rnr_retry); none left ends w with
 * IBV_WC_RETRY_EXC_ERR (C9-132), the QP goes to ERR and comp_run flushes the rest. A packet
 * that shows a lost answer (a READ / atomic implicitly acknowledged, a gap in read responses)
 * retries once and is then ignored until progress or the timer (comp.started_retry), so a
 * burst of such packets does not resend the queue again and again. */
static void retry(struct emu_vqp *q, struct emu_swqe *w, bool timeout, const char *why)
{
	if (q->dp.retry_started && !timeout)
		return;
	if (!q->dp.retry_left) {
		emu_dp_trace("qp %u comp: %s, no retry left: wr_id %llu -> RETRY_EXC_ERR",
			     q->qp.qp_num, why, (unsigned long long)w->wr.wr_id);
		set_state(q, w, EMU_WQE_ERROR, IBV_WC_RETRY_EXC_ERR);
		return;
	}
	if (q->dp.retry_left != 7)
		q->dp.retry_left--;
	q->dp.retry_started = true;
	go_back(q, w, w->first_psn, why);
}

void emu_dp_retry_timeout(struct emu_vqp *q)
{
	struct emu_swqe *w = NULL;

	q->dp.retry_armed = false;
	if (!emu_dp_retry_due(q))
		return; /* restarted meanwhile (it waits on to the later deadline), or idle */
	for (struct emu_list *l = q->sq.list.next; l != &q->sq.list; l = l->next) {
		struct emu_swqe *x = emu_list_entry(l, struct emu_swqe, link);

		if (x->state == EMU_WQE_PENDING) {
			w = x;
			break;
		}
	}
	if (!w || q->attr.qp_state != IBV_QPS_RTS)
		return;
	retry(q, w, true, "ack timeout");
	emu_dp_comp_run(q);
	emu_dp_req_run(q);
}

/* IBTA table 45 (9.7.5.2.8): the RNR NAK timer field, in microseconds (0 is the longest) */
static const uint32_t rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880,
	163840, 245760, 327680, 491520,
};

/* rxe's COMPST_RNR_RETRY: rnr_retry 7 retries forever; otherwise each RNR NAK uses one, and
 * none left ends the WQE with IBV_WC_RNR_RETRY_EXC_ERR. The requester resends from the NAKed
 * WQE (the responder kept its ePSN) after the timer the NAK carries. */
static void rnr_nak(struct emu_vqp *q, struct emu_swqe *w, uint8_t syndrome)
{
	struct emu_engine *e = emu_dp_engine();

	if (!q->dp.rnr_left || !e) {
		emu_dp_trace("qp %u comp: RNR NAK, no retry left", q->qp.qp_num);
		w->state = EMU_WQE_ERROR;
		w->status = IBV_WC_RNR_RETRY_EXC_ERR;
		return;
	}
	if (q->dp.rnr_left < 7)
		q->dp.rnr_left--;
	q->dp.req_psn = w->first_psn;
	q->dp.req_done = NULL; /* WQEs from w on go back to POSTED */
	for (struct emu_list *l = &w->link; l != &q->sq.list; l = l->next) {
		struct emu_swqe *x = emu_list_entry(l, struct emu_swqe, link);

		if (x->state == EMU_WQE_PENDING) {
			x->state = EMU_WQE_POSTED;
			x->xfast = false; /* (an RNR NAK: it may go as a descriptor again) */
			x->read_off = 0;
			emu_dp_rd_atomic_put(q, x); /* taken again when resent */
		}
	}
	emu_dp_retry_cancel(q);
	emu_dp_trace("qp %u comp: RNR NAK, resend from psn %#x in %u us (%d retries left)",
		     q->qp.qp_num, w->first_psn, rnr_usec[syndrome & EMU_AETH_VALUE_MASK],
		     q->dp.rnr_left);
	emu_timer_arm_in(emu_engine_clock(e), &q->dp.rnr,
			 (uint64_t)rnr_usec[syndrome & EMU_AETH_VALUE_MASK] * 1000);
	q->dp.rnr_armed = true;
}

void emu_dp_comp_run(struct emu_vqp *q)
{
	bool pending = false;

	while (!emu_list_empty(&q->sq.list)) {
		struct emu_swqe *w = emu_list_entry(q->sq.list.next, struct emu_swqe, link);
		struct ibv_wc wc;

		if (w->state != EMU_WQE_DONE && w->state != EMU_WQE_ERROR)
			break;
		memset(&wc, 0, sizeof(wc));
		wc.wr_id = w->wr.wr_id;
		wc.qp_num = q->qp.qp_num;
		if (w->state == EMU_WQE_DONE) {
			wc.status = IBV_WC_SUCCESS;
			wc.opcode = wr_to_wc(w->wr.opcode);
			wc.byte_len = (uint32_t)w->length;
			if (w->wr.opcode == IBV_WR_SEND_WITH_IMM ||
			    w->wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
				wc.wc_flags = IBV_WC_WITH_IMM;
		} else {
			wc.status = w->status;
		}
		if (w->state == EMU_WQE_ERROR || q->init.sq_sig_all ||
		    w->wr.send_flags & IBV_SEND_SIGNALED)
			emu_cq_push(q->send_cq, &wc, false);
		if (q->dp.req_done == &w->link)
			q->dp.req_done = NULL; /* (every WQE before it has gone too) */
		emu_list_del(&w->link);
		q->sq.count--;
		if (w->state == EMU_WQE_ERROR) {
			emu_dp_swqe_free(q, w);
			emu_dp_qp_error(q);
			return;
		}
		emu_dp_swqe_free(q, w);
	}
	for (struct emu_list *l = q->sq.list.next; l != &q->sq.list && !pending; l = l->next)
		pending = emu_list_entry(l, struct emu_swqe, link)->state == EMU_WQE_PENDING;
	if (!pending)
		emu_dp_retry_idle(q);
}

static int nak_status(uint8_t syndrome)
{
	switch (syndrome) {
	case EMU_AETH_NAK_INVALID_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case EMU_AETH_NAK_REM_ACCESS:
		return IBV_WC_REM_ACCESS_ERR;
	case EMU_AETH_NAK_REM_OP:
		return IBV_WC_REM_OP_ERR;
	default:
		return IBV_WC_BAD_RESP_ERR;
	}
}

static bool is_read_resp(uint8_t opcode)
{
	uint8_t op = opcode & 0x1f;

	return op >= EMU_OP_READ_RESP_FIRST && op <= EMU_OP_READ_RESP_ONLY;
}

/* A read response packet for the READ w: its data scattered at its offset (lkey checks); a
 * packet before that offset is a duplicate, one after it shows a lost one. Whether the WQE
 * made progress. */
static bool comp_read_resp(struct emu_vqp *q, struct emu_swqe *w, const uint8_t *frame,
			   const struct emu_pkt_info *pi)
{
	uint64_t off = (uint64_t)((pi->psn - w->first_psn) & EMU_PSN_MASK) * emu_dp_mtu(q);

	if (w->wr.opcode != IBV_WR_RDMA_READ)
		return false;
	if (off < w->read_off)
		return false; /* a duplicate response packet */
	if (off > w->read_off) { /* one in between was lost */
		retry(q, w, false, "read response gap");
		return false;
	}
	if (emu_dp_copy_sge(q, w->sge, w->wr.num_sge, off,
			    (void *)(frame + pi->hdr_off[EMU_PKT_H_PAYLOAD]), pi->paylen,
			    true) != EMU_MR_OK) {
		set_state(q, w, EMU_WQE_ERROR, IBV_WC_LOC_PROT_ERR);
		return false;
	}
	w->read_off += pi->paylen;
	if (pi->mask & EMU_PKT_END)
		set_state(q, w, EMU_WQE_DONE, 0);
	return true;
}

/* rxe's do_atomic(): the original value, big-endian in the AtomicAckETH, lands in the local
 * SGE in host order, with the lkey checks of copy_data. Whether the WQE made progress. */
static bool comp_atomic_ack(struct emu_vqp *q, struct emu_swqe *w, const uint8_t *frame,
			    const struct emu_pkt_info *pi)
{
	uint64_t orig = emu_be64_get(frame + pi->hdr_off[EMU_PKT_H_ATMACK]);

	if (!emu_wr_is_atomic(w->wr.opcode))
		return false;
	if (emu_dp_copy_sge(q, w->sge, w->wr.num_sge, 0, &orig, sizeof(orig), true) != EMU_MR_OK)
		set_state(q, w, EMU_WQE_ERROR, IBV_WC_LOC_PROT_ERR);
	else
		set_state(q, w, EMU_WQE_DONE, 0);
	return true;
}

/* An ACK, RNR NAK or NAK with w's PSN range holding psn. Whether the WQE made progress. */
static bool comp_aeth(struct emu_vqp *q, struct emu_swqe *w, uint32_t psn, uint8_t syndrome)
{
	bool rd_atomic = w->wr.opcode == IBV_WR_RDMA_READ || emu_wr_is_atomic(w->wr.opcode);

	switch (syndrome & EMU_AETH_KIND_MASK) {
	case EMU_AETH_ACK:
		if (!rd_atomic && !emu_psn_cmp(w->last_psn, psn)) {
			set_state(q, w, EMU_WQE_DONE, 0);
			return true;
		}
		break;
	case EMU_AETH_RNR_NAK:
		rnr_nak(q, w, syndrome);
		break;
	case EMU_AETH_NAK:
		if (syndrome == EMU_AETH_NAK_PSN_SEQ) {
			/* C9-112: the responder expects `psn`; everything before it was
			 * acknowledged. Go back to the WQE holding it without using a retry
			 * (rxe: need_retry, no retry_cnt) */
			q->dp.retry_started = true;
			go_back(q, w, psn, "PSN sequence NAK");
			break;
		}
		set_state(q, w, EMU_WQE_ERROR, nak_status(syndrome));
		break;
	default:
		break;
	}
	return false;
}

/* The tail of an answer's handling. */
static void comp_after(struct emu_vqp *q, bool progress, uint64_t resent)
{
	if (progress && q->attr.qp_state == IBV_QPS_RTS)
		emu_dp_retry_restart(q); /* comp_run cancels it if nothing is outstanding */
	emu_dp_comp_run(q);
	/* rxe: a completed READ / atomic wakes a requester waiting for a max_rd_atomic slot;
	 * a packet that made the completer go back N has the requester resend */
	if ((q->dp.need_rd_atomic && q->dp.rd_atomic_out < q->attr.max_rd_atomic) ||
	    q->dp.retransmits != resent)
		emu_dp_req_run(q);
}

/* The send WQE an answer with PSN psn is for, the ones before it retired on the way (an ACK
 * acknowledges them implicitly, 9.7.5.1.3): NULL when there is none (stale, not sent yet, or
 * a lost READ / atomic response that made the completer retry). *progress: WQEs were
 * retired. */
static struct emu_swqe *comp_find(struct emu_vqp *q, const struct emu_pkt_info *pi,
				  bool *progress)
{
	uint32_t psn = pi->psn;

	for (struct emu_list *l = q->sq.list.next; l != &q->sq.list; l = l->next) {
		struct emu_swqe *w = emu_list_entry(l, struct emu_swqe, link);

		if (w->state == EMU_WQE_POSTED)
			break; /* not (re)sent yet: nothing from here on can be answered */
		if (w->state != EMU_WQE_PENDING)
			continue;
		if (emu_psn_cmp(w->last_psn, psn) < 0) {
			/* the answer to a later PSN: w is implicitly acknowledged, unless it is a
			 * READ / atomic whose own response is the answer: that one was lost
			 * (rxe's check_psn: COMPST_ERROR_RETRY) */
			if (w->wr.opcode == IBV_WR_RDMA_READ || emu_wr_is_atomic(w->wr.opcode)) {
				retry(q, w, false, "response missing");
				break;
			}
			set_state(q, w, EMU_WQE_DONE, 0);
			*progress = true;
			continue;
		}
		if (emu_psn_cmp(w->first_psn, psn) > 0) {
			/* before the oldest outstanding PSN: a duplicate or stale answer */
			emu_dp_trace("qp %u comp: %s psn %#x: stale, ignored", q->qp.qp_num,
				     emu_pkt_opcode_name(pi->opcode), psn);
			break;
		}
		return w; /* the packet belongs to w */
	}
	return NULL;
}

void emu_dp_comp_rx(struct emu_vqp *q, const uint8_t *frame, const struct emu_pkt_info *pi)
{
	struct emu_aeth aeth = { 0 };
	bool progress = false;
	uint64_t resent = q->dp.retransmits; /* changes when this packet made us go back N */
	struct emu_swqe *w;

	if (q->attr.qp_state != IBV_QPS_RTS && q->attr.qp_state != IBV_QPS_SQD) {
		emu_dp_trace("qp %u comp: %s in state %s: dropped", q->qp.qp_num,
			     emu_pkt_opcode_name(pi->opcode), emu_qp_state_name(q->attr.qp_state));
		return;
	}
	if (pi->mask & EMU_PKT_AETH)
		emu_aeth_get(frame + pi->hdr_off[EMU_PKT_H_AETH], &aeth);
	w = comp_find(q, pi, &progress);
	if (w && is_read_resp(pi->opcode))
		progress |= comp_read_resp(q, w, frame, pi);
	else if (w && (pi->opcode & 0x1f) == EMU_OP_ATOMIC_ACK)
		progress |= comp_atomic_ack(q, w, frame, pi);
	else if (w)
		progress |= comp_aeth(q, w, pi->psn, aeth.syndrome);
	comp_after(q, progress, resent);
}

struct emu_swqe *emu_dp_comp_xfast_wqe(struct emu_vqp *q, uint32_t psn)
{
	if (q->attr.qp_state != IBV_QPS_RTS && q->attr.qp_state != IBV_QPS_SQD)
		return NULL;
	for (struct emu_list *l = q->sq.list.next; l != &q->sq.list; l = l->next) {
		struct emu_swqe *x = emu_list_entry(l, struct emu_swqe, link);

		if (x->state == EMU_WQE_PENDING && x->xfast && x->first_psn == psn)
			return x;
	}
	return NULL;
}

/* The READ w's data is in place (status 0) or failed the local checks: what its last response
 * packet would do. */
void emu_dp_comp_xfast_read(struct emu_vqp *q, struct emu_swqe *w, int status)
{
	struct emu_pkt_info pi = { .opcode = EMU_OP_RC | EMU_OP_READ_RESP_LAST, .psn = w->last_psn };
	uint64_t resent = q->dp.retransmits;
	bool progress = false;

	if (comp_find(q, &pi, &progress) == w) {
		if (status) {
			set_state(q, w, EMU_WQE_ERROR, status);
		} else {
			w->read_off = w->length;
			set_state(q, w, EMU_WQE_DONE, 0);
			progress = true;
		}
	}
	comp_after(q, progress, resent);
}

void emu_dp_comp_xfast_ack(struct emu_vqp *q, uint32_t psn)
{
	/* an ACK packet without its bytes: no AETH to read, whose syndrome 0 is a plain ACK */
	struct emu_pkt_info pi = { .opcode = EMU_OP_RC | EMU_OP_ACK, .psn = psn };

	emu_dp_comp_rx(q, NULL, &pi);
}

/* The responder took nothing of the message: it and every WQE sent after it go again, as
 * packets, from its first PSN; no retry is used (nothing was lost). */
void emu_dp_comp_xfast_decline(struct emu_vqp *q, uint32_t psn)
{
	struct emu_swqe *w = NULL;

	if (q->attr.qp_state != IBV_QPS_RTS && q->attr.qp_state != IBV_QPS_SQD)
		return;
	for (struct emu_list *l = q->sq.list.next; l != &q->sq.list; l = l->next) {
		struct emu_swqe *x = emu_list_entry(l, struct emu_swqe, link);

		if (x->state == EMU_WQE_PENDING && x->xfast && x->first_psn == psn) {
			w = x;
			break;
		}
	}
	if (!w)
		return; /* gone back already, or answered */
	q->dp.req_psn = w->first_psn;
	q->dp.req_done = NULL; /* WQEs from w on go back to POSTED */
	for (struct emu_list *l = &w->link; l != &q->sq.list; l = l->next) {
		struct emu_swqe *x = emu_list_entry(l, struct emu_swqe, link);

		if (x->state != EMU_WQE_PENDING)
			continue;
		x->state = EMU_WQE_POSTED;
		x->xfast = false;
		x->xfast_no = true;
		x->resume_pkts = 0;
		x->read_off = 0;
		emu_dp_rd_atomic_put(q, x); /* taken again when resent */
	}
	emu_dp_trace("qp %u comp: descriptor psn %#x declined: its packets go", q->qp.qp_num, psn);
	if (q->attr.qp_state == IBV_QPS_RTS)
		emu_dp_req_run(q);
}
