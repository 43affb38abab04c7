/* The responder (rxe_resp.c in miniature): checks a request packet (PSN, operation, receive
 * WQE, R_Key), executes it (scatter a SEND into a receive WQE, an RDMA WRITE into an MR, an
 * RDMA READ into READ_RESPONSE packets), completes the receive WQE and acknowledges. Errors
 * of class A/C (rxe's do_class_ac_error) complete the receive WQE in progress with the local
 * status, send a NAK and move the QP to ERR. Engine lock held. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "emu/verbs/datapath.h"
#include "emu/verbs/mw.h"

enum resp_state {
	RESPST_CHK_PSN,
	RESPST_CHK_OP_VALID,
	RESPST_CHK_RESOURCE,
	RESPST_CHK_RKEY,
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
	"CHK_PSN", "CHK_OP_VALID", "CHK_RESOURCE", "CHK_RKEY", "EXECUTE", "READ_REPLY",
	"ATOMIC_REPLY", "COMPLETE", "ACKNOWLEDGE", "DONE", "ERR_RNR", "ERR_CLASS_AC",
	"ERR_UC_DROP", "ERR_INVALIDATE_RKEY", "ERR_PSN_OUT_OF_SEQ", "DUPLICATE_REQUEST", "DROP",
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

		q->dp.res = calloc(n, sizeof(*q->dp.res));
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

static void xmit_resp(struct emu_vqp *q, uint8_t opcode, uint32_t psn, uint8_t syndrome,
		      const void *data, size_t len, uint64_t orig, uint32_t msn)
{
	struct emu_bth bth = { .opcode = opcode, .pkey = EMU_PKEY_DEFAULT };
	struct emu_pkt_ext ext;

	memset(&ext, 0, sizeof(ext));
	ext.atmack = orig; /* ATOMIC_ACKNOWLEDGE only: the builder writes it big-endian */
	bth.dqpn = q->attr.dest_qp_num & EMU_QPN_MASK;
	bth.psn = psn & EMU_PSN_MASK;
	ext.aeth.syndrome = syndrome;
	ext.aeth.msn = msn & 0xffffff;
	emu_dp_xmit(q, &q->av, &bth, &ext, data, len);
}

void emu_dp_resp_ack(struct emu_vqp *q, uint32_t psn, uint32_t msn)
{
	xmit_resp(q, EMU_OP_RC | EMU_OP_ACK, psn, emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0,
		  0, msn);
}

/* Every responder packet but a held ACK: the ACK the QP holds goes first (ack_hold.c). */
static void send_ack_orig(struct emu_vqp *q, uint8_t opcode, uint32_t psn, uint8_t syndrome,
			  const void *data, size_t len, uint64_t orig)
{
	emu_dp_ack_flush(q);
	xmit_resp(q, opcode, psn, syndrome, data, len, orig, q->dp.resp_msn);
}

static void send_ack(struct emu_vqp *q, uint8_t opcode, uint32_t psn, uint8_t syndrome,
		     const void *data, size_t len)
{
	send_ack_orig(q, opcode, psn, syndrome, data, len, 0);
}

/* Puts a receive WQE back at the head of its queue (the next message takes it again). */
static void put_back_rwqe(struct emu_vqp *q, struct emu_rwqe *w)
{
	emu_list_add_tail((q->srq ? &q->srq->rq : &q->rq.list)->next, &w->link);
	if (q->srq)
		q->srq->count++;
	else
		q->rq.count++;
}

static struct emu_rwqe *take_rwqe(struct emu_vqp *q)
{
	struct emu_list *l = q->srq ? &q->srq->rq : &q->rq.list;
	struct emu_rwqe *w;

	if (emu_list_empty(l))
		return NULL;
	w = emu_list_entry(l->next, struct emu_rwqe, link);
	emu_list_del(&w->link);
	if (q->srq) {
		q->srq->count--;
		emu_srq_wqe_taken(q->srq);
	} else
		q->rq.count--;
	return w;
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
	w = take_rwqe(q);
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

void emu_dp_resp_rx(struct emu_vqp *q, const uint8_t *frame, const struct emu_pkt_info *pi)
{
	enum resp_state s = RESPST_CHK_PSN, next;
	const uint8_t *data = frame + pi->hdr_off[EMU_PKT_H_PAYLOAD];
	uint32_t m = pi->mask;
	struct emu_reth reth = { 0 };
	uint8_t nak = 0;
	int wc_status = IBV_WC_SUCCESS;
	void *rhost = NULL;
	bool uc = q->qp.qp_type == IBV_QPT_UC;
	struct emu_atmeth atm = { 0 };
	uint64_t orig = 0;
	uint32_t inv_rkey = 0;

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
	if (m & EMU_PKT_RETH)
		emu_reth_get(frame + pi->hdr_off[EMU_PKT_H_RETH], &reth);
	if (m & EMU_PKT_ATMETH)
		emu_atmeth_get(frame + pi->hdr_off[EMU_PKT_H_ATMETH], &atm);
	while (s != RESPST_DONE && s != RESPST_DROP) {
		switch (s) {
		case RESPST_CHK_PSN:
			next = RESPST_CHK_OP_VALID;
			if (uc) {
				/* rxe's check_psn for UC: after a lost or dropped packet the rest
				 * of the message is dropped; the next first packet starts over at
				 * its own PSN */
				if (q->dp.resp_drop || pi->psn != q->dp.resp_psn) {
					if (m & EMU_PKT_START) {
						q->dp.resp_drop = false;
						q->dp.resp_psn = pi->psn;
					} else {
						q->dp.resp_drop = true;
						next = RESPST_DROP;
					}
				}
			} else {
				/* rxe's check_psn for RC (IBTA 9.7.5.1.2 / 9.7.5.1.3) */
				int d = emu_psn_cmp(pi->psn, q->dp.resp_psn);

				if (d > 0)	/* a gap: one NAK per gap, then silence */
					next = q->dp.resp_nak_sent ? RESPST_DROP :
								    RESPST_ERR_PSN_OUT_OF_SEQ;
				else if (d < 0)
					next = RESPST_DUPLICATE_REQUEST;
				else	/* the expected PSN: the gap (if any) is closed */
					q->dp.resp_nak_sent = false;
			}
			break;
		case RESPST_ERR_PSN_OUT_OF_SEQ:
			/* C9-112: NAK with the ePSN, the requester goes back to it */
			q->dp.resp_nak_sent = true;
			send_ack(q, EMU_OP_RC | EMU_OP_ACK, q->dp.resp_psn, EMU_AETH_NAK_PSN_SEQ,
				 NULL, 0);
			next = RESPST_DONE;
			break;
		case RESPST_DUPLICATE_REQUEST: {
			/* rxe's duplicate_request() (9.7.5.1.3, C9-104..C9-106): nothing runs
			 * twice */
			const struct emu_resp_res *r;

			next = RESPST_DONE;
			if (m & (EMU_PKT_SEND | EMU_PKT_WRITE)) {
				/* acknowledge again, with the last PSN executed, whether or not
				 * the duplicate asks for it (the original ACK may be lost) */
				send_ack(q, EMU_OP_RC | EMU_OP_ACK, q->dp.resp_psn - 1,
					 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0);
				break;
			}
			r = res_find(q, pi->psn);
			if (!r || r->atomic != !!(m & EMU_PKT_ATOMIC) ||
			    (r->atomic && r->first_psn != pi->psn)) {
				next = RESPST_DROP; /* class D: no resource holds it */
				break;
			}
			if (r->atomic) { /* the saved result, not a second execution */
				send_ack_orig(q, EMU_OP_RC | EMU_OP_ATOMIC_ACK, pi->psn,
					      emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0,
					      r->orig);
				break;
			}
			/* READ: read the memory again (rxe's replay), with the R_Key checked
			 * again: it may have been invalidated since */
			if (reth.dma_len &&
			    emu_dp_rkey_check(q, reth.rkey, reth.va,
					     reth.dma_len, EMU_ACCESS_REMOTE_READ,
					     &rhost) != EMU_MR_OK) {
				next = RESPST_DROP;
				break;
			}
			read_reply(q, &reth, pi->psn, rhost, true);
			break;
		}
		case RESPST_CHK_OP_VALID:
			next = RESPST_CHK_RESOURCE;
			if ((m & EMU_PKT_READ &&
			     !(q->attr.qp_access_flags & IBV_ACCESS_REMOTE_READ)) ||
			    (m & EMU_PKT_WRITE &&
			     !(q->attr.qp_access_flags & IBV_ACCESS_REMOTE_WRITE)) ||
			    (m & EMU_PKT_ATOMIC &&
			     !(q->attr.qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC))) {
				/* rxe's check_op_valid: RC answers with an invalid request NAK,
				 * UC drops the message */
				nak = EMU_AETH_NAK_INVALID_REQ;
				wc_status = IBV_WC_REM_INV_REQ_ERR;
				next = uc ? RESPST_ERR_UC_DROP : RESPST_ERR_CLASS_AC;
			}
			break;
		case RESPST_CHK_RESOURCE:
			next = RESPST_CHK_RKEY;
			if (m & (EMU_PKT_READ | EMU_PKT_ATOMIC) && !q->attr.max_dest_rd_atomic) {
				/* rxe: RESPST_ERR_TOO_MANY_RDMA_ATM_REQ. With resources it never
				 * refuses: keeping within them is the requester's job
				 * (max_rd_atomic) and rxe recycles its responder resources */
				nak = EMU_AETH_NAK_INVALID_REQ;
				wc_status = IBV_WC_REM_INV_REQ_ERR;
				next = RESPST_ERR_CLASS_AC;
				break;
			}
			if (uc && m & EMU_PKT_START && m & EMU_PKT_SEND && q->dp.resp_wqe)
				q->dp.resp_off = 0; /* the tail of the last message was lost */
			if (m & EMU_PKT_RWR && !q->dp.resp_wqe) {
				q->dp.resp_wqe = take_rwqe(q);
				q->dp.resp_off = 0;
				if (!q->dp.resp_wqe)
					next = RESPST_ERR_RNR;
			}
			break;
		case RESPST_CHK_RKEY:
			next = RESPST_EXECUTE;
			if (m & EMU_PKT_RETH) {
				unsigned need = m & EMU_PKT_READ ? EMU_ACCESS_REMOTE_READ :
								  EMU_ACCESS_REMOTE_WRITE;
				enum emu_mr_status st = EMU_MR_OK;

				/* rxe: a zero-byte operation needs neither address nor rkey */
				if (reth.dma_len)
					st = emu_dp_rkey_check(q, reth.rkey,
							      reth.va, reth.dma_len, need, &rhost);
				if (st != EMU_MR_OK) {
					emu_dp_trace("qp %u resp: rkey %#x: %s", q->qp.qp_num,
						     reth.rkey, emu_mr_status_str(st));
					/* RC: class C; UC: the message is dropped (IBTA
					 * 9.7.5.1.4: no NAK on an unreliable connection) */
					nak = EMU_AETH_NAK_REM_ACCESS;
					wc_status = IBV_WC_REM_ACCESS_ERR;
					next = uc ? RESPST_ERR_UC_DROP : RESPST_ERR_CLASS_AC;
				} else {
					q->dp.resp_va = reth.va;
					q->dp.resp_rkey = reth.rkey;
					q->dp.resp_resid = q->dp.resp_length = reth.dma_len;
				}
			} else if (m & EMU_PKT_ATMETH) {
				/* rxe's check_rkey for an atomic: 8 bytes, REMOTE_ATOMIC */
				enum emu_mr_status st = emu_dp_rkey_check(
					q, atm.rkey, atm.va, sizeof(uint64_t),
					EMU_ACCESS_REMOTE_ATOMIC, &rhost);

				if (st != EMU_MR_OK) {
					emu_dp_trace("qp %u resp: atomic rkey %#x: %s", q->qp.qp_num,
						     atm.rkey, emu_mr_status_str(st));
					nak = EMU_AETH_NAK_REM_ACCESS;
					wc_status = IBV_WC_REM_ACCESS_ERR;
					next = RESPST_ERR_CLASS_AC;
				}
			}
			break;
		case RESPST_EXECUTE:
			next = RESPST_COMPLETE;
			if (m & EMU_PKT_SEND) {
				struct emu_rwqe *w = q->dp.resp_wqe;
				enum emu_mr_status st;

				/* A SEND longer than the receive WQE: on Linux 6.1 rxe's
				 * copy_data() fails with -EINVAL, so it is a malformed WQE: NAK
				 * remote operational error, receiver LOC_QP_OP_ERR, sender
				 * REM_OP_ERR (measured in the VM, verbs_probe_datapath). UC
				 * too: LOC_QP_OP_ERR and the QP to ERR, without a NAK
				 * (verbs_probe_mw "uc send too long"). */
				if (!w || q->dp.resp_off + (uint64_t)pi->paylen > w->length) {
					nak = EMU_AETH_NAK_REM_OP;
					wc_status = IBV_WC_LOC_QP_OP_ERR;
					next = RESPST_ERR_CLASS_AC;
					break;
				}
				st = emu_dp_copy_sge(q, w->sge, w->num_sge, q->dp.resp_off,
						     (void *)data, pi->paylen, true);
				if (st != EMU_MR_OK) { /* rxe: RESPST_ERR_MALFORMED_WQE */
					nak = EMU_AETH_NAK_REM_OP;
					wc_status = IBV_WC_LOC_QP_OP_ERR;
					next = RESPST_ERR_CLASS_AC;
					break;
				}
				q->dp.resp_off += pi->paylen;
				/* rxe's execute(): the IETH's key is invalidated after the data
				 * is placed, before the ePSN moves (class J on failure) */
				if (m & EMU_PKT_IETH) {
					inv_rkey = emu_be32_get(frame +
								pi->hdr_off[EMU_PKT_H_IETH]);
					if (emu_mw_invalidate(q, inv_rkey)) {
						next = RESPST_ERR_INVALIDATE_RKEY;
						break;
					}
				}
			} else if (m & EMU_PKT_WRITE) {
				void *host;

				if (pi->paylen > q->dp.resp_resid) {
					nak = EMU_AETH_NAK_INVALID_REQ;
					wc_status = IBV_WC_REM_INV_REQ_ERR;
					next = uc ? RESPST_ERR_UC_DROP : RESPST_ERR_CLASS_AC;
					break;
				}
				if (pi->paylen) {
					if (emu_dp_rkey_check(q, q->dp.resp_rkey, q->dp.resp_va, pi->paylen,
							     EMU_ACCESS_REMOTE_WRITE,
							     &host) != EMU_MR_OK) {
						nak = EMU_AETH_NAK_REM_ACCESS;
						wc_status = IBV_WC_REM_ACCESS_ERR;
						next = uc ? RESPST_ERR_UC_DROP :
							    RESPST_ERR_CLASS_AC;
						break;
					}
					memcpy(host, data, pi->paylen);
				}
				q->dp.resp_va += pi->paylen;
				q->dp.resp_resid -= pi->paylen;
			} else if (m & EMU_PKT_READ) {
				q->dp.resp_msn++; /* rxe: counted when the read starts (C9-148) */
				next = RESPST_READ_REPLY;
				break;
			} else if (m & EMU_PKT_ATOMIC) {
				uint64_t *p = rhost;

				/* rxe's atomic_reply(): the address must be 8-byte aligned in
				 * memory (RESPST_ERR_MISALIGNED_ATOMIC: an invalid request) */
				if ((uintptr_t)p & 7) {
					nak = EMU_AETH_NAK_INVALID_REQ;
					wc_status = IBV_WC_REM_INV_REQ_ERR;
					next = RESPST_ERR_CLASS_AC;
					break;
				}
				/* host order in memory, as rxe's *vaddr; atomic against other
				 * atomics of this process (rxe: atomic_ops_lock) */
				if (pi->opcode == (EMU_OP_RC | EMU_OP_CMP_SWAP)) {
					orig = atm.compare;
					__atomic_compare_exchange_n(p, &orig, atm.swap_add, false,
								    __ATOMIC_SEQ_CST,
								    __ATOMIC_SEQ_CST);
				} else {
					orig = __atomic_fetch_add(p, atm.swap_add,
								  __ATOMIC_SEQ_CST);
				}
				q->dp.resp_msn++;
				q->dp.resp_psn = (q->dp.resp_psn + 1) & EMU_PSN_MASK;
				res_add(q, true, pi->psn, pi->psn, orig);
				next = RESPST_ATOMIC_REPLY;
				break;
			}
			q->dp.resp_psn = (q->dp.resp_psn + 1) & EMU_PSN_MASK;
			if (m & EMU_PKT_END)
				q->dp.resp_msn++;
			break;
		case RESPST_READ_REPLY:
			read_reply(q, &reth, pi->psn, rhost, false);
			next = RESPST_DONE;
			break;
		case RESPST_ATOMIC_REPLY:
			send_ack_orig(q, EMU_OP_RC | EMU_OP_ATOMIC_ACK, pi->psn,
				      emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0, orig);
			next = RESPST_DONE;
			break;
		case RESPST_COMPLETE:
			if (m & EMU_PKT_COMP && q->dp.resp_wqe) {
				bool imm = m & EMU_PKT_IMMDT;
				bool wr = m & EMU_PKT_WRITE;

				struct emu_rwqe *w = q->dp.resp_wqe;

				if (m & EMU_PKT_IETH)
					q->dp.rx_inv = true, q->dp.rx_inv_rkey = inv_rkey;
				recv_wc(q, w, IBV_WC_SUCCESS,
					wr ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV,
					wr ? q->dp.resp_length : q->dp.resp_off, imm,
					imm ? imm_of(frame, pi) : 0,
					0, pi->bth.se);
				q->dp.rx_inv = false;
				q->dp.resp_wqe = NULL;
			}
			/* rxe's acknowledge(): nothing on anything but RC */
			next = pi->bth.ackreq && !uc ? RESPST_ACKNOWLEDGE : RESPST_DONE;
			break;
		case RESPST_ACKNOWLEDGE:
			if (!emu_dp_ack_hold(q, pi))
				send_ack(q, EMU_OP_RC | EMU_OP_ACK, pi->psn,
					 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0);
			next = RESPST_DONE;
			break;
		case RESPST_ERR_RNR:
			if (uc) { /* class D: the message is dropped silently */
				q->dp.resp_drop = true;
				next = RESPST_DROP;
				break;
			}
			/* no receive WQE: RNR NAK with the QP's min_rnr_timer; ePSN unchanged */
			send_ack(q, EMU_OP_RC | EMU_OP_ACK, pi->psn,
				 emu_aeth_rnr_nak(q->attr.min_rnr_timer), NULL, 0);
			next = RESPST_DONE;
			break;
		case RESPST_ERR_UC_DROP:
			/* UC errors of class D/E (rxe's ERR_RKEY_VIOLATION / ERR_LENGTH /
			 * unsupported opcode branches for UC): the rest of the message is
			 * dropped, no NAK, the QP stays up. A receive WQE from the SRQ is
			 * consumed and completes with the error (class E); one from the QP's
			 * own queue stays for the next message (class D/E without SRQ). */
			q->dp.resp_drop = true;
			if (q->dp.resp_wqe) {
				if (q->srq)
					recv_wc(q, q->dp.resp_wqe, wc_status, 0, 0, false, 0, 0,
						false);
				else
					put_back_rwqe(q, q->dp.resp_wqe);
				q->dp.resp_wqe = NULL;
			}
			next = RESPST_DROP;
			break;
		case RESPST_ERR_INVALIDATE_RKEY:
			/* rxe: class J. The receive WQE completes with REM_INV_REQ_ERR, the
			 * packet is still acknowledged (the sender's SEND succeeds), then the QP
			 * goes to ERR; the ePSN stays (measured, verbs_probe_mw) */
			if (q->dp.resp_wqe) {
				recv_wc(q, q->dp.resp_wqe, IBV_WC_REM_INV_REQ_ERR, 0, 0, false, 0, 0,
					false);
				q->dp.resp_wqe = NULL;
			}
			if (!uc)
				send_ack(q, EMU_OP_RC | EMU_OP_ACK, pi->psn,
					 emu_aeth_ack(EMU_AETH_CREDITS_INVALID), NULL, 0);
			emu_dp_qp_error(q);
			next = RESPST_DONE;
			break;
		case RESPST_ERR_CLASS_AC:
			if (q->dp.resp_wqe) {
				recv_wc(q, q->dp.resp_wqe, wc_status, 0, 0, false, 0, 0, false);
				q->dp.resp_wqe = NULL;
			}
			/* UC reaches this only on a local scatter error (rxe's
			 * ERR_MALFORMED_WQE): the QP goes to ERR, but no NAK leaves */
			if (!uc)
				send_ack(q, EMU_OP_RC | EMU_OP_ACK, pi->psn, nak, NULL, 0);
			emu_dp_qp_error(q);
			next = RESPST_DONE;
			break;
		default:
			next = RESPST_DROP;
			break;
		}
		emu_dp_trace("qp %u resp: %s psn %#x: %s --> %s", q->qp.qp_num,
			     emu_pkt_opcode_name(pi->opcode), pi->psn, resp_state_names[s],
			     resp_state_names[next]);
		s = next;
	}
}

void emu_dp_res_add(struct emu_vqp *q, bool atomic, uint32_t first, uint32_t last,
		    uint64_t orig)
{
	res_add(q, atomic, first, last, orig);
}
