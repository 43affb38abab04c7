/* librdmacm connections between two emulated hosts in one process: host A (the attached one)
 * connects to host B (rdmaemu_ctl_open_host_devices + rdmaemu_ctl_cm_host), through the
 * emulated kernel rdma_cm, the IB CM agents on QP1 and the RoCEv2 wire of
 * fixtures/rxe-ref2.fabric. Addresses through a stand-in module, routes through IB_PATH
 * (cma_conn_test.h) until the address and route modules land. */
#include "config.h"

#include <pthread.h>
#include <sched.h>

#include "emu/verbs/tests/verbs_test.h"
#include "lib/tests/cma_conn_test.h"
#include "rdmaemu/ctl.h"

#define PORT 7471

static uint64_t now_ns(void)
{
	uint64_t t = 0;

	assert_int_equal(rdmaemu_ctl_now_ns(&t), 0);
	return t;
}

/* The next event of ch: it must be `type` with `status`; returned unacked. */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type,
				    int status)
{
	struct rdma_cm_event *ev;

	assert_int_equal(rdma_get_cm_event(ch, &ev), 0);
	if (ev->event != type)
		fail_msg("event %s (status %d), expected %s", rdma_event_str(ev->event), ev->status,
			 rdma_event_str(type));
	assert_int_equal(ev->status, status);
	return ev;
}

static void expect_ack(struct rdma_event_channel *ch, enum rdma_cm_event_type type, int status)
{
	assert_int_equal(rdma_ack_cm_event(expect(ch, type, status)), 0);
}

struct side {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
};

/* B: a channel of host B and a listener on 0.0.0.0:port. */
static void listen_b(struct side *b, enum rdma_port_space ps, uint16_t port)
{
	struct sockaddr_in any;

	assert_int_equal(rdmaemu_ctl_cm_host("B"), 0);
	b->ch = rdma_create_event_channel();
	assert_int_equal(rdmaemu_ctl_cm_host(NULL), 0);
	assert_non_null(b->ch);
	assert_int_equal(rdma_create_id(b->ch, &b->id, NULL, ps), 0);
	standin_dst(&any, "0.0.0.0", port);
	assert_int_equal(rdma_bind_addr(b->id, (struct sockaddr *)&any), 0);
	assert_int_equal(rdma_listen(b->id, 8), 0);
}

/* A: an id resolved (address and route) towards B:port. */
static void resolve_a(struct side *a, enum rdma_port_space ps, uint16_t port)
{
	struct sockaddr_in dst;

	a->ch = rdma_create_event_channel();
	assert_non_null(a->ch);
	assert_int_equal(rdma_create_id(a->ch, &a->id, NULL, ps), 0);
	standin_dst(&dst, "192.0.2.66", port);
	assert_int_equal(rdma_resolve_addr(a->id, NULL, (struct sockaddr *)&dst, 2000), 0);
	expect_ack(a->ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	assert_int_equal(standin_route(a->id), 0);
	expect_ack(a->ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
}

static void create_qp(struct rdma_cm_id *id, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = type };
	struct ibv_cq *cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);

	assert_non_null(cq);
	qa.send_cq = qa.recv_cq = cq;
	qa.sq_sig_all = 1;
	assert_int_equal(rdma_create_qp(id, NULL, &qa), 0);
}

static void destroy_qp(struct rdma_cm_id *id)
{
	struct ibv_cq *cq = id->qp->send_cq;

	rdma_destroy_qp(id);
	assert_int_equal(ibv_destroy_cq(cq), 0);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	assert_int_equal(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia), 0);
	return a.qp_state;
}

static void side_done(struct side *s)
{
	if (s->id) {
		if (s->id->qp)
			destroy_qp(s->id);
		assert_int_equal(rdma_destroy_id(s->id), 0);
	}
	if (s->ch)
		rdma_destroy_event_channel(s->ch);
}

/* One completion of cq, advancing virtual time until it comes. */
static void wait_wc(struct ibv_cq *cq, enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc wc;
	int n;

	for (int i = 0; i < 100000; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		assert_true(n >= 0);
		if (n) {
			assert_int_equal(wc.status, IBV_WC_SUCCESS);
			assert_int_equal(wc.opcode, op);
			if (op == IBV_WC_RECV)
				assert_int_equal(wc.byte_len, len);
			return;
		}
		assert_int_equal(rdmaemu_ctl_advance_ns(1000), 0);
	}
	fail_msg("no completion");
}

/* SEND of msg from `from` to `to` (RC). */
static void send_one(struct rdma_cm_id *from, struct rdma_cm_id *to, const char *msg)
{
	char sbuf[32], rbuf[32];
	struct ibv_mr *smr = ibv_reg_mr(from->pd, sbuf, sizeof sbuf, 0);
	struct ibv_mr *rmr = ibv_reg_mr(to->pd, rbuf, sizeof rbuf, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge ss = { (uintptr_t)sbuf, (uint32_t)strlen(msg), smr->lkey };
	struct ibv_sge rs = { (uintptr_t)rbuf, sizeof rbuf, rmr->lkey };
	struct ibv_send_wr swr = { .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND }, *bs;
	struct ibv_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 }, *br;

	memset(rbuf, 0, sizeof rbuf);
	memcpy(sbuf, msg, strlen(msg));
	assert_int_equal(ibv_post_recv(to->qp, &rwr, &br), 0);
	assert_int_equal(ibv_post_send(from->qp, &swr, &bs), 0);
	wait_wc(from->qp->send_cq, IBV_WC_SEND, 0);
	wait_wc(to->qp->recv_cq, IBV_WC_RECV, (uint32_t)strlen(msg));
	assert_memory_equal(rbuf, msg, strlen(msg));
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
}

/* ---- RC: connect, accept, established, SEND both ways, disconnect, timewait ---- */

static void test_rc_connect_send_disconnect(void **state)
{
	struct side a = { 0 }, b = { 0 }, conn = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;
	uint64_t t;

	(void)state;
	listen_b(&b, RDMA_PS_TCP, PORT);
	resolve_a(&a, RDMA_PS_TCP, PORT);
	create_qp(a.id, IBV_QPT_RC);
	assert_int_equal(qp_state(a.id->qp), IBV_QPS_INIT);
	cp.private_data = "hello B";
	cp.private_data_len = 8;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 5;
	cp.rnr_retry_count = 6;
	assert_int_equal(rdma_connect(a.id, &cp), 0);

	/* B: CONNECT_REQUEST with the user's part of the REQ private data (56 bytes) */
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	assert_ptr_equal(ev->listen_id, b.id);
	conn.id = ev->id;
	assert_int_equal(ev->param.conn.private_data_len, 56);
	assert_string_equal(ev->param.conn.private_data, "hello B");
	assert_int_equal(ev->param.conn.responder_resources, 1);
	assert_int_equal(ev->param.conn.initiator_depth, 1);
	assert_int_equal(ev->param.conn.retry_count, 5);
	assert_int_equal(ev->param.conn.rnr_retry_count, 6);
	assert_int_equal(ev->param.conn.qp_num, a.id->qp->qp_num);
	/* the new id: B's device, local = listen port, peer = A's source port */
	assert_int_equal(ntohs(rdma_get_src_port(conn.id)), PORT);
	assert_int_equal(rdma_get_dst_port(conn.id), rdma_get_src_port(a.id));
	assert_int_equal(((struct sockaddr_in *)rdma_get_peer_addr(conn.id))->sin_addr.s_addr,
			 htonl(0xc0000241));
	assert_int_not_equal(ibv_get_device_guid(conn.id->verbs->device),
			     ibv_get_device_guid(a.id->verbs->device));
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_qp(conn.id, IBV_QPT_RC);
	memset(&cp, 0, sizeof cp);
	cp.private_data = "welcome";
	cp.private_data_len = 8;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	assert_int_equal(rdma_accept(conn.id, &cp), 0);
	assert_int_equal(qp_state(conn.id->qp), IBV_QPS_RTS);

	/* A: ESTABLISHED with the REP's data (196 bytes), QP in RTS */
	ev = expect(a.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_int_equal(ev->param.conn.private_data_len, 196);
	assert_string_equal(ev->param.conn.private_data, "welcome");
	assert_int_equal(ev->param.conn.qp_num, conn.id->qp->qp_num);
	assert_int_equal(ev->param.conn.rnr_retry_count, 7);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(qp_state(a.id->qp), IBV_QPS_RTS);
	/* B: ESTABLISHED on the RTU, no private data */
	ev = expect(b.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_ptr_equal(ev->id, conn.id);
	assert_int_equal(ev->param.conn.private_data_len, 0);
	assert_int_equal(rdma_ack_cm_event(ev), 0);

	send_one(a.id, conn.id, "ping");
	send_one(conn.id, a.id, "pong!");

	/* A disconnects: B sees DISCONNECTED on the DREQ, answers with its own rdma_disconnect
	 * (the DREP), then A sees DISCONNECTED; both QPs are in ERR; timewait follows */
	assert_int_equal(rdma_disconnect(a.id), 0);
	assert_int_equal(qp_state(a.id->qp), IBV_QPS_ERR);
	expect_ack(b.ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	assert_int_equal(rdma_disconnect(conn.id), 0);
	assert_int_equal(qp_state(conn.id->qp), IBV_QPS_ERR);
	expect_ack(a.ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	t = now_ns();
	/* a second disconnect is not an error and produces nothing */
	assert_int_equal(rdma_disconnect(a.id), 0);
	expect_ack(a.ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
	/* active timewait: convert(av.timeout), av.timeout = cm_ack_timeout(15, 16) = 17: 512 ms */
	assert_true(now_ns() - t >= 512000000ull && now_ns() - t < 513000000ull);
	expect_ack(b.ch, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0);
	side_done(&conn);
	side_done(&a);
	side_done(&b);
}

/* ---- REJ with private data; REJ 8 without listener ---- */

static void test_rc_reject(void **state)
{
	struct side a = { 0 }, b = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *conn;

	(void)state;
	listen_b(&b, RDMA_PS_TCP, PORT);
	resolve_a(&a, RDMA_PS_TCP, PORT);
	create_qp(a.id, IBV_QPT_RC);
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_reject(conn, "go away", 8), 0);
	ev = expect(a.ch, RDMA_CM_EVENT_REJECTED, 28);
	assert_int_equal(ev->param.conn.private_data_len, 148);
	assert_string_equal(ev->param.conn.private_data, "go away");
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(qp_state(a.id->qp), IBV_QPS_ERR);
	assert_int_equal(rdma_destroy_id(conn), 0);
	side_done(&a);
	side_done(&b);
}

static void test_rc_no_listener(void **state)
{
	struct side a = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;
	uint64_t t;

	(void)state;
	resolve_a(&a, RDMA_PS_TCP, 9999);
	create_qp(a.id, IBV_QPT_RC);
	t = now_ns();
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(a.ch, RDMA_CM_EVENT_REJECTED, 8);
	/* one round trip on the wire, no retry */
	assert_true(now_ns() - t < 1000000);
	assert_int_equal(ev->param.conn.private_data_len, 148);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	side_done(&a);
}

/* ---- a connection to the host's own address: rxe loops its MADs back (rxe_net.c) ---- */

static void test_rc_loopback(void **state)
{
	struct side l = { 0 }, a = { 0 };
	struct rdma_conn_param cp = { .private_data = "self", .private_data_len = 5 };
	struct sockaddr_in self;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *conn;
	uint64_t t;

	(void)state;
	l.ch = rdma_create_event_channel();
	assert_non_null(l.ch);
	assert_int_equal(rdma_create_id(l.ch, &l.id, NULL, RDMA_PS_TCP), 0);
	standin_dst(&self, "192.0.2.65", PORT + 7);
	assert_int_equal(rdma_bind_addr(l.id, (struct sockaddr *)&self), 0);
	assert_int_equal(rdma_listen(l.id, 8), 0);
	a.ch = rdma_create_event_channel();
	assert_non_null(a.ch);
	assert_int_equal(rdma_create_id(a.ch, &a.id, NULL, RDMA_PS_TCP), 0);
	assert_int_equal(rdma_resolve_addr(a.id, NULL, (struct sockaddr *)&self, 2000), 0);
	expect_ack(a.ch, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	assert_int_equal(standin_route(a.id), 0);
	expect_ack(a.ch, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	create_qp(a.id, IBV_QPT_RC);
	t = now_ns();
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(l.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(ev->param.conn.private_data_len, 56);
	assert_string_equal(ev->param.conn.private_data, "self");
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_qp(conn, IBV_QPT_RC);
	assert_int_equal(rdma_accept(conn, NULL), 0);
	ev = expect(a.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_int_equal(ev->param.conn.qp_num, conn->qp->qp_num);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	expect_ack(l.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	/* never on the wire: REQ, REP and RTU all come back at the same virtual instant */
	assert_int_equal(now_ns() - t, 0);
	rdma_destroy_qp(conn);
	assert_int_equal(rdma_destroy_id(conn), 0);
	expect_ack(a.ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	side_done(&a);
	side_done(&l);
}

/* ---- a full backlog drops the REQ without REJ; the sender's retry gets through ---- */

static void test_rc_backlog_full(void **state)
{
	struct side a1 = { 0 }, a2 = { 0 }, b = { 0 };
	struct rdma_conn_param cp = { .qp_num = 0x100 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *c1, *c2;
	struct sockaddr_in any;
	uint64_t t;

	(void)state;
	assert_int_equal(rdmaemu_ctl_cm_host("B"), 0);
	b.ch = rdma_create_event_channel();
	assert_int_equal(rdmaemu_ctl_cm_host(NULL), 0);
	assert_int_equal(rdma_create_id(b.ch, &b.id, NULL, RDMA_PS_TCP), 0);
	standin_dst(&any, "0.0.0.0", PORT);
	assert_int_equal(rdma_bind_addr(b.id, (struct sockaddr *)&any), 0);
	assert_int_equal(rdma_listen(b.id, 1), 0);
	resolve_a(&a1, RDMA_PS_TCP, PORT);
	resolve_a(&a2, RDMA_PS_TCP, PORT);
	t = now_ns();
	assert_int_equal(rdma_connect(a1.id, &cp), 0);
	cp.qp_num = 0x101;
	assert_int_equal(rdma_connect(a2.id, &cp), 0);
	/* the first request takes the only slot; reading it gives the slot back */
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	assert_int_equal(ev->param.conn.qp_num, 0x100);
	c1 = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* the second was dropped (no REJ: a2 gets nothing) and comes back with the REQ's
	 * retry, 2 x 256 + 4096 ms later */
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	assert_int_equal(ev->param.conn.qp_num, 0x101);
	assert_true(now_ns() - t >= 4608000000ull && now_ns() - t < 4609000000ull);
	c2 = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_reject(c1, NULL, 0), 0);
	assert_int_equal(rdma_reject(c2, NULL, 0), 0);
	expect_ack(a1.ch, RDMA_CM_EVENT_REJECTED, 28);
	expect_ack(a2.ch, RDMA_CM_EVENT_REJECTED, 28);
	assert_int_equal(rdma_destroy_id(c1), 0);
	assert_int_equal(rdma_destroy_id(c2), 0);
	side_done(&a1);
	side_done(&a2);
	side_done(&b);
}

/* ---- dropped REPs: the responder's retries, then the real timeout ---- */

static void test_rc_rep_dropped(void **state)
{
	struct rdmaemu_cm_fault f = { .drop_next = 2 }, none = { 0 };
	struct side a = { 0 }, b = { 0 };
	struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *conn;
	uint64_t c0[4], c1[4], t;

	(void)state;
	listen_b(&b, RDMA_PS_TCP, PORT);
	resolve_a(&a, RDMA_PS_TCP, PORT);
	create_qp(a.id, IBV_QPT_RC);
	assert_int_equal(rdmaemu_ctl_cm_fault("B", NULL, "REP", &f, NULL), 0);
	assert_int_equal(rdmaemu_ctl_cm_counters("B", "REP", c0), 0);
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_qp(conn, IBV_QPT_RC);
	t = now_ns();
	assert_int_equal(rdma_accept(conn, &cp), 0);
	/* the REP goes out three times, 4096 ms apart (convert(CMA_CM_RESPONSE_TIMEOUT 20)) */
	expect_ack(a.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_true(now_ns() - t >= 8192000000ull && now_ns() - t < 8193000000ull);
	expect_ack(b.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_int_equal(rdmaemu_ctl_cm_counters("B", "REP", c1), 0);
	assert_int_equal(c1[0] - c0[0], 3);
	assert_int_equal(c1[1] - c0[1], 2);
	assert_int_equal(c1[3] - c0[3], 2);
	destroy_qp(conn);
	assert_int_equal(rdma_destroy_id(conn), 0);
	side_done(&a);
	side_done(&b);

	/* every REP lost: B's REP runs out after 16 sends (65.536 s): UNREACHABLE; A's REQ was
	 * answered by nothing it understood: 16 REQs 4608 ms apart, UNREACHABLE at 73.728 s */
	f.drop_next = 100;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	listen_b(&b, RDMA_PS_TCP, PORT);
	resolve_a(&a, RDMA_PS_TCP, PORT);
	create_qp(a.id, IBV_QPT_RC);
	assert_int_equal(rdmaemu_ctl_cm_fault("B", NULL, "REP", &f, NULL), 0);
	t = now_ns();
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_qp(conn, IBV_QPT_RC);
	assert_int_equal(rdma_accept(conn, &cp), 0);
	expect_ack(b.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	assert_true(now_ns() - t >= 65536000000ull && now_ns() - t < 65537000000ull);
	expect_ack(a.ch, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT);
	assert_int_equal(now_ns() - t, 73728000000ull);
	assert_int_equal(rdmaemu_ctl_cm_fault("B", NULL, "REP", &none, NULL), 0);
	destroy_qp(conn);
	assert_int_equal(rdma_destroy_id(conn), 0);
	side_done(&a);
	side_done(&b);
}

/* ---- an id without QP: CONNECT_RESPONSE, rdma_establish ---- */

static void test_rc_no_qp_establish(void **state)
{
	struct side a = { 0 }, b = { 0 };
	struct rdma_conn_param cp = { .qp_num = 0x123, .responder_resources = 1,
				      .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *conn;
	struct ibv_qp_attr qa;
	int mask;

	(void)state;
	listen_b(&b, RDMA_PS_TCP, PORT);
	resolve_a(&a, RDMA_PS_TCP, PORT);
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(ev->param.conn.qp_num, 0x123);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	cp.qp_num = 0x456;
	assert_int_equal(rdma_accept(conn, &cp), 0);
	ev = expect(a.ch, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
	assert_int_equal(ev->param.conn.qp_num, 0x456);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* the application's QP would get these: RTR towards QPN 0x456, RTS with B's PSN */
	qa.qp_state = IBV_QPS_RTR;
	assert_int_equal(rdma_init_qp_attr(a.id, &qa, &mask), 0);
	assert_int_equal(qa.dest_qp_num, 0x456);
	assert_int_equal(qa.path_mtu, IBV_MTU_1024);
	assert_true(mask & IBV_QP_AV);
	assert_int_equal(qa.max_dest_rd_atomic, 1);
	qa.qp_state = IBV_QPS_RTS;
	assert_int_equal(rdma_init_qp_attr(a.id, &qa, &mask), 0);
	assert_int_equal(mask, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				       IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_TIMEOUT);
	assert_int_equal(qa.timeout, 17);
	assert_int_equal(rdma_establish(a.id), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_ptr_equal(ev->id, conn);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* notify on an established connection: EISCONN */
	errno = 0;
	assert_int_equal(rdma_notify(conn, IBV_EVENT_COMM_EST), -1);
	assert_int_equal(errno, EISCONN);
	/* PATH_MIG on an established connection is 0 (cm_migrate); other events EINVAL */
	assert_int_equal(rdma_notify(conn, IBV_EVENT_PATH_MIG), 0);
	errno = 0;
	assert_int_equal(rdma_notify(conn, IBV_EVENT_SQ_DRAINED), -1);
	assert_int_equal(errno, EINVAL);
	/* B destroys its id: A gets DISCONNECTED (the DREQ of ib_destroy_cm_id) */
	assert_int_equal(rdma_destroy_id(conn), 0);
	expect_ack(a.ch, RDMA_CM_EVENT_DISCONNECTED, 0);
	side_done(&a);
	side_done(&b);
}

/* ---- ECE in the REQ, rdma_reject_ece ---- */

static void test_rc_ece_reject(void **state)
{
	struct side a = { 0 }, b = { 0 };
	struct rdma_conn_param cp = { .qp_num = 0x200 };
	struct ibv_ece ece = { .vendor_id = 0x15b3, .options = 0x5 }, got;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *conn;

	(void)state;
	listen_b(&b, RDMA_PS_TCP, PORT);
	resolve_a(&a, RDMA_PS_TCP, PORT);
	assert_int_equal(rdma_set_local_ece(a.id, &ece), 0);
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	/* the REQ carried the initiator's ECE (vendor ID and options) */
	assert_int_equal(rdma_get_remote_ece(conn, &got), 0);
	assert_int_equal(got.vendor_id, 0x15b3);
	assert_int_equal(got.options, 0x5);
	assert_int_equal(got.comp_mask, 0);
	assert_int_equal(rdma_reject_ece(conn, NULL, 0), 0);
	ev = expect(a.ch, RDMA_CM_EVENT_REJECTED, 35);
	assert_int_equal(ev->param.conn.private_data_len, 148);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_destroy_id(conn), 0);
	side_done(&a);
	side_done(&b);
}

/* ---- UD: SIDR ---- */

static void test_ud_sidr(void **state)
{
	struct side a = { 0 }, b = { 0 };
	struct rdma_conn_param cp = { 0 };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *conn;

	(void)state;
	listen_b(&b, RDMA_PS_UDP, PORT);
	resolve_a(&a, RDMA_PS_UDP, PORT);
	create_qp(a.id, IBV_QPT_UD);
	cp.private_data = "sidr?";
	cp.private_data_len = 6;
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(ev->param.ud.private_data_len, 180);
	assert_string_equal(ev->param.ud.private_data, "sidr?");
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	create_qp(conn, IBV_QPT_UD);
	cp.private_data = "sidr!";
	assert_int_equal(rdma_accept(conn, &cp), 0);
	ev = expect(a.ch, RDMA_CM_EVENT_ESTABLISHED, 0);
	assert_int_equal(ev->param.ud.qp_num, conn->qp->qp_num);
	assert_int_equal(ev->param.ud.qkey, RDMA_UDP_QKEY);
	assert_int_equal(ev->param.ud.private_data_len, 136);
	assert_string_equal(ev->param.ud.private_data, "sidr!");
	assert_int_equal(ev->param.ud.ah_attr.is_global, 1);
	assert_memory_equal(ev->param.ud.ah_attr.grh.dgid.raw,
			    a.id->route.addr.addr.ibaddr.dgid.raw, 16);
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_destroy_id(conn), 0);
	side_done(&a);

	/* rejected: UNREACHABLE status 2 (IB_SIDR_REJECT) */
	memset(&a, 0, sizeof a);
	resolve_a(&a, RDMA_PS_UDP, PORT);
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	ev = expect(b.ch, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	conn = ev->id;
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_reject(conn, "no", 3), 0);
	ev = expect(a.ch, RDMA_CM_EVENT_UNREACHABLE, 2);
	assert_int_equal(ev->param.ud.private_data_len, 136);
	assert_string_equal(ev->param.ud.private_data, "no");
	assert_int_equal(rdma_ack_cm_event(ev), 0);
	assert_int_equal(rdma_destroy_id(conn), 0);
	side_done(&a);
	side_done(&b);

	/* nobody listens: status 1 (IB_SIDR_UNSUPPORTED) */
	memset(&a, 0, sizeof a);
	resolve_a(&a, RDMA_PS_UDP, 9998);
	assert_int_equal(rdma_connect(a.id, &cp), 0);
	expect_ack(a.ch, RDMA_CM_EVENT_UNREACHABLE, 1);
	side_done(&a);
}

/* ---- sync mode: rdma_get_request / accept on one thread, connect on another ---- */

static void *sync_server(void *arg)
{
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
	struct rdma_cm_id *listen, *conn;
	struct sockaddr_in any;
	int *ret = arg, fail = -1;

	if (rdmaemu_ctl_cm_host("B") || rdma_create_id(NULL, &listen, NULL, RDMA_PS_TCP))
		goto out;
	standin_dst(&any, "0.0.0.0", PORT + 1);
	if (rdma_bind_addr(listen, (struct sockaddr *)&any) || rdma_listen(listen, 1))
		goto out;
	__atomic_store_n(ret, 1, __ATOMIC_SEQ_CST); /* listening */
	fail = -2;
	if (rdma_get_request(listen, &conn))
		goto out;
	fail = -3;
	if (conn->event->param.conn.private_data_len != 56 ||
	    strcmp(conn->event->param.conn.private_data, "sync"))
		goto out;
	if (rdma_create_qp(conn, NULL, &qa))
		goto out;
	/* a sync accept returns with ESTABLISHED */
	fail = -4;
	if (rdma_accept(conn, NULL) || !conn->event ||
	    conn->event->event != RDMA_CM_EVENT_ESTABLISHED)
		goto out;
	/* the client disconnects: its DREQ is the next event; our disconnect sends the DREP */
	fail = -5;
	rdma_ack_cm_event(conn->event);
	if (rdma_get_cm_event(conn->channel, &conn->event) ||
	    conn->event->event != RDMA_CM_EVENT_DISCONNECTED)
		goto out;
	rdma_ack_cm_event(conn->event);
	conn->event = NULL;
	fail = -6;
	if (rdma_disconnect(conn))
		goto out;
	rdma_destroy_qp(conn);
	rdma_destroy_id(conn);
	rdma_destroy_id(listen);
	fail = 0;
out:
	__atomic_store_n(ret, fail, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_sync_connect_accept(void **state)
{
	struct rdma_conn_param cp = { .private_data = "sync", .private_data_len = 5 };
	struct ibv_qp_init_attr qa = { .cap = { 4, 4, 1, 1, 0 }, .qp_type = IBV_QPT_RC };
	struct rdma_cm_id *id;
	struct sockaddr_in dst;
	pthread_t th;
	int sret = 0;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, sync_server, &sret), 0);
	while (!__atomic_load_n(&sret, __ATOMIC_SEQ_CST))
		sched_yield();
	assert_int_equal(sret, 1);
	assert_int_equal(rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP), 0);
	standin_dst(&dst, "192.0.2.66", PORT + 1);
	assert_int_equal(rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst, 2000), 0);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ADDR_RESOLVED);
	assert_int_equal(rdma_ack_cm_event(id->event), 0);
	id->event = NULL;
	/* IB_PATH on a sync id: ROUTE_RESOLVED is queued, the next call's wait takes it */
	assert_int_equal(standin_route(id), 0);
	assert_int_equal(rdma_get_cm_event(id->channel, &id->event), 0);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ROUTE_RESOLVED);
	assert_int_equal(rdma_ack_cm_event(id->event), 0);
	id->event = NULL;
	assert_int_equal(rdma_create_qp(id, NULL, &qa), 0);
	assert_int_equal(rdma_connect(id, &cp), 0);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_ESTABLISHED);
	assert_int_equal(qp_state(id->qp), IBV_QPS_RTS);
	/* a sync disconnect returns with DISCONNECTED (the server's DREP) */
	assert_int_equal(rdma_disconnect(id), 0);
	assert_int_equal(id->event->event, RDMA_CM_EVENT_DISCONNECTED);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(sret, 0);
	rdma_destroy_qp(id);
	assert_int_equal(rdma_destroy_id(id), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rc_connect_send_disconnect),
		cmocka_unit_test(test_rc_reject),
		cmocka_unit_test(test_rc_no_listener),
		cmocka_unit_test(test_rc_loopback),
		cmocka_unit_test(test_rc_backlog_full),
		cmocka_unit_test(test_rc_rep_dropped),
		cmocka_unit_test(test_rc_no_qp_establish),
		cmocka_unit_test(test_rc_ece_reject),
		cmocka_unit_test(test_ud_sidr),
		cmocka_unit_test(test_sync_connect_accept),
	};

	(void)argc;
	verbs_test_init(argv, "rxe-ref2.fabric", NULL, "A");
	if (rdmaemu_ctl_open_host_devices("B")) {
		perror("rdmaemu_ctl_open_host_devices");
		return 99;
	}
	emu_cma_set_addr_ops(&standin_addr_ops);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
