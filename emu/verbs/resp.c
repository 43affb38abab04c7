/* The responder (rxe_resp.c in miniature): checks a request packet (PSN, operation, receive
 * WQE, R_Key), executes it (scatter a SEND into a receive WQE, an RDMA WRITE into an MR, an
 * RDMA READ into READ_RESPONSE packets), completes the receive WQE and acknowledges. Errors
 * of class A/C (rxe's do_class_ac_error) complete the receive WQE in progress with the local
 * status, send a NAK and move the QP to ERR. Engine lock held.
 *
 * Shaped as rxe_resp.c: a state per check or step (enum resp_state, named in
 * resp_state_names), a small function per state that returns the next one, and a dispatcher
 * loop (emu_dp_resp_rx) that prints one "qp" trace line per transition. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"
#include "emu/verbs/mw_dp.h"
#include "util/failcall.h"

enum resp_state {
	RESPST_CHK_PSN,
	RESPST_CHK_OP_VALID,
	RESPST_CHK_RESOURCE,
	RESPST_CHK_RKEY,
	RESPST_CHK_LENGTH,
	RESPST_EXECUTE,
	RESPST_READ_REPLY,
	RESPST_ATOMIC_REPLY,
	RESPST_COMPLETE,
	RESPST_ACKNOWLEDGE,
	RESPST_DONE,
	RESPST_ERR_RNR,
	RESPST_ERR_CLASS_AC,
	RESPST_ERR_UC_DROP,
	RESPST_ERR_INVALIDATE_RKEY,
	RESPST_ERR_PSN_OUT_OF_SEQ,
	RESPST_DUPLICATE_REQUEST,
	RESPST_DROP,
	RESPST_NUM
};

static const char *const resp_state_names[RESPST_NUM] = {
	[RESPST_CHK_PSN] = "CHK_PSN",
	[RESPST_CHK_OP_VALID] = "CHK_OP_VALID",
	[RESPST_CHK_RESOURCE] = "CHK_RESOURCE",
	[RESPST_CHK_RKEY] = "CHK_RKEY",
	[RESPST_CHK_LENGTH] = "CHK_LENGTH",
	[RESPST_EXECUTE] = "EXECUTE",
	[RESPST_READ_REPLY] = "READ_REPLY",
	[RESPST_ATOMIC_REPLY] = "ATOMIC_REPLY",
	[RESPST_COMPLETE] = "COMPLETE",
	[RESPST_ACKNOWLEDGE] = "ACKNOWLEDGE",
	[RESPST_DONE] = "DONE",
	[RESPST_ERR_RNR] = "ERR_RNR",
	[RESPST_ERR_CLASS_AC] = "ERR_CLASS_AC",
	[RESPST_ERR_UC_DROP] = "ERR_UC_DROP",
	[RESPST_ERR_INVALIDATE_RKEY] = "ERR_INVALIDATE_RKEY",
	[RESPST_ERR_PSN_OUT_OF_SEQ] = "ERR_PSN_OUT_OF_SEQ",
	[RESPST_DUPLICATE_REQUEST] = "DUPLICATE_REQUEST",
	[RESPST_DROP] = "DROP",
};

/* rxe's responder resources: a READ / atomic request that was executed is remembered in the
 * next entry of a ring of max_dest_rd_atomic (the oldest one is reused, as rxe's
 * rsp_res producer index): the requester never has more outstanding (max_rd_atomic), so a
 * duplicate of one it still waits for finds its entry. No memory: no entry, and the
 * duplicate is dropped (class D) until the requester gives up. */
static void res_add(struct emu_vqp *q, bool atomic, uint32_t first, uint32_t last,
		    uint64_t orig)
{
	struct emu_resp_res *r;

	if (!q->dp.res) {
		uint32_t n = q->attr.max_dest_rd_atomic ? q->attr.max_dest_rd_atomic : 1;

		q->dp.res = emu_calloc(n, sizeof(*q->dp.res));
		if (!q->dp.res)
			return;
		q->dp.nres = n;
		q->dp.res_next = 0;
	}
	r = &q->dp.res[q->dp.res_next];
	q->dp.res_next = (q->dp.res_next + 1) % q->dp.nres;
	*r = (struct emu_resp_res){ .used = true, .atomic = atomic, .first_psn = first,
				    .last_psn = last, .orig = orig };
}

static const struct emu_resp_res *res_find(const struct emu_vqp *q, uint32_t psn)
{
	for (uint32_t i = 0; i < q->dp.nres; i++) {
		const struct emu_resp_res *r = &q->dp.res[i];

		if (r->used && emu_psn_cmp(psn, r->first_psn) >= 0 &&
		    emu_psn_cmp(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

/* Every responder packet but a held ACK: the ACK the QP holds goes first (ack_hold.c). */
static void send_ack_orig(struct emu_vqp *q, uint8_t opcode, uint32_t psn, uint8_t syndrome,
			  const void *data, size_t len, uint64_t orig)
{
	emu_dp_ack_flush(q);
	emu_dp_xmit_resp(q, opcode, psn, syndrome, data, len, orig, q->dp.resp_msn);
}

static void send_ack(struct emu_vqp *q, uint8_t opcode, uint32_t psn, uint8_t syndrome,
		     const void *data, size_t len)
{
	send_ack_orig(q, opcode, psn, syndrome, data, len, 0);
}

static void recv_wc(struct emu_vqp *q, struct emu_rwqe *w, int status, int opcode,
		    uint32_t byte_len, bool imm, uint32_t imm_data, uint32_t src_qp, bool se)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = status;
	wc.qp_num = q->qp.qp_num;
	if (status == IBV_WC_SUCCESS) { /* rxe's do_complete(), user CQ */
		wc.opcode = opcode;
		wc.byte_len = byte_len;
		wc.wc_flags = IBV_WC_GRH | (imm ? IBV_WC_WITH_IMM : 0);
		wc.imm_data = imm ? imm_data : 0;
		if (q->dp.rx_inv) {
			/* rxe copies the kernel's IB_WC_WITH_INVALIDATE (1 << 2) into the user
			 * CQE as it is, where bit 2 is IBV_WC_IP_CSUM_OK and IBV_WC_WITH_INV is
			 * bit 3 (measured: flags 0x5); the key is in host order */
			wc.wc_flags |= IBV_WC_IP_CSUM_OK;
			wc.invalidated_rkey = q->dp.rx_inv_rkey;
		}
		wc.src_qp = src_qp;
		if (q->dp.rx_ib) { /* the packet's LRH (emu_dp_rx_ll) */
			wc.wc_flags = (q->dp.rx_grh ? IBV_WC_GRH : 0) |
				      (imm ? IBV_WC_WITH_IMM : 0);
			wc.slid = q->dp.rx_slid;
			wc.sl = q->dp.rx_sl;
			wc.dlid_path_bits = q->dp.rx_path_bits;
		}
	}
	emu_cq_push(q->recv_cq, &wc, se);
	free(w);
}

static uint32_t imm_of(const uint8_t *frame, const struct emu_pkt_info *pi)
{
	uint32_t v;

	memcpy(&v, frame + pi->hdr_off[EMU_PKT_H_IMMDT], 4); /* opaque, as verbs' __be32 */
	return v;
}

static void resp_ud(struct emu_vqp *q, const uint8_t *frame, const struct emu_pkt_info *pi)
{
	struct emu_deth deth;
	uint8_t grh[EMU_GRH_LEN];
	struct emu_rwqe *w;
	bool imm = pi->mask & EMU_PKT_IMMDT;
	enum emu_mr_status st;

	emu_deth_get(frame + pi->hdr_off[EMU_PKT_H_DETH], &deth);
	if (deth.qkey != q->attr.qkey) {
		emu_dp_trace("qp %u resp: Q_Key %#x != %#x: dropped", q->qp.qp_num, deth.qkey,
			     q->attr.qkey);
		return;
	}
	w = emu_dp_rq_take(q);
	if (!w) {
		emu_dp_trace("qp %u resp: UD with no receive WQE: dropped", q->qp.qp_num);
		return;
	}
	if (w->length < (uint64_t)pi->paylen + EMU_GRH_LEN) {
		/* Linux 6.1 rxe: copy_data() fails, a malformed WQE (class A) even on UD: the
		 * WQE completes with IBV_WC_LOC_QP_OP_ERR and the QP goes to ERR (measured,
		 * verbs_probe_mw "ud send too long") */
		emu_dp_trace("qp %u resp: UD message longer than the receive WQE: LOC_QP_OP_ERR",
			     q->qp.qp_num);
		recv_wc(q, w, IBV_WC_LOC_QP_OP_ERR, 0, 0, false, 0, 0, false);
		emu_dp_qp_error(q);
		return;
	}
	/* rxe: union rdma_network_hdr: 20 reserved (zero) bytes, then the IPv4 header; an IPv6
	 * packet's header fills all 40. IB: the GRH when the packet has one; without it the
	 * 40 bytes are left as they were (and IBV_WC_GRH is not set) */
	memset(grh, 0, sizeof(grh));
	if (pi->net == EMU_PKT_NET_IPV4) {
		memcpy(grh + 20, frame + pi->ip_off, EMU_IPV4_LEN);
		/* rxe_loopback() hands the skb to rxe_rcv() before ip_local_out() would compute
		 * the header checksum: a looped-back header has check 0 (measured, which makes
		 * ibv_init_ah_from_wc read it as IPv6 when byte 0's nibble is 6) */
		if (q->dp.rx_loopback)
			grh[30] = grh[31] = 0;
	} else if (pi->net == EMU_PKT_NET_IPV6)
		memcpy(grh, frame + pi->ip_off, EMU_IPV6_LEN);
	else if (pi->grh_off != EMU_PKT_NO_HDR)
		memcpy(grh, frame + pi->grh_off, EMU_GRH_LEN);
	st = pi->link_layer == EMU_LL_INFINIBAND && pi->grh_off == EMU_PKT_NO_HDR ?
		     EMU_MR_OK :
		     emu_dp_copy_sge(q, w->sge, w->num_sge, 0, grh, EMU_GRH_LEN, true);
	if (st == EMU_MR_OK)
		st = emu_dp_copy_sge(q, w->sge, w->num_sge, EMU_GRH_LEN,
				     (void *)(frame + pi->hdr_off[EMU_PKT_H_PAYLOAD]), pi->paylen,
				     true);
	if (st != EMU_MR_OK) { /* the same malformed-WQE path as a length error */
		recv_wc(q, w, IBV_WC_LOC_QP_OP_ERR, 0, 0, false, 0, 0, false);
		emu_dp_qp_error(q);
		return;
	}
	/* rxe's execute(): the ePSN follows every executed packet, UD's too (query_qp shows
	 * the last sender's PSN + 1; measured) */
	q->dp.resp_psn = (pi->psn + 1) & EMU_PSN_MASK;
	recv_wc(q, w, IBV_WC_SUCCESS, IBV_WC_RECV, pi->paylen + EMU_GRH_LEN, imm,
		imm ? imm_of(frame, pi) : 0, deth.sqpn,
		pi->bth.se);
}

/* The READ_RESPONSE packets of a READ; a replay (duplicate request) reads the memory again,
 * as rxe does, and leaves the ePSN where it is. */
static void read_reply(struct emu_vqp *q, const struct emu_reth *reth, uint32_t psn,
		       void *host, bool replay)
{
	uint32_t mtu = emu_dp_mtu(q);
	uint32_t len = reth->dma_len;
	uint32_t n = len ? (len + mtu - 1) / mtu : 1;

	for (uint32_t i = 0; i < n; i++) {
		bool first = i == 0, last = i == n - 1;
		uint32_t plen = last ? len - i * mtu : mtu;
		uint8_t op = first && last ? EMU_OP_READ_RESP_ONLY :
			     first	  ? EMU_OP_READ_RESP_FIRST :
			     last	  ? EMU_OP_READ_RESP_LAST :
					    EMU_OP_READ_RESP_MIDDLE;

		send_ack(q, EMU_OP_RC | op, psn + i, emu_aeth_ack(EMU_AETH_CREDITS_INVALID),
			 host ? (uint8_t *)host + (size_t)i * mtu : NULL, plen);
	}
	if (!replay) {
		res_add(q, false, psn, (psn + n - 1) & EMU_PSN_MASK, 0);
		q->dp.resp_psn = (psn + n) & EMU_PSN_MASK;
	}
}

/* What the states of one request packet share: the packet, its extended headers, and what a
 * check found for the states after it (rxe keeps the same in its pkt_info and qp->resp). */
struct resp_pkt {
	const uint8_t *frame;
	const struct emu_pkt_info *pi;
	uint32_t m;		/* pi->mask */
	bool uc;
	struct emu_reth reth;
	struct emu_atmeth atm;
	void *rhost;		/* the host address of the R_Key's memory (READ, atomic) */
	uint8_t nak;		/* an error state's NAK syndrome ... */
	int wc_status;		/* ... and the receive WQE's status */
	uint64_t orig;		/* atomic: the original value */
	uint32_t inv_rkey;	/* SEND_WITH_INV: the key invalidated */
};

static enum resp_state resp_error(struct resp_pkt *p, uint8_t nak, int wc_status,
				  enum resp_state next)
{
	p->nak = nak;
	p->wc_status = wc_status;
	return next;
}

/* rxe's check_psn for UC: after a lost or dropped packet the rest of the message is dropped;
 * the next first packet starts over at its own PSN */
static enum resp_state check_psn_uc(struct emu_vqp *q, const struct resp_pkt *p)
{
	if (q->dp.resp_drop || p->pi->psn != q->dp.resp_psn) {
		if (!(p->m & EMU_PKT_START)) {
			q->dp.resp_drop = true;
			return RESPST_DROP;
		}
		q->dp.resp_drop = false;
		q->dp.resp_psn = p->pi->psn;
	}
	return RESPST_CHK_OP_VALID;
}

/* rxe's check_psn for RC (IBTA 9.7.5.1.2 / 9.7.5.1.3) */
static enum resp_state check_psn(struct emu_vqp *q, const struct resp_pkt *p)
{
	int d;

	if (p->uc)
		return check_psn_uc(q, p);
	d = emu_psn_cmp(p->pi->psn, q->dp.resp_psn);
	if (d > 0) /* a gap: one NAK per gap, then silence */
		return q->dp.resp_nak_sent ? RESPST_DROP : RESPST_ERR_PSN_OUT_OF_SEQ;
	if (d < 0)
		return RESPST_DUPLICATE_REQUEST;
	q->dp.resp_nak_sent = false; /* the expected PSN: the gap (if any) is closed */
	return RESPST_CHK_OP_VALID;
}

/* C9-112: NAK with the ePSN, the requester goes back to it */
static enum resp_state err_psn_out_of_seq(struct emu_vqp *q)
{
	q->dp.resp_nak_sent = true;
	send_ack(q, EMU_OP_RC | EMU_OP_ACK, q->dp.resp_psn, EMU_AETH_NAK_PSN_SEQ, NULL, 0);
	return RESPST_DONE;
}

/* rxe's duplicate_request() (9.7.5.1.3, C9-104..C9-106): nothing runs twice */
static enum resp_state duplicate_request(struct emu_vqp *q, struct resp_pkt *p)
{
	const struct emu_resp_res *r;

	if (p->m & (EMU_PKT_SEND | EMU_PKT_WRITE)) {
		/* acknowledge again, with the last PSN executed, whether or not the duplicate
		 * asks for it (the original ACK may be lost) */
		send_ack(q, EMU_OP_RC | EMU_OP_ACK, q->dp.resp_psn - 1,
			 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0);
		return RESPST_DONE;
	}
	r = res_find(q, p->pi->psn);
	if (!r || r->atomic != !!(p->m & EMU_PKT_ATOMIC) ||
	    (r->atomic && r->first_psn != p->pi->psn))
		return RESPST_DROP; /* class D: no resource holds it */
	if (r->atomic) { /* the saved result, not a second execution */
		send_ack_orig(q, EMU_OP_RC | EMU_OP_ATOMIC_ACK, p->pi->psn,
			      emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0, r->orig);
		return RESPST_DONE;
	}
	/* READ: read the memory again (rxe's replay), with the R_Key checked again: it may have
	 * been invalidated since */
	if (p->reth.dma_len &&
	    emu_dp_rkey_check(q, p->reth.rkey, p->reth.va, p->reth.dma_len,
			      EMU_ACCESS_REMOTE_READ, &p->rhost) != EMU_MR_OK)
		return RESPST_DROP;
	read_reply(q, &p->reth, p->pi->psn, p->rhost, true);
	return RESPST_DONE;
}

/* rxe's check_op_valid: the QP's remote access flags; RC answers a missing one with an
 * invalid request NAK, UC drops the message */
static enum resp_state check_op_valid(struct emu_vqp *q, struct resp_pkt *p)
{
	unsigned acc = q->attr.qp_access_flags;

	if ((p->m & EMU_PKT_READ && !(acc & IBV_ACCESS_REMOTE_READ)) ||
	    (p->m & EMU_PKT_WRITE && !(acc & IBV_ACCESS_REMOTE_WRITE)) ||
	    (p->m & EMU_PKT_ATOMIC && !(acc & IBV_ACCESS_REMOTE_ATOMIC)))
		return resp_error(p, EMU_AETH_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR,
				  p->uc ? RESPST_ERR_UC_DROP : RESPST_ERR_CLASS_AC);
	return RESPST_CHK_RESOURCE;
}

/* rxe's check_resource: a READ / atomic needs responder resources; a SEND's first packet and a
 * WRITE_WITH_IMM need a receive WQE (none: RNR) */
static enum resp_state check_resource(struct emu_vqp *q, struct resp_pkt *p)
{
	if (p->m & (EMU_PKT_READ | EMU_PKT_ATOMIC) && !q->attr.max_dest_rd_atomic)
		/* rxe: RESPST_ERR_TOO_MANY_RDMA_ATM_REQ. With resources it never refuses:
		 * keeping within them is the requester's job (max_rd_atomic) and rxe recycles
		 * its responder resources */
		return resp_error(p, EMU_AETH_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR,
				  RESPST_ERR_CLASS_AC);
	if (p->uc && p->m & EMU_PKT_START && p->m & EMU_PKT_SEND && q->dp.resp_wqe)
		q->dp.resp_off = 0; /* the tail of the last message was lost */
	if (p->m & EMU_PKT_RWR && !q->dp.resp_wqe) {
		q->dp.resp_wqe = emu_dp_rq_take(q);
		q->dp.resp_off = 0;
		if (!q->dp.resp_wqe)
			return RESPST_ERR_RNR;
	}
	return RESPST_CHK_RKEY;
}

/* rxe's check_rkey: the RETH's R_Key for the whole operation (a zero-byte one needs neither
 * address nor key), an atomic's for 8 bytes with REMOTE_ATOMIC. RC: class C; UC: the message
 * is dropped (IBTA 9.7.5.1.4: no NAK on an unreliable connection) */
static enum resp_state check_rkey(struct emu_vqp *q, struct resp_pkt *p)
{
	enum emu_mr_status st = EMU_MR_OK;

	if (p->m & EMU_PKT_RETH) {
		unsigned need = p->m & EMU_PKT_READ ? EMU_ACCESS_REMOTE_READ :
						      EMU_ACCESS_REMOTE_WRITE;

		if (p->reth.dma_len)
			st = emu_dp_rkey_check(q, p->reth.rkey, p->reth.va, p->reth.dma_len, need,
					       &p->rhost);
		if (st != EMU_MR_OK) {
			emu_dp_trace("qp %u resp: rkey %#x: %s", q->qp.qp_num, p->reth.rkey,
				     emu_mr_status_str(st));
			return resp_error(p, EMU_AETH_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR,
					  p->uc ? RESPST_ERR_UC_DROP : RESPST_ERR_CLASS_AC);
		}
		q->dp.resp_va = p->reth.va;
		q->dp.resp_rkey = p->reth.rkey;
		q->dp.resp_resid = q->dp.resp_length = p->reth.dma_len;
	} else if (p->m & EMU_PKT_ATMETH) {
		st = emu_dp_rkey_check(q, p->atm.rkey, p->atm.va, sizeof(uint64_t),
				       EMU_ACCESS_REMOTE_ATOMIC, &p->rhost);
		if (st != EMU_MR_OK) {
			emu_dp_trace("qp %u resp: atomic rkey %#x: %s", q->qp.qp_num, p->atm.rkey,
				     emu_mr_status_str(st));
			return resp_error(p, EMU_AETH_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR,
					  RESPST_ERR_CLASS_AC);
		}
	}
	return RESPST_CHK_LENGTH;
}

/* rxe's check_length, after the R_Key (a WRITE's first packet brings the length it is
 * checked against). A SEND longer than the receive WQE: on Linux 6.1 rxe's copy_data() fails
 * with -EINVAL, so it is a malformed WQE: NAK remote operational error, receiver
 * LOC_QP_OP_ERR, sender REM_OP_ERR (measured in the VM, verbs_probe_datapath). UC too:
 * LOC_QP_OP_ERR and the QP to ERR, without a NAK (verbs_probe_mw "uc send too long"). A
 * WRITE packet beyond the RETH's length is an invalid request. */
static enum resp_state check_length(struct emu_vqp *q, struct resp_pkt *p)
{
	uint32_t len = p->pi->paylen;

	if (p->m & EMU_PKT_SEND) {
		if (!q->dp.resp_wqe || q->dp.resp_off + (uint64_t)len > q->dp.resp_wqe->length)
			return resp_error(p, EMU_AETH_NAK_REM_OP, IBV_WC_LOC_QP_OP_ERR,
					  RESPST_ERR_CLASS_AC);
	} else if (p->m & EMU_PKT_WRITE) {
		if (len > q->dp.resp_resid)
			return resp_error(p, EMU_AETH_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR,
					  p->uc ? RESPST_ERR_UC_DROP : RESPST_ERR_CLASS_AC);
	}
	return RESPST_EXECUTE;
}

/* A SEND packet: scattered into the receive WQE (rxe: RESPST_ERR_MALFORMED_WQE on an lkey
 * violation); the IETH's key is invalidated after the data is placed, before the ePSN moves
 * (rxe's execute(), class J on failure) */
static enum resp_state execute_send(struct emu_vqp *q, struct resp_pkt *p)
{
	struct emu_rwqe *w = q->dp.resp_wqe;
	const struct emu_pkt_info *pi = p->pi;

	if (emu_dp_copy_sge(q, w->sge, w->num_sge, q->dp.resp_off,
			    (void *)(p->frame + pi->hdr_off[EMU_PKT_H_PAYLOAD]), pi->paylen,
			    true) != EMU_MR_OK)
		return resp_error(p, EMU_AETH_NAK_REM_OP, IBV_WC_LOC_QP_OP_ERR, RESPST_ERR_CLASS_AC);
	q->dp.resp_off += pi->paylen;
	if (p->m & EMU_PKT_IETH) {
		p->inv_rkey = emu_be32_get(p->frame + pi->hdr_off[EMU_PKT_H_IETH]);
		if (emu_mw_invalidate(q, p->inv_rkey))
			return RESPST_ERR_INVALIDATE_RKEY;
	}
	return RESPST_COMPLETE;
}

/* An RDMA WRITE packet: its piece of the range the first packet's R_Key granted */
static enum resp_state execute_write(struct emu_vqp *q, struct resp_pkt *p)
{
	uint32_t len = p->pi->paylen;
	void *host;

	if (len) {
		if (emu_dp_rkey_check(q, q->dp.resp_rkey, q->dp.resp_va, len,
				      EMU_ACCESS_REMOTE_WRITE, &host) != EMU_MR_OK)
			return resp_error(p, EMU_AETH_NAK_REM_ACCESS, IBV_WC_REM_ACCESS_ERR,
					  p->uc ? RESPST_ERR_UC_DROP : RESPST_ERR_CLASS_AC);
		memcpy(host, p->frame + p->pi->hdr_off[EMU_PKT_H_PAYLOAD], len);
	}
	q->dp.resp_va += len;
	q->dp.resp_resid -= len;
	return RESPST_COMPLETE;
}

/* rxe's atomic_reply(): the address must be 8-byte aligned in memory
 * (RESPST_ERR_MISALIGNED_ATOMIC: an invalid request); the value is in host order in memory,
 * as rxe's *vaddr, and changed atomically against other atomics of this process (rxe:
 * atomic_ops_lock) */
static enum resp_state execute_atomic(struct emu_vqp *q, struct resp_pkt *p)
{
	uint64_t *v = p->rhost;

	if ((uintptr_t)v & 7)
		return resp_error(p, EMU_AETH_NAK_INVALID_REQ, IBV_WC_REM_INV_REQ_ERR,
				  RESPST_ERR_CLASS_AC);
	if (p->pi->opcode == (EMU_OP_RC | EMU_OP_CMP_SWAP)) {
		p->orig = p->atm.compare;
		__atomic_compare_exchange_n(v, &p->orig, p->atm.swap_add, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		p->orig = __atomic_fetch_add(v, p->atm.swap_add, __ATOMIC_SEQ_CST);
	}
	q->dp.resp_msn++;
	q->dp.resp_psn = (q->dp.resp_psn + 1) & EMU_PSN_MASK;
	res_add(q, true, p->pi->psn, p->pi->psn, p->orig);
	return RESPST_ATOMIC_REPLY;
}

static enum resp_state execute(struct emu_vqp *q, struct resp_pkt *p)
{
	enum resp_state next = RESPST_COMPLETE;

	if (p->m & EMU_PKT_SEND)
		next = execute_send(q, p);
	else if (p->m & EMU_PKT_WRITE)
		next = execute_write(q, p);
	else if (p->m & EMU_PKT_READ) {
		q->dp.resp_msn++; /* rxe: counted when the read starts (C9-148) */
		return RESPST_READ_REPLY;
	} else if (p->m & EMU_PKT_ATOMIC)
		return execute_atomic(q, p);
	if (next != RESPST_COMPLETE)
		return next;
	q->dp.resp_psn = (q->dp.resp_psn + 1) & EMU_PSN_MASK;
	if (p->m & EMU_PKT_END)
		q->dp.resp_msn++;
	return RESPST_COMPLETE;
}

/* The receive WQE of a message whose last packet arrived completes (rxe's do_complete) */
static enum resp_state do_complete(struct emu_vqp *q, const struct resp_pkt *p)
{
	const struct emu_pkt_info *pi = p->pi;

	if (p->m & EMU_PKT_COMP && q->dp.resp_wqe) {
		bool imm = p->m & EMU_PKT_IMMDT;
		bool wr = p->m & EMU_PKT_WRITE;

		if (p->m & EMU_PKT_IETH)
			q->dp.rx_inv = true, q->dp.rx_inv_rkey = p->inv_rkey;
		recv_wc(q, q->dp.resp_wqe, IBV_WC_SUCCESS,
			wr ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV,
			wr ? q->dp.resp_length : q->dp.resp_off, imm,
			imm ? imm_of(p->frame, pi) : 0, 0, pi->bth.se);
		q->dp.rx_inv = false;
		q->dp.resp_wqe = NULL;
	}
	/* rxe's acknowledge(): nothing on anything but RC */
	return pi->bth.ackreq && !p->uc ? RESPST_ACKNOWLEDGE : RESPST_DONE;
}

static enum resp_state acknowledge(struct emu_vqp *q, const struct resp_pkt *p)
{
	if (!emu_dp_ack_hold(q, p->pi))
		send_ack(q, EMU_OP_RC | EMU_OP_ACK, p->pi->psn,
			 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0);
	return RESPST_DONE;
}

/* No receive WQE: RC sends an RNR NAK with the QP's min_rnr_timer, the ePSN unchanged; UC
 * drops the message silently (class D) */
static enum resp_state err_rnr(struct emu_vqp *q, const struct resp_pkt *p)
{
	if (p->uc) {
		q->dp.resp_drop = true;
		return RESPST_DROP;
	}
	send_ack(q, EMU_OP_RC | EMU_OP_ACK, p->pi->psn, emu_aeth_rnr_nak(q->attr.min_rnr_timer),
		 NULL, 0);
	return RESPST_DONE;
}

/* UC errors of class D/E (rxe's ERR_RKEY_VIOLATION / ERR_LENGTH / unsupported opcode branches
 * for UC): the rest of the message is dropped, no NAK, the QP stays up. A receive WQE from the
 * SRQ is consumed and completes with the error (class E); one from the QP's own queue stays
 * for the next message (class D/E without SRQ). */
static enum resp_state err_uc_drop(struct emu_vqp *q, const struct resp_pkt *p)
{
	q->dp.resp_drop = true;
	if (q->dp.resp_wqe) {
		if (q->srq)
			recv_wc(q, q->dp.resp_wqe, p->wc_status, 0, 0, false, 0, 0, false);
		else
			emu_dp_rq_put_back(q, q->dp.resp_wqe);
		q->dp.resp_wqe = NULL;
	}
	return RESPST_DROP;
}

/* rxe: class J. The receive WQE completes with REM_INV_REQ_ERR, the packet is still
 * acknowledged (the sender's SEND succeeds), then the QP goes to ERR; the ePSN stays
 * (measured, verbs_probe_mw) */
static enum resp_state err_invalidate_rkey(struct emu_vqp *q, const struct resp_pkt *p)
{
	if (q->dp.resp_wqe) {
		recv_wc(q, q->dp.resp_wqe, IBV_WC_REM_INV_REQ_ERR, 0, 0, false, 0, 0, false);
		q->dp.resp_wqe = NULL;
	}
	if (!p->uc)
		send_ack(q, EMU_OP_RC | EMU_OP_ACK, p->pi->psn,
			 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0);
	emu_dp_qp_error(q);
	return RESPST_DONE;
}

/* rxe's do_class_ac_error: the receive WQE in progress completes with the local status, the
 * NAK goes out, the QP goes to ERR. UC reaches this only on a local scatter error (rxe's
 * ERR_MALFORMED_WQE): the QP goes to ERR, but no NAK leaves */
static enum resp_state err_class_ac(struct emu_vqp *q, const struct resp_pkt *p)
{
	if (q->dp.resp_wqe) {
		recv_wc(q, q->dp.resp_wqe, p->wc_status, 0, 0, false, 0, 0, false);
		q->dp.resp_wqe = NULL;
	}
	if (!p->uc)
		send_ack(q, EMU_OP_RC | EMU_OP_ACK, p->pi->psn, p->nak, NULL, 0);
	emu_dp_qp_error(q);
	return RESPST_DONE;
}

void emu_dp_resp_rx(struct emu_vqp *q, const uint8_t *frame, const struct emu_pkt_info *pi)
{
	struct resp_pkt p = { .frame = frame, .pi = pi, .m = pi->mask,
			      .uc = q->qp.qp_type == IBV_QPT_UC };
	enum resp_state s = RESPST_CHK_PSN, next;
	bool trace;

	if (q->attr.qp_state != IBV_QPS_RTR && q->attr.qp_state != IBV_QPS_RTS &&
	    q->attr.qp_state != IBV_QPS_SQD) {
		emu_dp_trace("qp %u resp: %s in state %s: dropped", q->qp.qp_num,
			     emu_pkt_opcode_name(pi->opcode), emu_qp_state_name(q->attr.qp_state));
		return;
	}
	if (q->qp.qp_type == IBV_QPT_UD) {
		resp_ud(q, frame, pi);
		return;
	}
	if (p.m & EMU_PKT_RETH)
		emu_reth_get(frame + pi->hdr_off[EMU_PKT_H_RETH], &p.reth);
	if (p.m & EMU_PKT_ATMETH)
		emu_atmeth_get(frame + pi->hdr_off[EMU_PKT_H_ATMETH], &p.atm);
	trace = emu_dp_trace_on(); /* once a packet: the loop stays a bare switch */
	while (s != RESPST_DONE && s != RESPST_DROP) {
		switch (s) {
		case RESPST_CHK_PSN:
			next = check_psn(q, &p);
			break;
		case RESPST_ERR_PSN_OUT_OF_SEQ:
			next = err_psn_out_of_seq(q);
			break;
		case RESPST_DUPLICATE_REQUEST:
			next = duplicate_request(q, &p);
			break;
		case RESPST_CHK_OP_VALID:
			next = check_op_valid(q, &p);
			break;
		case RESPST_CHK_RESOURCE:
			next = check_resource(q, &p);
			break;
		case RESPST_CHK_RKEY:
			next = check_rkey(q, &p);
			break;
		case RESPST_CHK_LENGTH:
			next = check_length(q, &p);
			break;
		case RESPST_EXECUTE:
			next = execute(q, &p);
			break;
		case RESPST_READ_REPLY:
			read_reply(q, &p.reth, pi->psn, p.rhost, false);
			next = RESPST_DONE;
			break;
		case RESPST_ATOMIC_REPLY:
			send_ack_orig(q, EMU_OP_RC | EMU_OP_ATOMIC_ACK, pi->psn,
				      emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0, p.orig);
			next = RESPST_DONE;
			break;
		case RESPST_COMPLETE:
			next = do_complete(q, &p);
			break;
		case RESPST_ACKNOWLEDGE:
			next = acknowledge(q, &p);
			break;
		case RESPST_ERR_RNR:
			next = err_rnr(q, &p);
			break;
		case RESPST_ERR_UC_DROP:
			next = err_uc_drop(q, &p);
			break;
		case RESPST_ERR_INVALIDATE_RKEY:
			next = err_invalidate_rkey(q, &p);
			break;
		case RESPST_ERR_CLASS_AC:
			next = err_class_ac(q, &p);
			break;
		default:
			next = RESPST_DROP;
			break;
		}
		EMU_TRACE_IF(trace, emu_dp_trace_print, "qp %u resp: %s psn %#x: %s --> %s",
			     q->qp.qp_num, emu_pkt_opcode_name(pi->opcode), pi->psn,
			     resp_state_names[s], resp_state_names[next]);
		s = next;
	}
}

void emu_dp_res_add(struct emu_vqp *q, bool atomic, uint32_t first, uint32_t last,
		    uint64_t orig)
{
	res_add(q, atomic, first, last, orig);
}
