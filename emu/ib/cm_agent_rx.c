/* The CM agent's message handlers: which id a received MAD belongs to (cm.c cm_acquire_id and
 * its variants), the duplicate and stale-connection checks of cm_match_req / cm_rep_handler,
 * the answers to messages no id takes (emu_cm_miss_table), and the table transition with its
 * event for the id found. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/ib/cm_agent_priv.h"

/* A reply that no id sends (cm_issue_rej, cm_issue_drep, the SIDR "unsupported"): built from
 * the received message and sent back where it came from. */
static void cm_issue_rej(struct emu_cm_agent *a, const struct emu_cm_addr *src,
			 const struct emu_cm_msg *rcv, unsigned reason, unsigned rejected)
{
	struct emu_cm_msg m = { .tid = rcv->tid, .remote_comm_id = rcv->local_comm_id,
				.local_comm_id = rcv->remote_comm_id,
				.message_rejected = (uint8_t)rejected, .reason = (uint16_t)reason };
	uint8_t mad[EMU_MAD_LEN];

	emu_cm_trace(a, "issue REJ(%u) to comm 0x%x", reason, rcv->local_comm_id);
	emu_cm_format(EMU_CM_ATTR_REJ, &m, mad);
	emu_cm_output(a, src, mad, false);
}

static void cm_issue_drep(struct emu_cm_agent *a, const struct emu_cm_addr *src,
			  const struct emu_cm_msg *dreq)
{
	struct emu_cm_msg m = { .tid = dreq->tid, .remote_comm_id = dreq->local_comm_id,
				.local_comm_id = dreq->remote_comm_id };
	uint8_t mad[EMU_MAD_LEN];

	emu_cm_trace(a, "issue DREP to comm 0x%x", dreq->local_comm_id);
	emu_cm_format(EMU_CM_ATTR_DREP, &m, mad);
	emu_cm_output(a, src, mad, false);
}

static void cm_event_init(struct emu_cm_event *ev, int type, const struct emu_cm_msg *m,
			  const struct emu_cm_addr *src, uint16_t attr)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = (enum emu_cm_uevent)type;
	ev->msg = m;
	ev->src = src;
	ev->private_data = m->private_data;
	ev->private_data_len = (uint8_t)emu_cm_private_data_size(attr);
}

/* Runs the transition of a received message on `id`, the answers to duplicates, and the
 * event. */
static void cm_recv_step(struct emu_cm_id *id, unsigned ev, const struct emu_cm_msg *m,
			 const struct emu_cm_addr *src, uint16_t attr)
{
	struct emu_cm_agent *a = id->agent;
	struct emu_cm_trans t;
	struct emu_cm_event e;
	uint8_t mad[EMU_MAD_LEN];

	if (emu_cm_step(id, ev, &t))
		return;
	if (t.actions & EMU_CM_A_RESEND_MRA) {
		emu_cm_format_mra(id, ev == EMU_CM_EV_RECV_REQ ? EMU_CM_MSG_RESPONSE_REQ :
								 EMU_CM_MSG_RESPONSE_REP, mad);
		emu_cm_output(a, src, mad, false);
	}
	if (t.actions & EMU_CM_A_RESEND_RTU) {
		emu_cm_format_rtu(id, mad);
		emu_cm_output(a, src, mad, false);
	}
	if (t.actions & EMU_CM_A_RESEND_DREP) {
		emu_cm_format_drep(id, mad);
		emu_cm_output(a, src, mad, false);
	}
	if (t.actions & EMU_CM_A_REJ_STALE) {
		emu_cm_format_rej(id, EMU_CM_TIMEWAIT, EMU_CM_REJ_STALE_CONN, NULL, 0, NULL, 0, mad);
		emu_cm_output(a, src, mad, false);
	}
	if (t.disp != EMU_CM_OK || !(t.actions & EMU_CM_A_EVENT))
		return;
	cm_event_init(&e, t.uevent, m, src, attr);
	emu_cm_deliver(id, &e);
}

/* ---- REQ: cm_req_handler + cm_match_req ---- */

static void cm_req(struct emu_cm_agent *a, const struct emu_cm_addr *src, struct emu_cm_msg *m)
{
	struct emu_cm_id *cur, *listen, *id;
	struct emu_cm_trans t;
	struct emu_cm_event e;
	unsigned plt;

	/* duplicate: a connection already holds (remote comm ID, remote CA GUID) */
	cur = emu_cm_find_remote_id(a, m->local_ca_guid, m->local_comm_id);
	if (cur) {
		a->cnt.rx_dup[0]++;
		/* cm_dup_req_handler: the quick REQ_RCVD check, then MRA_REQ_SENT / TIMEWAIT */
		if (cur->state != EMU_CM_REQ_RCVD &&
		    (cur->state == EMU_CM_MRA_REQ_SENT || cur->state == EMU_CM_TIMEWAIT)) {
			struct emu_cm_trans dt;
			uint8_t mad[EMU_MAD_LEN];

			emu_cm_lookup(cur->state, EMU_CM_EV_RECV_REQ, &dt);
			emu_cm_trace(a, "cm 0x%x: %s --REQ--> %s (dup)", cur->local_id,
				     emu_cm_state_name(cur->state), emu_cm_state_name(dt.next));
			if (dt.actions & EMU_CM_A_RESEND_MRA)
				emu_cm_format_mra(cur, EMU_CM_MSG_RESPONSE_REQ, mad);
			else
				emu_cm_format_rej(cur, EMU_CM_TIMEWAIT, EMU_CM_REJ_STALE_CONN, NULL,
						  0, NULL, 0, mad);
			emu_cm_output(a, src, mad, false);
		} else {
			emu_cm_trace(a, "cm 0x%x: %s --REQ--> %s (dup)", cur->local_id,
				     emu_cm_state_name(cur->state), emu_cm_state_name(cur->state));
		}
		return;
	}
	/* stale: the remote QPN is still connected to us */
	cur = emu_cm_find_remote_qpn(a, m->local_ca_guid, m->local_qpn);
	if (cur) {
		cm_issue_rej(a, src, m, EMU_CM_REJ_STALE_CONN, EMU_CM_MSG_RESPONSE_REQ);
		emu_cm_dreq_locked(cur, NULL, 0);
		return;
	}
	listen = emu_cm_find_listen(a, m->service_id);
	if (!listen) {
		emu_cm_trace(a, "REQ for service 0x%llx: no listener",
			     (unsigned long long)m->service_id);
		cm_issue_rej(a, src, m, EMU_CM_REJ_INVALID_SERVICE_ID, EMU_CM_MSG_RESPONSE_REQ);
		return;
	}
	id = emu_cm_id_alloc(a, listen->handler, listen->context);
	if (!id)
		return; /* -ENOMEM: the REQ is lost, the sender retries */
	id->remote_id = m->local_comm_id;
	id->service_id = m->service_id;
	id->service_mask = ~0ull;
	id->tid = m->tid;
	id->timeout_ms = emu_cm_convert_to_ms(m->local_cm_response_timeout);
	id->max_cm_retries = m->max_cm_retries;
	id->remote_qpn = m->local_qpn;
	id->remote_ca_guid = m->local_ca_guid;
	id->qp_type = m->transport_service_type;
	id->av = *src; /* cm_init_av_for_response */
	/* cm_format_paths_from_req: packet lifetime = Local ACK Timeout - 1; the av takes +1 */
	plt = m->primary.local_ack_timeout;
	plt -= plt > 0;
	id->av_timeout = (uint8_t)(plt + 1);
	emu_cm_insert_remote(id);
	id->state = EMU_CM_REQ_RCVD;
	emu_cm_step(listen, EMU_CM_EV_RECV_REQ, &t); /* trace: LISTEN --REQ--> LISTEN */
	emu_cm_trace(a, "cm 0x%x: IDLE --REQ--> REQ_RCVD (new id of listener 0x%x)", id->local_id,
		     listen->local_id);
	cm_event_init(&e, EMU_CM_UE_REQ_RECEIVED, m, src, EMU_CM_ATTR_REQ);
	e.listen_id = listen;
	emu_cm_deliver(id, &e);
}

/* ---- REP: cm_rep_handler / cm_dup_rep_handler ---- */

static void cm_rep(struct emu_cm_agent *a, const struct emu_cm_addr *src, struct emu_cm_msg *m)
{
	struct emu_cm_id *id = emu_cm_acquire(a, m->remote_comm_id, 0), *cur;
	uint32_t qpn;

	if (!id) {
		id = emu_cm_acquire(a, m->remote_comm_id, m->local_comm_id);
		if (id) /* cm_dup_rep_handler: counted by the table's DUP cell */
			cm_recv_step(id, EMU_CM_EV_RECV_REP, m, src, EMU_CM_ATTR_REP);
		return;
	}
	if (id->state != EMU_CM_REQ_SENT && id->state != EMU_CM_MRA_REQ_RCVD) {
		cm_recv_step(id, EMU_CM_EV_RECV_REP, m, src, EMU_CM_ATTR_REP); /* ignored */
		return;
	}
	/* the REP's QPN is in the REP's Local QPN, or its Local EECN for an XRC target */
	if (id->qp_type == EMU_CM_TRANSPORT_EXTENDED)
		qpn = m->local_eecn;
	else
		qpn = m->local_qpn;
	if (emu_cm_find_remote_id(a, m->local_ca_guid, m->local_comm_id)) {
		emu_cm_trace(a, "cm 0x%x: REP: remote ID already connected: dropped", id->local_id);
		return;
	}
	cur = emu_cm_find_remote_qpn(a, m->local_ca_guid, qpn);
	if (cur) {
		cm_issue_rej(a, src, m, EMU_CM_REJ_STALE_CONN, EMU_CM_MSG_RESPONSE_REP);
		emu_cm_dreq_locked(cur, NULL, 0);
		return;
	}
	id->remote_id = m->local_comm_id;
	id->remote_ca_guid = m->local_ca_guid;
	id->remote_qpn = qpn;
	emu_cm_insert_remote(id);
	/* av.timeout becomes the QP's ACK timeout from the target's ACK delay */
	id->av_timeout = (uint8_t)emu_cm_ack_timeout(m->target_ack_delay, id->av_timeout - 1u);
	cm_recv_step(id, EMU_CM_EV_RECV_REP, m, src, EMU_CM_ATTR_REP);
}

/* ---- MRA: cm_acquire_mraed_id + cm_mra_handler ---- */

static void cm_mra(struct emu_cm_agent *a, const struct emu_cm_addr *src, struct emu_cm_msg *m)
{
	struct emu_cm_id *id;
	struct emu_cm_trans t;
	struct emu_cm_event e;
	unsigned ev, timeout;

	switch (m->message_mraed) {
	case EMU_CM_MSG_RESPONSE_REQ:
		id = emu_cm_acquire(a, m->remote_comm_id, 0);
		ev = EMU_CM_EV_RECV_MRA_REQ;
		break;
	case EMU_CM_MSG_RESPONSE_REP:
		id = emu_cm_acquire(a, m->remote_comm_id, m->local_comm_id);
		ev = EMU_CM_EV_RECV_MRA_REP;
		break;
	default:
		id = emu_cm_acquire(a, m->remote_comm_id, m->local_comm_id);
		ev = EMU_CM_EV_RECV_MRA_OTHER;
		break;
	}
	if (!id)
		return;
	timeout = emu_cm_mra_timeout_ms(m->service_timeout, id->av_timeout);
	/* ib_modify_mad fails when the MAD is no longer outstanding: the MRA is dropped */
	if (emu_cm_lookup(id->state, ev, &t) == 0 && (t.actions & EMU_CM_A_EXTEND_TIMER) &&
	    !id->out.active) {
		emu_cm_trace(a, "cm 0x%x: MRA for a MAD no longer outstanding: dropped", id->local_id);
		return;
	}
	if (emu_cm_step(id, ev, &t) || t.disp != EMU_CM_OK)
		return;
	if (t.actions & EMU_CM_A_EXTEND_TIMER) {
		/* ib_modify_mad (6.1): the new timeout counts from now and, saved in the send
		 * buffer, also paces the remaining retries */
		id->out.timeout_ms = timeout;
		id->out.state = id->state; /* msg->context[1] */
		emu_timer_arm_in(a->clk, &id->out.timer, (uint64_t)timeout * EMU_NSEC_PER_MSEC);
		emu_cm_trace(a, "cm 0x%x: MRA: response timeout now %u ms", id->local_id, timeout);
	}
	cm_event_init(&e, t.uevent, m, src, EMU_CM_ATTR_MRA);
	emu_cm_deliver(id, &e);
}

/* ---- REJ: cm_acquire_rejected_id + cm_rej_handler ---- */

static void cm_rej(struct emu_cm_agent *a, const struct emu_cm_addr *src, struct emu_cm_msg *m)
{
	struct emu_cm_id *id;

	if (m->reason == EMU_CM_REJ_TIMEOUT) {
		uint64_t guid = 0;

		for (int i = 0; i < 8; i++)
			guid = guid << 8 | m->ari[i];
		id = emu_cm_find_remote_id(a, guid, m->local_comm_id);
	} else if (m->message_rejected == EMU_CM_MSG_RESPONSE_REQ) {
		id = emu_cm_acquire(a, m->remote_comm_id, 0);
	} else {
		id = emu_cm_acquire(a, m->remote_comm_id, m->local_comm_id);
	}
	if (!id)
		return;
	cm_recv_step(id, m->reason == EMU_CM_REJ_STALE_CONN ? EMU_CM_EV_RECV_REJ_STALE :
							      EMU_CM_EV_RECV_REJ,
		     m, src, EMU_CM_ATTR_REJ);
}

/* ---- DREQ / DREP / RTU ---- */

static void cm_dreq(struct emu_cm_agent *a, const struct emu_cm_addr *src, struct emu_cm_msg *m)
{
	struct emu_cm_id *id = emu_cm_acquire(a, m->remote_comm_id, m->local_comm_id);

	if (!id) {
		a->cnt.rx_dup[5]++;
		cm_issue_drep(a, src, m);
		return;
	}
	if (id->local_qpn != m->remote_qpn_eecn) {
		emu_cm_trace(a, "cm 0x%x: DREQ for QPN 0x%x, not ours (0x%x): dropped", id->local_id,
			     m->remote_qpn_eecn, id->local_qpn);
		return;
	}
	if (id->state == EMU_CM_ESTABLISHED || id->state == EMU_CM_REP_SENT ||
	    id->state == EMU_CM_DREQ_SENT || id->state == EMU_CM_MRA_REP_RCVD)
		id->tid = m->tid; /* the DREP answers with the DREQ's TID */
	cm_recv_step(id, EMU_CM_EV_RECV_DREQ, m, src, EMU_CM_ATTR_DREQ);
}

static void cm_by_ids(struct emu_cm_agent *a, const struct emu_cm_addr *src, struct emu_cm_msg *m,
		      unsigned ev, uint16_t attr)
{
	struct emu_cm_id *id = emu_cm_acquire(a, m->remote_comm_id, m->local_comm_id);

	if (id)
		cm_recv_step(id, ev, m, src, attr);
}

/* ---- SIDR: cm_sidr_req_handler / cm_sidr_rep_handler ---- */

static bool addr_eq(const struct emu_cm_addr *x, const struct emu_cm_addr *y)
{
	return x->lid == y->lid && !memcmp(x->gid, y->gid, 16);
}

static void cm_sidr_req(struct emu_cm_agent *a, const struct emu_cm_addr *src,
			struct emu_cm_msg *m)
{
	struct emu_cm_id *id, *listen;
	struct emu_cm_event e;

	/* cm_insert_remote_sidr: (Request ID, requester's address) being served: duplicate */
	for (size_t i = 0; i < a->sidr.n; i++) {
		const struct emu_cm_id *cur = a->sidr.v[i];

		if (cur->sidr_remote_id == m->request_id && addr_eq(&cur->av, src)) {
			a->cnt.rx_dup[7]++;
			emu_cm_trace(a, "SIDR_REQ 0x%x: duplicate, dropped", m->request_id);
			return;
		}
	}
	id = emu_cm_id_alloc(a, NULL, NULL);
	if (!id)
		return;
	/* without room in the table, as without memory for the id: dropped (the requester
	 * resends) */
	if (emu_cm_idset_add(&a->sidr, id)) {
		emu_cm_id_free(id);
		return;
	}
	id->sidr_remote_id = m->request_id;
	id->service_id = m->service_id;
	id->service_mask = ~0ull;
	id->tid = m->tid;
	id->av = *src;
	id->in_sidr = true;
	id->state = EMU_CM_SIDR_REQ_RCVD;
	emu_cm_trace(a, "cm 0x%x: IDLE --SIDR_REQ--> SIDR_REQ_RCVD", id->local_id);
	listen = emu_cm_find_listen(a, m->service_id);
	if (!listen) {
		struct emu_cm_sidr_rep_param p = { .status = EMU_CM_SIDR_UNSUPPORTED };

		emu_cm_send_sidr_rep(id, &p);
		emu_cm_id_free(id);
		return;
	}
	id->handler = listen->handler;
	id->context = listen->context;
	cm_event_init(&e, EMU_CM_UE_SIDR_REQ_RECEIVED, m, src, EMU_CM_ATTR_SIDR_REQ);
	e.listen_id = listen;
	emu_cm_deliver(id, &e);
}

static void cm_sidr_rep(struct emu_cm_agent *a, const struct emu_cm_addr *src,
			struct emu_cm_msg *m)
{
	struct emu_cm_id *id = emu_cm_acquire(a, m->request_id, 0);

	if (id)
		cm_recv_step(id, EMU_CM_EV_RECV_SIDR_REP, m, src, EMU_CM_ATTR_SIDR_REP);
}

void emu_cm_rx_one(struct emu_cm_agent *a, const struct emu_cm_addr *src, const uint8_t *mad,
		   size_t len)
{
	/* on the stack: nothing keeps the unpacked message past this call (a malloc and a
	 * free of its 592 bytes cost ~150 instructions a MAD) */
	struct emu_cm_msg msg, *m = &msg;
	uint16_t attr = 0;
	int c;

	if (emu_cm_unpack(mad, len, &attr, m) || (c = emu_cm_class(attr)) < 0) {
		a->cnt.rx_bad++;
		return;
	}
	a->cnt.rx[c]++;
	switch (attr) {
	case EMU_CM_ATTR_REQ:
		cm_req(a, src, m);
		break;
	case EMU_CM_ATTR_MRA:
		cm_mra(a, src, m);
		break;
	case EMU_CM_ATTR_REJ:
		cm_rej(a, src, m);
		break;
	case EMU_CM_ATTR_REP:
		cm_rep(a, src, m);
		break;
	case EMU_CM_ATTR_RTU:
		cm_by_ids(a, src, m, EMU_CM_EV_RECV_RTU, attr);
		break;
	case EMU_CM_ATTR_DREQ:
		cm_dreq(a, src, m);
		break;
	case EMU_CM_ATTR_DREP:
		cm_by_ids(a, src, m, EMU_CM_EV_RECV_DREP, attr);
		break;
	case EMU_CM_ATTR_SIDR_REQ:
		cm_sidr_req(a, src, m);
		break;
	case EMU_CM_ATTR_SIDR_REP:
		cm_sidr_rep(a, src, m);
		break;
	default: /* LAP/APR: the alternate-path machine is not modelled (cm_state.h) */
		emu_cm_trace(a, "%s: not modelled, dropped", emu_cm_attr_name(attr));
		break;
	}
}
