/* CONN, REQ, ACC, REJ, DISC, NOTIFY, EST, PD, ID, EP rows of spec §15 that need a peer, run as
 * ONE-HOST loopback connections: a listener and a connecting id in the same case process, both
 * on the first local RDMA IPv4 address (192.0.2.1 on rxe0 in fixtures/rxe-ref.fabric and in the
 * reference VM, whose kernel rxe loops a connection to its own address back). Async rows use
 * two event channels read in turn by the one thread; sync rows (blocking accept/connect) put
 * the passive side in a second thread. Every row asserts exact event types, statuses and
 * private-data lengths, so the emulator and the real stack must agree on each.
 *
 * Each row listens on its own port (CONN_PORT + row) so a kernel id still in timewait from an
 * earlier case cannot collide. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "conformance/cm_util.h"
#include "conformance/conformance.h"

#define CONN_PORT 48000

/* ---- the loopback pair ---- */

struct lb {
	struct sockaddr_in addr;            /* the local address, port of the row */
	struct rdma_event_channel *lch, *ach; /* listener's (and its requests'), active's */
	struct rdma_cm_id *listen, *act, *pas;
};

static struct rdma_cm_event *get_ev(struct rdma_event_channel *ch)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev))
		conf_fatal("rdma_get_cm_event: %s", conf_errno_name(errno));
	return ev;
}

/* The next event of ch, which must be `type` with `status` (the case ends otherwise: what
 * follows would wait for events that never come). The caller acks it. */
static struct rdma_cm_event *want_ev(struct rdma_event_channel *ch, const char *side,
				     enum rdma_cm_event_type type, int status)
{
	struct rdma_cm_event *ev = get_ev(ch);

	if (ev->event != type || ev->status != status)
		conf_fatal("%s: %s status %d, want %s status %d", side, rdma_event_str(ev->event),
			   ev->status, rdma_event_str(type), status);
	return ev;
}

static void ack_want(struct rdma_event_channel *ch, const char *side,
		     enum rdma_cm_event_type type, int status)
{
	rdma_ack_cm_event(want_ev(ch, side, type, status));
}

static void lb_addr(struct lb *l, int row)
{
	memset(l, 0, sizeof *l);
	cm_peer_ipv4((uint16_t)(CONN_PORT + row), &l->addr);
}

static void lb_listen(struct lb *l, enum rdma_port_space ps)
{
	cm_as_peer(true); /* two-node: the listener (and its requests) on the peer host */
	l->lch = cm_channel();
	cm_as_peer(false);
	l->listen = cm_id(l->lch, ps);
	if (rdma_bind_addr(l->listen, (struct sockaddr *)&l->addr))
		conf_fatal("listener rdma_bind_addr: %s", conf_errno_name(errno));
	if (rdma_listen(l->listen, 8))
		conf_fatal("rdma_listen: %s", conf_errno_name(errno));
}

/* The active id, address and route resolved to the listener's address. */
static void lb_active(struct lb *l, enum rdma_port_space ps)
{
	l->ach = cm_channel();
	l->act = cm_id(l->ach, ps);
	if (rdma_resolve_addr(l->act, NULL, (struct sockaddr *)&l->addr, 2000))
		conf_fatal("rdma_resolve_addr: %s", conf_errno_name(errno));
	ack_want(l->ach, "active", RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	if (rdma_resolve_route(l->act, 2000))
		conf_fatal("rdma_resolve_route: %s", conf_errno_name(errno));
	ack_want(l->ach, "active", RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
}

static void mk_qp(struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof a);
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.qp_type = type;
	if (rdma_create_qp(id, NULL, &a))
		conf_fatal("rdma_create_qp: %s", conf_errno_name(errno));
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &qa, IBV_QP_STATE, &ia))
		return -1;
	return qa.qp_state;
}

static int link_layer(struct rdma_cm_id *id)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(id->verbs, id->port_num, &pa))
		conf_fatal("ibv_query_port: %s", conf_errno_name(errno));
	return pa.link_layer;
}

static int port_lid(struct rdma_cm_id *id)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(id->verbs, id->port_num, &pa))
		conf_fatal("ibv_query_port: %s", conf_errno_name(errno));
	return pa.lid;
}

/* Private data of length n: byte i is 0xa0 + i (mod 256), so every byte is checkable. */
static uint8_t pd_buf[256];

static const void *pd_fill(int n)
{
	for (int i = 0; i < (int)sizeof pd_buf; i++)
		pd_buf[i] = (uint8_t)(0xa0 + i);
	return n ? pd_buf : NULL;
}

/* The first `sent` bytes are the pattern and the rest up to len are zero (row 168). */
static void pd_check(const char *what, const void *data, int len, int sent)
{
	const uint8_t *p = data;

	if (!sent || !len)
		return;
	if (!conf_expect(p != NULL, "%s: private_data NULL", what))
		return;
	for (int i = 0; i < len; i++) {
		uint8_t want = i < sent ? (uint8_t)(0xa0 + i) : 0;

		if (p[i] != want) {
			conf_expect(false, "%s: byte %d is 0x%02x, want 0x%02x", what, i, p[i], want);
			return;
		}
	}
}

/* ---- connect -> passive action -> active outcome, one table row each ---- */

enum pas_act {
	P_ACCEPT,     /* rdma_accept with rep_pd bytes (or NULL param with a QP) */
	P_REJECT,     /* rdma_reject with rep_pd bytes */
	P_REJECT_ECE, /* rdma_reject_ece */
	P_NOLISTEN,   /* nobody listens on the port */
	P_DESTROY,    /* the passive destroys the request's id (row 114) */
	P_DESTROY_L,  /* the listener is destroyed with the request unread (row 172) */
};

struct conn_row {
	enum rdma_port_space ps;
	bool act_qp, pas_qp;  /* RC QPs (UD: passive QP only) */
	int req_pd;           /* connect's private data; -1: NULL conn_param */
	int resp_res, init_depth; /* connect's (when req_pd >= 0) */
	int req_errno;        /* rdma_connect fails with this errno (then nothing else) */
	int want_req_pd;      /* passive CONNECT_REQUEST private_data_len */
	int want_pas_resp, want_pas_init; /* -1: not checked; -2: the device's maxima (row 161) */
	enum pas_act act;
	int rep_pd;           /* accept/reject private data; -1: NULL accept param */
	int rep_errno;        /* the accept/reject fails with this errno */
	enum rdma_cm_event_type want_event; /* the active's outcome */
	int want_status, want_pd_len;
	bool disconnect;      /* then rows 187-189 */
};

static void disconnect_pair(struct lb *l, bool A, bool P)
{
	struct rdma_cm_event *ev;
	int ret;

	/* row 187: DISCONNECTED status 0 on both sides, the local QP in ERR */
	if (A) {
		ret = rdma_disconnect(l->act);
		EXPECT_INT("rdma_disconnect (active)", ret, 0);
	}
	if (P) {
		ev = want_ev(l->lch, "passive", RDMA_CM_EVENT_DISCONNECTED, 0);
		EXPECT_INT("passive DISCONNECTED private_data_len", ev->param.conn.private_data_len,
			   0);
		rdma_ack_cm_event(ev);
	}
	if (A && l->act->qp)
		EXPECT_INT("active QP state after disconnect", qp_state(l->act->qp), IBV_QPS_ERR);
	/* row 188: the responder's own disconnect after DISCONNECTED: 0, no second event */
	if (P) {
		ret = rdma_disconnect(l->pas);
		EXPECT_INT("rdma_disconnect (passive, after DISCONNECTED)", ret, 0);
	}
	if (A)
		ack_want(l->ach, "active", RDMA_CM_EVENT_DISCONNECTED, 0);
	/* row 189: the ids kept, TIMEWAIT_EXIT ends both (the next event of either side) */
	if (A)
		ack_want(l->ach, "active", RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
	if (P)
		ack_want(l->lch, "passive", RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
}

/* A two-host run (system target): the active half may start before the peer's passive half
 * listens. "Nobody listens" (REJ 8; UD: SIDR status 1) is then retried, for rows that expect
 * a listener, every 100 ms for up to 20 s (a real host: wall time). */
static bool no_listener(const struct rdma_cm_event *ev, enum rdma_port_space ps)
{
	if (ps == RDMA_PS_UDP)
		return ev->event == RDMA_CM_EVENT_UNREACHABLE && ev->status == 1;
	return ev->event == RDMA_CM_EVENT_REJECTED && ev->status == 8;
}

static void lb_drop_active(struct lb *l)
{
	if (l->act->qp)
		rdma_destroy_qp(l->act);
	rdma_destroy_id(l->act);
	rdma_destroy_event_channel(l->ach);
	l->act = NULL;
	l->ach = NULL;
}

static void conn_row(const struct conf_case *c)
{
	const struct conn_row *r = c->data;
	enum cm_role role = cm_role();
	bool A = role != CM_PASSIVE, P = role != CM_ACTIVE; /* the halves run here */
	struct rdma_cm_event *ev, *first = NULL;
	struct rdma_conn_param cp, ap;
	struct ibv_device_attr da;
	struct lb l;
	int ret = 0, e = 0;

	if (!A && r->act == P_NOLISTEN)
		conf_notrun("no passive half: nobody listens in this row");
	if (!A && r->req_errno)
		conf_notrun("no passive half: the active side's connect fails locally");
	lb_addr(&l, c->row);
	if (P && r->act != P_NOLISTEN)
		lb_listen(&l, r->ps);
	memset(&cp, 0, sizeof cp);
	if (r->req_pd >= 0) {
		cp.private_data = pd_fill(r->req_pd);
		cp.private_data_len = (uint8_t)r->req_pd;
		cp.responder_resources = (uint8_t)r->resp_res;
		cp.initiator_depth = (uint8_t)r->init_depth;
		cp.retry_count = 7;
		cp.rnr_retry_count = 7;
	}
	conf_stimulus("%s%s connect to %s:%d, private data %d, resp/init %d/%d",
		      role == CM_BOTH ? "loopback " : role == CM_ACTIVE ? "active half: " :
		      "passive half: ", r->ps == RDMA_PS_UDP ? "UD" : "RC",
		      inet_ntoa(l.addr.sin_addr), CONN_PORT + c->row, r->req_pd, r->resp_res,
		      r->init_depth);
	for (int attempt = 0; A; attempt++) {
		lb_active(&l, r->ps);
		if (r->act_qp)
			mk_qp(l.act, IBV_QPT_RC);
		errno = 0;
		ret = rdma_connect(l.act, r->req_pd >= 0 ? &cp : NULL);
		e = errno;
		if (role == CM_BOTH || ret || r->act == P_NOLISTEN)
			break;
		first = get_ev(l.ach);
		if (!no_listener(first, r->ps) || attempt == 200)
			break;
		rdma_ack_cm_event(first);
		first = NULL;
		lb_drop_active(&l);
		usleep(100000);
	}
	if (A && r->req_errno) {
		CM_EXPECT_FAIL("rdma_connect", ret, e, r->req_errno);
		conf_note("rdma_connect -1 errno %s", conf_errno_name(e));
		return;
	}
	if (A && !conf_expect(ret == 0, "rdma_connect: %d errno %s", ret, conf_errno_name(e)))
		return;

	if (P && r->act != P_NOLISTEN && r->act != P_DESTROY_L) {
		ev = want_ev(l.lch, "passive", RDMA_CM_EVENT_CONNECT_REQUEST, 0);
		l.pas = ev->id;
		/* row 166: the request's id is new, on the listener's channel and context */
		conf_expect(ev->listen_id == l.listen, "listen_id is not the listener");
		conf_expect(ev->id != l.listen, "request id is the listener");
		conf_expect(l.pas->channel == l.lch, "request id's channel is not the listener's");
		/* row 167: device, PD and port; source port == listen port */
		conf_expect(l.pas->verbs && l.pas->pd && l.pas->port_num >= 1,
			    "request id without verbs/pd/port");
		EXPECT_INT("request src port", ntohs(rdma_get_src_port(l.pas)), CONN_PORT + c->row);
		if (A)
			EXPECT_INT("request dst port", rdma_get_dst_port(l.pas),
				   rdma_get_src_port(l.act));
		if (r->ps == RDMA_PS_UDP) {
			EXPECT_INT("CONNECT_REQUEST ud.private_data_len", ev->param.ud.private_data_len,
				   r->want_req_pd);
			pd_check("request ud data", ev->param.ud.private_data,
				 ev->param.ud.private_data_len, r->req_pd);
		} else {
			EXPECT_INT("CONNECT_REQUEST private_data_len", ev->param.conn.private_data_len,
				   r->want_req_pd);
			pd_check("request data", ev->param.conn.private_data,
				 ev->param.conn.private_data_len, r->req_pd > 0 ? r->req_pd : 0);
			if (r->want_pas_resp == -2) {
				if (ibv_query_device(l.pas->verbs, &da))
					conf_fatal("ibv_query_device");
				EXPECT_INT("passive responder_resources", ev->param.conn.responder_resources,
					   da.max_qp_init_rd_atom);
				EXPECT_INT("passive initiator_depth", ev->param.conn.initiator_depth,
					   da.max_qp_rd_atom);
				EXPECT_INT("passive retry_count", ev->param.conn.retry_count, 7);
				EXPECT_INT("passive rnr_retry_count", ev->param.conn.rnr_retry_count, 7);
			} else if (r->want_pas_resp >= 0) {
				EXPECT_INT("passive responder_resources", ev->param.conn.responder_resources,
					   r->want_pas_resp);
				EXPECT_INT("passive initiator_depth", ev->param.conn.initiator_depth,
					   r->want_pas_init);
			}
			if (A && l.act->qp)
				EXPECT_HEX("passive qp_num (the active's QPN)", ev->param.conn.qp_num,
					   l.act->qp->qp_num);
		}
		rdma_ack_cm_event(ev);
		if (r->pas_qp)
			mk_qp(l.pas, r->ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
	}

	memset(&ap, 0, sizeof ap);
	ap.private_data = pd_fill(r->rep_pd > 0 ? r->rep_pd : 0);
	ap.private_data_len = (uint8_t)(r->rep_pd > 0 ? r->rep_pd : 0);
	ap.responder_resources = 1;
	ap.initiator_depth = 1;
	ap.retry_count = 7;
	ap.rnr_retry_count = 7;
	errno = 0;
	if (!P)
		goto active_outcome;
	switch (r->act) {
	case P_ACCEPT:
		ret = rdma_accept(l.pas, r->rep_pd >= 0 ? &ap : NULL);
		break;
	case P_REJECT:
		ret = rdma_reject(l.pas, ap.private_data, ap.private_data_len);
		break;
	case P_REJECT_ECE:
		ret = rdma_reject_ece(l.pas, NULL, 0);
		break;
	case P_DESTROY:
		ret = rdma_destroy_id(l.pas);
		break;
	case P_DESTROY_L: {
		/* "unread", not "not yet arrived": rdma_connect returns before the kernel's REQ
		 * reaches the listener, whose destruction would then leave no listener (REJ 8) */
		struct pollfd pf = { .fd = l.lch->fd, .events = POLLIN };

		/* 12 s: a request the CM dropped (-ENOMEM, no REJ) comes again with the
		 * sender's retry, 4.3 s later */
		if (poll(&pf, 1, 12000) != 1)
			conf_fatal("no CONNECT_REQUEST queued on the listener within 12 s");
		ret = rdma_destroy_id(l.listen);
		l.listen = NULL;
		break;
	}
	case P_NOLISTEN:
		ret = 0;
		break;
	}
	e = errno;
	if (r->rep_errno) {
		CM_EXPECT_FAIL("passive accept/reject", ret, e, r->rep_errno);
		/* a failed reject leaves the request: destroying it rejects (28, row 114) */
		if (r->act == P_REJECT)
			rdma_destroy_id(l.pas);
	} else
		conf_expect(ret == 0, "passive action: %d errno %s", ret, conf_errno_name(e));
	if (!A)
		goto established;

active_outcome:
	ev = first ? first : get_ev(l.ach);
	CM_EXPECT_EVENT("active event", ev->event, r->want_event);
	EXPECT_INT("active status", ev->status, r->want_status);
	if (r->ps == RDMA_PS_UDP) {
		EXPECT_INT("active ud.private_data_len", ev->param.ud.private_data_len,
			   r->want_pd_len);
		pd_check("active ud data", ev->param.ud.private_data, ev->param.ud.private_data_len,
			 r->rep_errno || r->rep_pd < 0 ? 0 : r->rep_pd);
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED && l.pas && l.pas->qp) {
			/* row 177 */
			EXPECT_HEX("ud.qp_num", ev->param.ud.qp_num, l.pas->qp->qp_num);
			EXPECT_HEX("ud.qkey", ev->param.ud.qkey, RDMA_UDP_QKEY);
			/* RoCE addresses by GRH only; on IB the kernel builds the AH from the path
			 * (ib_init_ah_attr_from_path: a GRH only for hop_limit > 0, i.e. off-subnet),
			 * so there the AH must reach the passive port's LID */
			if (link_layer(l.act) == IBV_LINK_LAYER_INFINIBAND)
				EXPECT_INT("ah_attr.dlid (the passive port's LID)",
					   ev->param.ud.ah_attr.dlid, port_lid(l.pas));
			else
				EXPECT_INT("ah_attr.is_global", ev->param.ud.ah_attr.is_global, 1);
		}
	} else {
		EXPECT_INT("active private_data_len", ev->param.conn.private_data_len,
			   r->want_pd_len);
		/* a failed accept/reject sent nothing of ours: the kernel's REJ is all zero */
		pd_check("active data", ev->param.conn.private_data,
			 ev->param.conn.private_data_len,
			 r->rep_errno || r->rep_pd < 0 ? 0 : r->rep_pd);
		if (ev->event == RDMA_CM_EVENT_ESTABLISHED && l.pas && l.pas->qp)
			EXPECT_HEX("conn.qp_num (the passive's QPN)", ev->param.conn.qp_num,
				   l.pas->qp->qp_num);
	}
	conf_note("active %s status %d, private_data_len %d", rdma_event_str(ev->event),
		  ev->status, r->ps == RDMA_PS_UDP ? ev->param.ud.private_data_len :
		  ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);

	if (A && r->want_event == RDMA_CM_EVENT_REJECTED && l.act->qp) /* row 164 */
		EXPECT_INT("active QP state after REJECTED", qp_state(l.act->qp), IBV_QPS_ERR);
established:
	if (r->want_event == RDMA_CM_EVENT_ESTABLISHED && r->ps != RDMA_PS_UDP && !r->rep_errno) {
		/* rows 153/173: both QPs RTS; 211: passive ESTABLISHED without private data */
		if (A && l.act->qp)
			EXPECT_INT("active QP state", qp_state(l.act->qp), IBV_QPS_RTS);
		if (P) {
			ev = want_ev(l.lch, "passive", RDMA_CM_EVENT_ESTABLISHED, 0);
			EXPECT_INT("passive ESTABLISHED private_data_len",
				   ev->param.conn.private_data_len, 0);
			if (l.pas->qp)
				EXPECT_INT("passive QP state", qp_state(l.pas->qp), IBV_QPS_RTS);
			rdma_ack_cm_event(ev);
		}
		if (r->disconnect)
			disconnect_pair(&l, A, P);
	}
	if (l.lch && (r->act == P_REJECT || r->act == P_REJECT_ECE || r->ps == RDMA_PS_UDP))
		/* rows 177/180: no event on the passive side (the active's answer came first) */
		conf_expect(!cm_readable(l.lch), "an event is queued on the passive side");
}

#define RC RDMA_PS_TCP
#define UD RDMA_PS_UDP
#define EST RDMA_CM_EVENT_ESTABLISHED
#define REJ RDMA_CM_EVENT_REJECTED
#define UNR RDMA_CM_EVENT_UNREACHABLE

/*                                    ps  aqp   pqp  req  rr ir  rqe wreq wres wini act rep  repe  event st pdlen disc */
static const struct conn_row conn_153 = { RC, true, true, 10, 1, 1, 0, 56, -1, -1, P_ACCEPT, 196, 0, EST, 0, 196, true };
static const struct conn_row conn_156 = { RC, true, false, 0, 1, 1, 0, 0, -1, -1, P_NOLISTEN, 0, 0, REJ, 8, 148, false };
static const struct conn_row conn_157 = { RC, true, true, 0, 1, 1, 0, 56, -1, -1, P_REJECT, 148, 0, REJ, 28, 148, false };
static const struct conn_row conn_158 = { RC, true, true, 56, 1, 1, 0, 56, -1, -1, P_ACCEPT, 0, 0, EST, 0, 196, false };
static const struct conn_row conn_159 = { RC, true, true, 57, 1, 1, EINVAL, 0, -1, -1, P_ACCEPT, 0, 0, EST, 0, 0, false };
static const struct conn_row conn_160 = { UD, false, true, 180, 0, 0, 0, 180, -1, -1, P_ACCEPT, 0, 0, EST, 0, 136, false };
static const struct conn_row conn_160b = { UD, false, true, 181, 0, 0, EINVAL, 0, -1, -1, P_ACCEPT, 0, 0, EST, 0, 0, false };
static const struct conn_row conn_161 = { RC, true, true, -1, 0, 0, 0, 56, -2, -2, P_ACCEPT, 0, 0, EST, 0, 196, false };
static const struct conn_row conn_162 = { RC, true, true, 0, 2, 1, 0, 56, 1, 2, P_ACCEPT, 0, 0, EST, 0, 196, false };
static const struct conn_row acc_173 = { RC, true, true, 0, 1, 1, 0, 56, -1, -1, P_ACCEPT, -1, 0, EST, 0, 196, false };
static const struct conn_row acc_176b = { RC, true, true, 0, 1, 1, 0, 56, -1, -1, P_ACCEPT, 197, EINVAL, REJ, 28, 148, false };
static const struct conn_row acc_177 = { UD, false, true, 0, 0, 0, 0, 180, -1, -1, P_ACCEPT, 136, 0, EST, 0, 136, false };
static const struct conn_row rej_180 = { RC, true, false, 0, 1, 1, 0, 56, -1, -1, P_REJECT, 0, 0, REJ, 28, 148, false };
static const struct conn_row rej_181b = { RC, true, false, 0, 1, 1, 0, 56, -1, -1, P_REJECT, 149, EINVAL, REJ, 28, 148, false };
static const struct conn_row rej_182 = { UD, false, false, 0, 0, 0, 0, 180, -1, -1, P_REJECT, 0, 0, UNR, 2, 136, false };
static const struct conn_row rej_182n = { UD, false, false, 0, 0, 0, 0, 0, -1, -1, P_NOLISTEN, 0, 0, UNR, 1, 136, false };
static const struct conn_row rej_183 = { RC, true, false, 0, 1, 1, 0, 56, -1, -1, P_REJECT_ECE, 0, 0, REJ, 35, 148, false };
static const struct conn_row id_114 = { RC, true, false, 0, 1, 1, 0, 56, -1, -1, P_DESTROY, 0, 0, REJ, 28, 148, false };
static const struct conn_row id_172 = { RC, true, false, 0, 1, 1, 0, 56, -1, -1, P_DESTROY_L, 0, 0, REJ, 28, 148, false };

/* ---- rows with their own sequence ---- */

/* Rows 154/155: an active id without a QP that names an external QPN sees CONNECT_RESPONSE;
 * the passive hears nothing until rdma_establish, then ESTABLISHED. */
static void conn_154(const struct conf_case *c)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct ibv_qp_init_attr a;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct lb l;
	int ret;

	cm_need_both_roles();
	lb_addr(&l, c->row);
	lb_listen(&l, RC);
	lb_active(&l, RC);
	cq = ibv_create_cq(l.act->verbs, 4, NULL, NULL, 0);
	memset(&a, 0, sizeof a);
	a.send_cq = a.recv_cq = cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 2;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.qp_type = IBV_QPT_RC;
	qp = cq ? ibv_create_qp(l.act->pd, &a) : NULL;
	if (!qp)
		conf_fatal("external QP: %s", conf_errno_name(errno));
	memset(&cp, 0, sizeof cp);
	cp.responder_resources = cp.initiator_depth = 1;
	cp.retry_count = cp.rnr_retry_count = 7;
	cp.qp_num = qp->qp_num;
	conf_stimulus("loopback RC connect without an id QP, conn_param.qp_num 0x%x; accept; "
		      "rdma_establish", qp->qp_num);
	if (rdma_connect(l.act, &cp))
		conf_fatal("rdma_connect: %s", conf_errno_name(errno));
	ev = want_ev(l.lch, "passive", RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	l.pas = ev->id;
	EXPECT_HEX("CONNECT_REQUEST qp_num", ev->param.conn.qp_num, qp->qp_num);
	rdma_ack_cm_event(ev);
	mk_qp(l.pas, IBV_QPT_RC);
	if (rdma_accept(l.pas, NULL))
		conf_fatal("rdma_accept: %s", conf_errno_name(errno));
	ev = want_ev(l.ach, "active", RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	EXPECT_HEX("CONNECT_RESPONSE qp_num", ev->param.conn.qp_num, l.pas->qp->qp_num);
	EXPECT_INT("CONNECT_RESPONSE private_data_len", ev->param.conn.private_data_len, 196);
	rdma_ack_cm_event(ev);
	conf_expect(!cm_readable(l.lch), "passive event before rdma_establish");
	ret = rdma_establish(l.act);
	EXPECT_INT("rdma_establish", ret, 0);
	ack_want(l.lch, "passive", RDMA_CM_EVENT_ESTABLISHED, 0);
	conf_note("CONNECT_RESPONSE; rdma_establish 0; passive ESTABLISHED");
}

static void established(struct lb *l, int row)
{
	struct rdma_cm_event *ev;

	cm_need_both_roles();
	lb_addr(l, row);
	lb_listen(l, RC);
	lb_active(l, RC);
	mk_qp(l->act, IBV_QPT_RC);
	if (rdma_connect(l->act, NULL))
		conf_fatal("rdma_connect: %s", conf_errno_name(errno));
	ev = want_ev(l->lch, "passive", RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	l->pas = ev->id;
	rdma_ack_cm_event(ev);
	mk_qp(l->pas, IBV_QPT_RC);
	if (rdma_accept(l->pas, NULL))
		conf_fatal("rdma_accept: %s", conf_errno_name(errno));
	ack_want(l->ach, "active", RDMA_CM_EVENT_ESTABLISHED, 0);
	ack_want(l->lch, "passive", RDMA_CM_EVENT_ESTABLISHED, 0);
}

/* Row 175: a second accept on an established id. */
static void acc_175(const struct conf_case *c)
{
	struct lb l;
	int ret, e;

	established(&l, c->row);
	conf_stimulus("rdma_accept again on the established passive id");
	errno = 0;
	ret = rdma_accept(l.pas, NULL);
	e = errno;
	CM_EXPECT_FAIL("second rdma_accept", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* Row 191: rdma_notify(IBV_EVENT_COMM_EST) on established ids: the CM is past REP, EISCONN. */
static void notify_191(const struct conf_case *c)
{
	struct lb l;
	int ret, e;

	established(&l, c->row);
	conf_stimulus("rdma_notify(IBV_EVENT_COMM_EST) on both established ids");
	errno = 0;
	ret = rdma_notify(l.pas, IBV_EVENT_COMM_EST);
	e = errno;
	CM_EXPECT_FAIL("rdma_notify (passive)", ret, e, EISCONN);
	errno = 0;
	ret = rdma_notify(l.act, IBV_EVENT_COMM_EST);
	e = errno;
	CM_EXPECT_FAIL("rdma_notify (active)", ret, e, EISCONN);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* Row 113: destroying a connected id; the peer hears DISCONNECTED. */
static void id_113(const struct conf_case *c)
{
	struct lb l;
	int ret;

	established(&l, c->row);
	conf_stimulus("rdma_destroy_id(established active id)");
	rdma_destroy_qp(l.act);
	ret = rdma_destroy_id(l.act);
	EXPECT_INT("rdma_destroy_id", ret, 0);
	ack_want(l.lch, "passive", RDMA_CM_EVENT_DISCONNECTED, 0);
	conf_note("0; passive DISCONNECTED");
}

/* Row 114b: the active side destroys its connecting id before the passive side answers the
 * request (it gave up). The CM's REJ reaches the request, whose event ucma drops (nobody
 * accepted it), and rdma_accept then fails -1/EINVAL ("the accept will just fail later",
 * as ucma_event_handler says). Neither id has a QP (the accept goes straight to the CM). The
 * pause lets the REJ arrive before the accept; kernel rxe in the reference VM needs it too. */
static void id_114b(const struct conf_case *c)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct lb l;
	int ret, e;

	cm_need_both_roles();
	lb_addr(&l, c->row);
	lb_listen(&l, RC);
	lb_active(&l, RC);
	memset(&cp, 0, sizeof cp);
	cp.responder_resources = cp.initiator_depth = 1;
	cp.qp_num = 0x1234;
	if (rdma_connect(l.act, &cp))
		conf_fatal("rdma_connect: %s", conf_errno_name(errno));
	ev = want_ev(l.lch, "passive", RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	l.pas = ev->id;
	rdma_ack_cm_event(ev);
	conf_stimulus("active destroys its connecting id; 300 ms; passive rdma_accept");
	ret = rdma_destroy_id(l.act);
	EXPECT_INT("rdma_destroy_id (active)", ret, 0);
	usleep(300000);
	cp.qp_num = 0x5678;
	errno = 0;
	ret = rdma_accept(l.pas, &cp);
	e = errno;
	CM_EXPECT_FAIL("rdma_accept", ret, e, EINVAL);
	conf_expect(!cm_readable(l.lch), "an event on the listener's channel after the accept");
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* Row 149: a listener bound to the wildcard address hears connections to a local RDMA IP. */
static void listen_149(const struct conf_case *c)
{
	struct rdma_cm_event *ev;
	struct sockaddr_in any;
	char buf[64];
	struct lb l;

	lb_addr(&l, c->row);
	cm_ipv4("0.0.0.0", (uint16_t)(CONN_PORT + c->row), &any);
	l.lch = cm_channel();
	l.listen = cm_id(l.lch, RC);
	if (rdma_bind_addr(l.listen, (struct sockaddr *)&any) || rdma_listen(l.listen, 8))
		conf_fatal("wildcard bind/listen: %s", conf_errno_name(errno));
	lb_active(&l, RC);
	mk_qp(l.act, IBV_QPT_RC);
	conf_stimulus("listener on 0.0.0.0:%d; connect to %s", CONN_PORT + c->row,
		      conf_fmt_sockaddr(buf, sizeof buf, (struct sockaddr *)&l.addr, sizeof l.addr));
	if (rdma_connect(l.act, NULL))
		conf_fatal("rdma_connect: %s", conf_errno_name(errno));
	ev = want_ev(l.lch, "passive", RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conf_expect(ev->listen_id == l.listen, "listen_id is not the wildcard listener");
	/* the request's id carries the address the active side connected to */
	EXPECT_HEX("request id's local address",
		   ((struct sockaddr_in *)rdma_get_local_addr(ev->id))->sin_addr.s_addr,
		   l.addr.sin_addr.s_addr);
	conf_expect(ev->id->verbs != NULL, "request id without device");
	rdma_reject(ev->id, NULL, 0);
	rdma_ack_cm_event(ev);
	ack_want(l.ach, "active", RDMA_CM_EVENT_REJECTED, 28);
	conf_note("CONNECT_REQUEST on the wildcard listener, local address %s",
		  inet_ntoa(l.addr.sin_addr));
}

/* rdma_listen (CM ID Operations): "If the rdma_cm_id is bound to a specific IP address, the
 * listen will be restricted to that address": a listener on the first local RDMA address,
 * a connection to the second (another device of the same host) finds no listener. */
static void listen_149b(const struct conf_case *c)
{
	struct rdma_cm_event *ev;
	struct sockaddr_in other;
	struct lb l;

	lb_addr(&l, c->row);
	if (!cm_local_ipv4_try(1, (uint16_t)(CONN_PORT + c->row), &other, NULL))
		conf_notrun("needs 2 RDMA ports with an IPv4 address");
	lb_listen(&l, RC);
	l.ach = cm_channel();
	l.act = cm_id(l.ach, RC);
	char a1[32], a2[32];

	inet_ntop(AF_INET, &l.addr.sin_addr, a1, sizeof a1);
	inet_ntop(AF_INET, &other.sin_addr, a2, sizeof a2);
	conf_stimulus("listener on %s:%d; connect to %s:%d", a1, CONN_PORT + c->row, a2,
		      CONN_PORT + c->row);
	if (rdma_resolve_addr(l.act, NULL, (struct sockaddr *)&other, 2000))
		conf_fatal("rdma_resolve_addr: %s", conf_errno_name(errno));
	ack_want(l.ach, "active", RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	if (rdma_resolve_route(l.act, 2000))
		conf_fatal("rdma_resolve_route: %s", conf_errno_name(errno));
	ack_want(l.ach, "active", RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	mk_qp(l.act, IBV_QPT_RC);
	if (rdma_connect(l.act, NULL))
		conf_fatal("rdma_connect: %s", conf_errno_name(errno));
	ev = get_ev(l.ach);
	CM_EXPECT_EVENT("active event", ev->event, RDMA_CM_EVENT_REJECTED);
	EXPECT_INT("active status (no listener)", ev->status, 8);
	rdma_ack_cm_event(ev);
	EXPECT_INT("listener channel readable (no request)", cm_readable(l.lch), 0);
	conf_note("REJECTED 8; the listener heard nothing");
}

/* rdma_accept (CM ID Operations): "Unlike the socket accept routine, rdma_accept is not
 * called on a listening rdma_cm_id": on the listener the kernel refuses (state LISTEN, not
 * CONNECT: cma.c rdma_accept). */
static void seed_accept_listener(const struct conf_case *c)
{
	struct rdma_conn_param cp;
	struct lb l;
	int ret, e;

	lb_addr(&l, c->row);
	lb_listen(&l, RC);
	memset(&cp, 0, sizeof cp);
	cp.responder_resources = cp.initiator_depth = 1;
	conf_stimulus("rdma_accept(listening id, {resp/init 1/1})");
	errno = 0;
	ret = rdma_accept(l.listen, &cp);
	e = errno;
	CM_EXPECT_FAIL("rdma_accept(listener)", ret, e, EINVAL);
	conf_note("-1 errno %s", conf_errno_name(e));
}

/* rdma_disconnect (CM ID Operations): "transitions any associated QP to the error state. This
 * action will result in any posted work requests being flushed to the completion queue." */
static void seed_disc_flush(const struct conf_case *c)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_cq *cq;
	struct ibv_wc wc;
	void *ctx;
	struct lb l;
	int n;

	established(&l, c->row);
	memset(&wr, 0, sizeof wr);
	wr.wr_id = 0x5eed;
	conf_stimulus("post a receive on the established active QP; rdma_disconnect; poll its CQ");
	if (ibv_post_recv(l.act->qp, &wr, &bad))
		conf_fatal("ibv_post_recv: %s", conf_errno_name(errno));
	if (ibv_req_notify_cq(l.act->recv_cq, 0))
		conf_fatal("ibv_req_notify_cq");
	EXPECT_INT("rdma_disconnect", rdma_disconnect(l.act), 0);
	n = ibv_poll_cq(l.act->recv_cq, 1, &wc);
	if (n == 0) {
		/* the flush may complete after the call returns: wait for the CQ's event */
		if (ibv_get_cq_event(l.act->recv_cq_channel, &cq, &ctx))
			conf_fatal("ibv_get_cq_event: %s", conf_errno_name(errno));
		ibv_ack_cq_events(cq, 1);
		n = ibv_poll_cq(l.act->recv_cq, 1, &wc);
	}
	if (!conf_expect(n == 1, "ibv_poll_cq: %d, want 1", n))
		return;
	EXPECT_HEX("wr_id", wc.wr_id, 0x5eed);
	EXPECT_INT("status", wc.status, IBV_WC_WR_FLUSH_ERR);
	EXPECT_INT("QP state", qp_state(l.act->qp), IBV_QPS_ERR);
	conf_note("recv completed with %s; QP ERR", ibv_wc_status_str(wc.status));
}

/* ---- sync mode: rdma_create_ep both sides, passive in a thread ---- */

struct ep_pass {
	struct rdma_addrinfo *rai;
	int row;
	int ret_get, ret_acc, ret_disc;
	int req_event, disc_event;
	bool has_qp, own_channel;
	int err;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int ready;
	struct rdma_cm_id *listen;
	int listen_ret; /* rdma_listen, made by the thread itself */
	int started;
};

/* The emulator moves its virtual clock only when every thread it knows waits, and it knows a
 * thread from its first library call: a passive thread makes one (rdma_listen) before the
 * main thread may block, else the main thread's wait could run the clock past the whole
 * exchange. Harmless on a real stack. */
static void wait_started(int *flag)
{
	while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST))
		sched_yield();
}

static void ep_qp_attr(struct ibv_qp_init_attr *a)
{
	memset(a, 0, sizeof *a);
	a->cap.max_send_wr = a->cap.max_recv_wr = 4;
	a->cap.max_send_sge = a->cap.max_recv_sge = 1;
	a->sq_sig_all = 1;
}

static void *ep_passive(void *arg)
{
	struct ep_pass *p = arg;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id = NULL;

	p->listen_ret = rdma_listen(p->listen, 4);
	__atomic_store_n(&p->started, 1, __ATOMIC_SEQ_CST);
	if (p->listen_ret)
		return NULL;
	p->ret_get = rdma_get_request(p->listen, &id);
	if (p->ret_get) {
		p->err = errno;
		return NULL;
	}
	/* row 171 */
	p->req_event = id->event ? (int)id->event->event : -1;
	p->has_qp = id->qp != NULL;
	p->own_channel = id->channel && id->channel != p->listen->channel;
	/* row 179: blocks until ESTABLISHED */
	p->ret_acc = rdma_accept(id, NULL);
	if (p->ret_acc) {
		p->err = errno;
		return NULL;
	}
	/* the active's disconnect arrives on the id's own channel, unless the sync accept's
	 * wait already took it (the DREQ came before the RTU, which was lost: id->event) */
	if (id->event && id->event->event == RDMA_CM_EVENT_DISCONNECTED) {
		p->disc_event = RDMA_CM_EVENT_DISCONNECTED;
	} else {
		if (rdma_get_cm_event(id->channel, &ev)) {
			p->err = errno;
			return NULL;
		}
		p->disc_event = ev->event;
		rdma_ack_cm_event(ev);
	}
	p->ret_disc = rdma_disconnect(id); /* DREP; sync: waits for the next event (timewait) */
	if (p->ret_disc)
		p->err = errno;
	rdma_destroy_ep(id);
	return NULL;
}

static void ep_sync(const struct conf_case *c)
{
	struct rdma_addrinfo hints, *prai = NULL, *arai = NULL;
	struct ibv_qp_init_attr a;
	struct rdma_cm_id *act = NULL;
	/* on the heap: a thread the case gives up on (conf_fatal) may still write to it */
	struct ep_pass *pp;
	struct sockaddr_in sin;
	char host[32], port[16];
	pthread_t th;
	int ret, e;

	cm_local_ipv4(0, 0, &sin, NULL);
	inet_ntop(AF_INET, &sin.sin_addr, host, sizeof host);
	snprintf(port, sizeof port, "%d", CONN_PORT + c->row);
	memset(&hints, 0, sizeof hints);
	hints.ai_flags = RAI_PASSIVE | RAI_NUMERICHOST;
	hints.ai_port_space = RDMA_PS_TCP;
	if (rdma_getaddrinfo(host, port, &hints, &prai))
		conf_fatal("rdma_getaddrinfo(passive): %s", conf_errno_name(errno));
	hints.ai_flags = RAI_NUMERICHOST;
	if (rdma_getaddrinfo(host, port, &hints, &arai))
		conf_fatal("rdma_getaddrinfo(active): %s", conf_errno_name(errno));
	pp = calloc(1, sizeof *pp);
	if (!pp)
		conf_fatal("calloc: %s", conf_errno_name(errno));
	pp->req_event = pp->disc_event = -1;
	ep_qp_attr(&a);
	conf_stimulus("rdma_create_ep passive %s:%s + listen + rdma_get_request + sync accept (thread); "
		      "rdma_create_ep active + sync connect + sync disconnect", host, port);
	if (rdma_create_ep(&pp->listen, prai, NULL, &a))
		conf_fatal("rdma_create_ep(passive): %s", conf_errno_name(errno));
	/* row 252: bound to the service port, no QP */
	EXPECT_INT("passive ep src port", ntohs(rdma_get_src_port(pp->listen)), CONN_PORT + c->row);
	conf_expect(pp->listen->qp == NULL, "passive ep has a QP");
	ep_qp_attr(&a);
	ret = rdma_create_ep(&act, arai, NULL, &a);
	if (ret)
		conf_fatal("rdma_create_ep(active): %s", conf_errno_name(errno));
	/* row 250: verbs, QP of ai_qp_type, a path */
	conf_expect(act->verbs != NULL, "active ep without verbs");
	conf_expect(act->qp && act->qp->qp_type == IBV_QPT_RC, "active ep QP is not RC");
	conf_expect(act->route.num_paths >= 1, "active ep num_paths %d", act->route.num_paths);
	if (pthread_create(&th, NULL, ep_passive, pp))
		conf_fatal("pthread_create");
	wait_started(&pp->started);
	if (pp->listen_ret)
		conf_fatal("rdma_listen (thread): %s", conf_errno_name(errno));
	/* row 251 */
	errno = 0;
	ret = rdma_connect(act, NULL);
	e = errno;
	EXPECT_INT("sync rdma_connect", ret, 0);
	if (ret) {
		/* the listener stays: its thread may wait in rdma_get_request on it (destroying
		 * an id another thread waits on frees what that thread reads) */
		conf_fatal("sync connect failed: errno %s", conf_errno_name(e));
	}
	conf_expect(act->event && act->event->event == RDMA_CM_EVENT_ESTABLISHED,
		    "active id->event is not ESTABLISHED");
	EXPECT_INT("active QP state", qp_state(act->qp), IBV_QPS_RTS);
	/* row 190 */
	ret = rdma_disconnect(act);
	EXPECT_INT("sync rdma_disconnect", ret, 0);
	conf_expect(act->event && act->event->event == RDMA_CM_EVENT_DISCONNECTED,
		    "active id->event after disconnect is not DISCONNECTED");
	pthread_join(th, NULL);
	EXPECT_INT("rdma_get_request", pp->ret_get, 0);
	EXPECT_INT("request id->event", pp->req_event, RDMA_CM_EVENT_CONNECT_REQUEST);
	conf_expect(pp->has_qp, "request id has no QP");
	conf_expect(pp->own_channel, "request id shares the listener's channel");
	EXPECT_INT("sync rdma_accept", pp->ret_acc, 0);
	EXPECT_INT("passive event after the active's disconnect", pp->disc_event,
		   RDMA_CM_EVENT_DISCONNECTED);
	if (pp->ret_disc)
		conf_expect(false, "passive sync rdma_disconnect: -1 errno %s",
			    conf_errno_name(pp->err));
	conf_note("get_request, accept, connect, disconnect: all 0");
	rdma_destroy_ep(act);
	rdma_destroy_ep(pp->listen);
	free(pp);
	rdma_freeaddrinfo(prai);
	rdma_freeaddrinfo(arai);
}

/* Row 163: a sync connect the peer rejects: -1/ECONNREFUSED, id->event REJECTED 28. */
struct rej_pass {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen;
	int ret, started;
	const char *step; /* the thread's step that failed, with its errno */
	int err;
};

static void *rej_passive(void *arg)
{
	struct rej_pass *p = arg;
	struct pollfd pfd = { .fd = p->ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (rdma_listen(p->listen, 8)) {
		p->step = "rdma_listen";
		p->err = errno;
		__atomic_store_n(&p->started, 1, __ATOMIC_SEQ_CST);
		return NULL;
	}
	__atomic_store_n(&p->started, 1, __ATOMIC_SEQ_CST);
	/* a request the CM dropped (-ENOMEM, no REJ) comes again with the sender's retry, 4.3 s
	 * later (CMA_CM_RESPONSE_TIMEOUT 20); one the library could not take never comes: 12 s
	 * at most */
	if (poll(&pfd, 1, 12000) != 1) {
		p->step = "no CONNECT_REQUEST within 12 s";
		p->err = ETIMEDOUT;
		return NULL;
	}
	if (rdma_get_cm_event(p->ch, &ev)) {
		p->step = "rdma_get_cm_event";
		p->err = errno;
		return NULL;
	}
	p->ret = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? rdma_reject(ev->id, NULL, 0) : -3;
	if (p->ret == -1) {
		p->step = "rdma_reject";
		p->err = errno;
	}
	{
		struct rdma_cm_id *req = ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ? ev->id : NULL;

		rdma_ack_cm_event(ev);
		if (req) /* the request's id is the application's to destroy */
			rdma_destroy_id(req);
	}
	return NULL;
}

static const bool destroy_after = true; /* ID-112c: conn_163, then destroy the id */

static void conn_163(const struct conf_case *c)
{
	struct rej_pass p;
	struct rdma_cm_id *act;
	pthread_t th;
	struct lb l;
	int ret, e;

	cm_need_both_roles();
	lb_addr(&l, c->row);
	l.lch = cm_channel();
	l.listen = cm_id(l.lch, RC);
	if (rdma_bind_addr(l.listen, (struct sockaddr *)&l.addr))
		conf_fatal("listener rdma_bind_addr: %s", conf_errno_name(errno));
	act = cm_id(NULL, RC);
	if (rdma_resolve_addr(act, NULL, (struct sockaddr *)&l.addr, 2000) ||
	    rdma_resolve_route(act, 2000))
		conf_fatal("sync resolve: %s", conf_errno_name(errno));
	mk_qp(act, IBV_QPT_RC);
	p.ch = l.lch;
	p.listen = l.listen;
	p.ret = -1;
	p.started = 0;
	p.step = NULL;
	p.err = 0;
	if (pthread_create(&th, NULL, rej_passive, &p))
		conf_fatal("pthread_create");
	wait_started(&p.started);
	conf_stimulus("sync rdma_connect; the listener (thread) rejects");
	errno = 0;
	ret = rdma_connect(act, NULL);
	e = errno;
	pthread_join(th, NULL);
	if (p.step)
		conf_expect(false, "listener thread: %s: errno %s", p.step, conf_errno_name(p.err));
	else
		EXPECT_INT("rdma_reject (thread)", p.ret, 0);
	CM_EXPECT_FAIL("sync rdma_connect", ret, e, ECONNREFUSED);
	if (conf_expect(act->event != NULL, "id->event NULL")) {
		CM_EXPECT_EVENT("id->event->event", act->event->event, RDMA_CM_EVENT_REJECTED);
		EXPECT_INT("id->event->status", act->event->status, 28);
	}
	conf_note("-1 errno %s, id->event REJECTED", conf_errno_name(e));
	if (c->data) {
		/* row 112: the sync id holds its REJECTED event unacked; destroy does not wait */
		rdma_destroy_qp(act);
		ret = rdma_destroy_id(act); /* EXPECT_INT evaluates its argument twice */
		EXPECT_INT("rdma_destroy_id(sync id holding id->event)", ret, 0);
	}
}

#define C(id, area, row, desc, fn, data) { id, area, row, desc, NULL, PRE_CM, NULL, 0, fn, data }
#define CT(id, area, row, desc, fn, data) { id, area, row, desc, NULL, PRE_CM, NULL, 30, fn, data }

static const struct conf_case cases[] = {
	CT("CONN-153", "CONN", 153, "loopback RC, listener accepts with 196 B: ESTABLISHED 0, "
	   "conn.qp_num = passive QPN, private_data_len 196, QPs RTS; REQ rows 166-168; then "
	   "DISCONNECTED both sides, no second one, TIMEWAIT_EXIT both (DISC-187..189)", conn_row,
	   &conn_153),
	C("CONN-154", "CONN", 154, "no id QP, conn_param.qp_num: CONNECT_RESPONSE, passive silent "
	  "until rdma_establish, then ESTABLISHED (155)", conn_154, NULL),
	C("CONN-156", "CONN", 156, "connect to a port without listener: REJECTED status 8",
	  conn_row, &conn_156),
	C("CONN-157", "CONN", 157, "listener rejects with 148 B: REJECTED 28, private_data_len "
	  "148, the bytes delivered; active QP ERR (164)", conn_row, &conn_157),
	C("CONN-158", "CONN", 158, "RC private data 56 B: passive sees the 56 bytes", conn_row,
	  &conn_158),
	C("CONN-159", "CONN", 159, "RC private data 57 B: rdma_connect -1/EINVAL", conn_row,
	  &conn_159),
	C("CONN-160", "CONN", 160, "UD private data 180 B: CONNECT_REQUEST ud len 180 (169), "
	  "ESTABLISHED ud len 136 (212)", conn_row, &conn_160),
	C("CONN-160b", "CONN", 160, "UD private data 181 B: rdma_connect -1/EINVAL", conn_row,
	  &conn_160b),
	C("CONN-161", "CONN", 161, "NULL conn_param: passive retry/rnr 7, responder_resources = "
	  "max_qp_init_rd_atom, initiator_depth = max_qp_rd_atom", conn_row, &conn_161),
	C("CONN-162", "CONN", 162, "initiator_depth 1, responder_resources 2: passive sees "
	  "responder_resources 1, initiator_depth 2", conn_row, &conn_162),
	CT("CONN-163", "CONN", 163, "sync connect, peer rejects: -1/ECONNREFUSED, id->event "
	   "REJECTED 28", conn_163, NULL),
	C("ACC-173", "ACC", 173, "accept with QP and NULL param: both ESTABLISHED, QPs RTS, "
	  "passive private_data_len 0 (211)", conn_row, &acc_173),
	C("ACC-175", "ACC", 175, "second accept: -1/EINVAL", acc_175, NULL),
	C("ACC-176b", "ACC", 176, "accept private data 197 B: -1/EINVAL, active REJECTED 28",
	  conn_row, &acc_176b),
	C("ACC-177", "ACC", 177, "UD accept with 136 B: no passive event; active ESTABLISHED, "
	  "ud.qp_num = passive QPN, qkey 0x01234567, ud len 136", conn_row, &acc_177),
	CT("ACC-179", "ACC", 179, "sync mode: rdma_create_ep (250, 252), rdma_get_request (171), "
	   "blocking accept and connect (179, 251), sync disconnect (190)", ep_sync, NULL),
	C("REJ-180", "REJ", 180, "rdma_reject without data: 0, active REJECTED 28 len 148, no "
	  "passive event", conn_row, &rej_180),
	C("REJ-181b", "REJ", 181, "reject private data 149 B: -1/EINVAL (the request stays; "
	  "active REJECTED 28 when it is destroyed)", conn_row, &rej_181b),
	C("REJ-182", "REJ", 182, "UD (SIDR) reject: active UNREACHABLE status 2, ud len 136",
	  conn_row, &rej_182),
	C("REJ-182n", "REJ", 182, "UD (SIDR) to a port without listener: UNREACHABLE status 1",
	  conn_row, &rej_182n),
	C("REJ-183", "REJ", 183, "rdma_reject_ece: active REJECTED status 35", conn_row, &rej_183),
	C("NOTIFY-191", "NOTIFY", 191, "rdma_notify(COMM_EST) on established ids: -1/EISCONN",
	  notify_191, NULL),
	CT("ID-112c", "ID", 112, "destroy a sync id holding its unacked REJECTED (row 163's): "
	   "0, no wait", conn_163, &destroy_after),
	C("ID-113", "ID", 113, "destroy a connected id: 0, peer DISCONNECTED", id_113, NULL),
	C("ID-114", "ID", 114, "passive destroys the request's id: active REJECTED 28", conn_row,
	  &id_114),
	C("ID-114b", "ID", 114, "active destroys its connecting id before the accept: "
	  "rdma_accept -1/EINVAL, no passive event", id_114b, NULL),
	C("ID-172", "ID", 172, "listener destroyed with an unread CONNECT_REQUEST: active "
	  "REJECTED 28", conn_row, &id_172),
	C("LISTEN-149", "LISTEN", 149, "listener on 0.0.0.0:port: CONNECT_REQUEST for a "
	  "connection to a local RDMA IP, the request id's local address is that IP", listen_149,
	  NULL),
	{ "LISTEN-149b", "LISTEN", 149, "listener on one local RDMA IP, connection to another "
	  "local RDMA IP (second device): REJECTED 8, no request on the listener",
	  "rdma_listen (CM ID Operations): 'If the rdma_cm_id is bound to a specific IP address, "
	  "the listen will be restricted to that address'", PRE_CM, NULL, 0, listen_149b, NULL },
	{ "SEED-30", "SEED", 175, "rdma_accept on the listening id: -1/EINVAL",
	  "rdma_accept (CM ID Operations): 'Unlike the socket accept routine, rdma_accept is not "
	  "called on a listening rdma_cm_id' (the error is unstated)", PRE_CM, NULL, 0,
	  seed_accept_listener, NULL },
	C("SEED-31", "SEED", 187, "rdma_disconnect (CM ID Operations): 'transitions any "
	  "associated QP to the error state ... any posted work requests being flushed': a "
	  "posted receive completes IBV_WC_WR_FLUSH_ERR, QP ERR", seed_disc_flush, NULL),
};

const struct conf_area conf_area_cmconn = { "CMCONN", cases, sizeof cases / sizeof cases[0] };
